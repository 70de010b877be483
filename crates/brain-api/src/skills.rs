//! Skills (SPEC §2.4): `<home>/skills/<name>/SKILL.md` with frontmatter `name`,
//! `description`, optional `triggers` and `strength`. Session start loads only the index
//! (name + description); `brain skill show` prints the whole file.

use std::path::{Path, PathBuf};

use brain_core::scope::validate_scope_name;
use brain_core::vault::{FmValue, parse};
use serde::Serialize;

use crate::error::{BrainError, BrainResult};
use crate::fsio::write_atomically;

/// Skill files larger than this are not read.
const MAX_SKILL_BYTES: usize = 256 * 1024;
/// Longest description kept in the index.
pub const MAX_DESCRIPTION_CHARS: usize = 300;

/// One entry of the skills index.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    #[serde(serialize_with = "brain_core::item::serialize_decimal_f32")]
    pub strength: f32,
    #[serde(skip)]
    pub path: PathBuf,
}

/// The skills folder of a home.
pub fn skills_dir(home: &Path) -> PathBuf {
    home.join("skills")
}

/// Every readable skill, sorted by name. Unreadable or malformed ones are skipped with a
/// warning on stderr; a missing folder is an empty index.
pub fn list(home: &Path) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(skills_dir(home)) else {
        return Vec::new();
    };
    let mut skills: Vec<Skill> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .filter_map(|entry| {
            let folder = entry.file_name().to_string_lossy().into_owned();
            match read(&entry.path().join("SKILL.md"), &folder) {
                Ok(skill) => Some(skill),
                Err(err) => {
                    eprintln!("warning: skipping skill {folder}: {err}");
                    None
                }
            }
        })
        .collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills
}

fn read(path: &Path, folder: &str) -> BrainResult<Skill> {
    let metadata =
        std::fs::symlink_metadata(path).map_err(|err| BrainError::user(format!("{}: {err}", path.display())))?;
    if !metadata.is_file() {
        return Err(BrainError::user(format!("{} is not a regular file", path.display())));
    }
    let bytes = std::fs::read(path).map_err(|err| BrainError::user(format!("{}: {err}", path.display())))?;
    let (doc, _diagnostics) = parse(&format!("skills/{folder}/SKILL.md"), &bytes, MAX_SKILL_BYTES);
    let frontmatter =
        doc.frontmatter.ok_or_else(|| BrainError::user(format!("{} has no frontmatter", path.display())))?;
    let scalar = |key: &str| frontmatter.get(key).and_then(|entry| entry.value.as_scalar()).map(str::to_string);
    let name = scalar("name").unwrap_or_else(|| folder.to_string());
    let description =
        scalar("description").ok_or_else(|| BrainError::user(format!("{} has no description", path.display())))?;
    // A SKILL.md written by hand is redacted as it is read: what it says reaches prompts.
    let redacted = |text: &str| brain_core::redact::redact_str(text).into_owned();
    let description = redacted(&description);
    let triggers = match frontmatter.get("triggers").map(|entry| &entry.value) {
        Some(FmValue::List(values)) => values.iter().filter_map(|v| v.as_scalar().map(redacted)).collect(),
        Some(FmValue::Scalar(text)) => text.split(',').map(|t| redacted(t.trim())).filter(|t| !t.is_empty()).collect(),
        _ => Vec::new(),
    };
    let strength = scalar("strength").and_then(|s| s.parse::<f32>().ok()).filter(|s| (0.0..=1.0).contains(s));
    Ok(Skill {
        name,
        description: description.chars().take(MAX_DESCRIPTION_CHARS).collect(),
        triggers,
        strength: strength.unwrap_or(1.0),
        path: path.to_path_buf(),
    })
}

/// The whole SKILL.md of `name`.
pub fn show(home: &Path, name: &str) -> BrainResult<String> {
    check_name(name)?;
    let path = skills_dir(home).join(name).join("SKILL.md");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(BrainError::NotFound {
            message: format!("skill {name} not found"),
            hint: Some("list skills with `brain skill list`".into()),
        }),
        Err(err) => Err(BrainError::user(format!("cannot read {}: {err}", path.display()))),
    }
}

/// Creates `<home>/skills/<name>/SKILL.md`; refuses to overwrite unless `replace`.
pub fn add(
    home: &Path,
    name: &str,
    description: &str,
    body: &str,
    triggers: &[String],
    replace: bool,
) -> BrainResult<Skill> {
    check_name(name)?;
    let description = description.trim();
    if description.is_empty() || description.contains(['\n', '\r']) {
        return Err(BrainError::user("invalid description: must be one non-empty line"));
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(BrainError::user(format!("invalid description: longer than {MAX_DESCRIPTION_CHARS} characters")));
    }
    let dir = skills_dir(home).join(name);
    let path = dir.join("SKILL.md");
    if path.exists() && !replace {
        return Err(BrainError::user_with_hint(
            format!("skill {name} already exists"),
            "pass --replace to overwrite it",
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|err| BrainError::user(format!("cannot create {}: {err}", dir.display())))?;
    // Every field is redacted: the description and triggers reach every session start.
    let body = brain_core::redact::redact_str(body);
    let description = brain_core::redact::redact_str(description);
    let mut text = format!("---\nname: {name}\ndescription: {}\n", yaml_quote(&description));
    if !triggers.is_empty() {
        let quoted: Vec<String> =
            triggers.iter().map(|t| yaml_quote(&brain_core::redact::redact_str(t.trim()))).collect();
        text.push_str(&format!("triggers: [{}]\n", quoted.join(", ")));
    }
    text.push_str("---\n\n");
    text.push_str(body.trim_end());
    text.push('\n');
    write_atomically(&path, text.as_bytes())?;
    read(&path, name)
}

fn check_name(name: &str) -> BrainResult<()> {
    validate_scope_name(name).map_err(|why| BrainError::user(format!("invalid skill name {name:?}: {why}")))
}

/// Double-quotes a YAML scalar, escaping backslashes and quotes.
fn yaml_quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
