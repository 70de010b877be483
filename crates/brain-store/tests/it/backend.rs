//! The backend under test, from `BRAIN_TEST_DATABASE_URL`: unset or empty means SQLite in a
//! temp dir; a `postgres://` URL means a fresh schema of that database for each fixture,
//! dropped afterwards. A URL that cannot be reached fails the tests loudly: a backend that
//! is silently skipped would be a green CI that tested nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

use brain_store::{PageReads, Store, StoreLocation};

pub const VARIABLE: &str = "BRAIN_TEST_DATABASE_URL";

/// The PostgreSQL URL under test, if any.
pub fn postgres_url() -> Option<String> {
    let url = std::env::var(VARIABLE).ok().filter(|url| !url.trim().is_empty())?;
    assert!(
        url.starts_with("postgres://") || url.starts_with("postgresql://"),
        "{VARIABLE} must be a postgres:// URL (or unset for SQLite)"
    );
    Some(url)
}

/// A store of the backend under test, and how to open it again (another process would).
pub struct Fixture {
    pub store: Store,
    pub location: StoreLocation,
    _guard: Guard,
}

enum Guard {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Schema { url: String, schema: String },
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Guard::Schema { url, schema } = self
            && let Ok(mut client) = postgres::Client::connect(url, postgres::NoTls)
        {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
        }
    }
}

impl Fixture {
    /// A second, independent handle on the same store.
    pub fn open_again(&self) -> Store {
        open(&self.location)
    }
}

/// Opens an existing store of the backend under test.
pub fn open(location: &StoreLocation) -> Store {
    Store::open(location, false, PageReads::Mapped).unwrap()
}

/// A URL of `base` whose connections use `schema` (created by the store on first open).
pub fn with_schema(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-c%20search_path%3D{schema}")
}

/// A unique schema name for this test process.
pub fn fresh_schema(label: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("t_{label}_{}_{n}", std::process::id())
}

pub fn fixture() -> Fixture {
    match postgres_url() {
        None => {
            let dir = tempfile::tempdir().unwrap();
            let location = StoreLocation::Sqlite(dir.path().join("brain.db"));
            let store = Store::open(&location, true, PageReads::Mapped).unwrap();
            Fixture { store, location, _guard: Guard::Dir(dir) }
        }
        Some(url) => {
            let schema = fresh_schema("store");
            let location = StoreLocation::parse(&with_schema(&url, &schema)).unwrap();
            let store = Store::open(&location, true, PageReads::Mapped)
                .unwrap_or_else(|err| panic!("{VARIABLE} is set but the store cannot be opened: {err}"));
            Fixture { store, location, _guard: Guard::Schema { url, schema } }
        }
    }
}
