//! The redactor's patterns and its table of detectors, compiled once.
//!
//! Prefixed tokens also match right after `_` (`mcp__tool__sk-proj-…`, `KEY_ghp_…`): the
//! underscore is then redacted with the token, which loses nothing a reader needs.
//! `(?-u:\b)` is an ASCII word boundary: it keeps the fast DFA engines usable on non-ASCII
//! text, and it treats any non-ASCII character as a separator, so `密钥AKIA…` is still found.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use super::checks::*;

pub(super) const PRIVATE_OPEN_TAG: &str = r"(?i-u:<private\s*>)";
/// A PEM private key block; without its END line, the header and the base64 lines that
/// follow it (a key pasted in part), the lines separated by newlines or JSON's escaped `\n`,
/// also behind a quote's or a comment's mark (`> `, `# `, `// `, `-- `, `; `, ` * `), a
/// line number (`cat -n`, an agent's file view: `  12→`) or a string's quotes and
/// concatenation (`"…\n" +`). A header alone is a mention, not a key.
const PRIVATE_KEY: &str = r#"(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:[ \t>#;*"',+→-]|//|[0-9]+[\t→]|\r?\n|\\(?:r\\)?n)+(?:(?:Proc-Type|DEK-Info|Version|Comment):[^\r\n\\]*|[A-Za-z0-9+/=]{16,}))+)"#;
/// The header of a PuTTY key's private part (`.ppk`), `Private-Lines: N`: the check reads
/// the N base64 lines that follow, whatever their indent, quote mark or line breaks.
const PUTTY_KEY: &str = r"(?i-u:private-lines:)[ \t]*(?P<count>[0-9]{1,3})";
const JWT: &str = r"(?-u:\b)eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+){0,2}";
const ANTHROPIC_KEY: &str = r"(?:(?-u:\b)|_)sk-ant-[A-Za-z0-9_-]{20,}";
const OPENAI_KEY: &str = r"(?:(?-u:\b)|_)sk-[A-Za-z0-9_-]{20,}";
const GITHUB_TOKEN: &str = r"(?:(?-u:\b)|_)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})";
const GITLAB_TOKEN: &str = r"(?:(?-u:\b)|_)glpat-[A-Za-z0-9_-]{20,}";
const NPM_TOKEN: &str = r"(?:(?-u:\b)|_)npm_[A-Za-z0-9]{36,}";
const HUGGINGFACE_TOKEN: &str = r"(?:(?-u:\b)|_)hf_[A-Za-z0-9]{30,}";
/// A secret of `brain token create`: `brain_` + 64 hex digits.
const BRAIN_TOKEN: &str = r"(?:(?-u:\b)|_)brain_[0-9a-f]{64}(?-u:\b)";
const AWS_ACCESS_KEY: &str = r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)";
const SLACK_WEBHOOK: &str = r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+";
/// Bot, user, app-level (`xapp-1-…`) and rotating (`xoxe.xoxp-1-…`, `xoxe-1-…`) tokens.
const SLACK_TOKEN: &str = r"(?:(?-u:\b)|_)(?:xox[abposr]-|xoxe\.xox[bp]-|xoxe-[0-9]-|xapp-[0-9]-)[A-Za-z0-9-]{10,}";
/// Secret and restricted keys, and webhook signing secrets (`whsec_…`).
const STRIPE_KEY: &str = r"(?:(?-u:\b)|_)(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/]{24,}={0,2})";
/// `SG.` + key id + `.` + secret (22 and 43 characters in practice).
const SENDGRID_KEY: &str = r"(?-u:\b)SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}";
/// Twilio API key SIDs: `SK` + 32 hex digits.
const TWILIO_KEY: &str = r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)";
/// A GitHub token broken over two lines (a wrapped terminal, a quoted string continued on
/// the next line): the head on one line, the rest of the token starting the next.
const GITHUB_TOKEN_SPLIT: &str = r#"(?:(?-u:\b)|_)(?:gh[pousr]_(?P<head>[A-Za-z0-9]{1,35})|github_pat_(?P<pat>[A-Za-z0-9_]{1,81}))[ \t"'+\\]*\r?\n[ \t>#*/"'+-]*(?P<tail>[A-Za-z0-9_]{1,82})"#;
/// Tokens known by their prefix or shape that the kinds above do not cover: HashiCorp Vault
/// service, batch and recovery tokens (`hvs.`, `hvb.`, `hvr.`), Google OAuth access tokens
/// (`ya29.`), age and SOPS secret keys, Shopify access tokens and secrets, Discord bot
/// tokens (a base64 user id starting `M`, `N` or `O`, a timestamp, an HMAC).
const VENDOR_TOKEN: &str = r"(?:(?-u:\b)|_)(?:hv[sbr]\.[A-Za-z0-9_-]{24,}|ya29\.[A-Za-z0-9_.-]{20,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}|[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?-u:\b)";
const GOOGLE_API_KEY: &str = r"(?:(?-u:\b)|_)AIza[A-Za-z0-9_-]{35,}";
const AUTHORIZATION_HEADER: &str = r#"(?i)(?-u:\b)(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?P<scheme>[A-Za-z][A-Za-z0-9_-]{0,23})[ \t]+)?(?P<secret>[A-Za-z0-9._~+/-]+=*)"#;
const BEARER_WORD: &str = r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)";
const URL_PASSWORD: &str = r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s/?#"'<>]+)@"#;
/// A URL password holding `/`, `?` or `#` (`redis://:Tr0ub/4dor9x@cache`), which
/// [`URL_PASSWORD`] stops at: up to the `@` before a host. A port and path before an `@`
/// (`http://host:8080/users/@alice`) is rejected by its check.
const URL_PASSWORD_WIDE: &str =
    r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>\[\]]*:(?P<secret>[^\s/?#"'<>@]*[/?#][^\s"'<>@]*)@[A-Za-z0-9\[]"#;
/// An ODBC or ADO.NET password in braces (`PWD={Tr0ub4dor&3x!};`), which may hold `;` and `&`.
const BRACED_PASSWORD: &str = r"(?i)(?-u:\b)(?:pwd|password)[ \t]*=[ \t]*\{(?P<secret>[^}\n]{1,200})\}";
/// `key` `=`/`:`/`:=`/`=>` value, where the value is double-quoted (with escapes),
/// single-quoted, or a bare word; markdown bold around the key is allowed
/// (`**Password:** hunter2`). A bare word cannot start with a character that makes it
/// a comparison (`==`), a path (`::`), a reference or a placeholder; one starting with `<` is
/// taken only in angle brackets that hold a password (`<Tr0ub4dor&3>`, see the check).
///
/// Keys and bare values (128 characters each) are bounded so that a rejected match never
/// spans the rest of a long line: `b:b:b:…` would otherwise cost quadratic time. An
/// accepted bare value is extended to the end of its run by [`bare_run_end`].
const ASSIGNMENT: &str = r#"(?-u:\b)(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,127})(?:\\?["'])?[ \t]*(?P<sep>:=|=>|:|=)(?:\*\*?)?[ \t]*(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|\\"(?P<edq>[^"\\\n]{0,256})\\"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|(?P<bare>[^\s"'`,;&\\=:>(){}\[\]$*%|][^\s"'`,;&\\]{0,127}))"#;
/// A command-line flag followed by its value (`--password hunter2`). (`password hunter2`
/// without dashes, as in `.netrc`, is [`PROSE_PASSWORD`]'s.)
const FLAG: &str = r#"(?m)(?:^|[ \t"'=(])--?(?P<key>[A-Za-z][A-Za-z0-9_-]*)[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\\<$=:-][^\s"'`\\]*))"#;
/// A password named in prose, up to its separator (`prose.rs` reads the value): the label
/// anywhere in a line (also as the end of a key: `db_password`, `dbPassword`), an optional
/// closing quote or bold, then a separator — a colon (ASCII, fullwidth, small, modifier,
/// ratio), a table's `|`, a dash, an arrow, a comma, `'s`, ` (`, ` to `, a copula of another
/// language (`ist`, `est`, `是`, `は`) —, a qualifier ("password for the staging db:") or
/// spaces only. The value is not in the pattern: bounded repetitions of it would multiply
/// the prefilter's automaton, which every text pays for.
const PROSE_PASSWORD: &str = r#"(?i)(?P<label>passwords?|passwd|passphrase|passcode|pwd|pass|pw|secret|credentials?|passwort|mot[ \t]de[ \t]passe|contraseña|hasło|lösenord|kennwort|wachtwoord|senha|пароль|密码|密碼|口令|パスワード|비밀번호)(?:["'`]|\*\*?)?(?:[ \t]*(?P<sep>[:：﹕꞉∶︓|—–→,]|->|⇒|-[ \t]|是|为|為|は|는|은)|(?P<possessive>(?-i:['’]s))[ \t]|[ \t]+(?P<word_sep>(?:to|ist|est|es|é|era|war|était|это)[ \t]|\()|[ \t]+(?P<qualifier>for|of|on)[ \t]|[ \t]+)"#;
/// "the admin password is hunter2", "the API key was set to …": a secret named in prose,
/// then its value.
const PROSE_SECRET: &str = r#"(?i)(?-u:\b)(?P<key>password|passwd|passphrase|passcode|pwd|secret|token|api[ _-]?key|access[ _-]?key|secret[ _-]?key)(?:[ \t]+(?:for|of)(?:[ \t]+[^\s]+){1,3}?)?[ \t]+(?:(?:is|was|has[ \t]+been)[ \t]+(?:set|changed|reset|updated)[ \t]+to|(?:is|was)(?:[ \t]+(?:now|still|currently))?(?:[ \t]*:)?)[ \t]+(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|`(?P<bq>[^`\n]{1,200})`|(?P<bare>[^\s"'`]{1,200}))"#;
/// `mysql -u root -pS3cret`: the MySQL family's password glued to `-p` (a spaced word after
/// `-p` is the database name).
const MYSQL_PASSWORD: &str = r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mysqlsh|mariadb|mariadb-dump|mariadb-admin)(?:[ \t]+[^\s]+){0,16}?[ \t]+-p(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"'][^\s]*)"#;
/// `docker login -u bot -p hunter2 registry`, and its kin; `sshpass -p`; `redis-cli -a`.
const LOGIN_PASSWORD: &str = r#"(?-u:\b)(?:(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:[ \t]+registry)?)[ \t]+login(?:[ \t]+[^\s]+){0,16}?[ \t]+(?:-p|--password)|sshpass(?:[ \t]+[^\s]+){0,4}?[ \t]+-p|redis-cli(?:[ \t]+[^\s]+){0,16}?[ \t]+(?:-a|--pass))(?:[ \t]+|=)(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"'][^\s]*)"#;
/// An Oracle login, `user/password@db`: after `sqlplus`, `expdp` and the other tools (where
/// `user/password` alone logs in too), after `connect` at a line's or a `SQL>` prompt's
/// start, and in a thin JDBC URL. The password may be double-quoted.
const ORACLE_LOGIN: &str = r#"(?:(?-u:\b)(?P<tool>(?i-u:sqlplus|sqlldr|sqlcl|expdp|impdp|exp|imp|rman|dgmgrl))(?:[ \t]+-[A-Za-z]+|[ \t]+(?i-u:target|catalog|auxiliary))*[ \t]+(?i-u:userid=)?|(?-u:\b)(?i-u:target|catalog|auxiliary)[ \t]+|(?m:^|SQL>)[ \t]*(?i-u:conn(?:ect)?)[ \t]+|(?i-u:jdbc:oracle:[a-z0-9]+:))["']?[A-Za-z][A-Za-z0-9_$#.]{0,127}/(?P<secret>"[^"\n]{1,128}"|[^\s@/"']{1,128})(?P<after>@|[ \t\r\n]|$)"#;
/// The signature of a signed URL: an Azure SAS `sig=`, S3's `X-Amz-Signature=`, Google
/// Cloud Storage's `X-Goog-Signature=`, a generic `signature=` — anyone holding the URL
/// holds the grant until it expires.
const URL_SIGNATURE: &str = r"(?:[?&;]|\\u0026|%26|%3[Ff])(?i-u:sig|signature|x-amz-signature|x-goog-signature)(?:=|%3[Dd])(?P<secret>[A-Za-z0-9%+/=_.~-]{16,})";
/// A pair of a URL-encoded form or query (`password%3Dhunter2%26…`): the key's `=` is
/// `%3D`; the value ends before `%26` (`&`), which the check finds. Also encoded twice
/// (`password%253Dhunter2%2526…`, a query inside a `state` or `next` parameter): `%` is
/// `%25` there; or three times (`%25253D`). Bounded as [`ASSIGNMENT`] is: a rejected match is searched again one
/// character on, and an unbounded value would make a long run of pairs quadratic.
const URL_ENCODED_PAIR: &str = r#"(?:(?-u:\b)|%(?:25){0,2}(?:26|3[Ff]|20))(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,63})(?P<sep>%(?:25){0,2}3[Dd])(?P<secret>[^\s&"'<>`]{1,128})"#;
/// A pair of URL-encoded JSON (`%7B%22password%22%3A%22hunter2%22%7D`), encoded once or
/// twice (`%2522`), with `+` or `%20` for a space around the colon (or the colon left as it
/// is, `%22password%22:%22…`): the value ends before the encoded closing quote, which the
/// check finds. Bounded as [`URL_ENCODED_PAIR`].
const URL_ENCODED_JSON_PAIR: &str = r#"%(?:25)?22(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,63})%(?:25)?22(?:\+|%(?:25)?20){0,4}(?P<sep>%(?:25)?3[Aa]|:)(?:\+|%(?:25)?20){0,4}%(?:25)?22(?P<secret>[^\s&"'<>`]{1,128})"#;
/// `curl -u user:password`.
const CURL_USER: &str = r#"(?:^|[ \t])(?:-u|--user)[ \t]+["']?[^\s:"']*:(?P<secret>[^\s"']+)"#;

/// A finding: the byte range to redact and its kind.
pub(super) struct Finding {
    pub(super) range: Range<usize>,
    pub(super) kind: &'static str,
}

/// One detector: a pattern, and the check that turns a match into a finding (or rejects
/// it as a look-alike).
pub(super) struct Detector {
    pub(super) pattern: &'static str,
    pub(super) check: fn(&str, &Captures<'_>) -> Option<Finding>,
}

pub(super) const DETECTORS: &[Detector] = &[
    Detector { pattern: PRIVATE_KEY, check: |_, caps| whole(caps, "private-key") },
    Detector { pattern: PUTTY_KEY, check: check_putty_key },
    Detector { pattern: JWT, check: |_, caps| whole(caps, "jwt") },
    Detector { pattern: ANTHROPIC_KEY, check: check_anthropic_key },
    Detector { pattern: OPENAI_KEY, check: check_openai_key },
    Detector { pattern: GITHUB_TOKEN, check: |_, caps| token_with_prefix(caps, "github-token") },
    Detector { pattern: GITHUB_TOKEN_SPLIT, check: check_github_token_split },
    Detector { pattern: GITLAB_TOKEN, check: |_, caps| token_with_prefix(caps, "gitlab-token") },
    Detector { pattern: NPM_TOKEN, check: |_, caps| token_with_prefix(caps, "npm-token") },
    Detector { pattern: HUGGINGFACE_TOKEN, check: |_, caps| token_with_prefix(caps, "huggingface-token") },
    Detector { pattern: BRAIN_TOKEN, check: |_, caps| token_with_prefix(caps, "brain-token") },
    Detector { pattern: AWS_ACCESS_KEY, check: |_, caps| whole(caps, "aws-access-key") },
    Detector { pattern: SLACK_WEBHOOK, check: |_, caps| whole(caps, "slack-webhook") },
    Detector { pattern: SLACK_TOKEN, check: check_slack_token },
    Detector { pattern: STRIPE_KEY, check: |_, caps| token_with_prefix(caps, "stripe-key") },
    Detector { pattern: GOOGLE_API_KEY, check: |_, caps| token_with_prefix(caps, "google-api-key") },
    Detector { pattern: VENDOR_TOKEN, check: check_vendor_token },
    Detector { pattern: SENDGRID_KEY, check: check_sendgrid_key },
    Detector { pattern: TWILIO_KEY, check: check_twilio_key },
    Detector { pattern: AUTHORIZATION_HEADER, check: check_authorization_header },
    Detector { pattern: BEARER_WORD, check: check_bearer_word },
    Detector { pattern: URL_PASSWORD, check: |_, caps| secret_unless_placeholder(caps, "url-password") },
    Detector { pattern: URL_PASSWORD_WIDE, check: check_url_password_wide },
    Detector { pattern: URL_SIGNATURE, check: |_, caps| secret_unless_placeholder(caps, "url-signature") },
    Detector { pattern: BRACED_PASSWORD, check: check_braced_password },
    Detector { pattern: MYSQL_PASSWORD, check: check_cli_password },
    Detector { pattern: LOGIN_PASSWORD, check: check_cli_password },
    Detector { pattern: ORACLE_LOGIN, check: check_oracle_login },
    Detector {
        pattern: URL_ENCODED_PAIR,
        check: |text, caps| check_url_encoded_pair(text, caps, EncodedEnd::Ampersand),
    },
    Detector {
        pattern: URL_ENCODED_JSON_PAIR,
        check: |text, caps| check_url_encoded_pair(text, caps, EncodedEnd::Quote),
    },
    Detector { pattern: ASSIGNMENT, check: check_assignment },
    Detector { pattern: FLAG, check: check_flag },
    Detector { pattern: PROSE_SECRET, check: check_prose_secret },
    Detector { pattern: CURL_USER, check: check_curl_user },
];

/// Index of the `<private>` opening tag in [`PATTERNS`]; detector `i` is at `i + 1`.
pub(super) const PRIVATE_OPEN_TAG_INDEX: usize = 0;

/// The prefilter: one pass tells whether the text holds a `<private>` tag and which
/// detectors can match at all.
pub(super) static PATTERNS: LazyLock<RegexSet> = LazyLock::new(|| {
    let patterns = std::iter::once(PRIVATE_OPEN_TAG).chain(DETECTORS.iter().map(|detector| detector.pattern));
    // The lazy DFA's cache: at the default 2 MiB, runs that start many candidates (`k%3Dv-`,
    // `sqlplus a/b ` repeated) made it give up and fall back to a slower engine, 100 times
    // the clean-text cost. 16 MiB at most, per thread that redacts.
    regex::RegexSetBuilder::new(patterns)
        .dfa_size_limit(16 * 1024 * 1024)
        .build()
        .expect("redaction patterns are valid")
});

/// The detectors' regexes, compiled once, in [`DETECTORS`] order.
pub(super) static DETECTOR_REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    DETECTORS.iter().map(|detector| Regex::new(detector.pattern).expect("redaction pattern is valid")).collect()
});

/// Words every label of [`PROSE_PASSWORD`] written in ASCII contains (`Passwort` and `mot de
/// passe` contain `pass`): whether it can match at all. Not in the [`PATTERNS`] set, whose
/// one automaton every text pays for: a pattern there, even these literals alone, made the
/// set's scan of clean text 40-70 % slower, while a search for four literals on its own
/// costs a few microseconds per 64 KB.
const PROSE_PASSWORD_ASCII_LABEL: &str = r"(?i)pass|pw|secret|credential";
/// The labels of other languages, searched only in text that is not all ASCII (adding them
/// to the four literals above made that search thirty times slower; text in those languages
/// nearly always has a letter outside ASCII somewhere, and `contraseña`, `пароль` or `密码`
/// are not ASCII themselves).
const PROSE_PASSWORD_OTHER_LABEL: &str =
    r"(?i)contraseña|hasło|lösenord|kennwort|wachtwoord|senha|пароль|密码|密碼|口令|パスワード|비밀번호";

/// The prose password detector: its two label searches and its pattern, compiled once.
pub(super) struct ProsePassword {
    ascii_label: Regex,
    other_label: Regex,
    pub(super) detector: Regex,
}

impl ProsePassword {
    /// Whether `text` names a label [`PROSE_PASSWORD`] knows.
    pub(super) fn may_match(&self, text: &str) -> bool {
        self.ascii_label.is_match(text) || (!text.is_ascii() && self.other_label.is_match(text))
    }
}

pub(super) static PROSE_PASSWORD_DETECTOR: LazyLock<ProsePassword> = LazyLock::new(|| ProsePassword {
    ascii_label: Regex::new(PROSE_PASSWORD_ASCII_LABEL).expect("prose label pattern is valid"),
    other_label: Regex::new(PROSE_PASSWORD_OTHER_LABEL).expect("prose label pattern is valid"),
    detector: Regex::new(PROSE_PASSWORD).expect("prose password pattern is valid"),
});

pub(super) static PRIVATE_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i-u:<(/?)private\s*>)").expect("private tag pattern is valid"));
