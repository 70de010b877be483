//! The keeper's pure parts end to end, with snapshots: three arcs of two projects (and one
//! without a project) analysed from their bytes, their heat at a fixed `now`, and the feed
//! files the tick writes from them — hot arcs, signals (a warning dated from its arc's
//! creation is stale, one with a recent `date=` is not), inject blocks — for the whole vault
//! and for one project.

use expect_test::{Expect, expect};

use super::config::VaultConfig;
use super::feed::{
    FeedState, active_inject_states, active_injects, active_signals, arc_views, hot_views, owned_by, project_hot,
    render_hot_arcs, render_injects, render_signals,
};
use super::snapshot::{IndexedFile, Snapshot};
use super::state::analyze;
use crate::Timestamp;
use crate::tokens::TokenCounter;

const NOW: &str = "2026-11-21T10:00:00Z";

const GATEWAY: &str = "---
cluster_id: 2026-11-19-gateway-quotas-3f2a9c1b7d10
title: Gateway quotas
status: active
heat: 6
created: 2026-11-19T10:00:00Z
summary: Per-team quotas on the LLM gateway
project: gateway
---
<!-- @hot heat=9 region=left -->Quotas are live for three teams.<!-- @/hot -->
<!-- @signal severity=critical source=auth-broker -->Ban rate rising since 09:00.<!-- @/signal -->
<!-- @inject target=claude.md ttl_days=30 -->Never raise a team's quota without its lead.<!-- @/inject -->
";

const BILLING: &str = "---
cluster_id: 2026-10-01-billing-export-0f9e8d7c6b5a
title: Billing export
status: active
created: 2026-10-01T10:00:00Z
project: billing
---
<!-- @signal severity=warning source=ci -->Export job flaky on Mondays.<!-- @/signal -->
<!-- @signal severity=warning source=ledger date=2026-11-20 -->Ledger totals off by one cent.<!-- @/signal -->
";

const SHARED: &str = "---
cluster_id: 2026-11-20-runner-images-1a2b3c4d5e6f
title: Runner images | CI
status: active
heat: 3
created: 2026-11-20T10:00:00Z
---
<!-- @signal severity=info source=ci -->New runner image rolls out Friday.<!-- @/signal -->
";

fn snapshot() -> Snapshot {
    let mut snapshot = Snapshot::new();
    for (relpath, text) in [
        ("clusters/2026-11-19/gateway.md", GATEWAY),
        ("clusters/2026-10-01/billing.md", BILLING),
        ("clusters/2026-11-20/runners.md", SHARED),
    ] {
        let mtime_ns = NOW.parse::<Timestamp>().unwrap().as_nanosecond() as i64 - 86_400_000_000_000;
        let mut analyzed = analyze(relpath, text.as_bytes(), mtime_ns, 1 << 20, TokenCounter::Heuristic);
        assert!(analyzed.diagnostics.is_empty(), "{relpath}: {:?}", analyzed.diagnostics);
        // As the scan decides: each file owns its `cluster_id` (no duplicates here).
        analyzed.state.arc_owner = true;
        let file = IndexedFile {
            size: text.len() as u64,
            mtime_ns,
            sha256: String::new(),
            state: analyzed.state,
            diagnostics: Vec::new(),
        };
        snapshot.insert(relpath.to_string(), file);
    }
    snapshot
}

fn check(actual: String, expected: Expect) {
    expected.assert_eq(&actual);
}

#[test]
fn the_feed_files_of_a_small_vault_read_as_rendered() {
    let now: Timestamp = NOW.parse().unwrap();
    let config = VaultConfig::default();
    let snapshot = snapshot();
    let views = arc_views(&snapshot, now);
    let heats: Vec<String> = views.iter().map(|view| format!("{} {}", view.arc.cluster_id, view.heat)).collect();
    check(
        heats.join("\n"),
        expect![[r#"
        2026-10-01-billing-export-0f9e8d7c6b5a 0
        2026-11-19-gateway-quotas-3f2a9c1b7d10 3
        2026-11-20-runner-images-1a2b3c4d5e6f 5"#]],
    );
    check(
        render_hot_arcs(&hot_views(&views, config.hot_arcs), now),
        expect![[r#"
        ---
        id: hot-arcs-2026-11-21
        title: Active Hot Arcs
        priority: 10
        ttl: 3600
        severity: info
        ---
        ## Hot Arcs — 2026-11-21

        | Arc | Heat | Region | Status | What it is |
        |---|---|---|---|---|
        | 2026-11-20-runner-images-1a2b3c4d5e6f | 5 | - | active | Runner images \| CI |
        | 2026-11-19-gateway-quotas-3f2a9c1b7d10 | 3 | - | active | Per-team quotas on the LLM gateway |
        | 2026-10-01-billing-export-0f9e8d7c6b5a | 0 | - | active | Billing export |
    "#]],
    );
    check(
        render_signals(&active_signals(&snapshot, now, &config), now),
        expect![[r#"
        ---
        id: signals-2026-11-21
        title: Active Signals
        priority: 8
        ttl: 3600
        severity: critical
        ---
        ## Active Signals — 2026-11-21

        - **[critical]** (auth-broker) Ban rate rising since 09:00.
        - **[warning]** (ledger) Ledger totals off by one cent.
        - **[info]** (ci) New runner image rolls out Friday.
    "#]],
    );
    check(
        render_injects(&active_injects(&active_inject_states(&snapshot, now)), now),
        expect![[r#"
        ---
        id: inject-2026-11-21
        title: Inject Blocks
        priority: 9
        ttl: 86400
        severity: info
        ---
        ## Inject Blocks — 2026-11-21

        **[claude.md]** Never raise a team's quota without its lead.
    "#]],
    );
}

#[test]
fn one_projects_feed_keeps_its_own_entries_and_those_without_a_project() {
    let now: Timestamp = NOW.parse().unwrap();
    let config = VaultConfig::default();
    let snapshot = snapshot();
    let views = arc_views(&snapshot, now);
    check(
        render_hot_arcs(&project_hot(&views, "billing", config.hot_arcs), now),
        expect![[r#"
        ---
        id: hot-arcs-2026-11-21
        title: Active Hot Arcs
        priority: 10
        ttl: 3600
        severity: info
        ---
        ## Hot Arcs — 2026-11-21

        | Arc | Heat | Region | Status | What it is |
        |---|---|---|---|---|
        | 2026-11-20-runner-images-1a2b3c4d5e6f | 5 | - | active | Runner images \| CI |
        | 2026-10-01-billing-export-0f9e8d7c6b5a | 0 | - | active | Billing export |
    "#]],
    );
    let mut signals = active_signals(&snapshot, now, &config);
    signals.retain(|signal| signal.visible_to("billing", &config));
    check(
        render_signals(&signals, now),
        expect![[r#"
        ---
        id: signals-2026-11-21
        title: Active Signals
        priority: 8
        ttl: 3600
        severity: warning
        ---
        ## Active Signals — 2026-11-21

        - **[warning]** (ledger) Ledger totals off by one cent.
        - **[info]** (ci) New runner image rolls out Friday.
    "#]],
    );
    let mut injects = active_inject_states(&snapshot, now);
    injects.retain(|inject| owned_by(inject.project, "billing"));
    assert!(injects.is_empty(), "the gateway's inject block is not billing's");
    // The session feed a billing session gets, from the state the tick stores.
    let feed = FeedState::compute(&snapshot, now, &config).into_feed(now, "billing", &config);
    check(
        format!("{feed:#?}"),
        expect![[r#"
        Feed {
            hot_arcs: [
                HotArc {
                    id: "mem_v443b5617d92738fd9bf20f9d",
                    title: "Runner images | CI",
                    heat: 5,
                    region: "-",
                    status: "active",
                },
                HotArc {
                    id: "mem_v13369b2b5db24c2c2ddae6f8",
                    title: "Billing export",
                    heat: 0,
                    region: "-",
                    status: "active",
                },
            ],
            signals: [
                FeedSignal {
                    id: "mem_v6e1cdd4614ba716a2c25ac1e",
                    severity: Warning,
                    source: "ledger",
                    text: "Ledger totals off by one cent.",
                },
                FeedSignal {
                    id: "mem_v18183fc5effc6b8199263190",
                    severity: Info,
                    source: "ci",
                    text: "New runner image rolls out Friday.",
                },
            ],
            injects: [],
        }"#]],
    );
}
