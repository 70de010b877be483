//! Small text helpers for generated notes and feed files.

use std::borrow::Cow;

/// Line breaks and tabs become single spaces; runs of whitespace collapse.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\r', '\t']) && !text.contains("  ") {
        return Cow::Borrowed(text.trim());
    }
    Cow::Owned(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// At most `max_chars` characters; a cut ends with `…` (counted in the limit).
pub fn clip(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.len() <= max_chars || text.chars().count() <= max_chars {
        return Cow::Borrowed(text);
    }
    let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    Cow::Owned(format!("{}…", kept.trim_end()))
}

/// Text fit for one markdown table cell: one line, pipes escaped.
pub fn table_cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// Secrets redacted and `<private>` blocks dropped (SPEC §9): for everything the tick
/// writes that an agent reads.
pub fn redacted(text: &str) -> Cow<'_, str> {
    crate::redact::redact_str(text)
}

/// `text` without its `<private>…</private>` blocks, by the redactor's rules (tags
/// case-insensitive, blocks nest and span lines, an unclosed block runs to the end), secrets
/// left as written: vault text is the user's own and is indexed as written, except what the
/// user marked private, which never reaches an agent.
pub fn without_private(text: &str) -> Cow<'_, str> {
    let has_tag = text.as_bytes().windows(8).any(|w| w[0] == b'<' && w[1..].eq_ignore_ascii_case(b"private"));
    if !has_tag {
        return Cow::Borrowed(text);
    }
    let redacted = crate::redact::redact(text);
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for block in redacted.redactions.iter().filter(|r| r.kind == crate::redact::PRIVATE_BLOCK) {
        if block.start >= cursor && block.end <= text.len() {
            out.push_str(&text[cursor..block.start]);
        }
        cursor = cursor.max(block.end);
    }
    out.push_str(text.get(cursor..).unwrap_or_default());
    // A tag re-formed by a removal: fall back to the full redactor, which handles it.
    if out.as_bytes().windows(8).any(|w| w[0] == b'<' && w[1..].eq_ignore_ascii_case(b"private")) {
        return Cow::Owned(redacted.text);
    }
    Cow::Owned(out)
}

/// A YAML double-quoted scalar.
pub fn yaml_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A file-name-safe slug: lowercase ASCII letters and digits, `-` between words.
pub fn slug(text: &str, max_len: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= max_len {
            break;
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() { "signal".to_string() } else { trimmed.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_one_line_with_pipes_escaped_and_clips_count_characters() {
        assert_eq!(table_cell("a | b\nc"), "a \\| b c");
        assert_eq!(clip("ééééé", 3), "éé…");
        assert_eq!(clip("short", 80), "short");
        assert_eq!(slug("Auth Broker / API!", 40), "auth-broker-api");
        assert_eq!(yaml_quoted("a \"b\"\nc"), "\"a \\\"b\\\" c\"");
        assert_eq!(redacted("keep <private>secret</private>me"), "keep me");
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("a <PRIVATE>b\nc</private> d {token}");
        assert_eq!(without_private(&text), format!("a  d {token}"), "secrets stay, private blocks go");
        assert_eq!(without_private("x <private>never closed"), "x ");
        assert!(matches!(without_private("plain"), Cow::Borrowed("plain")));
    }
}
