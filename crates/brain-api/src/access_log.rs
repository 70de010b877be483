//! Deferred access bookkeeping. Session start and search must not write to the database:
//! a write on the hot path would wait for other writers and make every short process pay
//! for a WAL checkpoint when it exits. Instead they append one line per access to
//! `<home>/access.jsonl` (O_APPEND, no fsync: losing a few access counts on a power cut is
//! harmless), and the next write through `Brain` folds the log into the store.
//!
//! Folding renames the log first (atomic), so concurrent appenders start a fresh file and
//! two folders never apply the same lines twice. A folder killed after claiming the log
//! leaves `access.jsonl.<pid>`: the next fold gives the lines of a process that no longer
//! exists back to the log (on Linux, where `/proc` tells; elsewhere they wait). If it was
//! killed after applying them and before removing the claim, they count twice: bookkeeping,
//! never content.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use brain_core::Timestamp;
use brain_store::{Access, Store};
use serde::{Deserialize, Serialize};

const LOG_FILE: &str = "access.jsonl";

/// A reader folds the log itself once it grows past this: a home used only through hooks
/// (no writes) must not grow the log without bound. Folding 256 KiB costs a few ms, rarely.
pub const FOLD_THRESHOLD_BYTES: u64 = 256 * 1024;

/// True when the log has grown past [`FOLD_THRESHOLD_BYTES`].
pub fn is_large(home: &Path) -> bool {
    std::fs::metadata(log_path(home)).map(|m| m.len() > FOLD_THRESHOLD_BYTES).unwrap_or(false)
}

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    strength: Option<f32>,
    at: String,
}

fn log_path(home: &Path) -> PathBuf {
    home.join(LOG_FILE)
}

/// Appends accesses to the log. Never fails the caller: a failure is reported on stderr.
pub fn append(home: &Path, accesses: &[Access], now: Timestamp) {
    if accesses.is_empty() {
        return;
    }
    let at = brain_core::time::format_timestamp(now);
    let mut text = String::new();
    for access in accesses {
        let line = Line { id: access.id.clone(), strength: access.strength, at: at.clone() };
        if let Ok(json) = serde_json::to_string(&line) {
            text.push_str(&json);
            text.push('\n');
        }
    }
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path(home))
        .and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(err) = written {
        eprintln!("note: access bookkeeping skipped: {err}");
    }
}

/// Applies the pending log to the store and removes it. Lines that do not parse are
/// dropped; accesses of items that no longer exist are ignored by the store.
pub fn fold(home: &Path, store: &Store) {
    let path = log_path(home);
    adopt_orphaned_claims(home, &path);
    if !path.exists() {
        return;
    }
    let claimed = home.join(format!("{LOG_FILE}.{}", std::process::id()));
    if std::fs::rename(&path, &claimed).is_err() {
        return; // Another process is folding it.
    }
    let Ok(file) = std::fs::File::open(&claimed) else {
        return;
    };
    // Group by time so each batch carries its own clock.
    let mut batches: Vec<(Timestamp, Vec<Access>)> = Vec::new();
    for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
        let Ok(line) = serde_json::from_str::<Line>(&line) else { continue };
        let Ok(at) = brain_core::time::parse_timestamp(&line.at) else { continue };
        let access = Access { id: line.id, strength: line.strength };
        match batches.last_mut() {
            Some((time, accesses)) if *time == at => accesses.push(access),
            _ => batches.push((at, vec![access])),
        }
    }
    let mut applied = true;
    for (at, accesses) in &batches {
        if store.record_access(accesses, *at, None).is_err() {
            applied = false;
            break;
        }
    }
    if applied {
        let _ = std::fs::remove_file(&claimed);
    } else {
        // Put the lines back for a later fold rather than lose them.
        if let Ok(bytes) = std::fs::read(&claimed)
            && let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path)
        {
            let _ = file.write_all(&bytes);
        }
        let _ = std::fs::remove_file(&claimed);
    }
}

/// Appends the claimed logs of dead processes (`access.jsonl.<pid>[.<n>]`, `pid` being the
/// claimer) back to the log. Each is first renamed to a claim of this process, so two
/// folders never adopt the same one.
fn adopt_orphaned_claims(home: &Path, log: &Path) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(home) else { return };
    let prefix = format!("{LOG_FILE}.");
    let own = std::process::id().to_string();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(suffix) = name.to_str().and_then(|name| name.strip_prefix(&prefix)) else { continue };
        let owner = suffix.split('.').next().unwrap_or_default();
        let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        if !suffix.split('.').all(digits) || owner == own || proc.join(owner).exists() {
            continue;
        }
        let adopted = home.join(format!("{prefix}{own}.{}", suffix.replace('.', "")));
        if std::fs::rename(entry.path(), &adopted).is_err() {
            continue; // Another folder adopted it.
        }
        let Ok(bytes) = std::fs::read(&adopted) else { continue };
        let appended =
            std::fs::OpenOptions::new().create(true).append(true).open(log).and_then(|mut file| file.write_all(&bytes));
        if appended.is_ok() {
            let _ = std::fs::remove_file(&adopted);
        }
    }
}
