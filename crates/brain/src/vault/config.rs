//! `[vault]` configuration: where the vault is and the thresholds of the tick (SPEC §6).

use std::path::PathBuf;

use brain_core::Severity;
use serde::{Deserialize, Serialize};

use crate::error::{BrainError, BrainResult};

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
            max_file_bytes: brain_core::vault::DEFAULT_MAX_BYTES,
            allow_verify_commands: false,
            verify_timeout_secs: 10,
            shared_signal_severity: None,
        }
    }
}

impl VaultConfig {
    /// `base` with the keys of `table` (from the config file `origin`) laid over it, validated.
    pub(crate) fn merged(base: &VaultConfig, table: toml::Table, origin: &str) -> BrainResult<VaultConfig> {
        let mut merged = toml::Table::try_from(base)
            .map_err(|err| BrainError::internal(format!("cannot serialize vault config: {err}")))?;
        merged.extend(table);
        let invalid = |message: String| BrainError::Config {
            message: format!("config file {origin}: invalid [vault] table: {message}"),
            hint: Some("see the commented [vault] section of config.toml for the keys".into()),
        };
        let config: VaultConfig =
            merged.try_into().map_err(|err: toml::de::Error| invalid(err.message().to_string()))?;
        config.validate().map_err(invalid)?;
        Ok(config)
    }

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

    fn validate(&self) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_merge_over_the_defaults_and_bad_thresholds_name_the_key() {
        let table: toml::Table = toml::from_str("promote_heat = 8\nvault_path = \"/v\"").unwrap();
        let config = VaultConfig::merged(&VaultConfig::default(), table, "x.toml").unwrap();
        assert_eq!((config.promote_heat, config.demote_heat), (8, 5));
        assert_eq!(config.path, Some(PathBuf::from("/v")));
        let table: toml::Table = toml::from_str("demote_heat = 9").unwrap();
        let err = VaultConfig::merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
        assert!(err.contains("demote_heat (9)") && err.contains("x.toml"), "{err}");
        let table: toml::Table = toml::from_str("allow_verify = true").unwrap();
        let err = VaultConfig::merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
        assert!(err.contains("allow_verify"), "{err}");
        let table: toml::Table = toml::from_str("shared_signal_severity = \"critical\"").unwrap();
        let config = VaultConfig::merged(&VaultConfig::default(), table, "x.toml").unwrap();
        assert_eq!(config.shared_signal_severity, Some(Severity::Critical));
        assert!(config.shares(Severity::Nuclear, false) && !config.shares(Severity::Warning, false));
        assert!(config.shares(Severity::Info, true), "a signal marked scope=global is shared whatever its severity");
        for (bad, named) in [("info", "shared_signal_severity"), ("loud", "loud")] {
            let table: toml::Table = toml::from_str(&format!("shared_signal_severity = {bad:?}")).unwrap();
            let err = VaultConfig::merged(&VaultConfig::default(), table, "x.toml").unwrap_err().to_string();
            assert!(err.contains(named) && err.contains("x.toml"), "{err}");
        }
    }
}
