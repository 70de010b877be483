//! `kill -9` at spread-out moments of `brain tick` (graduating hundreds of arcs) and of
//! `brain vault scan`, many trials (`BRAIN_CRASH_TRIALS`, see `crash_support`). After a killed
//! tick the next tick succeeds, `brain vault doctor` finds nothing, no arc exists twice, the
//! vault equals an uninterrupted tick's and no temp file remains. After a killed scan the next
//! scan leaves the index equal to an uninterrupted scan's, with no item's version bumped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Env;
use crate::crash_support::{brain, copy_tree, kill_points, run_and_kill, stray_files, time_full_run, trials};
use crate::vault_support::age;

fn run(env: &Env, home: &Path, args: &[&str]) -> std::process::Output {
    brain(env, home, args).output().unwrap()
}

fn succeeds(env: &Env, home: &Path, args: &[&str], context: &str) -> std::process::Output {
    let out = run(env, home, args);
    assert!(out.status.success(), "{context}: {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A vault at `<home>/vault`: `old` arcs due to graduate (created 2026-10-01, heat 3, some
/// with a cleared signal, so a graduation also removes a block) and `hot` recent active
/// arcs (heat rewritten, promoted with pointer notes), each with a lesson and a signal.
fn write_vault(home: &Path, old: usize, hot: usize) {
    let root = home.join("vault");
    for n in 0..old + hot {
        let is_old = n < old;
        let (date, status, region) = if is_old {
            ("2026-10-01", "complete", ["left-hemisphere", "right-hemisphere", "pineal"][n % 3])
        } else {
            ("2026-11-21", "active", "left-hemisphere")
        };
        let cluster_id = format!("{date}-arc-{n:04}-{n:012x}");
        let cleared = if is_old && n % 4 == 0 {
            "<!-- @signal severity=resolved source=sync -->\nSync lag (CLEARED: fixed)\n<!-- @/signal -->\n"
        } else {
            ""
        };
        let severity = if n % 50 == 0 { "critical" } else { "info" };
        let text = format!(
            "---\ncluster_id: {cluster_id}\ntitle: Arc {n}\nregion: {region}\nstatus: {status}\nheat: 3\n\
             created: {date}T12:00:00Z\nsource_sessions: [s{n}]\n---\n\n# Arc {n}\n\n\
             <!-- @lesson -->\nLesson {n}: retry with backoff.\n<!-- @/lesson -->\n\n\
             <!-- @signal severity={severity} source=svc{} -->\nSignal {n}.\n<!-- @/signal -->\n{cleared}",
            n % 7
        );
        let path = root.join(format!("clusters/{date}/{cluster_id}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        age(&path, 3600);
    }
}

/// Every markdown file of the vault outside the feed folder: relpath → contents.
fn vault_files(home: &Path) -> BTreeMap<String, String> {
    let root = home.join("vault");
    crate::crash_support::files_under(&root)
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            (relative.ends_with(".md") && !relative.starts_with("brain-feed/"))
                .then(|| (relative, std::fs::read_to_string(&path).unwrap()))
        })
        .collect()
}

/// `cluster_id`s held by more than one file.
fn duplicated_arcs(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for text in files.values() {
        if text.contains("generated_by: brain-tick") {
            continue;
        }
        if let Some(line) = text.lines().find(|line| line.starts_with("cluster_id: ")) {
            *seen.entry(line.trim_start_matches("cluster_id: ")).or_default() += 1;
        }
    }
    seen.into_iter().filter(|(_, count)| *count > 1).map(|(id, _)| id.to_string()).collect()
}

#[test]
fn tick_killed_at_any_moment_while_graduating_leaves_one_copy_of_every_arc() {
    let env = Env::new();
    write_vault(&env.home, 600, 60);
    succeeds(&env, &env.home, &["vault", "scan"], "template");
    let template = env.home.clone();

    let reference_home = env.dir.path().join("reference");
    copy_tree(&template, &reference_home);
    let full = time_full_run(brain(&env, &reference_home, &["tick"]));
    let reference = vault_files(&reference_home);
    let graduated = reference.keys().filter(|path| !path.starts_with("clusters/")).count();
    assert!(graduated >= 600, "the reference tick graduated {graduated} files");
    assert!(duplicated_arcs(&reference).is_empty());
    let warm_home = env.dir.path().join("warm");
    copy_tree(&template, &warm_home);
    let full = full.min(time_full_run(brain(&env, &warm_home, &["tick"])));

    let trials = trials(10);
    let (mut killed_count, mut mid_move, mut half_done) = (0, 0, 0);
    for (trial, at) in kill_points(full, trials, 13).into_iter().enumerate() {
        let home = env.dir.path().join(format!("trial-{trial}"));
        copy_tree(&template, &home);
        let killed = run_and_kill(brain(&env, &home, &["tick"]), at);
        killed_count += usize::from(killed.killed);
        let context = format!("trial {trial}, killed={} after {:?}", killed.killed, killed.after);
        // What the kill left: a move journal when it struck mid-graduation; then an arc may
        // exist twice until the next run completes the move.
        mid_move += usize::from(home.join("vault/.brain-moves.json").exists());
        half_done += usize::from(!duplicated_arcs(&vault_files(&home)).is_empty());
        succeeds(&env, &home, &["doctor"], &context);

        // The next run: every other trial a scan first (it finishes an interrupted move too),
        // then the tick.
        if trial % 2 == 1 {
            let scan = succeeds(&env, &home, &["vault", "scan", "--json"], &context);
            let scan: serde_json::Value = serde_json::from_slice(&scan.stdout).unwrap();
            assert_eq!(duplicated_arcs(&vault_files(&home)), Vec::<String>::new(), "{context}: after the scan");
            assert!(
                !scan["diagnostics"].to_string().contains("duplicate cluster_id"),
                "{context}: {}",
                scan["diagnostics"]
            );
        }
        let next = succeeds(&env, &home, &["tick", "--json"], &context);
        let report: serde_json::Value = serde_json::from_slice(&next.stdout).unwrap();
        let duplicate_diagnostics: Vec<&serde_json::Value> = report["scan"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["message"].as_str().unwrap().contains("duplicate cluster_id"))
            .collect();
        assert!(duplicate_diagnostics.is_empty(), "{context}: {duplicate_diagnostics:?}");
        let files = vault_files(&home);
        assert_eq!(duplicated_arcs(&files), Vec::<String>::new(), "{context}: an arc exists twice");
        let doctor = run(&env, &home, &["vault", "doctor", "--json"]);
        assert!(doctor.status.success(), "{context}: vault doctor: {}", String::from_utf8_lossy(&doctor.stdout));
        let doctor: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
        assert_eq!(doctor["problems"], serde_json::json!([]), "{context}");
        assert_eq!(files, reference, "{context}: the vault differs from an uninterrupted tick's");
        assert_eq!(stray_files(&home), Vec::<PathBuf>::new(), "{context}: stray files");
        succeeds(&env, &home, &["doctor"], &context);
        std::fs::remove_dir_all(&home).unwrap();
    }
    eprintln!(
        "tick: {trials} trials over {full:?}: {killed_count} killed mid-run, {mid_move} mid-graduation \
         (journal waiting), {half_done} with an arc twice until the next tick"
    );
    assert!(killed_count > 0, "no kill landed while the tick ran");
}

/// The vault's items in an export: id → (version, the line).
fn vault_items(env: &Env, home: &Path) -> BTreeMap<String, (u64, String)> {
    let out = succeeds(env, home, &["export"], "export");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            item["source"].as_str()?.starts_with("vault:").then(|| {
                (item["id"].as_str().unwrap().to_string(), (item["version"].as_u64().unwrap(), line.to_string()))
            })
        })
        .collect()
}

#[test]
fn scan_killed_at_any_moment_then_a_rescan_bumps_no_version() {
    let env = Env::new();
    write_vault(&env.home, 1200, 300);
    let template = env.home.clone();

    let reference_home = env.dir.path().join("reference");
    copy_tree(&template, &reference_home);
    let full = time_full_run(brain(&env, &reference_home, &["vault", "scan"]));
    let reference = vault_items(&env, &reference_home);
    assert!(reference.len() >= 4500, "{} items", reference.len());
    assert!(reference.values().all(|(version, _)| *version == 1));
    let warm_home = env.dir.path().join("warm");
    copy_tree(&template, &warm_home);
    let full = full.min(time_full_run(brain(&env, &warm_home, &["vault", "scan"])));

    let trials = trials(10);
    let (mut killed_count, mut half_indexed) = (0, 0);
    for (trial, at) in kill_points(full, trials, 17).into_iter().enumerate() {
        let home = env.dir.path().join(format!("trial-{trial}"));
        copy_tree(&template, &home);
        let killed = run_and_kill(brain(&env, &home, &["vault", "scan"]), at);
        killed_count += usize::from(killed.killed);
        let context = format!("trial {trial}, killed={} after {:?}", killed.killed, killed.after);
        succeeds(&env, &home, &["doctor"], &context);
        let stored = vault_items(&env, &home).len();
        assert!(stored == 0 || stored == reference.len(), "{context}: {stored} items, a partial batch");
        let again = succeeds(&env, &home, &["vault", "scan", "--json"], &context);
        let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        // The items were committed but not the file index: the rescan parses every file
        // again and finds every id taken, the case that must not bump versions.
        half_indexed += usize::from(stored > 0 && report["parsed"].as_u64() > Some(0));
        assert_eq!(report["items_updated"], 0, "{context}: the rescan rewrote unchanged items: {report}");
        let items = vault_items(&env, &home);
        let bumped: Vec<&String> = items.iter().filter(|(_, (version, _))| *version != 1).map(|(id, _)| id).collect();
        assert!(bumped.is_empty(), "{context}: {} items' versions bumped, e.g. {:?}", bumped.len(), bumped.first());
        assert_eq!(items, reference, "{context}: the index differs from an uninterrupted scan's");
        succeeds(&env, &home, &["doctor"], &context);
        assert_eq!(stray_files(&home), Vec::<PathBuf>::new(), "{context}: stray files");
        std::fs::remove_dir_all(&home).unwrap();
    }
    eprintln!(
        "scan: {trials} trials over {full:?}: {killed_count} killed mid-run, {half_indexed} with the items \
         committed and the file index not"
    );
    assert!(killed_count > 0, "no kill landed while the scan ran");
}
