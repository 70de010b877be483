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
