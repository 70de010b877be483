//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`): a metadata
//! line (`sessionId`, `projectHash`, `startTime`), then message records
//! (`{id, timestamp, type, content, toolCalls}`), metadata updates (`{"$set": …}`, which may
//! carry a whole `messages` list) and rewinds (`{"$rewindTo": id}`).
//!
//! A message may be written again when it changes (a model answer gains its tool calls), so
//! messages and tool calls count once by their ids. `user` messages are prompts, except the
//! `<session_context>` Gemini CLI injects; `gemini` messages are answers, their `toolCalls`
//! tool calls (with a result when they have one; `write_file` and `replace` name the file
//! they change). The working directory is not in the chat: it is the project folder's
//! `.project_root`.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// Tools whose `file_path` argument names a file the session changed.
const EDIT_TOOLS: &[&str] = &["write_file", "replace", "edit"];

#[derive(Default, Deserialize)]
#[serde(default)]
struct Record {
    #[serde(deserialize_with = "lenient::string")]
    id: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    timestamp: Option<String>,
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::texts")]
    content: Vec<String>,
    #[serde(rename = "toolCalls")]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(rename = "sessionId", deserialize_with = "lenient::string")]
    session_id: Option<String>,
    #[serde(rename = "startTime", deserialize_with = "lenient::string")]
    start_time: Option<String>,
    #[serde(rename = "$set")]
    set: Option<SetRecord>,
    #[serde(rename = "$rewindTo", deserialize_with = "lenient::string")]
    rewind_to: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct SetRecord {
    messages: Option<Vec<Record>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ToolCall {
    #[serde(deserialize_with = "lenient::string")]
    id: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    args: Option<Args>,
    result: Option<serde::de::IgnoredAny>,
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
    if let Some(set) = record.set {
        for message in set.messages.into_iter().flatten() {
            message_record(accumulator, message);
        }
        return true;
    }
    if record.rewind_to.is_some() {
        return true;
    }
    if record.session_id.is_some() && record.kind.is_none() {
        accumulator.observe(record.start_time.as_deref(), None, None);
        return true;
    }
    message_record(accumulator, record);
    true
}

fn message_record(accumulator: &mut Accumulator, record: Record) {
    let Some(kind) = record.kind.as_deref() else {
        accumulator.unknown();
        return;
    };
    accumulator.observe(record.timestamp.as_deref(), None, None);
    let first = record.id.as_deref().is_none_or(|id| accumulator.host_state.first_sight(id));
    match kind {
        "user" if first => {
            let text = record.content.join("\n");
            if !text.trim_start().starts_with("<session_context>") {
                accumulator.prompt(&text);
            }
        }
        "gemini" => {
            if first {
                accumulator.assistant_message();
                accumulator.assistant_text(&record.content.join("\n"));
            }
            for call in record.tool_calls.into_iter().flatten() {
                let counted =
                    call.id.as_deref().is_none_or(|id| accumulator.host_state.first_sight(&format!("tool {id}")));
                if !counted {
                    continue;
                }
                let name = call.name.as_deref().unwrap_or("");
                accumulator.tool_call(name);
                if call.result.is_some() {
                    accumulator.tool_results(1);
                }
                // Any tool given a file may show the use of a memory naming it.
                accumulator.tool_input(name, call.args.as_ref().and_then(|args| args.file_path.as_deref()), None, "");
                if EDIT_TOOLS.contains(&name)
                    && let Some(path) = call.args.as_ref().and_then(|args| args.file_path.as_deref())
                {
                    accumulator.touched(path);
                }
            }
        }
        "user" | "info" | "error" | "warning" => {}
        _ => accumulator.unknown(),
    }
}

/// The project root of a chat (`<tmp>/<project>/chats/<chat>.jsonl`): the path Gemini CLI
/// wrote in `<tmp>/<project>/.project_root`.
pub(super) fn project_root_of(chat: &Path) -> Option<String> {
    let file = chat.parent()?.parent()?.join(".project_root");
    let metadata = std::fs::symlink_metadata(&file).ok()?;
    if !metadata.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(&file).ok()?.take(4096).read_to_string(&mut text).ok()?;
    let root = text.trim();
    (!root.is_empty()).then(|| root.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn a_chat_is_summarised_with_messages_and_tool_calls_counted_once() {
        let chat = concat!(
            r#"{"sessionId":"f025","projectHash":"c6b5","startTime":"2026-11-23T22:03:02.431Z","lastUpdated":"2026-11-23T22:03:02.431Z","kind":"main"}"#,
            "\n",
            r#"{"$set":{"messages":[{"id":"ctx","timestamp":"2026-11-23T22:03:02.431Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]}]}}"#,
            "\n",
            r#"{"id":"u1","timestamp":"2026-11-23T22:03:02.551Z","type":"user","content":[{"text":"Add a retry to the webhook sender"}]}"#,
            "\n",
            r#"{"$set":{"lastUpdated":"2026-11-23T22:03:02.551Z"}}"#,
            "\n",
            r#"{"id":"g1","timestamp":"2026-11-23T22:03:03.000Z","type":"gemini","content":"I'll edit it.","toolCalls":[{"id":"t1","name":"replace","args":{"file_path":"/w/hooks/src/send.ts"},"status":"executing"}]}"#,
            "\n",
            r#"{"id":"g1","timestamp":"2026-11-23T22:03:03.000Z","type":"gemini","content":"I'll edit it.","toolCalls":[{"id":"t1","name":"replace","args":{"file_path":"/w/hooks/src/send.ts"},"status":"success","result":[{"text":"ok"}]},{"id":"t2","name":"run_shell_command","args":{"command":"npm test"},"result":[]}]}"#,
            "\n",
            r#"{"id":"g2","timestamp":"2026-11-23T22:04:00.000Z","type":"gemini","content":[{"text":"Done, the tests pass."}]}"#,
            "\n",
            r#"{"$rewindTo":"g2"}"#,
            "\n",
            r#"{"id":"i1","timestamp":"2026-11-23T22:04:01.000Z","type":"info","content":"Saved"}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::Gemini, "session-x", chat.as_bytes());
        assert_eq!(summary.host, Host::Gemini);
        assert_eq!(summary.turns, 1, "the injected session context is not a prompt");
        assert_eq!(summary.first_prompt, "Add a retry to the webhook sender");
        assert_eq!((summary.assistant_messages, summary.tool_calls, summary.tool_results), (2, 2, 1));
        assert_eq!(summary.files_touched, vec!["/w/hooks/src/send.ts"]);
        assert_eq!(summary.outcome, "Done, the tests pass.");
        assert_eq!(summary.start.unwrap().to_string(), "2026-11-23T22:03:02.431Z");
        assert_eq!((summary.lines.records, summary.lines.bad_json, summary.lines.unknown_type), (9, 0, 0));
    }
}
