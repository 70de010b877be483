//! What each host calls brain's four hook events and what it reads back on stdout, checked
//! against each host's own documentation, schema or source (late 2026):
//!
//! | event | Claude Code | Codex | Gemini CLI | Cursor | Qwen Code | Copilot CLI | OpenCode (plugin) | Cline |
//! |---|---|---|---|---|---|---|---|---|
//! | session start | `SessionStart` | `SessionStart` | `SessionStart` | `sessionStart` | — | `sessionStart` | `experimental.chat.system.transform` | `TaskStart` |
//! | prompt | `UserPromptSubmit` | `UserPromptSubmit` | `BeforeAgent` | `beforeSubmitPrompt` | `UserPromptSubmit` | `userPromptSubmitted` | `chat.message` | — |
//! | turn done | `Stop` | `Stop` | `AfterAgent` | `stop` | `Stop` | `agentStop` | `session.idle` | `TaskComplete` |
//! | session end | `SessionEnd` | — | `SessionEnd` | — | `SessionEnd` | `sessionEnd` | — | `SessionShutdown` |
//!
//! Context goes back as `{"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}}`
//! (Claude Code, Codex — whose output schemas refuse unknown keys —, Gemini CLI, Qwen Code),
//! as a top-level `{"additionalContext":…}` for Copilot CLI (which ignores
//! `hookSpecificOutput`) and for brain's own OpenCode plugin ([`super::opencode`]), or as `{"additional_context":…}` for Cursor's `sessionStart` (and
//! `{"continue":true}` for its `beforeSubmitPrompt`, which cannot carry context: Cursor gets
//! its refreshes through the `.cursor/rules/brain.mdc` rule brain keeps current). Each host
//! has its own size cap.
//!
//! Cline 3.0.65 runs its hooks (one executable per event: [`super::cline`]) without waiting
//! for `TaskStart`, `UserPromptSubmit`, `TaskComplete` or `SessionShutdown`, and reads none of
//! their output: its hooks keep brain's rule current ([`super::rule`]), which Cline puts into
//! every task's system prompt, and capture the session; they print `{"cancel":false}`. Its
//! `UserPromptSubmit` is not installed: it cannot add anything.
//!
//! Qwen Code 0.15 runs `SessionStart` only in its interactive and ACP modes and drops what
//! it returns, so brain does not install it there: the session's first prompt carries the
//! working memory instead ([`working_memory_at_first_prompt`]).

use serde_json::json;

use brain_api::config::HooksConfig;
use brain_capture::Host;

/// brain's hook events, by their `brain hook` subcommand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    Stop,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: &'static [HookEvent] =
        &[HookEvent::SessionStart, HookEvent::UserPromptSubmit, HookEvent::Stop, HookEvent::SessionEnd];

    /// The `brain hook` subcommand (and the label in `hooks.log`).
    pub fn subcommand(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::Stop => "stop",
            HookEvent::SessionEnd => "session-end",
        }
    }
}

/// The host's name for `event`, when the host has it.
pub fn event_name(host: Host, event: HookEvent) -> Option<&'static str> {
    use HookEvent::*;
    Some(match (host, event) {
        (Host::ClaudeCode | Host::Codex | Host::Gemini, SessionStart) => "SessionStart",
        (Host::ClaudeCode | Host::Codex | Host::Qwen, UserPromptSubmit) => "UserPromptSubmit",
        (Host::ClaudeCode | Host::Codex | Host::Qwen, Stop) => "Stop",
        (Host::ClaudeCode | Host::Gemini | Host::Qwen, SessionEnd) => "SessionEnd",
        (Host::Gemini, UserPromptSubmit) => "BeforeAgent",
        (Host::Gemini, Stop) => "AfterAgent",
        (Host::Cursor, SessionStart) => "sessionStart",
        (Host::Cursor, UserPromptSubmit) => "beforeSubmitPrompt",
        (Host::Cursor, Stop) => "stop",
        (Host::Copilot, SessionStart) => "sessionStart",
        (Host::Copilot, UserPromptSubmit) => "userPromptSubmitted",
        (Host::Copilot, Stop) => "agentStop",
        (Host::Copilot, SessionEnd) => "sessionEnd",
        (Host::OpenCode, SessionStart) => "experimental.chat.system.transform",
        (Host::OpenCode, UserPromptSubmit) => "chat.message",
        (Host::OpenCode, Stop) => "session.idle",
        (Host::Cline, SessionStart) => "TaskStart",
        (Host::Cline, Stop) => "TaskComplete",
        (Host::Cline, SessionEnd) => "SessionShutdown",
        (Host::Codex | Host::Cursor | Host::OpenCode, SessionEnd)
        | (Host::Qwen, SessionStart)
        | (Host::Cline, UserPromptSubmit) => return None,
    })
}

/// Whether `host` drops what its session-start hook returns, so that the session's first
/// prompt must carry the working memory (Qwen Code).
pub fn working_memory_at_first_prompt(host: Host) -> bool {
    host == Host::Qwen
}

/// The events `install` registers for `host`, in order.
pub fn installed_events(host: Host) -> Vec<HookEvent> {
    HookEvent::ALL.iter().copied().filter(|event| event_name(host, *event).is_some()).collect()
}

/// The payload carrying `context` for `event` on `host` (an empty string: nothing to add).
pub fn context_payload(host: Host, event: HookEvent, context: &str) -> String {
    let name = event_name(host, event).unwrap_or("SessionStart");
    match (host, event) {
        (Host::Cursor, HookEvent::SessionStart) => json!({"additional_context": context}).to_string(),
        (Host::Cursor | Host::Cline, _) => quiet_payload(host, event),
        (Host::Copilot | Host::OpenCode, _) => json!({"additionalContext": context}).to_string(),
        _ => json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}).to_string(),
    }
}

/// What the hook prints when it has nothing to add (and on failure): session start always
/// answers with its (empty) context; Cursor's prompt hook must let the prompt through; Cline's
/// hooks never cancel; the other events print nothing.
pub fn quiet_payload(host: Host, event: HookEvent) -> String {
    match (host, event) {
        (Host::Cline, _) => json!({"cancel": false}).to_string(),
        (_, HookEvent::SessionStart) => context_payload(host, event, ""),
        (Host::Cursor, HookEvent::UserPromptSubmit) => json!({"continue": true}).to_string(),
        (Host::Cursor, _) => "{}".to_string(),
        _ => String::new(),
    }
}

/// How much context a host takes in one payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeCap {
    /// At most this many characters (Claude Code replaces a longer value by a preview).
    Chars(usize),
    /// At most this many UTF-8 bytes (Codex counts a token as 4 bytes and spills longer
    /// hook output to a file, showing the model a preview).
    Bytes(usize),
}

impl SizeCap {
    /// The character budget to ask the assembler for first.
    pub fn chars(self) -> usize {
        match self {
            SizeCap::Chars(chars) | SizeCap::Bytes(chars) => chars,
        }
    }

    pub fn fits(self, text: &str) -> bool {
        match self {
            SizeCap::Chars(max) => text.chars().count() <= max,
            SizeCap::Bytes(max) => text.len() <= max,
        }
    }

    /// The cap less a prefix that goes before the assembled text.
    pub fn less(self, prefix: &str) -> SizeCap {
        match self {
            SizeCap::Chars(max) => SizeCap::Chars(max.saturating_sub(prefix.chars().count())),
            SizeCap::Bytes(max) => SizeCap::Bytes(max.saturating_sub(prefix.len())),
        }
    }
}

/// The cap of `host` from the configuration (`[hooks] max_chars`, `codex_max_tokens`,
/// `gemini_max_chars`, `cursor_max_chars`, `qwen_max_chars`, `copilot_max_chars`,
/// `opencode_max_chars`, `cline_max_chars`).
pub fn size_cap(host: Host, config: &HooksConfig) -> SizeCap {
    match host {
        Host::ClaudeCode => SizeCap::Chars(config.max_chars),
        Host::Codex => SizeCap::Bytes(config.codex_max_tokens.saturating_mul(4)),
        Host::Gemini => SizeCap::Chars(config.gemini_max_chars),
        Host::Cursor => SizeCap::Chars(config.cursor_max_chars),
        Host::Qwen => SizeCap::Chars(config.qwen_max_chars),
        Host::Copilot => SizeCap::Chars(config.copilot_max_chars),
        Host::OpenCode => SizeCap::Chars(config.opencode_max_chars),
        Host::Cline => SizeCap::Chars(config.cline_max_chars),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_gets_its_own_shapes() {
        let claude = context_payload(Host::ClaudeCode, HookEvent::UserPromptSubmit, "x");
        assert_eq!(claude, r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}"#);
        let gemini = context_payload(Host::Gemini, HookEvent::UserPromptSubmit, "x");
        assert_eq!(gemini, r#"{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"x"}}"#);
        assert_eq!(context_payload(Host::Cursor, HookEvent::SessionStart, "x"), r#"{"additional_context":"x"}"#);
        assert_eq!(quiet_payload(Host::Cursor, HookEvent::UserPromptSubmit), r#"{"continue":true}"#);
        assert_eq!(quiet_payload(Host::Cursor, HookEvent::Stop), "{}");
        assert_eq!(quiet_payload(Host::Codex, HookEvent::Stop), "");
        assert_eq!(
            quiet_payload(Host::Codex, HookEvent::SessionStart),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":""}}"#
        );
        assert_eq!(installed_events(Host::Codex).len(), 3, "Codex has no SessionEnd");
        assert_eq!(installed_events(Host::Gemini).len(), 4);
        assert_eq!(context_payload(Host::Copilot, HookEvent::UserPromptSubmit, "x"), r#"{"additionalContext":"x"}"#);
        assert_eq!(quiet_payload(Host::Copilot, HookEvent::SessionStart), r#"{"additionalContext":""}"#);
        assert_eq!(quiet_payload(Host::Copilot, HookEvent::Stop), "");
        let qwen = context_payload(Host::Qwen, HookEvent::UserPromptSubmit, "x");
        assert_eq!(qwen, r#"{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}"#);
        assert_eq!(installed_events(Host::Qwen).len(), 3, "Qwen Code drops what SessionStart returns");
        assert_eq!(installed_events(Host::Copilot).len(), 4);
        assert_eq!(context_payload(Host::Cline, HookEvent::SessionStart, "x"), r#"{"cancel":false}"#);
        assert_eq!(quiet_payload(Host::Cline, HookEvent::Stop), r#"{"cancel":false}"#);
        assert_eq!(
            installed_events(Host::Cline),
            vec![HookEvent::SessionStart, HookEvent::Stop, HookEvent::SessionEnd]
        );
    }

    #[test]
    fn codex_caps_bytes_the_others_characters() {
        let config = HooksConfig::default();
        assert_eq!(size_cap(Host::ClaudeCode, &config), SizeCap::Chars(9500));
        assert_eq!(size_cap(Host::Codex, &config), SizeCap::Bytes(9600));
        assert!(SizeCap::Bytes(4).fits("abcd") && !SizeCap::Bytes(4).fits("abcé"));
        assert!(SizeCap::Chars(4).fits("abcé"));
    }
}
