//! The transform: `<private>` blocks dropped, one prefilter pass, the detectors that may
//! match, overlapping findings merged, offsets mapped back into the input.

use std::borrow::Cow;
use std::ops::Range;

use regex::{Captures, Regex};

use super::checks::bare_aws_secrets;
use super::patterns::{
    DETECTOR_REGEXES, DETECTORS, Finding, PATTERNS, PRIVATE_OPEN_TAG_INDEX, PRIVATE_TAG, PROSE_PASSWORD_DETECTOR,
};
use super::prose::{WordEnds, check_prose_password};
use super::{KINDS, PRIVATE_BLOCK, Redacted, Redaction};

/// Runs the whole transform; `None` when the text is clean (nothing to drop or redact).
pub(super) fn scan(text: &str) -> Option<Redacted> {
    let hits = PATTERNS.matches(text);
    if !hits.matched_any() && bare_aws_secrets(text).next().is_none() && !PROSE_PASSWORD_DETECTOR.may_match(text) {
        return None;
    }
    let mut redactions = Vec::new();
    let mut current = Cow::Borrowed(text);
    let mut map = SourceMap::identity(text.len());
    if hits.matched(PRIVATE_OPEN_TAG_INDEX) {
        // Dropping a block can join `<pri` and `vate>` into a new tag, so repeat until no
        // opening tag is left; each round removes at least one tag.
        while let Some(dropped) = private_blocks(&current) {
            for block in &dropped {
                let (start, end) = (map.input_start(block.start), map.input_end(block.end));
                redactions.push(Redaction { kind: PRIVATE_BLOCK, start, end });
            }
            let kept = complement(&dropped, current.len());
            let mut next = String::with_capacity(current.len());
            for range in &kept {
                next.push_str(&current[range.clone()]);
            }
            map = map.keep(&kept);
            current = Cow::Owned(next);
        }
    }
    let hits = match current {
        Cow::Borrowed(_) => hits,
        Cow::Owned(ref stripped) => PATTERNS.matches(stripped),
    };
    let findings = find_secrets(&current, |index| hits.matched(index + 1));
    if findings.is_empty() && redactions.is_empty() {
        return None;
    }

    let mut out = String::with_capacity(current.len());
    let mut at = 0;
    for finding in &findings {
        out.push_str(&current[at..finding.range.start]);
        out.push_str("[REDACTED:");
        out.push_str(finding.kind);
        out.push(']');
        at = finding.range.end;
        let (start, end) = (map.input_start(finding.range.start), map.input_end(finding.range.end));
        redactions.push(Redaction { kind: finding.kind, start, end });
    }
    out.push_str(&current[at..]);
    // A marker can end a word that hid the start of another secret (`ghp_…TOKEN=value`: the
    // assignment's key began inside the token, so its match overlapped and was not taken):
    // the output is scanned again until nothing more is found, so redacting twice equals
    // redacting once. Each round only adds markers, which later rounds never touch; the
    // bound is a guard. What these rounds find is redacted but not listed in `redactions`
    // (its place in the input is inside an earlier finding's word).
    for _ in 0..MAX_EXTRA_ROUNDS {
        let hits = PATTERNS.matches(&out);
        let again = find_secrets(&out, |index| hits.matched(index + 1));
        if again.is_empty() {
            break;
        }
        let mut next = String::with_capacity(out.len());
        let mut at = 0;
        for finding in &again {
            next.push_str(&out[at..finding.range.start]);
            next.push_str("[REDACTED:");
            next.push_str(finding.kind);
            next.push(']');
            at = finding.range.end;
        }
        next.push_str(&out[at..]);
        out = next;
    }
    redactions.sort_by_key(|redaction| (redaction.start, redaction.end));
    Some(Redacted { text: out, redactions })
}

/// Rounds of redaction over the output after the first (see [`scan`]).
const MAX_EXTRA_ROUNDS: usize = 4;

/// All secrets in `text`, merged so that they do not overlap, ordered by position.
fn find_secrets(text: &str, may_match: impl Fn(usize) -> bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, (detector, regex)) in DETECTORS.iter().zip(DETECTOR_REGEXES.iter()).enumerate() {
        if may_match(index) {
            run_detector(text, regex, detector.check, Resume::AfterFinding, &mut findings);
        }
    }
    // Not regexes in the prefilter: a counted run in its automaton costs every text a third
    // more, and the prose labels about half (see `PROSE_PASSWORD_ASCII_LABEL`).
    findings.extend(bare_aws_secrets(text));
    if PROSE_PASSWORD_DETECTOR.may_match(text) {
        // Its matches end at the separator and a value may hold another label with its own
        // value (`--password "the password "X""`): searched again from the separator.
        let detector = &PROSE_PASSWORD_DETECTOR.detector;
        let mut words = WordEnds::default();
        let check = |text: &str, caps: &Captures<'_>| check_prose_password(text, caps, &mut words);
        run_detector(text, detector, check, Resume::AfterMatch, &mut findings);
    }
    // Markers first, then merging: a finding that touches a marker (a private-key block run
    // on through `[REDACTED:jwt]`) must not take a secret it overlaps down with it.
    merge(outside_markers(text, findings))
}

/// Where a detector searches again after an accepted match.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resume {
    /// After the finding, which may run on past the match or end before it (a value the
    /// check cut inside the pattern's bounded window: the rest of the window may hold the
    /// next secret).
    AfterFinding,
    /// After the match only: the finding is not searched past.
    AfterMatch,
}

/// Every match of one detector's `regex` that its `check` accepts, added to `findings`.
fn run_detector(
    text: &str,
    regex: &Regex,
    mut check: impl FnMut(&str, &Captures<'_>) -> Option<Finding>,
    resume: Resume,
    findings: &mut Vec<Finding>,
) {
    let mut at = 0;
    while let Some(caps) = regex.captures_at(text, at) {
        let whole = caps.get(0).expect("group 0 always participates");
        match check(text, &caps) {
            Some(finding) => {
                let end = if resume == Resume::AfterFinding { finding.range.end } else { whole.end() };
                at = end.max(next_char(text, whole.start()));
                findings.push(finding);
            }
            // A rejected match may hide a real one inside it (`"note": "password=…"`),
            // so search again from the next character rather than from its end.
            None => at = next_char(text, whole.start()),
        }
        if at > text.len() {
            break;
        }
    }
}

/// The findings that touch no earlier redaction marker (`[REDACTED:kind]`): a detector
/// whose match takes a marker for a user name or a value (`curl -u [REDACTED:x]…`) would
/// otherwise redact it again, and redacting twice must equal redacting once. (Text written
/// next to a literal marker on purpose is not a threat the redactor defends against: whoever
/// writes it can leave the secret out.)
fn outside_markers(text: &str, mut findings: Vec<Finding>) -> Vec<Finding> {
    const OPEN: &str = "[REDACTED:";
    if findings.is_empty() || !text.contains(OPEN) {
        return findings;
    }
    let markers: Vec<Range<usize>> = text
        .match_indices(OPEN)
        .filter_map(|(start, _)| {
            let kind_start = start + OPEN.len();
            let kind_len = text[kind_start..].bytes().take_while(|b| b.is_ascii_lowercase() || *b == b'-').count();
            text[kind_start + kind_len..].starts_with(']').then_some(start..kind_start + kind_len + 1)
        })
        .collect();
    findings.retain(|finding| {
        !markers.iter().any(|marker| marker.start < finding.range.end && marker.end > finding.range.start)
    });
    findings
}

/// Merges overlapping findings into their union, under the most specific kind.
fn merge(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by_key(|finding| (finding.range.start, std::cmp::Reverse(finding.range.end)));
    let mut merged: Vec<Finding> = Vec::with_capacity(findings.len());
    for finding in findings {
        if let Some(last) = merged.last_mut()
            && finding.range.start < last.range.end
        {
            last.range.end = last.range.end.max(finding.range.end);
            if kind_rank(finding.kind) < kind_rank(last.kind) {
                last.kind = finding.kind;
            }
            continue;
        }
        merged.push(finding);
    }
    merged
}

pub(super) fn kind_rank(kind: &str) -> usize {
    KINDS.iter().position(|known| *known == kind).unwrap_or(KINDS.len())
}

/// Byte offset of the character after the one starting at `at` (or one past the end).
pub(super) fn next_char(text: &str, at: usize) -> usize {
    at + text[at..].chars().next().map_or(1, char::len_utf8)
}

/// The `<private>` blocks of `text` (tags included), or `None` when there is no opening tag.
/// Blocks nest; an unclosed block runs to the end of the text; a stray closing tag is kept.
fn private_blocks(text: &str) -> Option<Vec<Range<usize>>> {
    let mut blocks = Vec::new();
    let mut depth = 0usize;
    let mut block_start = 0;
    for tag in PRIVATE_TAG.captures_iter(text) {
        let whole = tag.get(0).expect("group 0 always participates");
        let closing = tag.get(1).is_some_and(|slash| !slash.is_empty());
        match (closing, depth) {
            (false, 0) => {
                block_start = whole.start();
                depth = 1;
            }
            (false, _) => depth += 1,
            (true, 0) => {}
            (true, 1) => {
                blocks.push(block_start..whole.end());
                depth = 0;
            }
            (true, _) => depth -= 1,
        }
    }
    if depth > 0 {
        blocks.push(block_start..text.len());
    }
    if blocks.is_empty() { None } else { Some(blocks) }
}

/// The parts of `0..len` not covered by `dropped` (sorted, disjoint ranges).
fn complement(dropped: &[Range<usize>], len: usize) -> Vec<Range<usize>> {
    let mut kept = Vec::with_capacity(dropped.len() + 1);
    let mut at = 0;
    for range in dropped {
        if range.start > at {
            kept.push(at..range.start);
        }
        at = range.end;
    }
    if at < len {
        kept.push(at..len);
    }
    kept
}

/// Maps byte positions in a text with parts cut out back to positions in the input.
struct SourceMap {
    /// Contiguous runs of the derived text, in order, each copied from one place in the input.
    runs: Vec<Run>,
}

#[derive(Clone, Copy)]
struct Run {
    out: usize,
    input: usize,
    len: usize,
}

impl SourceMap {
    fn identity(len: usize) -> SourceMap {
        let runs = if len == 0 { Vec::new() } else { vec![Run { out: 0, input: 0, len }] };
        SourceMap { runs }
    }

    /// The map of the text made by concatenating the `kept` ranges of this map's text.
    fn keep(&self, kept: &[Range<usize>]) -> SourceMap {
        let mut runs = Vec::new();
        let mut out = 0;
        for range in kept {
            for run in &self.runs {
                let low = range.start.max(run.out);
                let high = range.end.min(run.out + run.len);
                if low < high {
                    runs.push(Run {
                        out: out + (low - range.start),
                        input: run.input + (low - run.out),
                        len: high - low,
                    });
                }
            }
            out += range.len();
        }
        SourceMap { runs }
    }

    /// Input position of the character at `pos` in the derived text.
    fn input_start(&self, pos: usize) -> usize {
        for run in &self.runs {
            if pos < run.out + run.len {
                return run.input + pos.saturating_sub(run.out);
            }
        }
        self.runs.last().map_or(pos, |run| run.input + run.len)
    }

    /// Input position just after the character that ends at `pos` in the derived text.
    fn input_end(&self, pos: usize) -> usize {
        if pos == 0 {
            return self.input_start(0);
        }
        for run in &self.runs {
            if pos <= run.out + run.len {
                return run.input + pos.saturating_sub(run.out);
            }
        }
        self.runs.last().map_or(pos, |run| run.input + run.len)
    }
}
