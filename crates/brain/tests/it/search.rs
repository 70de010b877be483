//! Search ranking as every surface sees it: `brain search`, session-start recall, the agent
//! profile's memories and MCP `brain_search` / `brain_context_pack` all rank with
//! `brain_core::search` (coverage of the query, stopwords out, then BM25F) and say why.

use crate::Env;
use predicates::prelude::*;

const QUESTION: &str = "When did Kate start skiing?";
const ANSWER: &str = "Skiing since 2013";

/// A store where the old ranking put a turn full of "when" and "did" first.
fn skiing_env(scope: &str) -> Env {
    let env = Env::new();
    let remember = |title: &str, content: &str| {
        env.remember(&["--title", title, "--content", content, "--scope", scope]);
    };
    remember("When did you get there? When did it start?", "when did you get there, when did it start, did you");
    remember(ANSWER, "Kate started skiing in 2013 with her dad");
    remember("Kate's new job", "Kate works at a bakery now");
    remember("Weekend plans", "we could go hiking or stay in");
    env
}

#[test]
fn search_ranks_what_the_question_is_about_not_its_stopwords_and_says_why() {
    let env = skiing_env("project/demo");
    let page = env.json(&["search", QUESTION]);
    let results = page["results"].as_array().unwrap();
    assert_eq!(results[0]["title"], ANSWER, "{page}");
    let why = results[0]["why"].as_str().unwrap();
    assert!(why.starts_with("matched: kate (content), start (content), skiing (title, content)"), "{why}");
    // The stopword-laden question matches only "start": it is not second to a better match.
    let titles: Vec<&str> = results.iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles[1], "Kate's new job", "{titles:?}");
    // The text form shows the reason too.
    env.brain().args(["search", QUESTION]).assert().success().stdout(predicate::str::contains("matched: kate"));
}

#[test]
fn a_two_item_store_gives_a_real_match_a_real_score() {
    let env = Env::new();
    env.remember(&["--title", "Cache eviction", "--content", "an LRU of 500 entries"]);
    env.remember(&["--title", "Deploys", "--content", "never on Fridays"]);
    let page = env.json(&["search", "cache", "eviction"]);
    let results = page["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert!(results[0]["score"].as_f64().unwrap() > 0.5, "{page}");
}

#[test]
fn queries_of_stopwords_punctuation_nothing_or_10_kb_get_an_answer_or_a_clear_error() {
    let env = skiing_env("project/demo");
    // Only stopwords: every word is searched for, and the reason says so.
    let page = env.json(&["search", "when", "did", "you"]);
    assert_eq!(page["results"][0]["title"], "When did you get there? When did it start?");
    assert!(page["results"][0]["why"].as_str().unwrap().contains("only common words"), "{page}");
    for query in ["", "?!", "--- ..."] {
        env.brain()
            .args(["search", "--", query])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("has no words to search for"));
    }
    // A pasted 10 KB text is bounded (the first 32 distinct terms), not refused.
    let long = format!("skiing {}", "lorem ipsum dolor sit amet ".repeat(400));
    assert!(long.len() > 10_000);
    let page = env.json(&["search", &long]);
    assert_eq!(page["results"][0]["title"], ANSWER);
}

#[test]
fn session_start_recall_uses_the_ranking() {
    let env = skiing_env("project/demo");
    let start = env.json(&["session-start", "--task", QUESTION, "--top", "2"]);
    let recalled = start["context_recall"].as_array().unwrap();
    assert_eq!(recalled[0]["title"], ANSWER, "{start}");
    assert!(recalled[0]["why"].as_str().unwrap().starts_with("matched: kate (content)"), "{start}");
}

#[test]
fn the_agent_profile_picks_its_memories_with_the_ranking() {
    let env = skiing_env("agent/coach");
    let output =
        env.brain().args(["context", "--profile", "agent", "--agent", "coach", "--topic", QUESTION]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = String::from_utf8(output.stdout).unwrap();
    let answer = doc.find("Kate started skiing").expect(&doc);
    let noise = doc.find("when did you get there").unwrap_or(usize::MAX);
    assert!(answer < noise, "{doc}");
    assert!(!doc.contains("we could go hiking"), "an unmatched memory was picked:\n{doc}");
}

#[test]
fn the_agent_profile_leaves_out_memories_matched_only_by_generic_task_words() {
    // As session start does: "fix" and "bug" say what to do, not what about.
    let env = Env::new();
    let remember = |title: &str, content: &str| {
        env.remember(&["--title", title, "--content", content, "--scope", "agent/coach"]);
    };
    remember("Webhook signatures", "the webhook signature is an HMAC of the raw body");
    remember("Parser fix", "fixed the parser bug by escaping quotes");
    remember("Weekend plans", "we could go hiking or stay in");
    let output = env
        .brain()
        .args(["context", "--profile", "agent", "--agent", "coach", "--topic", "fix the webhook signature bug"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc = String::from_utf8(output.stdout).unwrap();
    assert!(doc.contains("HMAC of the raw body"), "{doc}");
    assert!(!doc.contains("escaping quotes"), "a memory matched only by fix/bug was picked:\n{doc}");
    assert!(!doc.contains("we could go hiking"), "an unmatched memory was picked:\n{doc}");
}

#[test]
fn mcp_search_and_context_pack_use_the_ranking() {
    let env = skiing_env("project/demo");
    let mut mcp = crate::mcp_support::Mcp::start(&env);
    let text = |line: String| {
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        answer["result"]["content"][0]["text"].as_str().unwrap().to_string()
    };
    let search = text(mcp.call("brain_search", serde_json::json!({"query": QUESTION})));
    let pack = text(mcp.call("brain_context_pack", serde_json::json!({"task": QUESTION, "token_budget": 2000})));
    let page: serde_json::Value = serde_json::from_str(&search).unwrap();
    assert_eq!(page["results"][0]["title"], ANSWER, "{page}");
    assert!(page["results"][0]["why"].as_str().unwrap().contains("skiing (title, content)"), "{page}");
    let answer = pack.find(ANSWER).expect(&pack);
    assert!(answer < pack.find("When did you get there").unwrap_or(usize::MAX), "{pack}");
}

/// A chat captured as two sessions: in the first, a question is asked in one turn and
/// answered in the next, which shares no word with a question about it.
fn chat_env() -> (Env, &'static str, &'static str) {
    let env = Env::new();
    let asked = "mem_01JDNB00000000000000000001";
    let answered = "mem_01JDNB00000000000000000002";
    let turns = [
        (asked, "transcript:chat-1", "20T18:00", "Emi: Congrats on the promotion! What's the backstory?"),
        (answered, "transcript:chat-1", "20T18:01", "Thanks! My manager left in March and I took over the team."),
        // The session resumed the next morning: another conversation.
        ("mem_01JDNB00000000000000000003", "transcript:chat-1", "21T08:00", "Emi: Dinner at eight then."),
        ("mem_01JDNB00000000000000000004", "transcript:chat-2", "20T18:02", "Kate: Hiking on Saturday?"),
        ("mem_01JDNB00000000000000000005", "cli", "20T18:00", "The store runs a promotion on shoes this week."),
    ];
    import_notes(
        &env,
        turns.iter().map(|(id, source, time, text)| {
            serde_json::json!({
                "id": id, "source": source,
                "title": text.split_once(['!', '.', '?']).map_or(*text, |(first, _)| first),
                "content": text, "created_at": format!("2026-11-{time}:00Z"),
            })
        }),
    );
    (env, asked, answered)
}

/// Imports notes of `project/demo` (each given its id, source, title, content and
/// created_at; updated at its creation) through `brain import`, as a capture would write them.
pub(crate) fn import_notes(env: &Env, notes: impl IntoIterator<Item = serde_json::Value>) {
    let lines: Vec<String> = notes
        .into_iter()
        .map(|mut note| {
            note["kind"] = "note".into();
            note["scope"] = "project/demo".into();
            note["updated_at"] = note["created_at"].clone();
            note.to_string()
        })
        .collect();
    let path = env.dir.path().join("notes.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    env.brain().args(["import", path.to_str().unwrap()]).assert().success();
}

#[test]
fn the_turn_next_to_a_match_is_found_below_it_and_says_so() {
    let (env, asked, answered) = chat_env();
    let page = env.json(&["search", "What is the backstory of the promotion?"]);
    let results = page["results"].as_array().unwrap();
    let score = |id: &str| {
        let hit = results.iter().find(|hit| hit["id"] == id).unwrap_or_else(|| panic!("{id} not found: {page}"));
        (hit["score"].as_f64().unwrap(), hit["why"].as_str().unwrap().to_string())
    };
    let (asked_score, _) = score(asked);
    let (answered_score, why) = score(answered);
    assert_eq!(why, format!("next to a match ({asked})"), "{page}");
    // Lent part of the match's score, never more than it.
    assert!(answered_score > 0.0 && answered_score < asked_score, "{page}");
    // Neither the turn of the next morning (two places away) nor another session's turn nor
    // an item of a channel source is lent anything.
    for hit in results {
        let lent = hit["why"].as_str().unwrap().contains("next to a match");
        assert_eq!(lent, hit["id"] == answered, "{page}");
    }
}

#[test]
fn session_start_recalls_the_turn_next_to_a_match_within_its_budget() {
    let (env, _, answered) = chat_env();
    for max_chars in ["9500", "400"] {
        let start =
            env.json(&["session-start", "--task", "What is the backstory of the promotion?", "--max-chars", max_chars]);
        assert!(start["budget"]["used"].as_u64().unwrap() <= start["budget"]["cap"].as_u64().unwrap(), "{start}");
        let recalled: Vec<&str> =
            start["context_recall"].as_array().unwrap().iter().map(|hit| hit["id"].as_str().unwrap()).collect();
        if max_chars == "9500" {
            assert!(recalled.contains(&answered), "{start}");
        }
        let text = env
            .brain()
            .args([
                "session-start",
                "--format",
                "text",
                "--task",
                "backstory of the promotion",
                "--max-chars",
                max_chars,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(text.chars().count() <= max_chars.parse().unwrap(), "{text}");
    }
}

#[test]
fn a_turn_said_by_the_person_a_question_names_comes_first_and_says_so() {
    let env = Env::new();
    // A two-person chat: each name is in about half the turns (a weak word), and Emi's turn
    // has more of the subject's words than Kate's.
    let mut turns = vec![
        ("Emi", "I love sports too, Kate, and I watch sports every night on TV".to_string()),
        ("Kate", "Sports are my thing, basketball with friends on Sundays".to_string()),
    ];
    for index in 0..11 {
        turns.push(("Kate", format!("Morning! Coffee number {index} and a long walk to the office")));
        turns.push(("Emi", format!("Kate, the bakery on the corner had fresh bread {index} times this week")));
    }
    import_notes(
        &env,
        turns.iter().enumerate().map(|(index, (speaker, text))| {
            serde_json::json!({
                "id": format!("mem_01JDNC{index:020}"), "source": "transcript:chat-3",
                "title": text.split_once([',', '!', '.']).map_or(text.as_str(), |(first, _)| first),
                "content": format!("{speaker}: {text}"), "created_at": format!("2026-11-20T10:{index:02}:00Z"),
            })
        }),
    );
    let page = env.json(&["--now", "2026-11-28T10:00:00Z", "search", "What sports does Kate play?"]);
    let results = page["results"].as_array().unwrap();
    assert_eq!(results[0]["title"], "Sports are my thing", "{page}");
    assert!(results[0]["why"].as_str().unwrap().contains("said by someone the query names"), "{page}");
    // Emi's turn is found too, below, and not said to be Kate's.
    let emi = results.iter().find(|hit| hit["title"] == "I love sports too").unwrap_or_else(|| panic!("{page}"));
    assert!(!emi["why"].as_str().unwrap().contains("said by"), "{page}");
    // Kate's turns that hold nothing of the subject are not lifted: below both, if listed.
    for hit in &results[2..] {
        assert!(!hit["why"].as_str().unwrap().contains("said by"), "{page}");
    }
}
