//! `brain vault doctor`: every kind of drift is reported; without `--repair` nothing is
//! written; `--repair` fixes what a program may (atomically) and leaves the rest, and the
//! exit status says whether problems remain.

use crate::Env;
use crate::vault_support::{Vault, fingerprint};

const ARC: &str = "---\ncluster_id: 2026-10-01-crashed-abcdefabcdef\ntitle: Crashed graduation\n\
                   region: left-hemisphere\nstatus: complete\nheat: 3\ncreated: 2026-10-01T12:00:00Z\n---\n\nBody.\n";

fn doctor(env: &Env, vault: &Vault, extra: &[&str]) -> (bool, serde_json::Value, String) {
    let out = env.brain().args(["vault", "doctor", "--vault", vault.arg(), "--json"]).args(extra).output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.success(), report, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn kinds(problems: &serde_json::Value) -> Vec<(String, String)> {
    problems
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap().to_string(), p["file"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn the_doctor_reports_every_drift_writes_nothing_and_repairs_what_it_safely_can() {
    let env = Env::new();
    let vault = Vault::new(&env);
    // The leftovers of a graduation killed between its two steps (the old engine's move):
    // the original and the graduated copy, differing only in heat and status.
    vault.write("clusters/2026-10-01/crashed.md", ARC);
    vault.write("left/crashed.md", ARC.replace("status: complete", "status: graduated").replace("heat: 3", "heat: 0"));
    // Two different arcs that share a cluster_id: the newer one is kept, the other becomes
    // a tombstone (nothing the user wrote is deleted).
    let shared = "---\ncluster_id: 2026-11-20-shared-111111111111\ntitle: Shared\ncreated: 2026-11-20T12:00:00Z\n---\n";
    vault.write("clusters/2026-11-20/first.md", format!("{shared}\nFirst text.\n"));
    let newer = vault.write("clusters/2026-11-20/second.md", format!("{shared}\nSecond text.\n"));
    crate::vault_support::age(&newer, 60);
    // An arc that lost its cluster_id.
    vault.write(
        "clusters/2026-11-19/no-id.md",
        "---\ntitle: Lost its id\nstatus: active\ncreated: 2026-11-19T08:00:00Z\n---\n\nText.\n",
    );
    // A pointer note to an arc that no longer exists.
    vault.write(
        "frontal-lobe/conscious/gone.pointer.md",
        "---\ngenerated_by: brain-tick\nbrain_note: pointer\nbrain_key: 2026-09-01-gone-000000000000\n\
         cluster_id: 2026-09-01-gone-000000000000\nheat: 8\n---\n\n# Gone\n",
    );
    // A tombstone pointing nowhere.
    vault.write("clusters/2026-09-01/old.merged.md", "---\nmerged_into: 2026-09-01-nowhere\n---\nMerged.\n");
    // The same edge twice, as markers.
    let edges = "---\ncluster_id: 2026-11-18-edges-222222222222\ntitle: Edges\ncreated: 2026-11-18T12:00:00Z\n---\n\n\
                 <!-- @edge type=parent target=2026-11-20-shared-111111111111 -->\n\
                 Text.\n\
                 <!-- @edge type=parent target=2026-11-20-shared-111111111111 -->\n";
    vault.write("clusters/2026-11-18/edges.md", edges);

    let before = fingerprint(&vault.root);
    let (ok, report, stderr) = doctor(&env, &vault, &[]);
    assert!(!ok, "problems found: exit 1");
    assert!(stderr.contains("vault doctor --repair"), "{stderr}");
    let expected: Vec<(String, String)> = [
        ("dangling_tombstone", "clusters/2026-09-01/old.merged.md"),
        ("duplicate_cluster_id", "clusters/2026-10-01/crashed.md"),
        ("duplicate_cluster_id", "clusters/2026-11-20/first.md"),
        ("duplicate_edge", "clusters/2026-11-18/edges.md"),
        ("missing_cluster_id", "clusters/2026-11-19/no-id.md"),
        ("orphaned_pointer", "frontal-lobe/conscious/gone.pointer.md"),
    ]
    .iter()
    .map(|(kind, file)| (kind.to_string(), file.to_string()))
    .collect();
    assert_eq!(kinds(&report["problems"]), expected, "{report}");
    assert_eq!(kinds(&report["remaining"]), expected);
    let crashed = &report["problems"][1];
    assert!(
        crashed["detail"]
            .as_str()
            .unwrap()
            .contains("also in left/crashed.md (kept: graduated into its region folder)")
    );
    assert!(report["problems"][2]["detail"].as_str().unwrap().contains("(kept: the most recently modified)"));
    assert_eq!(fingerprint(&vault.root), before, "without --repair nothing is written");
    assert!(!env.home.join("tick.lock").exists(), "not even a lock file");

    let (ok, report, stderr) = doctor(&env, &vault, &["--repair"]);
    assert!(!ok, "the dangling tombstone needs a person: {report}");
    assert!(stderr.contains("by hand"), "{stderr}");
    let repaired: Vec<bool> = report["problems"].as_array().unwrap().iter().map(|p| p["repaired"] == true).collect();
    assert_eq!(repaired, [false, true, true, true, true, true], "{report}");
    assert_eq!(
        kinds(&report["remaining"]),
        [("dangling_tombstone".to_string(), "clusters/2026-09-01/old.merged.md".to_string())]
    );
    // One copy of the crashed arc: the graduated one.
    assert!(!vault.exists("clusters/2026-10-01/crashed.md"));
    assert!(vault.read("left/crashed.md").contains("status: graduated"));
    // The other shared-id arc kept its text, as a tombstone of the kept one.
    assert!(!vault.exists("clusters/2026-11-20/first.md"));
    let tombstone = vault.read("clusters/2026-11-20/first.merged.md");
    assert!(tombstone.contains("First text.") && tombstone.contains("merged_into: 2026-11-20-shared-111111111111"));
    assert!(vault.read("clusters/2026-11-20/second.md").contains("Second text."));
    let no_id = vault.read("clusters/2026-11-19/no-id.md");
    assert!(no_id.contains("cluster_id: 2026-11-19-lost-its-id-"), "{no_id}");
    assert!(no_id.ends_with("---\n\nText.\n"), "only the key was added: {no_id}");
    assert!(!vault.exists("frontal-lobe/conscious/gone.pointer.md"));
    let edges_after = vault.read("clusters/2026-11-18/edges.md");
    assert_eq!(edges_after.matches("@edge").count(), 1, "{edges_after}");
    assert!(edges_after.contains("Text.\n"));

    // The rest is the user's call; then the vault is clean, and the index agrees.
    std::fs::remove_file(vault.path("clusters/2026-09-01/old.merged.md")).unwrap();
    let (ok, report, _) = doctor(&env, &vault, &[]);
    assert!(ok, "{report}");
    assert_eq!(report["problems"], serde_json::json!([]));
    let text = env.brain().args(["vault", "doctor", "--vault", vault.arg()]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("ok: no problems found"));
    let scan = env.json(&["vault", "scan", "--vault", vault.arg()]);
    let duplicates: Vec<&serde_json::Value> = scan["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["message"].as_str().unwrap().contains("duplicate cluster_id"))
        .collect();
    assert!(duplicates.is_empty(), "{duplicates:?}");
}

/// A tick killed after creating a graduated file and before removing the original leaves
/// its move journal; the next tick completes the move before it scans.
#[test]
fn an_interrupted_graduation_is_completed_by_the_next_tick_and_reported_by_the_doctor() {
    let env = Env::new();
    let vault = Vault::new(&env);
    let graduated = ARC.replace("status: complete", "status: graduated").replace("heat: 3", "heat: 0");
    vault.write("clusters/2026-10-01/crashed.md", ARC);
    vault.write("left/crashed.md", &graduated);
    let sha = |text: &str| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes()));
    let journal = serde_json::json!({"moves": [{
        "from": "clusters/2026-10-01/crashed.md", "to": "left/crashed.md",
        "from_sha256": sha(ARC), "to_sha256": sha(&graduated),
    }]});
    std::fs::write(vault.path(".brain-moves.json"), journal.to_string()).unwrap();

    let (ok, report, _) = doctor(&env, &vault, &[]);
    assert!(!ok);
    let found = kinds(&report["problems"]);
    assert_eq!(found[0], ("interrupted_graduation".to_string(), ".brain-moves.json".to_string()), "{report}");
    assert!(found.contains(&("duplicate_cluster_id".to_string(), "clusters/2026-10-01/crashed.md".to_string())));
    assert!(vault.exists(".brain-moves.json"), "nothing written without --repair");

    let tick = env.json(&["tick", "--vault", vault.arg()]);
    let recovered = &tick["scan"]["recovered"];
    assert_eq!(recovered[0]["action"], "completed", "{tick}");
    assert!(!vault.exists("clusters/2026-10-01/crashed.md") && !vault.exists(".brain-moves.json"));
    assert_eq!(vault.read("left/crashed.md"), graduated);
    assert!(tick["skipped"].as_array().unwrap().is_empty(), "no warning: {tick}");
    let (ok, report, _) = doctor(&env, &vault, &[]);
    assert!(ok, "{report}");
}
