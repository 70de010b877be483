//! Frontmatter: typed keys, YAML shapes, malformed values and rewriting one value in place.

use std::fmt::Write as _;

use expect_test::expect;

use super::*;

#[test]
fn the_spec_arc_frontmatter_is_read_with_every_typed_key() {
    check(
        "---
cluster_id: 2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10
title: LiteLLM MCP Self-Service Arc
region: left-hemisphere   # left-hemisphere | right-hemisphere | amygdala
status: complete          # active | complete | stalled | abandoned | graduated
heat: 9                   # 0-10, computed (§6.3)
created: 2026-04-09T10:12:00Z
summary: one line, optional
source_sessions: [7d031027-…, a69e27d7-…]
signals: {errors: 4, joy: 1, tools: 1950}
synthesized: true
edges: [{type: parent, target: 2026-04-01-artifact-platform-…}]
replayed_from: [2026-03-01-old-arc]
---
body
",
        expect![[r#"
            frontmatter
              L2 cluster_id = "2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10"  ⟨2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10⟩
              L3 title = "LiteLLM MCP Self-Service Arc"  ⟨LiteLLM MCP Self-Service Arc⟩
              L4 region = "left-hemisphere"  ⟨left-hemisphere⟩
              L5 status = "complete"  ⟨complete⟩
              L6 heat = "9"  ⟨9⟩
              L7 created = "2026-04-09T10:12:00Z"  ⟨2026-04-09T10:12:00Z⟩
              L8 summary = "one line, optional"  ⟨one line, optional⟩
              L9 source_sessions = ["7d031027-…", "a69e27d7-…"]  ⟨[7d031027-…, a69e27d7-…]⟩
              L10 signals = {errors: "4", joy: "1", tools: "1950"}  ⟨{errors: 4, joy: 1, tools: 1950}⟩
              L11 synthesized = "true"  ⟨true⟩
              L12 edges = [{type: "parent", target: "2026-04-01-artifact-platform-…"}]  ⟨[{type: parent, target: 2026-04-01-artifact-platform-…}]⟩
              L13 replayed_from = ["2026-03-01-old-arc"]  ⟨[2026-03-01-old-arc]⟩
              · cluster_id=2026-04-09-litellm-mcp-self-service-3f2a9c1b7d10
              · title="LiteLLM MCP Self-Service Arc"
              · region=left-hemisphere
              · status=complete
              · heat=9
              · created=at 2026-04-09T10:12:00Z
              · summary="one line, optional"
              · source_sessions=["7d031027-…", "a69e27d7-…"]
              · signals=errors:4 joy:1 tools:1950
              · synthesized=true
              · edges=[parent→2026-04-01-artifact-platform-…]
              · replayed_from=["2026-03-01-old-arc"]
            body from line-start "body"
        "#]],
    );
}

#[test]
fn quoted_values_are_unquoted_and_may_hold_colons_and_hashes() {
    check(
        r#"---
title: "LiteLLM: self-service # not a comment"
summary: 'it''s "fine"'   # a comment
cluster_id: "tab\there \u00e9 \x41"
region: 'left'
status: "Active"
---
"#,
        expect![[r#"
            frontmatter
              L2 title = "LiteLLM: self-service # not a comment"  ⟨"LiteLLM: self-service # not a comment"⟩
              L3 summary = "it's \"fine\""  ⟨'it''s "fine"'⟩
              L4 cluster_id = "tab\there é A"  ⟨"tab\there \u00e9 \x41"⟩
              L5 region = "left"  ⟨'left'⟩
              L6 status = "Active"  ⟨"Active"⟩
              · cluster_id=tab	here é A
              · title="LiteLLM: self-service # not a comment"
              · region=left-hemisphere
              · status=active
              · summary="it's \"fine\""
            body from line-start ""
        "#]],
    );
}

#[test]
fn block_lists_and_maps_are_read_at_any_indentation() {
    check(
        "---
source_sessions:
- 7d031027-5bdc-478b-a558-442ac37ec5a0
- a69e27d7-cc96-4831-b570-15bb3a8798ad
replayed_from:
    - 2026-03-01-a   # first
    - '2026-03-02-b'
signals:
  errors: 2
  joy: 0
  tools: 3000
  extra: kept
edges:
  - type: parent
    target: 2026-04-01-x
  - {type: sibling, target: 2026-04-02-y}
  -
    type: related
    target: 2026-04-03-z
nested:
  - - a
    - b
  - key: [1, 2]
    other:
      deep: yes
---
",
        expect![[r#"
            frontmatter
              L2 source_sessions = ["7d031027-5bdc-478b-a558-442ac37ec5a0", "a69e27d7-cc96-4831-b570-15bb3a8798ad"]  ⟨- 7d031027-5bdc-478b-a558-442ac37ec5a0
            - a69e27d7-cc96-4831-b570-15bb3a8798ad⟩
              L5 replayed_from = ["2026-03-01-a", "2026-03-02-b"]  ⟨- 2026-03-01-a   # first
                - '2026-03-02-b'⟩
              L8 signals = {errors: "2", joy: "0", tools: "3000", extra: "kept"}  ⟨errors: 2
              joy: 0
              tools: 3000
              extra: kept⟩
              L13 edges = [{type: "parent", target: "2026-04-01-x"}, {type: "sibling", target: "2026-04-02-y"}, {type: "related", target: "2026-04-03-z"}]  ⟨- type: parent
                target: 2026-04-01-x
              - {type: sibling, target: 2026-04-02-y}
              -
                type: related
                target: 2026-04-03-z⟩
              L20 nested = [["a", "b"], {key: ["1", "2"], other: {deep: "yes"}}]  ⟨- - a
                - b
              - key: [1, 2]
                other:
                  deep: yes⟩
              · source_sessions=["7d031027-5bdc-478b-a558-442ac37ec5a0", "a69e27d7-cc96-4831-b570-15bb3a8798ad"]
              · signals=errors:2 joy:0 tools:3000
              · edges=[parent→2026-04-01-x, sibling→2026-04-02-y, related→2026-04-03-z]
              · replayed_from=["2026-03-01-a", "2026-03-02-b"]
              · unknown=["nested"]
            body from line-start ""
        "#]],
    );
}

#[test]
fn flow_collections_may_span_lines_and_carry_comments() {
    check(
        "---
source_sessions: [
  a,   # the first
  'b, c',
  \"d\",
]
edges: [{type: parent,
         target: x}]
empty_list: []
empty_map: {}
pair_in_list: [k: v, solo]
---
",
        expect![[r#"
            frontmatter
              L2 source_sessions = ["a", "b, c", "d"]  ⟨[
              a,   # the first
              'b, c',
              "d",
            ]⟩
              L7 edges = [{type: "parent", target: "x"}]  ⟨[{type: parent,
                     target: x}]⟩
              L9 empty_list = []  ⟨[]⟩
              L10 empty_map = {}  ⟨{}⟩
              L11 pair_in_list = [{k: "v"}, "solo"]  ⟨[k: v, solo]⟩
              · source_sessions=["a", "b, c", "d"]
              · edges=[parent→x]
              · unknown=["empty_list", "empty_map", "pair_in_list"]
            body from line-start ""
        "#]],
    );
}

#[test]
fn block_scalars_keep_or_fold_their_lines() {
    check(
        "---
summary: >
  folded onto
  one line

  second paragraph
title: |-
  literal
    indented
plain: a plain value
  continued here
---
",
        expect![[r#"
            frontmatter
              L2 summary = "folded onto one line\nsecond paragraph\n"  ⟨>
              folded onto
              one line

              second paragraph⟩
              L7 title = "literal\n  indented"  ⟨|-
              literal
                indented⟩
              L10 plain = "a plain value continued here"  ⟨a plain value
              continued here⟩
              · title="literal\n  indented"
              · summary="folded onto one line\nsecond paragraph\n"
              · unknown=["plain"]
            body from line-start ""
        "#]],
    );
}

#[test]
fn crlf_line_endings_are_read_like_lf() {
    check(
        "---\r\ncluster_id: c1\r\nheat: 3\r\nsource_sessions:\r\n  - s1\r\n  - s2\r\n---\r\n<!-- @lesson -->\r\nkeep it\r\n<!-- @/lesson -->\r\n",
        expect![[r#"
            frontmatter
              L2 cluster_id = "c1"  ⟨c1⟩
              L3 heat = "3"  ⟨3⟩
              L4 source_sessions = ["s1", "s2"]  ⟨- s1␍
              - s2⟩
              · cluster_id=c1
              · heat=3
              · source_sessions=["s1", "s2"]
            body from line-start "<!-- @lesson -->"
            L8 @lesson block ⟨keep it⟩
        "#]],
    );
}

#[test]
fn created_accepts_rfc3339_offsets_dates_and_naive_date_times() {
    for (value, expected) in [
        ("2026-04-09T10:12:00Z", "at 2026-04-09T10:12:00Z"),
        ("2026-07-24T16:47:43.653186+00:00", "at 2026-07-24T16:47:43Z"),
        ("2026-04-09T12:12:00+02:00", "at 2026-04-09T10:12:00Z"),
        ("2026-04-09", "date 2026-04-09T00:00:00Z"),
        ("2026-04-09T10:12:00", "at 2026-04-09T10:12:00Z"),
        ("'2026-04-09 10:12:00'", "at 2026-04-09T10:12:00Z"),
    ] {
        let input = format!("---\ncreated: {value}\n---\n");
        let (doc, diagnostics) = parse(RELPATH, input.as_bytes(), DEFAULT_MAX_BYTES);
        assert!(diagnostics.is_empty(), "{value}: {diagnostics:?}");
        let created = doc.frontmatter.unwrap().created.unwrap();
        let kind = if matches!(created, Created::Date(_)) { "date" } else { "at" };
        let rendered = format!("{kind} {}", crate::time::format_timestamp(created.timestamp()));
        assert_eq!(rendered, expected, "{value}");
    }
}

#[test]
fn unknown_keys_are_kept_in_order_with_their_spans() {
    check(
        "---
zeta: 1
cluster_id: c
alpha: [x]
mitigates: auth-broker-api   # kept with its comment outside the value
---
",
        expect![[r#"
            frontmatter
              L2 zeta = "1"  ⟨1⟩
              L3 cluster_id = "c"  ⟨c⟩
              L4 alpha = ["x"]  ⟨[x]⟩
              L5 mitigates = "auth-broker-api"  ⟨auth-broker-api⟩
              · cluster_id=c
              · unknown=["zeta", "alpha", "mitigates"]
            body from line-start ""
        "#]],
    );
}

#[test]
fn a_frontmatter_without_closing_delimiter_is_reported_and_read_as_body() {
    check(
        "---
title: never closed
<!-- @lesson -->still found<!-- @/lesson -->
",
        expect![[r#"
            L3 @lesson block ⟨still found⟩
            ! L1 warning: frontmatter opened on line 1 is never closed by a `---` line; read as body
        "#]],
    );
}

#[test]
fn malformed_frontmatter_values_are_reported_and_the_body_still_parsed() {
    check(
        "---
title: ok
source_sessions: [a, b
heat: warm
status: exploded
region: cerebellum
created: last tuesday
synthesized: maybe
signals: {errors: many}
edges: [{type: cousin, target: x}, {type: parent}]
this line has no colon
  stray: indented
title: again
cluster_id: [not, scalar]
heat2: \"unclosed
---
<!-- @todo -->body still parsed<!-- @/todo -->
",
        expect![[r#"
            frontmatter
              L2 title = "ok"  ⟨ok⟩
              L3 source_sessions = ~  ⟨[a, b⟩
              L4 heat = "warm"  ⟨warm⟩
              L5 status = "exploded"  ⟨exploded⟩
              L6 region = "cerebellum"  ⟨cerebellum⟩
              L7 created = "last tuesday"  ⟨last tuesday⟩
              L8 synthesized = "maybe"  ⟨maybe⟩
              L9 signals = {errors: "many"}  ⟨{errors: many}⟩
              L10 edges = [{type: "cousin", target: "x"}, {type: "parent"}]  ⟨[{type: cousin, target: x}, {type: parent}]⟩
              L13 title = "again"  ⟨again⟩
              L14 cluster_id = ["not", "scalar"]  ⟨[not, scalar]⟩
              L15 heat2 = ~  ⟨"unclosed⟩
              · title="again"
              · signals=errors:0 joy:0 tools:0
              · unknown=["heat2"]
            body from line-start "<!-- @todo -->body still parsed<!-- @/todo -->"
            L17 @todo block ⟨body still parsed⟩
            ! L3 warning: malformed frontmatter value: `[` is never closed; value ignored
            ! L4 warning: heat "warm" is not an integer from 0 to 10; ignored
            ! L5 warning: status "exploded" is not one of active, complete, stalled, abandoned, graduated, resolved; ignored
            ! L6 warning: region "cerebellum" is not one of left-hemisphere, right-hemisphere, amygdala, pineal, frontal-lobe, bridge; ignored
            ! L7 warning: created "last tuesday" is not an RFC 3339 timestamp or a date like 2026-04-09; ignored
            ! L8 warning: `synthesized` "maybe" is not true or false; ignored
            ! L9 warning: signals.errors is not a non-negative integer; read as 0
            ! L10 warning: edge type "cousin" is not one of parent, child, sibling, unblocks, supersedes, related; edge ignored
            ! L10 warning: an edge needs `type` and `target`; edge ignored
            ! L11 warning: expected `key: value` in frontmatter; line ignored
            ! L12 warning: unexpected indentation in frontmatter; line ignored
            ! L13 warning: duplicate frontmatter key `title` (first on line 2); the last value wins
            ! L14 warning: `cluster_id` should be a single value, found a list; ignored
            ! L15 warning: malformed frontmatter value: a double-quoted value is never closed; value ignored
        "#]],
    );
}

#[test]
fn heat_outside_the_scale_is_clamped_with_a_warning() {
    check(
        "---\nheat: 14\n---\n",
        expect![[r#"
            frontmatter
              L2 heat = "14"  ⟨14⟩
              · heat=10
            body from line-start ""
            ! L2 warning: heat 14 is outside 0 to 10; clamped
        "#]],
    );
}

#[test]
fn files_without_frontmatter_and_empty_frontmatter_are_fine() {
    check("# Just a note\n\n---\nnot: frontmatter\n", expect![[r#""#]]);
    check(
        "---\n---\nbody\n",
        expect![[r#"
            frontmatter
            body from line-start "body"
        "#]],
    );
    check(
        "\u{feff}---\ntitle: after a byte-order mark\n---\n",
        expect![[r#"
            frontmatter
              L2 title = "after a byte-order mark"  ⟨after a byte-order mark⟩
              · title="after a byte-order mark"
            body from line-start ""
        "#]],
    );
}

#[test]
fn deeply_nested_frontmatter_is_cut_off_with_a_warning_instead_of_overflowing() {
    let flow = format!("---\ndeep: {}{}\n---\n", "[".repeat(10_000), "]".repeat(10_000));
    let (doc, diagnostics) = parse(RELPATH, flow.as_bytes(), DEFAULT_MAX_BYTES);
    assert_eq!(doc.frontmatter.unwrap().entries[0].value, FmValue::Null);
    assert!(diagnostics[0].message.contains("nested more than 32 levels"), "{diagnostics:?}");

    let mut block = String::from("---\n");
    for depth in 0..200 {
        writeln!(block, "{}k{depth}:", " ".repeat(depth)).unwrap();
    }
    block.push_str("---\n");
    let (_, diagnostics) = parse(RELPATH, block.as_bytes(), DEFAULT_MAX_BYTES);
    assert!(diagnostics.iter().any(|d| d.message.contains("nested more than 32 levels")), "{diagnostics:?}");
}

#[test]
fn set_frontmatter_scalar_rewrites_or_inserts_one_value_and_keeps_every_other_byte() {
    let arc =
        "---\ncluster_id: c1\nheat: 9   # computed\nstatus: 'active'\nempty:\nsessions: [a]\n---\nbody <!-- @x -->\n";
    let cases: &[(&str, &str, &str, Expect)] = &[
        (
            arc,
            "heat",
            "4",
            expect![[r#"
                ---
                cluster_id: c1
                heat: 4   # computed
                status: 'active'
                empty:
                sessions: [a]
                ---
                body <!-- @x -->
            "#]],
        ),
        (
            arc,
            "status",
            "graduated",
            expect![[r#"
                ---
                cluster_id: c1
                heat: 9   # computed
                status: graduated
                empty:
                sessions: [a]
                ---
                body <!-- @x -->
            "#]],
        ),
        (
            arc,
            "empty",
            "now set",
            expect![[r#"
                ---
                cluster_id: c1
                heat: 9   # computed
                status: 'active'
                empty: now set
                sessions: [a]
                ---
                body <!-- @x -->
            "#]],
        ),
        (
            arc,
            "summary",
            "needs: quoting # here",
            expect![[r#"
                ---
                cluster_id: c1
                heat: 9   # computed
                status: 'active'
                empty:
                sessions: [a]
                summary: "needs: quoting # here"
                ---
                body <!-- @x -->
            "#]],
        ),
        (
            "---\r\ntitle: t\r\n---\r\n",
            "heat",
            "7",
            expect![[r#"
                ---␍
                title: t␍
                heat: 7␍
                ---␍
            "#]],
        ),
    ];
    for (input, key, value, expect) in cases {
        let output = set_frontmatter_scalar(input, key, value).unwrap();
        let (doc, diagnostics) = parse(RELPATH, output.as_bytes(), DEFAULT_MAX_BYTES);
        let fm = doc.frontmatter.unwrap();
        assert_eq!(fm.get(key).unwrap().value, FmValue::Scalar(value.to_string()), "{output}");
        assert!(diagnostics.iter().all(|d| d.line != fm.get(key).unwrap().line), "{diagnostics:?}");
        if input.contains('\r') {
            assert_eq!(output, "---\r\ntitle: t\r\nheat: 7\r\n---\r\n");
        }
        expect.assert_eq(&output.replace('\r', "␍"));
    }
}

#[test]
fn set_frontmatter_scalar_refuses_collections_multiline_values_and_missing_frontmatter() {
    let arc = "---\nsessions: [a]\nlist:\n  - a\nfolded: >\n  x\n---\n";
    assert_eq!(set_frontmatter_scalar(arc, "sessions", "x"), None);
    assert_eq!(set_frontmatter_scalar(arc, "list", "x"), None);
    assert_eq!(set_frontmatter_scalar(arc, "folded", "x"), None);
    assert_eq!(set_frontmatter_scalar(arc, "bad key", "x"), None);
    assert_eq!(set_frontmatter_scalar("no frontmatter\n", "heat", "1"), None);
    assert_eq!(set_frontmatter_scalar("---\nunclosed: 1\n", "heat", "1"), None);
}

#[test]
fn set_frontmatter_scalar_rewrites_the_last_of_duplicate_keys() {
    let output = set_frontmatter_scalar("---\nheat: 1\nheat: 2\n---\n", "heat", "5").unwrap();
    assert_eq!(output, "---\nheat: 1\nheat: 5\n---\n");
}
