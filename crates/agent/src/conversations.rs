//! Conversations and their messages, persisted in the store: a chat survives a restart. A
//! conversation is a tree (edits and regenerations branch it); the window and the model see
//! the branch that ends at its head.

use crate::provider::{Message, Part, Role};
use cowork_store::{Store, all_rows};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    pub messages: i64,
    pub pinned: bool,
}

/// A conversation's own choices over the app's defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ConversationSettings {
    /// The model, when not the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The saved persona whose system prompt this conversation uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// A system prompt of its own (over the persona's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Every tool's definition in each request instead of a core set plus `tool_search`.
    #[serde(default)]
    pub all_tools: bool,
    /// The named tool profile this conversation runs under (over the persona's and the
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// A profile fixed when the conversation was made, over any chosen one: a sub-agent's (its
    /// parent's narrowed). Nothing here widens it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_profile: Option<cowork_core::ToolProfile>,
    /// The name of the sub-agent whose work this conversation is (its parent is the
    /// conversation's `parent`): every message in it is that model's, none the person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_agent: Option<String>,
}

/// One message of the branch shown, for the window.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ThreadMessage {
    pub id: i64,
    pub role: Role,
    pub parts: Vec<Part>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
    /// Its siblings (other edits of this message, other answers to the one before), oldest
    /// first, itself included; one entry when there is no other branch.
    pub siblings: Vec<i64>,
}

/// What a model call cost: its tokens and, when the model has a price in the settings, dollars.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnUsage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A summary that stands in for the messages up to `upto` when the model is asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Compaction {
    pub id: i64,
    pub upto: i64,
    pub summary: String,
    pub messages: u32,
    pub tokens_before: u32,
    pub tokens_after: u32,
    pub created_at: String,
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

fn role_of(text: &str) -> Role {
    if text == "assistant" {
        Role::Assistant
    } else {
        Role::User
    }
}

fn parts_of(json: &str) -> Result<Vec<Part>> {
    let mut parts: Vec<Part> = serde_json::from_str(json).map_err(err)?;
    parts.iter_mut().for_each(upgrade_legacy_result);
    Ok(parts)
}

/// A stored message: its role, the message before it on its branch, its parts.
pub(crate) type StoredMessage = (Role, Option<i64>, Vec<Part>);

/// The ids on the branch that ends at the conversation's head, oldest first.
const PATH: &str = "WITH RECURSIVE path(id) AS (
        SELECT head FROM conversations WHERE id = ?1 AND head IS NOT NULL
        UNION ALL
        SELECT m.parent FROM messages m JOIN path p ON m.id = p.id WHERE m.parent IS NOT NULL
    )";

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

    /// A sub-agent's conversation under `parent`, with its settings: not listed with the
    /// person's conversations, and deleted with its parent.
    pub fn create_child(
        &self,
        id: &str,
        parent: &str,
        title: &str,
        settings: &ConversationSettings,
    ) -> Result<()> {
        let json = serde_json::to_string(settings).map_err(err)?;
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO conversations (id, title, created_at, updated_at, parent, settings) VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
                params![id, title, now(), parent, json],
            )
            .map_err(err)?;
        Ok(())
    }

    /// The conversation a sub-agent's conversation belongs to (None for the person's own).
    pub fn parent(&self, id: &str) -> Result<Option<String>> {
        let parent: Option<Option<String>> =
            self.column(id, "SELECT parent FROM conversations WHERE id = ?1")?;
        Ok(parent.flatten())
    }

    /// Pinned first, then the most recent. `search` matches titles and message text.
    pub fn list(&self, search: Option<&str>) -> Result<Vec<ConversationSummary>> {
        let conn = self.conn.lock().unwrap();
        let pattern = search.map(|s| format!("%{}%", s.replace('%', "\\%").replace('_', "\\_")));
        all_rows(
            &conn,
            "SELECT c.id, c.title, c.created_at, c.updated_at, (SELECT COUNT(*) FROM messages m WHERE m.conversation = c.id) AS messages, c.pinned
             FROM conversations c
             WHERE c.parent IS NULL AND (?1 IS NULL OR c.title LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation = c.id AND m.parts LIKE ?1 ESCAPE '\\'))
             ORDER BY c.pinned DESC, c.updated_at DESC",
            params![pattern],
        )
        .map_err(err)
    }

    pub fn title(&self, id: &str) -> Result<Option<String>> {
        self.column(id, "SELECT title FROM conversations WHERE id = ?1")
    }

    /// The messages of the branch shown, oldest first (what the model continues).
    pub fn messages(&self, id: &str) -> Result<Vec<Message>> {
        Ok(self
            .path_rows(id)?
            .into_iter()
            .map(|row| Message {
                role: row.role,
                parts: row.parts,
            })
            .collect())
    }

    /// The ids and messages of the branch shown.
    pub(crate) fn path(&self, id: &str) -> Result<Vec<(i64, Message)>> {
        Ok(self
            .path_rows(id)?
            .into_iter()
            .map(|row| {
                (
                    row.id,
                    Message {
                        role: row.role,
                        parts: row.parts,
                    },
                )
            })
            .collect())
    }

    fn path_rows(&self, id: &str) -> Result<Vec<ThreadMessage>> {
        let conn = self.conn.lock().unwrap();
        let mut stmt = conn
            .prepare_cached(&format!(
                "{PATH} SELECT m.id, m.role, m.parts, m.created_at, m.usage FROM messages m JOIN path USING (id) ORDER BY m.id"
            ))
            .map_err(err)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, role, parts, created_at, usage) = row.map_err(err)?;
            out.push(ThreadMessage {
                id,
                role: role_of(&role),
                parts: parts_of(&parts)?,
                created_at,
                usage: usage.and_then(|u| serde_json::from_str(&u).ok()),
                siblings: vec![id],
            });
        }
        Ok(out)
    }

    /// The branch shown, with each message's siblings, for the window.
    pub fn thread(&self, id: &str) -> Result<Vec<ThreadMessage>> {
        let mut rows = self.path_rows(id)?;
        let children: Vec<(i64, Option<i64>)> = {
            let conn = self.conn.lock().unwrap();
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, parent FROM messages WHERE conversation = ?1 ORDER BY id",
                )
                .map_err(err)?;
            stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(err)?
                .collect::<std::result::Result<_, _>>()
                .map_err(err)?
        };
        let mut by_parent: std::collections::HashMap<Option<i64>, Vec<i64>> = Default::default();
        for (child, parent) in children {
            by_parent.entry(parent).or_default().push(child);
        }
        let mut parent = None;
        for row in &mut rows {
            if let Some(siblings) = by_parent.get(&parent) {
                row.siblings = siblings.clone();
            }
            parent = Some(row.id);
        }
        Ok(rows)
    }

    /// Appends to the branch shown and makes the new message its end. Returns its id.
    pub fn append(&self, id: &str, message: &Message) -> Result<i64> {
        self.append_with_usage(id, message, None)
    }

    pub fn append_with_usage(
        &self,
        id: &str,
        message: &Message,
        usage: Option<&TurnUsage>,
    ) -> Result<i64> {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let parts = serde_json::to_string(&message.parts).map_err(err)?;
        let usage = usage.map(serde_json::to_string).transpose().map_err(err)?;
        let now = now();
        let mut conn = self.conn.lock().unwrap();
        let tx = conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO messages (conversation, role, parts, created_at, parent, usage)
             VALUES (?1, ?2, ?3, ?4, (SELECT head FROM conversations WHERE id = ?1), ?5)",
            params![id, role, parts, now, usage],
        )
        .map_err(err)?;
        let message_id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE conversations SET updated_at = ?2, head = ?3 WHERE id = ?1",
            params![id, now, message_id],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(message_id)
    }

    /// A message of this conversation: its role, parent and parts.
    pub(crate) fn message(&self, id: &str, message: i64) -> Result<Option<StoredMessage>> {
        let row: Option<(String, Option<i64>, String)> = self
            .conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT role, parent, parts FROM messages WHERE conversation = ?1 AND id = ?2",
                params![id, message],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(err)?;
        row.map(|(role, parent, parts)| Ok((role_of(&role), parent, parts_of(&parts)?)))
            .transpose()
    }

    /// Makes the branch end at `message` (`None`: before the first message). Appends then
    /// hang off it; the other branches stay.
    pub fn set_head(&self, id: &str, message: Option<i64>) -> Result<()> {
        self.update(
            id,
            "UPDATE conversations SET head = ?2 WHERE id = ?1",
            message,
        )
        .map(|_| ())
    }

    /// Shows the branch through `message`: down to its newest leaf.
    pub fn switch_branch(&self, id: &str, message: i64) -> Result<bool> {
        let conn = self.conn.lock().unwrap();
        let leaf: Option<i64> = conn
            .query_row(
                "WITH RECURSIVE down(id) AS (
                    SELECT id FROM messages WHERE conversation = ?1 AND id = ?2
                    UNION ALL
                    SELECT (SELECT MAX(c.id) FROM messages c WHERE c.parent = d.id) FROM down d
                    WHERE EXISTS (SELECT 1 FROM messages c WHERE c.parent = d.id)
                 ) SELECT MAX(id) FROM down",
                params![id, message],
                |r| r.get(0),
            )
            .map_err(err)?;
        let Some(leaf) = leaf else {
            return Ok(false);
        };
        conn.execute(
            "UPDATE conversations SET head = ?2 WHERE id = ?1",
            params![id, leaf],
        )
        .map_err(err)?;
        Ok(true)
    }

    pub fn set_pinned(&self, id: &str, pinned: bool) -> Result<bool> {
        self.update(
            id,
            "UPDATE conversations SET pinned = ?2 WHERE id = ?1",
            pinned,
        )
    }

    /// Runs one `UPDATE … WHERE id = ?1` with `value` as `?2`; whether the conversation exists.
    fn update(&self, id: &str, sql: &str, value: impl rusqlite::ToSql) -> Result<bool> {
        self.conn
            .lock()
            .unwrap()
            .execute(sql, params![id, value])
            .map(|n| n == 1)
            .map_err(err)
    }

    /// Runs one `SELECT column … WHERE id = ?1`: the column's value, None when the conversation
    /// does not exist.
    fn column<T: rusqlite::types::FromSql>(&self, id: &str, sql: &str) -> Result<Option<T>> {
        self.conn
            .lock()
            .unwrap()
            .query_row(sql, [id], |r| r.get(0))
            .optional()
            .map_err(err)
    }

    /// [`Self::column`] for a column holding JSON: its value, or the default when the
    /// conversation does not exist or the JSON does not parse.
    fn json_column<T: serde::de::DeserializeOwned + Default>(
        &self,
        id: &str,
        sql: &str,
    ) -> Result<T> {
        let json: Option<String> = self.column(id, sql)?;
        Ok(json
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default())
    }

    /// The conversation's own choices (the defaults when it does not exist). Settings that do
    /// not parse are an error, never the defaults: a sub-agent's fixed profile must not fall
    /// away with them.
    pub fn settings(&self, id: &str) -> Result<ConversationSettings> {
        let json: Option<String> =
            self.column(id, "SELECT settings FROM conversations WHERE id = ?1")?;
        json.map(|j| {
            serde_json::from_str(&j)
                .map_err(|e| format!("conversation {id}'s settings are unreadable ({e})"))
        })
        .transpose()
        .map(Option::unwrap_or_default)
    }

    fn set_settings(&self, id: &str, settings: &ConversationSettings) -> Result<bool> {
        let json = serde_json::to_string(settings).map_err(err)?;
        self.update(
            id,
            "UPDATE conversations SET settings = ?2 WHERE id = ?1",
            json,
        )
    }

    /// The person's choices for a conversation (the window's bar, `cowork chat --model`): what
    /// was fixed when it was made — a sub-agent's profile and name — stays as it was.
    pub fn choose_settings(&self, id: &str, chosen: &ConversationSettings) -> Result<bool> {
        let kept = self.settings(id)?;
        self.set_settings(
            id,
            &ConversationSettings {
                fixed_profile: kept.fixed_profile,
                sub_agent: kept.sub_agent,
                ..chosen.clone()
            },
        )
    }

    /// The provider's reported prompt tokens over our estimate, from the last call.
    pub(crate) fn token_ratio(&self, id: &str) -> Result<Option<f64>> {
        let ratio: Option<Option<f64>> =
            self.column(id, "SELECT token_ratio FROM conversations WHERE id = ?1")?;
        Ok(ratio.flatten())
    }

    pub(crate) fn set_token_ratio(&self, id: &str, ratio: f64) -> Result<()> {
        self.update(
            id,
            "UPDATE conversations SET token_ratio = ?2 WHERE id = ?1",
            ratio,
        )
        .map(|_| ())
    }

    pub(crate) fn add_compaction(&self, id: &str, c: &Compaction) -> Result<i64> {
        let conn = self.conn.lock().unwrap();
        conn.execute(
            "INSERT INTO compactions (conversation, upto, summary, messages, tokens_before, tokens_after, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, c.upto, c.summary, c.messages, c.tokens_before, c.tokens_after, c.created_at],
        )
        .map_err(err)?;
        Ok(conn.last_insert_rowid())
    }

    /// The conversation's compactions, oldest first (any branch: the caller keeps those on
    /// the branch shown).
    pub fn compactions(&self, id: &str) -> Result<Vec<Compaction>> {
        let conn = self.conn.lock().unwrap();
        all_rows(
            &conn,
            "SELECT id, upto, summary, messages, tokens_before, tokens_after, created_at
             FROM compactions WHERE conversation = ?1 ORDER BY id",
            [id],
        )
        .map_err(err)
    }

    /// The branch shown as Markdown: the person's and the assistant's words, attachments by
    /// name, each tool call with its input and result.
    pub fn export_markdown(&self, id: &str) -> Result<String> {
        let title = self
            .title(id)?
            .ok_or_else(|| err(format!("no conversation {id}")))?;
        let mut out = format!("# {title}\n");
        let fence = |text: &str| {
            // A fence longer than any backtick run inside, so the text cannot close it.
            let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            "`".repeat(longest.max(2) + 1)
        };
        for row in self.path_rows(id)? {
            let mut said = false;
            for part in &row.parts {
                let heading = match row.role {
                    Role::User => "## You",
                    Role::Assistant => "## Assistant",
                };
                match part {
                    Part::Text { text } if !text.is_empty() => {
                        if !said {
                            out.push_str(&format!("\n{heading}\n\n"));
                            said = true;
                        }
                        out.push_str(text);
                        out.push('\n');
                    }
                    Part::Text { .. } => {}
                    Part::Image { name, .. } => out.push_str(&format!(
                        "\n*[image: {}]*\n",
                        name.as_deref().unwrap_or("pasted")
                    )),
                    Part::File { name, .. } => out.push_str(&format!("\n*[attached: {name}]*\n")),
                    Part::ToolUse { name, input, .. } => {
                        let input = serde_json::to_string_pretty(input).unwrap_or_default();
                        let f = fence(&input);
                        out.push_str(&format!(
                            "\n**Tool call** `{name}`\n\n{f}json\n{input}\n{f}\n"
                        ));
                    }
                    Part::ToolResult {
                        content, is_error, ..
                    } => {
                        let f = fence(content);
                        let label = if *is_error { "Tool error" } else { "Result" };
                        out.push_str(&format!("\n**{label}**\n\n{f}\n{content}\n{f}\n"));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The folder the conversation works in, if one was opened for it.
    pub fn workspace(&self, id: &str) -> Result<Option<std::path::PathBuf>> {
        let folder: Option<Option<String>> =
            self.column(id, "SELECT workspace FROM conversations WHERE id = ?1")?;
        Ok(folder.flatten().map(std::path::PathBuf::from))
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
        self.json_column(id, "SELECT loaded_tools FROM conversations WHERE id = ?1")
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
