//! Scopes: `global`, `project/<name>`, `team/<name>`, `agent/<name>` (SPEC §2.1, §2.6).

use std::fmt;

/// Where a memory belongs. Nothing leaks from one scope into another.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Global,
    Project(String),
    Team(String),
    Agent(String),
}

/// Longest allowed scope name (the part after the slash).
pub const MAX_SCOPE_NAME_CHARS: usize = 100;

impl Scope {
    /// Parses `global`, `project/NAME`, `team/NAME` or `agent/NAME`.
    pub fn parse(text: &str) -> Result<Scope, String> {
        let text = text.trim();
        if text == "global" {
            return Ok(Scope::Global);
        }
        let allowed = "allowed: global, project/<name>, team/<name>, agent/<name>";
        let Some((prefix, name)) = text.split_once('/') else {
            return Err(format!("invalid scope {text:?} ({allowed})"));
        };
        validate_scope_name(name).map_err(|why| format!("invalid scope {text:?}: {why} ({allowed})"))?;
        match prefix {
            "project" => Ok(Scope::Project(name.to_string())),
            "team" => Ok(Scope::Team(name.to_string())),
            "agent" => Ok(Scope::Agent(name.to_string())),
            _ => Err(format!("invalid scope {text:?} ({allowed})")),
        }
    }

    /// The project scope for a project name.
    pub fn project(name: &str) -> Result<Scope, String> {
        validate_scope_name(name).map_err(|why| format!("invalid project name {name:?}: {why}"))?;
        Ok(Scope::Project(name.to_string()))
    }
}

/// A scope name is one path-safe segment: letters, digits, `.`, `_`, `-`; not `.` or `..`.
pub fn validate_scope_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("name is empty".into());
    }
    if name.chars().count() > MAX_SCOPE_NAME_CHARS {
        return Err(format!("name longer than {MAX_SCOPE_NAME_CHARS} characters"));
    }
    if name == "." || name == ".." {
        return Err("name may not be . or ..".into());
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        return Err(format!("character {bad:?} not allowed (letters, digits, '.', '_', '-')"));
    }
    Ok(())
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::Project(name) => write!(f, "project/{name}"),
            Scope::Team(name) => write!(f, "team/{name}"),
            Scope::Agent(name) => write!(f, "agent/{name}"),
        }
    }
}

impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Scope::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_through_text() {
        for text in ["global", "project/brain", "team/infra", "agent/reviewer-2"] {
            assert_eq!(Scope::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn scopes_reject_path_tricks_and_unknown_prefixes() {
        for text in ["", "project/", "project/..", "project/a/b", "user/x", "projects/x", "global/x"] {
            assert!(Scope::parse(text).is_err(), "{text:?} should be rejected");
        }
    }
}
