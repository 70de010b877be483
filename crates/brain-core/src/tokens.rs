//! Token counting and truncation (SPEC §3).
//!
//! Three counters: `heuristic` (the default, `ceil(chars / 4)` over Unicode scalar values)
//! and the exact BPE counts `o200k` / `cl100k` from the vocabularies embedded in
//! `tiktoken-rs`. A BPE vocabulary takes 100–300 ms to build, so it is built lazily, once
//! per process, on the first count — never when a heuristic counter is made.
//!
//! BPE counts are not additive: `count(a + b)` may differ from `count(a) + count(b)`.
//! Everything that promises "at most N tokens" here therefore measures the final string.

use std::fmt;
use std::str::FromStr;

/// The marker appended to truncated text (SPEC §3). The agent profile uses
/// [`AGENT_TRUNCATION_MARKER`] instead.
pub const TRUNCATION_MARKER: &str = "… [truncated]";

/// The truncation marker of the agent profile (SPEC §4.3).
pub const AGENT_TRUNCATION_MARKER: &str = "\n... [truncated]";

/// How tokens are counted; config `tokenizer = "heuristic" | "o200k" | "cl100k"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TokenCounter {
    /// `ceil(chars / 4)`, chars = Unicode scalar values. Fast and dependency-free.
    #[default]
    Heuristic,
    /// Exact count under the `o200k_base` BPE vocabulary (GPT-4o and later).
    O200k,
    /// Exact count under the `cl100k_base` BPE vocabulary (GPT-4, GPT-3.5).
    Cl100k,
}

impl TokenCounter {
    /// Every counter, in declaration order.
    pub const ALL: &'static [TokenCounter] = &[TokenCounter::Heuristic, TokenCounter::O200k, TokenCounter::Cl100k];

    /// The config name of the counter.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenCounter::Heuristic => "heuristic",
            TokenCounter::O200k => "o200k",
            TokenCounter::Cl100k => "cl100k",
        }
    }

    /// The number of tokens of `text` under this counter.
    pub fn count(&self, text: &str) -> usize {
        match self {
            TokenCounter::Heuristic => heuristic_count(text),
            // `encode_ordinary` treats special-token text such as `<|endoftext|>` as plain
            // text instead of panicking on it.
            TokenCounter::O200k => tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len(),
            TokenCounter::Cl100k => tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len(),
        }
    }

    /// True when `count(a + b) <= count(a) + count(b)` always holds, so a sum of piece
    /// counts is an upper bound of the count of their concatenation.
    pub fn is_subadditive(&self) -> bool {
        matches!(self, TokenCounter::Heuristic)
    }
}

fn heuristic_count(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

impl FromStr for TokenCounter {
    type Err = String;

    fn from_str(text: &str) -> Result<TokenCounter, String> {
        let lowered = text.trim().to_ascii_lowercase();
        TokenCounter::ALL.iter().copied().find(|counter| counter.as_str() == lowered).ok_or_else(|| {
            let allowed: Vec<&str> = TokenCounter::ALL.iter().map(|counter| counter.as_str()).collect();
            format!("invalid tokenizer {text:?} (allowed: {})", allowed.join(", "))
        })
    }
}

impl fmt::Display for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Cuts `text` so that it fits `max_tokens` under `counter`, marker included.
///
/// - Text that already fits is returned unchanged (no marker).
/// - Otherwise the longest prefix `p` with `count(p + marker) <= max_tokens` is kept, cut at
///   a line boundary when that keeps at least half of what a cut at a character boundary
///   would keep (a line cut drops the newline, so an agent-style marker starting with `\n`
///   lands on its own line), else at the character boundary.
/// - When not even the marker fits, the result is `""`.
///
/// The result is always `<= max_tokens` under `counter`: every candidate is recounted
/// whole, never estimated from parts. Cut points are found by binary search, so the cost
/// is `O(len × log len)` for any counter.
pub fn truncate_to_budget(counter: &TokenCounter, text: &str, max_tokens: usize, marker: &str) -> String {
    if counter.count(text) <= max_tokens {
        return text.to_string();
    }
    fit_prefix(counter, text, max_tokens, |prefix, out| {
        out.push_str(prefix);
        out.push_str(marker);
    })
    .unwrap_or_default()
}

/// The general form of truncation used by the assembler: finds the longest prefix `p` of
/// `text` such that `count(build(p)) <= max_tokens`, preferring line boundaries as in
/// [`truncate_to_budget`], and returns `build(p)`. `None` when even `build("")` does not
/// fit. `build` writes its candidate into the given (cleared) buffer.
pub(crate) fn fit_prefix(
    counter: &TokenCounter,
    text: &str,
    max_tokens: usize,
    build: impl Fn(&str, &mut String),
) -> Option<String> {
    let mut candidate = String::with_capacity(text.len().min(max_tokens.saturating_mul(8)) + 64);
    let mut fits = |end: usize| {
        candidate.clear();
        build(&text[..end], &mut candidate);
        counter.count(&candidate) <= max_tokens
    };
    if !fits(0) {
        return None;
    }
    // Invariant: `fits(low)`; everything we learn about `high` is that it does not fit
    // (or was never tried). A non-monotone counter only makes the search settle on some
    // fitting point, never on a failing one.
    let mut low = 0;
    let mut high = upper_search_bound(counter, text, max_tokens);
    if high > low && fits(high) {
        low = high;
    } else {
        while high - low > 1 {
            let mut middle = floor_char_boundary(text, low + (high - low) / 2);
            if middle <= low {
                middle = ceil_char_boundary(text, low + 1);
            }
            if middle >= high {
                break;
            }
            if fits(middle) {
                low = middle;
            } else {
                high = middle;
            }
        }
    }
    let char_cut = low;
    // Prefer the last line boundary inside the character cut when it keeps enough text
    // (a character cut that ends exactly at a line end already is one).
    let mut cut = char_cut;
    let ends_a_line = char_cut == text.len() || text[char_cut..].starts_with(['\n', '\r']);
    if ends_a_line {
        let without_carriage_return = text[..char_cut].trim_end_matches('\r').len();
        if without_carriage_return < char_cut && fits(without_carriage_return) {
            cut = without_carriage_return;
        }
    } else if let Some(newline) = text[..char_cut].rfind('\n') {
        let line_cut = text[..newline].trim_end_matches('\r').len();
        if line_cut * 2 >= char_cut && fits(line_cut) {
            cut = line_cut;
        }
    }
    candidate.clear();
    build(&text[..cut], &mut candidate);
    Some(candidate)
}

/// A byte offset beyond which no prefix can fit: one token never covers less than one
/// character under the heuristic (4 chars per token) nor less than one byte under BPE,
/// so `max_tokens × 4` characters bound the search. Keeps the binary search short when a
/// 20,000-character text is cut to a few dozen tokens.
fn upper_search_bound(counter: &TokenCounter, text: &str, max_tokens: usize) -> usize {
    let chars_bound = match counter {
        TokenCounter::Heuristic => max_tokens.saturating_mul(4),
        // The longest BPE tokens are long runs of spaces or dashes (well below 256 bytes).
        TokenCounter::O200k | TokenCounter::Cl100k => max_tokens.saturating_mul(256),
    };
    match text.char_indices().nth(chars_bound) {
        Some((offset, _)) => offset,
        None => text.len(),
    }
}

/// The smallest char boundary `>= index`.
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index;
    while index < text.len() && !text.is_char_boundary(index) {
        index += 1;
    }
    index.min(text.len())
}

/// The largest char boundary `<= index` (stable replacement for `str::floor_char_boundary`).
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut index = index;
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_heuristic_counts_unicode_scalar_values_rounded_up() {
        let counter = TokenCounter::Heuristic;
        let cases = [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("ééééé", 2), ("🦀🦀🦀🦀", 1), ("12345678", 2)];
        for (text, expected) in cases {
            assert_eq!(counter.count(text), expected, "{text:?}");
        }
    }

    #[test]
    fn bpe_counters_count_exactly_and_treat_special_tokens_as_text() {
        assert_eq!(TokenCounter::O200k.count("hello world"), 2);
        assert_eq!(TokenCounter::Cl100k.count("hello world"), 2);
        assert!(TokenCounter::O200k.count("<|endoftext|>") > 1);
        assert!(TokenCounter::Cl100k.count("<|endoftext|> <|fim_prefix|>") > 2);
        assert_eq!(TokenCounter::O200k.count(""), 0);
    }

    #[test]
    fn counters_parse_from_their_config_names_and_name_the_allowed_values() {
        assert_eq!("heuristic".parse::<TokenCounter>(), Ok(TokenCounter::Heuristic));
        assert_eq!(" O200K ".parse::<TokenCounter>(), Ok(TokenCounter::O200k));
        assert_eq!("cl100k".parse::<TokenCounter>(), Ok(TokenCounter::Cl100k));
        assert_eq!(
            "gpt2".parse::<TokenCounter>(),
            Err("invalid tokenizer \"gpt2\" (allowed: heuristic, o200k, cl100k)".to_string())
        );
        for counter in TokenCounter::ALL {
            assert_eq!(counter.to_string().parse::<TokenCounter>(), Ok(*counter));
        }
    }

    #[test]
    fn text_that_fits_is_returned_unchanged() {
        let text = "line one\nline two";
        assert_eq!(truncate_to_budget(&TokenCounter::Heuristic, text, 5, TRUNCATION_MARKER), text);
    }

    #[test]
    fn truncation_cuts_at_a_line_boundary_when_one_is_close() {
        let text = "first line here\nsecond line here\nthird line is long";
        // 12 tokens = 48 chars; the marker takes 13, leaving 35: the cut backs off to the line end.
        let cut = truncate_to_budget(&TokenCounter::Heuristic, text, 12, TRUNCATION_MARKER);
        assert_eq!(cut, "first line here\nsecond line here… [truncated]");
    }

    #[test]
    fn truncation_cuts_inside_a_line_when_no_line_boundary_keeps_enough() {
        let text = "x\nabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
        let cut = truncate_to_budget(&TokenCounter::Heuristic, text, 8, TRUNCATION_MARKER);
        assert_eq!(cut, "x\nabcdefghijklmnopq… [truncated]");
        assert_eq!(TokenCounter::Heuristic.count(&cut), 8);
    }

    #[test]
    fn the_agent_marker_lands_on_its_own_line() {
        let text = "alpha\nbeta\ngamma\ndelta\nepsilon";
        let cut = truncate_to_budget(&TokenCounter::Heuristic, text, 7, AGENT_TRUNCATION_MARKER);
        assert_eq!(cut, "alpha\nbeta\n... [truncated]");
    }

    #[test]
    fn truncation_returns_nothing_when_the_marker_alone_does_not_fit() {
        let text = "a fairly long text that needs cutting";
        assert_eq!(truncate_to_budget(&TokenCounter::Heuristic, text, 3, TRUNCATION_MARKER), "");
        assert_eq!(truncate_to_budget(&TokenCounter::Heuristic, text, 0, TRUNCATION_MARKER), "");
        assert_eq!(truncate_to_budget(&TokenCounter::Heuristic, text, 4, TRUNCATION_MARKER), "a f… [truncated]");
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let text = "é".repeat(40) + "🦀".repeat(40).as_str();
        for budget in 0..30 {
            let cut = truncate_to_budget(&TokenCounter::Heuristic, &text, budget, TRUNCATION_MARKER);
            assert!(TokenCounter::Heuristic.count(&cut) <= budget);
            let cut = truncate_to_budget(&TokenCounter::O200k, &text, budget, TRUNCATION_MARKER);
            assert!(TokenCounter::O200k.count(&cut) <= budget, "{budget}: {cut:?}");
        }
    }

    #[test]
    fn truncating_a_maximal_item_is_fast_and_keeps_most_of_the_budget() {
        let text = "word ".repeat(4000) + "\n" + "tail ".repeat(1000).as_str();
        let cut = truncate_to_budget(&TokenCounter::O200k, &text, 1000, TRUNCATION_MARKER);
        let tokens = TokenCounter::O200k.count(&cut);
        assert!((990..=1000).contains(&tokens), "{tokens}");
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z]{1,12}",
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            "[ -~]{1,8}",
            "[é日本🦀ß]{1,4}",
            Just("<|endoftext|>".to_string()),
            Just("    ".to_string()),
        ];
        proptest::collection::vec(piece, 0..200).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn heuristic_truncation_never_exceeds_the_budget(text in text_strategy(), budget in 0usize..200) {
            let cut = truncate_to_budget(&TokenCounter::Heuristic, &text, budget, TRUNCATION_MARKER);
            prop_assert!(TokenCounter::Heuristic.count(&cut) <= budget);
            prop_assert!(cut == text || cut.is_empty() || cut.ends_with(TRUNCATION_MARKER));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn o200k_truncation_never_exceeds_the_budget(text in text_strategy(), budget in 0usize..120) {
            let cut = truncate_to_budget(&TokenCounter::O200k, &text, budget, AGENT_TRUNCATION_MARKER);
            prop_assert!(TokenCounter::O200k.count(&cut) <= budget);
            prop_assert!(cut == text || cut.is_empty() || cut.ends_with(AGENT_TRUNCATION_MARKER));
        }
    }
}
