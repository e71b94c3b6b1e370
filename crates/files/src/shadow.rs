//! The shadow filesystem: the assistant's writes and edits are staged per conversation, shown
//! as diffs, and applied or rejected by the person; an applied change can be rolled back.
//!
//! Contents are content-addressed blobs (`changes/blobs/<sha256>`), so a rollback restores the
//! previous bytes exactly (binary included) and its permission bits. Apply and rollback are
//! atomic per file (temp file in the same folder, fsync, rename, folder fsync) and journaled:
//! the journal row is committed before the file is touched and closed after, and `open`
//! settles any row left open by a crash from what is on disk, so a kill -9 at any moment leaves
//! each file old or new, never torn, and the record agrees with the disk.

use cowork_store::{Store, StoreError, write_atomically};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ShadowError {
    #[error("change {0} does not exist: `cowork changes list` shows the ids")]
    NoSuchChange(i64),
    #[error("change {id} is {status}, not {wanted}")]
    WrongStatus {
        id: i64,
        status: String,
        wanted: &'static str,
    },
    #[error(
        "{path} changed on disk since change {id} was {when}; nothing was written — look at `cowork changes diff {id}`, then reject it and let the assistant stage it again"
    )]
    Conflict {
        id: i64,
        path: String,
        when: &'static str,
    },
    #[error(
        "hunk {hunk} does not exist in change {id} (it has {count}); `cowork changes diff {id}` numbers them"
    )]
    NoSuchHunk { id: i64, hunk: usize, count: usize },
    #[error("change {0} is a binary or whole-file change: apply it whole")]
    NotHunkable(i64),
    #[error(
        "{path} now leads through a symlink that was not there when the change was staged; nothing was written"
    )]
    Redirected { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("shadow store: {0}")]
    Db(#[from] rusqlite::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ShadowError + '_ {
    move |source| ShadowError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One staged (or settled) change to one file.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Change {
    pub id: i64,
    pub conversation: String,
    pub path: String,
    /// created | modified | deleted
    pub kind: &'static str,
    pub status: String,
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Hunk {
    /// 1-based, as `apply --hunks` takes them.
    pub number: usize,
    pub header: String,
    pub text: String,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeDiff {
    pub change: Change,
    /// Set when the file on disk no longer matches what the change was staged against.
    pub conflict: bool,
    pub hunks: Vec<Hunk>,
    /// For binary files, instead of hunks.
    pub summary: Option<String>,
}

#[derive(Clone)]
pub struct Shadow {
    db: Arc<Mutex<Connection>>,
    blobs: PathBuf,
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

/// Staged paths were resolved (no symlinks on the way); before writing, that must still hold,
/// or a symlink planted since could send the write elsewhere.
fn check_still_direct(path: &Path) -> Result<(), ShadowError> {
    let redirected = || ShadowError::Redirected {
        path: path.display().to_string(),
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(redirected());
    }
    let parent = path.parent().ok_or_else(redirected)?;
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    if parent.canonicalize().map_err(io(parent))? != parent {
        return Err(redirected());
    }
    Ok(())
}

/// What is on disk now: None if there is no file.
fn read_disk(path: &Path) -> Result<Option<(Vec<u8>, u32)>, ShadowError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
        Ok(meta) => {
            let bytes = std::fs::read(path).map_err(io(path))?;
            Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
        }
    }
}

fn temp_name(path: &Path, journal: i64) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.cowork-{journal}.tmp"))
}

/// Writes `bytes` to `path` atomically with `mode`, through a temp file named after the journal
/// row (so recovery can find leftovers). Hand-written instead of `write_atomically` because the
/// mode must be set before the rename and the temp name must be known.
fn replace_file(path: &Path, bytes: &[u8], mode: u32, journal: i64) -> Result<(), ShadowError> {
    use std::io::Write;
    let tmp = temp_name(path, journal);
    let mut file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(bytes).map_err(io(&tmp))?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    drop(file);
    test_pause();
    std::fs::rename(&tmp, path).map_err(io(path))?;
    if let Some(parent) = path.parent()
        && let Ok(dir) = std::fs::File::open(parent)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Lets the crash test kill the process mid-apply (`COWORK_TEST_APPLY_PAUSE_MS`).
fn test_pause() {
    if let Some(ms) = std::env::var("COWORK_TEST_APPLY_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// A file's bytes at one side of a change; None = no file.
type Content = Option<Vec<u8>>;

/// A change's summary (kind, +/− line counts, binary) from its two sides.
fn summarize(r: &Row, base: &Content, new: &Content) -> Change {
    let binary = base.as_deref().is_some_and(is_binary) || new.as_deref().is_some_and(is_binary);
    let (mut added, mut removed) = (0, 0);
    if !binary {
        let old = String::from_utf8_lossy(base.as_deref().unwrap_or_default()).into_owned();
        let new_text = String::from_utf8_lossy(new.as_deref().unwrap_or_default()).into_owned();
        for change in similar::TextDiff::from_lines(&old, &new_text).iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
    }
    let kind = match (&r.base_sha, &r.new_sha) {
        (None, _) => "created",
        (_, None) => "deleted",
        _ => "modified",
    };
    Change {
        id: r.id,
        conversation: r.conversation.clone(),
        path: r.path.clone(),
        kind,
        status: r.status.clone(),
        added,
        removed,
        binary,
        created_at: r.created_at.clone(),
        updated_at: r.updated_at.clone(),
    }
}

#[derive(serde::Deserialize)]
struct Row {
    id: i64,
    conversation: String,
    path: String,
    base_sha: Option<String>,
    base_mode: Option<u32>,
    new_sha: Option<String>,
    status: String,
    applied_sha: Option<String>,
    created_at: String,
    updated_at: String,
}

const COLUMNS: &str = "id, conversation, path, base_sha, base_mode, new_sha, status, applied_sha, created_at, updated_at";

impl Shadow {
    /// Opens the shadow store and settles any apply or rollback a crash interrupted.
    pub fn open(store: &Store) -> Result<Shadow, ShadowError> {
        let shadow = Shadow {
            db: Arc::new(Mutex::new(store.connect()?)),
            blobs: store.dir().changes_dir().join("blobs"),
        };
        for note in shadow.recover()? {
            tracing::warn!("shadow fs recovery: {note}");
        }
        Ok(shadow)
    }

    fn blob_path(&self, sha: &str) -> PathBuf {
        self.blobs.join(&sha[..2]).join(sha)
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<String, ShadowError> {
        let sha = sha(bytes);
        let path = self.blob_path(&sha);
        if !path.exists() {
            write_atomically(&path, bytes).map_err(io(&path))?;
        }
        Ok(sha)
    }

    fn blob(&self, sha: &Option<String>) -> Result<Option<Vec<u8>>, ShadowError> {
        match sha {
            None => Ok(None),
            Some(sha) => {
                let path = self.blob_path(sha);
                std::fs::read(&path).map(Some).map_err(io(&path))
            }
        }
    }

    fn get(&self, id: i64) -> Result<Row, ShadowError> {
        let db = self.db.lock().unwrap();
        db.query_row(
            &format!("SELECT {COLUMNS} FROM file_changes WHERE id = ?1"),
            [id],
            cowork_store::from_row,
        )
        .optional()?
        .ok_or(ShadowError::NoSuchChange(id))
    }

    /// The file a change is about (what its review names), without reading any content.
    pub fn path_of(&self, id: i64) -> Result<String, ShadowError> {
        let db = self.db.lock().unwrap();
        db.query_row("SELECT path FROM file_changes WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .optional()?
        .ok_or(ShadowError::NoSuchChange(id))
    }

    fn staged_row(&self, conversation: &str, path: &Path) -> Result<Option<Row>, ShadowError> {
        let db = self.db.lock().unwrap();
        Ok(cowork_store::one_row(
            &db,
            &format!(
                "SELECT {COLUMNS} FROM file_changes WHERE status = 'staged' AND conversation = ?1 AND path = ?2"
            ),
            params![conversation, path.to_string_lossy()],
        )?)
    }

    /// What the conversation sees at `path`: its staged content if it has a change there
    /// (`Some(None)`: staged for deletion), else None (read the disk).
    pub fn staged_view(
        &self,
        conversation: &str,
        path: &Path,
    ) -> Result<Option<Option<Vec<u8>>>, ShadowError> {
        match self.staged_row(conversation, path)? {
            Some(r) => Ok(Some(self.blob(&r.new_sha)?)),
            None => Ok(None),
        }
    }

    /// Stages new content (None = delete) for `path`. A second write to the same file in the
    /// same conversation replaces the staged content; the base stays what was on disk first.
    pub fn stage(
        &self,
        conversation: &str,
        path: &Path,
        content: Option<&[u8]>,
    ) -> Result<Change, ShadowError> {
        let new_sha = content.map(|c| self.put_blob(c)).transpose()?;
        let at = now();
        let id = match self.staged_row(conversation, path)? {
            Some(existing) => {
                self.db.lock().unwrap().execute(
                    "UPDATE file_changes SET new_sha = ?1, updated_at = ?2 WHERE id = ?3",
                    params![new_sha, at, existing.id],
                )?;
                existing.id
            }
            None => {
                let disk = read_disk(path)?;
                let base_sha = disk
                    .as_ref()
                    .map(|(bytes, _)| self.put_blob(bytes))
                    .transpose()?;
                let base_mode = disk.as_ref().map(|(_, mode)| *mode);
                let db = self.db.lock().unwrap();
                db.execute(
                    "INSERT INTO file_changes (conversation, path, base_sha, base_mode, new_sha, status, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'staged', ?6, ?6)",
                    params![conversation, path.to_string_lossy(), base_sha, base_mode, new_sha, at],
                )?;
                db.last_insert_rowid()
            }
        };
        self.summary(&self.get(id)?)
    }

    /// The change's two sides: the base, and what was applied (settled) or is staged.
    fn sides(&self, r: &Row) -> Result<(Content, Content), ShadowError> {
        Ok((
            self.blob(&r.base_sha)?,
            self.blob(if r.applied_sha.is_some() {
                &r.applied_sha
            } else {
                &r.new_sha
            })?,
        ))
    }

    fn summary(&self, r: &Row) -> Result<Change, ShadowError> {
        let (base, new) = self.sides(r)?;
        Ok(summarize(r, &base, &new))
    }

    /// Changes, newest first; `status` and `conversation` filter.
    pub fn list(
        &self,
        status: Option<&str>,
        conversation: Option<&str>,
    ) -> Result<Vec<Change>, ShadowError> {
        let rows: Vec<Row> = {
            let db = self.db.lock().unwrap();
            cowork_store::all_rows(
                &db,
                &format!(
                    "SELECT {COLUMNS} FROM file_changes WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR conversation = ?2) ORDER BY id DESC LIMIT 500"
                ),
                params![status, conversation],
            )?
        };
        rows.iter().map(|r| self.summary(r)).collect()
    }

    /// The change's diff, hunk by hunk (for a settled change: what was applied).
    pub fn diff(&self, id: i64) -> Result<ChangeDiff, ShadowError> {
        let r = self.get(id)?;
        let (base, new) = self.sides(&r)?;
        let change = summarize(&r, &base, &new);
        let conflict = r.status == "staged"
            && read_disk(Path::new(&r.path))?.map(|(b, _)| sha(&b)) != r.base_sha;
        if change.binary {
            let size = |b: &Option<Vec<u8>>| {
                b.as_ref()
                    .map_or("absent".to_string(), |b| format!("{} bytes", b.len()))
            };
            return Ok(ChangeDiff {
                change,
                conflict,
                hunks: vec![],
                summary: Some(format!("binary file: {} → {}", size(&base), size(&new))),
            });
        }
        let old = String::from_utf8_lossy(base.as_deref().unwrap_or_default()).into_owned();
        let new = String::from_utf8_lossy(new.as_deref().unwrap_or_default()).into_owned();
        let diff = similar::TextDiff::from_lines(&old, &new);
        let hunks = diff
            .unified_diff()
            .context_radius(3)
            .iter_hunks()
            .enumerate()
            .map(|(i, hunk)| {
                let text = hunk.to_string();
                let header = text.lines().next().unwrap_or_default().to_string();
                let body = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
                Hunk {
                    number: i + 1,
                    header,
                    text: body,
                }
            })
            .collect();
        Ok(ChangeDiff {
            change,
            conflict,
            hunks,
            summary: None,
        })
    }

    /// The staged content with only the chosen hunks (1-based) applied to the base.
    fn partial(
        &self,
        id: i64,
        base: &[u8],
        new: &[u8],
        hunks: &[usize],
    ) -> Result<Vec<u8>, ShadowError> {
        if is_binary(base) || is_binary(new) {
            return Err(ShadowError::NotHunkable(id));
        }
        let (old, new) = (String::from_utf8_lossy(base), String::from_utf8_lossy(new));
        let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
        let groups = diff.grouped_ops(3);
        if let Some(&bad) = hunks.iter().find(|&&h| h == 0 || h > groups.len()) {
            return Err(ShadowError::NoSuchHunk {
                id,
                hunk: bad,
                count: groups.len(),
            });
        }
        // Every non-equal op lies in exactly one group; take the new side of the chosen ones.
        let chosen: std::collections::HashSet<(usize, usize)> = hunks
            .iter()
            .flat_map(|h| groups[h - 1].iter())
            .filter(|op| op.tag() != similar::DiffTag::Equal)
            .map(|op| (op.old_range().start, op.new_range().start))
            .collect();
        let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
        let mut out = String::with_capacity(old.len().max(new.len()));
        for op in diff.ops() {
            let take_new = op.tag() != similar::DiffTag::Equal
                && chosen.contains(&(op.old_range().start, op.new_range().start));
            let lines = if take_new {
                &new_lines[op.new_range()]
            } else {
                &old_lines[op.old_range()]
            };
            lines.iter().for_each(|l| out.push_str(l));
        }
        Ok(out.into_bytes())
    }

    /// The change `id`, which must be in `status`.
    fn in_status(&self, id: i64, status: &'static str) -> Result<Row, ShadowError> {
        let r = self.get(id)?;
        if r.status != status {
            return Err(ShadowError::WrongStatus {
                id,
                status: r.status,
                wanted: status,
            });
        }
        Ok(r)
    }

    /// The change `id` in `status`, its path and the file's bytes now, which must still be the
    /// ones it was `status` against (`expected`): anything else is a conflict, and nothing moves.
    #[allow(clippy::type_complexity)]
    fn unchanged_since(
        &self,
        id: i64,
        status: &'static str,
        expected: impl Fn(&Row) -> &Option<String>,
    ) -> Result<(Row, PathBuf, Option<(Vec<u8>, u32)>), ShadowError> {
        let r = self.in_status(id, status)?;
        let path = PathBuf::from(&r.path);
        let disk = read_disk(&path)?;
        if disk.as_ref().map(|(b, _)| sha(b)) != *expected(&r) {
            return Err(ShadowError::Conflict {
                id,
                path: r.path,
                when: status,
            });
        }
        Ok((r, path, disk))
    }

    /// Applies a staged change (all of it, or the chosen hunks) to the file on disk.
    pub fn apply(&self, id: i64, hunks: Option<&[usize]>) -> Result<Change, ShadowError> {
        let (r, path, disk) = self.unchanged_since(id, "staged", |r| &r.base_sha)?;
        let new = self.blob(&r.new_sha)?;
        let target = match (hunks, &new) {
            (Some(hunks), Some(new)) => Some(self.partial(
                id,
                disk.as_ref().map(|(b, _)| b.as_slice()).unwrap_or_default(),
                new,
                hunks,
            )?),
            _ => new,
        };
        let after = target.as_deref().map(|t| self.put_blob(t)).transpose()?;
        let mode = r.base_mode.unwrap_or(0o644);
        self.transition(
            &r,
            "apply",
            &path,
            r.base_sha.clone(),
            after.clone(),
            mode,
            target.as_deref(),
        )?;
        self.summary(&self.get(id)?)
    }

    /// Puts back the exact bytes and mode the file had before the change was applied.
    pub fn rollback(&self, id: i64) -> Result<Change, ShadowError> {
        let (r, path, _) = self.unchanged_since(id, "applied", |r| &r.applied_sha)?;
        let base = self.blob(&r.base_sha)?;
        let mode = r.base_mode.unwrap_or(0o644);
        self.transition(
            &r,
            "rollback",
            &path,
            r.applied_sha.clone(),
            r.base_sha.clone(),
            mode,
            base.as_deref(),
        )?;
        self.summary(&self.get(id)?)
    }

    pub fn reject(&self, id: i64) -> Result<Change, ShadowError> {
        self.in_status(id, "staged")?;
        self.db.lock().unwrap().execute(
            "UPDATE file_changes SET status = 'rejected', updated_at = ?1 WHERE id = ?2",
            params![now(), id],
        )?;
        self.summary(&self.get(id)?)
    }

    /// Journal, write, settle: the journal row is durable before the file changes.
    #[allow(clippy::too_many_arguments)]
    fn transition(
        &self,
        r: &Row,
        action: &str,
        path: &Path,
        before: Option<String>,
        after: Option<String>,
        mode: u32,
        bytes: Option<&[u8]>,
    ) -> Result<(), ShadowError> {
        check_still_direct(path)?;
        let journal = {
            let db = self.db.lock().unwrap();
            db.execute(
                "INSERT INTO file_journal (change_id, action, path, before_sha, after_sha, mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![r.id, action, r.path, before, after, mode],
            )?;
            db.last_insert_rowid()
        };
        match bytes {
            Some(bytes) => replace_file(path, bytes, mode, journal)?,
            None => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(path)(e)),
                _ => {}
            },
        }
        self.settle(journal, r.id, action, after.as_deref())
    }

    fn settle(
        &self,
        journal: i64,
        change: i64,
        action: &str,
        after: Option<&str>,
    ) -> Result<(), ShadowError> {
        let mut db = self.db.lock().unwrap();
        let tx = db.transaction()?;
        if action == "apply" {
            tx.execute("UPDATE file_changes SET status = 'applied', applied_sha = ?1, updated_at = ?2 WHERE id = ?3", params![after, now(), change])?;
        } else {
            tx.execute(
                "UPDATE file_changes SET status = 'rolled_back', updated_at = ?1 WHERE id = ?2",
                params![now(), change],
            )?;
        }
        tx.execute("UPDATE file_journal SET done = 1 WHERE id = ?1", [journal])?;
        tx.commit()?;
        Ok(())
    }

    /// Settles journal rows a crash left open: the disk says whether the write happened.
    pub fn recover(&self) -> Result<Vec<String>, ShadowError> {
        /// A journal row a crash may have left open.
        #[derive(serde::Deserialize)]
        struct Open {
            id: i64,
            change_id: i64,
            action: String,
            path: String,
            before_sha: Option<String>,
            after_sha: Option<String>,
        }
        let open: Vec<Open> = cowork_store::all_rows(
            &self.db.lock().unwrap(),
            "SELECT id, change_id, action, path, before_sha, after_sha FROM file_journal WHERE done = 0 ORDER BY id",
            [],
        )?;
        let mut notes = Vec::new();
        for Open {
            id: journal,
            change_id: change,
            action,
            path,
            before_sha: before,
            after_sha: after,
        } in open
        {
            let path = PathBuf::from(path);
            let _ = std::fs::remove_file(temp_name(&path, journal));
            let on_disk = read_disk(&path)?.map(|(b, _)| sha(&b));
            if on_disk == after {
                self.settle(journal, change, &action, after.as_deref())?;
                notes.push(format!(
                    "change {change}: the interrupted {action} of {} had completed; recorded",
                    path.display()
                ));
            } else {
                if on_disk != before {
                    notes.push(format!("change {change}: {} matches neither side of the interrupted {action}; someone else changed it", path.display()));
                } else {
                    notes.push(format!("change {change}: the interrupted {action} of {} had not happened; the file is unchanged", path.display()));
                }
                self.db
                    .lock()
                    .unwrap()
                    .execute("UPDATE file_journal SET done = 1 WHERE id = ?1", [journal])?;
            }
        }
        Ok(notes)
    }
}
