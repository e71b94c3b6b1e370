//! What Cowork changed in calendars, each change with the object's text before and after, so
//! `calendar_undo` can put the earlier version back (and undoing an undo does it again). Written
//! in the same transaction as the object, so the history never misses a committed change.

use cowork_store::{all_rows, one_row};
use rusqlite::{Connection, Transaction, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Older changes are dropped beyond this many, or beyond this much text: a history for undo,
/// not an archive (and an event's text can be large: an imported object with attachments).
const KEPT: i64 = 2_000;
const KEPT_BYTES: i64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Created,
    Updated,
    Deleted,
    /// Took back an earlier change (`undoes`).
    Undid,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Deleted => "deleted",
            Action::Undid => "undid",
        }
    }
}

/// One change as recorded.
#[derive(Clone, Debug, Deserialize)]
pub struct Change {
    pub id: i64,
    pub at: String,
    pub conversation: String,
    pub action: Action,
    pub calendar: String,
    pub uid: String,
    pub title: String,
    /// Not read for listings (`changes`): they are an event's whole text.
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
    pub undoes: Option<i64>,
    pub undone_by: Option<i64>,
}

const LISTED: &str = "id, at, conversation, action, calendar, uid, title, undoes, undone_by";

/// What a write is, for its history row.
pub struct Record<'a> {
    pub action: Action,
    pub conversation: &'a str,
    pub title: &'a str,
    pub undoes: Option<i64>,
}

impl<'a> Record<'a> {
    /// A tool's own change, in the conversation that asked for it.
    pub fn new(action: Action, ctx: &'a cowork_contract::ToolContext, title: &'a str) -> Self {
        Record {
            action,
            conversation: &ctx.conversation_id,
            title,
            undoes: None,
        }
    }
}

/// Records a change of (`calendar`, `uid`) from `before` to `after`; its id.
pub fn record(
    tx: &Transaction<'_>,
    what: &Record<'_>,
    calendar: &str,
    uid: &str,
    (before, after): (Option<&str>, Option<&str>),
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO calendar_changes (at, conversation, action, calendar, uid, title, before, after, undoes, bytes)
         VALUES (strftime('%Y-%m-%dT%H:%M:%SZ','now'), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![what.conversation, what.action.as_str(), calendar, uid, what.title, before, after, what.undoes,
                i64::try_from(before.map_or(0, str::len) + after.map_or(0, str::len)).unwrap_or(i64::MAX)],
    )?;
    let id = tx.last_insert_rowid();
    if let Some(undone) = what.undoes {
        tx.execute(
            "UPDATE calendar_changes SET undone_by = ?1 WHERE id = ?2",
            params![id, undone],
        )?;
    }
    prune(tx, id, (KEPT, KEPT_BYTES))?;
    Ok(id)
}

/// Drops what is older than the newest `rows` changes or than `bytes` of their text; the
/// newest change (`id`) always stays, whatever its size.
fn prune(tx: &Transaction<'_>, id: i64, (rows, bytes): (i64, i64)) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM calendar_changes WHERE id <= ?1",
        params![id - rows],
    )?;
    tx.execute(
        "DELETE FROM calendar_changes WHERE id IN (
           SELECT id FROM (SELECT id, SUM(bytes) OVER (ORDER BY id DESC) AS newer FROM calendar_changes)
           WHERE newer > ?1 AND id < ?2)",
        params![bytes, id],
    )?;
    Ok(())
}

pub fn change(conn: &Connection, id: i64) -> rusqlite::Result<Option<Change>> {
    one_row(
        conn,
        &format!("SELECT {LISTED}, before, after FROM calendar_changes WHERE id = ?1"),
        [id],
    )
}

/// The newest changes first, without their texts; only those of `calendars` when given.
pub fn changes(
    conn: &Connection,
    calendars: Option<&[String]>,
    limit: usize,
) -> rusqlite::Result<Vec<Change>> {
    let wanted = calendars.map(|c| serde_json::to_string(c).unwrap_or_default());
    all_rows(
        conn,
        &format!(
            "SELECT {LISTED} FROM calendar_changes
             WHERE ?1 IS NULL OR calendar IN (SELECT value FROM json_each(?1))
             ORDER BY id DESC LIMIT ?2"
        ),
        params![wanted, i64::try_from(limit).unwrap_or(i64::MAX)],
    )
}

/// Later changes of the same event that are still in effect: what must be undone first.
pub fn later_changes(conn: &Connection, of: &Change) -> rusqlite::Result<Vec<i64>> {
    #[derive(Deserialize)]
    struct Id {
        id: i64,
    }
    let rows: Vec<Id> = all_rows(
        conn,
        "SELECT id FROM calendar_changes
         WHERE calendar = ?1 AND uid = ?2 AND id > ?3 AND undone_by IS NULL
         ORDER BY id DESC",
        params![of.calendar, of.uid, of.id],
    )?;
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Drops the history of calendars that are gone (a removed account's).
pub fn forget(tx: &Transaction<'_>, account: &str) -> rusqlite::Result<usize> {
    tx.execute(
        "DELETE FROM calendar_changes WHERE calendar IN (SELECT id FROM calendars WHERE account = ?1)",
        [account],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_keeps_the_newest_changes_within_its_row_and_text_budgets() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            cowork_store::Store::open(cowork_store::DataDir::at(dir.path()), &[&crate::SCHEMA])
                .unwrap();
        let mut conn = store.connect().unwrap();
        let tx = conn.transaction().unwrap();
        let what = Record {
            action: Action::Updated,
            conversation: "c",
            title: "t",
            undoes: None,
        };
        let text = "x".repeat(1_000);
        let mut ids = Vec::new();
        for _ in 0..6 {
            let texts = (Some(text.as_str()), Some(text.as_str()));
            ids.push(record(&tx, &what, "local", "u", texts).unwrap());
        }
        let kept = |tx: &Transaction<'_>| -> Vec<i64> {
            let mut all: Vec<i64> = changes(tx, None, 100)
                .unwrap()
                .iter()
                .map(|c| c.id)
                .collect();
            all.sort();
            all
        };
        assert_eq!(kept(&tx), ids, "within both budgets");
        prune(&tx, ids[5], (4, i64::MAX)).unwrap();
        assert_eq!(kept(&tx), ids[2..], "the newest four rows");
        prune(&tx, ids[5], (100, 5_000)).unwrap();
        assert_eq!(
            kept(&tx),
            ids[4..],
            "the newest 4,000 bytes (2,000 a change)"
        );
        prune(&tx, ids[5], (100, 10)).unwrap();
        assert_eq!(kept(&tx), ids[5..], "the newest stays, whatever its size");
    }
}
