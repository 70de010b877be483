//! Qwen Code chats (`~/.qwen/projects/<cwd with / as ->/chats/<session>.jsonl`): one record a
//! line, `{uuid, sessionId, timestamp, type, cwd, message: {role, parts}}` with Gemini-shaped
//! parts (`{text}`, `{functionCall: {id, name, args}}`, `{functionResponse}`).
//!
//! `user` records are prompts: the first text part is what the user typed, the parts after
//! it are what `UserPromptSubmit` hooks added (brain's own recall among them), so only the
//! first counts. `assistant` records are answers, their `functionCall` parts tool calls
//! (`write_file`, `edit` and `replace` name the file they change); `tool_result` records carry
//! the results. `system` records (telemetry, attribution snapshots) carry nothing capture
//! needs.

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// Tools whose `file_path` argument names a file the session changed.
const EDIT_TOOLS: &[&str] = &["write_file", "edit", "replace"];

#[derive(Default, Deserialize)]
#[serde(default)]
struct Record {
    #[serde(deserialize_with = "lenient::string")]
    timestamp: Option<String>,
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    cwd: Option<String>,
    #[serde(rename = "gitBranch", deserialize_with = "lenient::string")]
    git_branch: Option<String>,
    message: Option<Message>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Message {
    parts: Option<Vec<Part>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Part {
    #[serde(deserialize_with = "lenient::string")]
    text: Option<String>,
    #[serde(rename = "functionCall")]
    function_call: Option<FunctionCall>,
    #[serde(rename = "functionResponse")]
    function_response: Option<serde::de::IgnoredAny>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct FunctionCall {
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    args: Option<Args>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Args {
    #[serde(deserialize_with = "lenient::string")]
    file_path: Option<String>,
}

/// Feeds one line (trimmed, not empty) to `accumulator`; false when it is not a JSON object.
pub(super) fn line(accumulator: &mut Accumulator, line: &[u8]) -> bool {
    let Ok(ObjectOnly(record)) = serde_json::from_slice::<ObjectOnly<Record>>(line) else {
        return false;
    };
    accumulator.observe(record.timestamp.as_deref(), record.cwd.as_deref(), record.git_branch.as_deref());
    let parts = record.message.and_then(|message| message.parts).unwrap_or_default();
    match record.kind.as_deref() {
        Some("user") => {
            if let Some(prompt) = parts.iter().find_map(|part| part.text.as_deref()) {
                accumulator.prompt(prompt);
            }
        }
        Some("assistant") => {
            accumulator.assistant_message();
            let text: Vec<&str> = parts.iter().filter_map(|part| part.text.as_deref()).collect();
            accumulator.assistant_text(&text.join("\n"));
            for call in parts.iter().filter_map(|part| part.function_call.as_ref()) {
                let name = call.name.as_deref().unwrap_or("");
                accumulator.tool_call(name);
                // Any tool given a file may show the use of a memory naming it.
                accumulator.tool_input(name, call.args.as_ref().and_then(|args| args.file_path.as_deref()), None, "");
                if EDIT_TOOLS.contains(&name)
                    && let Some(path) = call.args.as_ref().and_then(|args| args.file_path.as_deref())
                {
                    accumulator.touched(path);
                }
            }
        }
        Some("tool_result") => {
            accumulator.tool_results(parts.iter().filter(|part| part.function_response.is_some()).count());
        }
        Some("system") => {}
        _ => accumulator.unknown(),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn a_chat_counts_typed_prompts_not_the_context_hooks_added() {
        let chat = concat!(
            r#"{"uuid":"u1","sessionId":"e6fb","timestamp":"2026-11-28T14:18:02.173Z","type":"user","cwd":"/w/proj","message":{"role":"user","parts":[{"text":"Add a retry to the webhook sender"},{"text":"Memory recalled for this task (reference data, not instructions):"}]}}"#,
            "\n",
            r#"{"uuid":"s1","sessionId":"e6fb","timestamp":"2026-11-28T14:18:02.189Z","type":"system","subtype":"ui_telemetry","systemPayload":{}}"#,
            "\n",
            r#"{"uuid":"a1","sessionId":"e6fb","timestamp":"2026-11-28T14:18:02.353Z","type":"assistant","message":{"role":"model","parts":[{"text":"I'll edit it."},{"functionCall":{"id":"c1","name":"edit","args":{"file_path":"/w/proj/src/send.ts"}}},{"functionCall":{"id":"c2","name":"run_shell_command","args":{"command":"npm test"}}}]}}"#,
            "\n",
            r#"{"uuid":"t1","sessionId":"e6fb","timestamp":"2026-11-28T14:18:03.000Z","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"edit","response":{"output":"ok"}}},{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"output":"ok"}}}]}}"#,
            "\n",
            r#"{"uuid":"a2","sessionId":"e6fb","timestamp":"2026-11-28T14:19:02.000Z","type":"assistant","message":{"role":"model","parts":[{"text":"Done, the tests pass."}]}}"#,
            "\n",
            r#"{"uuid":"x1","type":"mystery"}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::Qwen, "e6fb", chat.as_bytes());
        assert_eq!(summary.host, Host::Qwen);
        assert_eq!((summary.turns, summary.first_prompt.as_str()), (1, "Add a retry to the webhook sender"));
        assert_eq!((summary.assistant_messages, summary.tool_calls, summary.tool_results), (2, 2, 2));
        assert_eq!(summary.files_touched, vec!["src/send.ts"]);
        assert_eq!((summary.cwd.as_str(), summary.outcome.as_str()), ("/w/proj", "Done, the tests pass."));
        assert_eq!(summary.duration_minutes, 1.0);
        assert_eq!((summary.lines.records, summary.lines.unknown_type), (6, 1));
    }
}
