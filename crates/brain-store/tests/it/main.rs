//! The storage contract: what every backend must do. Runs on the backend that
//! `BRAIN_TEST_DATABASE_URL` names (unset: SQLite in a temp dir; `postgres://…`: a fresh
//! schema of that database per test), so one suite covers both (`.ci/run` runs it twice).
//! Backend-specific checks live in `sqlite.rs` and `postgres.rs`.

use brain_core::assemble::ItemMeta;
use brain_core::item::{NewItemContext, new_id};
use brain_core::search::{CandidateRequest, Candidates, Query};
use brain_core::{Item, ItemDraft, Kind, Scope, Status};
use brain_store::{ItemFilter, Store, StoreError};

mod backend;
mod postgres;
mod sqlite;
mod sync;
mod vault;

use backend::fixture;

const NOW: &str = "2026-11-21T10:00:00Z";

/// The store's candidates for free text (the words core sends), at most `limit`.
fn candidates(store: &Store, text: &str, filter: &ItemFilter, limit: usize) -> Candidates {
    let words = Query::parse(text).words();
    store.candidates(&CandidateRequest { words: &words, limit }, filter).unwrap()
}

fn candidate_ids(store: &Store, text: &str, filter: &ItemFilter) -> Vec<String> {
    candidates(store, text, filter, 100).items.into_iter().map(|item| item.id).collect()
}

fn item(n: u64, title: &str, content: &str) -> Item {
    let ulid = ulid::Ulid::from_parts(1_700_000_000_000 + n, u128::from(n));
    let draft = ItemDraft { title: Some(title.into()), content: Some(content.into()), ..ItemDraft::default() };
    draft
        .into_new_item(NewItemContext {
            id: new_id(ulid),
            now: NOW.parse().unwrap(),
            default_scope: Scope::Project("demo".into()),
            default_source: "cli".into(),
            default_status: Status::Approved,
        })
        .unwrap()
}

#[test]
fn an_inserted_item_reads_back_identical() {
    let f = fixture();
    let mut original = item(1, "Use WAL mode", "SQLite runs in WAL so hooks read while we write");
    original.tags = vec!["sqlite".into(), "storage".into()];
    original.files = vec!["crates/brain-store/src/sqlite.rs".into()];
    original.rationale = Some("readers never block".into());
    original.valid_until = Some("2027-01-01T00:00:00Z".parse().unwrap());
    f.store.insert(&original).unwrap();
    assert_eq!(f.store.get(&original.id).unwrap(), Some(original));
}

#[test]
fn inserting_an_existing_id_is_refused() {
    let f = fixture();
    let first = item(1, "a", "b");
    f.store.insert(&first).unwrap();
    let err = f.store.insert(&first).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
}

#[test]
fn a_stale_version_is_a_conflict_and_changes_nothing() {
    let f = fixture();
    let original = item(1, "title", "content");
    f.store.insert(&original).unwrap();
    // Two writers both read version 1.
    let other = f.open_again();
    let mut mine = f.store.get(&original.id).unwrap().unwrap();
    let mut theirs = other.get(&original.id).unwrap().unwrap();
    theirs.title = "theirs".into();
    let written = other.write(|tx| tx.update(&theirs, Some(1))).unwrap();
    assert_eq!(written.version, 2);
    mine.title = "mine".into();
    let err = f.store.write(|tx| tx.update(&mine, Some(1))).unwrap_err();
    match err {
        StoreError::Conflict { expected: 1, actual: 2, .. } => {}
        other => panic!("expected a conflict, got {other}"),
    }
    assert_eq!(f.store.get(&original.id).unwrap().unwrap().title, "theirs");
}

/// An item at the largest version sync carries (only an import brings one there) is not
/// changed or erased again: the next version, or its tombstone's, would stop every sync
/// client (a hostile review pushed one there and wedged them all).
#[test]
fn an_item_at_the_largest_version_is_neither_changed_nor_erased() {
    let f = fixture();
    let mut top = item(1, "top", "x");
    top.version = brain_core::item::MAX_VERSION;
    f.store.insert(&top).unwrap();
    top.title = "changed".into();
    let err = f.store.write(|tx| tx.update(&top, None)).unwrap_err();
    assert!(matches!(err, StoreError::Unstorable { .. }) && err.to_string().contains("largest"), "{err}");
    let err = f.store.write(|tx| tx.delete(&top.id)).unwrap_err();
    assert!(matches!(err, StoreError::Unstorable { .. }), "{err}");
    let stored = f.store.get(&top.id).unwrap().unwrap();
    assert_eq!((stored.title.as_str(), stored.version), ("top", brain_core::item::MAX_VERSION));
    // One below it: the last change there is.
    let mut below = item(2, "below", "x");
    below.version = brain_core::item::MAX_VERSION - 1;
    f.store.insert(&below).unwrap();
    assert_eq!(f.store.write(|tx| tx.update(&below, None)).unwrap().version, brain_core::item::MAX_VERSION);
    assert!(f.store.write(|tx| tx.update(&below, None)).is_err());
}

/// A hostile review: an item synced with `access_count` 2^32 − 1, then accessed once, broke
/// every read of its scope on PostgreSQL (500s on every replica, every sync client stopped)
/// and wrapped to 0 on SQLite. The count stays at its largest, and reads go on.
#[test]
fn a_use_count_at_its_largest_stays_there_and_every_read_goes_on() {
    let f = fixture();
    let mut used = item(1, "used", "x");
    used.access_count = u32::MAX;
    used.review_count = u32::MAX;
    f.store.insert(&used).unwrap();
    let access = brain_store::Access { id: used.id.clone(), strength: None };
    for at in ["2026-11-22T00:00:00Z", "2026-11-22T00:00:01Z"] {
        f.store.record_access(std::slice::from_ref(&access), at.parse().unwrap(), None).unwrap();
    }
    let read = f.store.get(&used.id).unwrap().unwrap();
    assert_eq!((read.access_count, read.review_count), (u32::MAX, u32::MAX));
    assert_eq!(f.store.list(&ItemFilter::default()).unwrap().len(), 1);
}

#[test]
fn a_failed_batch_leaves_the_store_unchanged() {
    let f = fixture();
    f.store.insert(&item(5, "existing", "x")).unwrap();
    let batch = vec![item(1, "one", "x"), item(2, "two", "x"), item(5, "duplicate", "x")];
    let err = f.store.insert_all(&batch, &mut |_| {}).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }));
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 1);
}

#[test]
fn search_ranks_title_matches_first_and_respects_filters() {
    let f = fixture();
    let mut in_title = item(1, "Retry logic for webhooks", "backoff with jitter");
    in_title.kind = Kind::Decision;
    let in_content = item(2, "Webhook handler", "we added retry logic after outages");
    let unrelated = item(3, "Login flow", "OAuth device code");
    let mut draft = item(4, "Retry budget draft", "retry retry retry");
    draft.status = Status::Draft;
    for it in [&in_title, &in_content, &unrelated, &draft] {
        f.store.insert(it).unwrap();
    }
    let approved = ItemFilter { statuses: vec![Status::Approved], ..ItemFilter::default() };
    let found = candidates(&f.store, "retry logic", &approved, 100);
    let mut ids: Vec<&str> = found.items.iter().map(|item| item.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec![in_title.id.as_str(), in_content.id.as_str()]);
    // Statistics cover the whole store, whatever the filter: 4 items, "retry" in 3, "logic" in 2.
    assert!(found.statistics.documents >= 4);
    assert_eq!(found.statistics.document_frequency, vec![3, 2]);
    let decisions = ItemFilter { kinds: vec![Kind::Decision], ..ItemFilter::default() };
    assert_eq!(candidate_ids(&f.store, "retry", &decisions), [in_title.id.clone()]);
    // Stemming is the store's: "retries" finds "retry".
    assert_eq!(candidates(&f.store, "retries", &approved, 100).statistics.document_frequency, vec![3]);
}

#[test]
fn search_treats_query_syntax_as_plain_words() {
    let f = fixture();
    f.store.insert(&item(1, "NEAR AND OR", "quotes \" and stars *")).unwrap();
    let raw: Vec<String> =
        ["\"unbalanced", "NEAR(", "a OR", "*", "title:x", "^col", "near"].iter().map(|w| w.to_string()).collect();
    for word in &raw {
        let request = CandidateRequest { words: std::slice::from_ref(word), limit: 10 };
        if let Err(err) = f.store.candidates(&request, &ItemFilter::default()) {
            panic!("{word:?} broke the search: {err}");
        }
    }
    assert_eq!(candidate_ids(&f.store, "near", &ItemFilter::default()).len(), 1);
    assert!(candidates(&f.store, "  ?! ", &ItemFilter::default(), 10).items.is_empty());
}

#[test]
fn search_index_follows_updates_and_deletes() {
    let f = fixture();
    let mut it = item(1, "alpha", "first words");
    f.store.insert(&it).unwrap();
    it.content = "second words".into();
    f.store.write(|tx| tx.update(&it, None)).unwrap();
    assert!(candidate_ids(&f.store, "first", &ItemFilter::default()).is_empty());
    assert_eq!(candidate_ids(&f.store, "second", &ItemFilter::default()).len(), 1);
    f.store.write(|tx| tx.delete(&it.id)).unwrap();
    assert!(candidate_ids(&f.store, "second", &ItemFilter::default()).is_empty());
    assert!(f.store.check().unwrap().problems.is_empty());
}

#[test]
fn list_filters_by_scope_kind_status_tag_and_limits() {
    let f = fixture();
    let mut a = item(1, "a", "x");
    a.tags = vec!["auth".into()];
    let mut b = item(2, "b", "x");
    b.scope = Scope::Global;
    b.kind = Kind::Bug;
    let mut c = item(3, "c", "x");
    c.status = Status::Draft;
    c.tags = vec!["auth".into(), "db".into()];
    for it in [&a, &b, &c] {
        f.store.insert(it).unwrap();
    }
    let count = |filter: ItemFilter| f.store.list(&filter).unwrap().len();
    assert_eq!(count(ItemFilter::default()), 3);
    assert_eq!(count(ItemFilter { scopes: Some(vec![Scope::Global]), ..ItemFilter::default() }), 1);
    assert_eq!(count(ItemFilter { scopes: Some(vec![]), ..ItemFilter::default() }), 0);
    assert_eq!(count(ItemFilter { kinds: vec![Kind::Bug], ..ItemFilter::default() }), 1);
    assert_eq!(count(ItemFilter { statuses: vec![Status::Draft], ..ItemFilter::default() }), 1);
    assert_eq!(count(ItemFilter { tags: vec!["auth".into()], ..ItemFilter::default() }), 2);
    assert_eq!(count(ItemFilter { tags: vec!["auth".into(), "db".into()], ..ItemFilter::default() }), 1);
    assert_eq!(count(ItemFilter { limit: Some(2), ..ItemFilter::default() }), 2);
    assert_eq!(count(ItemFilter { limit: Some(2), offset: 2, ..ItemFilter::default() }), 1);
}

#[test]
fn the_schema_key_filter_selects_the_items_at_or_below_a_key_of_the_tree() {
    // The dashboard's tree counts the items at or below each key; clicking a node lists them.
    let f = fixture();
    let keyed = |n: u64, key: &str| {
        let mut it = item(n, &format!("item {n}"), "x");
        it.schema_key = key.into();
        it
    };
    let items = [
        keyed(1, "root/decisions"),
        keyed(2, "root/decisions/db"),
        keyed(3, "root/decisions/db/wal"),
        keyed(4, "root/decisionsx"),
        keyed(5, "root/decision"),
        keyed(6, "root/lessons"),
    ];
    for it in &items {
        f.store.insert(it).unwrap();
    }
    let under = |key: &str| {
        let filter = ItemFilter { schema_key: Some(key.into()), ..ItemFilter::default() };
        let mut titles: Vec<String> = f.store.list(&filter).unwrap().into_iter().map(|it| it.title).collect();
        titles.sort();
        assert_eq!(f.store.count(&filter).unwrap(), titles.len() as u64, "count under {key}");
        titles
    };
    assert_eq!(under("root/decisions"), ["item 1", "item 2", "item 3"]);
    assert_eq!(under("root/decisions/db"), ["item 2", "item 3"]);
    assert_eq!(under("root/lessons"), ["item 6"]);
    assert_eq!(under("root").len(), 6);
    assert!(under("root/dec").is_empty(), "a key matches whole segments, not a prefix of one");
    let paged = ItemFilter {
        schema_key: Some("root/decisions".into()),
        scopes: Some(vec![Scope::Global, Scope::Project("demo".into())]),
        limit: Some(2),
        ..ItemFilter::default()
    };
    assert_eq!(f.store.list(&paged).unwrap().len(), 2);
}

#[test]
fn every_write_advances_the_generation_but_reads_and_access_do_not() {
    let f = fixture();
    let start = f.store.generation().unwrap();
    let it = item(1, "a", "b");
    f.store.insert(&it).unwrap();
    let after_insert = f.store.generation().unwrap();
    assert_eq!(after_insert, start + 1);
    f.store.get(&it.id).unwrap();
    let access = brain_store::Access { id: it.id.clone(), strength: Some(0.5) };
    f.store.record_access(&[access], "2026-11-22T00:00:00Z".parse().unwrap(), None).unwrap();
    assert_eq!(f.store.generation().unwrap(), after_insert);
    let read = f.store.get(&it.id).unwrap().unwrap();
    assert_eq!((read.access_count, read.version, read.strength), (1, 1, 0.5));
    // Another process sees the generation move too.
    let other = f.open_again();
    other.write(|tx| tx.update(&read, None)).unwrap();
    assert_eq!(f.store.generation().unwrap(), after_insert + 1);
}

#[test]
fn the_read_stamp_moves_with_every_write_and_every_fold_of_access_bookkeeping_through_any_handle() {
    let f = fixture();
    let other = f.open_again();
    let start = f.store.read_stamp().unwrap();
    assert_eq!(start.generation, f.store.generation().unwrap());
    assert_eq!(other.read_stamp().unwrap(), start, "two handles read one stamp");
    // Reads move nothing.
    let it = item(1, "a", "b");
    assert_eq!(f.store.read_stamp().unwrap(), start);
    // A write through another handle moves the generation, seen by this one.
    other.insert(&it).unwrap();
    let written = f.store.read_stamp().unwrap();
    assert_eq!((written.generation, written.accesses), (start.generation + 1, start.accesses));
    // Access bookkeeping through another handle moves the access epoch only.
    let access = brain_store::Access { id: it.id.clone(), strength: Some(0.5) };
    assert!(other.record_access(std::slice::from_ref(&access), "2026-11-22T00:00:00Z".parse().unwrap(), None).unwrap());
    let accessed = f.store.read_stamp().unwrap();
    assert_eq!(accessed.generation, written.generation);
    assert!(accessed.accesses > written.accesses, "{accessed:?} after {written:?}");
    assert!(accessed.is_at_least(&written) && !written.is_at_least(&accessed));
    // Again: each fold is a new stamp.
    assert!(f.store.record_access(&[access], "2026-11-22T00:00:01Z".parse().unwrap(), None).unwrap());
    assert!(other.read_stamp().unwrap().accesses > accessed.accesses);
}

#[test]
fn concurrent_writers_in_threads_lose_nothing() {
    let f = fixture();
    let handles: Vec<_> = (0..4)
        .map(|thread| {
            let location = f.location.clone();
            std::thread::spawn(move || {
                let store = backend::open(&location);
                for n in 0..25 {
                    store.insert(&item(thread * 100 + n, "t", "c")).unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 100);
}

#[test]
fn candidates_with_every_query_word_come_before_candidates_with_some() {
    let f = fixture();
    let one_word_many_times = item(1, "cache cache cache", "cache cache cache cache cache cache");
    let both_words = item(2, "notes", "the cache is invalidated by the tick");
    let neither = item(3, "unrelated", "nothing here");
    for it in [&one_word_many_times, &both_words, &neither] {
        f.store.insert(it).unwrap();
    }
    let ids = candidate_ids(&f.store, "cache tick", &ItemFilter::default());
    assert_eq!(ids, vec![both_words.id.clone(), one_word_many_times.id.clone()]);
    // The limit bounds the candidates, the best first.
    let first = candidates(&f.store, "cache tick", &ItemFilter::default(), 1);
    assert_eq!(first.items.len(), 1);
    assert_eq!(first.items[0].id, both_words.id);
}

#[test]
fn a_rare_query_word_finds_its_items_however_common_the_other_words_are() {
    let f = fixture();
    // Three old items with the rare word, then 2,000 newer ones with the common word only:
    // only the newest matches of a common word are scored, never at the rare word's cost.
    let mut items: Vec<Item> = (0..3).map(|n| item(n, "Rotation", &format!("key rotation runbook {n}"))).collect();
    items.extend((10..2010).map(|n| item(n, "Vault notes", &format!("vault unsealed on node {n}"))));
    f.store.insert_all(&items, &mut |_| {}).unwrap();
    let found = candidates(&f.store, "vault rotation", &ItemFilter::default(), 50);
    assert_eq!(found.items.len(), 50);
    for rare in &items[..3] {
        assert!(found.items.iter().any(|item| item.id == rare.id), "{} missing", rare.title);
    }
}

#[test]
fn filters_that_reject_most_candidates_still_return_the_true_top() {
    let f = fixture();
    // 300 approved matches rank above the only draft; the draft filter must still find it.
    let mut items: Vec<Item> = (0..300).map(|n| item(n, "retry retry", "retry retry retry")).collect();
    let mut draft = item(1000, "about retry", "long content that mentions retry once among many other words");
    draft.status = Status::Draft;
    items.push(draft.clone());
    f.store.insert_all(&items, &mut |_| {}).unwrap();
    let drafts = ItemFilter { statuses: vec![Status::Draft], ..ItemFilter::default() };
    let found = candidates(&f.store, "retry", &drafts, 5);
    assert_eq!(found.items.len(), 1);
    assert_eq!(found.items[0].id, draft.id);
}

#[test]
fn neighbours_are_the_items_written_either_side_of_an_anchor_in_its_source_within_the_filter() {
    let f = fixture();
    let minute = |n: i64| jiff::Timestamp::from_second(1_700_000_000 + n * 60).unwrap();
    let in_source = |n: u64, source: &str, at: i64| {
        let mut it = item(n, &format!("turn {n}"), "text");
        it.source = source.into();
        it.created_at = minute(at);
        it
    };
    let turns: Vec<Item> = (0..6).map(|n| in_source(10 + n, "transcript:s1", n as i64)).collect();
    // Written in the same second as turn 2, with a larger id: after it in the source's order.
    let tie = in_source(20, "transcript:s1", 2);
    let other_session = in_source(21, "transcript:s2", 2);
    let mut other_scope = in_source(22, "transcript:s1", 1);
    other_scope.scope = Scope::Project("elsewhere".into());
    for it in turns.iter().chain([&tie, &other_session, &other_scope]) {
        f.store.insert(it).unwrap();
    }
    let filter = ItemFilter { scopes: Some(vec![Scope::Project("demo".into())]), ..ItemFilter::default() };
    let ids = |anchors: &[&Item], reach: usize| -> Vec<String> {
        let anchors: Vec<brain_core::search::Anchor<'_>> =
            anchors.iter().map(|it| brain_core::search::Anchor::of(it)).collect();
        let mut ids: Vec<String> =
            f.store.neighbours(&anchors, reach, &filter).unwrap().into_iter().map(|it| it.id).collect();
        ids.sort();
        ids
    };
    let expected = |items: &[&Item]| -> Vec<String> {
        let mut ids: Vec<String> = items.iter().map(|it| it.id.clone()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&[&turns[2]], 2), expected(&[&turns[0], &turns[1], &tie, &turns[3]]));
    // Two anchors: each item once, and an anchor as the other's neighbour.
    assert_eq!(ids(&[&turns[0], &turns[1]], 1), expected(&[&turns[0], &turns[1], &turns[2]]));
    assert_eq!(ids(&[&turns[5]], 1), expected(&[&turns[4]]));
    assert!(ids(&[&turns[2]], 0).is_empty());
    assert!(ids(&[], 2).is_empty());
}

#[test]
fn a_page_over_several_scopes_is_the_newest_items_of_all_of_them() {
    let f = fixture();
    let mut items = Vec::new();
    for n in 0..10u64 {
        let mut it = item(n, &format!("item {n}"), "x");
        it.scope = if n % 3 == 0 { Scope::Global } else { Scope::Project("demo".into()) };
        it.updated_at = jiff::Timestamp::from_second(1_800_000_000 + (n as i64) * 60).unwrap();
        items.push(it);
    }
    let mut other = item(99, "other project", "x");
    other.scope = Scope::Project("other".into());
    other.updated_at = jiff::Timestamp::from_second(1_900_000_000).unwrap();
    items.push(other);
    f.store.insert_all(&items, &mut |_| {}).unwrap();
    let scopes = Some(vec![Scope::Global, Scope::Project("demo".into())]);
    let page = |offset, limit| -> Vec<String> {
        let filter = ItemFilter { scopes: scopes.clone(), limit: Some(limit), offset, ..ItemFilter::default() };
        f.store.list(&filter).unwrap().into_iter().map(|i| i.title).collect()
    };
    assert_eq!(page(0, 3), vec!["item 9", "item 8", "item 7"]);
    assert_eq!(page(3, 4), vec!["item 6", "item 5", "item 4", "item 3"]);
    assert_eq!(page(8, 5), vec!["item 1", "item 0"]);
}

#[test]
fn metas_list_every_item_of_the_scopes_as_the_full_item_would_and_full_items_come_by_id() {
    let f = fixture();
    let mut items = Vec::new();
    for n in 0..40 {
        let mut next = item(n, &format!("item {n}"), "some content");
        next.kind = [Kind::Bug, Kind::Todo, Kind::Decision, Kind::Signal][n as usize % 4];
        next.tags = match n % 5 {
            0 => vec!["fixed".into()],
            1 => vec!["done".into(), "perf".into()],
            _ => vec!["perf".into()],
        };
        next.severity = (next.kind == Kind::Signal).then_some(brain_core::Severity::Resolved);
        next.dedup_hint = (n % 3 == 0).then(|| format!("hint-{}", n % 6));
        next.valid_until = (n % 4 == 1).then(|| "2026-01-01T00:00:00Z".parse().unwrap());
        next.confidence = 0.1 + n as f32 / 50.0;
        next.status = if n % 6 == 5 { Status::Draft } else { Status::Approved };
        next.scope = match n % 3 {
            0 => Scope::Global,
            1 => Scope::Project("demo".into()),
            _ => Scope::Project("other".into()),
        };
        items.push(next);
    }
    f.store.insert_all(&items, &mut |_| {}).unwrap();
    let scopes = [Scope::Global, Scope::Project("demo".into())];
    let (mut metas, fetched) = f
        .store
        .read(|read| {
            let metas = read.list_metas(&scopes)?;
            let ids: Vec<&str> = metas.iter().map(|meta| meta.id.as_str()).collect();
            Ok((metas.clone(), read.get_many(&ids)?))
        })
        .unwrap();
    let mut expected: Vec<ItemMeta> =
        items.iter().filter(|item| scopes.contains(&item.scope)).map(ItemMeta::of).collect();
    metas.sort_by(|a, b| a.id.cmp(&b.id));
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(metas, expected);
    assert!(metas.iter().any(|meta| meta.fixed_bug) && metas.iter().any(|meta| meta.done_todo));
    let mut fetched = fetched;
    fetched.sort_by(|a, b| a.id.cmp(&b.id));
    let mut in_scope: Vec<Item> = items.into_iter().filter(|item| scopes.contains(&item.scope)).collect();
    in_scope.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(fetched, in_scope);
    assert!(f.store.read(|read| read.list_metas(&[])).unwrap().is_empty());
}

#[test]
fn concurrent_read_modify_writes_of_one_item_lose_no_update() {
    let f = fixture();
    let mut counter = item(1, "counter", "0");
    counter.importance = 1;
    f.store.insert(&counter).unwrap();
    let id = counter.id.clone();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let location = f.location.clone();
            let id = id.clone();
            std::thread::spawn(move || {
                let store = backend::open(&location);
                for _ in 0..25 {
                    // Read, change and write back without a version: the transaction itself
                    // must keep two writers from both reading the same value.
                    store
                        .write(|tx| {
                            let mut current = tx.require(&id)?;
                            let n: u32 = current.content.parse().unwrap();
                            current.content = (n + 1).to_string();
                            tx.update(&current, None)
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let stored = f.store.get(&id).unwrap().unwrap();
    assert_eq!((stored.content.as_str(), stored.version), ("100", 101));
}

#[test]
fn tokens_are_kept_by_digest_revoked_once_and_move_the_generation() {
    let f = fixture();
    let at = |text: &str| -> brain_core::Timestamp { text.parse().unwrap() };
    let token = brain_store::TokenRecord {
        name: "ci-agent".into(),
        sha256: "ab".repeat(32),
        read: vec!["project/api".into()],
        write: vec![],
        review: vec!["project/api".into(), "team/*".into()],
        created_at: at(NOW),
        revoked_at: None,
    };
    let start = f.store.generation().unwrap();
    f.store.write(|tx| tx.insert_token(&token)).unwrap();
    assert_eq!(f.store.generation().unwrap(), start + 1);
    // Neither the name nor the secret may be used twice.
    let same_name = brain_store::TokenRecord { sha256: "cd".repeat(32), ..token.clone() };
    let same_secret = brain_store::TokenRecord { name: "other".into(), ..token.clone() };
    for taken in [same_name, same_secret] {
        let err = f.store.write(|tx| tx.insert_token(&taken)).unwrap_err();
        assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    }
    assert_eq!(f.store.tokens().unwrap(), std::slice::from_ref(&token));
    assert!(f.store.write(|tx| tx.revoke_token("ci-agent", at("2026-11-22T00:00:00Z"))).unwrap());
    assert!(!f.store.write(|tx| tx.revoke_token("ci-agent", at("2026-11-23T00:00:00Z"))).unwrap());
    assert!(!f.store.write(|tx| tx.revoke_token("nobody", at("2026-11-23T00:00:00Z"))).unwrap());
    let listed = f.store.tokens().unwrap();
    assert_eq!(listed[0].revoked_at, Some(at("2026-11-22T00:00:00Z")));
    assert_eq!(f.open_again().tokens().unwrap(), listed);
}

#[test]
fn revoked_tokens_stay_until_forgotten_and_active_ones_are_never_forgotten() {
    let f = fixture();
    let at = |text: &str| -> brain_core::Timestamp { text.parse().unwrap() };
    let token = |name: &str, digit: &str| brain_store::TokenRecord {
        name: name.into(),
        sha256: digit.repeat(64),
        read: vec!["global".into()],
        write: vec![],
        review: vec![],
        created_at: at(NOW),
        revoked_at: None,
    };
    assert_eq!(f.store.write(|tx| tx.forget_revoked_tokens()).unwrap(), 0, "nothing to forget");
    f.store.write(|tx| tx.insert_token(&token("old", "a"))).unwrap();
    f.store.write(|tx| tx.insert_token(&token("live", "b"))).unwrap();
    f.store.write(|tx| tx.revoke_token("old", at("2026-11-22T00:00:00Z"))).unwrap();
    let start = f.store.generation().unwrap();
    assert_eq!(f.store.write(|tx| tx.forget_revoked_tokens()).unwrap(), 1);
    assert_eq!(f.store.generation().unwrap(), start + 1, "every server refreshes its tokens");
    assert_eq!(f.open_again().tokens().unwrap(), vec![token("live", "b")]);
    // The forgotten name is free again; forgetting twice changes nothing.
    f.store.write(|tx| tx.insert_token(&token("old", "c"))).unwrap();
    let start = f.store.generation().unwrap();
    assert_eq!(f.store.write(|tx| tx.forget_revoked_tokens()).unwrap(), 0);
    assert_eq!(f.store.generation().unwrap(), start);
    assert_eq!(f.store.tokens().unwrap().len(), 2);
}

#[test]
fn a_job_lock_has_one_holder_at_a_time_and_is_free_again_once_dropped() {
    let f = fixture();
    let other = f.open_again();
    let held = f.store.try_lock_job("tick").unwrap().expect("a free lock");
    assert!(other.try_lock_job("tick").unwrap().is_none(), "two holders");
    let different = other.try_lock_job("publish").unwrap();
    assert!(different.is_some(), "locks of other purposes are independent");
    drop(held);
    assert!(other.try_lock_job("tick").unwrap().is_some());
}

#[test]
fn a_claim_is_granted_once_and_can_be_given_back() {
    let f = fixture();
    let other = f.open_again();
    let now: brain_core::Timestamp = NOW.parse().unwrap();
    let start = f.store.generation().unwrap();
    assert!(f.store.write(|tx| tx.claim("signal", "sig-1", now)).unwrap());
    assert!(!other.write(|tx| tx.claim("signal", "sig-1", now)).unwrap());
    assert!(other.write(|tx| tx.claim("signal", "sig-2", now)).unwrap());
    assert_eq!(f.store.generation().unwrap(), start, "claims are bookkeeping");
    assert!(f.store.write(|tx| tx.release_claim("signal", "sig-1")).unwrap());
    assert!(other.write(|tx| tx.claim("signal", "sig-1", now)).unwrap());
}

#[test]
fn vectors_are_derived_data_found_by_similarity_within_a_filter_and_dropped_when_stale() {
    let f = fixture();
    let mut car = item(1, "Parking", "the car goes in bay 4");
    let lunch = item(2, "Lunch", "pasta");
    let mut draft = item(3, "Draft car note", "car");
    draft.status = Status::Draft;
    for it in [&car, &lunch, &draft] {
        f.store.insert(it).unwrap();
    }
    assert_eq!(f.store.count_vector_backlog("m1").unwrap(), 3);
    let backlog = f.store.vector_backlog("m1", 2).unwrap();
    assert_eq!(backlog.iter().map(|job| job.id.as_str()).collect::<Vec<_>>(), [car.id.as_str(), lunch.id.as_str()]);
    assert_eq!(backlog[0].text, "Parking\nthe car goes in bay 4");
    let generation = f.store.generation().unwrap();
    let vectors =
        vec![(car.id.clone(), vec![1.0, 0.0]), (lunch.id.clone(), vec![0.0, 1.0]), (draft.id.clone(), vec![0.9, 0.1])];
    f.store.put_vectors("m1", &vectors).unwrap();
    assert_eq!(f.store.generation().unwrap(), generation, "vectors are not an edit");
    assert_eq!(f.store.count_vector_backlog("m1").unwrap(), 0);
    assert_eq!(f.store.count_vector_backlog("m2").unwrap(), 3, "another model needs its own vectors");
    let approved = ItemFilter { statuses: vec![Status::Approved], ..ItemFilter::default() };
    let near = f.store.nearest("m1", &[1.0, 0.0], &approved, 5).unwrap();
    let ids: Vec<&str> = near.iter().map(|(item, _)| item.id.as_str()).collect();
    assert_eq!(ids, [car.id.as_str(), lunch.id.as_str()]);
    assert!((near[0].1 - 1.0).abs() < 1e-6);
    assert!(f.store.nearest("m2", &[1.0, 0.0], &approved, 5).unwrap().is_empty());
    assert!(f.store.nearest("m1", &[1.0, 0.0, 0.0], &approved, 5).unwrap().is_empty(), "other lengths are skipped");
    // Editing the text drops its vector; other edits keep it; deleting drops it.
    car.content = "the car goes in bay 5".into();
    f.store.write(|tx| tx.update(&car, None)).unwrap();
    assert_eq!(f.store.count_vector_backlog("m1").unwrap(), 1);
    let mut pinned = lunch.clone();
    pinned.pinned = true;
    f.store.write(|tx| tx.update(&pinned, None)).unwrap();
    assert_eq!(f.store.count_vector_backlog("m1").unwrap(), 1);
    f.store.write(|tx| tx.delete(&lunch.id)).unwrap();
    assert_eq!(f.store.nearest("m1", &[0.0, 1.0], &ItemFilter::default(), 5).unwrap().len(), 1);
    // A model's vectors hold components near zero whose products fall below the smallest f32
    // (1e-30 × 1e-30): they count as nothing, and the search goes on (PostgreSQL refused it).
    let tiny = item(4, "Tiny", "tiny");
    f.store.insert(&tiny).unwrap();
    f.store.put_vectors("m1", &[(tiny.id.clone(), vec![0.6, 1e-30])]).unwrap();
    let near = f.store.nearest("m1", &[1.0, 1e-30], &approved, 5).unwrap();
    let ids: Vec<&str> = near.iter().map(|(item, _)| item.id.as_str()).collect();
    assert_eq!(ids, [tiny.id.as_str()]);
    assert!((near[0].1 - 0.6).abs() < 1e-6, "{}", near[0].1);
}

#[test]
fn an_item_of_a_session_is_embedded_with_the_one_written_before_it_in_its_source() {
    let f = fixture();
    let at = |minutes: i64| brain_core::Timestamp::from_second(1_700_000_000 + minutes * 60).unwrap();
    let turn = |n: u64, source: &str, minute: i64, text: &str| {
        let mut turn = item(n, text, text);
        turn.source = source.into();
        turn.created_at = at(minute);
        turn
    };
    // Inserted out of written order; another session, a channel and a day's gap between.
    let answer = turn(1, "transcript:chat-1", 1, "It was Shin Godzilla");
    let asked = turn(2, "transcript:chat-1", 0, "Seen any good movies?");
    let other = turn(3, "transcript:chat-2", 0, "The sqlite file is on the drive");
    let channel = turn(4, "cli", 2, "Rollout notes");
    let next_day = turn(5, "transcript:chat-1", 60 * 24, "Morning!");
    for it in [&answer, &asked, &other, &channel, &next_day] {
        f.store.insert(it).unwrap();
    }
    let texts: std::collections::HashMap<String, String> =
        f.store.vector_backlog("m1", 10).unwrap().into_iter().map(|job| (job.id, job.text)).collect();
    assert_eq!(texts[&answer.id], "It was Shin Godzilla\nIt was Shin Godzilla\nSeen any good movies?");
    assert_eq!(texts[&asked.id], "Seen any good movies?\nSeen any good movies?", "the first turn has none before it");
    assert_eq!(texts[&other.id], "The sqlite file is on the drive\nThe sqlite file is on the drive");
    assert_eq!(texts[&channel.id], "Rollout notes\nRollout notes", "a channel's items are unrelated");
    assert_eq!(texts[&next_day.id], "Morning!\nMorning!", "a day later is another conversation");
    // One item's job (a warm server's write) is the backlog's, with a vector or without.
    f.store.put_vectors("m1", &[(answer.id.clone(), vec![1.0, 0.0])]).unwrap();
    for it in [&answer, &asked, &other, &channel, &next_day] {
        let job = f.store.vector_job(&it.id).unwrap().unwrap();
        assert_eq!((job.id.as_str(), job.text.as_str()), (it.id.as_str(), texts[&it.id].as_str()));
    }
    assert!(f.store.vector_job("mem_none").unwrap().is_none());
}

fn use_record(item: &str, session: &str, verdict: &str, at: &str) -> brain_store::UseRecord {
    brain_store::UseRecord {
        item_id: item.into(),
        session: session.into(),
        project: "demo".into(),
        host: "claude-code".into(),
        verdict: verdict.into(),
        signal: (verdict == "used").then(|| "file".to_string()),
        turn: (verdict == "used").then_some(2),
        evidence: if verdict == "used" { "turn 2: Read src/a.rs".into() } else { String::new() },
        task: "signatur webhook".into(),
        tokens: 40,
        decided_at: at.parse().unwrap(),
    }
}

#[test]
fn a_sessions_unused_item_becomes_used_once_a_use_stays_and_each_item_keeps_its_newest_decisions() {
    let f = fixture();
    let generation = f.store.generation().unwrap();
    let write = |record: &brain_store::UseRecord| f.store.write(|tx| tx.record_use(record)).unwrap();
    assert!(!write(&use_record("mem_a", "claude-code:s1", "unused", "2026-11-21T10:00:00Z")));
    assert!(f.store.generation().unwrap() > generation, "decisions change recall: the generation moves");
    // The same session used it after all: now used, and said so once.
    assert!(write(&use_record("mem_a", "claude-code:s1", "used", "2026-11-21T10:05:00Z")));
    assert!(!write(&use_record("mem_a", "claude-code:s1", "used", "2026-11-21T10:06:00Z")));
    // A use is never turned back into "unused" by a later capture of the same session.
    let moved = f.store.generation().unwrap();
    assert!(!write(&use_record("mem_a", "claude-code:s1", "unused", "2026-11-21T10:07:00Z")));
    assert_eq!(f.store.generation().unwrap(), moved, "nothing written, nothing moved");
    let read = f.open_again().uses_of(&["mem_a"]).unwrap();
    assert_eq!(read, vec![use_record("mem_a", "claude-code:s1", "used", "2026-11-21T10:05:00Z")]);

    for n in 0..(brain_store::USES_KEPT_PER_ITEM + 5) {
        write(&use_record(
            "mem_b",
            &format!("claude-code:t{n:03}"),
            "unused",
            &format!("2026-11-{:02}T10:00:00Z", 1 + n % 28),
        ));
    }
    let kept = f.store.uses_of(&["mem_b", "mem_a"]).unwrap();
    assert_eq!(kept.iter().filter(|r| r.item_id == "mem_b").count() as i64, brain_store::USES_KEPT_PER_ITEM);
    assert!(kept.windows(2).all(|pair| pair[0].decided_at >= pair[1].decided_at), "newest first");
    assert_eq!(f.store.recently_used("demo", 10).unwrap(), vec!["mem_a".to_string()]);
    assert!(f.store.recently_used("other", 10).unwrap().is_empty());
    let since = f.store.uses_since(Some("demo"), "2026-11-21T00:00:00Z".parse().unwrap()).unwrap();
    assert!(since.iter().all(|r| r.decided_at >= "2026-11-21T00:00:00Z".parse().unwrap()) && !since.is_empty());
}
