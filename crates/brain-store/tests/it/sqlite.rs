//! What only the SQLite backend does: files that are not databases, missing files, and the
//! covering index of the meta listing, the kind index of the signal reads.

use brain_store::{Store, StoreError};

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

/// The steps of SQLite's plan for `sql` with `params` on a fresh store's schema.
fn query_plan(sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    drop(Store::open_sqlite(&path, true).unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(params, |row| row.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn the_meta_listing_reads_only_its_covering_index() {
    // The query of `ReadTx::list_metas`.
    let plan = query_plan(
        "SELECT id, kind, schema_key, status, importance, confidence, severity, updated_at, valid_until, tokens, \
         dedup_hint, tags FROM items WHERE scope IN (?, ?)",
        rusqlite::params!["global", "project/demo"],
    );
    assert!(plan.iter().any(|step| step.contains("COVERING INDEX items_layering")), "{plan:?}");
}

#[test]
fn the_signal_items_of_a_scope_are_found_through_the_kind_index() {
    // The per-scope query of `list` for the active signal items every session start reads:
    // a search of the kind index, never a walk of every item of the scope.
    let plan = query_plan(
        "SELECT id FROM items WHERE scope = ? AND kind IN (?) AND status IN (?) AND (source < ? OR source >= ?) \
         ORDER BY updated_at DESC, id DESC LIMIT ?",
        rusqlite::params!["project/demo", "signal", "approved", "vault:", "vault:\u{10FFFF}", 500],
    );
    assert!(
        plan.iter().any(|step| step.contains("INDEX items_by_kind_status (kind=? AND status=? AND scope=?)")),
        "{plan:?}"
    );
}

#[test]
fn a_common_word_s_item_count_is_estimated_closely_and_a_rare_one_counted() {
    // Past 1,000 matches a word's count is extrapolated from its newest 1,000 (SQLite).
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(&dir.path().join("brain.db"), true).unwrap();
    let items: Vec<brain_core::Item> = (0..3000u64)
        .map(|n| {
            let word = if n % 2 == 0 { "even" } else { "odd" };
            let rare = if n % 300 == 0 { " hundredth" } else { "" };
            crate::item(n, &format!("note {n}"), &format!("an {word} note{rare}"))
        })
        .collect();
    store.insert_all(&items, &mut |_| {}).unwrap();
    let found = crate::candidates(&store, "even hundredth", &brain_store::ItemFilter::default(), 10);
    let [even, hundredth] = found.statistics.document_frequency[..] else { panic!("two terms") };
    assert!((1350..=1650).contains(&even), "{even} items for 'even', 1500 in truth");
    assert_eq!(hundredth, 10);
}

/// Unit vectors spread on a half circle: item `n` at angle `n` degrees.
fn at_degrees(degrees: f32) -> Vec<f32> {
    let angle = degrees.to_radians();
    vec![angle.cos(), angle.sin()]
}

#[test]
fn nearest_neighbours_are_exact_through_the_shared_index_and_see_other_handles_writes() {
    // The in-memory index is shared by every handle of a database in the process (a
    // server's pool): a write through one handle is seen by a search through another, and
    // a filter that keeps few of the best candidates still gets its exact nearest items.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    let searcher = Store::open_sqlite(&path, true).unwrap();
    let writer = Store::open_sqlite(&path, false).unwrap();
    let items: Vec<brain_core::Item> = (1..=180)
        .map(|n| {
            let mut it = super::item(n, &format!("note {n}"), "text");
            // Only every 30th item is approved: the best candidates are mostly drafts.
            if n % 30 != 0 {
                it.status = brain_core::Status::Draft;
            }
            it
        })
        .collect();
    writer.insert_all(&items, &mut |_| {}).unwrap();
    let vectors: Vec<(String, Vec<f32>)> =
        items.iter().enumerate().map(|(at, it)| (it.id.clone(), at_degrees(at as f32 + 1.0))).collect();
    writer.put_vectors("m", &vectors[..100]).unwrap();
    let all = brain_store::ItemFilter::default();
    let approved = brain_store::ItemFilter { statuses: vec![brain_core::Status::Approved], ..all.clone() };
    let titles = |near: Vec<(brain_core::Item, f32)>| near.into_iter().map(|(it, _)| it.title).collect::<Vec<_>>();
    // Query at 45.2 degrees: the nearest are notes 45, 46, 44, 47, 43, …
    let query = at_degrees(45.2);
    assert_eq!(titles(searcher.nearest("m", &query, &all, 3).unwrap()), ["note 45", "note 46", "note 44"]);
    // Approved among the first 100: 60, 30, 90 by distance (the filter rejects almost
    // every candidate, so the index ranks the items it lets through alone).
    assert_eq!(titles(searcher.nearest("m", &query, &approved, 3).unwrap()), ["note 60", "note 30", "note 90"]);
    // Vectors written through the other handle: 120, 150 and 180 are now candidates too.
    writer.put_vectors("m", &vectors[100..]).unwrap();
    assert_eq!(
        titles(searcher.nearest("m", &at_degrees(170.0), &approved, 2).unwrap()),
        ["note 180", "note 150"],
        "the index saw the other handle's vectors"
    );
    // Deleting through the other handle drops the item from the answers at once.
    let note_45 = items[44].id.clone();
    writer.write(|tx| tx.delete(&note_45)).unwrap();
    assert_eq!(titles(searcher.nearest("m", &query, &all, 2).unwrap()), ["note 46", "note 44"]);
}

#[test]
fn a_short_lived_handle_leaves_the_vector_index_file_and_a_long_running_one_only_reads_it() {
    // The CLI (memory-mapped reads) writes the index it built for the next process; the
    // server (page cache) rebuilds in memory as vectors change under it and writes nothing.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    let file = dir.path().join("brain.db.vectors");
    let server = Store::open_sqlite_with(&path, true, brain_store::PageReads::Cached).unwrap();
    let items: Vec<brain_core::Item> = (1..=90).map(|n| super::item(n, &format!("note {n}"), "text")).collect();
    server.insert_all(&items, &mut |_| {}).unwrap();
    let vectors: Vec<(String, Vec<f32>)> =
        items.iter().enumerate().map(|(at, it)| (it.id.clone(), at_degrees(at as f32 + 1.0))).collect();
    server.put_vectors("m", &vectors).unwrap();
    let all = brain_store::ItemFilter::default();
    let titles = |near: Vec<(brain_core::Item, f32)>| near.into_iter().map(|(it, _)| it.title).collect::<Vec<_>>();
    assert_eq!(titles(server.nearest("m", &at_degrees(30.2), &all, 2).unwrap()), ["note 30", "note 31"]);
    assert!(!file.exists(), "a long-running handle writes no index file");
    // Another path to the same database (the index in memory is per path, as it is per
    // process): the CLI's handle builds the index and leaves the file.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let cli = Store::open_sqlite(&link.join("brain.db"), false).unwrap();
    assert_eq!(titles(cli.nearest("m", &at_degrees(60.1), &all, 2).unwrap()), ["note 60", "note 61"]);
    assert!(file.exists(), "a short-lived handle leaves the index for the next process");
}
