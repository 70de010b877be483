//! Benchmark: redaction throughput on what the write paths and the vault scan feed it.
//!
//! Clean text is the common case (one prefilter pass); text with secrets runs the detectors.
//! Run with `cargo bench -p brain-core --bench redact`.

use brain_core::redact::redact_str;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// A realistic ~2 KB arc (prose, code, markers): clean.
const ARC_2K: &str = include_str!("../tests/data/vault/arc-2k.md");

/// A transcript-like mix of prose, shell, code, hashes and paths, 64 KB, clean.
fn clean_mix() -> String {
    let block = "Ran `cargo test -p brain-memory --test it` in crates/brain; 105 passed.\n\
        commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the flaky test\n\
        let token = tokens.next(); // the password policy needs 12 characters\n\
        \"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==\",\n\
        src/components/UserProfileCardHeader/LargeVariant.tsx renders the header.\n";
    block.repeat(65_536 / block.len() + 1)
}

/// The same mix with a secret of some kind every ~600 bytes.
fn with_secrets() -> String {
    let block = "Ran the deploy with GITHUB_TOKEN=ghp_EXAMPLE0example1EXAMPLE0example1EXAM today.\n\
        the admin password is Tr0ub4dor&3-EXAMPLE, and mysql -u root -pS3cr3t-EXAMPLE app\n\
        commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the flaky test\n\
        the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, rotate it\n\
        let token = tokens.next(); // the password policy needs 12 characters\n\
        src/components/UserProfileCardHeader/LargeVariant.tsx renders the header.\n";
    block.repeat(65_536 / block.len() + 1)
}

#[divan::bench]
fn arc_2k_clean(bencher: Bencher) {
    bencher.counter(BytesCount::of_str(ARC_2K)).bench(|| redact_str(black_box(ARC_2K)).len());
}

#[divan::bench]
fn mix_64k_clean(bencher: Bencher) {
    let text = clean_mix();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

#[divan::bench]
fn mix_64k_with_secrets(bencher: Bencher) {
    let text = with_secrets();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

/// Prose that names passwords, secrets and credentials on every line and holds none (the
/// lines of `tests/data/redaction/prose.txt`), 64 KB: the prose password detector runs on
/// every label and rejects it.
fn prose_naming_passwords() -> String {
    let lines: Vec<&str> = include_str!("../tests/data/redaction/prose.txt")
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('%'))
        .collect();
    let block = lines.join("\n") + "\n";
    block.repeat(65_536 / block.len() + 1)
}

#[divan::bench]
fn prose_64k_naming_passwords(bencher: Bencher) {
    let text = prose_naming_passwords();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

#[divan::bench]
fn base64_blob_64k(bencher: Bencher) {
    // A long run of the key alphabet (an image pasted as base64): judged once, not per byte.
    let text: String = (0..65_536).map(|i| b"Zm9vYmFyEXAMPLE0a1B2c3D4e5F6+/"[i % 30] as char).collect();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

/// Runs that every detector added for the third hostile round sees and rejects, each a
/// 13 KB line of its own: URL-encoded pairs (`k%3Dv-k%3Dv…`), `&`-joined values, Oracle
/// look-alikes, signed-URL look-alikes and a prose password's label repeated. A rejected match is searched again one character
/// on, so a detector whose match ran to the end of its line was quadratic here; and runs
/// that start many candidates made the prefilter's lazy DFA give up at its default cache.
fn hostile_runs() -> String {
    let line = |unit: &str| unit.repeat(65_536 / 5 / unit.len());
    [line("k%3Dv-"), line("Pwd=Ab1&x"), line("sqlplus a/b "), line("?sig=x&"), line("password:Ab1&")].join("\n")
}

/// One of [`hostile_runs`]' lines alone: a prose password's label repeated with `&`
/// between (`password:Ab1&password:Ab1&…`), each value read to the end of its run.
#[divan::bench]
fn hostile_password_run_16k(bencher: Bencher) {
    let text = "password:Ab1&".repeat(16_384 / 13);
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

#[divan::bench]
fn hostile_runs_64k(bencher: Bencher) {
    let text = hostile_runs();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}

/// Runs of the triggers of the fifth round's rules (docs/RELIABILITY.md row 25), each a
/// 13 KB line: double-encoded pairs, URL-encoded JSON pairs, connection-string passwords,
/// `$NAME` values in JSON, passwords in angle brackets and bare values opening one.
fn hostile_edge_runs() -> String {
    let line = |unit: &str| unit.repeat(65_536 / 6 / unit.len());
    [
        line("password%253Da%2526"),
        line("%2522k%2522%253A%2522v"),
        line("Password=a&b=c;"),
        line("\"password\":\"$A1\","),
        line("password: <Ab1#xy>"),
        line("a=<"),
    ]
    .join("\n")
}

#[divan::bench]
fn hostile_edge_runs_64k(bencher: Bencher) {
    let text = hostile_edge_runs();
    bencher.counter(BytesCount::of_str(&text)).bench(|| redact_str(black_box(&text)).len());
}
