//! `[vault]` configuration: where the vault is and the thresholds of the tick (SPEC §6).

use std::path::PathBuf;

use crate::Severity;
use serde::{Deserialize, Serialize};

/// The `[vault]` table. Every key is optional. Only the user config may set it: a project
/// `.brain.toml` is refused (see `config::PROJECT_ALLOWED`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VaultConfig {
    /// The vault folder; relative paths are resolved against the brain home. Default
    /// `<home>/vault`. (`vault_path` is accepted as an alias, the name SPEC §6.1 uses.)
    #[serde(skip_serializing_if = "Option::is_none", alias = "vault_path")]
    pub path: Option<PathBuf>,
    /// An arc at or above this heat gets a pointer note in `frontal-lobe/conscious/`.
    pub promote_heat: u8,
    /// A promoted arc below this heat moves to `frontal-lobe/unconscious/`.
    pub demote_heat: u8,
    /// An arc at or below this heat and older than `graduate_days` graduates.
    pub graduate_heat: u8,
    pub graduate_days: f64,
    /// Non-critical signals older than this many days leave the feed.
    pub signal_stale_days: f64,
    /// How many arcs `hot-arcs.md` and the session feed list.
    pub hot_arcs: usize,
    /// Files larger than this are skipped with a diagnostic (SPEC §2.3: 2 MiB).
    pub max_file_bytes: usize,
    /// Run the `verify=` commands of signals (without a shell, with a timeout).
    pub allow_verify_commands: bool,
    pub verify_timeout_secs: u64,
    /// Signals at or above this severity (`warning`, `critical` or `nuclear`) reach the feed
    /// of every project; below it, a signal of a project's arc reaches only that project
    /// (unless its marker says `scope=global`). Unset: none cross projects by severity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_signal_severity: Option<Severity>,
}

impl Default for VaultConfig {
    fn default() -> Self {
        VaultConfig {
            path: None,
            promote_heat: 7,
            demote_heat: 5,
            graduate_heat: 1,
            graduate_days: 14.0,
            signal_stale_days: 3.0,
            hot_arcs: 10,
            max_file_bytes: crate::vault::DEFAULT_MAX_BYTES,
            allow_verify_commands: false,
            verify_timeout_secs: 10,
            shared_signal_severity: None,
        }
    }
}

impl VaultConfig {
    /// Whether a signal of `severity` (`global`: its marker says `scope=global`) reaches the
    /// feed of every project, not only its arc's.
    pub fn shares(&self, severity: Severity, global: bool) -> bool {
        let rank = |severity: Severity| match severity {
            Severity::Nuclear => 3,
            Severity::Critical => 2,
            Severity::Warning => 1,
            Severity::Info | Severity::Resolved => 0,
        };
        global || self.shared_signal_severity.is_some_and(|least| rank(severity) >= rank(least))
    }

    /// Checks the bounds of every key; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("promote_heat", self.promote_heat),
            ("demote_heat", self.demote_heat),
            ("graduate_heat", self.graduate_heat),
        ] {
            if value > 10 {
                return Err(format!("{name} = {value} is outside 0 to 10"));
            }
        }
        if self.demote_heat > self.promote_heat {
            return Err(format!(
                "demote_heat ({}) must not be above promote_heat ({})",
                self.demote_heat, self.promote_heat
            ));
        }
        for (name, value) in [("graduate_days", self.graduate_days), ("signal_stale_days", self.signal_stale_days)] {
            if !value.is_finite() || value < 0.0 {
                return Err(format!("{name} = {value} must be a non-negative number of days"));
            }
        }
        if self.max_file_bytes == 0 {
            return Err("max_file_bytes must be positive".into());
        }
        if matches!(self.shared_signal_severity, Some(Severity::Resolved | Severity::Info)) {
            return Err("shared_signal_severity must be warning, critical or nuclear".into());
        }
        if self.verify_timeout_secs == 0 || self.verify_timeout_secs > 3600 {
            return Err(format!("verify_timeout_secs = {} must be 1 to 3600", self.verify_timeout_secs));
        }
        Ok(())
    }
}
