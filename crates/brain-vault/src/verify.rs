//! `verify=` commands of signals (SPEC §6.5): never executed unless the configuration
//! allows it (`[vault] allow_verify_commands = true`), and then without a shell — the command
//! is split into words (quotes group, backslash escapes; no variables, globs, pipes or
//! redirections) — with a timeout, no stdin, output discarded, in the vault folder.
//!
//! What a result means is left to the reader: exit 0 says the check the signal names
//! passes now (the condition may have cleared); the tick reports it and changes nothing.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// At most this many commands run per tick, so a vault full of them cannot stall it.
pub(crate) const MAX_VERIFY_PER_TICK: usize = 20;

/// Splits a command line into words: whitespace separates, `'…'` and `"…"` group, `\`
/// escapes the next character. `None` for unbalanced quotes or an empty command.
pub(crate) fn split_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.push(chars.next()?),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.push(chars.next()?);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    (!words.is_empty()).then_some(words)
}

/// Runs one command; the outcome in a few words (`passed`, `failed (exit 1)`, …).
pub(crate) fn run(command: &str, cwd: &Path, timeout: Duration) -> String {
    let Some(words) = split_words(command) else {
        return "cannot run: unbalanced quotes or empty command".into();
    };
    let mut child = match Command::new(&words[0])
        .args(&words[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => return format!("cannot run {:?} (no shell is used): {err}", words[0]),
    };
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return "passed".into(),
            Ok(Some(status)) => {
                return match status.code() {
                    Some(code) => format!("failed (exit {code})"),
                    None => "failed (killed by a signal)".into(),
                };
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("timed out after {} s; killed", timeout.as_secs());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(err) => return format!("cannot wait for the command: {err}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_being_one() {
        assert_eq!(split_words("pg_isready -h 'db host' -q").unwrap(), ["pg_isready", "-h", "db host", "-q"]);
        assert_eq!(split_words(r#"echo "a \"b\"" c\ d"#).unwrap(), ["echo", "a \"b\"", "c d"]);
        assert_eq!(split_words("a | b > c").unwrap(), ["a", "|", "b", ">", "c"], "no pipes, no redirections");
        assert!(split_words("'open").is_none());
        assert!(split_words("   ").is_none());
    }

    #[test]
    fn commands_run_without_a_shell_and_time_out() {
        let dir = std::env::temp_dir();
        assert_eq!(run("true", &dir, Duration::from_secs(5)), "passed");
        assert_eq!(run("false", &dir, Duration::from_secs(5)), "failed (exit 1)");
        // `exit` is a shell builtin: without a shell there is nothing to run.
        assert!(run("exit 1", &dir, Duration::from_secs(5)).starts_with("cannot run"));
        let started = Instant::now();
        assert!(run("sleep 5", &dir, Duration::from_secs(1)).starts_with("timed out after 1 s"));
        assert!(started.elapsed() < Duration::from_secs(4));
    }
}
