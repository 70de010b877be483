//! The hook input every host writes on stdin: one JSON object, read within bounds.
//!
//! Hosts send nearly the same object (Claude Code, Codex, Gemini CLI and Qwen Code:
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name`, …; Copilot CLI the same in
//! camelCase, `sessionId`, `transcriptPath`; Cursor: `conversation_id`, `workspace_roots`, …;
//! Cline: `sessionContext.rootSessionId`, `workspaceRoots`, no transcript). brain reads the fields it uses and skips everything else without
//! keeping it. Reading stops at the end of the first JSON value — a host that keeps stdin
//! open after writing its object does not hold the hook — and after [`MAX_INPUT_BYTES`].
//! A field of an unexpected type is ignored, not an error: a host that changes a field's
//! shape costs that field, never the hook.

use std::io::Read;

use serde::Deserialize;

use crate::lenient::{self, ObjectOnly};
use brain_api::error::{BrainError, BrainResult};

/// The most bytes of hook input read (a `UserPromptSubmit` carries the whole prompt).
pub const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// The hook input fields brain uses; everything else is skipped.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default, alias = "sessionId", deserialize_with = "lenient::string")]
    pub session_id: Option<String>,
    /// Cursor's name for the session.
    #[serde(default, deserialize_with = "lenient::string")]
    pub conversation_id: Option<String>,
    #[serde(default, alias = "transcriptPath", deserialize_with = "lenient::string")]
    pub transcript_path: Option<String>,
    #[serde(default, deserialize_with = "lenient::string")]
    pub cwd: Option<String>,
    /// Cursor (and Cline, as `workspaceRoots`): the workspace folders (the first one is the
    /// project).
    #[serde(default, alias = "workspaceRoots", deserialize_with = "lenient::strings")]
    pub workspace_roots: Vec<String>,
    /// Cline: `{rootSessionId}`, the session (its folder's name).
    #[serde(default, alias = "sessionContext", deserialize_with = "session_context")]
    pub session_context: Option<SessionContext>,
    #[serde(default, deserialize_with = "lenient::string")]
    pub hook_event_name: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub source: Option<String>,
    /// UserPromptSubmit / BeforeAgent / beforeSubmitPrompt: what the user typed.
    #[serde(default, deserialize_with = "lenient::string")]
    pub prompt: Option<String>,
}

/// Cline's `sessionContext`.
#[derive(Debug, Default, Deserialize)]
pub struct SessionContext {
    #[serde(default, alias = "rootSessionId", deserialize_with = "lenient::string")]
    pub root_session_id: Option<String>,
}

/// Cline's `sessionContext` when it is an object; any other value is skipped.
fn session_context<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<SessionContext>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Lenient {
        Object(SessionContext),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Lenient::deserialize(deserializer)? {
        Lenient::Object(context) => Some(context),
        Lenient::Other(_) => None,
    })
}

impl HookInput {
    /// The session's id, whichever field the host names it with.
    pub fn session(&self) -> Option<&str> {
        let cline = self.session_context.as_ref().and_then(|context| context.root_session_id.as_deref());
        self.session_id.as_deref().or(self.conversation_id.as_deref()).or(cline).filter(|id| !id.is_empty())
    }

    /// The session's working directory: `cwd`, else the first workspace root.
    pub fn working_dir(&self) -> Option<&str> {
        self.cwd.as_deref().or(self.workspace_roots.first().map(String::as_str)).filter(|dir| !dir.is_empty())
    }
}

/// Parses hook input from bytes (empty or blank input is an empty object). Never panics;
/// what follows the first JSON value is ignored.
pub fn parse_input(bytes: &[u8]) -> BrainResult<HookInput> {
    let mut scanner = ValueEnd::default();
    let end = scanner.feed(bytes, 0).unwrap_or(bytes.len());
    parse_value(&bytes[..end])
}

/// Reads hook input from `reader`: the first JSON value, at most [`MAX_INPUT_BYTES`]; empty
/// or blank input is an empty object. Returns as soon as the value is complete, without
/// waiting for the end of the stream.
pub fn read_input(mut reader: impl Read) -> BrainResult<HookInput> {
    let mut bytes = Vec::new();
    let mut scanner = ValueEnd::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let end = loop {
        if bytes.len() as u64 > MAX_INPUT_BYTES {
            return Err(BrainError::user(format!("hook input is larger than {} MiB", MAX_INPUT_BYTES / (1024 * 1024))));
        }
        let read = match reader.read(&mut chunk) {
            Ok(0) => break None,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(BrainError::user(format!("cannot read hook input: {err}"))),
        };
        let from = bytes.len();
        bytes.extend_from_slice(&chunk[..read]);
        if let Some(end) = scanner.feed(&bytes, from) {
            break Some(end);
        }
    };
    parse_value(&bytes[..end.unwrap_or(bytes.len())])
}

/// The first JSON value of `bytes` as hook input. Input refused for a lone UTF-16 surrogate
/// escape (a prompt cut inside an emoji) is read again with it mended.
fn parse_value(bytes: &[u8]) -> BrainResult<HookInput> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(HookInput::default());
    }
    let parsed = match first_object(bytes) {
        Err(err) => match lenient::mend_lone_surrogates(bytes) {
            // Mended, the input says what else is wrong with it, if anything.
            Some(mended) => first_object(&mended),
            None => Err(err),
        },
        parsed => parsed,
    };
    match parsed {
        Ok(input) => Ok(input.unwrap_or_default()),
        Err(err) if err.is_eof() => Err(BrainError::user("hook input is not hook JSON: it ends mid-value")),
        Err(err) => Err(BrainError::user(format!("hook input is not hook JSON: {err}"))),
    }
}

/// The first JSON value of `bytes`, which must be an object; `None` when there is none.
fn first_object(bytes: &[u8]) -> Result<Option<HookInput>, serde_json::Error> {
    let first = serde_json::Deserializer::from_slice(bytes).into_iter::<ObjectOnly<HookInput>>().next();
    first.transpose().map(|input| input.map(|ObjectOnly(input)| input))
}

/// Finds where the first JSON value of a growing buffer ends, without parsing it: nesting
/// depth outside strings, strings skipped with `memchr`. Only an object or a list is
/// followed to its end; for any other first value (never valid hook input) the end is not
/// looked for, so the whole input is read and the parser says what is wrong — the same
/// answer however the input arrives. This is what lets the hook stop reading a stdin its
/// host keeps open.
#[derive(Default)]
struct ValueEnd {
    started: bool,
    /// The first value is not an object or a list: read to the end.
    scalar: bool,
    depth: u64,
    in_string: bool,
    escaped: bool,
}

impl ValueEnd {
    /// Scans `bytes[from..]` (the bytes before were fed already); the end of the value, if
    /// it is in `bytes`.
    fn feed(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        if self.scalar {
            return None;
        }
        let mut index = from;
        while index < bytes.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    index += 1;
                    continue;
                }
                match memchr::memchr2(b'"', b'\\', &bytes[index..]) {
                    None => return None,
                    Some(offset) => {
                        index += offset;
                        if bytes[index] == b'"' {
                            self.in_string = false;
                        } else {
                            self.escaped = true;
                        }
                        index += 1;
                        continue;
                    }
                }
            }
            let byte = bytes[index];
            index += 1;
            if !self.started {
                if byte.is_ascii_whitespace() {
                    continue;
                }
                self.started = true;
                if !matches!(byte, b'{' | b'[') {
                    self.scalar = true;
                    return None;
                }
                self.depth = 1;
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(index);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_of_every_host_are_read_and_the_rest_skipped() {
        let input = parse_input(
            br#"{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart",
                "source":"startup","model":{"id":"x"},"extra":[1,{"a":[2]}]}"#,
        )
        .unwrap();
        assert_eq!(input.session(), Some("abc"));
        assert_eq!((input.transcript_path.as_deref(), input.working_dir()), (Some("/t.jsonl"), Some("/w")));
        assert_eq!(
            (input.hook_event_name.as_deref(), input.source.as_deref()),
            (Some("SessionStart"), Some("startup"))
        );
        let cursor =
            parse_input(br#"{"conversation_id":"c-1","workspace_roots":["/repo",7],"prompt":"fix it"}"#).unwrap();
        assert_eq!(
            (cursor.session(), cursor.working_dir(), cursor.prompt.as_deref()),
            (Some("c-1"), Some("/repo"), Some("fix it"))
        );
        let cline = parse_input(
            br#"{"taskId":"conv_1","sessionContext":{"rootSessionId":"1795877104670_8p3rs"},"workspaceRoots":["/w/p"]}"#,
        )
        .unwrap();
        assert_eq!((cline.session(), cline.working_dir()), (Some("1795877104670_8p3rs"), Some("/w/p")));
        let odd = parse_input(br#"{"sessionContext":"x","workspaceRoots":3}"#).unwrap();
        assert_eq!((odd.session(), odd.working_dir()), (None, None));
    }

    #[test]
    fn fields_of_another_type_are_ignored_and_other_values_refused() {
        let input = parse_input(br#"{"session_id":42,"cwd":["/a"],"prompt":null,"workspace_roots":"x"}"#).unwrap();
        assert_eq!((input.session(), input.working_dir(), input.prompt.as_deref()), (None, None, None));
        for bad in [
            &b"[\"a\",\"b\"]"[..],
            b"42",
            b"\"text\"",
            b"{\"a\":",
            b"not json",
            b"\xff\xfe",
            b"{\"session_id\":\"\xff\"}",
        ] {
            let err = parse_input(bad).unwrap_err();
            assert!(err.to_string().starts_with("hook input is not hook JSON"), "{bad:?}: {err}");
        }
        assert!(parse_input(b"").unwrap().session().is_none());
        assert!(parse_input(b" \n\t").unwrap().session().is_none());
    }

    #[test]
    fn a_prompt_cut_inside_an_emoji_is_read_with_a_replacement_character() {
        // Node's JSON.stringify of a prompt cut after the first half of 😀.
        let input = parse_input(br#"{"session_id":"s","prompt":"deploy now \ud83d","cwd":"/w"}"#).unwrap();
        assert_eq!(input.prompt.as_deref(), Some("deploy now \u{fffd}"));
        assert_eq!((input.session(), input.working_dir()), (Some("s"), Some("/w")));
        let input = read_input(&br#"{"prompt":"\ude00 and \ud83d\ude00"} {"x":1}"#[..]).unwrap();
        assert_eq!(input.prompt.as_deref(), Some("\u{fffd} and \u{1f600}"));
        // Input broken otherwise too is refused for what else is wrong.
        let err = parse_input(br#"{"prompt":"\ud83d" "#).unwrap_err();
        assert_eq!(err.to_string(), "hook input is not hook JSON: it ends mid-value");
    }

    #[test]
    fn reading_stops_at_the_end_of_the_object() {
        // A reader that fails after the object: the hook must not read that far.
        struct ThenFail(std::io::Cursor<&'static [u8]>);
        impl Read for ThenFail {
            fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
                match self.0.read(buffer)? {
                    0 => Err(std::io::Error::other("stdin still open")),
                    read => Ok(read),
                }
            }
        }
        let input = read_input(ThenFail(std::io::Cursor::new(br#"{"session_id":"s"}"#))).unwrap();
        assert_eq!(input.session(), Some("s"));
        // Braces and quotes inside strings do not end the value; escapes are followed.
        let tricky: &[u8] = br#" {"cwd":"}\"{\\","x":[1,{"c":"]"}],"session_id":"t"} {"session_id":"no"}"#;
        let mut scanner = ValueEnd::default();
        let end = scanner.feed(tricky, 0).unwrap();
        assert_eq!(&tricky[end..], br#" {"session_id":"no"}"#);
        // Fed a byte at a time, as a slow pipe would.
        let mut scanner = ValueEnd::default();
        let ends: Vec<usize> = (0..tricky.len()).filter_map(|at| scanner.feed(&tricky[..=at], at)).take(1).collect();
        assert_eq!(ends, vec![end]);
        let input = read_input(ThenFail(std::io::Cursor::new(&tricky[..end]))).unwrap();
        assert_eq!((input.session(), input.working_dir()), (Some("t"), Some("}\"{\\")));
    }

    /// Hands out `size` bytes per read, as a pipe may.
    struct Chunked<'a> {
        data: &'a [u8],
        size: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            let count = self.size.min(buffer.len()).min(self.data.len());
            buffer[..count].copy_from_slice(&self.data[..count]);
            self.data = &self.data[count..];
            Ok(count)
        }
    }

    #[test]
    fn reading_in_chunks_gives_what_parsing_the_bytes_gives() {
        let inputs: [&[u8]; 10] = [
            br#"{"session_id":"a"} trailing"#,
            b"42 ",
            br#""text" more"#,
            b"  [1, 2] {\"session_id\":\"b\"}",
            br#"{"cwd":"}\"{"} x"#,
            b"{]",
            b"nul",
            b"",
            b"{\"a\":",
            b"\xff{}",
        ];
        for input in inputs {
            let parsed = format!("{:?}", parse_input(input).map_err(|err| err.to_string()));
            for size in 1..=input.len().max(1) {
                let read = format!("{:?}", read_input(Chunked { data: input, size }).map_err(|err| err.to_string()));
                assert_eq!(read, parsed, "{input:?} in chunks of {size}");
            }
        }
    }

    #[test]
    fn oversized_input_is_refused_after_the_bound() {
        let huge = std::io::repeat(b' ').take(MAX_INPUT_BYTES + 10);
        let mut bytes = b"{\"prompt\":\"".to_vec();
        bytes.extend(std::iter::repeat_n(b'a', 64));
        let err = read_input(bytes.as_slice().chain(huge)).unwrap_err();
        assert!(err.to_string().contains("larger than 8 MiB"), "{err}");
    }

    #[test]
    fn deep_nesting_is_skipped_without_recursion() {
        for key in ["x", "session_id", "workspace_roots"] {
            let deep = format!("{{\"{key}\":{}{},\"cwd\":\"/w\"}}", "[".repeat(100_000), "]".repeat(100_000));
            let input = parse_input(deep.as_bytes()).unwrap();
            assert_eq!((input.session(), input.working_dir()), (None, Some("/w")), "{key}");
        }
        let unclosed = "[".repeat(100_000);
        assert!(parse_input(format!("{{\"x\":{unclosed}").as_bytes()).is_err());
    }
}
