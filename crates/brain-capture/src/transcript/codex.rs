//! Codex rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`): one
//! `{timestamp, type, payload}` line per record, `session_meta` first.
//!
//! | line | what capture takes |
//! |---|---|
//! | `session_meta` | working directory (`cwd`), branch (`git.branch`) |
//! | `turn_context` | working directory |
//! | `event_msg` `user_message` / `item_completed` of a `UserMessage` | a prompt (one of the two, whichever the rollout writes: Codex moved from the first to the second) |
//! | `response_item` `message` of the `assistant` | an answer (its `output_text`) |
//! | `response_item` `function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call`, … | a tool call (`apply_patch` input names the files it changes) |
//! | `response_item` `*_output` | a tool result |
//! | `event_msg` `patch_apply_end` | files changed (its `changes`) |
//! | `compacted`, `event_msg` `context_compacted` | a compaction |
//!
//! The `user` messages among `response_item`s are not prompts: they include the context Codex
//! injects (environment, `AGENTS.md`), and the prompt itself is an event.

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// Line types Codex writes that carry nothing capture needs.
const QUIET_LINES: &[&str] = &["world_state", "token_usage_record"];
/// Tool results among the `response_item` types end so (tool calls end in `_call`).
const TOOL_RESULT_SUFFIX: &str = "_output";

#[derive(Deserialize)]
struct Line {
    #[serde(default, deserialize_with = "lenient::string")]
    timestamp: Option<String>,
    #[serde(rename = "type", default, deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(default)]
    payload: Option<Payload>,
}

/// The payload fields capture reads, across payload types; every one optional and lenient.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Payload {
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    cwd: Option<String>,
    git: Option<Git>,
    #[serde(deserialize_with = "lenient::string")]
    role: Option<String>,
    #[serde(deserialize_with = "lenient::texts")]
    content: Vec<String>,
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    input: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    message: Option<String>,
    item: Option<Item>,
    #[serde(deserialize_with = "lenient::keys")]
    changes: Vec<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Git {
    #[serde(deserialize_with = "lenient::string")]
    branch: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Item {
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::texts")]
    content: Vec<String>,
}

/// Feeds one line (trimmed, not empty) to `accumulator`; false when it is not a rollout line.
pub(super) fn line(accumulator: &mut Accumulator, line: &[u8]) -> bool {
    let Ok(ObjectOnly(line)) = serde_json::from_slice::<ObjectOnly<Line>>(line) else {
        return false;
    };
    let Some(kind) = line.kind.as_deref() else {
        accumulator.unknown();
        return true;
    };
    let payload = line.payload.unwrap_or_default();
    let (cwd, branch) = match kind {
        "session_meta" => (payload.cwd.as_deref(), payload.git.as_ref().and_then(|git| git.branch.as_deref())),
        "turn_context" => (payload.cwd.as_deref(), None),
        _ => (None, None),
    };
    accumulator.observe(line.timestamp.as_deref(), cwd, branch);
    match kind {
        "session_meta" | "turn_context" => {}
        "response_item" => response_item(accumulator, &payload),
        "event_msg" => event(accumulator, &payload),
        "compacted" => accumulator.compaction(),
        kind if QUIET_LINES.contains(&kind) => {}
        _ => accumulator.unknown(),
    }
    true
}

fn response_item(accumulator: &mut Accumulator, payload: &Payload) {
    let kind = payload.kind.as_deref().unwrap_or("");
    match kind {
        "message" if payload.role.as_deref() == Some("assistant") => {
            accumulator.assistant_message();
            accumulator.assistant_text(&payload.content.join("\n"));
        }
        "compaction" | "compaction_summary" => accumulator.compaction(),
        kind if kind.ends_with(TOOL_RESULT_SUFFIX) => accumulator.tool_results(1),
        kind if kind.ends_with("_call") => {
            let name = payload.name.as_deref().unwrap_or(kind);
            accumulator.tool_call(name);
            if name == "apply_patch"
                && let Some(patch) = payload.input.as_deref()
            {
                for path in patch_paths(patch) {
                    accumulator.touched(path);
                }
            }
        }
        _ => {}
    }
}

fn event(accumulator: &mut Accumulator, payload: &Payload) {
    match payload.kind.as_deref().unwrap_or("") {
        "user_message" => {
            if accumulator.host_state.prompt_counts("user_message")
                && let Some(message) = payload.message.as_deref()
            {
                accumulator.prompt(message);
            }
        }
        "item_completed" => {
            let Some(item) = &payload.item else { return };
            if item.kind.as_deref() == Some("UserMessage") && accumulator.host_state.prompt_counts("UserMessage") {
                accumulator.prompt(&item.content.join("\n"));
            }
        }
        "patch_apply_end" => {
            for path in &payload.changes {
                accumulator.touched(path);
            }
        }
        "context_compacted" => accumulator.compaction(),
        _ => {}
    }
}

/// The files an `apply_patch` input adds, updates, deletes or moves to.
fn patch_paths(patch: &str) -> impl Iterator<Item = &str> {
    const HEADERS: &[&str] = &["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
    patch.lines().filter_map(|line| HEADERS.iter().find_map(|header| line.strip_prefix(header)).map(str::trim))
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn a_rollout_is_summarised_from_events_and_response_items() {
        let rollout = concat!(
            r#"{"timestamp":"2026-11-23T21:59:03.193Z","type":"session_meta","payload":{"id":"01a2","timestamp":"2026-11-23T21:59:03Z","cwd":"/w/api","git":{"branch":"main"},"cli_version":"0.169.0"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:03.200Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context><cwd>/w/api</cwd></environment_context>"}]}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:03.210Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/w/api","model":"gpt"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:03.300Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"Fix the webhook retries"}]}}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:04.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c1","input":"*** Begin Patch\n*** Update File: /w/api/src/retry.rs\n@@\n-a\n+b\n*** End Patch"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:05.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"ok"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:05.100Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"c1","success":true,"changes":{"/w/api/src/retry.rs":{"type":"update"},"/w/api/tests/retry.rs":{"type":"add"}}}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:06.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cargo\",\"test\"]}","call_id":"c2"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:07.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"ok"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:08.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done: retries back off now and the tests are green."}]}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:09.000Z","type":"compacted","payload":{"message":"summary"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:09.100Z","type":"event_msg","payload":{"type":"context_compacted"}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:10.000Z","type":"world_state","payload":{"full":true}}"#,
            "\n",
            r#"{"timestamp":"2026-11-23T21:59:11.000Z","type":"brand_new_kind","payload":{}}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::Codex, "01a2", rollout.as_bytes());
        assert_eq!(summary.host, Host::Codex);
        assert_eq!((summary.turns, summary.tool_calls, summary.tool_results), (1, 2, 2));
        assert_eq!(summary.first_prompt, "Fix the webhook retries");
        assert_eq!(
            (summary.cwd.as_str(), summary.git_branch.as_str(), summary.project.as_str()),
            ("/w/api", "main", "api")
        );
        assert_eq!(summary.files_touched, vec!["src/retry.rs", "tests/retry.rs"]);
        assert_eq!(summary.tools.get("apply_patch"), Some(&1));
        assert_eq!(summary.outcome, "Done: retries back off now and the tests are green.");
        assert_eq!(summary.compactions, 1, "one compaction, two records");
        assert_eq!((summary.lines.records, summary.lines.unknown_type, summary.lines.bad_json), (14, 1, 0));
    }

    #[test]
    fn older_rollouts_count_user_message_events_once() {
        let rollout = concat!(
            r#"{"timestamp":"2025-09-01T10:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"first","images":[]}}"#,
            "\n",
            r#"{"timestamp":"2025-09-01T10:01:00Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"text":"first"}]}}}"#,
            "\n",
            r#"{"timestamp":"2025-09-01T10:02:00Z","type":"event_msg","payload":{"type":"user_message","message":"second"}}"#,
            "\n",
            "not json\n",
            r#"{"timestamp":"2025-09-01T10:03:00Z","type":"response_item","payload":{"type":"message","role":"assistant","content":"odd shape"}}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::Codex, "s", rollout.as_bytes());
        assert_eq!((summary.turns, summary.last_prompt.as_str()), (2, "second"));
        assert_eq!((summary.lines.bad_json, summary.outcome.as_str()), (1, "odd shape"));
    }
}
