//! Workspace trust. A folder's `.cowork/settings.json` arrives with the folder (a clone, a
//! download, a file the assistant wrote), so on its own it may only narrow: deny and ask rules
//! apply, allow rules and a wider mode do not. The person trusts a folder after seeing exactly
//! what its settings would allow and what its repository would run; the trust is pinned to both
//! ([`digest`]), so any change — by a tool, a `git pull`, anyone — makes it untrusted again
//! until the person looks.

use super::{PolicyError, db_err};
use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Mutex;

/// What trust is pinned to: the settings file's bytes (or its absence) and the programs the
/// folder's repository configured to run, as the trust review listed them — so a hook or a
/// filter added after the person looked makes the folder untrusted again. A folder with no such
/// programs keeps the settings-only digest (pins made before programs were pinned stay valid).
pub fn digest(bytes: Option<&[u8]>, programs: &[String]) -> String {
    let settings = match bytes {
        Some(bytes) => hex::encode(Sha256::digest(bytes)),
        None => "absent".into(),
    };
    if programs.is_empty() {
        return settings;
    }
    let mut hasher = Sha256::new();
    hasher.update(settings.as_bytes());
    for program in programs {
        // Length-prefixed: no two lists hash alike by moving a separator.
        hasher.update((program.len() as u64).to_le_bytes());
        hasher.update(program.as_bytes());
    }
    hex::encode(hasher.finalize())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// The person trusts this folder as its settings are now.
    Trusted,
    /// Never trusted: its settings only narrow.
    Untrusted,
    /// Trusted once, but its settings changed since: they only narrow until trusted again.
    Changed,
}

pub struct TrustStore {
    conn: Mutex<Connection>,
}

impl TrustStore {
    pub fn open(store: &Store) -> Result<Self, PolicyError> {
        Ok(TrustStore {
            conn: Mutex::new(store.connect().map_err(db_err)?),
        })
    }

    pub fn state(&self, root: &Path, current: &str) -> TrustState {
        let pinned: Option<String> = self
            .conn
            .lock()
            .unwrap()
            // Cached: the review reads it for every call in a workspace.
            .prepare_cached("SELECT settings_sha256 FROM workspace_trust WHERE root = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([root.to_string_lossy()], |r| r.get(0))
                    .optional()
            })
            .unwrap_or_else(|e| {
                tracing::error!("reading workspace trust: {e}");
                None
            });
        match pinned {
            Some(pin) if pin == current => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Untrusted,
        }
    }

    pub fn trust(&self, root: &Path, digest: &str) -> Result<(), PolicyError> {
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO workspace_trust (root, settings_sha256, trusted_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(root) DO UPDATE SET settings_sha256 = excluded.settings_sha256, trusted_at = excluded.trusted_at",
                params![root.to_string_lossy(), digest, chrono::Utc::now().to_rfc3339()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    pub fn untrust(&self, root: &Path) -> Result<bool, PolicyError> {
        self.conn
            .lock()
            .unwrap()
            .execute(
                "DELETE FROM workspace_trust WHERE root = ?1",
                [root.to_string_lossy()],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Every trusted folder with when.
    pub fn list(&self) -> Result<Vec<(String, String)>, PolicyError> {
        let conn = self.conn.lock().unwrap();
        let mut stmt = conn
            .prepare("SELECT root, trusted_at FROM workspace_trust ORDER BY root")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<Result<_, _>>().map_err(db_err)
    }
}
