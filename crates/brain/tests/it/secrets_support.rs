//! The secrets corpus (`tests/data/secrets/corpus.txt`) with its values generated: every
//! `{{generator}}` becomes a fake value of the provider's real format, from a fixed seed, and
//! what must never come out again is recorded. Plus the checks: no planted secret (nor its
//! first or last 16 characters) in a text, a file or a file name.

use std::path::{Path, PathBuf};

const CORPUS: &str = include_str!("../data/secrets/corpus.txt");

/// One case of the corpus, its values generated.
#[derive(Clone, Debug)]
pub struct Case {
    pub label: String,
    pub text: String,
}

/// The corpus with its planted values.
pub struct Corpus {
    pub cases: Vec<Case>,
    /// Every generated secret (and, for one split over lines, each part).
    pub planted: Vec<Planted>,
    /// The needles as one literal set, and the planted value of each (built on first use).
    finder: std::sync::OnceLock<(regex::bytes::RegexSet, Vec<usize>)>,
}

#[derive(Clone, Debug)]
pub struct Planted {
    pub label: String,
    pub generator: String,
    pub value: String,
}

/// splitmix64: small, deterministic, good enough to make values look random.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `len` characters of `alphabet`, drawn until the value mixes what `alphabet` offers
    /// (upper case, lower case, digits), as real key material does.
    pub fn text(&mut self, alphabet: &str, len: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        loop {
            let value: String = (0..len).map(|_| chars[self.below(chars.len())]).collect();
            let mixes = |class: fn(&char) -> bool| !chars.iter().any(class) || value.chars().any(|c| class(&c));
            if len < 6
                || (mixes(char::is_ascii_uppercase) && mixes(char::is_ascii_lowercase) && mixes(char::is_ascii_digit))
            {
                return value;
            }
        }
    }
}

const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LOWER_ALNUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &str = "0123456789abcdef";
const DIGITS: &str = "0123456789";
/// Symbols of typed passwords (no quotes, brackets or `#`, which the formats around them
/// would read as syntax).
const PASSWORD_SYMBOLS: &str = "!@$%*+?";

/// A generated value: the text put in the case, and what must never come out again.
pub struct Generated {
    pub text: String,
    pub planted: Vec<String>,
}

fn whole(text: String) -> Generated {
    Generated { planted: vec![text.clone()], text }
}

/// The value of one generator. Every generator the corpus may name is here.
pub fn generate(name: &str, rng: &mut Rng) -> Generated {
    match name {
        "aws-access-key" => whole(format!("AKIA{}", rng.text(UPPER_DIGITS, 16))),
        "aws-secret-key" => whole(rng.text(B64, 40)),
        "github-classic" => whole(format!("ghp_{}", rng.text(ALNUM, 36))),
        "github-oauth" => whole(format!("gho_{}", rng.text(ALNUM, 36))),
        "github-app" => whole(format!("ghs_{}", rng.text(ALNUM, 36))),
        "github-user" => whole(format!("ghu_{}", rng.text(ALNUM, 36))),
        "github-refresh" => whole(format!("ghr_{}", rng.text(ALNUM, 36))),
        "github-fine" => whole(format!("github_pat_11{}_{}", rng.text(UPPER_DIGITS, 20), rng.text(ALNUM, 59))),
        "github-classic-split" => {
            let body = rng.text(ALNUM, 36);
            let (head, tail) = body.split_at(20);
            Generated { text: format!("ghp_{head}\n{tail}"), planted: vec![format!("ghp_{head}"), tail.to_string()] }
        }
        "github-classic-split-quoted" => {
            let body = rng.text(ALNUM, 36);
            let (head, tail) = body.split_at(16);
            Generated {
                text: format!("\"ghp_{head}\" +\n    \"{tail}\""),
                planted: vec![format!("ghp_{head}"), tail.to_string()],
            }
        }
        "gitlab" => whole(format!("glpat-{}", rng.text(ALNUM, 20))),
        "gitlab-lower" => whole(format!("glpat-{}", rng.text(LOWER_ALNUM, 20))),
        "npm" => whole(format!("npm_{}", rng.text(ALNUM, 36))),
        "huggingface" => whole(format!("hf_{}", rng.text(ALNUM, 34))),
        "openai-project" => whole(format!("sk-proj-{}T3BlbkFJ{}", rng.text(ALNUM, 74), rng.text(ALNUM, 74))),
        "openai-legacy" => whole(format!("sk-{}T3BlbkFJ{}", rng.text(ALNUM, 20), rng.text(ALNUM, 20))),
        "anthropic" => whole(format!("sk-ant-api03-{}AA", rng.text(B64URL, 93))),
        "slack-bot" => whole(format!("xoxb-{}-{}-{}", rng.text(DIGITS, 12), rng.text(DIGITS, 13), rng.text(ALNUM, 24))),
        "slack-user" => whole(format!(
            "xoxp-{}-{}-{}-{}",
            rng.text(DIGITS, 12),
            rng.text(DIGITS, 12),
            rng.text(DIGITS, 13),
            rng.text(HEX, 32)
        )),
        "slack-bot-lower" => {
            whole(format!("xoxb-{}-{}-{}", rng.text(DIGITS, 12), rng.text(DIGITS, 13), rng.text(LOWER_ALNUM, 24)))
        }
        "slack-app" => {
            whole(format!("xapp-1-A{}-{}-{}", rng.text(UPPER_DIGITS, 10), rng.text(DIGITS, 13), rng.text(HEX, 64)))
        }
        "slack-refresh" => whole(format!("xoxe.xoxp-1-{}", rng.text(ALNUM, 140))),
        "slack-webhook" => whole(format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            rng.text(UPPER_DIGITS, 8),
            rng.text(UPPER_DIGITS, 8),
            rng.text(ALNUM, 24)
        )),
        "stripe-live" => whole(format!("sk_live_{}", rng.text(ALNUM, 24))),
        "stripe-restricted" => whole(format!("rk_live_{}", rng.text(ALNUM, 24))),
        "stripe-webhook" => whole(format!("whsec_{}", rng.text(ALNUM, 32))),
        "google" => whole(format!("AIza{}", rng.text(B64URL, 35))),
        "sendgrid" => whole(format!("SG.{}.{}", rng.text(B64URL, 22), rng.text(B64URL, 43))),
        "twilio" => whole(format!("SK{}", rng.text(HEX, 32))),
        "hex32" => whole(rng.text(HEX, 32)),
        "jwt" => {
            let payload = rng.text(B64URL, 60);
            let signature = rng.text(B64URL, 43);
            let token = format!("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{payload}.{signature}");
            Generated { planted: vec![token.clone(), payload, signature], text: token }
        }
        "bearer" => whole(rng.text(ALNUM, 40)),
        "basic" => whole(format!("{}==", rng.text(B64, 30))),
        "password" => whole(format!("{}-{}", rng.text(ALNUM, 7), rng.text(ALNUM, 7))),
        // A password with symbols, as people choose them (`Xk9$mQ2!vLp`).
        "password-symbols" => {
            let symbols: Vec<char> = PASSWORD_SYMBOLS.chars().collect();
            let symbol = symbols[rng.below(symbols.len())];
            whole(format!("{}{symbol}{}", rng.text(ALNUM, 6), rng.text(ALNUM, 6)))
        }
        "high-entropy" => whole(rng.text(ALNUM, 28)),
        "private-key-rsa" | "private-key-openssh" => {
            let kind = if name == "private-key-rsa" { "RSA PRIVATE KEY" } else { "OPENSSH PRIVATE KEY" };
            let lines: Vec<String> = (0..4).map(|_| rng.text(B64, 64)).collect();
            Generated {
                text: format!("-----BEGIN {kind}-----\n{}\n-----END {kind}-----", lines.join("\n")),
                planted: lines,
            }
        }
        other => panic!("secrets corpus: unknown generator {{{{{other}}}}}"),
    }
}

/// The corpus with fresh values from the fixed seed `seed` (the same seed, the same values).
pub fn corpus(seed: u64) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut cases = Vec::new();
    let mut planted = Vec::new();
    let mut lines = CORPUS.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let (label, template) = line.split_once('\t').unwrap_or_else(|| panic!("corpus line without a tab: {line}"));
        let template = if template == "<<<" {
            lines.by_ref().take_while(|line| *line != ">>>").collect::<Vec<_>>().join("\n")
        } else {
            template.to_string()
        };
        let mut text = String::new();
        let mut rest = template.as_str();
        while let Some((before, after)) = rest.split_once("{{") {
            let (name, after) = after.split_once("}}").expect("every {{ is closed");
            let generated = generate(name, &mut rng);
            text.push_str(before);
            text.push_str(&generated.text);
            planted.extend(generated.planted.into_iter().map(|value| Planted {
                label: label.to_string(),
                generator: name.to_string(),
                value,
            }));
            rest = after;
        }
        text.push_str(rest);
        cases.push(Case { label: label.to_string(), text });
    }
    Corpus { cases, planted, finder: std::sync::OnceLock::new() }
}

/// Extra values for fields a case's text does not fit (tags, schema keys, dedup hints,
/// sources): one generator's value, planted too.
pub fn extra(corpus: &mut Corpus, rng: &mut Rng, label: &str, generator: &str) -> String {
    let generated = generate(generator, rng);
    corpus.finder = std::sync::OnceLock::new();
    corpus.planted.extend(generated.planted.iter().map(|value| Planted {
        label: label.to_string(),
        generator: generator.to_string(),
        value: value.clone(),
    }));
    generated.text
}

/// What of `planted` must not appear: the value, and for long ones its first and last 16
/// characters (a secret cut by a clipped field is still a leak).
fn needles(planted: &Planted) -> Vec<&str> {
    let value = planted.value.as_str();
    let mut needles = vec![value];
    if value.len() >= 24 && value.is_ascii() {
        needles.push(&value[..16]);
        needles.push(&value[value.len() - 16..]);
    }
    needles
}

/// Every planted secret found in `haystack`, as `label (generator)` — never the value.
pub fn survivors(corpus: &Corpus, haystack: &[u8]) -> Vec<String> {
    // One pass of a literal set (Aho-Corasick inside the regex crate) over the haystack.
    let (set, owners) = corpus.finder.get_or_init(|| {
        let mut patterns = Vec::new();
        let mut owners = Vec::new();
        for (index, planted) in corpus.planted.iter().enumerate() {
            for needle in needles(planted) {
                patterns.push(regex::escape(needle));
                owners.push(index);
            }
        }
        // Case-insensitive: a secret lowercased (a word's stem, a slug) is still the secret.
        let set = regex::bytes::RegexSetBuilder::new(patterns).case_insensitive(true).build();
        (set.expect("needles are literals"), owners)
    });
    let mut found: Vec<String> = set
        .matches(haystack)
        .into_iter()
        .map(|index| {
            let planted = &corpus.planted[owners[index]];
            format!("{} ({})", planted.label, planted.generator)
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Panics naming the output and the cases whose secrets survived in it.
pub fn assert_clean(corpus: &Corpus, output: &str, text: impl AsRef<[u8]>) {
    let found = survivors(corpus, text.as_ref());
    assert!(found.is_empty(), "{} planted secret(s) survived in {output}: {}", found.len(), found.join(", "));
}

/// Every file under `dir` (contents and names, symlinks not followed) but those in `skip`.
pub fn assert_tree_clean(corpus: &Corpus, dir: &Path, skip: &[PathBuf]) -> usize {
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if skip.iter().any(|skipped| path.starts_with(skipped)) {
                continue;
            }
            assert_clean(corpus, &format!("the file name {}", path.display()), path.to_string_lossy().as_bytes());
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                assert_clean(corpus, &path.display().to_string(), std::fs::read(&path).unwrap());
                files += 1;
            }
        }
    }
    files
}
