//! `brain extract`: find the transcripts of a time window — Claude Code's
//! (`<projects>/<dir>/<session>.jsonl`), Codex's rollouts (`<sessions>/YYYY/MM/DD/rollout-*.jsonl`)
//! or Gemini CLI's chats (`<tmp>/<project>/chats/session-*.jsonl`) —, summarize each (in
//! parallel, resuming from the saved state of a transcript that only grew) and return the
//! sessions worth an arc.
//!
//! Files last modified before the window are skipped on their modification time, without
//! being opened. A session is in the window when its records span any part of it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use brain_core::Timestamp;
use brain_core::redact::redact_str;
use brain_core::time::format_timestamp;
use serde::{Deserialize, Serialize};

use super::Host;
use super::store::{self, Shard};
use super::transcript::{self, LineStats, SessionState, SessionSummary};
use brain_api::config;
use brain_api::error::{BrainError, BrainResult};

/// Default `--since`: a day plus slack, so a daily run overlaps the previous one.
pub const DEFAULT_SINCE: &str = "26h";
/// Default `--min-turns`.
pub const DEFAULT_MIN_TURNS: u32 = 5;
/// At most this many unreadable files are named in the warnings.
const MAX_WARNINGS: usize = 20;

/// The time window sessions must touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub since: Timestamp,
    pub until: Timestamp,
}

impl Window {
    /// `since` and `until` as given to the CLI: a duration back from `now` (`90s`, `30m`,
    /// `26h`, `7d`, `2w`), an RFC 3339 time or a date (midnight UTC). `until` defaults to now.
    pub fn parse(since: &str, until: Option<&str>, now: Timestamp) -> BrainResult<Window> {
        let since = parse_time(since, now, "--since")?;
        let until = match until {
            Some(text) => parse_time(text, now, "--until")?,
            None => now,
        };
        if since >= until {
            return Err(BrainError::user(format!(
                "the window is empty: --since {} is not before --until {}",
                format_timestamp(since),
                format_timestamp(until)
            )));
        }
        Ok(Window { since, until })
    }
}

fn parse_time(text: &str, now: Timestamp, flag: &str) -> BrainResult<Timestamp> {
    let trimmed = text.trim();
    let invalid = || {
        BrainError::user_with_hint(
            format!("invalid {flag} {text:?}"),
            "use a duration back from now (90s, 30m, 26h, 7d, 2w), an RFC 3339 time (2026-11-20T08:00:00Z) or a date (2026-11-20)",
        )
    };
    if let Some(unit) = trimmed.chars().last().filter(|c| c.is_ascii_alphabetic())
        && let Ok(amount) = trimmed[..trimmed.len() - 1].parse::<i64>()
    {
        let seconds = match unit.to_ascii_lowercase() {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return Err(invalid()),
        };
        let seconds = amount.checked_mul(seconds).filter(|_| amount >= 0).ok_or_else(invalid)?;
        return now.checked_sub(jiff::SignedDuration::from_secs(seconds)).map_err(|_| invalid());
    }
    if let Ok(timestamp) = trimmed.parse::<Timestamp>() {
        return Ok(timestamp);
    }
    if let Ok(date) = trimmed.parse::<jiff::civil::Date>() {
        return jiff::tz::TimeZone::UTC
            .to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
            .map_err(|_| invalid());
    }
    Err(invalid())
}

/// What to extract.
#[derive(Clone, Debug)]
pub struct ExtractOptions {
    /// Whose transcripts.
    pub host: Host,
    pub projects_dir: PathBuf,
    pub window: Window,
    pub min_turns: u32,
    /// Keep only project folders (for Codex, whose folders are dates: projects) whose name
    /// contains this (case-insensitive).
    pub project: Option<String>,
}

/// Where `host` keeps its transcripts: `~/.claude/projects`, `$CODEX_HOME/sessions`
/// (`~/.codex/sessions`), `~/.gemini/tmp`, `~/.qwen/projects`, `$COPILOT_HOME/session-state`
/// (`~/.copilot/session-state`), `$XDG_DATA_HOME/opencode/brain-transcripts`, Cline's
/// `~/.cline/data/sessions` ([`cline_sessions`]).
pub fn default_projects_dir(host: Host) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    match host {
        Host::ClaudeCode | Host::Cursor => home.join(".claude/projects"),
        Host::Codex => std::env::var_os("CODEX_HOME")
            .filter(|dir| !dir.is_empty())
            .map_or_else(|| home.join(".codex"), PathBuf::from)
            .join("sessions"),
        Host::Gemini => home.join(".gemini/tmp"),
        Host::Qwen => home.join(".qwen/projects"),
        Host::Copilot => copilot_home(&home).join("session-state"),
        Host::OpenCode => opencode_transcripts(&home),
        Host::Cline => cline_sessions(&home),
    }
}

/// Cline's folder: `$CLINE_DIR`, else `~/.cline`.
pub fn cline_home(home: &Path) -> PathBuf {
    std::env::var_os("CLINE_DIR").filter(|dir| !dir.is_empty()).map_or_else(|| home.join(".cline"), PathBuf::from)
}

/// Where Cline keeps its sessions: `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`,
/// else `<Cline's folder>/data/sessions` (as Cline 3.0.65 resolves them).
pub fn cline_sessions(home: &Path) -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|dir| !dir.is_empty()).map(PathBuf::from);
    var("CLINE_SESSION_DATA_DIR")
        .or_else(|| var("CLINE_DATA_DIR").map(|data| data.join("sessions")))
        .unwrap_or_else(|| cline_home(home).join("data/sessions"))
}

/// Where brain's OpenCode plugin writes sessions: `$XDG_DATA_HOME/opencode/brain-transcripts`
/// (`~/.local/share/…`).
pub fn opencode_transcripts(home: &Path) -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from);
    data.unwrap_or_else(|| home.join(".local/share")).join("opencode/brain-transcripts")
}

/// Copilot CLI's folder: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home(home: &Path) -> PathBuf {
    std::env::var_os("COPILOT_HOME").filter(|dir| !dir.is_empty()).map_or_else(|| home.join(".copilot"), PathBuf::from)
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowReport {
    pub since: String,
    pub until: String,
    pub hours: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FilterReport {
    pub project: Option<String>,
    pub min_turns: u32,
}

/// What happened to the transcript files found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FileCounts {
    /// `.jsonl` files in the (filtered) project folders.
    pub found: usize,
    /// Last modified before the window: not opened.
    pub skipped_old: usize,
    /// Read (wholly, or from where the previous capture stopped).
    pub read: usize,
    /// Unchanged since the previous capture: its saved summary was used.
    pub unchanged: usize,
    pub unreadable: usize,
}

/// Sessions read but not returned, by reason.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SkipCounts {
    pub too_short: usize,
    pub outside_window: usize,
    pub no_timestamps: usize,
    /// Codex sessions of another project than `--project`.
    pub other_project: usize,
}

/// The result of an extract; also the bundle `brain cluster` reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractReport {
    pub window: WindowReport,
    pub filter: FilterReport,
    pub projects_dir: String,
    pub files: FileCounts,
    pub skipped: SkipCounts,
    /// Line bookkeeping over every transcript read.
    pub lines: LineStats,
    pub sessions_returned: usize,
    pub warnings: Vec<String>,
    /// Oldest first.
    pub sessions: Vec<SessionSummary>,
}

/// One transcript to read.
struct Candidate {
    path: PathBuf,
    session_id: String,
    /// The state shard of its project folder.
    shard: String,
}

/// Finds, reads and filters the transcripts; saves each session's state under `home`.
/// `on_total` is told how many files will be read, `on_file` is called after each.
pub fn extract(
    home: &Path,
    options: &ExtractOptions,
    on_total: &dyn Fn(usize),
    on_file: &(dyn Fn() + Sync),
) -> BrainResult<ExtractReport> {
    let window = options.window;
    let mut report = ExtractReport {
        window: WindowReport {
            since: format_timestamp(window.since),
            until: format_timestamp(window.until),
            hours: ((window.until.as_second() - window.since.as_second()) as f64 / 36.0).round() / 100.0,
        },
        filter: FilterReport { project: options.project.clone(), min_turns: options.min_turns },
        projects_dir: redact_str(&options.projects_dir.to_string_lossy()).into_owned(),
        ..ExtractReport::default()
    };
    let candidates = discover(options, &mut report)?;
    on_total(candidates.len());
    let mut shards: BTreeMap<&str, Shard> = BTreeMap::new();
    for candidate in &candidates {
        shards.entry(&candidate.shard).or_insert_with(|| Shard::load(home, &candidate.shard));
    }
    let results = read_all(home, options.host, &candidates, &shards, on_file);
    let mut changed: BTreeMap<&str, Vec<SessionState>> = BTreeMap::new();
    for (candidate, result) in candidates.iter().zip(&results) {
        if let Ok((state, false)) = result {
            changed.entry(&candidate.shard).or_default().push(state.clone());
        }
    }
    for (name, states) in changed {
        if let Some(shard) = shards.get_mut(name)
            && let Err(err) = shard.save(home, states)
        {
            // Unsaved states only cost a full read next time.
            report.warnings.push(format!("cannot save the capture state of {name}: {err}"));
        }
    }
    for (candidate, result) in candidates.iter().zip(results) {
        let (state, reused) = match result {
            Ok(read) => read,
            Err(err) => {
                report.files.unreadable += 1;
                if report.warnings.len() < MAX_WARNINGS {
                    let warning = format!("cannot read {}: {err}", candidate.path.display());
                    report.warnings.push(redact_str(&warning).into_owned());
                }
                continue;
            }
        };
        if reused {
            report.files.unchanged += 1;
        } else {
            report.files.read += 1;
        }
        let summary = state.summary;
        report.lines += summary.lines;
        let (Some(start), Some(end)) = (summary.start, summary.end) else {
            report.skipped.no_timestamps += 1;
            continue;
        };
        if end < window.since || start > window.until {
            report.skipped.outside_window += 1;
        } else if matches!(options.host, Host::Codex | Host::Copilot | Host::Cline)
            && let Some(filter) = &options.project
            && !summary.project.to_lowercase().contains(&filter.to_lowercase())
        {
            report.skipped.other_project += 1;
        } else if summary.turns < options.min_turns {
            report.skipped.too_short += 1;
        } else {
            report.sessions.push(summary);
        }
    }
    report.sessions.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.session_id.cmp(&b.session_id)));
    report.sessions_returned = report.sessions.len();
    Ok(report)
}

/// The transcripts (`.jsonl`; Cline: `.messages.json`) of the project folders that pass the filter and were modified in
/// the window, sorted by path.
fn discover(options: &ExtractOptions, report: &mut ExtractReport) -> BrainResult<Vec<Candidate>> {
    let root = &options.projects_dir;
    let entries = std::fs::read_dir(root).map_err(|err| {
        let message = if err.kind() == std::io::ErrorKind::NotFound {
            format!("projects dir {} does not exist", root.display())
        } else {
            format!("cannot read projects dir {}: {err}", root.display())
        };
        BrainError::user_with_hint(
            message,
            format!("pass the folder holding {}'s transcripts with --projects-dir", options.host.display_name()),
        )
    })?;
    let filter = options.project.as_ref().map(|p| p.to_lowercase());
    let since = std::time::SystemTime::from(options.window.since);
    let mut folders = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        match options.host {
            Host::Codex => {
                // YYYY/MM/DD: the project is known only once a rollout is read.
                for month in subfolders(&dir) {
                    folders.extend(subfolders(&month));
                }
            }
            // A folder per session: the project is known only once its events are read.
            Host::Copilot | Host::Cline => folders.push(dir),
            host => {
                if let Some(filter) = &filter
                    && !entry.file_name().to_string_lossy().to_lowercase().contains(filter.as_str())
                {
                    continue;
                }
                let chats = matches!(host, Host::Gemini | Host::Qwen);
                folders.push(if chats { dir.join("chats") } else { dir });
            }
        }
    }
    let mut candidates = Vec::new();
    for dir in folders {
        let Ok(files) = std::fs::read_dir(&dir) else {
            if !matches!(options.host, Host::Gemini | Host::Qwen) || dir.exists() {
                report.files.unreadable += 1;
            }
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            let transcript = match options.host {
                // Beside its manifest `<session>.json`.
                Host::Cline => path.to_string_lossy().ends_with(".messages.json"),
                _ => path.extension().is_some_and(|ext| ext == "jsonl"),
            };
            if !transcript {
                continue;
            }
            let Ok(metadata) = file.metadata() else {
                report.files.unreadable += 1;
                continue;
            };
            if !metadata.is_file() {
                continue;
            }
            report.files.found += 1;
            if metadata.modified().is_ok_and(|modified| modified < since) {
                report.files.skipped_old += 1;
                continue;
            }
            let session_id = store::session_id_of(options.host, &path);
            let shard = store::shard_of(options.host, &path);
            candidates.push(Candidate { path, session_id, shard });
        }
    }
    candidates.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(candidates)
}

/// The folders in `dir`, sorted (none when it cannot be read).
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    folders.sort();
    folders
}

/// A read transcript's state, and whether it is the saved one, unchanged.
type ReadResult = std::io::Result<(SessionState, bool)>;

/// Reads every candidate on all cores. Each result says whether the saved state was reused.
fn read_all(
    home: &Path,
    host: Host,
    candidates: &[Candidate],
    shards: &BTreeMap<&str, Shard>,
    on_file: &(dyn Fn() + Sync),
) -> Vec<ReadResult> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8).min(candidates.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<ReadResult>>> = Mutex::new((0..candidates.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut projects = ProjectNames::new(home);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(candidate) = candidates.get(index) else {
                        break;
                    };
                    let prior = shards.get(candidate.shard.as_str()).and_then(|shard| shard.get(&candidate.session_id));
                    let result = read_one(host, candidate, prior, &mut projects);
                    on_file();
                    if let Ok(mut slots) = results.lock() {
                        slots[index] = Some(result);
                    }
                }
            });
        }
    });
    let slots = results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    slots.into_iter().map(|slot| slot.unwrap_or_else(|| Err(std::io::Error::other("not read")))).collect()
}

fn read_one(
    host: Host,
    candidate: &Candidate,
    prior: Option<&SessionState>,
    projects: &mut ProjectNames,
) -> ReadResult {
    let state = transcript::scan(
        &candidate.path,
        host,
        &candidate.session_id,
        prior.cloned(),
        &mut |cwd| projects.name_of(cwd),
        &transcript::ReadBudget::default(),
        None,
    )?;
    let reused = prior == Some(&state);
    Ok((state, reused))
}

/// Project names of working directories, remembered (SPEC §2.6 where the folder exists here:
/// `.brain.toml`, the git root's name, the folder's name, and the folder's own project when
/// that name is tied to other folders (`config::folders`; a capture ties nothing); for a
/// folder that is gone, the project the ties record for it, else the path's last component
/// checked against the ties the same way).
pub struct ProjectNames {
    home: PathBuf,
    known: HashMap<String, String>,
}

impl ProjectNames {
    /// Names checked against the ties of `home`.
    pub fn new(home: &Path) -> ProjectNames {
        ProjectNames { home: home.to_path_buf(), known: HashMap::new() }
    }

    pub fn name_of(&mut self, cwd: &str) -> String {
        if let Some(name) = self.known.get(cwd) {
            return name.clone();
        }
        let name = project_of_cwd(&self.home, cwd);
        self.known.insert(cwd.to_string(), name.clone());
        name
    }
}

fn project_of_cwd(home: &Path, cwd: &str) -> String {
    let path = Path::new(cwd);
    if path.is_dir() {
        let from_file = config::find_upwards(path, config::PROJECT_CONFIG_FILE)
            .and_then(|file| config::read_config_text(&file).ok())
            .and_then(|text| text.parse::<toml::Table>().ok())
            .and_then(|table| table.get("project").and_then(|v| v.as_str()).map(str::to_string));
        if let Ok(name) = config::resolve_project(None, from_file.as_deref(), path) {
            let name = config::sanitize_project_name(&redact_str(&name));
            // An unreadable ties file: the session is filed under the folder's own project.
            return config::folders::tie(home, &name, path, false).project;
        }
    }
    // A folder gone since its session (a checkout deleted before the capture) keeps the
    // project the ties recorded for it. Else its name gets what an existing folder's would:
    // never the name of a project another folder holds.
    if let Some(project) = config::folders::recorded_project(home, path) {
        return project;
    }
    let last = cwd.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().unwrap_or("");
    let name = config::sanitize_project_name(&redact_str(last));
    config::folders::tie(home, &name, path, false).project
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-21T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn windows_take_durations_times_and_dates() {
        let window = Window::parse("26h", None, now()).unwrap();
        assert_eq!(format_timestamp(window.since), "2026-11-20T08:00:00Z");
        assert_eq!(window.until, now());
        let window = Window::parse("2026-11-20", Some("30m"), now()).unwrap();
        assert_eq!(format_timestamp(window.since), "2026-11-20T00:00:00Z");
        assert_eq!(format_timestamp(window.until), "2026-11-21T09:30:00Z");
        assert_eq!(format_timestamp(Window::parse("2w", None, now()).unwrap().since), "2026-11-07T10:00:00Z");
    }

    #[test]
    fn bad_windows_are_user_errors_naming_the_flag() {
        for (since, until) in [("banana", None), ("26x", None), ("-3h", None), ("1h", Some("2h")), ("", None)] {
            let err = Window::parse(since, until, now()).unwrap_err();
            assert_eq!(err.exit_code(), 1);
            assert!(err.to_string().contains("--since") || err.to_string().contains("empty"), "{err}");
        }
    }

    #[test]
    fn a_project_is_the_last_component_of_a_foreign_path() {
        assert_eq!(project_of_cwd(Path::new("/nowhere/home"), "/nowhere/at/all/agenticore"), "agenticore");
        assert_eq!(project_of_cwd(Path::new("/nowhere/home"), "/nowhere/My Repo/"), "My-Repo");
    }

    #[test]
    fn a_session_of_a_deleted_folder_is_never_filed_under_a_project_another_folder_holds() {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let home = base.join("home");
        let (holder, recorded, unrecorded) = (base.join("a/acme"), base.join("b/acme"), base.join("c/acme"));
        for folder in [&home, &holder, &recorded, &unrecorded] {
            std::fs::create_dir_all(folder).unwrap();
        }
        assert_eq!(config::folders::tie(&home, "acme", &holder, true).project, "acme");
        let own = config::folders::tie(&home, "acme", &recorded, true).project;
        assert_ne!(own, "acme");
        std::fs::remove_dir(&recorded).unwrap();
        std::fs::remove_dir(&unrecorded).unwrap();
        let name_of = |folder: &Path| project_of_cwd(&home, folder.to_str().unwrap());

        assert_eq!(name_of(&recorded), own, "the project the ties recorded for the folder");
        let unrecorded_project = name_of(&unrecorded);
        assert!(unrecorded_project.starts_with("acme.") && unrecorded_project != own, "{unrecorded_project}");
        assert_eq!(name_of(&unrecorded), unrecorded_project, "the same own project every time");
        // A name no folder holds is the folder's, as for a folder that exists.
        assert_eq!(name_of(&base.join("d/beta")), "beta");
    }
}
