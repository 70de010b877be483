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
