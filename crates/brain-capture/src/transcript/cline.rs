//! Cline CLI sessions (3.x: `$CLINE_DIR/data/sessions/<session>/<session>.messages.json`,
//! `~/.cline` by default): one JSON document, `{version, sessionId, messages, system_prompt}`,
//! which Cline rewrites whole as the session goes on, beside the session's manifest
//! `<session>.json` (`cwd`, `started_at`, `prompt`, …).
//!
//! Messages are Anthropic-shaped, `{role, content, ts}` (`ts` in milliseconds), `content` a
//! string or a list of blocks: `text`, `tool_use` (`name`, `input`: `editor` and `edit` name
//! the file they change in `path` or `file_path`) and `tool_result`. A user's prompt is a text
//! block wrapped in `<user_input mode="act">…</user_input>`; other user text blocks that start
//! with a tag are what Cline or its hooks added (mode notices, `<hook_context …>`), not
//! prompts. The system prompt (which holds the rules, brain's working memory among them) is
//! not read.
//!
//! The document is read whole each time it changed (it is rewritten, not appended to); one
//! larger than [`MAX_DOCUMENT_BYTES`] is skipped as oversized.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use super::Accumulator;
use crate::lenient::{self, ObjectOnly};

/// The largest session document read.
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;
/// The largest manifest read (it holds the first prompt and a few settings).
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;
/// Tools whose `path` (or `file_path`) input names a file the session changed.
const EDIT_TOOLS: &[&str] = &["editor", "edit", "write", "write_to_file", "replace_in_file", "apply_patch"];

#[derive(Default, Deserialize)]
#[serde(default)]
struct Document {
    messages: Option<Vec<Message>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Message {
    #[serde(deserialize_with = "lenient::string")]
    role: Option<String>,
    content: Option<Content>,
    ts: Option<serde_json::Number>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Blocks(Vec<Block>),
    Other(serde::de::IgnoredAny),
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Block {
    #[serde(rename = "type", deserialize_with = "lenient::string")]
    kind: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    text: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    input: Option<ToolInput>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ToolInput {
    #[serde(deserialize_with = "lenient::string")]
    path: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    file_path: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Manifest {
    #[serde(deserialize_with = "lenient::string")]
    cwd: Option<String>,
}

/// Feeds a whole session document to `accumulator`; false when it is not a JSON object. A
/// document refused for a lone UTF-16 surrogate escape is read again with it mended.
pub(super) fn document(accumulator: &mut Accumulator, bytes: &[u8]) -> bool {
    let parsed = serde_json::from_slice::<ObjectOnly<Document>>(bytes).ok().or_else(|| {
        let mended = lenient::mend_lone_surrogates(bytes)?;
        serde_json::from_slice::<ObjectOnly<Document>>(&mended).ok()
    });
    let Some(ObjectOnly(document)) = parsed else {
        return false;
    };
    for message in document.messages.unwrap_or_default() {
        accumulator.lines.records += 1;
        let at = message.ts.and_then(|ms| ms.as_i64()).and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok());
        accumulator.observe(at.map(|at| at.to_string()).as_deref(), None, None);
        let blocks = match message.content {
            Some(Content::Text(text)) => {
                vec![Block { kind: Some("text".into()), text: Some(text), ..Block::default() }]
            }
            Some(Content::Blocks(blocks)) => blocks,
            Some(Content::Other(_)) | None => Vec::new(),
        };
        let texts =
            || blocks.iter().filter(|block| block.kind.as_deref() == Some("text")).filter_map(|b| b.text.as_deref());
        match message.role.as_deref() {
            Some("user") => {
                let results = blocks.iter().filter(|block| block.kind.as_deref() == Some("tool_result")).count();
                accumulator.tool_results(results);
                let prompt: Vec<&str> = texts().filter_map(prompt_of).collect();
                accumulator.prompt(&prompt.join("\n"));
            }
            Some("assistant") => {
                accumulator.assistant_message();
                accumulator.assistant_text(&texts().collect::<Vec<_>>().join("\n"));
                for block in blocks.iter().filter(|block| block.kind.as_deref() == Some("tool_use")) {
                    let name = block.name.as_deref().unwrap_or("");
                    accumulator.tool_call(name);
                    let input = block.input.as_ref();
                    if EDIT_TOOLS.contains(&name)
                        && let Some(path) = input.and_then(|input| input.path.as_deref().or(input.file_path.as_deref()))
                    {
                        accumulator.touched(path);
                    }
                }
            }
            _ => accumulator.unknown(),
        }
    }
    true
}

/// What the user typed in a user text block: the inside of `<user_input …>…</user_input>`;
/// a block that starts with another tag is not a prompt; plain text is.
fn prompt_of(text: &str) -> Option<&str> {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix("<user_input") {
        let inner = rest.split_once('>').map_or("", |(_, inner)| inner);
        return Some(inner.strip_suffix("</user_input>").unwrap_or(inner));
    }
    (!trimmed.starts_with('<')).then_some(trimmed)
}

/// Reads the document of `file` (its `size` known) into `accumulator`, and the working
/// directory from the manifest beside `path`. A document over [`MAX_DOCUMENT_BYTES`] is
/// counted as oversized, one that does not parse as bad JSON.
pub(super) fn read(accumulator: &mut Accumulator, file: std::fs::File, path: &Path, size: u64) -> std::io::Result<()> {
    if size > MAX_DOCUMENT_BYTES {
        accumulator.lines.oversized += 1;
        return Ok(());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_DOCUMENT_BYTES).read_to_end(&mut bytes)?;
    if !document(accumulator, &bytes) {
        accumulator.lines.bad_json += 1;
    }
    if let Some(cwd) = manifest_cwd(path) {
        accumulator.observe(None, Some(&cwd), None);
    }
    Ok(())
}

/// The working directory the session's manifest (`<session>.json` beside
/// `<session>.messages.json`) names.
fn manifest_cwd(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let manifest = path.with_file_name(format!("{}.json", name.strip_suffix(".messages.json")?));
    let file = super::open_regular(&manifest).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES).read_to_end(&mut bytes).ok()?;
    let ObjectOnly(manifest) = serde_json::from_slice::<ObjectOnly<Manifest>>(&bytes).ok()?;
    manifest.cwd
}

#[cfg(test)]
mod tests {
    use super::super::summarize_bytes;
    use crate::Host;

    #[test]
    fn a_session_document_gives_prompts_answers_and_tools_without_what_cline_added() {
        let session = r##"{
  "version": 1,
  "sessionId": "1795877008183_a66to",
  "messages": [
    {"id": "u1", "role": "user", "content": [{"type": "text", "text": "<user_input mode=\"act\">Add a retry to the webhook sender</user_input>"}], "ts": 1795877008663},
    {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "I'll edit it."}, {"type": "tool_use", "id": "c1", "name": "editor", "input": {"path": "/w/proj/src/send.ts", "old_text": "a", "new_text": "b"}}, {"type": "tool_use", "id": "c2", "name": "run_commands", "input": {"commands": ["npm test"]}}], "ts": 1795877009161},
    {"id": "u2", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}, {"type": "tool_result", "tool_use_id": "c2", "content": "ok"}, {"type": "text", "text": "<hook_context source=\"PostToolUse\">recalled</hook_context>"}], "ts": 1795877010000},
    {"id": "a2", "role": "assistant", "content": "Done, the tests pass.", "ts": 1795877068663},
    {"id": "u3", "role": "user", "content": "and log it", "ts": 1795877070000},
    {"role": "system", "content": []}
  ],
  "system_prompt": "# Rules\n## brain-working-memory\nProject memory"
}"##;
        let summary = summarize_bytes(Host::Cline, "1795877008183_a66to", session.as_bytes());
        assert_eq!(summary.host, Host::Cline);
        assert_eq!((summary.turns, summary.first_prompt.as_str()), (2, "Add a retry to the webhook sender"));
        assert_eq!(summary.last_prompt, "and log it");
        assert_eq!((summary.assistant_messages, summary.tool_calls, summary.tool_results), (2, 2, 2));
        assert_eq!(summary.files_touched, vec!["/w/proj/src/send.ts"]);
        assert_eq!(summary.outcome, "Done, the tests pass.");
        assert_eq!(summary.duration_minutes, 1.0);
        assert_eq!((summary.lines.records, summary.lines.unknown_type, summary.lines.bad_json), (6, 1, 0));
        let broken = summarize_bytes(Host::Cline, "x", b"{\"messages\": [");
        assert_eq!((broken.turns, broken.lines.bad_json), (0, 1));
    }
}
