//! The vault index tables: per-file records, vault-wide values, batch writes, source filter.

use brain_core::Scope;
use brain_store::{ItemFilter, VaultFileRecord};

use crate::{fixture, item};

fn record(relpath: &str, state: &[u8]) -> VaultFileRecord {
    VaultFileRecord {
        relpath: relpath.into(),
        size: 10,
        mtime_ns: 1_700_000_000_000_000_000,
        sha256: "ab".repeat(32),
        state: state.to_vec(),
        diagnostics: String::new(),
    }
}

#[test]
fn vault_file_records_round_trip_touch_and_delete() {
    let f = fixture();
    f.store
        .write(|tx| {
            tx.put_vault_file(&record("b.md", b"\x00\x01binary\xff"))?;
            tx.put_vault_file(&VaultFileRecord { diagnostics: "[1]".into(), ..record("a.md", b"") })
        })
        .unwrap();
    let sorted = |mut records: Vec<VaultFileRecord>| {
        records.sort_by(|a, b| a.relpath.cmp(&b.relpath));
        records
    };
    let full = sorted(f.store.vault_files(true).unwrap());
    assert_eq!(full.iter().map(|r| r.relpath.as_str()).collect::<Vec<_>>(), ["a.md", "b.md"]);
    assert_eq!(full[1], record("b.md", b"\x00\x01binary\xff"));
    let light = sorted(f.store.vault_files(false).unwrap());
    assert_eq!(
        (light[1].state.as_slice(), light[0].diagnostics.as_str()),
        (&b""[..], "[1]"),
        "light rows skip the state"
    );
    f.store.write(|tx| tx.touch_vault_file("b.md", 11, 5)).unwrap();
    let touched = &sorted(f.store.vault_files(true).unwrap())[1];
    assert_eq!((touched.size, touched.mtime_ns, touched.state.as_slice()), (11, 5, &b"\x00\x01binary\xff"[..]));
    assert!(f.store.write(|tx| tx.delete_vault_file("a.md")).unwrap());
    assert!(!f.store.write(|tx| tx.delete_vault_file("a.md")).unwrap());
    assert_eq!(f.store.write(|tx| tx.clear_vault_files()).unwrap(), 1);
    assert!(f.store.vault_files(false).unwrap().is_empty());
}

#[test]
fn vault_values_move_the_generation_only_when_they_change() {
    let f = fixture();
    assert_eq!(f.store.vault_value("feed").unwrap(), None);
    let start = f.store.generation().unwrap();
    assert!(f.store.write(|tx| tx.set_vault_value("feed", "{}")).unwrap());
    assert_eq!(f.store.generation().unwrap(), start + 1);
    assert!(!f.store.write(|tx| tx.set_vault_value("feed", "{}")).unwrap(), "same value: no write");
    assert_eq!(f.store.generation().unwrap(), start + 1);
    f.store.write(|tx| tx.put_vault_file(&record("a.md", b""))).unwrap();
    assert_eq!(f.store.generation().unwrap(), start + 1, "file records are bookkeeping");
    assert_eq!(f.store.vault_value("feed").unwrap().as_deref(), Some("{}"));
}

#[test]
fn batches_insert_new_items_skip_taken_ids_and_stay_searchable() {
    let f = fixture();
    let mut items: Vec<_> = (0..700).map(|n| item(n, &format!("vault lesson {n}"), "retry with backoff")).collect();
    for item in &mut items {
        item.source = format!("vault:notes/{}.md", item.id);
    }
    f.store.insert(&items[5]).unwrap();
    let mut refs: Vec<&brain_core::Item> = items.iter().collect();
    refs.push(&items[650]); // the same id twice in one batch: the second row is skipped
    let skipped = f.store.write(|tx| tx.insert_many(&refs)).unwrap();
    assert_eq!(skipped, [items[5].id.clone(), items[650].id.clone()]);
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 700);
    assert_eq!(f.store.get(&items[650].id).unwrap().as_ref(), Some(&items[650]));
    let found = crate::candidates(&f.store, "lesson 650", &ItemFilter::default(), 1);
    assert_eq!(found.items[0].id, items[650].id);
    let ids: Vec<String> = items[..400].iter().map(|i| i.id.clone()).collect();
    assert_eq!(f.store.write(|tx| tx.delete_many(&ids)).unwrap(), 400);
    assert!(!crate::candidate_ids(&f.store, "lesson 10", &ItemFilter::default()).contains(&items[10].id));
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 300);
}

#[test]
fn the_source_prefix_filter_selects_vault_items() {
    let f = fixture();
    let mut from_vault = item(1, "from the vault", "x");
    from_vault.source = "vault:clusters/a.md".into();
    let other = item(2, "from the cli", "y");
    f.store.insert(&from_vault).unwrap();
    f.store.insert(&other).unwrap();
    let filter = ItemFilter { source_prefix: Some("vault:".into()), ..ItemFilter::default() };
    let listed = f.store.list(&filter).unwrap();
    assert_eq!(listed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), [from_vault.id.as_str()]);
    assert_eq!(f.store.count(&filter).unwrap(), 1);
    assert_eq!(crate::candidate_ids(&f.store, "from", &filter).len(), 1);
    // And the other way round: every item but the vault's (item signals for the one signal
    // model, whose vault half comes from the feed).
    let not_vault = ItemFilter { source_prefix_not: Some("vault:".into()), limit: Some(10), ..ItemFilter::default() };
    let listed = f.store.list(&not_vault).unwrap();
    assert_eq!(listed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), [other.id.as_str()]);
    assert_eq!(f.store.count(&not_vault).unwrap(), 1);
    assert_eq!(crate::candidate_ids(&f.store, "from", &not_vault), [other.id.as_str()]);
    let scoped = ItemFilter { scopes: Some(vec![Scope::Global, Scope::Project("demo".into())]), ..not_vault };
    assert_eq!(f.store.list(&scoped).unwrap().len(), 1, "per-scope branches keep the exclusion");
    assert_eq!(f.store.write(|tx| tx.delete_items_by_source_prefix("vault:")).unwrap(), 1);
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 1);
}

#[test]
fn a_bulk_insert_after_other_writes_of_its_transaction_succeeds() {
    // A tick that re-reads a whole vault (a new index format) deletes and rewrites before it
    // inserts thousands of items, all in one transaction: the bulk insert's settings must
    // not need a transaction that has written nothing yet.
    let f = fixture();
    let items: Vec<_> = (0..2000).map(|n| item(n, &format!("vault lesson {n}"), "retry with backoff")).collect();
    let first: Vec<&brain_core::Item> = items[..1000].iter().collect();
    f.store.write(|tx| tx.insert_many(&first)).unwrap();
    let ids: Vec<String> = items[..1000].iter().map(|i| i.id.clone()).collect();
    let rest: Vec<&brain_core::Item> = items[1000..].iter().collect();
    let (deleted, skipped) = f
        .store
        .write(|tx| {
            tx.put_vault_file(&record("a.md", b"state"))?;
            let deleted = tx.delete_many(&ids)?;
            Ok((deleted, tx.insert_many(&rest)?))
        })
        .unwrap();
    assert_eq!((deleted, skipped.len()), (1000, 0));
    assert_eq!(f.store.count(&ItemFilter::default()).unwrap(), 1000);
    assert_eq!(crate::candidate_ids(&f.store, "lesson 1500", &ItemFilter::default()).first(), Some(&items[1500].id));
}

#[test]
fn the_vault_states_of_an_older_sqlite_database_are_dropped_and_its_rows_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brain.db");
    let location = brain_store::StoreLocation::Sqlite(path.clone());
    drop(brain_store::Store::open(&location, true, brain_store::PageReads::Mapped).unwrap());
    // The database as migration 9 left it: the state column is text (JSON).
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "DROP TABLE vault_files; \
             CREATE TABLE vault_files (relpath TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, \
             sha256 TEXT NOT NULL, diagnostics TEXT NOT NULL DEFAULT '', state TEXT NOT NULL) STRICT; \
             INSERT INTO vault_files (relpath, size, mtime_ns, sha256, diagnostics, state) \
             VALUES ('a.md', 3, 7, 'ab', '[1]', '{\"x\":1}'); \
             INSERT INTO vault_state (key, value) VALUES ('format', '4'); \
             ALTER TABLE api_tokens DROP COLUMN review; \
             PRAGMA user_version = 9;",
        )
        .unwrap();
    drop(connection);
    let store = brain_store::Store::open(&location, true, brain_store::PageReads::Mapped).unwrap();
    let records = store.vault_files(true).unwrap();
    assert_eq!(
        records,
        [VaultFileRecord {
            diagnostics: "[1]".into(),
            size: 3,
            mtime_ns: 7,
            sha256: "ab".into(),
            ..record("a.md", b"")
        }],
        "the row is kept, its JSON state dropped: the next scan parses the file again"
    );
    assert_eq!(store.vault_value("format").unwrap(), None);
    store.write(|tx| tx.put_vault_file(&record("a.md", &[0, 159, 255]))).unwrap();
    assert_eq!(store.vault_files(true).unwrap()[0].state, [0, 159, 255]);
}
