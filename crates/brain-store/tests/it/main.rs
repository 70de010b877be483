//! The storage contract: what every backend must do. Runs on SQLite in a temp dir.

use brain_core::assemble::ItemMeta;
use brain_core::item::{NewItemContext, new_id};
use brain_core::{Item, ItemDraft, Kind, Scope, Status};
use brain_store::{ItemFilter, Store, StoreError};
use std::path::PathBuf;

mod vault;

const NOW: &str = "2026-11-21T10:00:00Z";

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    let store = Store::open_sqlite(&path, true).unwrap();
    Fixture { _dir: dir, path, store }
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
    let other = Store::open_sqlite(&f.path, false).unwrap();
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
    let hits = f.store.search("retry logic", &approved).unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.item.id.as_str()).collect();
    assert_eq!(ids, vec![in_title.id.as_str(), in_content.id.as_str()]);
    assert!(hits[0].score > hits[1].score);
    let decisions = ItemFilter { kinds: vec![Kind::Decision], ..ItemFilter::default() };
    assert_eq!(f.store.search("retry", &decisions).unwrap().len(), 1);
}

#[test]
fn search_treats_query_syntax_as_plain_words() {
    let f = fixture();
    f.store.insert(&item(1, "NEAR AND OR", "quotes \" and stars *")).unwrap();
    for query in ["\"unbalanced", "NEAR(", "a OR", "*", "title:x", "^col"] {
        f.store.search(query, &ItemFilter::default()).unwrap_or_else(|e| match e {
            StoreError::InvalidQuery(_) => vec![],
            other => panic!("{query:?} broke the search: {other}"),
        });
    }
    assert!(matches!(f.store.search("  ?! ", &ItemFilter::default()), Err(StoreError::InvalidQuery(_))));
}

#[test]
fn search_index_follows_updates_and_deletes() {
    let f = fixture();
    let mut it = item(1, "alpha", "first words");
    f.store.insert(&it).unwrap();
    it.content = "second words".into();
    f.store.write(|tx| tx.update(&it, None)).unwrap();
    assert!(f.store.search("first", &ItemFilter::default()).unwrap().is_empty());
    assert_eq!(f.store.search("second", &ItemFilter::default()).unwrap().len(), 1);
    f.store.write(|tx| tx.delete(&it.id)).unwrap();
    assert!(f.store.search("second", &ItemFilter::default()).unwrap().is_empty());
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
    let other = Store::open_sqlite(&f.path, false).unwrap();
    other.write(|tx| tx.update(&read, None)).unwrap();
    assert_eq!(f.store.generation().unwrap(), after_insert + 1);
}

#[test]
fn a_file_that_is_not_a_database_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    std::fs::write(&path, b"this is not sqlite, just some bytes that fill a page".repeat(100)).unwrap();
    let err = Store::open_sqlite(&path, false).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("not a valid brain database"));
}

#[test]
fn a_missing_database_is_not_created_silently() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    assert!(matches!(Store::open_sqlite(&path, false), Err(StoreError::Missing { .. })));
    assert!(!path.exists());
}

#[test]
fn concurrent_writers_in_threads_lose_nothing() {
    let f = fixture();
    let handles: Vec<_> = (0..4)
        .map(|thread| {
            let path = f.path.clone();
            std::thread::spawn(move || {
                let store = Store::open_sqlite(&path, false).unwrap();
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
fn items_with_every_query_word_rank_before_items_with_some() {
    let f = fixture();
    let one_word_many_times = item(1, "cache cache cache", "cache cache cache cache cache cache");
    let both_words = item(2, "notes", "the cache is invalidated by the tick");
    let neither = item(3, "unrelated", "nothing here");
    for it in [&one_word_many_times, &both_words, &neither] {
        f.store.insert(it).unwrap();
    }
    let hits = f.store.search("cache tick", &ItemFilter::default()).unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.item.id.as_str()).collect();
    assert_eq!(ids, vec![both_words.id.as_str(), one_word_many_times.id.as_str()]);
    // Paging walks the same combined ranking.
    let second = f.store.search("cache tick", &ItemFilter { limit: Some(1), offset: 1, ..ItemFilter::default() });
    assert_eq!(second.unwrap()[0].item.id, one_word_many_times.id);
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
    let drafts = ItemFilter { statuses: vec![Status::Draft], limit: Some(5), ..ItemFilter::default() };
    let hits = f.store.search("retry", &drafts).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].item.id, draft.id);
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
fn the_meta_listing_reads_only_its_covering_index() {
    // The query of `ReadTx::list_metas`.
    let f = fixture();
    drop(f.store);
    let connection = rusqlite::Connection::open(&f.path).unwrap();
    let plan: Vec<String> = connection
        .prepare(
            "EXPLAIN QUERY PLAN SELECT id, kind, schema_key, status, importance, confidence, severity, updated_at, \
             valid_until, tokens, dedup_hint, tags FROM items WHERE scope IN (?, ?)",
        )
        .unwrap()
        .query_map(["global", "project/demo"], |row| row.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("COVERING INDEX items_layering")), "{plan:?}");
}
