//! GitHub Copilot CLI session events (`$COPILOT_HOME/session-state/<session>/events.jsonl`,
//! `~/.copilot` by default): one event a line, `{type, data, id, timestamp, parentId}`.
//!
//! `session.start` names the working directory and branch (`data.context`); `user.message`
//! is a prompt (`data.content` is what the user typed; `transformedContent`, which holds what
//! hooks added, is not read); `assistant.message` is an answer (`data.content`) with its
//! `toolRequests` (`create` and `edit` name the file they change in `path`);
//! `tool.execution_complete` is a tool's result. Hook runs, turn marks, usage records and the
//! other events carry nothing capture needs.

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// Tools whose `path` argument names a file the session changed.
const EDIT_TOOLS: &[&str] = &["create", "edit"];

#[derive(Default, Deserialize)]
#[serde(default)]
struct Record {
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    timestamp: Option<String>,
    data: Option<Data>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Data {
    #[serde(deserialize_with = "lenient::string")]
    content: Option<String>,
    #[serde(rename = "toolRequests")]
    tool_requests: Option<Vec<ToolRequest>>,
    context: Option<SessionContext>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct SessionContext {
    #[serde(deserialize_with = "lenient::string")]
    cwd: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    branch: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ToolRequest {
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    arguments: Option<Arguments>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Arguments {
    #[serde(deserialize_with = "lenient::string")]
    path: Option<String>,
}

/// Feeds one line (trimmed, not empty) to `accumulator`; false when it is not a JSON object.
pub(super) fn line(accumulator: &mut Accumulator, line: &[u8]) -> bool {
    let Ok(ObjectOnly(record)) = serde_json::from_slice::<ObjectOnly<Record>>(line) else {
        return false;
    };
    let data = record.data.unwrap_or_default();
    let context = data.context.unwrap_or_default();
    accumulator.observe(record.timestamp.as_deref(), context.cwd.as_deref(), context.branch.as_deref());
    match record.kind.as_deref() {
        Some("user.message") => accumulator.prompt(data.content.as_deref().unwrap_or("")),
        Some("assistant.message") => {
            accumulator.assistant_message();
            accumulator.assistant_text(data.content.as_deref().unwrap_or(""));
            for request in data.tool_requests.into_iter().flatten() {
                let name = request.name.as_deref().unwrap_or("");
                accumulator.tool_call(name);
                if EDIT_TOOLS.contains(&name)
                    && let Some(path) = request.arguments.as_ref().and_then(|arguments| arguments.path.as_deref())
                {
                    accumulator.touched(path);
                }
            }
        }
        Some("tool.execution_complete") => accumulator.tool_results(1),
        Some(_) => {}
        None => accumulator.unknown(),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn session_events_give_prompts_answers_and_tools() {
        let events = concat!(
            r#"{"type":"session.start","data":{"sessionId":"07ab","copilotVersion":"1.0.102","startTime":"2026-11-28T14:21:44.491Z","context":{"cwd":"/w/proj","gitRoot":"/w/proj","branch":"main"}},"id":"e1","timestamp":"2026-11-28T14:21:44.521Z","parentId":null}"#,
            "\n",
            r##"{"type":"hook.end","data":{"hookType":"sessionStart","output":{"additionalContext":"# Working memory"}},"id":"e2","timestamp":"2026-11-28T14:21:44.786Z"}"##,
            "\n",
            r#"{"type":"user.message","data":{"content":"Add a retry to the webhook sender","transformedContent":"<system_reminder>recalled</system_reminder>"},"id":"e3","timestamp":"2026-11-28T14:21:44.791Z"}"#,
            "\n",
            r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c1","name":"edit","arguments":{"path":"/w/proj/src/send.ts"}},{"toolCallId":"c2","name":"bash","arguments":{"command":"npm test"}}]},"id":"e4","timestamp":"2026-11-28T14:21:44.836Z"}"#,
            "\n",
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true},"id":"e5","timestamp":"2026-11-28T14:21:44.929Z"}"#,
            "\n",
            r#"{"type":"assistant.message","data":{"content":"Done, the tests pass.","toolRequests":[]},"id":"e6","timestamp":"2026-11-28T14:23:44.836Z"}"#,
            "\n",
            r#"{"data":{}}"#,
            "\n",
        );
        let summary = summarize_bytes(Host::Copilot, "07ab", events.as_bytes());
        assert_eq!(summary.host, Host::Copilot);
        assert_eq!((summary.turns, summary.first_prompt.as_str()), (1, "Add a retry to the webhook sender"));
        assert_eq!((summary.assistant_messages, summary.tool_calls, summary.tool_results), (2, 2, 1));
        assert_eq!(summary.files_touched, vec!["src/send.ts"]);
        assert_eq!((summary.cwd.as_str(), summary.git_branch.as_str()), ("/w/proj", "main"));
        assert_eq!(summary.outcome, "Done, the tests pass.");
        assert_eq!((summary.lines.records, summary.lines.unknown_type), (7, 1));
    }
}
