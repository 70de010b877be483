//! Stdout is data only: every command prints through `Out`, which treats a closed pipe
//! (`brain list | head`) as success.
//!
//! Text never carries a raw control character to the terminal: an item's title or content
//! may hold ESC, OSC or NUL sequences (pasted, imported, written by an agent) that would
//! recolour, retitle or clear the reader's terminal. Every output shows them as JSON-style
//! escapes (`\u001b`, `\u009b`): in human text a visible mark, in JSON (where `serde_json`
//! escapes C0 itself but leaves DEL and the C1 range raw) the same value, so one rule serves
//! both, and a hook's JSON payload stays valid JSON. The stored data is unchanged.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;

/// Buffered stdout that exits quietly when the reader goes away.
pub struct Out {
    stdout: io::BufWriter<io::StdoutLock<'static>>,
}

impl Default for Out {
    fn default() -> Self {
        Out::new()
    }
}

impl Out {
    pub fn new() -> Out {
        Out { stdout: io::BufWriter::new(io::stdout().lock()) }
    }

    /// Writes one line (or a JSON text), control characters escaped.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = escape_controls(text.as_ref());
        let result = self.stdout.write_all(text.as_bytes()).and_then(|()| self.stdout.write_all(b"\n"));
        handle(result);
    }

    /// Writes text (a document, several lines), control characters escaped.
    pub fn text(&mut self, text: impl AsRef<str>) {
        handle(self.stdout.write_all(escape_controls(text.as_ref()).as_bytes()));
    }

    /// Writes a value as pretty JSON followed by a newline.
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) {
        let text = serde_json::to_string_pretty(value).unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"));
        self.line(text);
    }

    /// Writes a value as one compact JSON line (JSONL).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) {
        let text = serde_json::to_string(value).unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"));
        self.line(text);
    }

    pub fn flush(&mut self) {
        handle(self.stdout.flush());
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.stdout.flush();
    }
}

fn handle(result: io::Result<()>) {
    if let Err(err) = result {
        if err.kind() == io::ErrorKind::BrokenPipe {
            // The reader is gone (`| head`): not an error (SPEC §7.1).
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {err}");
        std::process::exit(2);
    }
}

/// Whether a terminal would act on `c` rather than show it: C0 controls but tab and line
/// feed, DEL, and the C1 range (U+0080–U+009F: CSI and OSC in their 8-bit forms).
fn is_terminal_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

/// `text` with every control character a terminal would act on written as a JSON escape
/// (`\u001b`, `\u0000`, `\u009b`); a carriage return is kept before a line feed (CRLF
/// text). Inside a JSON string the escape decodes to the same character, so a JSON text
/// stays valid and equal. Borrows when there is none, the common case.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let escaped =
        |(index, c): (usize, char)| is_terminal_control(c) && !(c == '\r' && text[index + 1..].starts_with('\n'));
    if !text.char_indices().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (index, c) in text.char_indices() {
        if escaped((index, c)) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A name (a path, a file's label) for one line of human text: every control character —
/// line feed and tab included, which [`escape_controls`] keeps for text — written as a JSON
/// escape, so a file named `x\nINJECTED: ok.mdc` cannot forge a line of its own.
pub fn escape_name(name: &str) -> Cow<'_, str> {
    let escaped = |c: char| c.is_control() || ('\u{80}'..='\u{9f}').contains(&c);
    if !name.chars().any(escaped) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 16);
    for c in name.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_to_one_line() {
        assert_eq!(escape_name("x\nINJECTED: ok.mdc"), "x\\u000aINJECTED: ok.mdc");
        assert_eq!(escape_name("a\tb\r\u{1b}c\u{9b}"), "a\\u0009b\\u000d\\u001bc\\u009b");
        assert!(matches!(escape_name("plain/ünï.md"), Cow::Borrowed(_)));
    }

    #[test]
    fn terminal_controls_are_escaped_and_plain_text_is_borrowed() {
        let title = "ok \u{1b}]0;pwned\u{7}\u{1b}[2J\u{0}\u{9b}31m tab\tcrlf\r\nlone\rend";
        assert_eq!(
            escape_controls(title),
            "ok \\u001b]0;pwned\\u0007\\u001b[2J\\u0000\\u009b31m tab\tcrlf\r\nlone\\u000dend"
        );
        assert!(matches!(escape_controls("plain — ünïcode\n\ttext"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_valid_and_equal_and_loses_raw_del_and_c1() {
        let value = serde_json::json!({"title": "a\u{1b}b\u{7f}c\u{9d}d\r\n"});
        for json in [serde_json::to_string(&value).unwrap(), serde_json::to_string_pretty(&value).unwrap()] {
            let text = escape_controls(&json).into_owned();
            assert!(!text.chars().any(is_terminal_control), "{text:?}");
            assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
        }
    }
}
