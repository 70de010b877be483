//! Rules on key names and values: which keys name a secret, which values are placeholders,
//! code or identifiers, and the entropy rule for random key material.

use super::{HIGH_ENTROPY_MIN_BITS, HIGH_ENTROPY_MIN_LEN};

/// Splits a key into lowercase words at `_`, `-`, `.` and camelCase boundaries:
/// `clientSecret` → `client secret`, `APIKey` → `api key`, `DB_PASSWORD` → `db password`.
pub(super) fn key_words(key: &str) -> Vec<String> {
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

/// Where the key that ends at `key_start`'s word starts when it is glued to what precedes it:
/// `db_password`, `dbPassword`, `--cdc-password` (at most 64 bytes back).
pub(super) fn glued_key_start(text: &str, key_start: usize) -> usize {
    let glued = text[..key_start]
        .bytes()
        .rev()
        .take(64)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    key_start - glued
}

/// Whether a key's name says its value is a secret. Only the last word (or last two)
/// counts: `GITHUB_TOKEN` and `client_secret` do, `TOKEN_BUDGET` and `password_reset_url`
/// do not.
pub(super) fn is_secret_key(words: &[String], value: &str) -> bool {
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
pub(super) fn is_aws_secret(words: &[String], value: &str) -> bool {
    words.iter().any(|word| word == "aws")
        && words.iter().any(|word| word == "secret")
        && value.len() == 40
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'='))
}

/// Values that by their shape cannot be anyone's secret: empty, `<your-key>`, `${VAR}`,
/// `$VAR`, `{{ var }}`, `%(var)s`, masks (`****`, `xxxx`, `...`), `n/a`, `TBD`,
/// `your-api-key-here`, and an earlier redaction marker (which keeps redaction idempotent).
pub(super) fn is_placeholder(value: &str) -> bool {
    let value = value.trim();
    if value.is_empty() || value.contains("[REDACTED:") {
        return true;
    }
    if let Some(inside) = value.strip_prefix('<').and_then(|rest| rest.strip_suffix('>')) {
        return !is_bracketed_secret(inside);
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
    // "Not applicable", "to be decided": a value not given.
    if ["n/a", "tbd", "tba"].iter().any(|word| word.eq_ignore_ascii_case(value)) {
        return true;
    }
    // `your-api-key-here`, `YOUR_TOKEN`, `your password`; not `yourMum1!`.
    value.get(..4).is_some_and(|prefix| prefix.eq_ignore_ascii_case("your"))
        && value.chars().all(|c| c.is_ascii_alphabetic() || matches!(c, '-' | '_' | ' ' | '.'))
}

/// The inside of a value in angle brackets that no placeholder is made of (`<Tr0ub4dor&3>`,
/// `<Xk9mQ2vL>`): one word of six characters or more, starting with a letter or digit,
/// holding letters and digits, and either a symbol (`!@#$%^&*+=?~`) or mixed case with a
/// digit inside a word — followed by a lower-case letter (`Tr0ub`, `Passw0rd`) or by a
/// capital that starts no word (`Xk9mQ`). Placeholders are words and names, a number after
/// a word or before a capitalized one: `<your-key>`, `<PASSWORD>`, `<db password>`,
/// `<api_key>`, `<YOUR_TOKEN_2>`, `<Password1>`, `<sha256>`, `<oauth2Token>`; a URL
/// (`<https://…?a=1>`) is not a password either.
pub(super) fn is_bracketed_secret(inside: &str) -> bool {
    let bytes = inside.as_bytes();
    if inside.chars().count() < 6
        || !inside.starts_with(|c: char| c.is_alphanumeric())
        || inside.contains(|c: char| c.is_whitespace() || "<>()[]{}\"'`".contains(c))
        || inside.contains("://")
        || !has_letter_and_digit(inside)
    {
        return false;
    }
    let symbol = bytes.iter().any(|b| b"!@#$%^&*+=?~".contains(b));
    let mixed_case = bytes.iter().any(u8::is_ascii_uppercase) && bytes.iter().any(u8::is_ascii_lowercase);
    let digit_inside_a_word = (1..bytes.len()).any(|at| {
        let lower_after = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_lowercase()).count();
        bytes[at - 1].is_ascii_digit()
            && (bytes[at].is_ascii_lowercase() || (bytes[at].is_ascii_uppercase() && lower_after(at + 1) < 2))
    });
    symbol || (mixed_case && digit_inside_a_word)
}

/// `$DB_PASSWORD`, `$S3_TOKEN`: the shape of an environment variable's name (after its `$`):
/// upper case, and digits only in a name of several words. `$ECRET9` (a digit glued to one
/// word) and `$ecret` are not; `$UPPERCASE` cannot be told from `$PASSWORD` and is one.
pub(super) fn is_environment_name(name: &str) -> bool {
    is_identifier(name)
        && !name.bytes().any(|b| b.is_ascii_lowercase())
        && (name.contains('_') || !name.bytes().any(|b| b.is_ascii_digit()))
}

/// Keyword values of config and code: booleans, nulls and common type names.
pub(super) fn is_literal(value: &str) -> bool {
    #[rustfmt::skip]
    const LITERALS: &[&str] = &[
        "true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off", "read", "write",
        "str", "string", "bool", "int", "bytes", "secretstr",
    ];
    LITERALS.iter().any(|literal| literal.eq_ignore_ascii_case(value))
}

/// An unquoted value that is an expression: a call, an index, a generic or a block
/// (`tokens.next()`, `env[…]`, `Option<String>`), or a dotted path (`config.token`,
/// `self::TOKEN`, `ptr->token`) — but not one whose segments are key material: many tokens
/// are dotted (`hvs.CAES…`, `ya29.a0Af…`, a Discord bot token's three parts), and a path's
/// names are words.
pub(super) fn looks_like_code(value: &str) -> bool {
    if value.contains(['(', ')', '[', ']', '{', '}', '<', '>']) || value.starts_with(['&', '*', '$', '%']) {
        return true;
    }
    let path = value.replace("::", ".").replace("->", ".");
    let mut segments = path.split('.');
    let first_is_identifier = segments.next().is_some_and(is_identifier);
    let mut rest = segments.peekable();
    let dotted = first_is_identifier && rest.peek().is_some() && rest.all(is_identifier);
    dotted && !(path.split('.').any(looks_high_entropy) || looks_high_entropy(&path.replace('.', "")))
}

pub(super) fn is_identifier(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn is_auth_scheme(value: &str) -> bool {
    ["bearer", "basic", "token", "digest", "negotiate"].iter().any(|scheme| scheme.eq_ignore_ascii_case(value))
}

pub(super) fn is_one_repeated_char(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_none_or(|first| chars.all(|c| c == first))
}

pub(super) fn has_letter_and_digit(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_alphabetic()) && value.bytes().any(|b| b.is_ascii_digit())
}

pub(super) fn has_upper_lower_digit(value: &str) -> bool {
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
pub(super) fn shannon_entropy(value: &str) -> f64 {
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
