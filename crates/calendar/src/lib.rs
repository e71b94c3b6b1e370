//! The calendar family: `calendar_check`, `calendar_find_free_time`, `calendar_create`,
//! `calendar_update`, `calendar_delete`, `calendar_import`, `calendar_export`, `calendar_list`
//! `calendar_sync`, `calendar_changes` and `calendar_undo`, over a local calendar that always exists and CalDAV accounts mirrored
//! into the store (`sync.rs`). iCalendar text is the source of truth (`ics.rs`); range queries
//! read a derived index (`db.rs`).
//!
//! A separate crate from `personal` (where a calendar would otherwise sit) because it brings
//! iCalendar, recurrence and CalDAV dependencies the rest of that family does not need.

mod caldav;
mod db;
mod graph;
mod history;
mod ics;
#[cfg(test)]
mod reference;
mod reminders;
mod remote;
mod schema;
mod sync;
mod tools;
mod vtimezone;
mod zone;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

use cowork_contract::{Credential, Credentials, DynTool, ToolError, ToolProvider};
use cowork_store::{Store, StoreError, accounts};
use remote::Remote;
use rusqlite::Connection;
use std::sync::{Arc, Mutex};

pub(crate) type Db = Arc<Mutex<Connection>>;

pub use reminders::{Reminder, Reminders};
pub use sync::SyncReport;

/// Calendars whose mirror is older than this are synced before they are read.
const STALE_AFTER_SECS: i64 = 60;

pub(crate) struct Shared {
    pub db: Db,
    pub credentials: Arc<dyn Credentials>,
    /// One sync at a time: two interleaved syncs would push the same change twice.
    pub sync_lock: tokio::sync::Mutex<()>,
}

#[derive(Clone)]
pub struct CalendarTools {
    shared: Arc<Shared>,
}

impl CalendarTools {
    /// `credentials` signs in to CalDAV servers (passwords and OAuth tokens, kept by the app).
    pub fn new(store: &Store, credentials: Arc<dyn Credentials>) -> Result<Self, StoreError> {
        let mut conn = store.connect()?;
        if let Err(e) = db::rebuild_if_asked(&mut conn) {
            tracing::warn!(
                "calendar: the index rebuild did not finish (it is retried at the next start): {e}"
            );
        }
        let db = Arc::new(Mutex::new(conn));
        Ok(CalendarTools {
            shared: Arc::new(Shared {
                db,
                credentials,
                sync_lock: tokio::sync::Mutex::new(()),
            }),
        })
    }
}

/// Drops the local mirror of a removed account's calendars (the server keeps its copy).
pub fn forget_account(store: &Store, account: &str) -> Result<(), String> {
    let mut conn = store.connect().map_err(|e| e.to_string())?;
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    history::forget(&tx, account).map_err(|e| e.to_string())?;
    for table in ["calendar_index", "calendar_objects"] {
        tx.execute(&format!("DELETE FROM {table} WHERE calendar IN (SELECT id FROM calendars WHERE account = ?1)"), [account]).map_err(|e| e.to_string())?;
    }
    tx.execute("DELETE FROM calendars WHERE account = ?1", [account])
        .map_err(|e| e.to_string())?;
    tx.commit().map_err(|e| e.to_string())
}

impl ToolProvider for CalendarTools {
    fn name(&self) -> &str {
        "calendar"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        [
            self.read_tools(),
            self.write_tools(),
            self.transfer_tools(),
            self.account_tools(),
            self.history_tools(),
        ]
        .concat()
    }
}

pub(crate) use cowork_store::tool_error as db_error;

/// The accounts whose calendars are synced here.
pub(crate) fn calendar_accounts(conn: &Connection) -> Vec<accounts::Account> {
    accounts::list(conn, None)
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a.config.is_calendar())
        .collect()
}

impl Shared {
    /// A logged-in client for a calendar account, and the URL it was configured with.
    async fn client(&self, account: &str) -> Result<(Remote, url::Url), ToolError> {
        let found = accounts::get(&self.db.lock().unwrap(), account).map_err(db_error)?;
        let Some(found) = found.filter(|a| a.config.is_calendar()) else {
            return Err(ToolError::not_configured(
                format!("no calendar account {account:?}"),
                format!(
                    "add it in Settings → Accounts, or `cowork account add {account} --caldav URL --user NAME`"
                ),
            ));
        };
        accounts::check_transport(&found.name, &found.config).map_err(ToolError::failed)?;
        let credential = self
            .credentials
            .credential(account)
            .await
            .map_err(|e| e.into_tool_error(None))?;
        let failed = |e: caldav::DavError| ToolError::failed(e.to_string());
        let parse = |url: &str| {
            url::Url::parse(url)
                .map_err(|e| ToolError::failed(format!("account {account:?}: URL {url:?}: {e}")))
        };
        match (found.config, credential) {
            (accounts::AccountConfig::MicrosoftGraph { url, .. }, Credential::Bearer(token)) => {
                let url = parse(&url)?;
                let client = graph::Client::new(account, token, &url).map_err(failed)?;
                Ok((Remote::Graph(client), url))
            }
            (accounts::AccountConfig::Caldav { url, username, .. }, credential) => {
                let url = parse(&url)?;
                let client =
                    caldav::Client::new(account, &username, credential, &url).map_err(failed)?;
                Ok((Remote::Dav(client), url))
            }
            _ => Err(ToolError::failed(format!(
                "account {account:?}: Microsoft Graph takes a sign-in, not a password"
            ))),
        }
    }

    /// Discovers and syncs every calendar of one account.
    pub async fn sync_account(&self, account: &str) -> Result<Vec<SyncReport>, ToolError> {
        let _one_at_a_time = self.sync_lock.lock().await;
        let (client, url) = self.client(account).await?;
        let calendars = sync::discover(&self.db, &client, account, &url)
            .await
            .map_err(|e| match e {
                caldav::DavError::Transient(m) => {
                    ToolError::transient(format!("account {account:?}: {m}"))
                }
                other => ToolError::failed(format!("account {account:?}: {other}")),
            })?;
        let mut reports = Vec::new();
        for (id, url) in calendars {
            reports.push(sync::sync_calendar(&self.db, &client, &id, &url).await);
        }
        Ok(reports)
    }

    /// Syncs one known calendar (after a write to it): no discovery, no other calendars.
    pub async fn sync_one(&self, calendar: &db::CalendarInfo) -> Result<SyncReport, ToolError> {
        let Some(account) = &calendar.account else {
            return Err(ToolError::failed(format!(
                "{} is a local calendar",
                calendar.id
            )));
        };
        let _one_at_a_time = self.sync_lock.lock().await;
        let (client, _) = self.client(account).await?;
        let stored: Option<String> = self
            .db
            .lock()
            .unwrap()
            .query_row(
                "SELECT url FROM calendars WHERE id = ?1",
                [&calendar.id],
                |r| r.get(0),
            )
            .map_err(db_error)?;
        let url = stored
            .and_then(|u| url::Url::parse(&u).ok())
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "{} has no server URL: run calendar_sync",
                    calendar.id
                ))
            })?;
        Ok(sync::sync_calendar(&self.db, &client, &calendar.id, &url).await)
    }

    /// Syncs the CalDAV accounts behind `calendars` (all accounts when `None`) whose mirror is
    /// stale or not discovered yet. Failures do not stop a read: they come back as notes
    /// ("could not sync …; showing the last synced data").
    pub async fn refresh(&self, calendars: Option<&[db::CalendarInfo]>) -> Vec<String> {
        let now = chrono::Utc::now();
        let is_stale = |c: &db::CalendarInfo| {
            c.last_sync
                .as_deref()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .is_none_or(|t| {
                    (now - t.with_timezone(&chrono::Utc)).num_seconds() > STALE_AFTER_SECS
                })
        };
        let mut stale: Vec<String> = match calendars {
            Some(list) => list
                .iter()
                .filter(|c| is_stale(c))
                .filter_map(|c| c.account.clone())
                .collect(),
            None => {
                let (accounts, known) = {
                    let conn = self.db.lock().unwrap();
                    (
                        calendar_accounts(&conn),
                        db::calendars(&conn).unwrap_or_default(),
                    )
                };
                accounts
                    .into_iter()
                    .map(|a| a.name)
                    .filter(|name| {
                        let mine: Vec<&db::CalendarInfo> = known
                            .iter()
                            .filter(|c| c.account.as_deref() == Some(name))
                            .collect();
                        mine.is_empty() || mine.iter().any(|c| is_stale(c))
                    })
                    .collect()
            }
        };
        stale.sort();
        stale.dedup();
        let mut notes = Vec::new();
        for account in stale {
            match self.sync_account(&account).await {
                Ok(reports) => notes.extend(reports.into_iter().filter_map(|r| {
                    let mut parts: Vec<String> = r.conflicts.clone();
                    if let Some(e) = r.error {
                        parts.push(format!(
                            "{}: could not sync ({e}); showing the last synced data",
                            r.calendar
                        ));
                    }
                    (!parts.is_empty()).then(|| parts.join("; "))
                })),
                Err(e) => notes.push(format!(
                    "{account}: could not sync ({e}); showing the last synced data"
                )),
            }
        }
        notes
    }
}
