//! The one SQLite database and the data directory around it.
//!
//! Layout under the data dir (`COWORK_HOME`, else the platform data dir):
//! `cowork.db` (WAL) · `settings.json` (user policy rules, mode) · `vault/` (Markdown the person can
//! open) · `logs/` (rotating tracing files). Every component opens its own connection with
//! [`Store::connect`], which applies the same pragmas; the schema is one versioned migration list.

pub mod accounts;
mod accounts_schema;
mod rows;
mod schema;

pub use rows::{all_rows, each_row, from_row, json_text, one_row};
pub use schema::{Schema, SchemaError, Step};
pub mod settings;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot find a data directory: set COWORK_HOME to a writable folder")]
    NoDataDir,
    #[error("cannot create {path}: {source} — check the permissions or set COWORK_HOME elsewhere")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "cannot migrate the database {path}: {message} — if it was written by a newer Cowork, \
         update Cowork or point COWORK_HOME elsewhere; your data is untouched"
    )]
    Migrate { path: PathBuf, message: String },
}

/// A database error as a tool's error. "Busy" is transient, so the scheduler may retry an
/// idempotent call; anything else is a plain failure.
pub fn tool_error(e: rusqlite::Error) -> cowork_contract::ToolError {
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
            cowork_contract::ToolError::transient(format!("the database is busy: {e}"))
        }
        other => cowork_contract::ToolError::failed(format!("database error: {other}")),
    }
}

/// Writes a whole file so that it is either the old or the new content, never a mix: a temp
/// file beside it, fsync, rename, then fsync of the folder so the rename itself is durable.
/// An existing file keeps its permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mode = std::fs::metadata(path)
        .ok()
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()));
    write_with_mode(path, bytes, mode)
}

/// [`write_atomically`] for files only the person may read (settings, pins): mode 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with_mode(path, bytes, Some(0o600))
}

/// The temp file of an atomic write: hidden (folder watchers skip dot files) and named after
/// the writing process, so a later start can tell a dead writer's leftover from a live one's.
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.{}{TEMP_SUFFIX}", std::process::id()))
}

const TEMP_SUFFIX: &str = ".cowork-tmp";

fn write_with_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = temp_path(path);
    let mut file = std::fs::File::create(&tmp)?;
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    let written = file
        .write_all(bytes)
        .and_then(|_| file.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    std::fs::File::open(parent)?.sync_all()
}

/// Removes what atomic writes of processes that no longer run left behind (a kill -9 between
/// the temp file and the rename), under `dir` (recursively, skipping dot folders). Returns how
/// many were removed. A live writer's temp file is left alone.
pub fn clean_temp_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !name.starts_with('.') {
                removed += clean_temp_files(&entry.path());
            }
            continue;
        }
        let Some(pid) = name
            .strip_suffix(TEMP_SUFFIX)
            .and_then(|n| n.rsplit('.').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !process_alive(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// Where Cowork keeps its data.
#[derive(Clone, Debug)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// `COWORK_HOME` if set (tests use temp dirs), else the platform data dir
    /// (`~/.local/share/cowork` on Linux).
    pub fn locate() -> Result<Self, StoreError> {
        if let Some(home) = std::env::var_os("COWORK_HOME").filter(|v| !v.is_empty()) {
            return Ok(DataDir::at(PathBuf::from(home)));
        }
        directories::ProjectDirs::from("app", "Cowork", "cowork")
            .map(|dirs| DataDir::at(dirs.data_dir().to_path_buf()))
            .ok_or(StoreError::NoDataDir)
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn db_path(&self) -> PathBuf {
        self.root.join("cowork.db")
    }
    pub fn settings_path(&self) -> PathBuf {
        self.root.join("settings.json")
    }
    /// The vault's default folder (Markdown notes and memories); settings `vault.folder` moves it.
    pub fn vault_dir(&self) -> PathBuf {
        self.root.join("vault")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// The shadow filesystem's content-addressed blobs (staged and previous file contents).
    pub fn changes_dir(&self) -> PathBuf {
        self.root.join("changes")
    }
}

/// The data dir holds the person's mail, notes, audit log and settings: only they may enter it.
fn make_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)?;
    let meta = std::fs::metadata(path)?;
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Files directly in the data dir (the database and its WAL, settings) readable by their owner
/// only — SQLite gives the WAL the database file's mode, so the database is made first, 0600 —
/// and its folders (logs, packs, changes) enterable by the owner only, 0700, however they were
/// made.
fn make_private_files(root: &Path) {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let db = root.join("cowork.db");
    if !db.exists() {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&db);
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let private = if meta.is_dir() { 0o700 } else { 0o600 };
        if (meta.is_file() || meta.is_dir()) && meta.permissions().mode() & 0o077 != 0 {
            let _ =
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(private));
        }
    }
}

/// An opened, migrated data directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: DataDir,
}

impl Store {
    /// Creates the folders, opens the database and brings the store's own tables and those of
    /// `schemas` (the owners the caller composes: the app passes every family's) to their
    /// latest versions.
    pub fn open(dir: DataDir, schemas: &[&Schema]) -> Result<Self, StoreError> {
        for path in [dir.root().to_path_buf(), dir.logs_dir()] {
            make_private_dir(&path).map_err(|source| StoreError::CreateDir { path, source })?;
        }
        make_private_files(dir.root());
        clean_temp_files(dir.root());
        let store = Store { dir };
        let mut conn = store.connect()?;
        let all: Vec<&Schema> = std::iter::once(&accounts_schema::SCHEMA)
            .chain(schemas.iter().copied())
            .collect();
        schema::apply(&mut conn, &all).map_err(|e| StoreError::Migrate {
            path: store.dir.db_path(),
            message: e.to_string(),
        })?;
        Ok(store)
    }

    pub fn dir(&self) -> &DataDir {
        &self.dir
    }

    /// A new connection with the project's pragmas. WAL + synchronous=NORMAL: a committed
    /// transaction survives a crash or kill -9 of the app; an OS crash or power loss can lose
    /// only the transactions since the last WAL sync (checkpoint).
    pub fn connect(&self) -> Result<Connection, StoreError> {
        let path = self.dir.db_path();
        let open_err = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        let conn = Connection::open(&path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(open_err)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA foreign_keys = ON;",
        )
        .map_err(open_err)?;
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_creates_layout_and_migrates_idempotently() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path().join("home")), &[]).unwrap();
        let conn = store.connect().unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(conn);
        // Opening again is a no-op migration.
        Store::open(DataDir::at(tmp.path().join("home")), &[]).unwrap();
    }

    #[test]
    fn a_database_from_a_newer_version_is_refused_with_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path());
        let store = Store::open(dir.clone(), &[]).unwrap();
        store
            .connect()
            .unwrap()
            .pragma_update(None, "user_version", 999)
            .unwrap();
        let err = Store::open(dir, &[]).unwrap_err().to_string();
        assert!(err.contains("newer Cowork"), "{err}");
    }
}
