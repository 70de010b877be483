//! Passwords named in prose: a label (`password`, `passphrase`, `secret`, `pw`, …) anywhere in
//! a sentence, then its value — "db password: X", "Login is admin, password X", "- **DB
//! password**: X" — told apart from prose about passwords ("reset your password in
//! settings", "password: see the vault") by the shape of the value and what follows it.

use std::ops::Range;

use regex::Captures;

use super::checks::{line_after, line_before};
use super::patterns::Finding;
use super::values::*;

/// How much a label says that a value follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Label {
    /// `password`, `passwd`, `passphrase`, `passcode` and their translations (`Passwort`,
    /// `mot de passe`, `contraseña`, `senha`, `Kennwort`, `wachtwoord`, `hasło`, `lösenord`,
    /// `пароль`, `密码`, `パスワード`, `비밀번호`): what follows a colon is the password unless
    /// it reads as prose.
    Password,
    /// `secret`, `credential(s)`, `pass`, `pw`, `pwd`: common words (or a shell command) in
    /// prose, so the value must look like a password itself.
    Ambiguous,
    /// `pass`, `pw`, `pwd` without a separator: "pass the test", "pwd /home" — only a
    /// separator makes them labels.
    AmbiguousWithSeparator,
}

/// The colons of the scripts a label may be written in: ASCII, fullwidth, small, the
/// modifier letter and the ratio sign (a look-alike).
const COLONS: &str = ":：﹕꞉∶︓";

/// Separators after a label.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Separator {
    /// `:` and its look-alikes ([`COLONS`]): "password: X".
    Colon,
    /// A table's `|`, a dash, an arrow, a comma, `(`, `'s`, `to`, another language's copula:
    /// only a value that looks like a password counts.
    Weak,
    /// Spaces only: "password X".
    None,
}

/// "db password: X" and its kin (see [`PROSE_PASSWORD`](super::patterns)): accepted when
/// the value looks like a password ([`looks_like_password`]) whatever the label and the
/// separator, or when it is quoted after a password label, or — after a password label, a
/// colon and on the same line — when it is one word or number that ends the sentence and is
/// not a word that describes the password (`required`, `hidden`, `unchanged`, …). A
/// dictionary word there is redacted: the wifi password may well be `sunshine`.
pub(super) fn check_prose_password(text: &str, caps: &Captures<'_>, words: &mut WordEnds) -> Option<Finding> {
    let label_match = caps.name("label")?;
    let whole = caps.get(0)?;
    let key_start = glued_key_start(text, label_match.start());
    if text[..key_start].ends_with(['$', '%', '@', ':', '=']) {
        // `$DB_PASSWORD`, `%PASSWORD%`, `@password`: a variable or a parameter, named;
        // `username:password:uid`, `dc=com:password:`: a field in a described format.
        return None;
    }
    let label = label_of(&text[key_start..label_match.start()], label_match.as_str())?;
    let separator_match = caps.name("sep").or_else(|| caps.name("possessive")).or_else(|| caps.name("word_sep"));
    let (separator, value_search_start) = match (caps.name("qualifier"), separator_match) {
        (Some(_), _) => separator_after_qualifier(text, whole.end())?,
        (None, Some(sep)) if sep.as_str().chars().all(|c| COLONS.contains(c)) => (Separator::Colon, whole.end()),
        (None, Some(_)) => (Separator::Weak, whole.end()),
        (None, None) => (Separator::None, whole.end()),
    };
    if label == Label::AmbiguousWithSeparator && separator == Separator::None {
        return None;
    }
    let qualified = caps.name("qualifier").is_some();
    let found = value_after(text, value_search_start)?;
    let (value, quoted_by, crossed_line) = (found.range.clone(), found.quote, found.crossed_line);
    let value_text = &text[value.clone()];
    let label_word = label_match.as_str();
    // `password: <Tr0ub4dor&3>`: a password in angle brackets, not a placeholder's.
    let bracketed =
        value_text.strip_prefix('<').and_then(|rest| rest.strip_suffix('>')).is_some_and(is_bracketed_secret);
    if value_text.is_empty()
        || (value_text.starts_with([':', '=', '>', '<', '|']) && !bracketed)
        || is_placeholder(value_text)
        || is_literal(value_text)
        || value_text.eq_ignore_ascii_case(label_word)
    {
        return None;
    }
    // A bare word may run on into what follows it (`X,and`, `X;see`): it counts as a
    // password when its head does, and is redacted whole.
    let head = value_text.split([',', ';']).next().unwrap_or(value_text);
    let accepted = if crossed_line && separator != Separator::Colon {
        false
    } else if bracketed || looks_like_password(value_text) || (quoted_by.is_none() && looks_like_password(head)) {
        true
    } else if let Some(quote) = quoted_by {
        quoted_value_counts(text, key_start, value.clone(), quote, label, separator)
    } else {
        label == Label::Password
            && separator == Separator::Colon
            && !crossed_line
            && !qualified
            && !starts_a_config_line(text, key_start)
            && word_ends_the_sentence(text, value.end)
            && reads_as_a_password_word(value_text)
    };
    if !accepted {
        return None;
    }
    let end = if found.longer { words.end_from(text, value.end) } else { value.end };
    Some(Finding { range: value.start..end, kind: "secret-assignment" })
}

/// The longest word of a qualifier: 24 characters of up to four bytes.
const QUALIFIER_WORD_MAX_BYTES: usize = 96;

/// "password for the staging db: X": up to three words after `for`/`of`/`on`, then a colon,
/// a pipe or a dash. Returns the separator and where the value may start.
fn separator_after_qualifier(text: &str, words_start: usize) -> Option<(Separator, usize)> {
    let line = line_after(text, words_start);
    let mut at = 0;
    for _ in 0..3 {
        let word_len = line[at..]
            .find(|c: char| {
                c.is_whitespace() || c == '|' || c == '*' || c == '"' || c == '\'' || c == '`' || COLONS.contains(c)
            })
            .unwrap_or(line.len() - at);
        if word_len == 0 || word_len > QUALIFIER_WORD_MAX_BYTES {
            return None;
        }
        at += word_len;
        let spaces = line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len();
        let after_spaces = &line[at + spaces..];
        if let Some(sep) = after_spaces.chars().next().filter(|c| COLONS.contains(*c) || matches!(c, '|' | '—' | '–'))
        {
            let kind = if COLONS.contains(sep) { Separator::Colon } else { Separator::Weak };
            return Some((kind, words_start + at + spaces + sep.len_utf8()));
        }
        at += spaces;
        if spaces == 0 {
            return None;
        }
    }
    None
}

/// Punctuation of Chinese and Japanese text, which is written without spaces: it ends a
/// bare value (`密码：X，用户：Y`).
const CJK_PUNCTUATION: &str = "，。、；：！？（）「」『』【】";

/// Quote characters a value may be written in, and the character that closes each.
const QUOTES: &[(char, char)] = &[('"', '"'), ('\'', '\''), ('`', '`'), ('“', '”'), ('«', '»')];

/// A value after a label, as [`value_after`] found it.
struct FoundValue {
    range: Range<usize>,
    /// The opening quote of a quoted value (a backtick span is judged as a bare word).
    quote: Option<char>,
    /// The value is on the line after its label.
    crossed_line: bool,
    /// A bare value read up to [`BARE_VALUE_WINDOW`] characters of a longer word: judged on
    /// that much, redacted to the end of the word.
    longer: bool,
}

/// How much of a bare value is read to judge it: enough for any password, and a bound, so a
/// long word holding many labels costs linear time.
const BARE_VALUE_WINDOW: usize = 128;

/// The value after a separator: optional markdown bold and spaces, at most one line break
/// (the check accepts it after a colon only), then a quoted value (its inside, closed on the
/// same line within the checks' line context, 256 bytes) or one bare word (see
/// [`bare_value`]).
fn value_after(text: &str, start: usize) -> Option<FoundValue> {
    let mut at = start;
    let skip = |at: usize, chars: &[char]| at + (text[at..].len() - text[at..].trim_start_matches(chars).len());
    at = skip(at, &['*']);
    at = skip(at, &[' ', '\t']);
    let mut crossed_line = false;
    for line_break in ["\r\n", "\n"] {
        if text[at..].starts_with(line_break) {
            crossed_line = true;
            at = skip(at + line_break.len(), &[' ', '\t']);
            break;
        }
    }
    let first = text[at..].chars().next()?;
    if let Some(&(open, close)) = QUOTES.iter().find(|(open, _)| *open == first) {
        let inside_start = at + open.len_utf8();
        let line = line_after(text, inside_start);
        let inside_len = line.find(close)?;
        let inside = &text[inside_start..inside_start + inside_len];
        let value_start = inside_start + (inside.len() - inside.trim_start_matches([' ', '\t']).len());
        let value_end = inside_start + inside.trim_end_matches([' ', '\t']).len();
        if value_start >= value_end {
            return None;
        }
        let quote = (open != '`').then_some(open);
        return Some(FoundValue { range: value_start..value_end, quote, crossed_line, longer: false });
    }
    let window: usize = bare_word(&text[at..]).take(BARE_VALUE_WINDOW).map(char::len_utf8).sum();
    let longer = bare_word(&text[at + window..]).next().is_some();
    let range = bare_value(text, at..at + window)?;
    Some(FoundValue { longer: longer && range.end == at + window, range, quote: None, crossed_line })
}

/// Where the bare word around a position ends, remembered across one detector's run over one
/// text: a long word holding many labels (`password:Ab1&password:Ab1&…`, each value accepted
/// and redacted to the word's end) is read to its end once, not once per label, which cost
/// quadratic time (1 s for 32 KB).
#[derive(Default)]
pub(super) struct WordEnds {
    /// Positions from `start` to `end` lie in one bare word that ends at `end`.
    known: Option<Range<usize>>,
}

impl WordEnds {
    /// The end of the bare word that `at` is in (or `at` when it starts no word); `text` is
    /// the same text at every call.
    pub(super) fn end_from(&mut self, text: &str, at: usize) -> usize {
        match &self.known {
            Some(known) if known.start <= at && at <= known.end => known.end,
            _ => {
                let end = at + bare_word(&text[at..]).map(char::len_utf8).sum::<usize>();
                self.known = Some(at..end);
                end
            }
        }
    }
}

/// The characters of the bare word `text` starts with: up to a space, a quote or the
/// punctuation of Chinese and Japanese text.
fn bare_word(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '`') && !CJK_PUNCTUATION.contains(*c))
}

/// A quoted value after a password label is a literal ("password: \"two words\""), unless
/// the quote closes a string the label is inside (`print("password:", pw)`), or, without a
/// separator, it is a plain word that does not end the sentence (`the password "Reset"
/// button`). After another label a quoted value must look like a password (checked before).
fn quoted_value_counts(
    text: &str,
    key_start: usize,
    value: Range<usize>,
    quote: char,
    label: Label,
    separator: Separator,
) -> bool {
    let value_text = &text[value.clone()];
    let inside_a_string = matches!(quote, '"' | '\'') && line_before(text, key_start).matches(quote).count() % 2 == 1;
    if label != Label::Password
        || inside_a_string
        || value_text.starts_with(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')'))
    {
        return false;
    }
    let after_closing_quote = value.end + text[value.end..].chars().next().map_or(0, char::len_utf8);
    match separator {
        Separator::Colon => true,
        Separator::Weak => !value_text.contains(char::is_whitespace),
        Separator::None => !is_plain_word(value_text) || word_ends_the_sentence(text, after_closing_quote),
    }
}

/// The kind of label, or `None` when the label is the end of another word (`bypass`,
/// `compass`, `topsecret`) rather than of a key (`db_pass`, `dbPass`, `pgpassword`).
fn label_of(glued_prefix: &str, label: &str) -> Option<Label> {
    let lower = label.to_lowercase();
    let password = !matches!(lower.as_str(), "secret" | "credential" | "credentials" | "pass" | "pw" | "pwd");
    let needs_separator = matches!(lower.as_str(), "pass" | "pw" | "pwd");
    let kind = match (password, needs_separator) {
        (true, _) => Label::Password,
        (false, true) => Label::AmbiguousWithSeparator,
        (false, false) => Label::Ambiguous,
    };
    let Some(last) = glued_prefix.chars().next_back() else { return Some(kind) };
    let word_boundary = matches!(last, '_' | '-' | '.')
        || (label.starts_with(|c: char| c.is_ascii_uppercase())
            && (last.is_ascii_lowercase() || last.is_ascii_digit()));
    // A password word ends its compounds (`pgpassword`, `1password`); the others are too
    // short or too common to (`bypass`, `compass`, `topsecret`).
    (word_boundary || kind == Label::Password).then_some(kind)
}

/// The bare value as written, without what cannot be part of it: a redaction marker glued to
/// it, a closing bracket it did not open (`(password: X)`), sentence punctuation and markdown
/// emphasis at its end.
fn bare_value(text: &str, bare: Range<usize>) -> Option<Range<usize>> {
    let mut end = bare.end;
    let token = &text[bare.clone()];
    if let Some(marker) = token.find("[REDACTED") {
        end = bare.start + marker;
    }
    let mut depth = [0i32; 4];
    for (offset, c) in text[bare.start..end].char_indices() {
        let (index, opens) = match c {
            '(' => (0, true),
            ')' => (0, false),
            '[' => (1, true),
            ']' => (1, false),
            '{' => (2, true),
            '}' => (2, false),
            '<' => (3, true),
            '>' | '»' | '”' => (3, false),
            _ => continue,
        };
        if opens {
            depth[index] += 1;
        } else if depth[index] == 0 {
            end = bare.start + offset;
            break;
        } else {
            depth[index] -= 1;
        }
    }
    let value = text[bare.start..end].trim_end_matches(['.', ',', ';', ':', '!', '?', '*']);
    let leading = value.len() - value.trim_start_matches('*').len();
    let start = bare.start + leading;
    let end = bare.start + value.len();
    (start < end).then_some(start..end)
}

/// The label starts its line (after indentation, a list marker or markdown emphasis): a
/// config line or a header, which the assignment detector judges by its own rules
/// (`Password: required` is a note there, `password: changeme` a value).
fn starts_a_config_line(text: &str, key_start: usize) -> bool {
    line_before(text, key_start).trim_matches([' ', '\t', '-', '*', '>', '#', '_', '`', '"', '\'']).is_empty()
}

/// The value is the last word of its sentence or line: "the wifi password: sunshine." — not
/// "password: see the vault", nor `password: pw,` in code.
fn word_ends_the_sentence(text: &str, value_end: usize) -> bool {
    let rest = line_after(text, value_end);
    let after_stop = rest.trim_start_matches(['.', '!', '?', ')', '*', '`', '"', '\'', '”', '»']);
    let stopped = after_stop.len() < rest.len();
    after_stop.trim().is_empty() || (stopped && after_stop.starts_with(char::is_whitespace))
}

/// One word or number that can be a password, not one that describes it: letters (a
/// capitalised word, not a `CamelCase` type), or four digits or more, or a short mix that is
/// no abbreviation (`e.g.`, `n/a`).
fn reads_as_a_password_word(value: &str) -> bool {
    #[rustfmt::skip]
    const DESCRIBING: &[&str] = &[
        "required", "optional", "empty", "blank", "unset", "set", "hidden", "masked", "redacted", "omitted",
        "removed", "unchanged", "changed", "updated", "reset", "expired", "invalid", "incorrect", "wrong",
        "missing", "unknown", "same", "different", "ok", "okay", "done", "fixed", "enabled", "disabled", "stored",
        "encrypted", "hashed", "saved", "rotated", "sent", "provided", "supplied", "needed", "forgotten", "locked",
        "weak", "strong", "secure", "insecure", "correct", "valid", "ignored", "accepted", "rejected", "supported",
        "unsupported", "prompt", "prompted", "interactive", "env", "environment", "keychain", "keyring", "vault",
        "random", "generated", "default", "tbd", "tba", "todo", "na", "n/a", "nothing", "see", "below", "above",
        "manual", "manually", "sso", "ldap", "oauth", "it", "this", "that", "yours", "mine", "any", "anything",
    ];
    if DESCRIBING.iter().any(|word| word.eq_ignore_ascii_case(value)) || looks_like_code(value) {
        return false;
    }
    if is_plain_word(value) {
        // `SecretString` is a type; `case-sensitive` an adjective.
        let camel_case = value.chars().skip(1).any(char::is_uppercase) && value.chars().any(char::is_lowercase);
        return !camel_case && !value.contains('-');
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return value.len() >= 4;
    }
    // Longer mixes were judged by `looks_like_password` already; a short one (`pw12`) counts
    // unless it is an abbreviation (`e.g.`, `n/a`, `i.e`).
    let abbreviation = value.split(['.', '/']).all(|part| part.chars().count() <= 2);
    (4..6).contains(&value.chars().count()) && !abbreviation && !looks_like_an_identifier(value)
}

fn is_plain_word(value: &str) -> bool {
    value.chars().all(|c| c.is_alphabetic() || matches!(c, '-' | '\''))
}

/// Whether a value, whatever its label, looks like a password: at least 6 characters without
/// spaces that mix letters with digits or symbols (`hunter2`, `Xk9$mQ2!vLp`), or random key
/// material ([`looks_high_entropy`]) — and are none of the words of technical prose that mix
/// them too: algorithm and product names (`argon2id`, `sha256`, `1Password`), versions,
/// dates, quantities (`12ms`), identifiers (`test_v2_login`, `AWS_ACCESS_KEY_ID`), paths,
/// URLs, e-mail addresses.
pub(super) fn looks_like_password(value: &str) -> bool {
    #[rustfmt::skip]
    const TECHNICAL: &[&str] = &[
        "sha1", "sha224", "sha256", "sha384", "sha512", "sha3", "md4", "md5", "base32", "base58", "base64",
        "argon2", "argon2i", "argon2d", "argon2id", "pbkdf2", "scrypt", "bcrypt", "oauth1", "oauth2", "http2",
        "http3", "utf8", "utf16", "utf32", "ipv4", "ipv6", "x509", "pkcs1", "pkcs7", "pkcs8", "pkcs11", "pkcs12",
        "ed25519", "x25519", "curve25519", "secp256k1", "secp256r1", "p256", "p384", "aes128", "aes256", "rsa2048",
        "rsa4096", "chacha20", "poly1305", "blake2", "blake2b", "blake3", "hmac256", "totp", "hotp", "fido2",
        "webauthn", "win32", "win64", "x86_64", "aarch64", "arm64", "1password",
    ];
    let length = value.chars().count();
    // Brackets are code (`f(x)`, `Vec<u8>`) or a man page's section (`passwd(5)`).
    if length < 6 || value.contains(|c: char| c.is_whitespace() || "()[]{}<>".contains(c)) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if TECHNICAL.contains(&lower.as_str())
        || value.contains("://")
        || value.starts_with(['/', '~', '.', '\\', '-'])
        || is_email_address(value)
        || is_path_to_a_file(value)
        || is_version_date_or_quantity(value)
        || looks_like_an_identifier(value)
        || is_an_assignment(value)
        || (length >= 7 && value.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return false;
    }
    let letter = value.chars().any(char::is_alphabetic);
    let digit = value.bytes().any(|b| b.is_ascii_digit());
    let symbol = value.bytes().any(|b| b"!@#$%^&*+=?~".contains(&b));
    (letter && (digit || symbol)) || looks_high_entropy(value)
}

/// `snake_case`, `kebab-case` or `dotted.name` made of words and numbers (`test_v2_login`,
/// `iso-8859-1`, `python3.11`), and `SCREAMING_SNAKE` names (`AWS_ACCESS_KEY_ID`).
fn looks_like_an_identifier(value: &str) -> bool {
    let separated = value.contains(['_', '-', '.']);
    if !separated || !value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        return false;
    }
    let screaming = value.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    let lower = value.bytes().all(|b| !b.is_ascii_uppercase());
    screaming || (lower && (value.contains('_') || value.split(['-', '.']).all(is_word_or_number)))
}

/// `password=X` after another label (`密码 password=X`): the assignment detector's, which
/// redacts the value, not the key. (`admin:Xk9…` after "credentials:" is a user and its
/// password, redacted together.)
fn is_an_assignment(value: &str) -> bool {
    let Some((key, _)) = value.split_once(['=', ':']) else { return false };
    let names_a_secret = key_words(key).last().is_some_and(|last| {
        ["password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "key"]
            .iter()
            .any(|word| last.ends_with(word))
    });
    is_identifier(key) && (value.as_bytes()[key.len()] == b'=' || names_a_secret)
}

fn is_word_or_number(part: &str) -> bool {
    part.bytes().all(|b| b.is_ascii_alphabetic()) || part.bytes().all(|b| b.is_ascii_digit())
}

fn is_email_address(value: &str) -> bool {
    let Some((user, domain)) = value.rsplit_once('@') else { return false };
    !user.is_empty()
        && domain.contains('.')
        && domain
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        && domain.rsplit('.').next().is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// `src/main.rs`, `config/app.yaml`: a relative path ending in a file name.
fn is_path_to_a_file(value: &str) -> bool {
    let Some((_, file)) = value.rsplit_once('/') else { return false };
    file.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty() && (1..=5).contains(&extension.len()) && extension.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// `v1.2.3`, `2026-11-21`, `10:00`, `12ms`, `8chars`, `2fa`, `100%`.
fn is_version_date_or_quantity(value: &str) -> bool {
    let body = value.strip_prefix(['v', 'V']).unwrap_or(value);
    if body.starts_with(|c: char| c.is_ascii_digit())
        && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b':' | b'/' | b'+'))
    {
        return true;
    }
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    let unit = &value[digits..];
    digits > 0
        && (1..=6).contains(&unit.len())
        && unit.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_alphabetic() || b == b'%')
}
