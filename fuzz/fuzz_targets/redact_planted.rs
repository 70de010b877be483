//! The redactor's promise: a planted secret never survives, whatever text surrounds it.
//!
//! The input chooses a secret (every self-identifying format the redactor knows: vendor
//! tokens, AWS keys, JWTs, a PEM private key; or a password named in prose, label and value:
//! "db password: X", "Login is admin, password X", issue 27), a separator and the text
//! before and after it. A secret glued to other characters is another word (`xghp_…`), so
//! the surroundings meet it at a separator, as in any text. Also: never a panic, ranges on
//! char boundaries, and redacting twice equals redacting once.
#![no_main]

use brain_core::redact::{redact, redact_str};
use libfuzzer_sys::fuzz_target;

/// Fake values of real formats (obviously synthetic: "FUZZ", "EXAMPLE").
const SECRETS: &[&str] = &[
    "AKIAFUZZEXAMPLE0KEY7",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFUZZEXAMPL",
    "ghp_FUZZ0example1EXAMPLE2example3EXAMPL",
    "github_pat_11FUZZEXAMPLE0000000000_FUZZexample1EXAMPLE2example3EXAMPLE4example5EXAMPLE6example",
    "glpat-FUZZ0example1EXAMPLE2",
    "npm_FUZZ0example1EXAMPLE2example3EXAMPLE",
    "hf_FUZZ0example1EXAMPLE2example3EXAM",
    "sk-proj-FUZZ0example1EXAMPLE2example3T3BlbkFJexample4EXAMPLE5example6",
    "sk-ant-api03-FUZZ0example1EXAMPLE2example3EXAMPLE4example5EXAMPLE6example7-AA",
    "xoxb-123456789012-1234567890123-FUZZexample1EXAMPLE2exam",
    "xapp-1-A0FUZZEXAMP1-1234567890123-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "xoxe.xoxp-1-FUZZ0example1EXAMPLE2example3EXAMPLE4example5",
    "https://hooks.slack.com/services/T0FUZZ000/B0FUZZ000/FUZZexample1EXAMPLE2exam",
    "sk_live_FUZZ0example1EXAMPLE2exam",
    "whsec_FUZZ0example1EXAMPLE2example3EXA",
    "AIzaSyFUZZ0example1EXAMPLE2example3EXAMP",
    "SG.FUZZ0example1EXAMPLE2.FUZZ0example1EXAMPLE2example3EXAMPLE4exampl",
    "SKfa1e0123456789abcdef0123456789ab",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJGVVpaIn0.FUZZsignature0EXAMPLEsignature1EXAMPLEsig",
    "-----BEGIN RSA PRIVATE KEY-----\nFUZZEXAMPLEexample0123FUZZEXAMPLEexample0123FUZZEXAMPLEexample01\n-----END RSA PRIVATE KEY-----",
];

/// Passwords named in prose (issue 27): the words before the value, the value (what must not
/// survive) and what closes it. Values mix letters with digits or symbols, as a password the
/// redactor recognises in any sentence does.
const PROSE_PASSWORDS: &[(&str, &str, &str)] = &[
    ("db password: ", "Xk9mQ2vLpFUZZ7zRw", ""),
    ("The staging password: ", "Hq3vT8wLmFUZZ2Zk", ""),
    ("we set the db_password: ", "Pq7Lm3Xz9FUZZVb2", ""),
    ("Login is admin, password ", "Zr5Tg8Uj1FUZZIk4o", ""),
    ("- **DB password**: ", "Xk9$mQ2!vLpFUZZ", ""),
    ("the vpn pw: ", "Hq3vT8wLm2FUZZ", ""),
    ("the client secret: ", "Pq7Lm3Xz9Vb2FUZZ", ""),
    ("password for the staging db: ", "Zr5Tg8Uj1Ik4FUZZ", ""),
    ("| password | ", "Xk9mQ2vLpFUZZ7zRw", " |"),
    ("数据库密码：", "Xk9mQ2vLpFUZZ7zRw", ""),
    ("the admin password:\n  ", "Hq3vT8wLmFUZZ2Zk", ""),
    ("the password \"", "Tr0ub4dor&3FUZZ", "\""),
];

/// What may stand between the secret and its surroundings.
const SEPARATORS: &[(&str, &str)] =
    &[(" ", " "), ("\n", "\n"), ("\t", "\t"), ("\"", "\""), ("'", "'"), ("(", ")"), ("`", "`"), ("<", ">"), (": ", ",")];

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let choice = usize::from(data[0]) % (SECRETS.len() + PROSE_PASSWORDS.len());
    // The text planted, and what of it must not survive: for a multi-line secret its key
    // line, for a password named in prose its value.
    let (planted, needle) = match SECRETS.get(choice) {
        Some(secret) => (secret.to_string(), secret.lines().nth(1).unwrap_or(secret)),
        None => {
            let (label, value, end) = PROSE_PASSWORDS[choice - SECRETS.len()];
            (format!("{label}{value}{end}"), value)
        }
    };
    let (open, close) = SEPARATORS[usize::from(data[1]) % SEPARATORS.len()];
    let text = String::from_utf8_lossy(&data[4..]);
    let mut cut = usize::from(u16::from_le_bytes([data[2], data[3]])) % (text.len() + 1);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let (before, after) = text.split_at(cut);
    if before.contains(needle) || after.contains(needle) {
        // The fuzzer copied it into the surroundings, glued to other words: not planted.
        return;
    }
    let input = format!("{before}{open}{planted}{close}{after}");
    let redacted = redact(&input);
    for redaction in &redacted.redactions {
        assert!(input.is_char_boundary(redaction.start) && input.is_char_boundary(redaction.end));
    }
    assert!(!redacted.text.contains(needle), "planted secret survived in {:?}", redacted.text);
    assert_eq!(redact_str(&redacted.text), redacted.text, "redacting twice differs from once");
});
