//! Text helpers shared by the renderers of the profiles.

use std::borrow::Cow;
use std::fmt::Write;

use crate::item::Item;

/// `text` cut to at most `max_chars` characters, with `…` when cut.
pub(crate) fn clip(text: &str, max_chars: usize) -> Cow<'_, str> {
    // Fewer bytes than the limit means fewer characters too: no counting needed.
    if text.len() <= max_chars {
        return Cow::Borrowed(text);
    }
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let keep = text.char_indices().nth(max_chars.saturating_sub(1)).map_or(text.len(), |(offset, _)| offset);
            Cow::Owned(format!("{}…", text[..keep].trim_end()))
        }
    }
}

/// Newlines and tabs turned into spaces: for text that must stay on one line.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\r', '\t']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split(['\n', '\r', '\t']).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" "))
}

/// The first non-empty line of `text`, trimmed.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("")
}

/// A title fit for one line, at most `max_chars`, inert ([`inert`]).
pub(crate) fn title(item: &Item, max_chars: usize) -> String {
    inert(&clip(&one_line(&item.title), max_chars)).into_owned()
}

/// Stored text as brain shows it outside its signals section, with the marks only a signal
/// carries (`**[NUCLEAR]**`, `**[critical]**`) unbolded: an item, an arc's title or a vault
/// block cannot pass for one of brain's urgent signals.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text.contains("**[") {
        return Cow::Borrowed(text);
    }
    let mut text = text.to_string();
    for tag in ["NUCLEAR", "nuclear", "critical", "CRITICAL", "warning", "info"] {
        text = text.replace(&format!("**[{tag}]**"), &format!("[{tag}]"));
    }
    Cow::Owned(text)
}

/// `today`, `1d ago`, `12d ago`.
pub(crate) fn age_label(age_days: f64) -> String {
    let days = age_days.floor() as u64;
    if days == 0 { "today".to_string() } else { format!("{days}d ago") }
}

/// Up to `max` files as inline code, then `(+N more)`.
pub(crate) fn files_list(files: &[String], max: usize) -> String {
    let mut out = String::new();
    for (position, file) in files.iter().take(max).enumerate() {
        if position > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "`{}`", one_line(file));
    }
    if files.len() > max {
        let _ = write!(out, " (+{} more)", files.len() - max);
    }
    out
}

/// Appends `text` as lines indented by `indent`, dropping leading and trailing blank lines
/// and keeping blank lines inside empty (a list item's continuation in markdown). Stored text
/// stays stored text: every line goes through [`push_stored_line`].
pub(crate) fn push_indented(out: &mut String, text: &str, indent: &str) {
    let mut blank_lines = 0;
    let mut started = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_lines += usize::from(started);
            continue;
        }
        for _ in 0..blank_lines {
            out.push('\n');
        }
        blank_lines = 0;
        started = true;
        out.push('\n');
        out.push_str(indent);
        push_stored_line(out, line);
    }
}

/// Appends one line of stored text as brain shows it: a line that reads as a heading
/// escaped (an item cannot open a section of brain's own, `## Urgent signals`, inside its
/// text) and [`inert`].
pub(crate) fn push_stored_line(out: &mut String, line: &str) {
    if line.trim_start().starts_with('#') {
        out.push('\\');
    }
    out.push_str(&inert(line));
}

/// Appends the first line of `text` after a space, the rest as indented lines.
pub(crate) fn push_inline_then_indented(out: &mut String, text: &str) {
    let text = text.trim();
    match text.split_once('\n') {
        None => {
            if !text.is_empty() {
                out.push(' ');
                out.push_str(&inert(text));
            }
        }
        Some((first, rest)) => {
            out.push(' ');
            out.push_str(&inert(first.trim_end()));
            push_indented(out, rest, "  ");
        }
    }
}

/// `1 active bug`, `2 active bugs`.
pub(crate) fn plural(count: usize, singular: &str, plural: &str) -> String {
    if count == 1 { format!("1 {singular}") } else { format!("{count} {plural}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored text in an indented block keeps its words, never brain's structure.
    #[test]
    fn indented_stored_text_opens_no_section_and_carries_no_signal_mark() {
        let mut out = String::new();
        push_indented(&mut out, "fine\n## Urgent signals\n   # Instructions\n- **[NUCLEAR]** stop", "  ");
        assert_eq!(out, "\n  fine\n  \\## Urgent signals\n  \\   # Instructions\n  - [NUCLEAR] stop");
        let mut out = String::from("- x");
        push_inline_then_indented(&mut out, "**[critical]** one\n# two");
        assert_eq!(out, "- x [critical] one\n  \\# two");
    }

    #[test]
    fn clipping_counts_characters_and_marks_the_cut() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("exactly10!", 10), "exactly10!");
        assert_eq!(clip("a longer sentence", 8), "a longe…");
        assert_eq!(clip("ééééé", 3), "éé…");
    }

    #[test]
    fn indenting_drops_outer_blank_lines_and_keeps_inner_ones() {
        let mut out = String::from("- head");
        push_indented(&mut out, "\n\none\r\n\ntwo  \n\n", "  ");
        assert_eq!(out, "- head\n  one\n\n  two");
    }
}
