//! The outbox: `email_send` and `email_reply` build the message once and commit it here with a
//! send time `undo delay` ahead; the worker sends what is due over SMTP (`lettre`).
//!
//! Each state change is committed before the next step: queued → sending → sent | failed, or
//! queued → cancelled (undo). A crash while queued loses nothing and sends once after restart.
//! A crash in the middle of the SMTP exchange leaves `sending`; on the next start that becomes
//! `uncertain` and is shown, never resent blindly (a resend could duplicate the mail).

use crate::Shared;
use crate::account::{self, MailAccount};
use cowork_contract::{Credential, CredentialError, ToolError};
use cowork_store::accounts::Security;
use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use rusqlite::{Connection, OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

const MAX_ATTEMPTS: i64 = 5;

pub fn timestamp(at: chrono::DateTime<chrono::Utc>) -> String {
    // Fixed width, so text order is time order in SQL.
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Queued {
    /// The outbox id: `email_undo` takes it.
    pub id: i64,
    pub message_id: String,
    pub recipients: Vec<String>,
    pub subject: String,
    /// When it leaves, unless undone before (RFC 3339).
    pub send_at: String,
}

pub struct NewMessage {
    pub account: String,
    pub message_id: String,
    pub sender: String,
    pub recipients: Vec<String>,
    pub subject: String,
    pub raw: Vec<u8>,
    pub conversation: String,
}

pub fn enqueue(
    conn: &Connection,
    message: NewMessage,
    delay: Duration,
) -> rusqlite::Result<Queued> {
    let now = chrono::Utc::now();
    let send_at = now + chrono::Duration::from_std(delay).unwrap_or_default();
    let id = conn.query_row(
        "INSERT INTO mail_outbox (account, message_id, sender, recipients, subject, raw, send_after, state, conversation, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8, ?9, ?9) RETURNING id",
        params![
            message.account,
            message.message_id,
            message.sender,
            serde_json::to_string(&message.recipients).expect("strings serialize"),
            message.subject,
            message.raw,
            timestamp(send_at),
            message.conversation,
            timestamp(now)
        ],
        |r| r.get(0),
    )?;
    Ok(Queued {
        id,
        message_id: message.message_id,
        recipients: message.recipients,
        subject: message.subject,
        send_at: send_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}

/// Undo: only a message still waiting can be taken back.
pub fn cancel(conn: &Connection, id: i64) -> Result<String, ToolError> {
    let changed = conn
        .execute("UPDATE mail_outbox SET state = 'cancelled', updated_at = ?2 WHERE id = ?1 AND state = 'queued'", params![id, timestamp(chrono::Utc::now())])
        .map_err(crate::db_error)?;
    if changed == 1 {
        return Ok("cancelled".into());
    }
    let state: Option<String> = conn
        .query_row(
            "SELECT state FROM mail_outbox WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )
        .optional()
        .map_err(crate::db_error)?;
    match state.as_deref() {
        None => Err(ToolError::invalid(format!(
            "no outbox message {id}: see email_outbox"
        ))),
        Some("cancelled") => Ok("cancelled".into()),
        Some(other) => Err(ToolError::failed(format!(
            "too late to undo: the message is already {other}"
        ))),
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OutboxRow {
    pub id: i64,
    pub account: String,
    // JSON text in its row; a list on the wire.
    #[serde(deserialize_with = "cowork_store::json_text")]
    #[cfg_attr(feature = "specta", specta(type = Vec<String>))]
    pub recipients: Vec<String>,
    pub subject: String,
    /// queued | sending | sent | failed | cancelled | uncertain
    pub state: String,
    pub send_after: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub fn list(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<OutboxRow>> {
    cowork_store::all_rows(
        conn,
        "SELECT id, account, recipients, subject, state, send_after, error FROM mail_outbox ORDER BY id DESC LIMIT ?1",
        params![limit as i64],
    )
}

/// At start: a send interrupted by a crash is marked uncertain rather than repeated.
pub fn recover(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE mail_outbox SET state = 'uncertain', error = 'the app stopped while this was being sent: it may have left — check the Sent folder, and send again if it is not there' WHERE state = 'sending'",
        [],
    )
}

/// Messages waiting to leave.
pub fn pending(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT count(*) FROM mail_outbox WHERE state IN ('queued', 'sending')",
        [],
        |r| r.get(0),
    )
}

#[derive(Deserialize)]
struct Due {
    id: i64,
    account: String,
    sender: String,
    #[serde(deserialize_with = "cowork_store::json_text")]
    recipients: Vec<String>,
    raw: Vec<u8>,
    attempts: i64,
}

/// Claims the next due message (queued → sending, committed), if any; else when the next is due.
fn claim(conn: &Connection) -> rusqlite::Result<Result<Due, Option<String>>> {
    let now = timestamp(chrono::Utc::now());
    loop {
        let next: Option<(i64, String)> = conn
            .query_row("SELECT id, send_after FROM mail_outbox WHERE state = 'queued' ORDER BY send_after LIMIT 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((id, send_after)) = next else {
            return Ok(Err(None));
        };
        if send_after > now {
            return Ok(Err(Some(send_after)));
        }
        // Conditional, so an undo that won the race keeps the message.
        if conn.execute("UPDATE mail_outbox SET state = 'sending', attempts = attempts + 1, updated_at = ?2 WHERE id = ?1 AND state = 'queued'", params![id, now])? == 1 {
            return conn
                .query_row(
                    "SELECT id, account, sender, recipients, raw, attempts FROM mail_outbox WHERE id = ?1",
                    params![id],
                    cowork_store::from_row,
                )
                .map(Ok);
        }
    }
}

pub async fn smtp_send(
    account: &MailAccount,
    sender: &str,
    recipients: &[String],
    raw: &[u8],
) -> Result<(), (bool, String)> {
    let host = account.smtp_host.as_str();
    let builder = match account.smtp_security {
        Security::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(host),
        Security::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host),
        Security::Plain => Ok(AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(
            host,
        )),
    }
    .map_err(|e| (false, format!("SMTP {host}: {e}")))?;
    let (secret, mechanisms) = match &account.credential {
        Credential::Password(p) => (p, vec![Mechanism::Plain, Mechanism::Login]),
        Credential::Bearer(token) => (token, vec![Mechanism::Xoauth2]),
    };
    let transport = builder
        .port(account.smtp_port)
        .credentials(Credentials::new(account.username.clone(), secret.clone()))
        .authentication(mechanisms)
        .timeout(Some(Duration::from_secs(30)))
        .build();
    let parse = |a: &str| {
        a.parse::<lettre::Address>()
            .map_err(|e| (false, format!("address {a:?}: {e}")))
    };
    let to = recipients
        .iter()
        .map(|r| parse(r))
        .collect::<Result<Vec<_>, _>>()?;
    let envelope =
        Envelope::new(Some(parse(sender)?), to).map_err(|e| (false, format!("envelope: {e}")))?;
    transport.send_raw(&envelope, raw).await.map(|_| ()).map_err(|e| {
        let text = if e.to_string().contains("535") || e.to_string().to_lowercase().contains("authentication") {
            format!("the SMTP server {host} refused the login for {:?} ({e}) — check the password with `cowork account test {}`", account.username, account.name)
        } else {
            format!("SMTP {host}:{}: {e}", account.smtp_port)
        };
        (e.is_transient() || e.is_timeout() || (!e.is_permanent() && !text.contains("refused the login")), text)
    })
}

/// Sends everything due; returns when the next message is due (or `None` when none waits).
pub async fn send_due(shared: &Shared) -> Option<chrono::DateTime<chrono::Utc>> {
    loop {
        let claimed = {
            let conn = shared.db.lock().unwrap();
            claim(&conn)
        };
        let due = match claimed {
            Ok(Ok(due)) => due,
            Ok(Err(next)) => {
                return next
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                    .map(|t| t.with_timezone(&chrono::Utc));
            }
            Err(e) => {
                tracing::error!("outbox: {e}");
                return Some(chrono::Utc::now() + chrono::Duration::seconds(5));
            }
        };
        let loaded = account::load(shared, &due.account).await;
        let result = match &loaded {
            Ok(account) => smtp_send(account, &due.sender, &due.recipients, &due.raw).await,
            // Signed out: the message waits (retried as the person may sign in meanwhile).
            Err(account::LoadError::Credential(e)) => Err((
                matches!(
                    e,
                    CredentialError::NeedsSignIn(_) | CredentialError::Unreachable(_)
                ),
                e.to_string(),
            )),
            Err(account::LoadError::Tool(e)) => Err((false, e.to_string())),
        };
        let now = chrono::Utc::now();
        let update = {
            let conn = shared.db.lock().unwrap();
            match &result {
                Ok(()) => conn.execute("UPDATE mail_outbox SET state = 'sent', error = NULL, updated_at = ?2 WHERE id = ?1", params![due.id, timestamp(now)]),
                Err((true, e)) if due.attempts < MAX_ATTEMPTS => {
                    let retry = now + chrono::Duration::seconds(5 << due.attempts.min(6));
                    conn.execute(
                        "UPDATE mail_outbox SET state = 'queued', send_after = ?2, error = ?3, updated_at = ?4 WHERE id = ?1",
                        params![due.id, timestamp(retry), e, timestamp(now)],
                    )
                }
                Err((_, e)) => conn.execute("UPDATE mail_outbox SET state = 'failed', error = ?2, updated_at = ?3 WHERE id = ?1", params![due.id, e, timestamp(now)]),
            }
        };
        if let Err(e) = update {
            tracing::error!(id = due.id, "outbox: cannot record the send result: {e}");
        }
        match (&result, &loaded) {
            (Ok(()), Ok(account)) => {
                tracing::info!(id = due.id, recipients = due.recipients.len(), "mail sent");
                if let Err(e) = crate::imap::append_sent(account, &due.raw).await {
                    tracing::warn!(id = due.id, "sent, but not filed into Sent: {e}");
                }
            }
            (Err((_, e)), _) => tracing::warn!(id = due.id, "mail not sent: {e}"),
            _ => {}
        }
    }
}

/// The worker: sends what is due, sleeps until the next send time or a wake-up.
pub async fn run(shared: std::sync::Arc<Shared>) {
    loop {
        let next = send_due(&shared).await;
        let wait = next
            .map(|t| (t - chrono::Utc::now()).to_std().unwrap_or_default())
            .unwrap_or(Duration::from_secs(3600))
            .min(Duration::from_secs(3600));
        tokio::select! {
            _ = tokio::time::sleep(wait + Duration::from_millis(5)) => {}
            _ = shared.wake.notified() => {}
        }
    }
}
