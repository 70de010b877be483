//! OpenCode sessions, as brain's OpenCode plugin writes them when a turn ends
//! (`$XDG_DATA_HOME/opencode/brain-transcripts/<directory>/<session>.jsonl`, from the
//! plugin's client, `session.messages`): one message a line, `{info, parts}`, as OpenCode's
//! API gives them (`info: {id, role, time: {created}, path: {cwd}}`; parts of type `text`
//! — `synthetic` when a plugin added it —, `tool` with `state: {status, input}`, `patch`,
//! `step-start`, `step-finish`, …). OpenCode itself keeps them in SQLite, which only its own
//! API reads safely; the plugin rewrites the file with every message so far, the messages
//! already written unchanged, so reading resumes where it stopped.
//!
//! `user` messages are prompts (their text parts but the synthetic ones, which are what
//! plugins — brain among them — added); `opencode run "a b"` stores its prompt quoted as a
//! JSON string, which is read back. `assistant` messages are answers: their text, their tool
//! parts (`edit` and `write` name the file they change in `filePath`; a completed or failed
//! tool is a result).

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// Tools whose `filePath` input names a file the session changed.
const EDIT_TOOLS: &[&str] = &["edit", "write", "patch", "multiedit"];

#[derive(Default, Deserialize)]
#[serde(default)]
struct Line {
    info: Option<Info>,
    parts: Option<Vec<Part>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Info {
    #[serde(deserialize_with = "lenient::string")]
    role: Option<String>,
    time: Option<Time>,
    path: Option<InfoPath>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Time {
    created: Option<serde_json::Number>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct InfoPath {
    #[serde(deserialize_with = "lenient::string")]
    cwd: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Part {
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    text: Option<String>,
    synthetic: Option<bool>,
    #[serde(deserialize_with = "lenient::string")]
    tool: Option<String>,
    state: Option<ToolState>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ToolState {
    #[serde(deserialize_with = "lenient::string")]
    status: Option<String>,
    input: Option<ToolInput>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ToolInput {
    #[serde(rename = "filePath", deserialize_with = "lenient::string")]
    file_path: Option<String>,
}

/// Feeds one line (trimmed, not empty) to `accumulator`; false when it is not a JSON object.
pub(super) fn line(accumulator: &mut Accumulator, line: &[u8]) -> bool {
    let Ok(ObjectOnly(record)) = serde_json::from_slice::<ObjectOnly<Line>>(line) else {
        return false;
    };
    let Some(info) = record.info else {
        accumulator.unknown();
        return true;
    };
    let created = info.time.and_then(|time| time.created).and_then(|ms| ms.as_i64());
    let timestamp = created.and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok()).map(|at| at.to_string());
    let cwd = info.path.and_then(|path| path.cwd);
    accumulator.observe(timestamp.as_deref(), cwd.as_deref(), None);
    let parts = record.parts.unwrap_or_default();
    let texts = || {
        parts
            .iter()
            .filter(|part| part.kind.as_deref() == Some("text") && part.synthetic != Some(true))
            .filter_map(|part| part.text.as_deref())
    };
    match info.role.as_deref() {
        Some("user") => {
            let prompt: Vec<String> = texts().map(unquote).collect();
            accumulator.prompt(&prompt.join("\n"));
        }
        Some("assistant") => {
            accumulator.assistant_message();
            accumulator.assistant_text(&texts().collect::<Vec<_>>().join("\n"));
            for part in parts.iter().filter(|part| part.kind.as_deref() == Some("tool")) {
                let name = part.tool.as_deref().unwrap_or("");
                accumulator.tool_call(name);
                let state = part.state.as_ref();
                if state.is_some_and(|state| matches!(state.status.as_deref(), Some("completed" | "error"))) {
                    accumulator.tool_results(1);
                }
                // Any tool given a file may show the use of a memory naming it.
                let file = state.and_then(|state| state.input.as_ref()).and_then(|i| i.file_path.as_deref());
                accumulator.tool_input(name, file, None, "");
                if EDIT_TOOLS.contains(&name)
                    && let Some(path) = file
                {
                    accumulator.touched(path);
                }
            }
        }
        _ => accumulator.unknown(),
    }
    true
}

/// A prompt `opencode run` stored as a JSON string (`"\"a b\""`), read back; any other text
/// as it is.
fn unquote(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.len() >= 2
        && trimmed.starts_with('"')
        && trimmed.ends_with('"')
        && let Ok(inner) = serde_json::from_str::<String>(trimmed)
    {
        return inner;
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn messages_give_prompts_answers_and_tools_without_what_plugins_added() {
        let session = concat!(
            r#"{"info":{"id":"msg_1","role":"user","time":{"created":1795876231461},"sessionID":"ses_1"},"parts":[{"type":"text","text":"\"Add a retry to the \\\"webhook\\\" sender\"","id":"prt_1"},{"type":"text","text":"Memory recalled for this task","synthetic":true,"id":"prt_2"}]}"#,
            "\n",
            r#"{"info":{"id":"msg_2","role":"assistant","time":{"created":1795876232000,"completed":1795876233000},"path":{"cwd":"/w/proj","root":"/w/proj"}},"parts":[{"type":"step-start"},{"type":"text","text":"I'll edit it."},{"type":"tool","tool":"edit","callID":"c1","state":{"status":"completed","input":{"filePath":"/w/proj/src/send.ts","oldString":"a","newString":"b"},"output":""}},{"type":"tool","tool":"bash","state":{"status":"running","input":{"command":"npm test"}}},{"type":"step-finish"}]}"#,
            "\n",
            r#"{"info":{"id":"msg_3","role":"assistant","time":{"created":1795876291461},"path":{"cwd":"/w/proj"}},"parts":[{"type":"text","text":"Done, the tests pass."}]}"#,
            "\n",
            r#"{"parts":[]}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::OpenCode, "ses_1", session.as_bytes());
        assert_eq!(summary.host, Host::OpenCode);
        assert_eq!((summary.turns, summary.first_prompt.as_str()), (1, "Add a retry to the \"webhook\" sender"));
        assert_eq!((summary.assistant_messages, summary.tool_calls, summary.tool_results), (2, 2, 1));
        assert_eq!(summary.files_touched, vec!["src/send.ts"]);
        assert_eq!((summary.cwd.as_str(), summary.outcome.as_str()), ("/w/proj", "Done, the tests pass."));
        assert_eq!(summary.duration_minutes, 1.0);
        assert_eq!((summary.lines.records, summary.lines.unknown_type), (4, 1));
    }
}
