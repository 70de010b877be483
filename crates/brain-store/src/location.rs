//! Where a store lives, chosen once by URL scheme: a SQLite file (the embedded default) or a
//! PostgreSQL database (fleet mode). A location prints without its password, so it can go
//! into messages, logs and `brain doctor`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::{StoreError, StoreResult};

/// A store's location.
#[derive(Clone)]
pub enum StoreLocation {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://…` or `postgresql://…`).
    Postgres(PgLocation),
}

/// A parsed PostgreSQL URL and its printable form (no password).
#[derive(Clone)]
pub struct PgLocation {
    pub(crate) config: Box<postgres::Config>,
    display: String,
}

impl StoreLocation {
    /// Parses a database URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?…]` (also
    /// `postgresql://`, and the key/value form the PostgreSQL tools accept is not taken
    /// here: a URL names its kind), or `sqlite:PATH` / `sqlite://PATH` for a SQLite file.
    /// Errors never repeat the text, which may hold a password.
    pub fn parse(text: &str) -> StoreResult<StoreLocation> {
        let text = text.trim();
        let invalid = |detail: &str| StoreError::InvalidLocation { detail: detail.to_string() };
        let (scheme, rest) = text.split_once(':').ok_or_else(|| {
            invalid("a database URL starts with postgres://, postgresql:// or sqlite: (no scheme given)")
        })?;
        match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => {
                if !rest.starts_with("//") {
                    return Err(invalid("a PostgreSQL URL looks like postgres://user@host:5432/database"));
                }
                let config = postgres::Config::from_str(text)
                    .map_err(|err| invalid(&format!("not a valid PostgreSQL URL ({})", scrub(&err.to_string()))))?;
                if config.get_dbname().is_none_or(str::is_empty) {
                    return Err(invalid("the PostgreSQL URL names no database (postgres://user@host:5432/DATABASE)"));
                }
                Ok(StoreLocation::Postgres(PgLocation::new(config)))
            }
            "sqlite" => {
                let path = rest.strip_prefix("//").unwrap_or(rest);
                if path.is_empty() {
                    return Err(invalid("sqlite: needs a file path (sqlite:/path/to/brain.db)"));
                }
                Ok(StoreLocation::Sqlite(PathBuf::from(path)))
            }
            other => Err(invalid(&format!("unsupported database scheme {other:?} (use postgres://… or sqlite:PATH)"))),
        }
    }

    /// The SQLite file of a home (`<home>/<file>`).
    pub fn sqlite_file(home: &Path, file: &str) -> StoreLocation {
        StoreLocation::Sqlite(home.join(file))
    }

    /// True for a database server that other processes on other machines share (so caches
    /// and events must cross processes through the database, not the file system).
    pub fn is_server(&self) -> bool {
        matches!(self, StoreLocation::Postgres(_))
    }
}

impl std::fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(location) => f.write_str(&location.display),
        }
    }
}

impl std::fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreLocation({self})")
    }
}

impl PgLocation {
    fn new(config: postgres::Config) -> PgLocation {
        let mut display = String::from("postgres://");
        if let Some(user) = config.get_user() {
            display.push_str(user);
            display.push('@');
        }
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(index, host)| {
                let name = match host {
                    postgres::config::Host::Tcp(name) => name.clone(),
                    #[cfg(unix)]
                    postgres::config::Host::Unix(path) => path.display().to_string(),
                };
                match config.get_ports().get(index).or(config.get_ports().first()) {
                    Some(port) => format!("{name}:{port}"),
                    None => name,
                }
            })
            .collect();
        display.push_str(&hosts.join(","));
        display.push('/');
        display.push_str(config.get_dbname().unwrap_or_default());
        if let Some(options) = config.get_options() {
            display.push_str("?options=");
            display.push_str(options);
        }
        PgLocation { config: Box::new(config), display }
    }
}

impl std::fmt::Display for PgLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

/// A parser message without anything that looks like the URL's credentials.
fn scrub(message: &str) -> String {
    match message.find("://") {
        Some(_) => "the URL could not be read".to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_choose_the_backend_and_print_without_the_password() {
        let location = StoreLocation::parse("postgres://brain:s3cret-pass@db.internal:6543/fleet").unwrap();
        assert!(location.is_server());
        assert_eq!(location.to_string(), "postgres://brain@db.internal:6543/fleet");
        assert!(!format!("{location:?}").contains("s3cret"));
        let sqlite = StoreLocation::parse("sqlite:/tmp/x/brain.db").unwrap();
        assert!(!sqlite.is_server());
        assert_eq!(sqlite.to_string(), "/tmp/x/brain.db");
        assert_eq!(StoreLocation::parse("sqlite:///tmp/y.db").unwrap().to_string(), "/tmp/y.db");
    }

    #[test]
    fn bad_urls_are_clear_errors_that_never_repeat_a_password() {
        for (text, expected) in [
            ("mysql://root:hunter2hunter2@h/db", "unsupported database scheme"),
            ("postgres://u:hunter2hunter2@h:notaport/db", "not a valid PostgreSQL URL"),
            ("postgres://u:hunter2hunter2@h:5432", "names no database"),
            ("postgres:u:hunter2hunter2", "looks like postgres://"),
            ("brain.db", "no scheme"),
            ("sqlite:", "needs a file path"),
        ] {
            let err = StoreLocation::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
            assert!(!err.contains("hunter2"), "{text}: {err}");
        }
    }
}
