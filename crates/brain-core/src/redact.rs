//! Redaction of secrets before storage (SPEC §9).
//!
//! [`redact`] rewrites captured or agent-written text so that no credential reaches the
//! store: every secret becomes `[REDACTED:<kind>]` and everything inside
//! `<private>…</private>` is dropped. [`redact_str`] is the same transform for callers that
//! only need the text; it borrows the input when nothing had to change, which is the common
//! case.
//!
//! # What is redacted
//!
//! Text inside `<private>…</private>` (tags case-insensitive, blocks may span lines and
//! nest) is dropped together with its tags. An unclosed `<private>` drops everything up to
//! the end of the text: when in doubt, forget. A stray `</private>` is left alone.
//!
//! Then, in the remaining text, each finding below is replaced by `[REDACTED:<kind>]`
//! (kinds are listed in [`KINDS`], most specific first):
//!
//! - `private-key`: PEM blocks `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE
//!   KEY-----` (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP `… PRIVATE KEY BLOCK`), also with
//!   JSON-escaped newlines; without its END line, the header and the base64 lines after it
//!   (a key pasted in part). A header alone (`starts_with("-----BEGIN …")`) is a mention.
//! - `jwt`: `eyJ….eyJ….<signature>` (base64url JSON header and payload).
//! - `anthropic-key` (`sk-ant-…`), `openai-key` (`sk-…`, `sk-proj-…`; the body must mix
//!   upper case, lower case and digits, so `sk-learn` is prose).
//! - `github-token` (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), `gitlab-token`
//!   (`glpat-`), `npm-token` (`npm_`), `huggingface-token` (`hf_`).
//! - `aws-access-key` (`AKIA`/`ASIA` + 16), `aws-secret-key` (40 characters assigned to a key
//!   naming both "aws" and "secret").
//! - `slack-webhook` (`https://hooks.slack.com/services/…`), `slack-token` (`xoxb-`, `xoxp-`,
//!   `xoxa-`, `xoxr-`, `xoxs-`, `xoxo-`).
//! - `stripe-key` (`sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`), `google-api-key` (`AIza…`).
//! - `basic-auth`, `bearer-token`: the credential of an `Authorization:` header, a
//!   token-looking word (≥ 16 characters mixing letters and digits) after `Bearer`, and the
//!   password of `curl -u user:password`.
//! - `url-password`: the password of `scheme://user:password@host`; scheme, user and host
//!   are kept.
//! - `secret-assignment`: the value of `KEY=value`, `KEY: value`, `"key": "value"`,
//!   `--key value` when the key's last word names a secret (password, passwd, passphrase,
//!   pwd, secret, token, auth, credential(s), api key, access key, private key, secret key,
//!   signing key, …; `TOKEN_BUDGET` and `password_reset_url` do not, their last word is
//!   "budget" and "url").
//! - `high-entropy`: the value of any such assignment, whatever the key, when it looks like
//!   random key material — see [`looks_high_entropy`] for the exact rule.
//!
//! A finding that overlaps another is merged with it; the union is redacted once, under
//! the most specific kind. Redaction is idempotent: `redact(redact(x)) == redact(x)`.
//!
//! # What is kept, on purpose
//!
//! - **Placeholders** — values that by their shape cannot be anyone's secret: `<your-key>`,
//!   `${VAR}`, `$VAR`, `{{ var }}`, `%(var)s`, masks such as `****` or `xxxx`, values starting
//!   with "your" (`your-api-key-here`), empty values, `true`/`false`/`null`/`none`, and
//!   `read`/`write` (CI permissions such as `id-token: write`).
//! - **Dictionary dummies are not placeholders.** `password=changeme`,
//!   `postgres://app:password@db` or `secret: example` are redacted: the redactor cannot tell the `changeme` of
//!   a README from the `changeme` that is the real password of a dev database, and a weak
//!   real password is still a password.
//! - **Code, not literals.** An unquoted value that is an expression — a call or index
//!   (`tokens.next()`), a dotted path (`config.token`), a reference (`&str`), the key's own
//!   name (`token=token`, argument forwarding) — is not a secret literal; nor, in code-style
//!   spacing (`key = value`, `key: value`), a value that ends a statement
//!   (`IFLA_TOKEN = 7,`), is followed by more code (`let token = match kind {`), follows
//!   `let`/`const`/`var`, or is a plain word without digits (`token = tokens`). The last
//!   rule means INI-style `password = changeme` is kept while `PASSWORD=changeme` is not: a
//!   spaced plain word reads as a variable. Quoted values are always literals.
//! - **Prose.** `key: value` with an unquoted value counts only where it reads as a config
//!   line or header: the key starts a line (or follows `"`, `'`, `{`, `,`, `[`, a list dash
//!   or markdown bold) and the value ends it (or is closed by a quote, `,`, `}` or `]`);
//!   and a capitalized label followed by a plain word (`Auth: done`) is a note. "Fixed the
//!   auth: it expired" is a sentence. Consequently a multi-word unquoted YAML value
//!   (`password: two words`) is not caught by the key-name rule; quote it, as YAML style
//!   guides ask. Likewise `password <value>` and `--password <value>` count only when the
//!   value is not a plain word ("the password policy", "pass --token explicitly").
//! - Hashes and identifiers: hex digests (git SHAs, sha256 in lockfiles), UUIDs, SRI
//!   `sha512-…` integrity strings, ULIDs (`mem_01J…`), semver, paths, e-mail addresses, URLs
//!   without a password, `data:` URIs (image bytes are not credentials).
//!
//! Detection is deterministic regex work: all patterns are compiled once, and a single
//! [`RegexSet`] pass decides which detectors need to run, so clean text costs one scan.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

/// The kind reported for a dropped `<private>…</private>` block (it leaves no marker).
pub const PRIVATE_BLOCK: &str = "private-block";

/// Every kind of secret the redactor knows, most specific first. When findings overlap,
/// the merged redaction takes the kind that comes first here.
pub const KINDS: &[&str] = &[
    "private-key",
    "jwt",
    "anthropic-key",
    "openai-key",
    "github-token",
    "gitlab-token",
    "npm-token",
    "huggingface-token",
    "aws-access-key",
    "aws-secret-key",
    "slack-webhook",
    "slack-token",
    "stripe-key",
    "google-api-key",
    "basic-auth",
    "bearer-token",
    "url-password",
    "secret-assignment",
    "high-entropy",
];

/// Minimum length, in characters, of a value judged by the entropy rule.
pub const HIGH_ENTROPY_MIN_LEN: usize = 16;

/// Minimum Shannon entropy, in bits per character, of a value judged by the entropy rule.
pub const HIGH_ENTROPY_MIN_BITS: f64 = 3.5;

/// One thing that was redacted, for reporting. It never contains the secret itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    /// One of [`KINDS`], or [`PRIVATE_BLOCK`].
    pub kind: &'static str,
    /// Byte offset of the redacted text in the *input* (a char boundary).
    pub start: usize,
    /// Exclusive byte end of the redacted text in the *input* (a char boundary).
    pub end: usize,
}

/// The result of [`redact`]: the text to store and what was taken out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The input with secrets replaced by `[REDACTED:<kind>]` and private blocks dropped.
    pub text: String,
    /// What was redacted, ordered by position in the input.
    pub redactions: Vec<Redaction>,
}

impl Redacted {
    /// Whether the input came through unchanged.
    pub fn is_clean(&self) -> bool {
        self.redactions.is_empty()
    }

    /// How many redactions of each kind were made, ordered by kind name.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for redaction in &self.redactions {
            match counts.iter_mut().find(|(kind, _)| *kind == redaction.kind) {
                Some((_, count)) => *count += 1,
                None => counts.push((redaction.kind, 1)),
            }
        }
        counts.sort_unstable();
        counts
    }
}

/// Redacts secrets and drops `<private>` blocks, reporting what was removed (see the
/// module documentation for the rules).
///
/// Never panics, whatever the input.
pub fn redact(text: &str) -> Redacted {
    scan(text).unwrap_or_else(|| Redacted { text: text.to_owned(), redactions: Vec::new() })
}

/// The text of [`redact`], borrowing the input when nothing had to be redacted.
pub fn redact_str(text: &str) -> Cow<'_, str> {
    match scan(text) {
        Some(redacted) => Cow::Owned(redacted.text),
        None => Cow::Borrowed(text),
    }
}

// ---------------------------------------------------------------------------------------
// Patterns
//
// Prefixed tokens also match right after `_` (`mcp__tool__sk-proj-…`, `KEY_ghp_…`): the
// underscore is then redacted with the token, which loses nothing a reader needs.
// `(?-u:\b)` is an ASCII word boundary: it keeps the fast DFA engines usable on non-ASCII
// text, and it treats any non-ASCII character as a separator, so `密钥AKIA…` is still found.

const PRIVATE_OPEN_TAG: &str = r"(?i-u:<private\s*>)";
/// A PEM private key block; without its END line, the header and the base64 lines that
/// follow it (a key pasted in part). A header alone is a mention, not a key.
const PRIVATE_KEY: &str = r"(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:[ \t]|\r?\n|\\r?\\n)+(?:(?:Proc-Type|DEK-Info|Version|Comment):[^\r\n\\]*|[A-Za-z0-9+/=]{16,}))+)";
const JWT: &str = r"(?-u:\b)eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+){0,2}";
const ANTHROPIC_KEY: &str = r"(?:(?-u:\b)|_)sk-ant-[A-Za-z0-9_-]{20,}";
const OPENAI_KEY: &str = r"(?:(?-u:\b)|_)sk-[A-Za-z0-9_-]{20,}";
const GITHUB_TOKEN: &str = r"(?:(?-u:\b)|_)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})";
const GITLAB_TOKEN: &str = r"(?:(?-u:\b)|_)glpat-[A-Za-z0-9_-]{20,}";
const NPM_TOKEN: &str = r"(?:(?-u:\b)|_)npm_[A-Za-z0-9]{36,}";
const HUGGINGFACE_TOKEN: &str = r"(?:(?-u:\b)|_)hf_[A-Za-z0-9]{30,}";
const AWS_ACCESS_KEY: &str = r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)";
const SLACK_WEBHOOK: &str = r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+";
const SLACK_TOKEN: &str = r"(?:(?-u:\b)|_)xox[abposr]-[A-Za-z0-9-]{10,}";
const STRIPE_KEY: &str = r"(?:(?-u:\b)|_)[sr]k_(?:live|test)_[A-Za-z0-9]{16,}";
const GOOGLE_API_KEY: &str = r"(?:(?-u:\b)|_)AIza[A-Za-z0-9_-]{35,}";
const AUTHORIZATION_HEADER: &str = r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?P<scheme>bearer|basic|token|digest|negotiate)[ \t]+)?(?P<secret>[A-Za-z0-9._~+/-]+=*)"#;
const BEARER_WORD: &str = r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)";
const URL_PASSWORD: &str = r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s/?#"'<>]+)@"#;
/// `key` `=`/`:`/`:=`/`=>` value, where the value is double-quoted (with escapes),
/// single-quoted, or a bare word; markdown bold around the key is allowed
/// (`**Password:** hunter2`). A bare word cannot start with a character that makes it
/// a comparison (`==`), a path (`::`), a reference or a placeholder.
///
/// Keys and bare values (128 characters each) are bounded so that a rejected match never
/// spans the rest of a long line: `b:b:b:…` would otherwise cost quadratic time. An
/// accepted bare value is extended to the end of its run by [`bare_run_end`].
const ASSIGNMENT: &str = r#"(?-u:\b)(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,127})["']?[ \t]*(?P<sep>:=|=>|:|=)(?:\*\*?)?[ \t]*(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|(?P<bare>[^\s"'`,;&\\=:<>(){}\[\]$*%|][^\s"'`,;&\\]{0,127}))"#;
/// A command-line flag followed by its value (`--password hunter2`), or the word
/// `password`/`passwd`/`passphrase` followed by one (`.netrc`: `login bob password hunter2`).
const FLAG: &str = r#"(?m)(?:^|[ \t"'=(])(?:--?(?P<key>[A-Za-z][A-Za-z0-9_-]*)|(?P<word>(?i:password|passwd|passphrase)))[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\\<$=:-][^\s"'`\\]*))"#;
/// `curl -u user:password`.
const CURL_USER: &str = r#"(?:^|[ \t])(?:-u|--user)[ \t]+["']?[^\s:"']*:(?P<secret>[^\s"']+)"#;

/// A finding: the byte range to redact and its kind.
struct Finding {
    range: Range<usize>,
    kind: &'static str,
}

/// One detector: a pattern, and the check that turns a match into a finding (or rejects
/// it as a look-alike).
struct Detector {
    pattern: &'static str,
    check: fn(&str, &Captures<'_>) -> Option<Finding>,
}

const DETECTORS: &[Detector] = &[
    Detector { pattern: PRIVATE_KEY, check: |_, caps| whole(caps, "private-key") },
    Detector { pattern: JWT, check: |_, caps| whole(caps, "jwt") },
    Detector { pattern: ANTHROPIC_KEY, check: check_anthropic_key },
    Detector { pattern: OPENAI_KEY, check: check_openai_key },
    Detector { pattern: GITHUB_TOKEN, check: |_, caps| token_with_prefix(caps, "github-token") },
    Detector { pattern: GITLAB_TOKEN, check: |_, caps| token_with_prefix(caps, "gitlab-token") },
    Detector { pattern: NPM_TOKEN, check: |_, caps| token_with_prefix(caps, "npm-token") },
    Detector { pattern: HUGGINGFACE_TOKEN, check: |_, caps| token_with_prefix(caps, "huggingface-token") },
    Detector { pattern: AWS_ACCESS_KEY, check: |_, caps| whole(caps, "aws-access-key") },
    Detector { pattern: SLACK_WEBHOOK, check: |_, caps| whole(caps, "slack-webhook") },
    Detector { pattern: SLACK_TOKEN, check: check_slack_token },
    Detector { pattern: STRIPE_KEY, check: |_, caps| token_with_prefix(caps, "stripe-key") },
    Detector { pattern: GOOGLE_API_KEY, check: |_, caps| token_with_prefix(caps, "google-api-key") },
    Detector { pattern: AUTHORIZATION_HEADER, check: check_authorization_header },
    Detector { pattern: BEARER_WORD, check: check_bearer_word },
    Detector { pattern: URL_PASSWORD, check: check_url_password },
    Detector { pattern: ASSIGNMENT, check: check_assignment },
    Detector { pattern: FLAG, check: check_flag },
    Detector { pattern: CURL_USER, check: check_curl_user },
];

/// Index of the `<private>` opening tag in [`PATTERNS`]; detector `i` is at `i + 1`.
const PRIVATE_OPEN_TAG_INDEX: usize = 0;

/// The prefilter: one pass tells whether the text holds a `<private>` tag and which
/// detectors can match at all.
static PATTERNS: LazyLock<RegexSet> = LazyLock::new(|| {
    let patterns = std::iter::once(PRIVATE_OPEN_TAG).chain(DETECTORS.iter().map(|detector| detector.pattern));
    RegexSet::new(patterns).expect("redaction patterns are valid")
});

/// The detectors' regexes, compiled once, in [`DETECTORS`] order.
static DETECTOR_REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    DETECTORS.iter().map(|detector| Regex::new(detector.pattern).expect("redaction pattern is valid")).collect()
});

static PRIVATE_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i-u:<(/?)private\s*>)").expect("private tag pattern is valid"));

// ---------------------------------------------------------------------------------------
// The transform

/// Runs the whole transform; `None` when the text is clean (nothing to drop or redact).
fn scan(text: &str) -> Option<Redacted> {
    let hits = PATTERNS.matches(text);
    if !hits.matched_any() {
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
    redactions.sort_by_key(|redaction| (redaction.start, redaction.end));
    Some(Redacted { text: out, redactions })
}

/// All secrets in `text`, merged so that they do not overlap, ordered by position.
fn find_secrets(text: &str, may_match: impl Fn(usize) -> bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, (detector, regex)) in DETECTORS.iter().zip(DETECTOR_REGEXES.iter()).enumerate() {
        if !may_match(index) {
            continue;
        }
        let mut at = 0;
        while let Some(caps) = regex.captures_at(text, at) {
            let whole = caps.get(0).expect("group 0 always participates");
            match (detector.check)(text, &caps) {
                Some(finding) => {
                    at = whole.end().max(finding.range.end).max(next_char(text, whole.start()));
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
    merge(findings)
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

fn kind_rank(kind: &str) -> usize {
    KINDS.iter().position(|known| *known == kind).unwrap_or(KINDS.len())
}

/// Byte offset of the character after the one starting at `at` (or one past the end).
fn next_char(text: &str, at: usize) -> usize {
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

// ---------------------------------------------------------------------------------------
// Checks: each turns a match into a finding, or rejects a look-alike.

fn whole(caps: &Captures<'_>, kind: &'static str) -> Option<Finding> {
    let whole = caps.get(0)?;
    Some(Finding { range: whole.range(), kind })
}

/// A vendor token with a fixed prefix; rejected when the body is one repeated filler
/// character (`ghp_xxxxxxxx…` in documentation).
fn token_with_prefix(caps: &Captures<'_>, kind: &'static str) -> Option<Finding> {
    #[rustfmt::skip]
    const PREFIXES: &[&str] = &[
        "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "npm_", "hf_",
        "sk_live_", "rk_live_", "sk_test_", "rk_test_", "AIza",
    ];
    let token = caps.get(0)?;
    let text = token.as_str().strip_prefix('_').unwrap_or(token.as_str());
    let body = PREFIXES.iter().find_map(|prefix| text.strip_prefix(prefix)).unwrap_or(text);
    if is_one_repeated_char(body) {
        return None;
    }
    Some(Finding { range: token.range(), kind })
}

fn check_anthropic_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    let body = &key.as_str().trim_start_matches('_')["sk-ant-".len()..];
    if !(body.bytes().any(|b| b.is_ascii_alphabetic()) && body.bytes().any(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "anthropic-key" })
}

/// `sk-…` is common in prose (`sk-learn`); a real key's random body mixes upper case, lower
/// case and digits.
fn check_openai_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    if !has_upper_lower_digit(&key.as_str().trim_start_matches('_')["sk-".len()..]) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "openai-key" })
}

fn check_slack_token(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let token = caps.get(0)?;
    if !token.as_str().trim_start_matches('_')["xoxb-".len()..].bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Finding { range: token.range(), kind: "slack-token" })
}

/// `Authorization: <scheme> <credential>`. Without a scheme the credential must look like
/// a token (≥ 16 characters, letters and digits), so `authorization: required` is prose.
fn check_authorization_header(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    let value = secret.as_str();
    let scheme = caps.name("scheme").map(|scheme| scheme.as_str().to_ascii_lowercase());
    if value.len() < 8 || is_auth_scheme(value) || is_placeholder(value) {
        return None;
    }
    let token_like = value.len() >= 16 && has_letter_and_digit(value);
    let kind = match scheme.as_deref() {
        Some("basic") => "basic-auth",
        Some(_) => "bearer-token",
        None if token_like => "bearer-token",
        None => return None,
    };
    Some(Finding { range: secret.range(), kind })
}

/// `Bearer <token>` outside a header: "the bearer of this letter" has no digits.
fn check_bearer_word(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if !has_letter_and_digit(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "bearer-token" })
}

fn check_url_password(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if is_placeholder(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "url-password" })
}

fn check_assignment(text: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.name("key")?;
    let quoted = caps.name("dq").or_else(|| caps.name("sq"));
    let value = quoted.or_else(|| caps.name("bare"))?;
    let value_text = value.as_str();
    if is_placeholder(value_text) || is_literal(value_text) {
        return None;
    }
    let words = key_words(key.as_str());
    if quoted.is_none() && bare_value_is_code(text, caps, &words, key.start(), value.range()) {
        return None;
    }
    let colon_prose = quoted.is_none()
        && caps.name("sep").is_some_and(|sep| sep.as_str() == ":")
        && (!reads_as_config_line(text, key.start(), value.end()) || is_prose_label(key.as_str(), value_text));
    let kind = if is_secret_key(&words, value_text) && !colon_prose {
        if is_aws_secret(&words, value_text) { "aws-secret-key" } else { "secret-assignment" }
    } else if looks_high_entropy(value_text) {
        "high-entropy"
    } else {
        return None;
    };
    // Only now, for an accepted value: scanning to the end of every candidate's run would
    // make a long run of candidates quadratic.
    let range = if quoted.is_some() { value.range() } else { value.start()..bare_run_end(text, value.end()) };
    Some(Finding { range, kind })
}

/// The end of a bare value that the pattern may have cut at 128 characters.
fn bare_run_end(text: &str, window_end: usize) -> usize {
    let rest = &text[window_end..];
    let run = rest.find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ';' | '&' | '\\'));
    window_end + run.unwrap_or(rest.len())
}

/// Whether an unquoted value is code rather than a literal: an expression
/// ([`looks_like_code`]), the key's own name (`token=token`, `self.token = token`), or a
/// value in code-style spacing (`key = value`, `key: value`) that ends a statement
/// (`IFLA_TOKEN = 7,`, `token: next_token;`), is followed by more code on its line
/// (`let token = match kind {`), is a plain word without digits (`token = tokens`, a
/// variable — so INI-style `password = changeme` is kept, `PASSWORD=changeme` is not), or
/// follows a declaration keyword (`let`, `const`, `var`…). A plain word closed by `)` is an
/// argument (`login(password=pw)`).
fn bare_value_is_code(
    text: &str,
    caps: &Captures<'_>,
    key_words: &[String],
    key_start: usize,
    value: Range<usize>,
) -> bool {
    let value_text = &text[value.clone()];
    if looks_like_code(value_text) {
        return true;
    }
    let normalized: String =
        value_text.chars().filter(|c| !matches!(c, '_' | '-')).map(|c| c.to_ascii_lowercase()).collect();
    if key_words.concat() == normalized || key_words.last().is_some_and(|last| *last == normalized) {
        return true;
    }
    let next = text[value.end..].chars().next();
    if is_identifier(value_text) && next == Some(')') {
        return true;
    }
    let Some(sep) = caps.name("sep") else { return false };
    let spaced = text[..sep.start()].ends_with([' ', '\t']) || text[sep.end()..].starts_with([' ', '\t']);
    if !spaced {
        return false;
    }
    if matches!(next, Some(',' | ';')) {
        return true;
    }
    let line_before_key = line_before(text, key_start);
    let declared = line_before_key
        .split_whitespace()
        .next_back()
        .is_some_and(|word| ["let", "mut", "const", "var", "static", "val", "auto", "my", "local"].contains(&word));
    if declared {
        return true;
    }
    if sep.as_str() == ":" {
        return false;
    }
    let rest_of_line = line_after(text, value.end).trim();
    let more_code =
        !(rest_of_line.is_empty() || rest_of_line.starts_with(['#', ';']) || rest_of_line.starts_with("//"));
    more_code || (is_identifier(value_text) && !value_text.bytes().any(|b| b.is_ascii_digit()))
}

/// `Auth: done`, `Token: expired`: a capitalized label followed by a plain word is a note,
/// not a header (header values are tokens, not words).
fn is_prose_label(key: &str, value: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_uppercase()) && value.chars().all(char::is_alphabetic)
}

/// `key: value` reads as a config line or header when the key starts the line (or follows a
/// quote, `{`, `,`, `[`, a list dash or markdown bold) and the value ends it (or is closed
/// by a quote, `,`, `}` or `]`).
fn reads_as_config_line(text: &str, key_start: usize, value_end: usize) -> bool {
    let line_before_key = line_before(text, key_start);
    let starts_entry = line_before_key.trim_matches([' ', '\t', '-', '*', '>']).is_empty()
        || line_before_key.trim_end_matches([' ', '\t']).ends_with(['"', '\'', '{', ',', '[']);
    let rest_of_line = line_after(text, value_end).trim_start_matches([' ', '\t']);
    let ends_entry = rest_of_line.is_empty()
        || rest_of_line.starts_with('#')
        || rest_of_line.starts_with(['"', '\'', ',', '}', ']']);
    starts_entry && ends_entry
}

/// How far the checks look around a match on its line: enough for indentation, a
/// declaration keyword or a trailing comment, and bounded so that a long line costs linear
/// time however many candidates it holds.
const LINE_CONTEXT: usize = 256;

/// The line before `pos`, or its last [`LINE_CONTEXT`] bytes (rounded to a char boundary).
fn line_before(text: &str, pos: usize) -> &str {
    let mut start = pos.saturating_sub(LINE_CONTEXT);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    text[start..pos].rsplit(['\n', '\r']).next().unwrap_or("")
}

/// The line after `pos`, or its first [`LINE_CONTEXT`] bytes (rounded to a char boundary).
fn line_after(text: &str, pos: usize) -> &str {
    let mut end = (pos + LINE_CONTEXT).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    text[pos..end].split(['\n', '\r']).next().unwrap_or("")
}

/// `--password hunter2`: a flag naming a secret, followed by a value that is not a plain
/// word (a flag followed by a word is too often prose: "pass --token explicitly").
fn check_flag(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.name("key").or_else(|| caps.name("word"))?;
    let value = caps.name("dq").or_else(|| caps.name("sq")).or_else(|| caps.name("bare"))?;
    let value_text = value.as_str();
    let words = key_words(key.as_str());
    if !is_secret_key(&words, value_text)
        || is_placeholder(value_text)
        || is_literal(value_text)
        || looks_like_code(value_text)
        || value_text.chars().all(char::is_alphabetic)
    {
        return None;
    }
    Some(Finding { range: value.range(), kind: "secret-assignment" })
}

fn check_curl_user(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if is_placeholder(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "basic-auth" })
}

// ---------------------------------------------------------------------------------------
// Key names

/// Splits a key into lowercase words at `_`, `-`, `.` and camelCase boundaries:
/// `clientSecret` → `client secret`, `APIKey` → `api key`, `DB_PASSWORD` → `db password`.
fn key_words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (index, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !word.is_empty() {
            let previous = chars[index - 1];
            let next_is_lower = chars.get(index + 1).is_some_and(char::is_ascii_lowercase);
            if previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase() && next_is_lower)
            {
                words.push(std::mem::take(&mut word));
            }
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether a key's name says its value is a secret. Only the last word (or last two)
/// counts: `GITHUB_TOKEN` and `client_secret` do, `TOKEN_BUDGET` and `password_reset_url`
/// do not.
fn is_secret_key(words: &[String], value: &str) -> bool {
    const LAST_WORD: &[&str] =
        &["password", "passwd", "passphrase", "pwd", "secret", "token", "auth", "credential", "credentials", "apikey"];
    // Compound words written without separators: `pgpassword`, `authtoken`, `secretkey`.
    const LAST_WORD_SUFFIX: &[&str] =
        &["password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "accesskey", "privatekey"];
    // Too ambiguous alone (`pass`, a pattern `pat`), secret after another word: `DB_PASS`, `GITHUB_PAT`.
    const LAST_WORD_AFTER_ANOTHER: &[&str] = &["pass", "pat"];
    const LAST_TWO_WORDS: &[(&str, &str)] = &[
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("auth", "key"),
        ("account", "key"),
        ("session", "key"),
    ];
    // `auth: oauth2` names a method, not a credential.
    const AUTH_METHODS: &[&str] = &[
        "none", "basic", "bearer", "token", "oauth", "oauth2", "jwt", "apikey", "api_key", "key", "password",
        "session", "cookie", "saml", "ldap", "sso", "oidc", "required", "optional", "disabled", "enabled",
    ];
    let Some(last) = words.last().map(String::as_str) else { return false };
    if last == "auth" && AUTH_METHODS.iter().any(|method| method.eq_ignore_ascii_case(value)) {
        return false;
    }
    if LAST_WORD.contains(&last) || LAST_WORD_SUFFIX.iter().any(|suffix| last.ends_with(suffix)) {
        return true;
    }
    let [.., second_last, last] = words else { return false };
    LAST_WORD_AFTER_ANOTHER.contains(&last.as_str())
        || LAST_TWO_WORDS.iter().any(|(first, second)| second_last == first && last == second)
}

/// The AWS secret access key: 40 base64 characters under a key naming "aws" and "secret".
fn is_aws_secret(words: &[String], value: &str) -> bool {
    words.iter().any(|word| word == "aws")
        && words.iter().any(|word| word == "secret")
        && value.len() == 40
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'='))
}

// ---------------------------------------------------------------------------------------
// Values

/// Values that by their shape cannot be anyone's secret: empty, `<your-key>`, `${VAR}`,
/// `$VAR`, `{{ var }}`, `%(var)s`, masks (`****`, `xxxx`, `...`), `your-api-key-here`, and
/// an earlier redaction marker (which keeps redaction idempotent).
fn is_placeholder(value: &str) -> bool {
    let value = value.trim();
    if value.is_empty() || value.contains("[REDACTED:") {
        return true;
    }
    if value.starts_with('<') && value.ends_with('>') {
        return true;
    }
    if ["${", "$(", "{{", "%("].iter().any(|prefix| value.starts_with(prefix)) {
        return true;
    }
    if let Some(variable) = value.strip_prefix('$')
        && is_identifier(variable)
    {
        return true;
    }
    if value.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '…' | '•' | '-' | '_' | '#')) {
        return true;
    }
    value.get(..4).is_some_and(|prefix| prefix.eq_ignore_ascii_case("your"))
}

/// Keyword values of config and code: booleans, nulls and common type names.
fn is_literal(value: &str) -> bool {
    #[rustfmt::skip]
    const LITERALS: &[&str] = &[
        "true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off", "read", "write",
        "str", "string", "bool", "int", "bytes", "secretstr",
    ];
    LITERALS.iter().any(|literal| literal.eq_ignore_ascii_case(value))
}

/// An unquoted value that is an expression: a call, an index, a generic or a block
/// (`tokens.next()`, `env[…]`, `Option<String>`), or a dotted path (`config.token`,
/// `self::TOKEN`, `ptr->token`).
fn looks_like_code(value: &str) -> bool {
    if value.contains(['(', ')', '[', ']', '{', '}', '<', '>']) || value.starts_with(['&', '*', '$', '%']) {
        return true;
    }
    let path = value.replace("::", ".").replace("->", ".");
    let mut segments = path.split('.');
    let first_is_identifier = segments.next().is_some_and(is_identifier);
    let mut rest = segments.peekable();
    first_is_identifier && rest.peek().is_some() && rest.all(is_identifier)
}

fn is_identifier(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_auth_scheme(value: &str) -> bool {
    ["bearer", "basic", "token", "digest", "negotiate"].iter().any(|scheme| scheme.eq_ignore_ascii_case(value))
}

fn is_one_repeated_char(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_none_or(|first| chars.all(|c| c == first))
}

fn has_letter_and_digit(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_alphabetic()) && value.bytes().any(|b| b.is_ascii_digit())
}

fn has_upper_lower_digit(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase())
        && value.bytes().any(|b| b.is_ascii_digit())
}

/// The entropy rule: whether a value, whatever its key, looks like random key material.
///
/// All of these must hold:
/// - it is one base64/base64url word: `[A-Za-z0-9+/_-]`, optionally padded with `=`, at
///   least [`HIGH_ENTROPY_MIN_LEN`] (16) characters before the padding — so no spaces,
///   dots, colons or `@` (prose, versions, file names, URLs, e-mail addresses);
/// - it is not hexadecimal (with or without dashes or `0x`): git SHAs, sha256 digests and
///   UUIDs are identifiers, not secrets; nor an SRI hash (`sha512-…`);
/// - after an optional lowercase prefix such as `mem_`, it mixes upper case, lower case and
///   digits (ULIDs have no lower case, paths and kebab-case slugs no upper case);
/// - it is not word-like: less than half of it is made of runs of three or more lower-case
///   letters (`UserProfileCard2Header` is an identifier, random text rarely has such runs);
/// - it is not an alphabet: less than half of its neighbouring characters are consecutive
///   (`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef…0123456789+/`);
/// - its Shannon entropy is at least [`HIGH_ENTROPY_MIN_BITS`] (3.5) bits per character.
pub fn looks_high_entropy(value: &str) -> bool {
    let body = value.trim_end_matches('=');
    if body.len() < HIGH_ENTROPY_MIN_LEN
        || !body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-'))
    {
        return false;
    }
    let digits = body.strip_prefix("0x").unwrap_or(body);
    if digits.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return false;
    }
    if ["sha1-", "sha256-", "sha384-", "sha512-", "md5-"].iter().any(|prefix| body.starts_with(prefix)) {
        return false;
    }
    let core = match body.split_once('_') {
        Some((prefix, rest)) if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_lowercase()) => rest,
        _ => body,
    };
    if !has_upper_lower_digit(core) || is_word_like(core) || is_mostly_sequential(core) {
        return false;
    }
    shannon_entropy(body) >= HIGH_ENTROPY_MIN_BITS
}

/// Whether at least half of the neighbouring characters of `value` are consecutive
/// (`ABCDEFGHIJ…0123456789`): an alphabet, not random material.
fn is_mostly_sequential(value: &str) -> bool {
    let bytes = value.as_bytes();
    let consecutive = bytes.windows(2).filter(|pair| pair[1] == pair[0].wrapping_add(1)).count();
    consecutive * 2 >= bytes.len().saturating_sub(1)
}

/// Whether at least half of `value` is runs of three or more lower-case ASCII letters.
fn is_word_like(value: &str) -> bool {
    let mut in_words = 0;
    let mut run = 0;
    for b in value.bytes().chain(std::iter::once(b' ')) {
        if b.is_ascii_lowercase() {
            run += 1;
            continue;
        }
        if run >= 3 {
            in_words += run;
        }
        run = 0;
    }
    in_words * 2 >= value.len()
}

/// Shannon entropy of the bytes of `value`, in bits per byte.
fn shannon_entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = value.len() as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let p = f64::from(count) / len;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use proptest::prelude::*;

    const POSITIVES: &str = include_str!("../tests/data/redaction/positives.txt");
    const NEGATIVES: &str = include_str!("../tests/data/redaction/negatives.txt");
    const OPEN: char = '⟦';
    const CLOSE: char = '⟧';

    /// One positive case: the input, the secrets planted in it and the expected output.
    struct Positive {
        line: usize,
        kind: String,
        input: String,
        secrets: Vec<String>,
        expected: String,
    }

    /// Splits a corpus into `(line number, header, text)`: the header is what precedes a tab
    /// (empty for negatives), the text a line or a `<<<` … `>>>` block.
    fn corpus_cases(corpus: &str, has_kind: bool) -> Vec<(usize, String, String)> {
        let mut cases = Vec::new();
        let mut lines = corpus.lines().enumerate();
        while let Some((index, line)) = lines.next() {
            if line.is_empty() || line.starts_with('%') {
                continue;
            }
            let (header, text) = if has_kind {
                let (kind, text) = line.split_once('\t').unwrap_or_else(|| panic!("line {}: no tab", index + 1));
                (kind.to_owned(), text)
            } else {
                (String::new(), line)
            };
            let text = if text == "<<<" {
                let block: Vec<&str> = lines.by_ref().map(|(_, line)| line).take_while(|line| *line != ">>>").collect();
                block.join("\n")
            } else {
                text.to_owned()
            };
            cases.push((index + 1, header, text));
        }
        cases
    }

    fn positives() -> Vec<Positive> {
        corpus_cases(POSITIVES, true)
            .into_iter()
            .map(|(line, kind, marked)| {
                let (mut input, mut expected, mut secrets) = (String::new(), String::new(), Vec::new());
                let mut rest = marked.as_str();
                while let Some((before, after)) = rest.split_once(OPEN) {
                    let (secret, after) = after.split_once(CLOSE).expect("every ⟦ is closed");
                    input.push_str(before);
                    input.push_str(secret);
                    expected.push_str(before);
                    expected.push_str(&format!("[REDACTED:{kind}]"));
                    secrets.push(secret.to_owned());
                    rest = after;
                }
                input.push_str(rest);
                expected.push_str(rest);
                assert!(!secrets.is_empty(), "line {line}: no ⟦secret⟧ marked");
                Positive { line, kind, input, secrets, expected }
            })
            .collect()
    }

    fn negatives() -> Vec<(usize, String)> {
        corpus_cases(NEGATIVES, false).into_iter().map(|(line, _, text)| (line, text)).collect()
    }

    #[test]
    fn corpus_has_at_least_thirty_positives_and_thirty_negatives_covering_every_kind() {
        let positives = positives();
        assert!(positives.len() >= 30, "{} positives", positives.len());
        assert!(negatives().len() >= 30, "{} negatives", negatives().len());
        for kind in KINDS {
            assert!(positives.iter().any(|case| case.kind == *kind), "no positive of kind {kind}");
        }
        for case in &positives {
            assert!(KINDS.contains(&case.kind.as_str()), "line {}: unknown kind {}", case.line, case.kind);
        }
    }

    #[test]
    fn every_positive_is_replaced_by_its_kind_marker_and_the_text_around_it_is_kept() {
        let mut failures = Vec::new();
        for case in positives() {
            let redacted = redact(&case.input);
            if redacted.text != case.expected {
                failures.push(format!(
                    "line {} ({}):\n  input:    {}\n  expected: {}\n  got:      {}",
                    case.line, case.kind, case.input, case.expected, redacted.text
                ));
            }
            for secret in &case.secrets {
                assert!(!redacted.text.contains(secret.as_str()), "line {}: secret survived", case.line);
            }
        }
        assert!(failures.is_empty(), "{} positives failed:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn reported_ranges_locate_each_secret_in_the_input() {
        for case in positives() {
            let redacted = redact(&case.input);
            let found: Vec<&str> = redacted.redactions.iter().map(|r| &case.input[r.start..r.end]).collect();
            assert_eq!(found, case.secrets, "line {}", case.line);
            assert!(redacted.redactions.iter().all(|r| r.kind == case.kind), "line {}", case.line);
            assert_eq!(redacted.counts(), vec![(KINDS[kind_rank(&case.kind)], case.secrets.len())]);
        }
    }

    #[test]
    fn every_negative_comes_out_byte_identical() {
        let mut failures = Vec::new();
        for (line, text) in negatives() {
            let redacted = redact(&text);
            if redacted.text != text || !redacted.is_clean() {
                failures.push(format!("line {line}:\n  input: {text}\n  got:   {}", redacted.text));
            }
            assert_eq!(redact_str(&text), text.as_str());
        }
        assert!(failures.is_empty(), "{} negatives were altered:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn redacting_twice_equals_redacting_once_on_the_corpus() {
        let inputs =
            positives().into_iter().map(|case| case.input).chain(negatives().into_iter().map(|(_, text)| text));
        for input in inputs {
            let once = redact(&input).text;
            let twice = redact(&once);
            assert_eq!(twice.text, once);
            assert!(twice.is_clean(), "second pass redacted {:?} in {once}", twice.redactions);
        }
    }

    #[test]
    fn all_positives_in_one_document_are_all_redacted() {
        let mut cases = positives();
        // An unclosed private key runs to the end of the text, so it goes last.
        cases.sort_by_key(|case| case.input.contains("-----BEGIN") && !case.input.contains("-----END"));
        let document = cases.iter().map(|case| case.input.as_str()).collect::<Vec<_>>().join("\n");
        let expected = cases.iter().map(|case| case.expected.as_str()).collect::<Vec<_>>().join("\n");
        assert_eq!(redact(&document).text, expected);
    }

    #[test]
    fn redact_str_borrows_clean_text() {
        let clean = "Decision: the assembler never overflows its budget (see ARCHITECTURE.md).";
        assert!(matches!(redact_str(clean), Cow::Borrowed(_)));
        assert!(matches!(redact_str(""), Cow::Borrowed(_)));
        assert!(matches!(redact_str("password=hunter2"), Cow::Owned(_)));
    }

    #[test]
    fn private_block_is_dropped_with_its_tags() {
        let redacted = redact("keep <private>drop me</private> this");
        assert_eq!(redacted.text, "keep  this");
        assert_eq!(redacted.redactions, vec![Redaction { kind: PRIVATE_BLOCK, start: 5, end: 31 }]);
    }

    #[test]
    fn private_tags_are_case_insensitive_and_blocks_span_lines() {
        let text = "before\n<PRIVATE>\nline one\nline two\n</Private>\nafter";
        assert_eq!(redact_str(text), "before\n\nafter");
    }

    #[test]
    fn unclosed_private_block_drops_everything_to_the_end() {
        assert_eq!(redact_str("public part <private> everything after this\nand this"), "public part ");
    }

    #[test]
    fn nested_private_blocks_drop_up_to_the_outermost_closing_tag() {
        assert_eq!(redact_str("a<private>b<private>c</private>d</private>e"), "ae");
    }

    #[test]
    fn stray_closing_private_tag_is_kept() {
        assert_eq!(redact_str("a </private> b"), "a </private> b");
    }

    #[test]
    fn private_tag_formed_by_dropping_a_block_is_dropped_too() {
        let redacted = redact("<pri<private>x</private>vate>hidden");
        assert_eq!(redacted.text, "");
        assert_eq!(redact(&redacted.text).text, redacted.text);
    }

    #[test]
    fn secret_inside_a_private_block_is_dropped_not_marked() {
        let redacted = redact("ok <private>password=hunter2 AKIAIOSFODNN7EXAMPLE</private> done");
        assert_eq!(redacted.text, "ok  done");
        assert_eq!(redacted.counts(), vec![(PRIVATE_BLOCK, 1)]);
    }

    #[test]
    fn secret_after_a_private_block_is_located_in_the_input() {
        let input = "<private>é</private> key AKIAIOSFODNN7EXAMPLE";
        let redacted = redact(input);
        assert_eq!(redacted.text, " key [REDACTED:aws-access-key]");
        let aws = redacted.redactions.iter().find(|r| r.kind == "aws-access-key").expect("aws finding");
        assert_eq!(&input[aws.start..aws.end], "AKIAIOSFODNN7EXAMPLE");
    }

    #[test]
    fn secret_split_by_a_private_block_is_redacted_once_joined() {
        let redacted = redact("AKIAIOSFOD<private>note</private>NN7EXAMPLE");
        assert_eq!(redacted.text, "[REDACTED:aws-access-key]");
    }

    #[test]
    fn multibyte_text_around_secrets_is_preserved() {
        let input = "ключ: «AKIAIOSFODNN7EXAMPLE» — 🔑 token=EXAMPLE0123 ✓";
        assert_eq!(redact_str(input), "ключ: «[REDACTED:aws-access-key]» — 🔑 token=[REDACTED:secret-assignment] ✓");
    }

    #[test]
    fn url_password_keeps_scheme_user_and_host() {
        assert_eq!(
            redact_str("mysql://app:EXAMPLEpw@db.example.com:3306/app"),
            "mysql://app:[REDACTED:url-password]@db.example.com:3306/app"
        );
    }

    #[test]
    fn assignment_nested_in_a_quoted_value_is_found() {
        let input = r#"{"command": "PGPASSWORD=EXAMPLEpw psql -h db", "note": "token=EXAMPLE0000"}"#;
        let expected = r#"{"command": "PGPASSWORD=[REDACTED:secret-assignment] psql -h db", "note": "token=[REDACTED:secret-assignment]"}"#;
        assert_eq!(redact_str(input), expected);
    }

    #[test]
    fn long_unquoted_secret_is_redacted_whole() {
        let named = format!("SESSION_SECRET={} next", "EXAMPLE0example1".repeat(20));
        assert_eq!(redact_str(&named), "SESSION_SECRET=[REDACTED:secret-assignment] next");
        let random = format!("blob={}", "Zm9vYmFyEXAMPLE0a1B2c3D4e5F6".repeat(12));
        assert_eq!(redact_str(&random), "blob=[REDACTED:high-entropy]");
    }

    #[test]
    fn entropy_rule_accepts_random_material_and_rejects_identifiers() {
        assert!(looks_high_entropy("EXAMPLEk9Qz2Lm8Vt4Rw7Yb3"));
        assert!(looks_high_entropy("Zm9vYmFyEXAMPLE0a1B2c3D4e5F6=="));
        assert!(!looks_high_entropy("short1Ab"), "too short");
        assert!(!looks_high_entropy("3f786850e387550fdab836ed7e6dc881de23001b"), "git sha");
        assert!(!looks_high_entropy("550e8400-e29b-41d4-a716-446655440000"), "uuid");
        assert!(!looks_high_entropy("mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T"), "ulid");
        assert!(!looks_high_entropy("UserProfileCardHeader2Large"), "identifier");
        assert!(!looks_high_entropy("crates/brain-core/src/redact2"), "path");
        assert!(!looks_high_entropy("aaaaBBBB1111aaaaBBBB1111"), "low entropy");
    }

    #[test]
    fn mixed_document_is_redacted_in_place() {
        let input = "\
## Deploy notes
- db: postgres://brain:EXAMPLEpw@db.internal/brain
- export GITHUB_TOKEN=ghp_EXAMPLE0example1EXAMPLE0example1EXAM
- TOKEN_BUDGET=6000 stays
<private>the on-call phone is 555-0100</private>
- curl -H \"Authorization: Bearer EXAMPLE0token0abc123def456\" https://api.example.com
";
        let redacted = redact(input);
        expect![[r#"
            ## Deploy notes
            - db: postgres://brain:[REDACTED:url-password]@db.internal/brain
            - export GITHUB_TOKEN=[REDACTED:github-token]
            - TOKEN_BUDGET=6000 stays

            - curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api.example.com
        "#]]
        .assert_eq(&redacted.text);
        expect![[r#"[("bearer-token", 1), ("github-token", 1), ("private-block", 1), ("url-password", 1)]"#]]
            .assert_eq(&format!("{:?}", redacted.counts()));
    }

    /// Strategy for one positive case of the corpus, as `(input, secrets)`.
    fn planted_case() -> impl Strategy<Value = (String, Vec<String>)> {
        let cases: Vec<(String, Vec<String>)> =
            positives().into_iter().map(|case| (case.input, case.secrets)).collect();
        proptest::sample::select(cases)
    }

    /// Strategy for text made of fragments that matter to the detectors, so that random
    /// concatenations form keys, separators, quotes, tags, URLs and tokens.
    fn secret_shaped_text() -> impl Strategy<Value = String> {
        const FRAGMENTS: &[&str] = &[
            "password",
            "TOKEN",
            "api_key",
            "auth",
            "secret",
            "=",
            ":",
            ": ",
            " = ",
            "\"",
            "'",
            " ",
            "\n",
            ",",
            ";",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "<private>",
            "</private>",
            "<pri",
            "vate>",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOi",
            ".",
            "eyJzdWIiOi",
            "sk-",
            "ghp_",
            "EXAMPLE0example1EXAMPLE0example1EXAM",
            "Bearer ",
            "Authorization",
            "https://",
            "user",
            "@",
            "host",
            "/",
            "hunter2",
            "Zm9vYmFyEXAMPLE0a1B2c3D4e5F6",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "[REDACTED:jwt]",
            "$",
            "é",
            "--password ",
            "xoxb-",
            "0123456789",
        ];
        proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn redaction_is_idempotent_on_secret_shaped_text(text in secret_shaped_text()) {
            let once = redact(&text);
            for redaction in &once.redactions {
                prop_assert!(text.is_char_boundary(redaction.start) && text.is_char_boundary(redaction.end));
            }
            prop_assert_eq!(redact(&once.text).text, once.text);
        }

        #[test]
        fn redact_never_panics_and_reports_ranges_inside_the_input(text in any::<String>()) {
            let redacted = redact(&text);
            for redaction in &redacted.redactions {
                prop_assert!(redaction.start <= redaction.end && redaction.end <= text.len());
                prop_assert!(text.is_char_boundary(redaction.start) && text.is_char_boundary(redaction.end));
            }
            prop_assert_eq!(redact_str(&text), redacted.text.as_str());
        }

        #[test]
        fn planted_secrets_never_survive_in_random_text(
            prefix in any::<String>(),
            suffix in any::<String>(),
            (case, secrets) in planted_case(),
        ) {
            let text = format!("{prefix}\n{case}\n{suffix}");
            let redacted = redact(&text).text;
            for secret in &secrets {
                prop_assert!(!redacted.contains(secret.as_str()), "{secret} survived in {redacted:?}");
            }
        }

        #[test]
        fn redaction_is_idempotent_on_random_text_with_planted_secrets(
            prefix in any::<String>(),
            suffix in any::<String>(),
            (case, _) in planted_case(),
        ) {
            let once = redact(&format!("{prefix} {case} {suffix}")).text;
            prop_assert_eq!(redact(&once).text, once);
        }
    }
}

#[cfg(test)]
mod glued_tokens {
    use super::redact_str;

    #[test]
    fn tokens_glued_after_an_underscore_are_redacted() {
        let secret = "sk-proj-AbCdEf0123456789GhIjKlMn";
        let text = format!("called mcp__vault__{secret} then GITHUB_ghp_EXAMPLEexampleEXAMPLEexample0123");
        let clean = redact_str(&text);
        assert!(!clean.contains(secret), "{clean}");
        assert!(!clean.contains("ghp_EXAMPLE"), "{clean}");
        assert!(clean.starts_with("called mcp__vault_"));
    }
}
