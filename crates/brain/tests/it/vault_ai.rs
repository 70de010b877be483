//! `brain tick` phases 2–5 against fake LLM servers on loopback speaking each wire protocol
//! (OpenAI-compatible chat completions, Anthropic Messages): a good answer is applied and
//! verified byte for byte; malformed, nonsensical, rate-limited, failing, slow, cut-short and
//! oversized answers leave the vault exactly as phase 1 alone leaves it, phase 1's feed is
//! written, and the report says what happened. No real model, no key.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::vault_support::{HOT, MID, Vault, standard_vault};
use crate::{Env, NOW};

const DUP: &str = "clusters/2026-11-20/2026-11-20-dup-retry-storm-dddddddddddd.md";
const DUP_TOMBSTONE: &str = "clusters/2026-11-20/2026-11-20-dup-retry-storm-dddddddddddd.merged.md";
const HOT_ID: &str = "2026-11-21-hot-retry-storm-aaaaaaaaaaaa";
const MID_ID: &str = "2026-11-19-mid-token-rotation-cccccccccccc";
const OLD_ID: &str = "2026-10-01-old-csv-export-bbbbbbbbbbbb";
const DUP_ID: &str = "2026-11-20-dup-retry-storm-dddddddddddd";
/// A secret planted in the vault: it must never reach a request body.
pub(crate) const PLANTED: &str = "ghp_EXAMPLE0example1EXAMPLE0example1EXAM";
pub(crate) const KEY: &str = "sk-fake-test-key-0123456789abcdef";

/// A duplicate of the hot arc, same project, with a planted secret in its summary.
fn dup_arc() -> String {
    format!(
        "---
cluster_id: {DUP_ID}
title: Retry storm again
region: left-hemisphere
status: active
heat: 4
created: 2026-11-20T09:00:00Z
summary: Same gateway retry storm; token {PLANTED} leaked in the logs
source_sessions: [s5]
project: demo
---

Duplicate of the hot arc.
"
    )
}

/// A tombstone left by an earlier merge.
const OLD_TOMBSTONE: &str = "---
cluster_id: 2026-11-01-gone-eeeeeeeeeeee
title: Gone
merged_into: 2026-11-21-hot-retry-storm-aaaaaaaaaaaa
---

Merged long ago.
";

fn ai_vault(env: &Env) -> Vault {
    let vault = standard_vault(env);
    vault.write(DUP, dup_arc());
    vault.write("clusters/2026-11-01/2026-11-01-gone-eeeeeeeeeeee.merged.md", OLD_TOMBSTONE);
    vault
}

/// What a fake server does with one request.
pub(crate) enum Step {
    Answer {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Reads the request and answers nothing for this long.
    Hang(Duration),
}

/// A fake LLM server; it records every request (head, body).
pub(crate) struct Fake {
    pub(crate) url: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

impl Fake {
    pub(crate) fn start(respond: impl Fn(usize, &Value) -> Step + Send + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let seen = requests.clone();
        std::thread::spawn(move || {
            for (index, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let (head, body) = crate::read_http_request(&stream);
                let body = String::from_utf8_lossy(&body).into_owned();
                let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                seen.lock().unwrap().push((head, body));
                match respond(index, &request) {
                    Step::Hang(time) => std::thread::sleep(time),
                    Step::Answer { status, headers, body } => {
                        let mut extra = String::new();
                        for (name, value) in headers {
                            extra.push_str(&format!("{name}: {value}\r\n"));
                        }
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{body}",
                            body.len()
                        );
                    }
                }
            }
        });
        Fake { url, requests }
    }

    pub(crate) fn bodies(&self) -> Vec<String> {
        self.requests.lock().unwrap().iter().map(|(_, body)| body.clone()).collect()
    }

    pub(crate) fn heads(&self) -> Vec<String> {
        self.requests.lock().unwrap().iter().map(|(head, _)| head.clone()).collect()
    }
}

/// An OpenAI chat-completions answer carrying `content`.
pub(crate) fn openai(content: &str, finish: &str) -> Step {
    let body = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
    });
    Step::Answer { status: 200, headers: Vec::new(), body: body.to_string() }
}

/// An Anthropic Messages answer calling the tool with `input`.
fn anthropic(input: &Value) -> Step {
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "brain_tick_proposals", "input": input}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 900, "output_tokens": 90},
    });
    Step::Answer { status: 200, headers: Vec::new(), body: body.to_string() }
}

/// The user prompt inside a request of either wire format.
pub(crate) fn prompt_of(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n")
}

/// The id the prompt gives the signal whose line mentions `needle`.
fn signal_id(prompt: &str, needle: &str) -> String {
    prompt
        .lines()
        .find(|line| line.starts_with("- mem_v") && line.contains(needle))
        .and_then(|line| line[2..].split(' ').next())
        .unwrap_or("mem_vmissing")
        .to_string()
}

/// Whether the prompt's arc table lists the arc `id` (the prompt is about its project).
pub(crate) fn shows(prompt: &str, id: &str) -> bool {
    prompt.contains(&format!("- {id} |"))
}

/// The good answer to each prompt (one per project): for demo's a merge and an escalation,
/// for the arcs without a project an edge and a clearance; intent and health in both.
fn good_answer(prompt: &str) -> Value {
    let mut answer = json!({
        "edges": [], "merges": [], "signals": [],
        "intent": "Stabilising the gateway: retries, then token rotation.",
        "health": {"score": 6, "reason": "two arcs describe one storm"},
    });
    if shows(prompt, HOT_ID) {
        answer["merges"] = json!([{"into": HOT_ID, "arcs": [DUP_ID], "reason": "the same retry storm"}]);
        answer["signals"] = json!([
            {"signal": signal_id(prompt, "auth-broker"), "action": "escalate", "severity": "nuclear", "reason": "ban rate doubling"},
        ]);
    }
    if shows(prompt, MID_ID) {
        answer["edges"] =
            json!([{"from": MID_ID, "to": OLD_ID, "type": "unblocks", "reason": "rotation unblocks the export"}]);
        answer["signals"] = json!([
            {"signal": signal_id(prompt, "rotation"), "action": "clear", "severity": "resolved", "reason": "rotation done"},
        ]);
    }
    answer
}

/// An answer proposing nothing.
fn empty_answer() -> Value {
    json!({"edges": [], "merges": [], "signals": [], "intent": "", "health": {"score": 5, "reason": ""}})
}

pub(crate) fn configure(env: &Env, provider: &str, url: &str, extra: &str) {
    let mut text = format!(
        "[ai]\nprovider = \"{provider}\"\nbase_url = \"{url}\"\nmodel = \"fake-model\"\napi_key_env = \"FAKE_AI_KEY\"\n{extra}"
    );
    // Defaults of these tests, unless `extra` sets the key.
    for (key, value) in [
        ("timeout_ms", "3000"),
        ("max_output_tokens", "500"),
        ("input_price_per_mtok", "1.0"),
        ("output_price_per_mtok", "2.0"),
    ] {
        if !extra.contains(&format!("{key} =")) {
            text.push_str(&format!("{key} = {value}\n"));
        }
    }
    std::fs::write(env.home.join("config.toml"), text).unwrap();
}

/// `brain tick --json` with the key in the environment; the report.
fn ai_tick(env: &Env, vault: &Vault, extra: &[&str]) -> Value {
    let output = env
        .brain()
        .env("FAKE_AI_KEY", KEY)
        .args(["tick", "--vault", vault.arg(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains(KEY) && !String::from_utf8_lossy(&output.stdout).contains(KEY),
        "the key is never printed"
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The vault's user files (not the feed, not hidden files), relpath → text.
fn user_files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relpath = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if relpath.starts_with("brain-feed") || relpath.rsplit('/').next().unwrap().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(relpath, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

/// The vault as phase 1 alone leaves it (a twin home and vault, `--no-ai`).
fn phase1_only() -> BTreeMap<String, String> {
    let env = Env::new();
    let vault = ai_vault(&env);
    env.json(&["tick", "--vault", vault.arg(), "--no-ai"]);
    user_files(&vault.root)
}

/// Phase 1 did its work and wrote its feed whatever the AI phases did.
fn assert_phase1_done(vault: &Vault, report: &Value) {
    assert_eq!(report["phases"][0]["ran"], true);
    assert!(vault.read("brain-feed/hot-arcs.md").contains(HOT_ID));
    let health = vault.read("brain-feed/health.jsonl");
    let first: Value = serde_json::from_str(health.lines().next().unwrap()).unwrap();
    assert_eq!(first["timestamp"], NOW);
    assert!(vault.read("brain-feed/last-tick-diff.md").contains("### Promotions"));
}

fn no_secret_in(fake: &Fake) {
    for body in fake.bodies() {
        assert!(!body.contains(PLANTED) && !body.contains(&PLANTED[..16]), "a planted secret reached the server");
        assert!(!body.contains("key id 42"), "a <private> block reached the server");
        assert!(!body.contains(KEY), "the key is never in a body");
    }
}

#[test]
fn a_good_openai_answer_is_applied_verified_and_audited_and_the_prompt_carries_no_secret() {
    let env = Env::new();
    let vault = ai_vault(&env);
    let fake = Fake::start(|_, request| openai(&good_answer(&prompt_of(request)).to_string(), "stop"));
    configure(&env, "openai", &fake.url, "");
    let report = ai_tick(&env, &vault, &[]);
    assert_phase1_done(&vault, &report);

    // The request: the schema as response_format, the key only in its header, no secret.
    let request: Value = serde_json::from_str(&fake.bodies()[0]).unwrap();
    assert_eq!(request["response_format"]["type"], "json_schema");
    assert_eq!(request["response_format"]["json_schema"]["strict"], true);
    assert_eq!(request["model"], "fake-model");
    assert_eq!(request["max_tokens"], 500);
    assert!(
        fake.heads()[0].to_ascii_lowercase().contains(&format!("authorization: bearer {KEY}").to_ascii_lowercase())
    );
    assert!(fake.heads()[0].starts_with("POST /v1/chat/completions "), "{}", fake.heads()[0]);
    no_secret_in(&fake);
    let prompt = prompt_of(&request);
    assert!(prompt.contains(HOT_ID) && prompt.contains("[REDACTED:"), "{prompt}");

    // The vault: exactly phase 1's files plus the four accepted changes.
    let mut expected = phase1_only();
    let hot = expected[HOT].replace("severity=critical source=auth-broker", "severity=nuclear source=auth-broker");
    expected.insert(HOT.into(), hot);
    let mid = expected[MID]
        .replace(
            "<!-- @signal severity=info source=rotation date=2026-11-21 -->\nRotation pending <private>key id 42</private> for review.",
            "<!-- @signal severity=resolved source=rotation date=2026-11-21 -->\nRotation pending <private>key id 42</private> for review. (CLEARED: rotation done)",
        )
        + &format!("<!-- @edge type=unblocks target={OLD_ID} by=brain-tick -->\n");
    expected.insert(MID.into(), mid);
    let dup = expected.remove(DUP).unwrap();
    expected.insert(
        DUP_TOMBSTONE.into(),
        dup.replace("project: demo\n---\n", &format!("project: demo\nmerged_into: {HOT_ID}\n---\n")),
    );
    assert_eq!(user_files(&vault.root), expected);

    // The report.
    let ai = &report["ai"];
    assert_eq!(
        (ai["ran"].as_bool(), ai["provider"].as_str(), ai["model"].as_str()),
        (Some(true), Some("openai"), Some("fake-model"))
    );
    assert_eq!(
        (ai["proposed"].as_u64(), ai["applied"].as_u64(), ai["verified"].as_u64(), ai["rejected"].as_u64()),
        (Some(4), Some(4), Some(4), Some(0))
    );
    // One prompt per project: demo's first (the hottest), then the arcs without a project.
    assert_eq!(ai["prompt"]["projects"], json!(["demo", ""]));
    assert_eq!(
        (ai["tokens_in"].as_u64(), ai["tokens_out"].as_u64(), ai["requests"].as_u64()),
        (Some(2000), Some(200), Some(2))
    );
    assert!((ai["cost"].as_f64().unwrap() - 0.0024).abs() < 1e-9, "{}", ai["cost"]);
    assert!(ai["prompt"]["tokens"].as_u64().unwrap() <= 2 * 6000 && ai["prompt"]["arcs_total"] == 3 + 1);
    let phases: Vec<(&str, bool)> = report["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["ran"].as_bool().unwrap()))
        .collect();
    assert_eq!(phases, [("keeper", true), ("prompt", true), ("reason", true), ("apply", true), ("verify", true)]);

    // The feed: intent, the AI health line, the AI section of the diff; and the audit record.
    let intent = vault.read("brain-feed/intent.md");
    assert!(intent.contains("Stabilising the gateway: retries, then token rotation."), "{intent}");
    let health: Vec<Value> =
        vault.read("brain-feed/health.jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((health.len(), health[1]["source"].as_str(), health[1]["score"].as_u64()), (2, Some("ai"), Some(6)));
    let diff = vault.read("brain-feed/last-tick-diff.md");
    assert!(diff.contains("### AI") && diff.contains(&format!("verified merge {DUP_ID} into {HOT_ID}")), "{diff}");
    let audit: Value =
        serde_json::from_str(&std::fs::read_to_string(env.home.join("ticks/2026-11-21T100000Z.json")).unwrap())
            .unwrap();
    assert_eq!(audit["prompt"]["sha256"].as_str().unwrap().len(), 64);
    assert!(audit["answer"].as_str().unwrap().contains("the same retry storm"));
    assert_eq!(audit["verified"], 4);

    // The index followed: the merged arc is gone from it, the edge is there.
    let arcs = env.json(&["list", "--all-scopes", "--kind", "arc", "--limit", "100"]);
    let titles: Vec<&str> = arcs.as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert!(!titles.contains(&"Retry storm again"), "{titles:?}");

    // Status and session start follow at once, not at the next tick: the cleared signal is
    // gone, the escalated one is nuclear.
    let status = env.json(&["status", "--now", NOW]);
    let signals: Vec<(&str, &str)> = status["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["severity"].as_str().unwrap(), s["source"].as_str().unwrap_or("")))
        .collect();
    assert!(signals.contains(&("nuclear", "auth-broker")), "{signals:?}");
    assert!(!signals.iter().any(|(_, source)| *source == "rotation"), "{signals:?}");
    let start = env.json(&["session-start", "--now", NOW]);
    let severities: Vec<&str> =
        start["signals"].as_array().unwrap().iter().map(|s| s["severity"].as_str().unwrap()).collect();
    assert_eq!(severities, ["nuclear"], "{start:#}");

    // The next tick (phase 1) removes the cleared block: the two-tick lifecycle.
    env.json(&["tick", "--vault", vault.arg(), "--no-ai"]);
    assert!(!vault.read(MID).contains("Rotation pending"));
    assert!(vault.read(MID).contains("by=brain-tick -->"));
}

#[test]
fn an_anthropic_tool_answer_is_applied_and_a_dry_run_writes_nothing() {
    let env = Env::new();
    let vault = ai_vault(&env);
    let answer = json!({
        "edges": [{"from": HOT_ID, "to": DUP_ID, "type": "related", "reason": "same gateway"}],
        "merges": [], "signals": [], "intent": "", "health": {"score": 8, "reason": "fine"},
    });
    let fake = Fake::start(move |_, request| {
        let empty = empty_answer();
        anthropic(if shows(&prompt_of(request), HOT_ID) { &answer } else { &empty })
    });
    configure(&env, "anthropic", &format!("{}/v1", fake.url), "");

    // Dry run first: the proposals and what would change; nothing written anywhere.
    let before = crate::vault_support::fingerprint(env.dir.path());
    let report = ai_tick(&env, &vault, &["--dry-run"]);
    assert_eq!(crate::vault_support::fingerprint(env.dir.path()), before, "a dry run writes nothing");
    assert_eq!(report["ai"]["proposals"][0]["status"], "would apply");
    assert!(report["ai"].get("audit").is_none());

    let report = ai_tick(&env, &vault, &[]);
    // Two prompts each run (one per project): the real run's first request is the third.
    let request: Value = serde_json::from_str(&fake.bodies()[2]).unwrap();
    assert_eq!(request["tool_choice"], json!({"type": "tool", "name": "brain_tick_proposals"}));
    assert_eq!(
        request["tools"][0]["input_schema"]["required"],
        json!(["edges", "merges", "signals", "intent", "health"])
    );
    let head = fake.heads()[2].to_ascii_lowercase();
    assert!(
        head.starts_with("post /v1/messages ") && head.contains(&format!("x-api-key: {}", KEY.to_ascii_lowercase())),
        "{head}"
    );
    assert!(head.contains("anthropic-version: 2023-06-01"));
    no_secret_in(&fake);
    assert_eq!((report["ai"]["verified"].as_u64(), report["ai"]["tokens_in"].as_u64()), (Some(1), Some(1800)));
    let mut expected = phase1_only();
    let hot = expected[HOT].clone() + &format!("<!-- @edge type=related target={DUP_ID} by=brain-tick -->\n");
    expected.insert(HOT.into(), hot);
    assert_eq!(user_files(&vault.root), expected);
    // No intent proposed: the placeholder stays.
    assert!(vault.read("brain-feed/intent.md").contains("No intent inferred yet"));
}

/// Runs an AI tick against `fake` and checks the vault is as phase 1 alone leaves it.
fn unchanged_by_ai(fake: &Fake, provider: &str, extra_config: &str) -> (Value, Vault, Env) {
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, provider, &fake.url, extra_config);
    let report = ai_tick(&env, &vault, &[]);
    assert_phase1_done(&vault, &report);
    assert_eq!(user_files(&vault.root), phase1_only(), "the AI phases changed the vault");
    no_secret_in(fake);
    (report, vault, env)
}

fn error_of(report: &Value) -> String {
    report["ai"]["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn malformed_json_gets_one_repair_then_the_tick_gives_up_cleanly() {
    let fake = Fake::start(|_, _| openai("{\"edges\": [ this is not json", "stop"));
    let (report, vault, _env) = unchanged_by_ai(&fake, "openai", "");
    // One repair retry per prompt (one prompt per project): an unusable answer to one prompt
    // does not keep the other from being asked.
    assert_eq!(fake.bodies().len(), 4, "one repair retry per prompt");
    assert!(prompt_of(&serde_json::from_str(&fake.bodies()[1]).unwrap()).contains("Your previous answer was rejected"));
    assert_eq!((report["ai"]["repaired"].as_bool(), report["ai"]["requests"].as_u64()), (Some(true), Some(4)));
    assert!(error_of(&report).contains("no usable answer after one repair"), "{report}");
    assert!(report["ai"]["reason"].as_str().unwrap().starts_with("AI phases failed"));
    let diff = vault.read("brain-feed/last-tick-diff.md");
    assert!(diff.contains("### AI") && diff.contains("failed: no usable answer"), "{diff}");

    // A repair that works is applied.
    let fake = Fake::start(|index, request| match index {
        0 => openai("not json at all", "stop"),
        _ => openai(&good_answer(&prompt_of(request)).to_string(), "stop"),
    });
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, "openai", &fake.url, "");
    let report = ai_tick(&env, &vault, &[]);
    assert_eq!((report["ai"]["repaired"].as_bool(), report["ai"]["verified"].as_u64()), (Some(true), Some(4)));
    assert!(vault.exists(DUP_TOMBSTONE));
}

#[test]
fn schema_valid_nonsense_is_rejected_proposal_by_proposal_with_reasons() {
    let answer = json!({
        "edges": [
            {"from": HOT_ID, "to": "2026-01-01-no-such-arc", "type": "related", "reason": ""},
            {"from": MID_ID, "to": MID_ID, "type": "parent", "reason": ""},
            {"from": HOT_ID, "to": MID_ID, "type": "related", "reason": "already there"},
        ],
        "merges": [
            {"into": "2026-11-01-gone-eeeeeeeeeeee", "arcs": [DUP_ID], "reason": "into a tombstone"},
            {"into": HOT_ID, "arcs": [OLD_ID], "reason": "another project"},
            {"into": DUP_ID, "arcs": [MID_ID], "reason": "other project too"},
        ],
        "signals": [{"signal": "mem_v000000000000000000000000", "action": "clear", "severity": "resolved", "reason": ""}],
        "intent": "",
        "health": {"score": 2, "reason": "confused"},
    });
    // Only the prompt about demo gets it (the other's answer proposes nothing).
    let fake = Fake::start(move |_, request| {
        let answer = if shows(&prompt_of(request), HOT_ID) { answer.clone() } else { empty_answer() };
        openai(&answer.to_string(), "stop")
    });
    let (report, _, _) = unchanged_by_ai(&fake, "openai", "");
    let ai = &report["ai"];
    assert_eq!((ai["proposed"].as_u64(), ai["rejected"].as_u64(), ai["applied"].as_u64()), (Some(7), Some(7), Some(0)));
    let why: Vec<&str> = ai["proposals"].as_array().unwrap().iter().map(|p| p["why"].as_str().unwrap()).collect();
    assert_eq!(
        why,
        [
            "2026-11-01-gone-eeeeeeeeeeee is already merged into another arc (a tombstone)",
            &format!("{OLD_ID} and {HOT_ID} belong to different projects"),
            &format!("{MID_ID} and {DUP_ID} belong to different projects"),
            "no live arc has the id 2026-01-01-no-such-arc",
            "an edge from an arc to itself",
            &format!(
                "{MID_ID} belongs to no project, not to project demo whose prompt this answer replied to (changes \
                 across projects are refused)"
            ),
            "no signal has the id mem_v000000000000000000000000",
        ]
    );

    // Merge chains: the second merge would absorb the first one's survivor.
    let chain = json!({
        "edges": [], "signals": [], "intent": "", "health": {"score": 5, "reason": ""},
        "merges": [
            {"into": HOT_ID, "arcs": [DUP_ID], "reason": "dup"},
            {"into": DUP_ID, "arcs": [HOT_ID], "reason": "back again"},
        ],
    });
    let fake = Fake::start(move |_, request| {
        let answer = if shows(&prompt_of(request), HOT_ID) { chain.clone() } else { empty_answer() };
        openai(&answer.to_string(), "stop")
    });
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, "openai", &fake.url, "max_changes_per_kind = 1\n");
    let report = ai_tick(&env, &vault, &[]);
    let why: Vec<Value> = report["ai"]["proposals"].as_array().unwrap().iter().map(|p| p["why"].clone()).collect();
    assert_eq!(why, [Value::Null, json!(format!("{DUP_ID} is merged into another arc in this answer (no chains)"))]);
    assert!(vault.exists(DUP_TOMBSTONE) && !vault.exists(DUP) && vault.exists(HOT));
}

#[test]
fn a_429_waits_once_within_the_budget_and_a_long_retry_after_gives_up() {
    let fake = Fake::start(|index, request| match index {
        0 => Step::Answer { status: 429, headers: vec![("retry-after", "1".into())], body: "{}".into() },
        _ => openai(&good_answer(&prompt_of(request)).to_string(), "stop"),
    });
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, "openai", &fake.url, "");
    let report = ai_tick(&env, &vault, &[]);
    // The 429, then one request per prompt.
    assert_eq!((report["ai"]["requests"].as_u64(), report["ai"]["waited_ms"].as_u64()), (Some(3), Some(1000)));
    assert_eq!(report["ai"]["verified"], 4);

    let fake = Fake::start(|_, _| Step::Answer {
        status: 429,
        headers: vec![("retry-after", "120".into())],
        body: "{}".into(),
    });
    let started = Instant::now();
    let (report, _, _) = unchanged_by_ai(&fake, "openai", "");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(fake.bodies().len(), 1, "no wait past the budget");
    assert!(error_of(&report).contains("rate limited (HTTP 429, retry after 120 s)"), "{report}");
}

#[test]
fn a_500_a_timeout_and_a_refused_connection_leave_the_vault_to_phase_1() {
    let fake = Fake::start(|_, _| Step::Answer {
        status: 500,
        headers: Vec::new(),
        body: format!("{{\"error\": \"upstream broke, your key {KEY}\"}}"),
    });
    let (report, _, _) = unchanged_by_ai(&fake, "anthropic", "");
    let error = error_of(&report);
    assert!(error.contains("HTTP 500") && error.contains("upstream broke") && !error.contains(KEY), "{error}");
    assert!(error.contains("[REDACTED]"), "the echoed key is scrubbed: {error}");

    let fake = Fake::start(|_, _| Step::Hang(Duration::from_secs(4)));
    let started = Instant::now();
    let (report, _, _) = unchanged_by_ai(&fake, "openai", "timeout_ms = 700\n");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(error_of(&report).contains("no answer within the time budget"), "{report}");
    assert_eq!(report["phases"][3]["ran"], false);

    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, "openai", &closed, "");
    let report = ai_tick(&env, &vault, &[]);
    assert!(error_of(&report).contains("openai"), "{report}");
    assert_phase1_done(&vault, &report);
}

#[test]
fn an_answer_cut_short_or_ten_times_the_output_limit_is_refused() {
    let fake = Fake::start(|_, request| {
        let full = good_answer(&prompt_of(request)).to_string();
        openai(&full[..full.len() / 2], "length")
    });
    let (report, _, _) = unchanged_by_ai(&fake, "openai", "");
    assert!(error_of(&report).contains("cut short"), "{report}");
    assert_eq!(fake.bodies().len(), 2, "no repair of a cut answer; the other prompt is asked");

    // max_output_tokens = 200; the answer is ~2,000 tokens of intent.
    let fake = Fake::start(|_, _| {
        let answer = json!({
            "edges": [], "merges": [], "signals": [], "health": {"score": 1, "reason": ""},
            "intent": "word ".repeat(1600),
        });
        openai(&answer.to_string(), "stop")
    });
    let (report, vault, _env) = unchanged_by_ai(&fake, "openai", "max_output_tokens = 200\n");
    assert!(error_of(&report).contains("over the output limit of 200"), "{report}");
    assert!(vault.read("brain-feed/intent.md").contains("No intent inferred yet"));

    // Megabytes: the read stops at the cap.
    let fake = Fake::start(|_, _| openai(&"x".repeat(4 << 20), "stop"));
    let (report, _, _) = unchanged_by_ai(&fake, "openai", "max_output_tokens = 200\n");
    assert!(error_of(&report).contains("larger than"), "{report}");
}

#[test]
fn a_missing_key_no_ai_and_a_cost_cap_keep_the_tick_at_phase_1() {
    let fake = Fake::start(|_, _| Step::Hang(Duration::from_secs(1)));
    let env = Env::new();
    let vault = ai_vault(&env);
    configure(&env, "openai", &fake.url, "");
    // No key in the environment: a clear failure, no request.
    let report = env.json(&["tick", "--vault", vault.arg()]);
    assert!(error_of(&report).contains("FAKE_AI_KEY") && error_of(&report).contains("not set"), "{report}");
    let report = ai_tick(&env, &vault, &["--no-ai"]);
    assert_eq!(report["ai"]["reason"], "phase 1 only: --no-ai");
    // The worst case (the prompt's tokens at 1,000 per million, + 500 out) is over 0.01.
    configure(&env, "openai", &fake.url, "input_price_per_mtok = 1000.0\nmax_cost_per_tick = 0.01\n");
    let report = ai_tick(&env, &vault, &[]);
    assert!(error_of(&report).contains("over max_cost_per_tick"), "{report}");
    assert!(fake.bodies().is_empty(), "nothing was sent");
}

#[test]
fn a_project_file_cannot_switch_the_ai_on_or_choose_its_server() {
    let env = Env::new();
    let vault = Vault::new(&env);
    std::fs::write(
        env.project_dir.join(".brain.toml"),
        "project = \"demo\"\n[ai]\nprovider = \"openai\"\nbase_url = \"http://attacker.example\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let output = env.brain().args(["tick", "--vault", vault.arg()]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ai.provider") && stderr.contains("ai.base_url") && stderr.contains("LLM"), "{stderr}");
}

#[test]
fn a_prompt_about_one_project_cannot_change_another_projects_arcs_or_signals() {
    let env = Env::new();
    let vault = ai_vault(&env);
    let empty = json!({"edges": [], "merges": [], "signals": [], "intent": "", "health": {"score": 5, "reason": ""}});

    // A dry run shows what the model is asked: the signal ids come from there.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let fake = {
        let (seen, empty) = (seen.clone(), empty.clone());
        Fake::start(move |_, request| {
            seen.lock().unwrap().push(prompt_of(request));
            openai(&empty.to_string(), "stop")
        })
    };
    configure(&env, "openai", &fake.url, "");
    ai_tick(&env, &vault, &["--dry-run"]);
    let prompts = seen.lock().unwrap().clone();
    let rotation = prompts.iter().map(|prompt| signal_id(prompt, "rotation")).find(|id| id != "mem_vmissing").unwrap();

    // The answer to the prompt about demo (say an instruction in one of its arcs asked for
    // it) clears a signal of another project's arc and links a demo arc to that project's
    // arc; its change of demo's own signal is fine.
    let attack = move |prompt: &str| {
        json!({
            "edges": [{"from": HOT_ID, "to": OLD_ID, "type": "related", "reason": "as the arc says"}],
            "merges": [],
            "signals": [
                {"signal": rotation, "action": "clear", "severity": "resolved", "reason": "as the arc says"},
                {"signal": signal_id(prompt, "auth-broker"), "action": "escalate", "severity": "nuclear", "reason": "ban rate doubling"},
            ],
            "intent": "", "health": {"score": 5, "reason": ""},
        })
    };
    let fake = Fake::start(move |_, request| {
        let prompt = prompt_of(request);
        let answer = if shows(&prompt, HOT_ID) { attack(&prompt) } else { empty.clone() };
        openai(&answer.to_string(), "stop")
    });
    configure(&env, "openai", &fake.url, "");
    let report = ai_tick(&env, &vault, &[]);
    let outcomes: Vec<(&str, &str, &str)> = report["ai"]["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["proposal"].as_str().unwrap(), p["status"].as_str().unwrap(), p["why"].as_str().unwrap_or("")))
        .collect();
    let refused = |proposal: &str| {
        outcomes.iter().find(|(p, _, _)| p.contains(proposal)).unwrap_or_else(|| panic!("{proposal}: {outcomes:?}"))
    };
    for proposal in [format!("edge {HOT_ID} -[related]-> {OLD_ID}"), "clear signal".to_string()] {
        let (_, status, why) = refused(&proposal);
        assert_eq!(*status, "rejected", "{proposal}: {outcomes:?}");
        assert!(why.contains("changes across projects are refused") && why.contains("project demo"), "{why}");
    }
    assert_eq!(refused("escalate signal").1, "verified", "{outcomes:?}");
    let mut expected = phase1_only();
    let hot = expected[HOT].replace("severity=critical source=auth-broker", "severity=nuclear source=auth-broker");
    expected.insert(HOT.into(), hot);
    assert_eq!(user_files(&vault.root), expected, "only demo's own signal changed");
    let diff = vault.read("brain-feed/last-tick-diff.md");
    assert!(diff.contains("rejected edge") && diff.contains("changes across projects are refused"), "{diff}");

    // Each prompt holds one project's arcs and signals.
    assert_eq!(prompts.len(), 2, "one prompt per project: {prompts:?}");
    let demo = prompts.iter().find(|p| shows(p, HOT_ID)).unwrap();
    let other = prompts.iter().find(|p| shows(p, MID_ID)).unwrap();
    for (prompt, holds, lacks) in [
        (demo, [DUP_ID, "Auth broker"], [MID_ID, OLD_ID, "Rotation pending"]),
        (other, [OLD_ID, "Rotation pending"], [HOT_ID, DUP_ID, "Auth broker"]),
    ] {
        assert!(holds.iter().all(|text| prompt.contains(text)), "{prompt}");
        assert!(!lacks.iter().any(|text| prompt.contains(text)), "{prompt}");
    }
}
