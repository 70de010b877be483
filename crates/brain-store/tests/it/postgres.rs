//! What only the PostgreSQL backend does: migrations under an advisory lock, schemas as
//! separate brains, connection loss and recovery, values PostgreSQL text cannot hold.
//! These need a server: `BRAIN_TEST_DATABASE_URL=postgres://… cargo test -p brain-store
//! --test it -- --include-ignored` (`.ci/run` does).

use std::time::Duration;

use brain_store::{ItemFilter, PageReads, Store, StoreError, StoreLocation};
use postgres::fallible_iterator::FallibleIterator;

use crate::backend::{self, fresh_schema, with_schema};
use crate::item;

const NEEDS: &str = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL";

fn url() -> String {
    backend::postgres_url().expect(NEEDS)
}

/// A fresh schema's location and a raw client on the same database (for checks and for
/// playing another process). The schema is dropped by the caller's guard.
struct Schema {
    location: StoreLocation,
    client: postgres::Client,
    name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
    }
}

fn schema(label: &str) -> Schema {
    let base = url();
    let name = fresh_schema(label);
    let location = StoreLocation::parse(&with_schema(&base, &name)).unwrap();
    let client = postgres::Client::connect(&base, postgres::NoTls).unwrap();
    Schema { location, client, name }
}

fn open(location: &StoreLocation) -> Result<Store, StoreError> {
    Store::open(location, true, PageReads::Mapped)
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn replicas_starting_together_migrate_once() {
    let mut s = schema("migrate");
    let opened: Vec<_> = (0..8)
        .map(|_| {
            let location = s.location.clone();
            std::thread::spawn(move || open(&location).map(|_| ()))
        })
        .collect();
    for handle in opened {
        handle.join().unwrap().unwrap();
    }
    let rows =
        s.client.query(&format!("SELECT version FROM \"{}\".schema_migrations ORDER BY version", s.name), &[]).unwrap();
    let versions: Vec<i32> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(versions, (1..=versions.len() as i32).collect::<Vec<_>>());
    assert!(!versions.is_empty());
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_schema_written_by_a_newer_brain_is_refused() {
    let mut s = schema("newer");
    drop(open(&s.location).unwrap());
    s.client.batch_execute(&format!("INSERT INTO \"{}\".schema_migrations (version) VALUES (999)", s.name)).unwrap();
    let err = open(&s.location).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { found: 999, .. }), "{err}");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn schemas_of_one_database_are_separate_brains() {
    let a = schema("a");
    let b = schema("b");
    let store_a = open(&a.location).unwrap();
    let store_b = open(&b.location).unwrap();
    store_a.insert(&item(1, "only in a", "x")).unwrap();
    assert_eq!(store_a.count(&ItemFilter::default()).unwrap(), 1);
    assert_eq!(store_b.count(&ItemFilter::default()).unwrap(), 0);
    assert_eq!(store_b.generation().unwrap(), 0);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn an_unreachable_server_is_a_clear_error_without_the_password() {
    let location = StoreLocation::parse("postgres://brain:hunter2hunter2@127.0.0.1:1/brain?connect_timeout=2").unwrap();
    let err = open(&location).unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    let message = err.to_string();
    assert!(message.contains("postgres://brain@127.0.0.1:1/brain") && message.contains("unreachable"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    let _ = url();
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_database_that_does_not_exist_is_named() {
    let base = url();
    let (head, _) = base.rsplit_once('/').unwrap();
    let location = StoreLocation::parse(&format!("{head}/brain_no_such_database_here")).unwrap();
    let err = open(&location).unwrap_err();
    assert!(matches!(err, StoreError::NoDatabase { .. }), "{err}");
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn text_with_nul_is_refused_and_the_transaction_stays_usable() {
    let s = schema("nul");
    let store = open(&s.location).unwrap();
    let bad = item(1, "nul", "before\0after");
    let good = item(2, "fine", "no nul here");
    let outcome = store.write(|tx| {
        let refused = tx.insert(&bad).unwrap_err();
        assert!(matches!(refused, StoreError::Unstorable { .. }), "{refused}");
        assert!(refused.to_string().contains("content contains a NUL"), "{refused}");
        tx.insert(&good)
    });
    outcome.unwrap();
    assert_eq!(store.count(&ItemFilter::default()).unwrap(), 1);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn a_dropped_connection_is_replaced() {
    let mut s = schema("drop");
    // Its own application name, so only this store's connections are cut.
    let name = format!("brain_{}", s.name);
    let location = StoreLocation::parse(&format!("{}&application_name={name}", with_schema(&url(), &s.name))).unwrap();
    let store = open(&location).unwrap();
    let first = item(1, "first", "x");
    store.insert(&first).unwrap();
    // Terminates the store's connection and waits until the server has let it go.
    let kill = |client: &mut postgres::Client| -> i64 {
        let killed: i64 = client
            .query_one(
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1) t",
                &[&name],
            )
            .unwrap()
            .get(0);
        for _ in 0..200 {
            let left: i64 = client
                .query_one("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", &[&name])
                .unwrap()
                .get(0);
            if left == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        killed
    };
    // Reads retry once on a fresh connection: the caller never sees the drop.
    assert!(kill(&mut s.client) >= 1);
    assert_eq!(store.get(&first.id).unwrap().unwrap().title, "first");
    // A write on a dead connection fails as unavailable (nothing committed) or, once the
    // store noticed, goes through; the next one always does.
    assert!(kill(&mut s.client) >= 1);
    match store.insert(&item(2, "second", "x")) {
        Ok(()) => {}
        Err(err) => assert!(err.is_unavailable(), "{err}"),
    }
    store.insert(&item(3, "third", "x")).unwrap();
    assert!(store.get(&item(3, "third", "x").id).unwrap().is_some());
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn every_committed_write_notifies_its_generation() {
    let mut s = schema("notify");
    let store = open(&s.location).unwrap();
    let channel = format!("brain_changes_{}", s.name);
    s.client.batch_execute(&format!("LISTEN \"{channel}\"")).unwrap();
    store.insert(&item(1, "a", "b")).unwrap();
    // A rolled-back write notifies nothing.
    let _ = store.write(|tx| {
        tx.insert(&item(2, "c", "d"))?;
        Err::<(), _>(StoreError::InvalidQuery("roll back".into()))
    });
    store.insert(&item(3, "e", "f")).unwrap();
    let mut notifications = s.client.notifications();
    let mut received = notifications.timeout_iter(Duration::from_secs(2));
    let mut payloads: Vec<String> = Vec::new();
    while payloads.len() < 2
        && let Some(note) = received.next().unwrap()
    {
        payloads.push(note.payload().to_string());
    }
    assert_eq!(payloads, ["1", "2"]);
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn access_bookkeeping_gives_up_behind_a_writer_when_asked_to() {
    let mut s = schema("access");
    let store = open(&s.location).unwrap();
    let it = item(1, "busy", "x");
    store.insert(&it).unwrap();
    // Another process holds the row in an open write transaction.
    let mut writer = s.client.transaction().unwrap();
    writer.execute(&format!("SELECT 1 FROM \"{}\".items WHERE id = $1 FOR UPDATE", s.name), &[&it.id]).unwrap();
    let access = brain_store::Access { id: it.id.clone(), strength: Some(0.9) };
    let now = "2026-11-22T00:00:00Z".parse().unwrap();
    let recorded = store.record_access(std::slice::from_ref(&access), now, Some(Duration::from_millis(100))).unwrap();
    assert!(!recorded, "it waited for the writer instead of giving up");
    writer.rollback().unwrap();
    assert_eq!(store.get(&it.id).unwrap().unwrap().access_count, 0);
    // Without the writer it goes through; repeated ids count each time.
    assert!(store.record_access(&[access.clone(), access], now, Some(Duration::from_millis(100))).unwrap());
    let read = store.get(&it.id).unwrap().unwrap();
    assert_eq!((read.access_count, read.strength, read.version), (2, 0.9, 1));
}

#[test]
#[ignore = "needs PostgreSQL: set BRAIN_TEST_DATABASE_URL"]
fn the_vault_states_of_an_older_schema_are_dropped_and_its_rows_kept() {
    // A schema as migration 7 left it: the state column is text (JSON).
    let mut s = schema("states");
    drop(open(&s.location).unwrap());
    let name = s.name.clone();
    s.client
        .batch_execute(&format!(
            "SET search_path TO \"{name}\"; \
             ALTER TABLE vault_files ALTER COLUMN state TYPE text USING ''; \
             INSERT INTO vault_files (relpath, size, mtime_ns, sha256, state) VALUES ('a.md', 3, 7, 'ab', '{{\"x\":1}}'); \
             INSERT INTO vault_state (key, value) VALUES ('format', '4'); \
             ALTER TABLE api_tokens DROP COLUMN review; \
             DELETE FROM schema_migrations WHERE version >= 8; SET search_path TO DEFAULT"
        ))
        .unwrap();
    let store = open(&s.location).unwrap();
    let records = store.vault_files(true).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!((records[0].relpath.as_str(), records[0].size, records[0].sha256.as_str()), ("a.md", 3, "ab"));
    assert!(records[0].state.is_empty(), "the JSON state is dropped: the next scan parses the file again");
    assert_eq!(store.vault_value("format").unwrap(), None);
    store
        .write(|tx| tx.put_vault_file(&brain_store::VaultFileRecord { state: vec![0, 159, 255], ..records[0].clone() }))
        .unwrap();
    assert_eq!(store.vault_files(true).unwrap()[0].state, [0, 159, 255]);
}
