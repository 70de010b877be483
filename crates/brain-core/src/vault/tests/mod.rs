//! Tests of the vault parser: one `check(fixture, expect)` per behaviour, rendered as a stable
//! text snapshot, plus properties over arbitrary and marker-heavy input.

mod derive;
mod frontmatter;
mod markers;

use std::fmt::Write as _;

use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::item::validate_id;

const RELPATH: &str = "clusters/2026-04-09/arc.md";

fn check(input: &str, expect: Expect) {
    check_bytes(input.as_bytes(), expect);
}

fn check_bytes(input: &[u8], expect: Expect) {
    expect.assert_eq(&parse_and_render(input, DEFAULT_MAX_BYTES));
}

fn parse_and_render(input: &[u8], max_bytes: usize) -> String {
    let (doc, diagnostics) = parse(RELPATH, input, max_bytes);
    assert_invariants(input, &doc, &diagnostics);
    render(input, &doc, &diagnostics)
}

fn render(input: &[u8], doc: &VaultDoc, diagnostics: &[Diagnostic]) -> String {
    let text = valid_prefix(input);
    let mut out = String::new();
    if let Some(fm) = &doc.frontmatter {
        writeln!(out, "frontmatter").unwrap();
        for entry in &fm.entries {
            let written = text[entry.value_span.clone()].replace('\r', "␍");
            writeln!(out, "  L{} {} = {}  ⟨{written}⟩", entry.line, entry.key, render_value(&entry.value)).unwrap();
        }
        render_typed(fm, &mut out);
    }
    let body = &text[doc.body_span.clone()];
    if doc.frontmatter.is_some() {
        writeln!(out, "body from line-start {:?}", body.lines().next().unwrap_or("")).unwrap();
    }
    for marker in &doc.markers {
        let shape = if marker.closed { "block" } else { "inline" };
        write!(out, "L{} @{} {shape}", marker.line, marker.marker_type.as_str()).unwrap();
        for (key, value) in &marker.attrs {
            write!(out, " {key}={value:?}").unwrap();
        }
        if marker.closed {
            write!(out, " ⟨{}⟩", marker.content(text)).unwrap();
        }
        out.push('\n');
    }
    for diagnostic in diagnostics {
        writeln!(out, "! L{} {}: {}", diagnostic.line, diagnostic.severity, diagnostic.message).unwrap();
    }
    out
}

fn render_value(value: &FmValue) -> String {
    match value {
        FmValue::Null => "~".to_string(),
        FmValue::Scalar(text) => format!("{text:?}"),
        FmValue::List(items) => format!("[{}]", items.iter().map(render_value).collect::<Vec<_>>().join(", ")),
        FmValue::Map(pairs) => format!(
            "{{{}}}",
            pairs.iter().map(|(key, value)| format!("{key}: {}", render_value(value))).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn render_typed(fm: &Frontmatter, out: &mut String) {
    let mut typed: Vec<String> = Vec::new();
    if let Some(value) = &fm.cluster_id {
        typed.push(format!("cluster_id={value}"));
    }
    if let Some(value) = &fm.title {
        typed.push(format!("title={value:?}"));
    }
    if let Some(value) = fm.region {
        typed.push(format!("region={value}"));
    }
    if let Some(value) = fm.status {
        typed.push(format!("status={value}"));
    }
    if let Some(value) = fm.heat {
        typed.push(format!("heat={value}"));
    }
    if let Some(value) = fm.created {
        let kind = match value {
            Created::At(_) => "at",
            Created::Date(_) => "date",
        };
        typed.push(format!("created={kind} {}", crate::time::format_timestamp(value.timestamp())));
    }
    if let Some(value) = &fm.summary {
        typed.push(format!("summary={value:?}"));
    }
    if !fm.source_sessions.is_empty() {
        typed.push(format!("source_sessions={:?}", fm.source_sessions));
    }
    if let Some(value) = fm.signals {
        typed.push(format!("signals=errors:{} joy:{} tools:{}", value.errors, value.joy, value.tools));
    }
    if let Some(value) = fm.synthesized {
        typed.push(format!("synthesized={value}"));
    }
    if !fm.edges.is_empty() {
        let edges: Vec<String> = fm.edges.iter().map(|edge| format!("{}→{}", edge.edge_type, edge.target)).collect();
        typed.push(format!("edges=[{}]", edges.join(", ")));
    }
    if !fm.replayed_from.is_empty() {
        typed.push(format!("replayed_from={:?}", fm.replayed_from));
    }
    let unknown: Vec<&str> = fm.unknown_entries().map(|entry| entry.key.as_str()).collect();
    if !unknown.is_empty() {
        typed.push(format!("unknown={unknown:?}"));
    }
    for line in typed {
        writeln!(out, "  · {line}").unwrap();
    }
}

fn valid_prefix(input: &[u8]) -> &str {
    match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(err) => std::str::from_utf8(&input[..err.valid_up_to()]).unwrap(),
    }
}

/// What every parse result guarantees, whatever the input.
fn assert_invariants(input: &[u8], doc: &VaultDoc, diagnostics: &[Diagnostic]) {
    let text = valid_prefix(input);
    let in_text = |span: &std::ops::Range<usize>, what: &str| {
        assert!(span.start <= span.end && span.end <= text.len(), "{what} {span:?} outside 0..{}", text.len());
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end), "{what} {span:?} splits a char");
    };
    in_text(&doc.body_span, "body");
    assert_eq!(doc.relpath, RELPATH);
    if let Some(fm) = &doc.frontmatter {
        in_text(&fm.span, "frontmatter");
        assert_eq!(fm.span.end, doc.body_span.start);
        for entry in &fm.entries {
            in_text(&entry.span, "entry");
            in_text(&entry.value_span, "value");
            assert!(fm.span.start <= entry.span.start && entry.span.end <= fm.span.end);
            assert!(entry.span.start <= entry.value_span.start && entry.value_span.end <= entry.span.end);
            assert!(
                text[entry.span.clone()].starts_with(entry.key.as_str())
                    || text[entry.span.clone()].starts_with(['"', '\''])
            );
        }
    }
    let mut previous_start = 0;
    for marker in &doc.markers {
        for (span, what) in [(&marker.span, "span"), (&marker.opener_span, "opener"), (&marker.content_span, "content")]
        {
            in_text(span, what);
        }
        assert!(marker.span.start >= doc.body_span.start && marker.span.start >= previous_start);
        previous_start = marker.span.start;
        assert_eq!(marker.span.start, marker.opener_span.start);
        assert!(marker.opener_span.end <= marker.content_span.start && marker.content_span.end <= marker.span.end);
        let opener = &text[marker.opener_span.clone()];
        assert!(opener.starts_with("<!--") && opener.ends_with("-->"), "opener {opener:?}");
        if marker.closed {
            assert_eq!(&text[marker.content_span.clone()], marker.content(text));
            assert!(text[marker.span.clone()].ends_with("-->"));
        } else {
            assert!(marker.content(text).is_empty());
            assert_eq!(marker.span, marker.opener_span);
        }
        assert!(!marker.marker_type.as_str().is_empty());
    }
    for diagnostic in diagnostics {
        assert_eq!(diagnostic.file, RELPATH);
    }
    let (derived, derive_diagnostics) = derived_items(doc, input);
    for derived in derived {
        validate_id(derived.id()).unwrap();
    }
    for diagnostic in derive_diagnostics {
        assert_eq!(diagnostic.file, RELPATH);
    }
}

// ---------------------------------------------------------------------------------------
// Whole files

#[test]
fn invalid_utf8_parses_the_valid_prefix_and_reports_an_error() {
    check_bytes(
        b"<!-- @lesson -->ok<!-- @/lesson -->\nline two \xff\xfe <!-- @todo -->lost<!-- @/todo -->\n",
        expect![[r#"
            L1 @lesson block ⟨ok⟩
            ! L2 error: invalid UTF-8 at byte 45; only the 45 bytes before it were parsed
        "#]],
    );
}

#[test]
fn binary_files_are_skipped_with_a_warning() {
    check_bytes(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        expect![[r#"
            ! L0 warning: binary file (NUL byte at offset 8); not parsed
        "#]],
    );
}

#[test]
fn oversized_files_are_skipped_with_a_warning() {
    let text = "<!-- @lesson -->big<!-- @/lesson -->\n".repeat(10);
    expect![[r#"
        ! L0 warning: file is 370 bytes, over the 100-byte limit; not parsed
    "#]]
    .assert_eq(&parse_and_render(text.as_bytes(), 100));
    assert!(parse_and_render(text.as_bytes(), 370).contains("@lesson block"));
}

#[test]
fn a_realistic_arc_parses_without_diagnostics() {
    let text = include_str!("../../../tests/data/vault/arc-2k.md");
    check(
        text,
        expect![[r#"
            frontmatter
              L2 cluster_id = "2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10"  ⟨2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10⟩
              L3 title = "LiteLLM MCP Self-Service Arc"  ⟨LiteLLM MCP Self-Service Arc⟩
              L4 region = "left-hemisphere"  ⟨left-hemisphere⟩
              L5 status = "active"  ⟨active⟩
              L6 heat = "9"  ⟨9⟩
              L7 created = "2026-04-09T10:12:00Z"  ⟨2026-04-09T10:12:00Z⟩
              L8 summary = "Self-service MCP registration through the LiteLLM gateway"  ⟨Self-service MCP registration through the LiteLLM gateway⟩
              L9 source_sessions = ["7d031027-5bdc-478b-a558-442ac37ec5a0", "a69e27d7-cc96-4831-b570-15bb3a8798ad"]  ⟨[7d031027-5bdc-478b-a558-442ac37ec5a0, a69e27d7-cc96-4831-b570-15bb3a8798ad]⟩
              L10 signals = {errors: "4", joy: "1", tools: "1950"}  ⟨{errors: 4, joy: 1, tools: 1950}⟩
              L11 synthesized = "true"  ⟨true⟩
              L12 edges = [{type: "parent", target: "2026-04-01-artifact-platform-1a2b3c4d5e6f"}]  ⟨[{type: parent, target: 2026-04-01-artifact-platform-1a2b3c4d5e6f}]⟩
              L13 project = "litellm-gateway"  ⟨litellm-gateway⟩
              · cluster_id=2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10
              · title="LiteLLM MCP Self-Service Arc"
              · region=left-hemisphere
              · status=active
              · heat=9
              · created=at 2026-04-09T10:12:00Z
              · summary="Self-service MCP registration through the LiteLLM gateway"
              · source_sessions=["7d031027-5bdc-478b-a558-442ac37ec5a0", "a69e27d7-cc96-4831-b570-15bb3a8798ad"]
              · signals=errors:4 joy:1 tools:1950
              · synthesized=true
              · edges=[parent→2026-04-01-artifact-platform-1a2b3c4d5e6f]
              · unknown=["project"]
            body from line-start ""
            L22 @hot block heat="9" region="left" ⟨Self-service MCP registration is live for three teams; the rest migrate this week.⟩
            L31 @decision block date="2026-04-10" ⟨Use deterministic parsers over LLM agents for structured data extraction.⟩
            L35 @lesson block ⟨Always write LITELLM_KEY unconditionally — silent failures are the worst.⟩
            L45 @signal block severity="critical" source="auth-broker" note="ban rate rising since 09:00" ⟨Auth broker ban rate increasing — amygdala candidate.⟩
            L49 @todo block priority="1" ⟨First operator-profile corpus run.⟩
            L53 @todo block priority="3" ⟨Document the key-rotation runbook.⟩
            L57 @milestone block status="done" scope="v1" ⟨v1 shipped: registration, scoping, audit log.⟩
            L61 @inject block target="claude.md" ttl_days="30" ⟨Brain MVP is the top priority; do not touch the billing gateway.⟩
            L67 @edge inline type="parent" target="2026-04-01-artifact-platform-1a2b3c4d5e6f"
            L68 @edge inline type="related" target="2026-03-28-gateway-quotas-0f9e8d7c6b5a"
        "#]],
    );
}

#[test]
fn arcs_written_by_the_benchmark_generator_parse_without_diagnostics() {
    for text in [
        include_str!("../../../tests/data/vault/generated-graduated.md"),
        include_str!("../../../tests/data/vault/generated-signal.md"),
    ] {
        let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let fm = doc.frontmatter.as_ref().unwrap();
        assert!(fm.cluster_id.is_some() && fm.status.is_some() && fm.heat.is_some() && fm.created.is_some());
        assert!(fm.signals.is_some() && !fm.source_sessions.is_empty());
        assert!(!derived_items(&doc, text.as_bytes()).0.is_empty());
    }
}

/// Run with `BRAIN_TEST_VAULT=/tmp/v1k cargo test -p brain-core vault -- --ignored` after
/// `python3 shared/bench/gen_vault.py vault --out /tmp/v1k --n 1000 --seed 7`.
#[test]
#[ignore = "needs a generated vault in BRAIN_TEST_VAULT"]
fn a_generated_vault_parses_without_diagnostics() {
    let root = std::path::PathBuf::from(std::env::var("BRAIN_TEST_VAULT").expect("BRAIN_TEST_VAULT"));
    let mut pending = vec![root.clone()];
    let (mut files, mut markers) = (0, 0);
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                let bytes = std::fs::read(&path).unwrap();
                let relpath = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                let (doc, diagnostics) = parse(&relpath, &bytes, DEFAULT_MAX_BYTES);
                assert!(diagnostics.is_empty(), "{diagnostics:?}");
                files += 1;
                markers += doc.markers.len();
            }
        }
    }
    eprintln!("{files} files, {markers} markers, no diagnostics");
}

// ---------------------------------------------------------------------------------------
// Properties

const FRAGMENTS: &[&str] = &[
    "<!-- @lesson -->",
    "<!-- @/lesson -->",
    "<!-- @signal severity=critical source=a -->",
    "<!-- @/signal -->",
    "<!-- @edge type=parent target=x -->",
    "<!-- @foo -->",
    "<!-- @/foo -->",
    "<!--",
    "-->",
    "<!-- @",
    "@/",
    "@",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "=",
    "k",
    "x y",
    "k=\"a b\"",
    "k=v",
    "lesson",
    "todo",
    "-",
    "--",
    ">",
    "<",
    "é",
    "\u{a0}",
    "字",
    "#",
];

const FENCE_AND_FRONTMATTER_FRAGMENTS: &[&str] = &[
    "```",
    "~~~",
    "````",
    "   ",
    "---\n",
    "key: value\n",
    "- item\n",
    "  nested: [a, {b: c}]\n",
    "\"",
    "'",
    "[",
    "{",
    ": ",
];

fn marker_heavy_text(fragments: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(fragments), 0..max).prop_map(|parts| parts.concat())
}

fn any_fragments() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| FRAGMENTS.iter().chain(FENCE_AND_FRONTMATTER_FRAGMENTS).copied().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic_and_spans_stay_on_char_boundaries(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        max_bytes in prop_oneof![Just(DEFAULT_MAX_BYTES), 0..700usize],
    ) {
        let (doc, diagnostics) = parse(RELPATH, &bytes, max_bytes);
        assert_invariants(&bytes, &doc, &diagnostics);
    }

    #[test]
    fn marker_heavy_text_never_panics_and_spans_stay_on_char_boundaries(
        text in marker_heavy_text(any_fragments(), 120),
    ) {
        let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
        assert_invariants(text.as_bytes(), &doc, &diagnostics);
        let with_frontmatter = format!("---\n{text}\n---\n{text}");
        let (doc, diagnostics) = parse(RELPATH, with_frontmatter.as_bytes(), DEFAULT_MAX_BYTES);
        assert_invariants(with_frontmatter.as_bytes(), &doc, &diagnostics);
        if set_frontmatter_scalar(&with_frontmatter, "heat", "3").is_some() {
            let rewritten = set_frontmatter_scalar(&with_frontmatter, "heat", "3").unwrap();
            let (doc, _) = parse(RELPATH, rewritten.as_bytes(), DEFAULT_MAX_BYTES);
            prop_assert_eq!(doc.frontmatter.unwrap().heat, Some(3));
        }
    }

    /// Outside code fences and frontmatter, openers are exactly the matches of the SPEC regex.
    #[test]
    fn openers_match_the_spec_regex(text in marker_heavy_text(FRAGMENTS, 60)) {
        let text = format!("\n{text}");
        let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
        let ours: Vec<(usize, usize, String)> = doc
            .markers
            .iter()
            .map(|marker| (marker.opener_span.start, marker.opener_span.end, marker.marker_type.as_str().to_string()))
            .collect();
        let mut theirs = Vec::new();
        let mut their_attrs = Vec::new();
        for captures in opener_regex().captures_iter(&text) {
            let whole = captures.get(0).unwrap();
            theirs.push((whole.start(), whole.end(), captures[1].to_string()));
            // Without quotes, the attribute group splits on whitespace and the first `=`.
            let attrs: Vec<(String, String)> = captures[2]
                .split_whitespace()
                .filter_map(|pair| pair.split_once('='))
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect();
            their_attrs.push((whole.as_str().contains('"'), attrs));
        }
        prop_assert_eq!(&ours, &theirs, "{:?}", text);
        for (marker, (quoted, attrs)) in doc.markers.iter().zip(&their_attrs) {
            if !quoted {
                prop_assert_eq!(&marker.attrs, attrs, "{:?}", text);
            }
        }
    }

    #[test]
    fn set_frontmatter_scalar_changes_only_the_value(
        heat in 0u8..=10,
        comment in prop::bool::ANY,
        crlf in prop::bool::ANY,
        present in prop::bool::ANY,
    ) {
        let line_break = if crlf { "\r\n" } else { "\n" };
        let heat_line = if present { format!("heat: 1{}{line_break}", if comment { " # c" } else { "" }) } else { String::new() };
        let text = format!("---{line_break}title: t{line_break}{heat_line}tags: [a]{line_break}---{line_break}body{line_break}");
        let rewritten = set_frontmatter_scalar(&text, "heat", &heat.to_string()).unwrap();
        let (doc, diagnostics) = parse(RELPATH, rewritten.as_bytes(), DEFAULT_MAX_BYTES);
        prop_assert!(diagnostics.is_empty());
        let fm = doc.frontmatter.unwrap();
        prop_assert_eq!(fm.heat, Some(heat));
        prop_assert_eq!(fm.title.as_deref(), Some("t"));
        let span = fm.value_span("heat").unwrap();
        let restored = format!("{}{}{}", &rewritten[..span.start], if present { "1" } else { "" }, &rewritten[span.end..]);
        if present {
            prop_assert_eq!(restored, text);
        }
    }
}

fn opener_regex() -> &'static regex::Regex {
    static REGEX: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    REGEX.get_or_init(|| regex::Regex::new(r#"<!--\s*@(\w+)((?:\s+\w+=(?:"[^"]*"|[^\s>]+))*)\s*-->"#).unwrap())
}
