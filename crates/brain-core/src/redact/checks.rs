//! The checks: each turns a detector's match into a finding, or rejects a look-alike.

use std::ops::Range;

use regex::Captures;

use super::patterns::Finding;
use super::prose::looks_like_password;
use super::values::*;

pub(super) fn whole(caps: &Captures<'_>, kind: &'static str) -> Option<Finding> {
    let whole = caps.get(0)?;
    Some(Finding { range: whole.range(), kind })
}

/// A vendor token with a fixed prefix; rejected when the body is one repeated filler
/// character (`ghp_xxxxxxxx…` in documentation).
pub(super) fn token_with_prefix(caps: &Captures<'_>, kind: &'static str) -> Option<Finding> {
    #[rustfmt::skip]
    const PREFIXES: &[&str] = &[
        "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "npm_", "hf_",
        "sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_", "AIza", "brain_",
    ];
    let token = caps.get(0)?;
    let text = token.as_str().strip_prefix('_').unwrap_or(token.as_str());
    let body = PREFIXES.iter().find_map(|prefix| text.strip_prefix(prefix)).unwrap_or(text);
    if is_one_repeated_char(body) {
        return None;
    }
    Some(Finding { range: token.range(), kind })
}

/// [`VENDOR_TOKEN`](super::patterns): the kind named by the prefix; a Discord-shaped token
/// only when its first part mixes upper case, lower case and digits (random, not a word).
pub(super) fn check_vendor_token(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let token = caps.get(0)?;
    let text = token.as_str().strip_prefix('_').unwrap_or(token.as_str());
    let kind = if text.starts_with("hv") && text.as_bytes().get(3) == Some(&b'.') {
        "vault-token"
    } else if text.starts_with("ya29.") {
        "google-oauth-token"
    } else if text.starts_with("AGE-SECRET-KEY-1") {
        "age-secret-key"
    } else if text.starts_with("shp") && text.as_bytes().get(5) == Some(&b'_') {
        "shopify-token"
    } else {
        let first = text.split('.').next().unwrap_or_default();
        if !has_upper_lower_digit(first) {
            return None;
        }
        "discord-token"
    };
    let body = text.split_once(['.', '_']).map_or(text, |(_, body)| body);
    if is_one_repeated_char(body) {
        return None;
    }
    Some(Finding { range: token.range(), kind })
}

pub(super) fn check_anthropic_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    let body = &key.as_str().trim_start_matches('_')["sk-ant-".len()..];
    if !(body.bytes().any(|b| b.is_ascii_alphabetic()) && body.bytes().any(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "anthropic-key" })
}

/// `sk-…` is common in prose (`sk-learn`); a real key's random body mixes upper case, lower
/// case and digits.
pub(super) fn check_openai_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    if !has_upper_lower_digit(&key.as_str().trim_start_matches('_')["sk-".len()..]) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "openai-key" })
}

/// Slack tokens carry numeric ids after their prefix; `xoxb-not-a-token` has none.
pub(super) fn check_slack_token(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let token = caps.get(0)?;
    let body = token.as_str().split_once('-').map_or("", |(_, body)| body);
    if !body.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Finding { range: token.range(), kind: "slack-token" })
}

/// A GitHub token whose two parts, joined, have exactly the token's length (36 characters
/// after `ghp_`, 82 after `github_pat_`): a wrapped line does not change the token, while a
/// word that merely follows a truncated one would rarely complete it exactly.
pub(super) fn check_github_token_split(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let tail = caps.name("tail")?;
    let (head, length) = match (caps.name("head"), caps.name("pat")) {
        (Some(head), _) => (head, 36),
        (None, Some(pat)) => (pat, 82),
        (None, None) => return None,
    };
    let joined = format!("{}{}", head.as_str(), tail.as_str());
    if joined.len() != length || !has_letter_and_digit(&joined) || is_one_repeated_char(&joined) {
        return None;
    }
    Some(Finding { range: caps.get(0)?.start()..tail.end(), kind: "github-token" })
}

/// Bare AWS secret access keys: whole runs of exactly 40 characters of `A-Za-z0-9/+` (a
/// run also continues through `_`, `-` and `=`, which make it something else) that pass the
/// entropy rule ([`looks_high_entropy`]) with at least 4 bits per character. Git SHAs (hex),
/// paths and identifiers (word-like) and longer runs (base64 blobs, hashes) are not it. One
/// pass over the bytes, each run judged once.
pub(super) fn bare_aws_secrets(text: &str) -> impl Iterator<Item = Finding> + '_ {
    let in_run = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'_' | b'-' | b'=');
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at + bytes[at..].iter().position(|&b| in_run(b))?;
            let end = start + bytes[start..].iter().position(|&b| !in_run(b)).unwrap_or(bytes.len() - start);
            at = end;
            // Runs are ASCII, so their bounds are char boundaries.
            let value = &text[start..end];
            if value.len() == 40
                && !value.contains(['_', '-', '='])
                && looks_high_entropy(value)
                && shannon_entropy(value) >= 4.0
            {
                return Some(Finding { range: start..end, kind: "aws-secret-key" });
            }
        }
        None
    })
}

/// `SG.<id>.<secret>`: random parts (letters and digits), not a dotted name.
pub(super) fn check_sendgrid_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    let body = &key.as_str()["SG.".len()..];
    if !has_letter_and_digit(body) || body.split('.').any(is_one_repeated_char) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "sendgrid-key" })
}

/// `SK` + 32 hex digits, mixing letters and digits as random hex does.
pub(super) fn check_twilio_key(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.get(0)?;
    if !has_letter_and_digit(&key.as_str()[2..]) {
        return None;
    }
    Some(Finding { range: key.range(), kind: "twilio-key" })
}

/// The password of `mysql -pX`, `docker login -p X`, `sshpass -p X`, `redis-cli -a X`
/// (inside its quotes when quoted), unless it is a placeholder (`$MYSQL_PWD`).
pub(super) fn check_cli_password(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    let quoted = secret.as_str().starts_with(['"', '\'']);
    let range = if quoted { secret.start() + 1..secret.end() - 1 } else { secret.range() };
    let value = &secret.as_str()[range.start - secret.start()..range.end - secret.start()];
    if range.is_empty() || is_placeholder(value) {
        return None;
    }
    Some(Finding { range, kind: "cli-password" })
}

/// An Oracle login's password: after the tools whose `user/password` argument is nothing
/// but a login (`sqlplus`, `expdp`, …), with or without `@db`. After `connect` and the tools
/// whose names are also words (`exp`, `imp`, `rman`, `dgmgrl`), only before `@db`, and not
/// a plain word: `connect frontend/backend@v2`, `imp react/jsx@18` are prose.
pub(super) fn check_oracle_login(text: &str, caps: &Captures<'_>) -> Option<Finding> {
    let at = caps.name("after").is_some_and(|after| after.as_str() == "@");
    let tool = caps.name("tool").map(|tool| tool.as_str().to_ascii_lowercase());
    let login_tool = matches!(tool.as_deref(), Some("sqlplus" | "sqlldr" | "sqlcl" | "expdp" | "impdp"));
    if !login_tool {
        let secret = caps.name("secret")?.as_str();
        let plain_word = secret.chars().all(|c| c.is_ascii_alphabetic() || c == '.');
        if !at || plain_word {
            return None;
        }
    }
    check_cli_password(text, caps)
}

/// The base64 lines of a PuTTY key's private part: as many as its header says (at most
/// 999), each after a line break (or JSON's escaped `\n`) and any indent or quote mark.
pub(super) fn check_putty_key(text: &str, caps: &Captures<'_>) -> Option<Finding> {
    let count: usize = caps.name("count")?.as_str().parse().ok()?;
    let bytes = text.as_bytes();
    let mut at = caps.get(0)?.end();
    let (mut first, mut last) = (None, at);
    for _ in 0..count {
        // The line break: spaces, then `\r\n`/`\n` or their escapes.
        while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b'\r') {
            at += 1;
        }
        if bytes[at..].starts_with(b"\n") {
            at += 1;
        } else if bytes[at..].starts_with(b"\\n") {
            at += 2;
        } else if bytes[at..].starts_with(b"\\r\\n") {
            at += 4;
        } else {
            break;
        }
        while at < bytes.len() && matches!(bytes[at], b' ' | b'\t' | b'>' | b'#' | b'"') {
            at += 1;
        }
        let run =
            bytes[at..].iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')).count();
        if run < 4 {
            break;
        }
        first.get_or_insert(at);
        at += run;
        last = at;
    }
    Some(Finding { range: first?..last, kind: "private-key" })
}

/// The `secret` group as a finding of `kind`, unless it is a placeholder (a URL's password,
/// a signed URL's signature).
pub(super) fn secret_unless_placeholder(caps: &Captures<'_>, kind: &'static str) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if is_placeholder(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind })
}

/// What ends a URL-encoded value: an encoded `&` (a form's or a query's pair) or an encoded
/// `"` (a JSON string's).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum EncodedEnd {
    Ampersand,
    Quote,
}

/// A URL-encoded pair (`password%3D…`, `%22password%22%3A%22…%22`) whose key names a secret
/// (as [`check_assignment`] judges keys), or whose value is random material; encoded once,
/// twice or three times, as its separator says (`%3D`, `%253D`, `%25253D`). The value ends before the encoded `&` or
/// `"` of its level (encoded twice, also before one encoded once: the value's own `%` would
/// be `%25` there), is judged decoded (`%24%7BDB_PASSWORD%7D` is `${DB_PASSWORD}`, a
/// placeholder), and an accepted one runs on past the pattern's 128 characters to its end.
pub(super) fn check_url_encoded_pair(text: &str, caps: &Captures<'_>, end: EncodedEnd) -> Option<Finding> {
    let key = caps.name("key")?.as_str();
    // `%3D` once, `%253D` twice, `%25253D` three times; a JSON pair's literal `:` once.
    let quoted_twice = end == EncodedEnd::Quote && caps.get(0)?.as_str().starts_with("%2522");
    let levels = (caps.name("sep")?.as_str().matches("25").count() + 1).max(if quoted_twice { 2 } else { 1 });
    let end_code = match end {
        EncodedEnd::Ampersand => "26",
        EncodedEnd::Quote => "22",
    };
    let stops: Vec<Vec<u8>> =
        (0..levels).rev().map(|level| format!("%{}{end_code}", "25".repeat(level)).into_bytes()).collect();
    let stops: Vec<&[u8]> = stops.iter().map(Vec::as_slice).collect();
    let secret = caps.name("secret")?;
    let value = until_encoded(secret.as_str(), &stops);
    let decoded = percent_decoded(value, levels);
    if decoded.trim().is_empty() || is_placeholder(&decoded) || is_literal(&decoded) {
        return None;
    }
    let kind = if is_secret_key(&key_words(key), &decoded) {
        "secret-assignment"
    } else if looks_high_entropy(&decoded) {
        "high-entropy"
    } else {
        return None;
    };
    let end = if value.len() < secret.as_str().len() {
        secret.start() + value.len()
    } else {
        let rest = &text[secret.end()..];
        let run = rest.find(|c: char| c.is_whitespace() || matches!(c, '&' | '"' | '\'' | '<' | '>' | '`'));
        secret.end() + until_encoded(&rest[..run.unwrap_or(rest.len())], &stops).len()
    };
    Some(Finding { range: secret.start()..end, kind })
}

/// `text` up to the first of `stops` (encoded characters such as `%26`, either case).
fn until_encoded<'a>(text: &'a str, stops: &[&[u8]]) -> &'a str {
    let bytes = text.as_bytes();
    let end = (0..bytes.len())
        .find(|&at| {
            bytes[at] == b'%'
                && stops
                    .iter()
                    .any(|stop| bytes[at..].get(..stop.len()).is_some_and(|window| window.eq_ignore_ascii_case(stop)))
        })
        .unwrap_or(bytes.len());
    // The stops are ASCII and start with `%`: `end` is a char boundary.
    &text[..end]
}

/// `value` with its `%XX` escapes decoded, `times` over (a value of at most the pattern's
/// 128 characters: judged, not stored).
fn percent_decoded(value: &str, times: usize) -> String {
    let mut bytes = value.as_bytes().to_vec();
    for _ in 0..times {
        let mut decoded = Vec::with_capacity(bytes.len());
        let mut at = 0;
        while at < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            match (bytes[at], bytes.get(at + 1).copied().and_then(hex), bytes.get(at + 2).copied().and_then(hex)) {
                (b'%', Some(high), Some(low)) => {
                    decoded.push((high * 16 + low) as u8);
                    at += 3;
                }
                (b, _, _) => {
                    decoded.push(b);
                    at += 1;
                }
            }
        }
        bytes = decoded;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// "the admin password is hunter2": the value after a password named in prose counts when
/// quoted or when it is not a plain word ("the password is wrong", "… is case-sensitive"),
/// nor a quantity ("the password is 8 characters long"); after a token, secret or key it
/// must look like one (12 or more characters mixing letters and digits, or random).
/// Sentence punctuation after a bare value is kept.
pub(super) fn check_prose_secret(text: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.name("key")?.as_str().to_ascii_lowercase();
    let quoted = caps.name("dq").or_else(|| caps.name("sq")).or_else(|| caps.name("bq"));
    let value = match quoted.or_else(|| caps.name("bare")) {
        Some(value) if quoted.is_some() => value.range(),
        Some(bare) => {
            let trimmed = bare.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
            bare.start()..bare.start() + trimmed.len()
        }
        None => return None,
    };
    let value_text = &text[value.clone()];
    if value_text.is_empty() || is_placeholder(value_text) || is_literal(value_text) {
        return None;
    }
    let password_family = ["password", "passwd", "passphrase", "passcode", "pwd"].contains(&key.as_str());
    let token_like = (value_text.len() >= 12 && has_letter_and_digit(value_text)) || looks_high_entropy(value_text);
    let accepted = if password_family {
        let plain_word = value_text.chars().all(|c| c.is_alphabetic() || matches!(c, '-' | '\''));
        let quantity = value_text.bytes().all(|b| b.is_ascii_digit())
            && text[value.end..].strip_prefix(' ').is_some_and(|rest| rest.starts_with(char::is_alphabetic));
        quoted.is_some() || !(plain_word || quantity || looks_like_code(value_text))
    } else {
        token_like
    };
    accepted.then_some(Finding { range: value, kind: "secret-assignment" })
}

/// `Authorization: <scheme> <credential>`. Without a scheme the credential must look like
/// a token (≥ 16 characters, letters and digits), so `authorization: required` is prose.
pub(super) fn check_authorization_header(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    let value = secret.as_str();
    let scheme = caps.name("scheme").map(|scheme| scheme.as_str().to_ascii_lowercase());
    if value.len() < 8 || is_auth_scheme(value) || is_placeholder(value) {
        return None;
    }
    let token_like = value.len() >= 16 && has_letter_and_digit(value);
    // Schemes besides the registered ones (Discord's `Bot`, Okta's `SSWS`, Elastic's
    // `ApiKey`) are words too: their credential counts when it looks like a token.
    let kind = match scheme.as_deref() {
        Some("basic") => "basic-auth",
        Some(scheme) if is_auth_scheme(scheme) => "bearer-token",
        Some(_) | None if token_like => "bearer-token",
        Some(_) | None => return None,
    };
    Some(Finding { range: secret.range(), kind })
}

/// `Bearer <token>` outside a header: "the bearer of this letter" has no digits.
pub(super) fn check_bearer_word(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if !has_letter_and_digit(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "bearer-token" })
}

/// [`URL_PASSWORD_WIDE`](super::patterns): not when what comes before the first `/`, `?`
/// or `#` is a port (digits) — that is a host's port and a path.
pub(super) fn check_url_password_wide(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?.as_str();
    let head = secret.split(['/', '?', '#']).next().unwrap_or_default();
    if (head.is_empty() && secret.starts_with('/')) || (!head.is_empty() && head.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    secret_unless_placeholder(caps, "url-password")
}

/// `PWD={…}`: the braces' content, unless a placeholder.
pub(super) fn check_braced_password(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if is_placeholder(secret.as_str()) || secret.as_str().trim().is_empty() {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "secret-assignment" })
}

pub(super) fn check_assignment(text: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.name("key")?;
    // `edq`: JSON inside a JSON string or a shell's double quotes (`{\"password\":\"x\"}`).
    let quoted = caps.name("dq").or_else(|| caps.name("edq")).or_else(|| caps.name("sq"));
    let value = quoted.or_else(|| caps.name("bare"))?;
    // A bare value in angle brackets (`password=<Tr0ub4dor&3>`) is the brackets and what
    // they hold, judged as a placeholder or a password, never as code.
    let bracketed = match quoted {
        None if value.as_str().starts_with('<') => Some(bracketed_value(text, value.start())?),
        _ => None,
    };
    let value_range = bracketed.clone().unwrap_or_else(|| value.range());
    let value_text = &text[value_range.clone()];
    // In a JSON pair nothing expands `$name`: only an environment variable's name (`$NAME`,
    // `$DB_PASSWORD_2`) is taken for a reference there (`"password": "$ecretP4ss"` and
    // `"$ECRET9"` are passwords).
    let json_pair = (caps.name("dq").is_some() || caps.name("edq").is_some()) && text[..key.start()].ends_with('"');
    let literal_dollar =
        json_pair && value_text.strip_prefix('$').is_some_and(|name| is_identifier(name) && !is_environment_name(name));
    if (is_placeholder(value_text) && !literal_dollar) || is_literal(value_text) {
        return None;
    }
    let words = key_words(key.as_str());
    // After a connection string's pair (`Server=db;Password = Tr0ub4dor&c=d9;`), spaces
    // around `=` do not make the value code.
    let in_connection_string = quoted.is_none()
        && bracketed.is_none()
        && connection_string_value_end(text, key.range(), value.start()).is_some();
    if quoted.is_none()
        && bracketed.is_none()
        && !in_connection_string
        && bare_value_is_code(text, caps, &words, key.start(), value.range())
    {
        return None;
    }
    if quoted.is_some() && quote_closes_a_string_around_the_key(text, key.range()) && !looks_like_password(value_text) {
        return None;
    }
    let colon_prose = quoted.is_none()
        && caps.name("sep").is_some_and(|sep| sep.as_str() == ":")
        && (!reads_as_config_line(text, key.start(), value_range.end) || is_prose_label(key.as_str(), value_text));
    let kind = if is_secret_key(&words, value_text) && !colon_prose {
        if is_aws_secret(&words, value_text) { "aws-secret-key" } else { "secret-assignment" }
    } else if looks_high_entropy(value_text) && !is_dirhash(key.as_str(), value_text) && !is_image_data(value_text) {
        "high-entropy"
    } else {
        return None;
    };
    // Only now, for an accepted value: scanning to the end of every candidate's run would
    // make a long run of candidates quadratic.
    let range = match quoted.or(bracketed.as_ref().map(|_| value)) {
        Some(_) => value_range,
        None if kind == "secret-assignment" => {
            let run_end = ampersand_run_end(text, bare_run_end(text, value.end()));
            let in_connection_string = connection_string_value_end(text, key.range(), value.start());
            value.start()..in_connection_string.map_or(run_end, |end| end.max(run_end))
        }
        None => value.start()..bare_run_end(text, value.end()),
    };
    Some(Finding { range, kind })
}

/// `Password=Tr0ub4dor&3x;` (an ADO.NET connection string): a `&` inside a secret's value,
/// not a query string's separator, when the run after it holds no `=` (`&user=bob` does).
fn ampersand_run_end(text: &str, mut end: usize) -> usize {
    while text[end..].starts_with('&') {
        let rest = &text[end + 1..];
        let run = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | ';' | '&' | '\\'))
            .unwrap_or(rest.len());
        // `&amp;` is HTML's `&`: the next pair's separator, not part of the value.
        if run == 0 || rest[..run].contains('=') || (&rest[..run] == "amp" && rest[run..].starts_with(';')) {
            break;
        }
        end += 1 + run;
    }
    end
}

/// The range of `<…>` starting at `start`: closed on its line, within 130 bytes, before any
/// space or other `<`; `None` when it is not closed so.
fn bracketed_value(text: &str, start: usize) -> Option<Range<usize>> {
    let line = line_after(text, start + 1);
    let close = line.find(|c: char| c == '>' || c == '<' || c.is_whitespace())?;
    (close <= 128 && line[close..].starts_with('>')).then_some(start..start + 1 + close + 1)
}

/// `Server=db;User Id=sa;Password=ab&c=d9;Database=x`: in a `;`-separated connection string
/// (ADO.NET, ODBC, JDBC for SQL Server) a password runs to the next `;`, holding `&`, `=`
/// or spaces. The key is `Password` or `Pwd`, followed by `=` alone, and either another pair
/// precedes it (a `;` before the key) or its `;` ends the string or line or is followed by
/// another pair (`Password=Tr0ub& x=y;`). Without a `;` after it, the value of a pair that
/// follows a `;` runs to the closing quote (`"…;Password=a& b=c"`) or, unquoted, to the
/// next space. A query's `?password=x&user=y` is none of these, nor the `;` of an HTML
/// entity (`&amp;`). Read within the line context: bounded.
fn connection_string_value_end(text: &str, key: Range<usize>, value_start: usize) -> Option<usize> {
    const ENTITIES: &[&str] = &["&amp", "&quot", "&lt", "&gt", "&apos", "&nbsp"];
    let key_text = &text[key.clone()];
    let separator = &text[key.end..value_start];
    if !(key_text.eq_ignore_ascii_case("password") || key_text.eq_ignore_ascii_case("pwd"))
        || separator.trim_matches([' ', '\t']) != "="
    {
        return None;
    }
    let follows_pair = text[..key.start].trim_end_matches([' ', '\t']).ends_with(';');
    // Spaces around `=` only after a pair written tight (`Server=db;`): `a = 1; pwd = x;` is code.
    if separator != "=" && !(follows_pair && follows_tight_pair(text, key.start)) {
        return None;
    }
    let line = line_after(text, value_start);
    let stop = line.find([';', '"', '\'', '`', '\\']).unwrap_or(line.len());
    let run = &line[..stop];
    let end = match line[stop..].chars().next() {
        Some(';') => {
            let after = line[stop + 1..].trim_start_matches([' ', '\t']);
            let pair_or_end = after.is_empty()
                || after.starts_with(['"', '\'', '\\'])
                || after.find('=').is_some_and(|eq| {
                    let next_key = after[..eq].trim_end();
                    // `Encrypt`, `databaseName`, `User Id`, `Initial Catalog`; not `export A`.
                    let words: Vec<&str> = next_key.split(' ').collect();
                    words.iter().all(|word| {
                        word.starts_with(|c: char| c.is_ascii_alphabetic())
                            && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                    }) && (words.len() == 1
                        || words.iter().all(|word| word.starts_with(|c: char| c.is_ascii_uppercase())))
                });
            let entity = run.rfind('&').is_some_and(|amp| {
                let tail = &run[amp..];
                ENTITIES.iter().any(|entity| tail.eq_ignore_ascii_case(entity))
                    || tail.strip_prefix("&#").is_some_and(|code| {
                        !code.is_empty() && code.trim_start_matches(['x', 'X']).bytes().all(|b| b.is_ascii_hexdigit())
                    })
            });
            if !(follows_pair || pair_or_end) || entity {
                return None;
            }
            run.trim_end().len()
        }
        Some(_) if follows_pair => run.trim_end().len(),
        None if follows_pair => run.find(char::is_whitespace).unwrap_or(run.len()),
        _ => return None,
    };
    Some(value_start + end)
}

/// Whether the `;` before the key at `key_start` ends a connection string's pair written
/// tight, of a key connection strings have: `Server=db;`, `Data Source=x;`, `User Id=sa;`
/// (`x=1; password = y;` is code).
fn follows_tight_pair(text: &str, key_start: usize) -> bool {
    const KEYS: &[&str] = &[
        "server",
        "data source",
        "host",
        "hostname",
        "address",
        "addr",
        "network address",
        "user id",
        "uid",
        "user",
        "username",
        "database",
        "initial catalog",
        "port",
        "driver",
        "provider",
        "dsn",
        "encrypt",
        "integrated security",
        "trusted_connection",
        "sslmode",
        "application name",
    ];
    let before = line_before(text, key_start).trim_end_matches([' ', '\t']);
    let Some(pair) = before.strip_suffix(';') else { return false };
    let pair = pair.rsplit([';', '"', '\'', '`', '(', ',']).next().unwrap_or(pair).trim_start();
    let Some((name, value)) = pair.split_once('=') else { return false };
    !value.is_empty() && !value.contains(char::is_whitespace) && KEYS.iter().any(|key| name.eq_ignore_ascii_case(key))
}

/// An image in base64 (a data URL, or the base64 of a PNG, JPEG, GIF or WebP file, known by
/// its first bytes), as JSON carries screenshots: random-looking, but no key.
fn is_image_data(value: &str) -> bool {
    const MAGIC: &[&str] = &["data:image/", "iVBORw0KGgo", "/9j/", "R0lGODlh", "R0lGODdh", "UklGR"];
    // The smallest image is longer than any key: a short value with an image's first bytes
    // is judged as any other.
    value.len() >= 64 && MAGIC.iter().any(|magic| value.starts_with(magic))
}

/// A Go module hash (`go.sum`, Terraform's `.terraform.lock.hcl`): `h1:` and the base64 of a
/// SHA-256, 44 characters ending in `=`. Identifies a package, like the SRI hashes above.
fn is_dirhash(key: &str, value: &str) -> bool {
    key == "h1" && value.len() == 44 && value.ends_with('=')
}

/// `print("password:", pw, "user:", name)`: the key is inside a string (an odd number of
/// that quote before it on its line, and no quote of its own), so the quote after the
/// separator closes that string rather than opening a value. A quoted key
/// (`"password": "x"`) is not inside one.
fn quote_closes_a_string_around_the_key(text: &str, key: Range<usize>) -> bool {
    let Some(quote) = text[key.end..].trim_start_matches([':', '=', ' ', '\t']).chars().next() else {
        return false;
    };
    if !matches!(quote, '"' | '\'') || text[key.end..].starts_with(quote) {
        return false;
    }
    line_before(text, key.start).matches(quote).count() % 2 == 1
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
    // A key found again inside a longer one it ends (`--cdc-password=CDC_PASSWORD`, searched
    // again from `password` once the whole key was judged) is compared as the whole key.
    let glued_start = glued_key_start(text, key_start);
    let key_end = caps.name("key").map_or(key_start, |key| key.end());
    if glued_start < key_start && super::values::key_words(&text[glued_start..key_end]).concat() == normalized {
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
pub(super) fn line_before(text: &str, pos: usize) -> &str {
    let mut start = pos.saturating_sub(LINE_CONTEXT);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    text[start..pos].rsplit(['\n', '\r']).next().unwrap_or("")
}

/// The line after `pos`, or its first [`LINE_CONTEXT`] bytes (rounded to a char boundary).
pub(super) fn line_after(text: &str, pos: usize) -> &str {
    let mut end = (pos + LINE_CONTEXT).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    text[pos..end].split(['\n', '\r']).next().unwrap_or("")
}

/// `--password hunter2`: a flag naming a secret, followed by a value that is not a plain
/// word (a flag followed by a word is too often prose: "pass --token explicitly"), nor
/// punctuation (`--prompt-for-password | --password=X` in a synopsis).
pub(super) fn check_flag(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let key = caps.name("key")?;
    let value = caps.name("dq").or_else(|| caps.name("sq")).or_else(|| caps.name("bare"))?;
    let value_text = value.as_str();
    let words = key_words(key.as_str());
    if !is_secret_key(&words, value_text)
        || is_placeholder(value_text)
        || is_literal(value_text)
        || looks_like_code(value_text)
        || value_text.chars().all(char::is_alphabetic)
        || !value_text.chars().any(char::is_alphanumeric)
    {
        return None;
    }
    Some(Finding { range: value.range(), kind: "secret-assignment" })
}

pub(super) fn check_curl_user(_: &str, caps: &Captures<'_>) -> Option<Finding> {
    let secret = caps.name("secret")?;
    if is_placeholder(secret.as_str()) {
        return None;
    }
    Some(Finding { range: secret.range(), kind: "basic-auth" })
}
