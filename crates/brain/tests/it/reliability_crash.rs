//! `kill -9` at spread-out moments of `brain import` and `brain capture`, many trials: after
//! each, `brain doctor` passes, nothing is partial (the import is all or nothing; capture's
//! arcs are whole files), the next run completes, and once it has, the home holds exactly
//! what an uninterrupted run leaves and no temp file. `BRAIN_CRASH_TRIALS` sets the number of
//! trials (`.ci/run` runs more).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::Env;
use crate::crash_support::{brain, copy_tree, kill_points, run_and_kill, stray_files, time_full_run, trials};

fn output(env: &Env, home: &Path, args: &[&str]) -> std::process::Output {
    brain(env, home, args).output().unwrap()
}

fn export(env: &Env, home: &Path) -> String {
    let out = output(env, home, &["export"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn doctor_passes(env: &Env, home: &Path, context: &str) {
    let out = output(env, home, &["doctor"]);
    assert!(out.status.success(), "{context}: doctor failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// A JSONL file of `count` items with fixed ids (so every run's store is comparable).
fn items_file(dir: &Path, count: usize) -> PathBuf {
    let mut text = String::new();
    for index in 0..count {
        let kind = ["decision", "convention", "lesson", "bug"][index % 4];
        let line = json!({
            "id": format!("mem_01JD5Z{index:020}"),
            "title": format!("Imported fact {index}"),
            "content": format!("Fact {index}: the retry budget of service {} is {} attempts.", index % 97, index % 7),
            "kind": kind,
            "tags": ["imported", format!("batch-{}", index % 10)],
            "created_at": "2026-11-20T10:00:00Z",
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let path = dir.join("items.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn import_killed_at_any_moment_leaves_all_or_nothing_and_a_healthy_store() {
    let env = Env::new();
    for title in ["Kept one", "Kept two", "Kept three"] {
        env.remember(&["--title", title, "--content", "Written before the import."]);
    }
    // An access log to fold: the import folds it first, so kills land in the fold too.
    env.brain().args(["search", "kept"]).assert().success();
    let count = 6000;
    let file = items_file(env.dir.path(), count);
    let file_arg = file.to_str().unwrap().to_string();
    let template = env.home.clone();

    let reference_home = env.dir.path().join("reference");
    copy_tree(&template, &reference_home);
    let full = time_full_run(brain(&env, &reference_home, &["import", &file_arg]));
    let reference = export(&env, &reference_home);
    // A second, warm run times it better (the first one read a cold binary).
    let warm_home = env.dir.path().join("warm");
    copy_tree(&template, &warm_home);
    let full = full.min(time_full_run(brain(&env, &warm_home, &["import", &file_arg])));
    let base = export(&env, &template).lines().count();
    assert_eq!(reference.lines().count(), base + count);

    let trials = trials(10);
    let mut outcomes = (0, 0, 0); // (nothing committed, all committed, finished before the kill)
    for (trial, at) in kill_points(full, trials, 7).into_iter().enumerate() {
        let home = env.dir.path().join(format!("trial-{trial}"));
        copy_tree(&template, &home);
        let killed = run_and_kill(brain(&env, &home, &["import", &file_arg]), at);
        let context = format!("trial {trial}, killed={} after {:?}", killed.killed, killed.after);
        doctor_passes(&env, &home, &context);
        let stored = export(&env, &home).lines().count();
        assert!(stored == base || stored == base + count, "{context}: {stored} items, a partial import");
        // The next run: the import again, which finishes it or finds it already done.
        let again = output(&env, &home, &["import", &file_arg]);
        if stored == base {
            assert!(again.status.success(), "{context}: {}", String::from_utf8_lossy(&again.stderr));
            outcomes.0 += 1;
        } else {
            assert_eq!(again.status.code(), Some(1), "{context}");
            assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"), "{context}");
            if killed.killed { outcomes.1 += 1 } else { outcomes.2 += 1 }
        }
        assert_eq!(export(&env, &home), reference, "{context}: the store differs from an uninterrupted import");
        doctor_passes(&env, &home, &context);
        assert_eq!(stray_files(&home), Vec::<PathBuf>::new(), "{context}: stray files");
        std::fs::remove_dir_all(&home).unwrap();
    }
    eprintln!(
        "import: {trials} trials over {full:?}: {} killed before the commit, {} after it, {} finished",
        outcomes.0, outcomes.1, outcomes.2
    );
    assert!(outcomes.0 > 0, "no kill landed before the commit: the trials tested nothing");
}

/// Claude Code sessions: `sessions` transcripts of `prompts` prompts in a few projects.
fn transcripts(dir: &Path, sessions: usize, prompts: usize) -> PathBuf {
    let projects = dir.join("projects");
    for session in 0..sessions {
        let project = format!("svc{}", session % 4);
        let folder = projects.join(format!("-w-{project}"));
        std::fs::create_dir_all(&folder).unwrap();
        let id = format!("crash-{session:03}");
        let mut lines = Vec::new();
        for turn in 0..prompts {
            // Sessions 25 minutes apart from 2026-11-20T00:00Z, two minutes per turn.
            let minutes = session * 25 + turn * 2;
            let stamp = format!("2026-11-20T{:02}:{:02}:00.000Z", minutes / 60, minutes % 60);
            let common =
                json!({"sessionId": id, "cwd": format!("/w/{project}"), "gitBranch": "main", "timestamp": stamp});
            let mut prompt = common.clone();
            prompt["type"] = json!("user");
            prompt["uuid"] = json!(format!("{id}-{turn}-u"));
            prompt["message"] = json!({"role": "user", "content": format!("Step {turn} of task {session}: fix the retry loop in src/retry{}.rs", turn % 5)});
            let mut answer = common;
            answer["type"] = json!("assistant");
            answer["uuid"] = json!(format!("{id}-{turn}-a"));
            answer["message"] = json!({"role": "assistant", "content": [
                {"type": "text", "text": if turn % 3 == 0 { "That failed with error 502." } else { "Done, tests are green." }},
                {"type": "tool_use", "id": "t", "name": "Edit", "input": {"file_path": format!("/w/{project}/src/retry{}.rs", turn % 5)}}]});
            lines.push(prompt.to_string());
            lines.push(answer.to_string());
        }
        std::fs::write(folder.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
    }
    projects
}

/// Every file of a vault's arcs: relative path → contents.
fn arcs(home: &Path) -> Vec<(String, String)> {
    let root = home.join("vault");
    crate::crash_support::files_under(&root)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| {
            let relative = path.strip_prefix(&root).unwrap().display().to_string();
            (relative, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

#[test]
fn capture_killed_at_any_moment_leaves_whole_arcs_and_the_next_capture_completes_it() {
    let env = Env::new();
    let projects = transcripts(env.dir.path(), 120, 12);
    let projects_arg = projects.to_str().unwrap().to_string();
    let template = env.home.clone();

    let reference_home = env.dir.path().join("reference");
    copy_tree(&template, &reference_home);
    let full = time_full_run(brain(&env, &reference_home, &["capture", "--projects-dir", &projects_arg]));
    let reference = arcs(&reference_home);
    let warm_home = env.dir.path().join("warm");
    copy_tree(&template, &warm_home);
    let full = full.min(time_full_run(brain(&env, &warm_home, &["capture", "--projects-dir", &projects_arg])));
    assert!(reference.len() >= 4, "capture wrote {} arcs", reference.len());

    let trials = trials(10);
    let mut killed_count = 0;
    for (trial, at) in kill_points(full, trials, 11).into_iter().enumerate() {
        let home = env.dir.path().join(format!("trial-{trial}"));
        copy_tree(&template, &home);
        let killed = run_and_kill(brain(&env, &home, &["capture", "--projects-dir", &projects_arg]), at);
        killed_count += usize::from(killed.killed);
        let context = format!("trial {trial}, killed={} after {:?}", killed.killed, killed.after);
        doctor_passes(&env, &home, &context);
        // Whatever arc exists is whole: the same text as the reference's, or one the next
        // capture rewrites (an arc of fewer sessions parses and ends its generated block).
        for (path, text) in arcs(&home) {
            assert!(
                text.starts_with("---\n") && text.contains("<!-- brain:generated:end -->"),
                "{context}: {path} is cut"
            );
        }
        let again = output(&env, &home, &["capture", "--projects-dir", &projects_arg]);
        assert!(again.status.success(), "{context}: {}", String::from_utf8_lossy(&again.stderr));
        assert_eq!(arcs(&home), reference, "{context}: the arcs differ from an uninterrupted capture");
        doctor_passes(&env, &home, &context);
        assert_eq!(stray_files(&home), Vec::<PathBuf>::new(), "{context}: stray files");
        std::fs::remove_dir_all(&home).unwrap();
    }
    eprintln!("capture: {trials} trials over {full:?}: {killed_count} killed mid-run");
    assert!(killed_count > 0, "no kill landed while capture ran");
}
