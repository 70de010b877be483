//! The redactor's corpus tests (positives and look-alike negatives in
//! `tests/data/redaction/`), properties and edge cases.

mod corpus {
    use super::super::engine::kind_rank;
    use super::super::*;
    use expect_test::expect;
    use proptest::prelude::*;
    use std::borrow::Cow;

    const POSITIVES: &str = include_str!("../../tests/data/redaction/positives.txt");
    const NEGATIVES: &str = include_str!("../../tests/data/redaction/negatives.txt");
    const PROSE: &str = include_str!("../../tests/data/redaction/prose.txt");
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

    /// Issue 27: the committed sample of ordinary prose naming passwords, secrets and
    /// credentials (the false-positive measurement's figure is in docs/RELIABILITY.md).
    #[test]
    fn every_line_of_prose_about_passwords_comes_out_byte_identical() {
        let lines = corpus_cases(PROSE, false);
        assert!(lines.len() >= 100, "{} lines of prose", lines.len());
        let failures: Vec<String> = lines
            .iter()
            .filter(|(_, _, text)| redact_str(text) != text.as_str())
            .map(|(line, _, text)| format!("line {line}:\n  input: {text}\n  got:   {}", redact_str(text)))
            .collect();
        assert!(failures.is_empty(), "{} lines of prose were altered:\n{}", failures.len(), failures.join("\n"));
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
            // Passwords named in prose (issue 27).
            "db password",
            "pass",
            "pw",
            "：",
            " — ",
            " for the db",
            "Xk9mQ2vLp7zRw",
            "密码",
            "**",
            "`",
        ];
        proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..24).prop_map(|parts| parts.concat())
    }

    /// The passwords named in prose that the fuzz target `redact_planted` plants (issue 27):
    /// the words before the value, the value, what closes it.
    const PROSE_PLANTED: &[(&str, &str, &str)] = &[
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

    /// What the fuzz target puts between a planted secret and its surroundings.
    const SEPARATORS: &[(&str, &str)] = &[
        (" ", " "),
        ("\n", "\n"),
        ("\t", "\t"),
        ("\"", "\""),
        ("'", "'"),
        ("(", ")"),
        ("`", "`"),
        ("<", ">"),
        (": ", ","),
    ];

    proptest! {
        #[test]
        fn a_password_named_in_prose_never_survives_whatever_surrounds_it(
            before in prop_oneof![any::<String>(), secret_shaped_text()],
            after in prop_oneof![any::<String>(), secret_shaped_text()],
            form in 0..PROSE_PLANTED.len(),
            separator in 0..SEPARATORS.len(),
        ) {
            let (label, value, end) = PROSE_PLANTED[form];
            prop_assume!(!before.contains(value) && !after.contains(value));
            let (open, close) = SEPARATORS[separator];
            let input = format!("{before}{open}{label}{value}{end}{close}{after}");
            let once = redact(&input).text;
            prop_assert!(!once.contains(value), "{value} survived in {once:?}");
            prop_assert_eq!(redact(&once).text, once);
        }

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

mod glued_tokens {
    use super::super::redact_str;

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

mod markers {
    use super::super::redact_str;

    #[test]
    fn a_detector_never_takes_an_earlier_marker_for_a_value() {
        // Found by fuzzing: `curl -u` read the marker as `user:password`, then what followed it.
        for input in [
            "curl -u\thf_FUZZ0example1EXAMPLE2example3EXAM\tnext",
            "-u >an=x(sk_live_FUZZ0example1EXAMPLE2exam) text",
            "3P -u \u{6}/atiB`AKIAFUZZEXAMPLE0KEY7`u \u{f}",
        ] {
            let once = redact_str(input).into_owned();
            assert!(once.contains("[REDACTED:"), "{once}");
            assert_eq!(redact_str(&once), once, "{input:?}");
        }
    }
}

/// Found by fuzzing (`import_line`): an assignment whose key ran on from inside a token
/// (`ghp_…____TOKEN=value`) overlapped the token and was dropped; once the token became a
/// marker, a second pass found the assignment. One pass now redacts both.
mod hidden_behind_a_marker {
    use super::super::redact_str;

    #[test]
    fn a_secret_hidden_behind_a_redacted_token_is_found_in_one_pass() {
        let text = format!(
            "tokGITHO%(KEN=ghp_EXAMPLE0ex{}{}TTTTOKEN=ghp_EXAM~PLE0eampMxl.PBE",
            "C".repeat(50),
            "_".repeat(60)
        );
        let once = redact_str(&text).into_owned();
        assert!(once.ends_with("TOKEN=[REDACTED:secret-assignment]"), "{once}");
        assert_eq!(redact_str(&once), once, "redacting twice equals once");
    }
}

/// The false-positive measurement of docs/RELIABILITY.md (Redaction): how many lines of
/// ordinary prose the redactor alters. Not a test of behaviour (the committed
/// `tests/data/redaction/prose.txt` is, in `corpus`): it prints figures over a corpus chosen
/// at run time, so the same measurement can be taken before and after a change.
///
/// `BRAIN_REDACT_PROSE` lists files or folders (`:`-separated); without it, this repository.
/// Markdown and text files count every line, Rust files their comment lines only (code is not
/// prose); `target/`, `.git/`, `fuzz/` and the test corpora (`tests/data/`, which plant
/// secrets on purpose) are skipped. Each line is redacted on its own. Altered lines are
/// printed as redacted, never as written: the first 60, or `BRAIN_REDACT_PROSE_SHOW`.
///
/// ```text
/// BRAIN_REDACT_PROSE=/path/to/docs:/path/to/notes \
///   cargo test -p brain-core --release --lib prose_measurement -- --ignored --nocapture
/// ```
mod prose_measurement {
    use super::super::redact_str;
    use std::borrow::Cow;
    use std::path::{Path, PathBuf};

    const SKIPPED_FOLDERS: &[&str] = &["target", ".git", "fuzz", "data", "node_modules"];

    fn files_under(path: &Path, files: &mut Vec<PathBuf>) {
        if path.is_file() {
            files.push(path.to_path_buf());
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut entries: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect();
        entries.sort();
        for entry in entries {
            let name = entry.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            if entry.is_dir() {
                if !SKIPPED_FOLDERS.contains(&name.as_str()) {
                    files_under(&entry, files);
                }
            } else if name.ends_with(".md") || name.ends_with(".txt") || name.ends_with(".rs") {
                files.push(entry);
            }
        }
    }

    /// The prose lines of a file: every line, or a Rust file's comments without their `//`.
    fn prose_lines(path: &Path, text: &str) -> Vec<String> {
        if path.extension().is_some_and(|extension| extension == "rs") {
            return text
                .lines()
                .filter_map(|line| line.trim_start().strip_prefix("//"))
                .map(|comment| comment.trim_start_matches(['/', '!']).trim_start().to_owned())
                .collect();
        }
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    #[ignore = "a measurement, not a test: prints figures (run with --ignored --nocapture)"]
    fn lines_of_ordinary_prose_altered_per_ten_thousand() {
        let roots: Vec<PathBuf> = match std::env::var_os("BRAIN_REDACT_PROSE") {
            Some(paths) => std::env::split_paths(&paths).collect(),
            None => vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")],
        };
        let mut files = Vec::new();
        for root in &roots {
            files_under(root, &mut files);
        }
        let shown_at_most: usize =
            std::env::var("BRAIN_REDACT_PROSE_SHOW").ok().and_then(|count| count.parse().ok()).unwrap_or(60);
        let names_a_secret =
            regex::Regex::new(r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|secret|credentials?)\b").unwrap();
        let (mut lines, mut naming, mut altered, mut altered_naming) = (0usize, 0usize, 0usize, 0usize);
        let mut examples = Vec::new();
        for file in &files {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            for (index, line) in prose_lines(file, &text).iter().enumerate() {
                lines += 1;
                let names = names_a_secret.is_match(line);
                naming += usize::from(names);
                if let Cow::Owned(redacted) = redact_str(line) {
                    altered += 1;
                    altered_naming += usize::from(names);
                    if examples.len() < shown_at_most {
                        let shown: String = redacted.chars().take(200).collect();
                        examples.push(format!("  {}:{}: {shown}", file.display(), index + 1));
                    }
                }
            }
        }
        let per_10k = |count: usize, of: usize| if of == 0 { 0.0 } else { count as f64 * 10_000.0 / of as f64 };
        println!("prose measurement over {} files from {roots:?}", files.len());
        println!("  {lines} lines, {altered} altered: {:.2} per 10k lines", per_10k(altered, lines));
        println!(
            "  {naming} lines name a password, secret or credential, {altered_naming} of them altered: {:.1} per 10k such lines",
            per_10k(altered_naming, naming)
        );
        println!("altered lines, as redacted (first {shown_at_most}):");
        for example in &examples {
            println!("{example}");
        }
    }
}

/// Issue 27: a password named anywhere in a sentence, not only at the start of a line, is
/// redacted; prose about passwords is not.
mod prose_passwords {
    use super::super::redact_str;

    const MARK: &str = "[REDACTED:secret-assignment]";

    #[track_caller]
    fn assert_redacted(input: &str, secret: &str) {
        let redacted = redact_str(input);
        assert!(!redacted.contains(secret), "{secret} survived in {redacted:?}");
        assert_eq!(redacted, input.replacen(secret, MARK, 1), "only the value is redacted");
    }

    #[test]
    fn the_four_forms_the_hostile_run_found_surviving_are_redacted() {
        assert_redacted("db password: Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw");
        assert_redacted("The staging password: Hq3vT8wLm2Zk", "Hq3vT8wLm2Zk");
        assert_redacted("we set the db_password: Pq7Lm3Xz9Vb2", "Pq7Lm3Xz9Vb2");
        assert_redacted("Login is admin, password Zr5Tg8Uj1Ik4o", "Zr5Tg8Uj1Ik4o");
    }

    #[test]
    fn a_labelled_password_is_redacted_wherever_the_sentence_puts_it() {
        for (input, secret) in [
            ("Login is admin,password Zr5Tg8Uj1Ik4o", "Zr5Tg8Uj1Ik4o"),
            ("Deploy notes. The db password: Xk9mQ2vLp7zRw. Rotate it monthly.", "Xk9mQ2vLp7zRw"),
            ("user: admin, password: Xk9$mQ2!vLp, host: db.internal", "Xk9$mQ2!vLp"),
            ("- **DB password**: Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("* staging password — Hq3vT8wLm2Zk", "Hq3vT8wLm2Zk"),
            ("the DB Password：Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("the root passphrase is now Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("the password is: Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("db pass: Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("vpn pw: Hq3vT8wLm2Zk", "Hq3vT8wLm2Zk"),
            ("the client secret: Pq7Lm3Xz9Vb2xQ", "Pq7Lm3Xz9Vb2xQ"),
            ("password for the staging db: Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("| staging | password | Xk9mQ2vLp7zRw |", "Xk9mQ2vLp7zRw"),
            ("mot de passe : Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("数据库密码：Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("the admin password:\n  Xk9mQ2vLp7zRw", "Xk9mQ2vLp7zRw"),
            ("set `DB_PASSWORD`: Xk9mQ2vLp7zRw in the chart", "Xk9mQ2vLp7zRw"),
            ("then set dbPassword: Xk9mQ2vLp7zRw in values.yaml", "Xk9mQ2vLp7zRw"),
            ("the wifi password: changeme.", "changeme"),
            ("the vpn password: hunter2, then the OTP", "hunter2"),
            ("Our Wi-Fi password: \"correct horse battery staple\"", "correct horse battery staple"),
            ("the db password's Xk9mQ2vLp7zRw now", "Xk9mQ2vLp7zRw"),
            ("CREATE ROLE joe PASSWORD 'SCRAM-SHA-256$4096:Xk9mQ2vLp7zRw' LOGIN;", "SCRAM-SHA-256$4096:Xk9mQ2vLp7zRw"),
        ] {
            assert_redacted(input, secret);
        }
    }

    /// A word holding many labels is redacted to its end once (its end is read once, not once
    /// per label: that cost 1 s for 32 KB); the next word's labels find their own word's end.
    #[test]
    fn a_long_word_of_labels_is_redacted_whole_and_the_next_word_on_its_own() {
        let run = "password:Ab1&".repeat(400);
        let input = format!("first {run} then password:Zx9&password:Qw8-{} last", "k".repeat(150));
        let redacted = redact_str(&input);
        assert_eq!(redacted, format!("first password:{MARK} then password:{MARK} last"), "{input}");
    }

    /// Found by the proptest that mirrors the fuzz target: a private-key block that ran on
    /// through an earlier marker was dropped after merging with the password inside it.
    #[test]
    fn a_password_inside_a_block_that_touches_a_marker_is_redacted() {
        let input = "-----BEGIN RSA PRIVATE KEY-----[REDACTED:jwt] db password: Xk9mQ2vLpFUZZ7zRw -----END RSA PRIVATE KEY-----";
        assert_redacted(input, "Xk9mQ2vLpFUZZ7zRw");
    }

    /// Found by the same proptest: the value of one label held another label, whose value
    /// was skipped past.
    #[test]
    fn a_label_inside_another_labels_value_is_searched_too() {
        let redacted = redact_str("--password \"the password \"Tr0ub4dor&3FUZZ\"\"");
        assert!(!redacted.contains("Tr0ub4dor&3FUZZ"), "{redacted}");
    }

    #[test]
    fn a_value_longer_than_the_window_it_is_judged_on_is_redacted_to_its_end() {
        let long = "Xk9mQ2vLp7zRw".repeat(20);
        assert_redacted(&format!("the db password: {long} (rotated)"), &long);
    }

    #[test]
    fn prose_about_passwords_is_kept_byte_identical() {
        for text in [
            "reset your password in settings",
            "the password field is required",
            "password: see the vault",
            "password policy: 12 characters minimum",
            "db password: <password>",
            "db password: ***",
            "db password: ${DB_PASSWORD}",
            "db password: $PASSWORD",
            "the db password: required.",
            "Never issue a password prompt. If the server requires password authentication, the connection fails.",
            "tests pass: 105 passed, 0 failed",
            "PASS: test_v2_login_flow",
            "the output of pwd: /home/bob/project",
            "login({ user: name, password: pw, remember: true })",
            "print(\"password:\", pw, \"user:\", name)",
            "password hashing uses argon2id with a per-user salt",
            "| password | required |",
            "Passwort: siehe Tresor",
        ] {
            assert_eq!(redact_str(text), text);
        }
    }
}

/// docs/RELIABILITY.md row 25: the edge forms left in clear after the fourth review.
mod edge_forms {
    use super::super::redact_str;
    use super::super::values::{is_bracketed_secret, is_environment_name};

    const MARK: &str = "[REDACTED:secret-assignment]";

    /// A value encoded once may hold `%2526` (its own `%26`): it ends at `%26` only; encoded
    /// twice, at `%2526` or `%26`.
    #[test]
    fn an_encoded_value_ends_at_the_ampersand_of_its_own_level() {
        assert_eq!(redact_str("password%3DTr0ub%2526x9%26next%3D1"), format!("password%3D{MARK}%26next%3D1"));
        assert_eq!(redact_str("state=password%253DTr0ub4dor9%26next=1"), format!("state=password%253D{MARK}%26next=1"));
        let long = "Xk9mQ2vLp7zRw".repeat(20);
        assert_eq!(redact_str(&format!("password%253D{long}%2526a%253Db")), format!("password%253D{MARK}%2526a%253Db"));
    }

    /// The pattern reads a value 128 characters ahead and the check cuts it at the encoded
    /// `&`: the search must go on from that cut, not from the end of the window, or the
    /// pairs inside the window are skipped (16 of 40 were left in clear, once encoded or
    /// twice; the extra rounds over the output found only some).
    #[test]
    fn every_pair_of_a_long_encoded_run_is_redacted() {
        for (unit, value) in [("password%3Dab1%26", "ab1"), ("password%253DAb1x%2526", "Ab1x")] {
            let redacted = redact_str(&format!("x{}", unit.repeat(40))).into_owned();
            assert_eq!(redacted.matches(MARK).count(), 40, "{redacted}");
            assert!(!redacted.contains(value), "{redacted}");
        }
    }

    /// Without a `;` after it, a connection string's password runs past `&` and `=` but not
    /// past a space; a query's next parameter before an unrelated `;` is kept.
    #[test]
    fn a_connection_strings_password_runs_to_its_semicolon_and_no_further() {
        assert_eq!(
            redact_str("Server=db;Password=Tr0ub&x=9 then the service restarted"),
            format!("Server=db;Password={MARK} then the service restarted")
        );
        assert_eq!(
            redact_str("open ?password=hunter2X&user=bob; export A=b"),
            format!("open ?password={MARK}&user=bob; export A=b")
        );
        assert_eq!(
            redact_str("Server=db;Password=Tr0ub& x=y;User Id=sa"),
            format!("Server=db;Password={MARK};User Id=sa")
        );
    }

    #[test]
    fn only_an_environment_variables_shape_is_a_reference_in_json() {
        for name in ["DB_PASSWORD", "DB_PASSWORD_2", "S3_TOKEN", "PGPASSWORD", "UPPERCASE", "_TOKEN"] {
            assert!(is_environment_name(name), "{name}");
        }
        for name in ["ECRET9", "UPERSECRET2024", "ecret", "Db_Password", "TOKEN1"] {
            assert!(!is_environment_name(name), "{name}");
        }
        assert_eq!(redact_str(r#"{"password": "$TOKEN1"}"#), format!(r#"{{"password": "{MARK}"}}"#));
        // Outside JSON, `$ECRET9` is the shell's variable.
        assert_eq!(redact_str("password=$ECRET9"), "password=$ECRET9");
    }

    #[test]
    fn angle_brackets_hold_a_placeholder_unless_they_hold_a_password() {
        for inside in ["Tr0ub4dor&3", "Xk9#mQ2vL", "Xk9mQ2vL", "Passw0rd", "P@ssword1"] {
            assert!(is_bracketed_secret(inside), "{inside}");
        }
        for inside in [
            "your-key",
            "PASSWORD",
            "db password",
            "api_key",
            "YOUR_TOKEN_2",
            "Password1",
            "sha256",
            "base64",
            "hex-32",
            "oauth2Token",
            "base64Key",
            "Ab1#",
            "https://app.example/reset?t=abc123",
            "%=pwd1%",
            "@user1",
        ] {
            assert!(!is_bracketed_secret(inside), "{inside}");
        }
        assert_eq!(redact_str("password: <Tr0ub4dor&3>."), format!("password: {MARK}."));
        assert_eq!(redact_str("the db password: <your-password>."), "the db password: <your-password>.");
    }
}
