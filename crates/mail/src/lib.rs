//! The mail family: `email_check`, `email_read` (IMAP, `imap.rs`; decoding in `parse.rs`),
//! `email_send`, `email_reply`, `email_undo`, `email_outbox` (SMTP through the outbox with an
//! undo delay, `outbox.rs`). Accounts come from the store, credentials (a password or an OAuth
//! access token) from the app (`account.rs`). Incoming mail is untrusted: the reading tools are open-world, so their output
//! taints the conversation.

mod account;
mod imap;
mod outbox;
mod parse;
mod schema;
mod tools;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

use cowork_contract::{Credentials, DynTool, ToolProvider};
use cowork_store::{Store, StoreError};
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use outbox::OutboxRow;

/// How long a sent message waits in the outbox for Undo, unless settings say otherwise.
pub const DEFAULT_UNDO_DELAY: Duration = Duration::from_secs(10);

/// `mail` in settings.json.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MailSettings {
    /// How long a sent message can be taken back, 0–600 s (default 10 s).
    pub undo_seconds: Option<f64>,
}

impl cowork_store::settings::Section for MailSettings {
    const KEY: &'static str = "mail";
}

impl MailSettings {
    /// The undo delay; a value outside 0–600 s falls back to the default.
    pub fn undo_delay(&self) -> Duration {
        self.undo_seconds
            .filter(|s| (0.0..=600.0).contains(s))
            .map(Duration::from_secs_f64)
            .unwrap_or(DEFAULT_UNDO_DELAY)
    }
}

pub(crate) struct Shared {
    pub db: Mutex<Connection>,
    pub credentials: Arc<dyn Credentials>,
    pub undo_delay: Duration,
    /// Wakes the outbox worker when a message is queued.
    pub wake: tokio::sync::Notify,
    /// Headers of messages read, by (account, folder, uid): a reply's review names its
    /// recipients from these without a network round trip.
    pub read: Mutex<HashMap<(String, String, u32), parse::ReplyBasis>>,
    /// Outbox ids this process queued: what a one-shot CLI may take back on Ctrl+C.
    pub queued_here: Mutex<Vec<i64>>,
}

#[derive(Clone)]
pub struct MailTools {
    shared: Arc<Shared>,
}

impl MailTools {
    /// Opens the outbox; a send a crash interrupted is marked uncertain (see `outbox.rs`).
    pub fn new(
        store: &Store,
        credentials: Arc<dyn Credentials>,
        undo_delay: Duration,
    ) -> Result<Self, StoreError> {
        let conn = store.connect()?;
        match outbox::recover(&conn) {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                "{n} message(s) were being sent when the app stopped: marked uncertain"
            ),
            Err(e) => tracing::error!("outbox recovery: {e}"),
        }
        Ok(MailTools {
            shared: Arc::new(Shared {
                db: Mutex::new(conn),
                credentials,
                undo_delay,
                wake: tokio::sync::Notify::new(),
                read: Mutex::new(HashMap::new()),
                queued_here: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The outbox worker, for the caller to spawn on its runtime (it runs until dropped).
    pub fn outbox_worker(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        outbox::run(self.shared.clone())
    }

    /// Messages still waiting to leave (queued or being sent).
    pub fn pending(&self) -> usize {
        outbox::pending(&self.shared.db.lock().unwrap()).unwrap_or(0) as usize
    }

    /// The most recent outbox messages, newest first (the window's Undo bar reads it).
    pub fn outbox(&self, limit: usize) -> Result<Vec<OutboxRow>, String> {
        outbox::list(&self.shared.db.lock().unwrap(), limit)
            .map_err(|e| format!("database error: {e}"))
    }

    /// Messages this process queued that are still waiting: a one-shot CLI interrupted before
    /// the delay takes these back (through `email_undo`), never another process's mail.
    pub fn queued_here(&self) -> Vec<i64> {
        let ids = self.shared.queued_here.lock().unwrap().clone();
        let conn = self.shared.db.lock().unwrap();
        ids.into_iter()
            .filter(|id| {
                conn.query_row(
                    "SELECT state = 'queued' FROM mail_outbox WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap_or(false)
            })
            .collect()
    }
}

impl ToolProvider for MailTools {
    fn name(&self) -> &str {
        "mail"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.mail_tools()
    }
}

pub(crate) use cowork_store::tool_error as db_error;
