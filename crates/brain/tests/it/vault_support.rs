//! Helpers for the vault tests: a vault folder next to the home, arc fixtures, fingerprints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::Env;

/// A vault folder (compartments created by `brain vault init`) inside the test's temp dir.
pub struct Vault {
    pub root: PathBuf,
}

impl Vault {
    pub fn new(env: &Env) -> Vault {
        let root = env.dir.path().join("vault");
        env.brain().args(["vault", "init", "--vault", root.to_str().unwrap()]).assert().success();
        Vault { root }
    }

    /// The `--vault` argument.
    pub fn arg(&self) -> &str {
        self.root.to_str().unwrap()
    }

    pub fn path(&self, relpath: &str) -> PathBuf {
        self.root.join(relpath)
    }

    /// Writes a file and dates it an hour back, so scans trust its stat at once.
    pub fn write(&self, relpath: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relpath);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        age(&path, 3600);
        path
    }

    pub fn read(&self, relpath: &str) -> String {
        std::fs::read_to_string(self.path(relpath)).unwrap()
    }

    pub fn exists(&self, relpath: &str) -> bool {
        self.path(relpath).exists()
    }
}

/// Sets a file's modification time `seconds` into the past.
pub fn age(path: &Path, seconds: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(seconds)).unwrap();
}

/// Every file under `dir` (symlinks not followed): relpath → (SHA-256, modification time).
pub fn fingerprint(dir: &Path) -> BTreeMap<String, (String, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let entry = entry.unwrap();
            let file_type = entry.file_type().unwrap();
            let path = entry.path();
            let relpath = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
            if file_type.is_dir() {
                stack.push(path);
            } else {
                let metadata = std::fs::symlink_metadata(&path).unwrap();
                let hash = if file_type.is_file() {
                    hex::encode(Sha256::digest(std::fs::read(&path).unwrap()))
                } else {
                    format!("symlink to {}", std::fs::read_link(&path).unwrap().display())
                };
                out.insert(relpath, (hash, metadata.modified().unwrap()));
            }
        }
    }
    out
}

/// Relpaths whose hash or modification time differ between two fingerprints (or that exist
/// in only one).
pub fn changed_files(
    before: &BTreeMap<String, (String, std::time::SystemTime)>,
    after: &BTreeMap<String, (String, std::time::SystemTime)>,
) -> Vec<String> {
    let mut changed: Vec<String> =
        before.keys().chain(after.keys()).filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    changed.sort();
    changed.dedup();
    changed
}

pub const HOT: &str = "clusters/2026-11-21/2026-11-21-hot-retry-storm-aaaaaaaaaaaa.md";
pub const OLD: &str = "clusters/2026-10-01/2026-10-01-old-csv-export-bbbbbbbbbbbb.md";
pub const MID: &str = "clusters/2026-11-19/2026-11-19-mid-token-rotation-cccccccccccc.md";
pub const NOTE: &str = "notes/standing.md";

/// Created 2 h before NOW, active, 3 sessions, 2000 tools, joy: heat 10 (file says 2).
pub const HOT_ARC: &str = "---
cluster_id: 2026-11-21-hot-retry-storm-aaaaaaaaaaaa
title: Hot retry storm
region: left-hemisphere
status: active
heat: 2
created: 2026-11-21T08:00:00Z
summary: Retry storm in the gateway, fixed by backoff
source_sessions: [s1, s2, s3]
signals: {errors: 4, joy: 1, tools: 2000}
project: demo
---

# Hot retry storm

<!-- @lesson -->
Always back off exponentially.
<!-- @/lesson -->

<!-- @signal severity=critical source=auth-broker -->
Auth broker ban rate increasing.
<!-- @/signal -->

<!-- @inject target=claude.md -->
Gateway retries are capped at 3.
<!-- @/inject -->

<!-- @edge type=related target=2026-11-19-mid-token-rotation-cccccccccccc -->
";

/// Created 2026-10-01, complete: heat 0 (file says 3); graduates into left/.
pub const OLD_ARC: &str = "---
cluster_id: 2026-10-01-old-csv-export-bbbbbbbbbbbb
title: Old CSV export
region: left-hemisphere
status: complete
heat: 3
created: 2026-10-01T12:00:00Z
source_sessions: [s9]
---

Body of an old arc.
";

/// Created 2 days before NOW, stalled, one session: heat 2 (file says 2: unchanged). Holds a
/// stale warning, a cleared signal (tombstone) and an info signal with a private part.
pub const MID_ARC: &str = "---
cluster_id: 2026-11-19-mid-token-rotation-cccccccccccc
title: Mid token rotation
region: right-hemisphere
status: stalled
heat: 2
created: 2026-11-19T10:00:00Z
source_sessions: [s4]
---

Intro line.

<!-- @signal severity=warning source=ci date=2026-11-15 -->
CI flaky since last week.
<!-- @/signal -->

<!-- @signal severity=resolved source=vault-sync -->
Vault sync lagging (CLEARED: NFS cache fixed)
<!-- @/signal -->

<!-- @signal severity=info source=rotation date=2026-11-21 -->
Rotation pending <private>key id 42</private> for review.
<!-- @/signal -->

Outro line.
";

/// A standing note (no cluster_id): a decision, a duplicate inject, an expired inject.
pub const STANDING_NOTE: &str = "---
title: Standing note
---

<!-- @decision date=2026-11-20 -->
Use deterministic parsers over LLM agents.
<!-- @/decision -->

<!-- @inject target=claude.md -->
Gateway   retries are capped at 3.
<!-- @/inject -->

<!-- @inject target=claude.md ttl_days=1 date=2026-11-10 -->
Freeze deploys this week.
<!-- @/inject -->
";

/// The four fixture files.
pub fn standard_vault(env: &Env) -> Vault {
    let vault = Vault::new(env);
    vault.write(HOT, HOT_ARC);
    vault.write(OLD, OLD_ARC);
    vault.write(MID, MID_ARC);
    vault.write(NOTE, STANDING_NOTE);
    vault
}

/// `brain … --json` that must succeed, parsed.
pub fn json(env: &Env, args: &[&str]) -> serde_json::Value {
    env.json(args)
}

/// One phase-1 tick of `brain` over `vault` with `hook` run just before each file of the
/// vault is written (a user editing that file at that moment).
pub fn tick_with_hook(
    brain: &brain_api::app::Brain,
    vault: &Vault,
    hook: &(dyn Fn(&Path) + Sync),
) -> brain_ai::TickReport {
    let location = brain_vault::Location::resolve(brain, Some(&vault.root), None).unwrap();
    let options = brain_vault::TickOptions {
        location,
        dry_run: false,
        no_ai: true,
        progress: &|_, _| {},
        before_write: Some(hook),
    };
    brain_ai::tick(brain, &options).unwrap()
}
