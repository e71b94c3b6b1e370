//! The SuspendCoordinator: calls that must wait for the person — a login wall, a 2FA code, a
//! question — end as *suspended* instead of failing or holding a thread. The suspension is a
//! row in the store (so it survives a restart); the window shows it with a Resume button and
//! `cowork tasks` lists, resumes and cancels it. Resuming runs the recorded call again, through
//! the scheduler and its review: a tool only has to be able to start over, which is also what
//! makes a resume after a crash safe.
//!
//! States: suspended → resumed | cancelled | timed_out. Each change is one conditional UPDATE,
//! so a Resume from the window and one from the CLI cannot both win.

use cowork_contract::SuspendRequest;
use cowork_store::{Store, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use std::sync::Mutex;
use std::time::Duration;

/// The call that stopped, as it is recorded to run again.
#[derive(Clone, Copy)]
pub struct Stopped<'a> {
    pub call_id: &'a str,
    /// Who made it (`Caller::as_str`): another app's call resumes as that app's.
    pub caller: &'a str,
    pub conversation: &'a str,
    pub tool: &'a str,
    pub args: &'a serde_json::Value,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Suspension {
    pub id: String,
    pub call_id: String,
    pub conversation: String,
    pub tool: String,
    pub args: serde_json::Value,
    pub reason: String,
    pub resume_when: serde_json::Value,
    pub state: String,
    pub created_at: String,
    pub deadline: String,
    pub settled_by: Option<String>,
    /// Who made the call (None: recorded before callers were): see [`Stopped::caller`].
    #[serde(default)]
    pub caller: Option<String>,
}

/// What the window hears: a call was suspended, or a suspension was settled.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SuspensionEvent {
    Suspended { suspension: Box<Suspension> },
    Settled { id: String, state: String },
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SuspendError {
    #[error("no suspended task {0:?} — `cowork tasks suspended` lists them")]
    NotFound(String),
    #[error("task {id} is {state}, not suspended: it cannot be {wanted}")]
    Settled {
        id: String,
        state: String,
        wanted: &'static str,
    },
    #[error("suspensions: {0}")]
    Store(String),
}

pub struct SuspendCoordinator {
    db: Mutex<Connection>,
    events: tokio::sync::broadcast::Sender<SuspensionEvent>,
}

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

const COLUMNS: &str = "id, call_id, conversation, tool, args, reason, resume_when, state, created_at, deadline, settled_by, caller";

fn row(r: &rusqlite::Row) -> rusqlite::Result<Suspension> {
    let json = |i: usize| -> rusqlite::Result<serde_json::Value> {
        Ok(serde_json::from_str(&r.get::<_, String>(i)?).unwrap_or_default())
    };
    Ok(Suspension {
        id: r.get(0)?,
        call_id: r.get(1)?,
        conversation: r.get(2)?,
        tool: r.get(3)?,
        args: json(4)?,
        reason: r.get(5)?,
        resume_when: json(6)?,
        state: r.get(7)?,
        created_at: r.get(8)?,
        deadline: r.get(9)?,
        settled_by: r.get(10)?,
        caller: r.get(11)?,
    })
}

impl SuspendCoordinator {
    pub fn open(store: &Store) -> Result<SuspendCoordinator, StoreError> {
        Ok(SuspendCoordinator {
            db: Mutex::new(store.connect()?),
            events: tokio::sync::broadcast::channel(64).0,
        })
    }

    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<SuspensionEvent> {
        self.events.subscribe()
    }

    fn store_err(e: rusqlite::Error) -> SuspendError {
        SuspendError::Store(e.to_string())
    }

    /// Records the suspension `id` of one call.
    pub fn record(
        &self,
        id: &str,
        call: &Stopped<'_>,
        request: &SuspendRequest,
    ) -> Result<(), SuspendError> {
        let Stopped {
            call_id,
            caller,
            conversation,
            tool,
            args,
        } = *call;
        let created = now();
        let deadline = created
            + chrono::Duration::from_std(request.timeout).unwrap_or(chrono::Duration::hours(1));
        self.db
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO suspensions (id, call_id, conversation, tool, args, reason, resume_when, state, created_at, deadline, caller)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'suspended', ?8, ?9, ?10)",
                params![id, call_id, conversation, tool, args.to_string(), request.reason, request.resume_when.to_string(), stamp(created), stamp(deadline), caller],
            )
            .map_err(Self::store_err)?;
        if let Ok(Some(suspension)) = self.get(id) {
            let _ = self.events.send(SuspensionEvent::Suspended {
                suspension: Box::new(suspension),
            });
        }
        Ok(())
    }

    pub fn get(&self, id: &str) -> Result<Option<Suspension>, SuspendError> {
        self.expire()?;
        let conn = self.db.lock().unwrap();
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM suspensions WHERE id = ?1"),
            [id],
            row,
        )
        .optional()
        .map_err(Self::store_err)
    }

    /// Open suspensions (all of them with `all`), oldest first.
    pub fn list(&self, all: bool) -> Result<Vec<Suspension>, SuspendError> {
        self.expire()?;
        let conn = self.db.lock().unwrap();
        let filter = if all { "" } else { "WHERE state = 'suspended'" };
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM suspensions {filter} ORDER BY created_at"
            ))
            .map_err(Self::store_err)?;
        let rows = stmt.query_map([], row).map_err(Self::store_err)?;
        rows.collect::<Result<_, _>>().map_err(Self::store_err)
    }

    /// Suspensions past their deadline become `timed_out` (checked whenever they are read).
    fn expire(&self) -> Result<(), SuspendError> {
        let conn = self.db.lock().unwrap();
        let mut stmt = conn
            .prepare("UPDATE suspensions SET state = 'timed_out', settled_at = ?1, settled_by = 'timeout' WHERE state = 'suspended' AND deadline < ?1 RETURNING id")
            .map_err(Self::store_err)?;
        let expired: Vec<String> = stmt
            .query_map([stamp(now())], |r| r.get(0))
            .map_err(Self::store_err)?
            .collect::<Result<_, _>>()
            .map_err(Self::store_err)?;
        for id in expired {
            let _ = self.events.send(SuspensionEvent::Settled {
                id,
                state: "timed_out".into(),
            });
        }
        Ok(())
    }

    /// Moves a suspended row to `state`; a row in any other state is an error naming it.
    fn settle(
        &self,
        id: &str,
        state: &str,
        by: &str,
        wanted: &'static str,
    ) -> Result<Suspension, SuspendError> {
        let current = self
            .get(id)?
            .ok_or_else(|| SuspendError::NotFound(id.to_string()))?;
        let changed = self
            .db
            .lock()
            .unwrap()
            .execute("UPDATE suspensions SET state = ?2, settled_at = ?3, settled_by = ?4 WHERE id = ?1 AND state = 'suspended'", params![id, state, stamp(now()), by])
            .map_err(Self::store_err)?;
        if changed == 0 {
            let state = self.get(id)?.map_or(current.state, |s| s.state);
            return Err(SuspendError::Settled {
                id: id.to_string(),
                state,
                wanted,
            });
        }
        let _ = self.events.send(SuspensionEvent::Settled {
            id: id.to_string(),
            state: state.to_string(),
        });
        Ok(Suspension {
            state: state.to_string(),
            settled_by: Some(by.to_string()),
            ..current
        })
    }

    /// Marks it resumed; the caller runs the recorded call again (`Scheduler::resume`).
    pub fn take_for_resume(&self, id: &str, by: &str) -> Result<Suspension, SuspendError> {
        self.settle(id, "resumed", by, "resumed")
    }

    pub fn cancel(&self, id: &str, by: &str) -> Result<Suspension, SuspendError> {
        self.settle(id, "cancelled", by, "cancelled")
    }

    /// More time for the person (from now).
    pub fn extend(&self, id: &str, by: Duration) -> Result<Suspension, SuspendError> {
        let deadline =
            stamp(now() + chrono::Duration::from_std(by).unwrap_or(chrono::Duration::hours(1)));
        let changed = self
            .db
            .lock()
            .unwrap()
            .execute(
                "UPDATE suspensions SET deadline = ?2 WHERE id = ?1 AND state = 'suspended'",
                params![id, deadline],
            )
            .map_err(Self::store_err)?;
        let current = self
            .get(id)?
            .ok_or_else(|| SuspendError::NotFound(id.to_string()))?;
        if changed == 0 {
            return Err(SuspendError::Settled {
                id: id.to_string(),
                state: current.state,
                wanted: "extended",
            });
        }
        Ok(current)
    }
}
