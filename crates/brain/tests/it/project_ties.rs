//! A project name is tied to the folders that use it (`brain_api::config::folders`): a
//! repository cloned from elsewhere that names one of the user's projects gets a project of
//! its own, not that project's memory, until the user links it.

use crate::Env;

fn session_start_in(env: &Env, folder: &std::path::Path) -> String {
    let output = env
        .brain()
        .current_dir(folder)
        .args(["session-start", "--format", "text", "--task", "deploy"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_clone_naming_another_folders_project_gets_its_own_until_linked() {
    let env = Env::new();
    env.remember(&["--title", "Deploy credentials live in the ops vault", "--content", "ask ops for the deploy vault"]);
    env.remember(&["--scope", "global", "--title", "Deploy only from a clean tree", "--content", "a global lesson"]);
    assert!(session_start_in(&env, &env.project_dir).contains("ops vault"), "the project's own folder");

    // A repository from elsewhere, cloned into a folder of its own, names the same project.
    let clone = env.dir.path().join("Downloads/demo");
    std::fs::create_dir_all(clone.join(".git")).unwrap();
    std::fs::write(clone.join(".git/config"), "[remote \"origin\"]\n\turl = https://example.com/x/demo.git\n").unwrap();
    std::fs::write(clone.join(".brain.toml"), "project = \"demo\"\n").unwrap();
    let given = session_start_in(&env, &clone);
    assert!(!given.contains("ops vault"), "another folder's project memory reached the clone:\n{given}");
    assert!(given.contains("clean tree"), "global memory is the user's everywhere:\n{given}");

    let status = env.brain().current_dir(&clone).args(["status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let own = status["project"].as_str().unwrap().to_string();
    assert!(own.starts_with("demo.") && own != "demo", "{status}");
    let held_by = std::fs::canonicalize(&env.project_dir).unwrap();
    assert_eq!(status["project_name_held_by"], held_by.display().to_string(), "{status}");

    // What the clone's session writes stays in its own project.
    let id = env.json(&["remember", "--title", "from the clone", "--content", "x"]);
    assert_eq!(id["scope"], "project/demo", "the project's folder still writes to demo");
    let output = env
        .brain()
        .current_dir(&clone)
        .args(["remember", "--title", "Clone note", "--content", "y", "--json"])
        .output()
        .unwrap();
    let item: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(item["scope"], format!("project/{own}"), "{item}");

    // The user links it: it shares the project from now on; unlinked, it is on its own again.
    env.brain().current_dir(&clone).args(["project", "link"]).assert().success();
    assert!(session_start_in(&env, &clone).contains("ops vault"));
    let listed = env.json(&["project", "list"]);
    assert_eq!(listed["demo"].as_array().unwrap().len(), 2, "{listed}");
    // In remote mode too: the ties are this machine's (no server is asked).
    env.brain()
        .current_dir(&clone)
        .env("BRAIN_URL", "http://127.0.0.1:9")
        .args(["project", "unlink"])
        .assert()
        .success();
    assert!(!session_start_in(&env, &clone).contains("ops vault"));

    // A name the user gives is the user's choice.
    let output = env.brain().current_dir(&clone).args(["--project", "demo", "status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["project"], "demo", "{status}");
}

/// A repository of the user's home folder (dotfiles) does not make every folder under it one
/// repository: an archive unpacked in Downloads that names the project gets its own.
#[test]
fn a_repository_of_the_home_folder_does_not_join_the_folders_under_it() {
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path().join(".git")).unwrap();
    std::fs::write(
        env.dir.path().join(".git/config"),
        "[remote \"origin\"]\n\turl = https://example.com/me/dotfiles\n",
    )
    .unwrap();
    env.remember(&["--title", "Deploy credentials live in the ops vault", "--content", "ask ops"]);
    let unpacked = env.dir.path().join("Downloads/evil-1.0");
    std::fs::create_dir_all(&unpacked).unwrap();
    std::fs::write(unpacked.join(".brain.toml"), "project = \"demo\"\n").unwrap();
    let given = session_start_in(&env, &unpacked);
    assert!(!given.contains("ops vault"), "{given}");
}

/// A folder given a project of its own is told why its memory is empty, at the session
/// start the agent reads (so the user hears why, and how to share the project), without
/// naming the folder that holds the name; once it has memory of its own, nothing is said.
#[test]
fn a_folder_with_an_empty_project_of_its_own_is_told_why_at_session_start() {
    let env = Env::new();
    env.remember(&["--title", "Deploy credentials live in the ops vault", "--content", "ask ops"]);
    let hook = |folder: &std::path::Path| {
        let input = serde_json::json!({"session_id": "s1", "cwd": folder, "hook_event_name": "SessionStart"});
        let output = env.brain().args(["hook", "session-start"]).write_stdin(input.to_string()).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        json["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string()
    };
    let own_folder = hook(&env.project_dir);
    assert!(!own_folder.contains("memory of its own"), "{own_folder}");

    let elsewhere = env.dir.path().join("Downloads/demo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join(".brain.toml"), "project = \"demo\"\n").unwrap();
    let told = hook(&elsewhere);
    assert!(told.starts_with("brain: another folder on this machine holds this project's name"), "{told}");
    assert!(told.contains("brain project link"), "{told}");
    let holder = std::fs::canonicalize(&env.project_dir).unwrap();
    assert!(!told.contains(&holder.display().to_string()), "the holder's folder is not the repository's business");

    env.brain()
        .current_dir(&elsewhere)
        .args(["remember", "--title", "Local note", "--content", "x"])
        .assert()
        .success();
    let later = hook(&elsewhere);
    assert!(!later.contains("memory of its own"), "said once it has memory:\n{later}");
}

/// A clone given a project of its own because another folder holds its name, deleted before
/// its session is captured: the session stays in the clone's own project, so its prompts do
/// not reach the memory of the project whose name the clone took.
#[test]
fn a_session_of_a_clone_deleted_before_capture_stays_in_the_clones_own_project() {
    let env = Env::new();
    let victim = env.dir.path().join("victim");
    std::fs::create_dir_all(victim.join(".git")).unwrap();
    env.brain()
        .current_dir(&victim)
        .args(["remember", "--kind", "decision", "--title", "Real victim decision", "--content", "x"])
        .assert()
        .success();
    let clone = env.dir.path().join("jobs/victim");
    std::fs::create_dir_all(clone.join(".git")).unwrap();
    let start = serde_json::json!({"session_id": "sessA", "cwd": clone, "hook_event_name": "SessionStart"});
    env.brain().current_dir(&clone).args(["hook", "session-start"]).write_stdin(start.to_string()).assert().success();
    let tied = env.json(&["project", "list"]);
    let own = tied.as_object().unwrap().keys().find(|project| project.starts_with("victim.")).cloned();
    let own = own.unwrap_or_else(|| panic!("the clone has no project of its own: {tied}"));

    // Six prompts three minutes apart, in the clone; then the clone is deleted.
    let transcript = env.dir.path().join("sessA.jsonl");
    let lines: Vec<String> = (0..6)
        .map(|turn| {
            let prompt =
                if turn == 0 { "Hostile first prompt from the clone".to_string() } else { format!("step {turn}") };
            serde_json::json!({
                "type": "user", "cwd": clone, "sessionId": "sessA",
                "timestamp": format!("2026-11-21T08:{:02}:00.000Z", turn * 3),
                "message": {"role": "user", "content": prompt},
            })
            .to_string()
        })
        .collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    std::fs::remove_dir_all(&clone).unwrap();
    let stop = serde_json::json!({"session_id": "sessA", "cwd": clone, "transcript_path": transcript});
    env.brain().current_dir(env.dir.path()).args(["hook", "stop"]).write_stdin(stop.to_string()).assert().success();

    let mut projects = Vec::new();
    for entry in walkdir(&env.home.join("vault/clusters")) {
        let text = std::fs::read_to_string(&entry).unwrap();
        projects.extend(text.lines().filter_map(|line| line.strip_prefix("project: ")).map(str::to_string));
    }
    assert_eq!(projects, [own.as_str()], "the session's arc");
    env.brain().args(["vault", "scan"]).assert().success();
    let victims = session_start_in(&env, &victim);
    assert!(!victims.contains("Hostile first prompt"), "the clone's session reached victim's feed:\n{victims}");
    let output = env.brain().args(["--project", &own, "session-start", "--format", "text"]).output().unwrap();
    let clones = String::from_utf8(output.stdout).unwrap();
    assert!(clones.contains("Hostile first prompt"), "the clone's own feed holds it:\n{clones}");
}

/// The files below `dir`.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walkdir(&path)) } else { files.push(path) }
    }
    files
}
