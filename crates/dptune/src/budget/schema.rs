//! The store file: how it is created, recognised, checked and migrated.
//!
//! * A store is created whole or not at all: the schema is written to a temporary file in the
//!   same directory, which is then hard-linked to the store's name (an atomic
//!   create-if-absent), so no process ever sees a half-made store, and two processes creating
//!   the same store at once end with one of them.
//! * Opening never creates anything. A missing or empty file is an error (an empty file may be
//!   a store truncated to nothing), as is a file that is not a SQLite database, one whose
//!   `application_id` is not dptune's, one of an unknown schema version, and one that fails
//!   `PRAGMA integrity_check`. The file is left as it was; nothing is ever reset.
//! * Every connection uses WAL with `synchronous = FULL` (a committed charge survives a crash
//!   of the process or of the machine) and waits up to [`BUSY_TIMEOUT`] for the write lock.
//! * The schema is versioned by `PRAGMA user_version`; [`MIGRATIONS`] lists the steps, and
//!   opening an older store applies the missing ones in one write transaction.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::error::{Error, Result};

/// `PRAGMA application_id` of a dptune budget store ("dptb").
pub(super) const APPLICATION_ID: i32 = 0x6470_7462;

/// How long a charge waits for another process's write transaction before giving up.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Schema steps: `MIGRATIONS[i]` takes `user_version` i to i + 1.
const MIGRATIONS: &[&str] = &[
    // 1: budgets and their charges (a hash chain, see `seal`).
    "CREATE TABLE budgets (
         name TEXT PRIMARY KEY NOT NULL,
         epsilon REAL NOT NULL CHECK (epsilon > 0),
         delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
         neighbours TEXT NOT NULL CHECK (neighbours IN ('add_remove', 'replace_one')),
         created INTEGER NOT NULL,
         charges INTEGER NOT NULL CHECK (charges >= 0),
         head BLOB NOT NULL,
         seal BLOB NOT NULL
     ) STRICT;
     CREATE TABLE charges (
         budget TEXT NOT NULL REFERENCES budgets (name),
         seq INTEGER NOT NULL CHECK (seq >= 1),
         guarantee TEXT NOT NULL,
         label TEXT NOT NULL,
         command TEXT NOT NULL,
         time INTEGER NOT NULL,
         seal BLOB NOT NULL,
         PRIMARY KEY (budget, seq)
     ) STRICT;",
];

/// The schema version this build writes.
pub(super) const VERSION: i32 = MIGRATIONS.len() as i32;

/// A store error for `path`.
pub(super) fn store_err(path: &Path, reason: impl Into<String>) -> Error {
    Error::Store {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Maps SQLite's errors on `path` to [`Error::Store`], naming damage as such.
pub(super) fn sql_err(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        let reason = match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => {
                format!("not a SQLite database, or its header is damaged ({e})")
            }
            Some(ErrorCode::DatabaseCorrupt) => {
                format!("the file is corrupted or truncated ({e}); it was left as it is")
            }
            Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => format!(
                "another process held the store for more than {} s ({e})",
                BUSY_TIMEOUT.as_secs()
            ),
            _ => e.to_string(),
        };
        store_err(path, reason)
    }
}

/// Opens an existing store for reading and charging, after checking that it is one.
pub(super) fn open(path: &Path) -> Result<Connection> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            store_err(
                path,
                "no budget store here; `dptune budget create` makes one",
            )
        } else {
            store_err(path, e.to_string())
        }
    })?;
    if !meta.is_file() {
        return Err(store_err(path, "not a regular file"));
    }
    if meta.len() == 0 {
        return Err(store_err(
            path,
            "the file is empty (a store truncated to nothing?); it was left as it is: move it \
             away to start a new store",
        ));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql_err(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql_err(path))?;
    // Recognise the file before changing anything in it (journal mode included).
    let pragma = |name: &str| -> Result<i32> {
        conn.pragma_query_value(None, name, |r| r.get(0))
            .map_err(sql_err(path))
    };
    let app = pragma("application_id")?;
    if app != APPLICATION_ID {
        return Err(store_err(
            path,
            format!("not a dptune budget store (application_id {app:#x}); it was left as it is"),
        ));
    }
    let version = pragma("user_version")?;
    if !(1..=VERSION).contains(&version) {
        return Err(store_err(
            path,
            format!(
                "schema version {version}, this dptune reads versions 1 to {VERSION} (a newer \
                 dptune, or a damaged header)"
            ),
        ));
    }
    configure(&conn, path)?;
    check_integrity(&conn, path)?;
    if version < VERSION {
        migrate(&conn, path)?;
    }
    Ok(conn)
}

/// Creates the store at `path` if there is none (see the module doc), then opens it.
pub(super) fn open_or_create(path: &Path) -> Result<Connection> {
    if !path.exists() {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| store_err(path, e.to_string()))?;
        }
        let tmp = temporary_name(path);
        let made = build(&tmp).and_then(|()| match std::fs::hard_link(&tmp, path) {
            // Another process created the store first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            r => r.map_err(|e| store_err(path, format!("cannot create: {e}"))),
        });
        for p in [tmp.clone(), wal_name(&tmp, "-wal"), wal_name(&tmp, "-shm")] {
            // Best effort: the temporary file's name is unique to this process.
            let _ = std::fs::remove_file(p);
        }
        made?;
    }
    open(path)
}

/// A fresh, complete store at `tmp` (which must not exist).
fn build(tmp: &Path) -> Result<()> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(tmp, flags).map_err(sql_err(tmp))?;
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(sql_err(tmp))?;
    configure(&conn, tmp)?;
    migrate(&conn, tmp)?;
    conn.close().map_err(|(_, e)| sql_err(tmp)(e))
}

fn temporary_name(path: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = path
        .file_name()
        .map_or_else(|| "store".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.{nanos}.new", std::process::id()))
}

fn wal_name(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Per-connection settings: WAL, `synchronous = FULL`, foreign keys, the busy timeout.
fn configure(conn: &Connection, path: &Path) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql_err(path))?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))
        .map_err(sql_err(path))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(store_err(
            path,
            format!("cannot use write-ahead logging here (journal_mode = {mode})"),
        ));
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(sql_err(path))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sql_err(path))
}

/// `PRAGMA integrity_check` (pages, b-trees, indexes against their tables): a damaged file is
/// an error, never read as if it were whole.
fn check_integrity(conn: &Connection, path: &Path) -> Result<()> {
    let mut stmt = conn
        .prepare("PRAGMA integrity_check(5)")
        .map_err(sql_err(path))?;
    let lines: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(sql_err(path))?;
    if lines == ["ok"] {
        Ok(())
    } else {
        Err(store_err(
            path,
            format!(
                "the file is corrupted or truncated (integrity check: {}); it was left as it is",
                lines.join("; ")
            ),
        ))
    }
}

/// Applies the missing [`MIGRATIONS`] in one write transaction (re-reading the version inside
/// it, so concurrent openers migrate once).
fn migrate(conn: &Connection, path: &Path) -> Result<()> {
    let err = sql_err(path);
    let tx =
        rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(&err)?;
    let from: i32 = tx
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(&err)?;
    for step in MIGRATIONS.iter().skip(from.max(0) as usize) {
        tx.execute_batch(step).map_err(&err)?;
    }
    tx.pragma_update(None, "user_version", VERSION)
        .map_err(&err)?;
    tx.commit().map_err(&err)
}
