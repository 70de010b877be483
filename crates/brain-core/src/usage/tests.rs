use std::collections::BTreeSet;

use super::*;

const A: &str = "mem_01JA0000000000000000000000";
const B: &str = "mem_01JB0000000000000000000000";
const C: &str = "mem_01JC0000000000000000000000";

fn item(id: &str, title: &str, content: &str, files: &[&str]) -> Item {
    let now = "2026-11-01T00:00:00Z".parse().unwrap();
    let mut item = crate::assemble::fixtures::generate_items(1, 1, now).remove(0);
    item.id = id.into();
    item.title = title.into();
    item.content = content.into();
    item.tags.clear();
    item.files = files.iter().map(|file| file.to_string()).collect();
    item
}

fn items() -> Vec<Item> {
    vec![
        item(
            A,
            "Webhook signatures use HMAC over the raw body",
            "Verify the webhook signature against the raw request body before parsing JSON; \
             reparsed bodies change whitespace and the HMAC no longer matches.",
            &["src/webhooks/verify.rs"],
        ),
        item(
            B,
            "Webhook delivery worker retries",
            "The delivery worker retries with exponential backoff and jitter, capped at six attempts. \
             Run `cargo test -p delivery retries` after touching it.",
            &["src/webhooks/worker.rs"],
        ),
        item(C, "Release checklist", "Tag the release, publish crates, announce in the changelog.", &[]),
    ]
}

fn ids(hits: &[UseHit]) -> Vec<(&str, UseSignal)> {
    hits.iter().map(|hit| (hit.id.as_str(), hit.signal)).collect()
}

#[test]
fn a_tool_call_counts_as_use_of_the_item_whose_file_command_or_id_it_names() {
    let watch = Watch::new(&items());
    let read = watch.tool_call(2, "Read", Some("/home/u/project/src/webhooks/verify.rs"), None, "");
    assert_eq!(ids(&read), [(A, UseSignal::File)]);
    assert!(read[0].evidence.contains("turn 2: Read"), "{read:?}");
    // Another file of the same folder is not the item's file.
    assert!(watch.tool_call(2, "Read", Some("src/webhooks/verify.rs.bak"), None, "").is_empty());
    let ran = watch.tool_call(3, "Bash", None, Some("cargo   test -p delivery retries -- --nocapture"), "");
    assert_eq!(ids(&ran), [(B, UseSignal::Command)]);
    let fetched = watch.tool_call(4, "mcp__brain__brain_get_memory", None, None, &format!(r#"{{"id":"{C}"}}"#));
    assert_eq!(ids(&fetched), [(C, UseSignal::Fetched)]);
    let shell = watch.tool_call(4, "Bash", None, Some(&format!("brain get {B} --json")), "");
    assert_eq!(ids(&shell), [(B, UseSignal::Fetched)]);
    // An item the session was not given, opened by id: used too.
    let opened = watch.tool_call(5, "mcp__brain__brain_get_memory", None, None, "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV");
    assert_eq!(ids(&opened), [("mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", UseSignal::Fetched)]);
    // A longer token that starts like an id is not one.
    assert!(watch.tool_call(5, "Bash", None, Some("echo mem_01ARZ3NDEKTSV4RRFFQ69G5FAVX"), "").is_empty());
}

#[test]
fn quoting_a_phrase_or_three_distinctive_terms_counts_but_words_every_item_shares_do_not() {
    let watch = Watch::new(&items());
    let none = BTreeSet::new();
    let quoted = watch.assistant_text(1, "As noted: reparsed bodies change whitespace, so I verify first.", &none);
    assert_eq!(ids(&quoted), [(A, UseSignal::Quoted)]);
    assert!(quoted[0].evidence.contains("reparsed bodies change whitespace"), "{quoted:?}");
    let paraphrase = watch.assistant_text(1, "I capped the attempts and kept exponential backoff with jitter.", &none);
    assert_eq!(ids(&paraphrase), [(B, UseSignal::Quoted)]);
    // "webhook" is in two watched items: not distinctive of either.
    assert!(watch.assistant_text(1, "The webhook code is in good shape.", &none).is_empty());
}

#[test]
fn the_agent_repeating_the_users_words_is_not_use() {
    let watch = Watch::new(&items());
    let prompt = watch.prompt_stems("Add jitter and exponential backoff to the capped attempts");
    let echo = watch.assistant_text(1, "I capped the attempts and kept exponential backoff with jitter.", &prompt);
    assert!(echo.is_empty(), "{echo:?}");
}

fn decision(verdict: Verdict, task: &str, at: &str) -> Decision {
    Decision { verdict, task: task_stems(task), at: at.parse().unwrap() }
}

#[test]
fn unused_sessions_of_like_tasks_lower_an_item_within_bounds_and_use_resets_it() {
    let now: Timestamp = "2026-11-20T00:00:00Z".parse().unwrap();
    let task = task_stems("fix the webhook signature check");
    let unused =
        |day: u8| decision(Verdict::Unused, "webhook signature check fails", &format!("2026-11-{day:02}T00:00:00Z"));
    let once = learned(&[unused(19)], &task, false, now);
    assert!(once.factor < 1.0 && once.factor > 0.75, "{once:?}");
    assert!(once.why.contains("1 session"), "{once:?}");
    let many: Vec<Decision> = (1..=19).map(unused).collect();
    let floor = learned(&many, &task, false, now);
    assert!(floor.factor >= FLOOR && floor.factor < FLOOR + 0.01, "never below the floor: {floor:?}");
    // Near the floor, the item given less often still ranks first.
    let fewer = learned(&many[..12], &task, false, now);
    assert!(fewer.factor > floor.factor, "{fewer:?} vs {floor:?}");
    // Another task is not penalised by these.
    let other = learned(&many, &task_stems("release checklist for crates"), false, now);
    assert_eq!(other, Learned::NEUTRAL);
    // A use since then: the unused sessions before it no longer count, and the use raises it
    // within its bound.
    let mut used = many.clone();
    used.push(decision(Verdict::Used(UseSignal::File), "webhook signature", "2026-11-19T12:00:00Z"));
    let raised = learned(&used, &task, false, now);
    assert!(raised.factor > 1.0 && raised.factor <= 1.0 + MAX_BONUS, "{raised:?}");
    assert!(raised.why.starts_with("used in 1 session"), "{raised:?}");
    let uses: Vec<Decision> = (1..=19)
        .map(|day| {
            decision(Verdict::Used(UseSignal::Quoted), "webhook signature", &format!("2026-11-{day:02}T00:00:00Z"))
        })
        .collect();
    let most = learned(&uses, &task, false, now);
    assert!(most.factor > 1.1 && most.factor <= 1.0 + MAX_BONUS, "bounded: {most:?}");
    let feedback =
        learned(&[decision(Verdict::Feedback { useful: true }, "", "2026-11-01T00:00:00Z")], &task, false, now);
    assert!(feedback.factor > most.factor, "feedback ranks above any inference");
    // Stable and pinned items are never lowered by inference.
    assert_eq!(learned(&many, &task, true, now), Learned::NEUTRAL);
    // Old decisions weigh less.
    let old = learned(&[unused(1)], &task, false, "2027-03-01T00:00:00Z".parse().unwrap());
    assert!(old.factor > once.factor, "{old:?} vs {once:?}");
}

#[test]
fn the_newest_feedback_decides_over_any_inference() {
    let now: Timestamp = "2026-11-20T00:00:00Z".parse().unwrap();
    let task = task_stems("webhook signature");
    let mut decisions: Vec<Decision> = (1..=9)
        .map(|day| decision(Verdict::Unused, "webhook signature", &format!("2026-11-0{day}T00:00:00Z")))
        .collect();
    decisions.push(decision(Verdict::Feedback { useful: true }, "", "2026-11-05T12:00:00Z"));
    assert_eq!(learned(&decisions, &task, false, now).factor, USEFUL_FACTOR);
    decisions.push(decision(Verdict::Feedback { useful: false }, "", "2026-11-06T12:00:00Z"));
    assert_eq!(learned(&decisions, &task, true, now).factor, NOT_USEFUL_FACTOR);
}

#[test]
fn task_stems_keep_the_subject_not_the_generic_task_words() {
    assert_eq!(task_stems("Fix the failing webhook signature bug"), ["fail", "signatur", "webhook"]);
}
