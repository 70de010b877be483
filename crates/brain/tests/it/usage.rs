//! Recall that learns from use (issue 32), through the commands and hooks a user runs: a
//! Claude Code session is given items by its session-start hook, its transcript shows the agent
//! reading one item's file and quoting another, and its stop hook records exactly those two as
//! used and the rest as given and not used — with evidence `brain why-used` shows. Then what
//! recall makes of it, feedback, the switch, and a transcript of another project.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{Env, NOW};

const SESSION: &str = "5d1c3e2a-7b7f-4c55-9a51-2f1d0c0e9b11";

struct Memories {
    file_item: String,
    quoted_item: String,
    others: Vec<String>,
}

fn memories(env: &Env) -> Memories {
    let file_item = env.remember(&[
        "--title",
        "Signature check reads the raw body",
        "--content",
        "The verifier hashes the raw request body before any JSON parsing.",
        "--files",
        "src/webhooks/verify.rs",
    ]);
    let quoted_item = env.remember(&[
        "--title",
        "Delivery worker backoff",
        "--content",
        "The delivery worker retries with exponential backoff and jitter, capped at six attempts.",
    ]);
    let others = ["Release checklist: tag, publish crates, announce", "Logging uses structured key value pairs"]
        .iter()
        .map(|title| env.remember(&["--title", title, "--content", &format!("{title}, as the team agreed.")]))
        .collect();
    Memories { file_item, quoted_item, others }
}

fn hook(env: &Env, event: &str, input: &Value) -> String {
    let output =
        env.brain().args(["hook", event, "--agent", "claude-code"]).write_stdin(input.to_string()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{event}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn line(value: Value) -> String {
    format!("{value}\n")
}

/// A Claude Code transcript of a session in `cwd`: a prompt, then the agent reads
/// `read_file`, runs `ls`, and answers with `answer`.
fn transcript(dir: &Path, cwd: &Path, read_file: &Path, answer: &str) -> PathBuf {
    let at = |second: u32| format!("2026-11-21T09:{:02}:{:02}.000Z", 50 + second / 60, second % 60);
    let common = |second: u32| json!({"sessionId": SESSION, "cwd": cwd, "timestamp": at(second), "isSidechain": false});
    let mut prompt = common(1);
    prompt["type"] = json!("user");
    prompt["message"] = json!({"role": "user", "content": "Why do some webhook deliveries fail the signature check?"});
    let mut tools = common(2);
    tools["type"] = json!("assistant");
    tools["message"] = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": read_file}},
        {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls src"}},
    ]});
    let mut result = common(3);
    result["type"] = json!("user");
    result["message"] =
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn verify() {}"}]});
    let mut reply = common(4);
    reply["type"] = json!("assistant");
    reply["message"] = json!({"role": "assistant", "content": [{"type": "text", "text": answer}]});
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, [prompt, tools, result, reply].into_iter().map(line).collect::<String>()).unwrap();
    path
}

const ANSWER: &str = "The failures come from retries: the delivery worker retries with exponential backoff, \
                      and the signature is checked against a body that was parsed first.";

/// A session of the demo project: session start, the transcript, stop. Returns what the
/// session-start hook gave.
fn session(env: &Env, session: &str, read_file: &Path, answer: &str) -> String {
    let start = hook(
        env,
        "session-start",
        &json!({"session_id": session, "cwd": env.project_dir, "hook_event_name": "SessionStart", "source": "startup"}),
    );
    let dir = env.dir.path().join("transcripts").join(session);
    std::fs::create_dir_all(&dir).unwrap();
    let path = transcript(&dir, &env.project_dir, read_file, answer);
    hook(
        env,
        "stop",
        &json!({"session_id": session, "cwd": env.project_dir, "transcript_path": path, "hook_event_name": "Stop"}),
    );
    start
}

fn decisions(env: &Env, id: &str) -> Vec<Value> {
    env.json(&["why-used", id])["decisions"].as_array().unwrap().clone()
}

#[test]
fn a_session_that_reads_one_given_items_file_and_quotes_another_records_those_two_as_used_and_the_rest_not() {
    let env = Env::new();
    let memories = memories(&env);
    let read_file = env.project_dir.join("src/webhooks/verify.rs");
    let given = session(&env, SESSION, &read_file, ANSWER);
    for title in ["Signature check reads the raw body", "Delivery worker backoff", "Release checklist", "Logging uses"]
    {
        assert!(given.contains(title), "every item was given: {given}");
    }

    let file = decisions(&env, &memories.file_item);
    assert_eq!(file.len(), 1, "{file:?}");
    assert_eq!(file[0]["verdict"], "used");
    assert_eq!(file[0]["signal"], "file");
    assert!(file[0]["evidence"].as_str().unwrap().contains("Read"), "{file:?}");
    assert_eq!(file[0]["session"], format!("claude-code:{SESSION}"));

    let quoted = decisions(&env, &memories.quoted_item);
    assert_eq!(quoted[0]["verdict"], "used");
    assert_eq!(quoted[0]["signal"], "quoted");
    assert!(quoted[0]["evidence"].as_str().unwrap().contains("delivery worker retries"), "{quoted:?}");

    for other in &memories.others {
        let decided = decisions(&env, other);
        assert_eq!(decided.len(), 1, "{decided:?}");
        assert_eq!(decided[0]["verdict"], "unused", "given and not used: {decided:?}");
    }

    // The stop hook runs again as the session goes on: nothing is counted twice.
    let path = env.dir.path().join("transcripts").join(SESSION).join(format!("{SESSION}.jsonl"));
    hook(
        &env,
        "stop",
        &json!({"session_id": SESSION, "cwd": env.project_dir, "transcript_path": path, "hook_event_name": "Stop"}),
    );
    assert_eq!(decisions(&env, &memories.file_item).len(), 1);

    // The text form explains it.
    let text = env.brain().args(["why-used", &memories.file_item]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("used (file)") && text.contains("src/webhooks/verify.rs"), "{text}");

    // The use rate of the week: 2 of 4 given items used.
    let status = env.json(&["status"]);
    let week = status["use_rate"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (week["given"].as_u64(), week["used"].as_u64(), week["sessions"].as_u64()),
        (Some(4), Some(2), Some(1)),
        "{week}"
    );
}

#[test]
fn items_given_and_never_used_sink_for_like_tasks_feedback_decides_and_the_switch_turns_it_off() {
    let env = Env::new();
    let memories = memories(&env);
    let elsewhere = env.project_dir.join("src/other.rs");
    for index in 0..3 {
        session(&env, &format!("{SESSION}-{index}"), &elsewhere, "Looked around; nothing to change yet.");
    }
    let recall = |env: &Env, task: &str| -> Vec<(String, String)> {
        env.json(&["session-start", "--task", task])["context_recall"]
            .as_array()
            .unwrap()
            .iter()
            .map(|recalled| {
                (recalled["id"].as_str().unwrap().to_string(), recalled["why"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let webhook = recall(&env, "webhook deliveries fail the signature check");
    let (_, why) =
        webhook.iter().find(|(id, _)| id == &memories.file_item).expect("still recalled: a bounded demotion");
    assert!(why.contains("given and not used in 3 sessions"), "{why}");

    // Feedback decides over the inference.
    env.brain()
        .args(["feedback", &memories.file_item, "--useful", "--note", "exactly the check I needed"])
        .assert()
        .success();
    let view = env.json(&["why-used", &memories.file_item]);
    assert_eq!(view["factor"].as_f64(), Some(1.25), "{view}");
    assert_eq!(view["decisions"][0]["verdict"], "useful");
    let webhook = recall(&env, "webhook deliveries fail the signature check");
    assert_eq!(webhook[0].0, memories.file_item, "marked useful, it leads: {webhook:?}");

    // A bad id or no verdict is a clear error that changes nothing.
    let missing = env.brain().args(["feedback", "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--useful"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not found"));
    let neither = env.brain().args(["feedback", &memories.file_item]).output().unwrap();
    assert!(!neither.status.success());

    // Off: recall ranks as if nothing had been recorded.
    std::fs::write(env.project_dir.join(".brain.toml"), "project = \"demo\"\n[search]\nlearn_from_use = false\n")
        .unwrap();
    let off = recall(&env, "webhook deliveries fail the signature check");
    assert!(off.iter().all(|(_, why)| !why.contains("not used") && !why.contains("useful")), "{off:?}");
}

#[test]
fn a_transcript_of_another_project_never_changes_this_projects_items() {
    let env = Env::new();
    let memories = memories(&env);
    hook(
        &env,
        "session-start",
        &json!({"session_id": SESSION, "cwd": env.project_dir, "hook_event_name": "SessionStart"}),
    );
    // The same session id, but the transcript is of another project's folder.
    let other = env.dir.path().join("work/other-repo");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join(".brain.toml"), "project = \"other\"\n").unwrap();
    let dir = env.dir.path().join("transcripts/other");
    std::fs::create_dir_all(&dir).unwrap();
    let path = transcript(&dir, &other, &env.project_dir.join("src/webhooks/verify.rs"), ANSWER);
    hook(
        &env,
        "stop",
        &json!({"session_id": SESSION, "cwd": other, "transcript_path": path, "hook_event_name": "Stop"}),
    );
    for id in [&memories.file_item, &memories.quoted_item].into_iter().chain(&memories.others) {
        assert!(decisions(&env, id).is_empty(), "{id}: {:?}", decisions(&env, id));
    }
    assert!(NOW.starts_with("2026-11-21"));
}
