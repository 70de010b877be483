//! What only the SQLite backend does: files that are not databases, missing files, and the
//! covering index of the meta listing.

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

#[test]
fn the_meta_listing_reads_only_its_covering_index() {
    // The query of `ReadTx::list_metas`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    drop(Store::open_sqlite(&path, true).unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
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
