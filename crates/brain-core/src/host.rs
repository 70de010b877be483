//! The agent hosts brain works with: the closed set every hook, installer and transcript
//! reader matches on.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An agent host: the program whose sessions brain serves and captures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// Anthropic's Claude Code (transcripts in `~/.claude/projects/<dir>/<session>.jsonl`).
    #[default]
    ClaudeCode,
    /// OpenAI's Codex CLI (rollouts in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// Google's Gemini CLI (chats in `~/.gemini/tmp/<project>/chats/session-*.jsonl`).
    Gemini,
    /// Cursor (hooks only; its transcripts are not captured).
    Cursor,
    /// Qwen Code (chats in `~/.qwen/projects/<cwd>/chats/<session>.jsonl`).
    Qwen,
    /// GitHub Copilot CLI (events in `~/.copilot/session-state/<session>/events.jsonl`).
    Copilot,
    /// OpenCode (through brain's plugin, which writes each session's messages to
    /// `~/.local/share/opencode/brain-transcripts/<directory>/<session>.jsonl`).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Cline's CLI (sessions in `~/.cline/data/sessions/<session>/<session>.messages.json`).
    Cline,
}

impl Host {
    pub const ALL: &'static [Host] = &[
        Host::ClaudeCode,
        Host::Codex,
        Host::Gemini,
        Host::Cursor,
        Host::Qwen,
        Host::Copilot,
        Host::OpenCode,
        Host::Cline,
    ];

    /// The name used on the command line, in arcs and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Cursor => "cursor",
            Host::Qwen => "qwen",
            Host::Copilot => "copilot",
            Host::OpenCode => "opencode",
            Host::Cline => "cline",
        }
    }

    /// The name people know it by.
    pub fn display_name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Cursor => "Cursor",
            Host::Qwen => "Qwen Code",
            Host::Copilot => "GitHub Copilot CLI",
            Host::OpenCode => "OpenCode",
            Host::Cline => "Cline",
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Host {
    type Err = String;
    fn from_str(text: &str) -> Result<Host, String> {
        let lowered = text.trim().to_ascii_lowercase();
        Host::ALL.iter().copied().find(|host| host.as_str() == lowered).ok_or_else(|| {
            let names: Vec<&str> = Host::ALL.iter().map(|host| host.as_str()).collect();
            format!("unknown agent host {text:?} (allowed: {})", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for host in Host::ALL {
            assert_eq!(host.as_str().parse::<Host>(), Ok(*host));
            assert_eq!(serde_json::to_string(host).unwrap(), format!("\"{host}\""));
        }
        assert!(
            "vim"
                .parse::<Host>()
                .unwrap_err()
                .contains("allowed: claude-code, codex, gemini, cursor, qwen, copilot, opencode, cline")
        );
    }
}
