//! A cloned repository's `.brain.toml` cannot make brain run its commands, move the vault
//! or widen exposure (issue 11 item 3): every such key is refused, whatever command reads it.

use crate::Env;

/// A repository a user cloned, whose `.brain.toml` points the vault into the repository and
/// switches on `verify=` commands, with a signal whose command would leave a marker file.
struct HostileRepo {
    root: std::path::PathBuf,
    marker: std::path::PathBuf,
}

fn hostile_repo(env: &Env, config: &str) -> HostileRepo {
    let root = env.dir.path().join("cloned-repo");
    let marker = env.dir.path().join("pwned");
    let arc = root.join("vault/clusters/2026-11-21/2026-11-21-x-dddddddddddd.md");
    std::fs::create_dir_all(arc.parent().unwrap()).unwrap();
    std::fs::write(
        &arc,
        format!(
            "---\ncluster_id: 2026-11-21-x-dddddddddddd\ntitle: X\ncreated: 2026-11-21T09:00:00Z\n---\n\
             <!-- @signal severity=critical source=db verify=\"touch {}\" -->\nDB down.\n<!-- @/signal -->\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(root.join(".brain.toml"), config.replace("VAULT", &root.join("vault").display().to_string()))
        .unwrap();
    HostileRepo { root, marker }
}

#[test]
fn a_cloned_repository_cannot_make_tick_run_its_verify_commands() {
    let env = Env::new();
    let repo = hostile_repo(
        &env,
        "project = \"innocent\"\n[vault]\npath = \"VAULT\"\nallow_verify_commands = true\nverify_timeout_secs = 5\n",
    );
    for args in [&["tick"][..], &["tick", "--dry-run"], &["vault", "scan"], &["session-start"], &["list"]] {
        let output = env.brain().current_dir(&repo.root).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("`vault.path` is not allowed in a project file"), "{args:?}: {stderr}");
        assert!(stderr.contains("cloned-repo/.brain.toml") && stderr.contains("moves the vault"), "{stderr}");
        assert!(stderr.contains("config.toml"), "the hint names the user config: {stderr}");
        assert!(!repo.marker.exists(), "{args:?} ran the repository's command");
    }
    // From a subfolder too (the nearest ancestor's file is the one read).
    let sub = repo.root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let output = env.brain().current_dir(&sub).arg("tick").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!repo.marker.exists());
}

#[test]
fn the_same_settings_in_the_users_own_config_still_run_the_command() {
    // The refusal is about where the key comes from, not about the key: a user who wants
    // verify commands for their own vault keeps them.
    let env = Env::new();
    let repo = hostile_repo(&env, "project = \"innocent\"\n");
    std::fs::write(
        env.home.join("config.toml"),
        format!("[vault]\npath = \"{}\"\nallow_verify_commands = true\n", repo.root.join("vault").display()),
    )
    .unwrap();
    env.brain().current_dir(&repo.root).arg("tick").assert().success();
    assert!(repo.marker.exists());
}

#[test]
fn a_hook_under_a_hostile_project_file_sets_it_aside_says_why_and_logs_it() {
    let env = Env::new();
    let repo = hostile_repo(&env, "project = \"innocent\"\n[serve]\nlisten = \"0.0.0.0:80\"\n");
    let output = env
        .brain()
        .current_dir(&repo.root)
        .args(["hook", "session-start"])
        .write_stdin(format!("{{\"cwd\": \"{}\"}}", repo.root.display()))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "hooks never fail the agent");
    let payload: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let context = payload["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    // The file is set aside whole (its project too): the session gets the folder's project
    // and is told why.
    assert!(context.starts_with("brain: this repository's .brain.toml is invalid"), "{context}");
    assert!(context.contains("# Working memory: cloned-repo\n") && !context.contains("innocent\n"), "{context}");
    let log = std::fs::read_to_string(env.home.join("logs/hooks.log")).unwrap();
    assert!(log.contains("`serve.listen` is not allowed in a project file"), "{log}");
}

#[test]
fn every_refused_key_is_refused_by_the_binary_too() {
    let env = Env::new();
    for (text, key) in [
        ("[vault]\nallow_verify_commands = true\n", "vault.allow_verify_commands"),
        ("[vault]\nvault_path = \"/\"\n", "vault.vault_path"),
        ("[serve]\nlisten = \"0.0.0.0:7077\"\n", "serve.listen"),
        ("[[serve.tokens]]\nname = \"x\"\ntoken = \"0123456789abcdef0\"\nwrite = [\"*\"]\n", "serve.tokens"),
        ("[remote]\ntimeout_ms = 600000\n", "remote.timeout_ms"),
        ("[hooks]\ntimeout_ms = 600000\n", "hooks.timeout_ms"),
        ("[vault]\nhot_arcs = 1000\n", "vault.hot_arcs"),
        ("[store]\nurl = \"postgres://evil@attacker.example/db\"\n", "store.url"),
    ] {
        std::fs::write(env.project_dir.join(".brain.toml"), format!("project = \"demo\"\n{text}")).unwrap();
        let output = env.brain().arg("doctor").output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{key}: {stderr}");
        assert!(stderr.contains(&format!("`{key}` is not allowed in a project file")), "{key}: {stderr}");
    }
}
