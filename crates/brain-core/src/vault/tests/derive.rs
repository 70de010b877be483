//! Derived items and their content-stable ids.

use std::fmt::Write as _;

use expect_test::expect;

use super::*;

fn render_derived(doc: &VaultDoc, bytes: &[u8]) -> String {
    let mut out = String::new();
    let (derived, diagnostics) = derived_items(doc, bytes);
    for diagnostic in diagnostics {
        writeln!(out, "! L{} {}: {}", diagnostic.line, diagnostic.severity, diagnostic.message).unwrap();
    }
    for derived in derived {
        match derived {
            DerivedMarker::Item(item) => {
                write!(out, "{} L{} {} imp={} {:?}", item.id, item.line, item.kind, item.importance, item.title)
                    .unwrap();
                if let Some(severity) = item.severity {
                    write!(out, " severity={severity}").unwrap();
                }
                if let Some(source) = &item.signal_source {
                    write!(out, " source={source}").unwrap();
                }
                if let Some(heat) = item.heat {
                    write!(out, " heat={heat}").unwrap();
                }
            }
            DerivedMarker::Inject(inject) => {
                write!(
                    out,
                    "{} L{} inject target={:?} ttl_days={:?} {:?}",
                    inject.id, inject.line, inject.target, inject.ttl_days, inject.content
                )
                .unwrap();
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn block_markers_become_items_of_the_spec_kinds() {
    let text = "<!-- @lesson -->Write the key.<!-- @/lesson -->
<!-- @decision date=2026-04-10 -->Parsers first.<!-- @/decision -->
<!-- @todo priority=1 -->p1<!-- @/todo -->
<!-- @todo priority=2 -->p2<!-- @/todo -->
<!-- @todo priority=3 -->p3<!-- @/todo -->
<!-- @todo priority=7 -->p7<!-- @/todo -->
<!-- @todo -->none<!-- @/todo -->
<!-- @signal severity=critical source=auth-broker -->Ban rate rising.<!-- @/signal -->
<!-- @signal -->No severity.<!-- @/signal -->
<!-- @inject target=claude.md ttl_days=30 -->Top priority.<!-- @/inject -->
<!-- @milestone status=done -->v1 shipped.<!-- @/milestone -->
<!-- @hot heat=9 -->Hot paragraph<!-- @/hot -->
<!-- @edge type=parent target=x -->
<!-- @question -->unknown types derive nothing<!-- @/question -->
<!-- @lesson -->
<!-- @lesson --><!-- @/lesson -->
<!-- @lesson -->Write   the
key.<!-- @/lesson -->
<!-- @decision -->A title line that is much longer than one hundred characters, so it gets shortened with an ellipsis at the end
second line<!-- @/decision -->
";
    let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    expect![[r#"
        ! L17 info: the same @lesson block is written earlier in the file; indexed once
        mem_v3ee1e4a88381cfa86957076b L1 lesson imp=3 "Write the key."
        mem_vc543c5aca70179132eee20c2 L2 decision imp=3 "Parsers first."
        mem_v975541124d927e43fa2d5041 L3 todo imp=5 "p1"
        mem_v37f3b076cd07abf96b94af08 L4 todo imp=4 "p2"
        mem_v93f92fb9d32a7129e6af5ee8 L5 todo imp=3 "p3"
        mem_v51460ae28272416b89eaa71c L6 todo imp=2 "p7"
        mem_v2a9620fc863ec03f69fb6605 L7 todo imp=2 "none"
        mem_v074f349d239c3046d6803d06 L8 signal imp=3 "Ban rate rising." severity=critical source=auth-broker
        mem_v41ed180b2feec386fe33db9c L9 signal imp=3 "No severity." severity=info
        mem_v35eff546617115f5cd946b35 L10 inject target=Some("claude.md") ttl_days=Some(30) "Top priority."
        mem_v6291d13c47b6d21865f1579b L11 note imp=3 "v1 shipped."
        mem_vfc6d99d859d68e3c8b2b4370 L12 note imp=3 "Hot paragraph" heat=9
        mem_v082ccb66d8b719370befa41e L19 decision imp=3 "A title line that is much longer than one hundred characters, so it gets shortened with an ellipsis…"
    "#]]
    .assert_eq(&render_derived(&doc, text.as_bytes()));
}

#[test]
fn ids_are_stable_when_a_marker_moves_or_is_reflowed_and_change_with_content_type_or_path() {
    let id_of = |relpath: &str, text: &str| {
        let (doc, _) = parse(relpath, text.as_bytes(), DEFAULT_MAX_BYTES);
        derived_items(&doc, text.as_bytes()).0.first().map(|derived| derived.id().to_string()).unwrap()
    };
    let original = id_of("a.md", "<!-- @lesson -->Keep it simple.<!-- @/lesson -->\n");
    validate_id(&original).unwrap();
    let moved = id_of("a.md", "# Title\n\nNew intro.\n\n<!-- @lesson -->\n  Keep   it\n simple.\n<!-- @/lesson -->\n");
    assert_eq!(original, moved);
    let edited = id_of("a.md", "<!-- @lesson -->Keep it simpler.<!-- @/lesson -->\n");
    assert_ne!(original, edited);
    let other_type = id_of("a.md", "<!-- @decision -->Keep it simple.<!-- @/decision -->\n");
    assert_ne!(original, other_type);
    let other_path = id_of("b.md", "<!-- @lesson -->Keep it simple.<!-- @/lesson -->\n");
    assert_ne!(original, other_path);
    assert_eq!(original, vault_id("a.md", "lesson", "Keep it simple."));
}

#[test]
fn the_arc_id_derives_from_cluster_id_only() {
    let text = "---\ncluster_id: 2026-04-09-x-3f2a\n---\n";
    let (doc, _) = parse("clusters/a.md", text.as_bytes(), DEFAULT_MAX_BYTES);
    let (moved, _) = parse("left/projects/a.md", text.as_bytes(), DEFAULT_MAX_BYTES);
    let id = doc.arc_id().unwrap();
    validate_id(&id).unwrap();
    assert_eq!(Some(id.clone()), moved.arc_id());
    assert_eq!(id, arc_id("2026-04-09-x-3f2a"));
    assert_ne!(id, vault_id("", "arc", "2026-04-09-x-3f2a"));
    expect!["mem_v6e4143ea836065304b6ccd6d"].assert_eq(&id);
}

#[test]
fn edges_come_from_the_frontmatter_and_edge_markers() {
    let text = "---\nedges: [{type: parent, target: p}]\n---\n<!-- @edge type=sibling target=s -->\n<!-- @edge type=nope target=n -->\n";
    let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    let edges: Vec<String> = doc.edges().iter().map(|edge| format!("{}→{}", edge.edge_type, edge.target)).collect();
    assert_eq!(edges, ["parent→p", "sibling→s"]);
}

#[test]
fn the_blocks_of_an_arc_keep_their_ids_when_the_arc_moves() {
    let text = "---\ncluster_id: 2026-04-09-x-3f2a\n---\n<!-- @signal severity=warning source=ci -->CI red.<!-- @/signal -->\n<!-- @lesson -->Pin the runner.<!-- @/lesson -->\n";
    let ids = |relpath: &str| {
        let (doc, _) = parse(relpath, text.as_bytes(), DEFAULT_MAX_BYTES);
        derived_items(&doc, text.as_bytes()).0.iter().map(|d| d.id().to_string()).collect::<Vec<_>>()
    };
    let before = ids("clusters/2026-04-09/2026-04-09-x-3f2a.md");
    assert_eq!(before.len(), 2);
    assert_eq!(before, ids("left/2026-04-09-x-3f2a.md"), "graduation (a move) keeps every id");
    // A note without a cluster_id is identified by its path.
    let note = "<!-- @lesson -->Pin the runner.<!-- @/lesson -->\n";
    let (a, _) = parse("notes/a.md", note.as_bytes(), DEFAULT_MAX_BYTES);
    let (b, _) = parse("notes/b.md", note.as_bytes(), DEFAULT_MAX_BYTES);
    assert_ne!(derived_items(&a, note.as_bytes()).0[0].id(), derived_items(&b, note.as_bytes()).0[0].id());
}

#[test]
fn signals_with_the_same_text_from_other_sources_or_severities_are_distinct_and_repeats_are_reported() {
    let text = "<!-- @signal severity=warning source=ci -->Disk almost full.<!-- @/signal -->
<!-- @signal severity=warning source=db -->Disk almost full.<!-- @/signal -->
<!-- @signal severity=critical source=ci -->Disk almost full.<!-- @/signal -->
<!-- @signal source=ci severity=warning -->Disk   almost full.<!-- @/signal -->
<!-- @lesson -->Same.<!-- @/lesson -->
<!-- @lesson -->Same.<!-- @/lesson -->
";
    let (doc, _) = parse(RELPATH, text.as_bytes(), DEFAULT_MAX_BYTES);
    expect![[r#"
        ! L4 info: the same @signal block is written earlier in the file; indexed once
        ! L6 info: the same @lesson block is written earlier in the file; indexed once
        mem_vb36ef9556ca976f5dac1a748 L1 signal imp=3 "Disk almost full." severity=warning source=ci
        mem_v9b66211c7a29d0116e009a3a L2 signal imp=3 "Disk almost full." severity=warning source=db
        mem_v410231a116b7c69ca6228deb L3 signal imp=3 "Disk almost full." severity=critical source=ci
        mem_v9977da6f369c9e1d00b400ab L5 lesson imp=3 "Same."
    "#]]
    .assert_eq(&render_derived(&doc, text.as_bytes()));
}
