//! Conversations and their messages, persisted in the store: a chat survives a restart.

use crate::provider::{Message, Part, Role};
use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    pub messages: i64,
}

#[derive(Clone)]
pub struct Conversations {
    conn: Arc<Mutex<Connection>>,
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

type Result<T> = std::result::Result<T, String>;

fn err(e: impl std::fmt::Display) -> String {
    format!("conversation store: {e}")
}

impl Conversations {
    pub fn open(store: &Store) -> Result<Conversations> {
        Ok(Conversations {
            conn: Arc::new(Mutex::new(store.connect().map_err(err)?)),
        })
    }

    pub fn create(&self, title: &str) -> Result<String> {
        let id = uuid::Uuid::now_v7().to_string();
        self.ensure(&id, title)?;
        Ok(id)
    }

    /// Creates the conversation if it does not exist yet (ids chosen by the caller).
    pub fn ensure(&self, id: &str, title: &str) -> Result<()> {
        let now = now();
        self.conn
            .lock()
            .unwrap()
            .execute("INSERT OR IGNORE INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)", params![id, title, now])
            .map_err(err)?;
        Ok(())
    }

    pub fn list(&self, search: Option<&str>) -> Result<Vec<ConversationSummary>> {
        let conn = self.conn.lock().unwrap();
        let pattern = search.map(|s| format!("%{}%", s.replace('%', "\\%").replace('_', "\\_")));
        let mut stmt = conn
            .prepare(
                "SELECT c.id, c.title, c.created_at, c.updated_at, (SELECT COUNT(*) FROM messages m WHERE m.conversation = c.id)
                 FROM conversations c
                 WHERE ?1 IS NULL OR c.title LIKE ?1 ESCAPE '\\'
                    OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation = c.id AND m.parts LIKE ?1 ESCAPE '\\')
                 ORDER BY c.updated_at DESC",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map(params![pattern], |r| {
                Ok(ConversationSummary {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    created_at: r.get(2)?,
                    updated_at: r.get(3)?,
                    messages: r.get(4)?,
                })
            })
            .map_err(err)?;
        rows.collect::<std::result::Result<_, _>>().map_err(err)
    }

    pub fn messages(&self, id: &str) -> Result<Vec<Message>> {
        let conn = self.conn.lock().unwrap();
        let mut stmt = conn
            .prepare_cached("SELECT role, parts FROM messages WHERE conversation = ?1 ORDER BY id")
            .map_err(err)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (role, parts) = row.map_err(err)?;
            let role = if role == "assistant" {
                Role::Assistant
            } else {
                Role::User
            };
            let mut parts: Vec<Part> = serde_json::from_str(&parts).map_err(err)?;
            parts.iter_mut().for_each(upgrade_legacy_result);
            out.push(Message { role, parts });
        }
        Ok(out)
    }

    pub fn append(&self, id: &str, message: &Message) -> Result<()> {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let parts = serde_json::to_string(&message.parts).map_err(err)?;
        let now = now();
        let mut conn = self.conn.lock().unwrap();
        let tx = conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO messages (conversation, role, parts, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![id, role, parts, now],
        )
        .map_err(err)?;
        tx.execute(
            "UPDATE conversations SET updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// The folder the conversation works in, if one was opened for it.
    pub fn workspace(&self, id: &str) -> Result<Option<std::path::PathBuf>> {
        self.conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT workspace FROM conversations WHERE id = ?1",
                params![id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(|w| w.flatten().map(std::path::PathBuf::from))
            .map_err(err)
    }

    pub fn set_workspace(&self, id: &str, folder: Option<&std::path::Path>) -> Result<bool> {
        let folder = folder.map(|f| f.to_string_lossy().into_owned());
        self.conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE conversations SET workspace = ?2 WHERE id = ?1",
                params![id, folder],
            )
            .map(|n| n > 0)
            .map_err(err)
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<bool> {
        let n = self
            .conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE conversations SET title = ?2 WHERE id = ?1",
                params![id, title],
            )
            .map_err(err)?;
        Ok(n == 1)
    }

    pub fn delete(&self, id: &str) -> Result<bool> {
        let n = self
            .conn
            .lock()
            .unwrap()
            .execute("DELETE FROM conversations WHERE id = ?1", [id])
            .map_err(err)?;
        Ok(n == 1)
    }

    pub fn loaded_tools(&self, id: &str) -> Result<Vec<String>> {
        let json: Option<String> = self
            .conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT loaded_tools FROM conversations WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        Ok(json
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default())
    }

    pub fn add_loaded_tools(&self, id: &str, names: &[String]) -> Result<()> {
        let mut loaded = self.loaded_tools(id)?;
        for name in names {
            if !loaded.contains(name) {
                loaded.push(name.clone());
            }
        }
        let json = serde_json::to_string(&loaded).map_err(err)?;
        self.conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE conversations SET loaded_tools = ?2 WHERE id = ?1",
                params![id, json],
            )
            .map_err(err)?;
        Ok(())
    }
}

/// Rows written before `Part::ToolResult` carried its suspension as data said it only in the
/// text (`suspended: … cowork tasks resume <id>`): read that once, here, so a conversation
/// from then still goes on after its resume. New rows never need it.
fn upgrade_legacy_result(part: &mut Part) {
    if let Part::ToolResult {
        content,
        is_error: true,
        suspended: suspended @ None,
        ..
    } = part
        && content.starts_with("suspended:")
    {
        *suspended = content
            .split("cowork tasks resume ")
            .nth(1)
            .map(|rest| rest.trim_end_matches(['`', ')', '.', ' ']).to_string())
            .filter(|id| !id.is_empty());
    }
}
