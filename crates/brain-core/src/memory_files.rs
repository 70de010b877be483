//! The memory files agents already keep — `CLAUDE.md`, Claude Code's `.claude/rules/`,
//! `AGENTS.md`, `GEMINI.md`, `.cursorrules`, Cursor's `.cursor/rules/*.mdc`, Cline's
//! `.clinerules` and `memory-bank/`,
//! Claude Code's auto-memory (`~/.claude/projects/<dir>/memory/*.md`) — split into facts a
//! store can hold. Pure and total: text in, facts out; no input makes it fail.
//!
//! Splitting, one line at a time:
//! - a fact is a top-level bullet (with its nested bullets and continuation lines) or a
//!   paragraph; headings are not facts but the context of those below them; a fenced code
//!   block stays with the fact it follows (or is one of its own);
//! - a bullet that ends with `:` and holds only nested bullets is a label: each nested bullet
//!   is a fact, the label joins the heading;
//! - left out: YAML front matter (its `type:` and `description:` are read), HTML comments,
//!   brain's own managed block (`<!-- brain:start -->` … `<!-- brain:end -->`, which `brain
//!   inject` writes), rules, one-word fragments, and in Claude Code's `MEMORY.md` the index
//!   lines that only link to another memory file.
//!
//! Typing, the first rule that matches:
//! 1. the text: an open checkbox or a leading `TODO`/`FIXME` is a todo; "we chose/decided",
//!    "opted for", "in favor of" a decision; "lesson", "learned", "gotcha", "pitfall" a
//!    lesson; "bug", "known issue", "workaround" a bug; "never", "always", "must", "should",
//!    "don't", "avoid", "prefer" a convention;
//! 2. the headings above it, innermost first ("Conventions", "Architecture", "Decisions",
//!    "Commands", "TODO", …);
//! 3. the file: rules files (`.cursorrules`, Cursor's and Claude Code's rules, `.clinerules`)
//!    hold conventions,
//!    Cline's `systemPatterns.md`/`techContext.md` architecture, the rest of the memory bank
//!    context; Claude Code's memories by their `type:` (feedback → convention, user →
//!    preference, project → context); anything else is a note.
//!
//! [`fingerprint`] is what deduplication compares: the words of a text, lowercased, hashed.

use sha2::{Digest, Sha256};

use crate::assemble::{BLOCK_END, BLOCK_START};
use crate::item::{Kind, MAX_CONTENT_CHARS};

/// A title is cut at this many characters (at a word, with an ellipsis).
pub const TITLE_CHARS: usize = 120;

/// The families of memory files, which decide a fact's tag and default kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryFile {
    ClaudeMd,
    AgentsMd,
    GeminiMd,
    CursorRules,
    CursorRule,
    ClaudeRules,
    ClineRules,
    MemoryBank,
    ClaudeMemory,
    Markdown,
}

impl MemoryFile {
    /// The family of a file by its path relative to where it was found (`CLAUDE.md`,
    /// `.cursor/rules/x.mdc`, `memory-bank/progress.md`, …). Claude Code's auto-memory is
    /// known by where it lives, not by its name: the caller says so.
    pub fn of(relative_path: &str) -> MemoryFile {
        let path = relative_path.replace('\\', "/");
        let name = path.rsplit('/').next().unwrap_or(&path).to_ascii_lowercase();
        let first = path.split('/').next().unwrap_or_default();
        match name.as_str() {
            "claude.md" | "claude.local.md" => return MemoryFile::ClaudeMd,
            "agents.md" => return MemoryFile::AgentsMd,
            "gemini.md" => return MemoryFile::GeminiMd,
            ".cursorrules" => return MemoryFile::CursorRules,
            ".clinerules" => return MemoryFile::ClineRules,
            _ => {}
        }
        if name.ends_with(".mdc") || path.starts_with(".cursor/rules/") {
            return MemoryFile::CursorRule;
        }
        if path.starts_with(".claude/rules/") {
            return MemoryFile::ClaudeRules;
        }
        match first {
            ".clinerules" => MemoryFile::ClineRules,
            "memory-bank" => MemoryFile::MemoryBank,
            _ => MemoryFile::Markdown,
        }
    }

    /// The tag its facts carry (besides `imported`).
    pub fn tag(self) -> &'static str {
        match self {
            MemoryFile::ClaudeMd => "claude-md",
            MemoryFile::AgentsMd => "agents-md",
            MemoryFile::GeminiMd => "gemini-md",
            MemoryFile::CursorRules => "cursorrules",
            MemoryFile::CursorRule => "cursor-rules",
            MemoryFile::ClaudeRules => "claude-rules",
            MemoryFile::ClineRules => "clinerules",
            MemoryFile::MemoryBank => "memory-bank",
            MemoryFile::ClaudeMemory => "claude-memory",
            MemoryFile::Markdown => "markdown",
        }
    }

    /// The kind of a fact no rule of its text or headings typed.
    fn default_kind(self, file_name: &str, memory_type: Option<&str>) -> Kind {
        let stem = file_name.rsplit('/').next().unwrap_or(file_name).to_ascii_lowercase();
        let stem = stem.split('.').next().unwrap_or_default();
        match self {
            MemoryFile::CursorRules | MemoryFile::CursorRule | MemoryFile::ClaudeRules | MemoryFile::ClineRules => {
                Kind::Convention
            }
            MemoryFile::MemoryBank if matches!(stem, "systempatterns" | "techcontext") => Kind::Architecture,
            MemoryFile::MemoryBank => Kind::Context,
            MemoryFile::ClaudeMemory => match memory_type.map(str::to_ascii_lowercase).as_deref() {
                Some("feedback") => Kind::Convention,
                Some("user") => Kind::Preference,
                Some("project") => Kind::Context,
                _ => Kind::Note,
            },
            MemoryFile::ClaudeMd | MemoryFile::AgentsMd | MemoryFile::GeminiMd | MemoryFile::Markdown => Kind::Note,
        }
    }
}

/// One fact of a memory file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// The line (from 1) the fact starts on.
    pub line: usize,
    pub kind: Kind,
    /// Its first line, cleaned of markdown and cut to [`TITLE_CHARS`].
    pub title: String,
    /// Its whole text (bullet marker taken off), at most the content limit.
    pub content: String,
    /// The headings (and label) above it, outermost first, joined by ` › `.
    pub heading: Option<String>,
}

/// The words of `text` (letters and digits, lowercased) hashed: two texts that differ only
/// in case, punctuation, markdown or spacing have the same fingerprint. 16 hex digits.
pub fn fingerprint(text: &str) -> String {
    let mut normal = String::with_capacity(text.len());
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        if !normal.is_empty() {
            normal.push(' ');
        }
        normal.extend(word.chars().flat_map(char::to_lowercase));
    }
    hex::encode(&Sha256::digest(normal.as_bytes())[..8])
}

/// The dedup hint an imported fact carries: the same fact from any file, any run, has it.
pub fn dedup_hint(fingerprint: &str) -> String {
    format!("import:memory:{fingerprint}")
}

/// A block of lines on its way to becoming a fact.
#[derive(Debug)]
struct Block {
    line: usize,
    /// The bullet's indentation; `None` for a paragraph.
    bullet_indent: Option<usize>,
    lines: Vec<String>,
    headings: Vec<String>,
    /// A blank line was seen since the last line (a bullet's next line must then be indented).
    blank_after: bool,
    in_fence: bool,
}

impl Block {
    fn new(line: usize, bullet_indent: Option<usize>, text: String, headings: &[String]) -> Block {
        Block {
            line,
            bullet_indent,
            lines: vec![text],
            headings: headings.to_vec(),
            blank_after: false,
            in_fence: false,
        }
    }
}

/// Splits a memory file into facts (see the module documentation). `relative_path` names it
/// for the rules that look at its name; `file` is its family.
pub fn split(text: &str, file: MemoryFile, relative_path: &str) -> Vec<Fact> {
    let lines: Vec<&str> = text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    let (body_start, front) = front_matter(&lines);
    let memory_type = front.iter().find(|(key, _)| key == "type").map(|(_, value)| value.as_str());
    let mut headings: Vec<(usize, String)> = Vec::new();
    // A rule's description says what it is about (Claude Code's memories describe
    // themselves for recall instead: their `type` types them).
    if let Some((_, description)) = front.iter().find(|(key, _)| key == "description")
        && !description.is_empty()
        && file != MemoryFile::ClaudeMemory
    {
        headings.push((0, description.clone()));
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<Block> = None;
    let mut in_comment = false;
    let mut in_managed = false;
    let heading_texts =
        |headings: &[(usize, String)]| headings.iter().map(|(_, text)| text.clone()).collect::<Vec<_>>();

    for (index, raw) in lines.iter().enumerate().skip(body_start) {
        let number = index + 1;
        let line = raw.replace('\t', "    ");
        let trimmed = line.trim();

        // Inside a fence, every line belongs to the block, whatever it looks like.
        if let Some(block) = current.as_mut().filter(|block| block.in_fence) {
            block.lines.push(line.clone());
            if is_fence(trimmed) {
                block.in_fence = false;
            }
            continue;
        }
        if in_managed {
            in_managed = !trimmed.contains(BLOCK_END);
            continue;
        }
        if trimmed.contains(BLOCK_START) {
            finish(&mut current, &mut blocks);
            in_managed = !trimmed.contains(BLOCK_END);
            continue;
        }
        if in_comment {
            in_comment = !trimmed.contains("-->");
            continue;
        }
        if trimmed.starts_with("<!--") {
            finish(&mut current, &mut blocks);
            in_comment = !trimmed.contains("-->");
            continue;
        }
        if is_fence(trimmed) {
            match current.as_mut() {
                Some(block) => block.lines.push(line.clone()),
                None => current = Some(Block::new(number, None, line.clone(), &heading_texts(&headings))),
            }
            if let Some(block) = current.as_mut() {
                block.in_fence = true;
                block.blank_after = false;
            }
            continue;
        }
        if trimmed.is_empty() {
            match current.as_mut() {
                Some(block) if block.bullet_indent.is_some() => block.blank_after = true,
                _ => finish(&mut current, &mut blocks),
            }
            continue;
        }
        if let Some((level, text)) = atx_heading(trimmed) {
            finish(&mut current, &mut blocks);
            headings.retain(|(at, _)| *at < level);
            if !text.is_empty() {
                headings.push((level, text));
            }
            continue;
        }
        // Setext: a one-line paragraph underlined with `===` or `---` is a heading.
        if let Some(level) = setext_level(trimmed)
            && let Some(block) =
                current.as_ref().filter(|block| block.bullet_indent.is_none() && block.lines.len() == 1)
        {
            let text = clean_inline(block.lines[0].trim());
            current = None;
            headings.retain(|(at, _)| *at < level);
            headings.push((level, text));
            continue;
        }
        if is_rule(trimmed) {
            finish(&mut current, &mut blocks);
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(text) = bullet_text(trimmed) {
            if let Some(block) = current.as_mut()
                && let Some(parent) = block.bullet_indent
                && indent > parent
            {
                block.lines.push(line.clone());
                block.blank_after = false;
                continue;
            }
            finish(&mut current, &mut blocks);
            current = Some(Block::new(number, Some(indent), text.to_string(), &heading_texts(&headings)));
            continue;
        }
        // Plain text: a paragraph's next line, a bullet's continuation (indented, or right
        // under it), or a new paragraph.
        if let Some(block) = current.as_mut() {
            let continues = match block.bullet_indent {
                None => true,
                Some(parent) => indent > parent || !block.blank_after,
            };
            if continues {
                block.lines.push(line.clone());
                block.blank_after = false;
                continue;
            }
        }
        finish(&mut current, &mut blocks);
        current = Some(Block::new(number, None, trimmed.to_string(), &heading_texts(&headings)));
    }
    finish(&mut current, &mut blocks);

    let mut facts = Vec::new();
    for block in blocks {
        for (line, text, headings) in unlabel(block) {
            if let Some(fact) = fact(line, &text, &headings, file, relative_path, memory_type) {
                facts.push(fact);
            }
        }
    }
    facts
}

fn finish(current: &mut Option<Block>, blocks: &mut Vec<Block>) {
    if let Some(block) = current.take() {
        blocks.push(block);
    }
}

/// The line after the front matter and its `key: value` pairs (flat keys only; the first
/// line must be `---`, closed by `---` within 100 lines).
fn front_matter(lines: &[&str]) -> (usize, Vec<(String, String)>) {
    if lines.first().map(|line| line.trim()) != Some("---") {
        return (0, Vec::new());
    }
    let Some(end) = lines.iter().skip(1).take(100).position(|line| line.trim() == "---") else {
        return (0, Vec::new());
    };
    let pairs = lines[1..=end]
        .iter()
        .filter(|line| !line.starts_with([' ', '\t', '-', '#']))
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| {
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            (key.trim().to_ascii_lowercase(), value.to_string())
        })
        .collect();
    (end + 2, pairs)
}

fn is_fence(trimmed: &str) -> bool {
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

/// `# Title` → (1, "Title"); closing hashes and markdown emphasis are taken off.
fn atx_heading(trimmed: &str) -> Option<(usize, String)> {
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((level, clean_inline(rest.trim().trim_end_matches('#').trim())))
}

fn setext_level(trimmed: &str) -> Option<usize> {
    if trimmed.len() >= 2 && trimmed.chars().all(|c| c == '=') {
        return Some(1);
    }
    if trimmed.len() >= 2 && trimmed.chars().all(|c| c == '-') {
        return Some(2);
    }
    None
}

/// `---`, `***`, `___` (three or more, spaces allowed).
fn is_rule(trimmed: &str) -> bool {
    let mut marks = trimmed.chars().filter(|c| !c.is_whitespace());
    let first = marks.next();
    matches!(first, Some('-' | '*' | '_')) && marks.clone().count() >= 2 && marks.all(|c| Some(c) == first)
}

/// The text after a bullet marker (`- `, `* `, `+ `, `1. `, `1) `), if the line is a bullet.
fn bullet_text(trimmed: &str) -> Option<&str> {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(marker) {
            return Some(rest.trim());
        }
    }
    if matches!(trimmed, "-" | "*" | "+") {
        return Some("");
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &trimmed[digits..];
        for marker in [". ", ") "] {
            if let Some(text) = rest.strip_prefix(marker) {
                return Some(text.trim());
            }
        }
    }
    None
}

/// A label bullet (`- Testing:` over nested bullets only) becomes its children, each with
/// the label after the headings; any other block stays one fact.
fn unlabel(block: Block) -> Vec<(usize, String, Vec<String>)> {
    let label = block.lines[0].trim();
    let children: Vec<&String> = block.lines[1..].iter().filter(|line| !line.trim().is_empty()).collect();
    let is_label = block.bullet_indent.is_some()
        && label.ends_with(':')
        && !children.is_empty()
        && bullet_text(children[0].trim()).is_some();
    if !is_label {
        return vec![(block.line, block.lines.join("\n"), block.headings)];
    }
    let child_indent = children.iter().map(|line| line.len() - line.trim_start().len()).min().unwrap_or(0);
    let mut headings = block.headings.clone();
    headings.push(clean_inline(label.trim_end_matches(':')));
    let mut out: Vec<(usize, String, Vec<String>)> = Vec::new();
    for (offset, line) in block.lines[1..].iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let number = block.line + offset + 1;
        match bullet_text(line.trim()) {
            Some(text) if indent <= child_indent => out.push((number, text.to_string(), headings.clone())),
            _ => {
                if let Some((_, text, _)) = out.last_mut() {
                    text.push('\n');
                    text.push_str(line);
                }
            }
        }
    }
    out
}

/// The fact of one block's text, or `None` when there is too little of it to keep.
fn fact(
    line: usize,
    text: &str,
    headings: &[String],
    file: MemoryFile,
    relative_path: &str,
    memory_type: Option<&str>,
) -> Option<Fact> {
    let mut text = text.trim().to_string();
    let mut open_task = false;
    for (prefix, open) in [("[ ] ", true), ("[x] ", false), ("[X] ", false)] {
        if let Some(rest) = text.strip_prefix(prefix) {
            open_task = open;
            text = rest.trim_start().to_string();
        }
    }
    let words = text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).count();
    if words < 2 {
        return None;
    }
    if file == MemoryFile::ClaudeMemory && is_index_line(&text) {
        return None;
    }
    let first_line = text.lines().find(|line| !is_fence(line.trim())).unwrap_or_default();
    let title = title_of(first_line);
    if title.is_empty() {
        return None;
    }
    let kind = kind_by_text(&text, open_task)
        .or_else(|| headings.iter().rev().find_map(|heading| kind_by_heading(heading)))
        .unwrap_or_else(|| file.default_kind(relative_path, memory_type));
    let heading = (!headings.is_empty()).then(|| headings.join(" › "));
    Some(Fact { line, kind, title, content: clip(&text, MAX_CONTENT_CHARS), heading })
}

/// An index line of Claude Code's `MEMORY.md`: a link to another memory file, perhaps with
/// a few words after it.
fn is_index_line(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('[') else { return false };
    let Some((_, after)) = rest.split_once("](") else { return false };
    let Some((target, _)) = after.split_once(')') else { return false };
    !text.contains('\n') && target.trim().ends_with(".md") && !target.contains("://")
}

/// The first line without markdown emphasis, cut at a word to [`TITLE_CHARS`].
fn title_of(line: &str) -> String {
    let cleaned = clean_inline(line.trim().trim_start_matches('>').trim());
    let cleaned = cleaned.trim_end_matches(':').trim().to_string();
    if cleaned.chars().count() <= TITLE_CHARS {
        return cleaned;
    }
    // A first sentence that fits is the title; else the words that fit.
    if let Some(end) = cleaned.find(". ").filter(|&end| cleaned[..end].chars().count() < TITLE_CHARS) {
        return cleaned[..=end].to_string();
    }
    let mut title = String::new();
    for word in cleaned.split(' ') {
        if title.chars().count() + word.chars().count() + 1 > TITLE_CHARS - 1 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        title = cleaned.chars().take(TITLE_CHARS - 1).collect();
    }
    title.push('…');
    title
}

/// Markdown emphasis markers taken off; code spans keep their text.
fn clean_inline(text: &str) -> String {
    text.replace("**", "").replace("__", "").replace('`', "").trim().to_string()
}

fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut clipped: String = text.chars().take(max_chars - 1).collect();
    clipped.push('…');
    clipped
}

/// Whether `phrase` occurs in `text` (both lowercase) between word boundaries.
fn has_phrase(text: &str, phrase: &str) -> bool {
    let mut from = 0;
    while let Some(found) = text[from..].find(phrase) {
        let start = from + found;
        let end = start + phrase.len();
        let before = text[..start].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = text[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        if before && after {
            return true;
        }
        from = end;
    }
    false
}

const DECISION_PHRASES: &[&str] = &[
    "we chose",
    "we decided",
    "decided to",
    "decided on",
    "decided against",
    "we went with",
    "we picked",
    "we opted",
    "opted for",
    "in favor of",
    "in favour of",
    "decision:",
];
const LESSON_PHRASES: &[&str] = &[
    "lesson",
    "lessons",
    "learned",
    "learnt",
    "gotcha",
    "pitfall",
    "watch out",
    "beware",
    "the hard way",
    "turns out",
];
const BUG_PHRASES: &[&str] = &["bug", "bugs", "known issue", "known issues", "workaround", "regression", "flaky"];
const CONVENTION_PHRASES: &[&str] = &[
    "never",
    "always",
    "must",
    "must not",
    "should",
    "should not",
    "shouldn't",
    "do not",
    "don't",
    "avoid",
    "prefer",
    "make sure",
    "is required",
    "are required",
];

/// The kind the text itself says (see the module documentation), if any.
fn kind_by_text(text: &str, open_task: bool) -> Option<Kind> {
    let lower = text.to_lowercase().replace('’', "'");
    if open_task || lower.starts_with("todo") || lower.starts_with("fixme") {
        return Some(Kind::Todo);
    }
    let any = |phrases: &[&str]| phrases.iter().any(|phrase| has_phrase(&lower, phrase));
    if any(DECISION_PHRASES) {
        return Some(Kind::Decision);
    }
    if any(LESSON_PHRASES) {
        return Some(Kind::Lesson);
    }
    if any(BUG_PHRASES) {
        return Some(Kind::Bug);
    }
    if any(CONVENTION_PHRASES) {
        return Some(Kind::Convention);
    }
    None
}

/// The kind a heading gives the facts under it, if any.
fn kind_by_heading(heading: &str) -> Option<Kind> {
    let lower = heading.to_lowercase().replace('’', "'");
    let rules: &[(&[&str], Kind)] = &[
        (&["decision", "decisions", "adr", "adrs"], Kind::Decision),
        (&["todo", "todos", "to do", "roadmap", "next steps", "backlog", "what's left"], Kind::Todo),
        (&["lesson", "lessons", "learnings", "gotchas", "pitfalls"], Kind::Lesson),
        (&["bugs", "known issues"], Kind::Bug),
        (
            &["convention", "conventions", "style", "code style", "rules", "guidelines", "standards", "do's", "don'ts"],
            Kind::Convention,
        ),
        (
            &["architecture", "structure", "layout", "overview", "stack", "tech stack", "design", "system patterns"],
            Kind::Architecture,
        ),
        (
            &["commands", "build", "building", "test", "tests", "testing", "setup", "workflow", "scripts", "deploy"],
            Kind::Implementation,
        ),
    ];
    rules.iter().find(|(phrases, _)| phrases.iter().any(|phrase| has_phrase(&lower, phrase))).map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(facts: &[Fact]) -> String {
        facts
            .iter()
            .map(|fact| {
                format!(
                    "{}:{} [{}] {}{}",
                    fact.line,
                    fact.heading.as_deref().map(|h| format!(" ({h})")).unwrap_or_default(),
                    fact.kind,
                    fact.title,
                    if fact.content.contains('\n') {
                        format!(" <<{}>>", fact.content.replace('\n', "⏎"))
                    } else {
                        String::new()
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn check(text: &str, file: MemoryFile, path: &str, expect: expect_test::Expect) {
        expect.assert_eq(&render(&split(text, file, path)));
    }

    #[test]
    fn bullets_and_paragraphs_are_facts_under_their_headings_typed_by_their_words() {
        check(
            "# Project\n\nA payments API in Rust.\nIt talks to Stripe.\n\n## Conventions\n- Never commit to main\n- Use `cargo nextest`\n  for the tests\n* We decided to use sqlx, not an ORM\n\n## Architecture\n1. The gateway lives in `crates/gw`\n2. TODO: split the worker\n\n## Lessons\n- We learned that Redis must run with noeviction\n- x\n",
            MemoryFile::ClaudeMd,
            "CLAUDE.md",
            expect_test::expect![[r#"
                3: (Project) [note] A payments API in Rust. <<A payments API in Rust.⏎It talks to Stripe.>>
                7: (Project › Conventions) [convention] Never commit to main
                8: (Project › Conventions) [convention] Use cargo nextest <<Use `cargo nextest`⏎  for the tests>>
                10: (Project › Conventions) [decision] We decided to use sqlx, not an ORM
                13: (Project › Architecture) [architecture] The gateway lives in crates/gw
                14: (Project › Architecture) [todo] TODO: split the worker
                17: (Project › Lessons) [lesson] We learned that Redis must run with noeviction"#]],
        );
    }

    #[test]
    fn labels_nested_bullets_and_fences_keep_their_place() {
        check(
            "## Testing\n- Tests:\n  - Run `make test` before pushing\n  - Snapshots live in tests/snap\n- A bullet with children\n  - child one\n  - child two\n\nRun the server:\n```sh\nmake run\n# not a heading\n```\n",
            MemoryFile::AgentsMd,
            "AGENTS.md",
            expect_test::expect![[r#"
                3: (Testing › Tests) [implementation] Run make test before pushing
                4: (Testing › Tests) [implementation] Snapshots live in tests/snap
                5: (Testing) [implementation] A bullet with children <<A bullet with children⏎  - child one⏎  - child two>>
                9: (Testing) [implementation] Run the server <<Run the server:⏎```sh⏎make run⏎# not a heading⏎```>>"#]],
        );
    }

    #[test]
    fn brains_managed_block_comments_and_front_matter_are_not_facts() {
        let text = "---\ndescription: React components\nglobs: src/**/*.tsx\nalwaysApply: false\n---\n<!-- brain:start -->\n- Use sqlx (from brain)\n<!-- brain:end -->\n<!-- a comment\n- hidden bullet\n-->\n- Components are function components\n";
        check(
            text,
            MemoryFile::CursorRule,
            ".cursor/rules/react.mdc",
            expect_test::expect![[r#"
                12: (React components) [convention] Components are function components"#]],
        );
    }

    #[test]
    fn files_decide_the_kind_no_rule_of_the_text_found() {
        let plain = "- The API serves 40k requests a day\n";
        let kind = |file: MemoryFile, path: &str| split(plain, file, path)[0].kind;
        assert_eq!(kind(MemoryFile::of(".cursorrules"), ".cursorrules"), Kind::Convention);
        assert_eq!(
            kind(MemoryFile::of("memory-bank/systemPatterns.md"), "memory-bank/systemPatterns.md"),
            Kind::Architecture
        );
        assert_eq!(kind(MemoryFile::of("memory-bank/activeContext.md"), "memory-bank/activeContext.md"), Kind::Context);
        assert_eq!(kind(MemoryFile::of("CLAUDE.md"), "CLAUDE.md"), Kind::Note);
        let memory = "---\nname: tests\ntype: feedback\n---\nThe user runs the integration tests by hand.\n";
        assert_eq!(split(memory, MemoryFile::ClaudeMemory, "tests.md")[0].kind, Kind::Convention);
        assert_eq!(MemoryFile::of(".cursor/rules/a/b.mdc"), MemoryFile::CursorRule);
        assert_eq!(MemoryFile::of(".clinerules/style.md"), MemoryFile::ClineRules);
    }

    #[test]
    fn claude_memory_index_lines_are_left_out() {
        let index =
            "# Memory index\n- [Testing](testing.md) — how the user runs tests\n- The user prefers short answers\n";
        let facts = split(index, MemoryFile::ClaudeMemory, "MEMORY.md");
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].title, "The user prefers short answers");
    }

    #[test]
    fn fingerprints_ignore_case_markdown_and_spacing() {
        assert_eq!(fingerprint("Never commit to `main`!"), fingerprint("never  commit to main"));
        assert_ne!(fingerprint("Never commit to main"), fingerprint("Always commit to main"));
        assert_eq!(fingerprint("x").len(), 16);
    }

    #[test]
    fn long_lines_are_cut_at_a_word_and_nothing_breaks_the_splitter() {
        let long = format!("- {}\n", "word ".repeat(100));
        let facts = split(&long, MemoryFile::Markdown, "x.md");
        assert!(facts[0].title.ends_with('…') && facts[0].title.chars().count() <= TITLE_CHARS);
        for text in
            ["", "\n\n", "```\nunclosed", "<!-- brain:start -->\n- x y", "---\n---", "#\n-\n1.\n* ", "\u{0}\u{1}"]
        {
            let _ = split(text, MemoryFile::Markdown, "x.md");
        }
    }
}
