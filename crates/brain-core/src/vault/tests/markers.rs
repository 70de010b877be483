//! Markers: every type, attributes, fences, nesting, broken tags.

use expect_test::expect;

use super::*;

#[test]
fn every_spec_marker_type_is_extracted() {
    check(
        "<!-- @hot heat=9 region=left -->This paragraph is hot.<!-- @/hot -->
<!-- @lesson -->
Always write LITELLM_KEY unconditionally.
<!-- @/lesson -->
<!-- @signal severity=critical source=auth-broker -->Ban rate rising.<!-- @/signal -->
<!-- @decision date=2026-04-10 -->Deterministic parsers first.<!-- @/decision -->
<!-- @edge type=parent target=2026-04-09-artifact-platform -->
<!-- @inject target=claude.md ttl_days=30 -->Brain MVP is the top priority.<!-- @/inject -->
<!-- @todo priority=1 -->First corpus run.<!-- @/todo -->
<!-- @milestone status=done scope=v1 -->v1 shipped.<!-- @/milestone -->
",
        expect![[r#"
            L1 @hot block heat="9" region="left" ⟨This paragraph is hot.⟩
            L2 @lesson block ⟨Always write LITELLM_KEY unconditionally.⟩
            L5 @signal block severity="critical" source="auth-broker" ⟨Ban rate rising.⟩
            L6 @decision block date="2026-04-10" ⟨Deterministic parsers first.⟩
            L7 @edge inline type="parent" target="2026-04-09-artifact-platform"
            L8 @inject block target="claude.md" ttl_days="30" ⟨Brain MVP is the top priority.⟩
            L9 @todo block priority="1" ⟨First corpus run.⟩
            L10 @milestone block status="done" scope="v1" ⟨v1 shipped.⟩
        "#]],
    );
}

#[test]
fn attribute_values_may_be_quoted_and_tags_may_be_spaced_freely() {
    check(
        r#"<!--@signal severity=warning source="auth broker" note="a > b, c=d"   -->text<!--@/signal-->
<!--   @edge   type=parent
       target=spans-lines -->
<!-- @todo priority=2-->tight end<!-- @/todo -->
<!-- @edge type=related target=abc-->
<!-- @decision by="" -->empty quotes<!-- @/decision -->
"#,
        expect![[r#"
            L1 @signal block severity="warning" source="auth broker" note="a > b, c=d" ⟨text⟩
            L2 @edge inline type="parent" target="spans-lines"
            L4 @todo block priority="2" ⟨tight end⟩
            L5 @edge inline type="related" target="abc"
            L6 @decision block by="" ⟨empty quotes⟩
        "#]],
    );
}

#[test]
fn a_quoted_value_not_followed_by_a_space_is_read_unquoted_like_the_regex_does() {
    check(
        r#"<!-- @lesson a="x"y -->one<!-- @/lesson -->
<!-- @lesson a="x b="c" -->two<!-- @/lesson -->
"#,
        expect![[r#"
            L1 @lesson block a="\"x\"y" ⟨one⟩
            L2 @lesson block a="\"x" b="c" ⟨two⟩
        "#]],
    );
}

#[test]
fn an_opener_without_closer_is_an_inline_marker_with_a_warning() {
    check(
        "<!-- @lesson -->
forgot to close this one
<!-- @lesson -->closed<!-- @/lesson -->
<!-- @edge type=child target=x -->
",
        expect![[r#"
            L1 @lesson inline
            L3 @lesson block ⟨closed⟩
            L4 @edge inline type="child" target="x"
            ! L1 warning: `@lesson` is never closed by `<!-- @/lesson -->`; read as an inline marker with no content
        "#]],
    );
}

#[test]
fn markers_inside_fenced_code_are_ignored() {
    check(
        "```markdown
<!-- @lesson -->in backticks<!-- @/lesson -->
```
~~~
<!-- @lesson -->in tildes<!-- @/lesson -->
```
still inside: a backtick fence cannot close a tilde fence
~~~
````
```
<!-- @todo -->inside a longer fence<!-- @/todo -->
````
   ```
indented up to three spaces still fences <!-- @todo -->x<!-- @/todo -->
   ```
    ```
four spaces is not a fence <!-- @todo -->counted<!-- @/todo -->
``` not a fence because the info string has a ` backtick <!-- @todo -->also counted<!-- @/todo -->
<!-- @lesson -->outside<!-- @/lesson -->
",
        expect![[r#"
            L17 @todo block ⟨counted⟩
            L18 @todo block ⟨also counted⟩
            L19 @lesson block ⟨outside⟩
        "#]],
    );
}

#[test]
fn a_block_may_contain_a_fence_and_a_closer_inside_a_fence_does_not_close() {
    check(
        "<!-- @lesson -->
Run this:
```sh
make test  # <!-- @/lesson --> in code does not close
```
done
<!-- @/lesson -->
",
        expect![[r#"
            L1 @lesson block ⟨Run this:
            ```sh
            make test  # <!-- @/lesson --> in code does not close
            ```
            done⟩
        "#]],
    );
}

#[test]
fn an_unterminated_fence_hides_the_rest_of_the_file_with_an_info() {
    check(
        "<!-- @lesson -->before<!-- @/lesson -->
~~~~
<!-- @lesson -->after<!-- @/lesson -->
~~~
",
        expect![[r#"
            L1 @lesson block ⟨before⟩
            ! L2 info: code fence is never closed; markers after it are ignored as code
        "#]],
    );
}

#[test]
fn nested_blocks_of_different_types_are_both_extracted() {
    check(
        "<!-- @milestone scope=v1 -->
Shipped v1.
<!-- @lesson -->Scope creep kills.<!-- @/lesson -->
<!-- @/milestone -->
<!-- @hot --> a <!-- @signal --> b <!-- @/hot --> c <!-- @/signal -->
",
        expect![[r#"
            L1 @milestone block scope="v1" ⟨Shipped v1.
            <!-- @lesson -->Scope creep kills.<!-- @/lesson -->⟩
            L3 @lesson block ⟨Scope creep kills.⟩
            L5 @hot block ⟨a <!-- @signal --> b⟩
            L5 @signal block ⟨b <!-- @/hot --> c⟩
        "#]],
    );
}

#[test]
fn nested_blocks_of_the_same_type_close_innermost_first() {
    check(
        "<!-- @todo -->outer <!-- @todo -->inner<!-- @/todo --> tail<!-- @/todo -->\n",
        expect![[r#"
            L1 @todo block ⟨outer <!-- @todo -->inner<!-- @/todo --> tail⟩
            L1 @todo block ⟨inner⟩
        "#]],
    );
}

#[test]
fn unknown_types_are_kept_as_generic_markers_with_an_info() {
    check(
        "<!-- @question who=ops -->Why 502s?<!-- @/question -->
<!-- @Lesson -->capitalised<!-- @/Lesson -->
<!-- @anchor -->
",
        expect![[r#"
            L1 @question block who="ops" ⟨Why 502s?⟩
            L2 @Lesson block ⟨capitalised⟩
            L3 @anchor inline
            ! L1 info: unknown marker type `@question` kept as a generic marker
            ! L2 info: unknown marker type `@Lesson` kept as a generic marker (did you mean `@lesson`?)
            ! L3 info: unknown marker type `@anchor` kept as a generic marker
        "#]],
    );
}

#[test]
fn closers_without_openers_are_reported_and_ignored() {
    check(
        "text <!-- @/lesson -->
<!-- @edge type=parent target=x --><!-- @/edge -->
<!-- @todo -->a<!-- @/todo --><!-- @/todo -->
",
        expect![[r#"
            L2 @edge inline type="parent" target="x"
            L3 @todo block ⟨a⟩
            ! L1 warning: closer `<!-- @/lesson -->` has no open `@lesson` marker; ignored
            ! L2 warning: `@edge` markers are inline only; closer `<!-- @/edge -->` ignored
            ! L3 warning: closer `<!-- @/todo -->` has no open `@todo` marker; ignored
        "#]],
    );
}

#[test]
fn plain_comments_are_ignored_and_broken_marker_tags_are_reported() {
    check(
        "<!-- synthesized -->
<!-- parent / child / sibling -->
<!-- @ not a marker either -->
<!-- @lesson important stuff -->
<!-- @/ -->
<!-- @/lesson extra -->
<!-- @todo priority= -->
<!-- @lesson
",
        expect![[r#"
            ! L4 warning: malformed marker "<!-- @lesson important stuff -->" (attributes are key=value or key="value", and the tag ends with -->); ignored
            ! L5 warning: malformed marker "<!-- @/ -->" (a closer needs a type, like <!-- @/lesson -->); ignored
            ! L6 warning: malformed marker "<!-- @/lesson extra -->" (a closer is <!-- @/TYPE -->); ignored
            ! L7 warning: malformed marker "<!-- @todo priority= -->" (attributes are key=value or key="value", and the tag ends with -->); ignored
            ! L8 warning: malformed marker "<!-- @lesson" (attributes are key=value or key="value", and the tag ends with -->); ignored
        "#]],
    );
}

#[test]
fn an_opener_inside_the_attribute_of_a_broken_tag_is_still_found_like_the_regex_finds_it() {
    check(
        "<!-- @note see=<!-- @lesson -->inner<!-- @/lesson -->
<!--@a k=1 k=<!--@a k=1 k=<!--@lesson broken
<!--@lesson -->x<!--@/lesson-->
",
        expect![[r#"
            L1 @lesson block ⟨inner⟩
            L3 @lesson block ⟨x⟩
            ! L1 warning: malformed marker "<!-- @note see=<!-- @lesson -->" (attributes are key=value or key="value", and the tag ends with -->); ignored
            ! L2 warning: malformed marker "<!--@a k=1 k=<!--@a k=1 k=<!--@lesson broken" (attributes are key=value or key="value", and the tag ends with -->); ignored
            ! L2 warning: malformed marker "<!--@a k=1 k=<!--@lesson broken" (attributes are key=value or key="value", and the tag ends with -->); ignored
            ! L2 warning: malformed marker "<!--@lesson broken" (attributes are key=value or key="value", and the tag ends with -->); ignored
        "#]],
    );
}

#[test]
fn attribute_values_the_items_cannot_use_are_reported() {
    check(
        "<!-- @signal severity=apocalyptic -->s<!-- @/signal -->
<!-- @todo priority=high -->t<!-- @/todo -->
<!-- @hot heat=11 -->h<!-- @/hot -->
<!-- @inject ttl_days=soon -->i<!-- @/inject -->
<!-- @edge type=cousin target=x -->
<!-- @edge target=x -->
",
        expect![[r#"
            L1 @signal block severity="apocalyptic" ⟨s⟩
            L2 @todo block priority="high" ⟨t⟩
            L3 @hot block heat="11" ⟨h⟩
            L4 @inject block ttl_days="soon" ⟨i⟩
            L5 @edge inline type="cousin" target="x"
            L6 @edge inline target="x"
            ! L1 warning: invalid severity "apocalyptic" (allowed: info, warning, critical, nuclear, resolved); the signal is read as info
            ! L2 warning: todo priority "high" is not an integer; read as none
            ! L3 warning: hot heat "11" is not an integer from 0 to 10; ignored
            ! L4 warning: inject ttl_days "soon" is not a whole number of days; ignored
            ! L5 warning: edge type "cousin" is not one of parent, child, sibling, unblocks, supersedes, related; edge ignored
            ! L6 warning: an `@edge` marker needs `type` and `target`; edge ignored
        "#]],
    );
}

#[test]
fn markers_in_the_frontmatter_are_not_read_and_lines_count_from_the_file_start() {
    check(
        "---\ntitle: \"<!-- @lesson -->\"\n---\n\n<!-- @todo -->x<!-- @/todo -->\n",
        expect![[r#"
            frontmatter
              L2 title = "<!-- @lesson -->"  ⟨"<!-- @lesson -->"⟩
              · title="<!-- @lesson -->"
            body from line-start ""
            L5 @todo block ⟨x⟩
        "#]],
    );
}

#[test]
fn spans_locate_the_whole_block_for_removal() {
    let text = "before\n<!-- @signal severity=resolved -->gone (CLEARED: fixed)<!-- @/signal -->\nafter\n";
    let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    let marker = &doc.markers[0];
    let removed = format!("{}{}", &text[..marker.span.start], &text[marker.span.end..]);
    assert_eq!(removed, "before\n\nafter\n");
    assert_eq!(&text[marker.content_span.clone()], "gone (CLEARED: fixed)");
    assert_eq!(&text[marker.opener_span.clone()], "<!-- @signal severity=resolved -->");
}

#[test]
fn the_tag_length_limit_is_reported() {
    let text = format!("<!-- @lesson {} -->x<!-- @/lesson -->\n", "k=v ".repeat(600));
    let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    assert!(doc.markers.is_empty());
    assert!(diagnostics[0].message.contains("longer than the 2048-byte limit"), "{diagnostics:?}");
}

#[test]
fn diagnostics_are_capped_per_file() {
    let text = "<!-- @/lesson -->\n".repeat(MAX_DIAGNOSTICS_PER_FILE + 50);
    let (_, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    assert_eq!(diagnostics.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
    expect![["clusters/2026-04-09/arc.md:0: warning: 50 more diagnostics not shown (at most 200 per file)"]]
        .assert_eq(&diagnostics.last().unwrap().to_string());
}

// ---------------------------------------------------------------------------------------
// Hostile input: bounded nesting, markers and derived content (issue 11)

/// `depth` nested blocks of `marker_type`, each level with a line of its own text.
fn nested(marker_type: &str, depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        text.push_str(&format!("<!-- @{marker_type} -->\nlevel {level}\n"));
    }
    for _ in 0..depth {
        text.push_str(&format!("<!-- @/{marker_type} -->\n"));
    }
    text
}

#[test]
fn blocks_nested_deeper_than_the_bound_are_kept_as_markers_but_derive_nothing() {
    let text = nested("lesson", MAX_NESTING_DEPTH as usize + 2);
    let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    assert_invariants(text.as_bytes(), &doc, &diagnostics);
    assert_eq!(doc.markers.len(), MAX_NESTING_DEPTH as usize + 2, "every marker is kept with exact spans");
    assert!(doc.markers.iter().all(|marker| marker.closed));
    let depths: Vec<u32> = doc.markers.iter().map(|marker| marker.depth).collect();
    assert_eq!(depths, [0, 1, 2, 3, 4, 5, 6, 7, 8, 8]);
    expect![[r#"
        [
            Diagnostic {
                file: "clusters/2026-04-09/arc.md",
                line: 17,
                severity: Warning,
                message: "2 blocks nested inside 8 or more other blocks derive no item (the first on this line)",
            },
        ]
    "#]]
    .assert_debug_eq(&diagnostics);
    let (derived, _) = derived_items(&doc, text.as_bytes());
    assert_eq!(derived.len(), MAX_NESTING_DEPTH as usize, "the eight outer levels derive, the two inner ones not");
}

#[test]
fn blocks_of_different_types_that_overlap_without_nesting_count_their_depth_right() {
    // hot and signal overlap; the lesson after both closed is at the top level again.
    let text =
        "<!-- @hot --> a <!-- @signal --> b <!-- @/hot --> c <!-- @/signal --> <!-- @lesson -->d<!-- @/lesson -->";
    let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    let depths: Vec<(&str, u32)> = doc.markers.iter().map(|m| (m.marker_type.as_str(), m.depth)).collect();
    assert_eq!(depths, [("hot", 0), ("signal", 1), ("lesson", 0)]);
}

/// The hostile note of issue 11: thousands of nested openers and closers. Before, every
/// level held a copy of everything inside it (280 KB: 4.8 s and 2.2 GB). Now the parse
/// copies no content, and what the blocks derive is bounded by the nesting depth.
#[test]
fn thousands_of_nested_blocks_derive_content_linear_in_the_file() {
    for marker_type in ["lesson", "signal", "foo"] {
        let text = nested(marker_type, 8_000);
        let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
        assert_eq!(doc.markers.len(), 8_000);
        let (derived, derive_diagnostics) = derived_items(&doc, text.as_bytes());
        let content_bytes: usize = derived
            .iter()
            .map(|derived| match derived {
                DerivedMarker::Item(item) => item.content.len() + item.title.len(),
                DerivedMarker::Inject(inject) => inject.content.len(),
            })
            .sum();
        // At most one copy of the file per level that may derive.
        assert!(content_bytes <= MAX_NESTING_DEPTH as usize * text.len(), "{content_bytes} bytes derived");
        if marker_type == "foo" {
            assert!(derived.is_empty(), "unknown types derive nothing");
        } else {
            assert_eq!(derived.len(), MAX_NESTING_DEPTH as usize);
            assert!(diagnostics.iter().any(|d| d.message.contains("7992 blocks nested inside 8")), "{diagnostics:?}");
        }
        assert!(derive_diagnostics.is_empty(), "{derive_diagnostics:?}");
    }
}

#[test]
fn markers_past_the_per_file_bound_are_ignored_with_one_diagnostic_and_their_closers_stay_paired() {
    // A lesson opened first and closed last; in between the bound is reached, and a lesson
    // that is not kept opens and closes: its closer must not close the kept one.
    let mut text = String::from("<!-- @lesson -->\nkept\n");
    text.push_str(&"<!-- @edge type=related target=x -->\n".repeat(MAX_MARKERS_PER_FILE));
    text.push_str("<!-- @lesson -->dropped<!-- @/lesson -->\n<!-- @/lesson -->\n");
    let (doc, diagnostics) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    assert_eq!(doc.markers.len(), MAX_MARKERS_PER_FILE);
    let lesson = &doc.markers[0];
    assert!(lesson.closed);
    assert!(
        lesson.content(&text).ends_with("<!-- @lesson -->dropped<!-- @/lesson -->"),
        "the outer lesson closes last"
    );
    let last = diagnostics.last().unwrap();
    assert_eq!(last.message, "2 more markers ignored: at most 20000 markers are read per file");
}

#[test]
fn items_past_the_per_file_bound_are_not_derived_and_reported() {
    let text: String =
        (0..MAX_DERIVED_PER_FILE + 5).map(|n| format!("<!-- @todo -->task {n}<!-- @/todo -->\n")).collect();
    let (doc, _) = parse(RELPATH, text.as_bytes(), usize::MAX);
    let (derived, diagnostics) = derived_items(&doc, text.as_bytes());
    assert_eq!(derived.len(), MAX_DERIVED_PER_FILE);
    expect![[r#"
        [
            Diagnostic {
                file: "clusters/2026-04-09/arc.md",
                line: 0,
                severity: Warning,
                message: "5 more blocks not indexed: at most 10000 items are derived per file",
            },
        ]
    "#]]
    .assert_debug_eq(&diagnostics);
}

#[test]
fn derived_content_past_the_per_file_budget_is_not_derived_and_reported() {
    let block = "x".repeat(1024 * 1024 - 16);
    // Five blocks of almost 1 MiB: four fit the 4 MiB budget.
    let text: String = (0..5).map(|n| format!("<!-- @lesson -->{n}{block}<!-- @/lesson -->\n")).collect();
    let (doc, _) = parse(RELPATH, text.as_bytes(), usize::MAX);
    let (derived, diagnostics) = derived_items(&doc, text.as_bytes());
    assert_eq!(derived.len(), 4);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(
        diagnostics[0].message,
        "1 blocks not indexed: the blocks of one file derive at most 4194304 bytes of content"
    );
}
