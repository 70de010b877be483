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
//!   (a key pasted in part, also quoted with `> ` or commented out with `#`, `//`). A header
//!   alone (`starts_with("-----BEGIN …")`) is a mention. The private lines of a PuTTY key.
//! - `jwt`: `eyJ….eyJ….<signature>` (base64url JSON header and payload).
//! - `anthropic-key` (`sk-ant-…`), `openai-key` (`sk-…`, `sk-proj-…`; the body must mix
//!   upper case, lower case and digits, so `sk-learn` is prose).
//! - `github-token` (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`; also broken over
//!   two lines, when the two parts join to exactly a token's length), `gitlab-token`
//!   (`glpat-`), `npm-token` (`npm_`), `huggingface-token` (`hf_`),
//!   `brain-token` (`brain_` + 64 hex: `brain token create`).
//! - `aws-access-key` (`AKIA`/`ASIA` + 16), `aws-secret-key` (40 characters assigned to a key
//!   naming both "aws" and "secret"; or bare, in prose: a run of exactly 40 characters of
//!   `A-Za-z0-9/+` that passes the entropy rule with at least 4 bits per character).
//! - `slack-webhook` (`https://hooks.slack.com/services/…`), `slack-token` (`xoxb-`, `xoxp-`,
//!   `xoxa-`, `xoxr-`, `xoxs-`, `xoxo-`, app-level `xapp-1-…`, rotating `xoxe.xoxp-1-…` and
//!   `xoxe-1-…`).
//! - `stripe-key` (`sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`, webhook secrets `whsec_`),
//!   `google-api-key` (`AIza…`), `sendgrid-key` (`SG.<id>.<secret>`), `twilio-key` (`SK` + 32
//!   hex).
//! - `vault-token` (HashiCorp Vault `hvs.`, `hvb.`, `hvr.`), `google-oauth-token` (`ya29.`),
//!   `age-secret-key` (`AGE-SECRET-KEY-1…`, age and SOPS), `shopify-token` (`shpat_`,
//!   `shpss_`, `shpca_`, `shppa_` + 32 hex), `discord-token` (a bot token's three dotted
//!   parts, the first mixing upper case, lower case and digits).
//! - `basic-auth`, `bearer-token`: the credential of an `Authorization:` header (after any
//!   scheme word: `Bot`, `SSWS`, `ApiKey`… when the credential looks like a token), a
//!   token-looking word (≥ 16 characters mixing letters and digits) after `Bearer`, and the
//!   password of `curl -u user:password`.
//! - `url-password`: the password of `scheme://user:password@host`; scheme, user and host
//!   are kept.
//! - `url-signature`: the signature of a signed URL (an Azure SAS `sig=`, S3's
//!   `X-Amz-Signature=`, `X-Goog-Signature=`, `signature=`; 16 characters or more).
//! - `cli-password`: `mysql -pX` (the MySQL family; a spaced word after `-p` is a database),
//!   `docker login -p X` / `--password X` (and podman, nerdctl, buildah, skopeo, oras, helm
//!   registry), `sshpass -p X`, `redis-cli -a X`, Oracle's `user/X@db` (after `sqlplus`,
//!   `expdp` and kin, `connect`, in a `jdbc:oracle:thin:` URL); placeholders such as
//!   `$MYSQL_PWD` are kept.
//! - `secret-assignment`: the value of `KEY=value`, `KEY: value`, `"key": "value"`,
//!   `--key value` when the key's last word names a secret (password, passwd, passphrase,
//!   pwd, secret, token, auth, credential(s), api key, access key, private key, secret key,
//!   signing key, …; `TOKEN_BUDGET` and `password_reset_url` do not, their last word is
//!   "budget" and "url"). A bare value runs on past a `&` when what follows holds no `=`
//!   (`Password=Tr0ub&3x;`; `&user=bob` in a query is the next pair); in a `;`-separated
//!   connection string a `Password`/`Pwd` value runs to its `;`, past `&`, `=` and spaces
//!   too (`Server=db;Password=ab&c=d9;`). URL-encoded pairs too, encoded once or twice
//!   (`password%3D…%26`, `password%253D…%2526`), and URL-encoded JSON
//!   (`%22password%22%3A%22…%22`), judged decoded. In a JSON pair only an environment
//!   variable's name is a reference (`$DB_PASSWORD`, `$S3_TOKEN`; `"$ecret9"` and
//!   `"$ECRET9"` are passwords), and `your…` is a placeholder only when made of letters and
//!   separators (`your-api-key`, not `yourMum1!`).
//!   In prose too: "the admin password is X", "the password for the db was set to X",
//!   "our API key is X": after a password word, a quoted value or one that is not a plain
//!   word or a quantity ("the password is wrong", "… is 8 characters long" are prose); after
//!   token, secret or key, a value that looks like a token (≥ 12 characters mixing letters
//!   and digits, or random).
//!   And a password named anywhere in a sentence (`prose.rs`): "db password: X", "The
//!   staging password: X", "we set the db_password: X", "Login is admin, password X",
//!   "- **DB password**: X", "password for the staging db: X", "| password | X |", "the
//!   root password (X)", "set dbPassword to X", a quoted value, a value alone on the next
//!   line after a colon, `：` and other colons, and the labels `passphrase`, `passcode`,
//!   `passwd`, `pwd`, `pass`, `pw`, `secret`, `credentials` and `Passwort`, `mot de passe`,
//!   `contraseña`, `senha`, `Kennwort`, `wachtwoord`, `hasło`, `lösenord`, `пароль`, `密码`,
//!   `パスワード`, `비밀번호` (the words of other languages that are ASCII are looked for in
//!   text that is not all ASCII). Whatever the label and separator, a value that looks like
//!   a password is taken: at least 6 characters without spaces or brackets mixing letters
//!   with digits or symbols (`hunter2`, `Xk9$mQ2!vLp`), or random material — and not an
//!   algorithm (`argon2id`, `sha256`), version, date, quantity (`12ms`), identifier
//!   (`test_v2_login`, `AWS_ACCESS_KEY_ID`), path, URL or e-mail address. After a password
//!   word and a colon, also a quoted value, and one word or number of four digits or more
//!   that ends its sentence or line ("the wifi password: changeme." is redacted — a
//!   dictionary word is no placeholder, as above) unless it describes the password
//!   (`required`, `hidden`, `unchanged`, `none`, `n/a`, …).
//! - `high-entropy`: the value of any such assignment, whatever the key, when it looks like
//!   random key material — see [`looks_high_entropy`] for the exact rule; not an image in
//!   base64 (a data URL, or a PNG, JPEG, GIF or WebP file's base64, as JSON carries them).
//!
//! A finding that overlaps another is merged with it; the union is redacted once, under
//! the most specific kind. Redaction is idempotent: `redact(redact(x)) == redact(x)`.
//!
//! # What is kept, on purpose
//!
//! - **Placeholders** — values that by their shape cannot be anyone's secret: `<your-key>`
//!   (not a password in angle brackets, `<Tr0ub4dor&3>`: one word with letters and digits,
//!   and symbols or mixed case with a digit inside a word), `${VAR}`, `$VAR`, `{{ var }}`,
//!   `%(var)s`, masks such as `****` or `xxxx`, values starting with "your"
//!   (`your-api-key-here`), empty values, `true`/`false`/`null`/`none`, and
//!   `read`/`write` (CI permissions such as `id-token: write`).
//! - **Dictionary dummies are not placeholders.** `password=changeme`,
//!   `postgres://app:password@db` or `secret: example` are redacted: the redactor cannot tell the `changeme` of
//!   a README from the `changeme` that is the real password of a dev database, and a weak
//!   real password is still a password.
//! - **Code, not literals.** An unquoted value that is an expression — a call or index
//!   (`tokens.next()`), a dotted path (`config.token`; not one with a segment of random
//!   material, `hvs.CAES…`), a reference (`&str`), the key's own
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
//!   guides ask. Likewise `--password <value>` counts only when the value is not a plain
//!   word nor punctuation ("pass --token explicitly", `--prompt-for-password | …`).
//! - **Prose about passwords.** After a password label in a sentence, a value that does not
//!   look like a password is kept when it is followed by more words ("password: see the
//!   vault", "reset your password in settings", "the password field is required", "password
//!   policy: 12 characters minimum"), by a comma ("the wifi password: sunshine, and …" — a
//!   dictionary word that does not end its sentence is not taken), or when the separator is
//!   not a colon ("the password — see the runbook", "the password to the vault"); `pass`,
//!   `pw` and `pwd` count only with a separator ("pass the test", "pwd /home"); a label that
//!   is a field of a described format (`username:password:uid`), a variable (`$PASSWORD`)
//!   or inside a string whose quote the value would close (`print("password:", pw)`) is not
//!   one. Known gaps: an unquoted passphrase of several words, a value before its label
//!   ("admin/X are the credentials"), a user and password spaced around a slash, and
//!   passwords with brackets.
//! - Hashes and identifiers: hex digests (git SHAs, sha256 in lockfiles), UUIDs, SRI
//!   `sha512-…` integrity strings, ULIDs (`mem_01J…`), semver, paths, e-mail addresses, URLs
//!   without a password, `data:` URIs (image bytes are not credentials).
//!
//! Detection is deterministic regex work: all patterns are compiled once, and a single
//! [`RegexSet`] pass decides which detectors need to run, so clean text costs one scan (and
//! two searches that are not in the set because they would slow it down: a byte scan for
//! bare AWS secret keys and a search for four literals that every prose password label
//! contains).

//!
//! # Layout
//!
//! `patterns.rs` holds the regexes and the detector table, `checks.rs` the checks that
//! accept a match or reject a look-alike, `prose.rs` the check of passwords named in prose,
//! `values.rs` the rules on key names and values (placeholders, code, entropy), `engine.rs`
//! the transform (private blocks, the prefilter, merging findings, offsets back into the
//! input), `fields.rs` the redaction of every free-text field of an item, and `tests.rs` the
//! corpus tests (`tests/data/redaction/`) and the false-positive measurement.

mod checks;
mod engine;
mod fields;
mod patterns;
mod prose;
mod values;

#[cfg(test)]
mod tests;

use std::borrow::Cow;

pub use fields::redact_item;
pub use values::looks_high_entropy;

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
    "brain-token",
    "aws-access-key",
    "slack-webhook",
    "slack-token",
    "stripe-key",
    "google-api-key",
    "sendgrid-key",
    "twilio-key",
    "vault-token",
    "google-oauth-token",
    "age-secret-key",
    "shopify-token",
    "discord-token",
    "basic-auth",
    "bearer-token",
    "url-password",
    "url-signature",
    "cli-password",
    // After the header and URL kinds: a bare 40-character run that is a bearer token or a
    // URL's password is named for where it was found.
    "aws-secret-key",
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
    engine::scan(text).unwrap_or_else(|| Redacted { text: text.to_owned(), redactions: Vec::new() })
}

/// Compiles the redactor's patterns now (they are compiled once per process, on first use:
/// ~12 ms in release). A caller that knows it will redact soon may call it on another thread
/// while it does other work, so the first redaction does not wait for the compile.
pub fn warm() {
    std::sync::LazyLock::force(&patterns::PATTERNS);
    std::sync::LazyLock::force(&patterns::DETECTOR_REGEXES);
    std::sync::LazyLock::force(&patterns::PRIVATE_TAG);
    std::sync::LazyLock::force(&patterns::PROSE_PASSWORD_DETECTOR);
}

/// The text of [`redact`], borrowing the input when nothing had to be redacted.
pub fn redact_str(text: &str) -> Cow<'_, str> {
    match engine::scan(text) {
        Some(redacted) => Cow::Owned(redacted.text),
        None => Cow::Borrowed(text),
    }
}
