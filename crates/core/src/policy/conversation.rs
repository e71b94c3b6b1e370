//! Per-conversation policy state: taint, "this conversation" grants, the model's plan mode and
//! what the person wrote (provenance). Persisted in the store (a conversation resumed after a
//! restart keeps them), cached in memory for the per-call gate.

use super::provenance::Said;
use super::{PolicyError, Rule, db_err};
use cowork_store::Store;
use rusqlite::{Connection, params};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Clone, Default)]
struct State {
    tainted_by: Option<String>,
    grants: Vec<Rule>,
    planning: bool,
    said: Said,
}

pub struct ConversationStates {
    conn: Mutex<Connection>,
    cache: Mutex<HashMap<String, State>>,
    /// The policy state's generation (table `policy_generation`, moved by triggers on every
    /// write of it) when the cache was last known current.
    seen_version: Mutex<Option<i64>>,
}

impl ConversationStates {
    pub fn open(store: &Store) -> Result<Self, PolicyError> {
        Ok(ConversationStates {
            conn: Mutex::new(store.connect().map_err(db_err)?),
            cache: Mutex::new(HashMap::new()),
            seen_version: Mutex::new(None),
        })
    }

    /// Forgets what is cached when the policy state changed since the last look (the window
    /// revoked a grant a long-running `cowork mcp serve` holds): one small read a call.
    pub fn catch_up(&self) -> Result<(), PolicyError> {
        // Cached: every call of every caller runs this first.
        let version: i64 = self
            .conn
            .lock()
            .unwrap()
            .prepare_cached("SELECT n FROM policy_generation WHERE id = 1")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(db_err)?;
        let mut seen = self.seen_version.lock().unwrap();
        if seen.is_some_and(|v| v != version) {
            self.cache.lock().unwrap().clear();
        }
        *seen = Some(version);
        Ok(())
    }

    fn with_state<R>(&self, conversation: &str, f: impl FnOnce(&mut State) -> R) -> R {
        let mut cache = self.cache.lock().unwrap();
        if !cache.contains_key(conversation) {
            let loaded = self.load(conversation).unwrap_or_else(|e| {
                tracing::error!("loading policy state of conversation {conversation}: {e}");
                State::default()
            });
            cache.insert(conversation.to_string(), loaded);
        }
        f(cache.get_mut(conversation).expect("inserted above"))
    }

    fn load(&self, conversation: &str) -> Result<State, PolicyError> {
        let conn = self.conn.lock().unwrap();
        let (tainted_by, planning) = conn
            .query_row(
                "SELECT tainted_by, planning FROM conversation_state WHERE conversation = ?1",
                [conversation],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .or_else(|e| {
                if e == rusqlite::Error::QueryReturnedNoRows {
                    Ok((None, false))
                } else {
                    Err(e)
                }
            })
            .map_err(db_err)?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT rule FROM conversation_grants WHERE conversation = ?1 ORDER BY created_at",
            )
            .map_err(db_err)?;
        let grants = stmt
            .query_map([conversation], |r| r.get::<_, String>(0))
            .map_err(db_err)?
            .filter_map(|r| r.ok())
            .filter_map(|text| Rule::parse(&text).ok())
            .collect();
        let mut stmt = conn
            .prepare_cached(
                "SELECT text FROM conversation_words WHERE conversation = ?1 ORDER BY rowid",
            )
            .map_err(db_err)?;
        let words: Vec<String> = stmt
            .query_map([conversation], |r| r.get(0))
            .map_err(db_err)?
            .collect::<Result<_, _>>()
            .map_err(db_err)?;
        Ok(State {
            tainted_by,
            grants,
            planning,
            said: Said::new(words.iter().map(String::as_str)),
        })
    }

    pub fn tainted_by(&self, conversation: &str) -> Option<String> {
        self.with_state(conversation, |s| s.tainted_by.clone())
    }

    pub fn grants(&self, conversation: &str) -> Vec<Rule> {
        self.with_state(conversation, |s| s.grants.clone())
    }

    pub fn taint(&self, conversation: &str, by_tool: &str) -> Result<(), PolicyError> {
        if self.tainted_by(conversation).is_some() {
            return Ok(());
        }
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO conversation_state (conversation, tainted_by, tainted_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(conversation) DO UPDATE SET tainted_by = excluded.tainted_by, tainted_at = excluded.tainted_at",
                params![conversation, by_tool, chrono::Utc::now().to_rfc3339()],
            )
            .map_err(db_err)?;
        self.with_state(conversation, |s| s.tainted_by = Some(by_tool.to_string()));
        Ok(())
    }

    /// `child` (a sub-agent's conversation) is judged as its parent is now: tainted by what
    /// tainted the parent, and with the person's words the parent holds.
    pub fn inherit(&self, child: &str, parent: &str) -> Result<(), PolicyError> {
        if let Some(source) = self.tainted_by(parent) {
            self.taint(child, &source)?;
        }
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO conversation_words (conversation, text, created_at)
                 SELECT ?1, text, created_at FROM conversation_words WHERE conversation = ?2 ORDER BY rowid",
                params![child, parent],
            )
            .map_err(db_err)?;
        self.cache.lock().unwrap().remove(child);
        Ok(())
    }

    /// The person wrote `text` in `conversation` (their turn, never the model's or a tool's).
    pub fn person_said(&self, conversation: &str, text: &str) -> Result<(), PolicyError> {
        if text.trim().is_empty() {
            return Ok(());
        }
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO conversation_words (conversation, text, created_at) VALUES (?1, ?2, ?3)",
                params![conversation, text, chrono::Utc::now().to_rfc3339()],
            )
            .map_err(db_err)?;
        self.with_state(conversation, |s| s.said.add(text));
        Ok(())
    }

    /// Looks at what the person gave in `conversation`.
    pub fn with_said<R>(&self, conversation: &str, f: impl FnOnce(&Said) -> R) -> R {
        self.with_state(conversation, |s| f(&s.said))
    }

    pub fn planning(&self, conversation: &str) -> bool {
        self.with_state(conversation, |s| s.planning)
    }

    pub fn set_planning(&self, conversation: &str, planning: bool) -> Result<(), PolicyError> {
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO conversation_state (conversation, planning) VALUES (?1, ?2)
                 ON CONFLICT(conversation) DO UPDATE SET planning = excluded.planning",
                params![conversation, planning],
            )
            .map_err(db_err)?;
        self.with_state(conversation, |s| s.planning = planning);
        Ok(())
    }

    pub fn grant(&self, conversation: &str, rules: &[String]) -> Result<(), PolicyError> {
        let parsed = rules
            .iter()
            .map(|t| Rule::parse(t).map_err(PolicyError::Store))
            .collect::<Result<Vec<_>, _>>()?;
        {
            let mut conn = self.conn.lock().unwrap();
            let tx = conn.transaction().map_err(db_err)?;
            for rule in &parsed {
                tx.execute(
                    "INSERT OR IGNORE INTO conversation_grants (conversation, rule, created_at) VALUES (?1, ?2, ?3)",
                    params![conversation, rule.text, chrono::Utc::now().to_rfc3339()],
                )
                .map_err(db_err)?;
            }
            tx.commit().map_err(db_err)?;
        }
        self.with_state(conversation, |s| {
            for rule in parsed {
                if !s.grants.contains(&rule) {
                    s.grants.push(rule);
                }
            }
        });
        Ok(())
    }

    /// Every "this conversation" grant of every conversation: (conversation, rule, since).
    pub fn all_grants(&self) -> Result<Vec<(String, String, String)>, PolicyError> {
        let conn = self.conn.lock().unwrap();
        let mut stmt = conn
            .prepare_cached(
                "SELECT conversation, rule, created_at FROM conversation_grants ORDER BY created_at",
            )
            .map_err(db_err)?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(db_err)?
            .collect::<Result<_, _>>()
            .map_err(db_err)
    }

    pub fn revoke(&self, conversation: &str, rule: &str) -> Result<usize, PolicyError> {
        let n = self
            .conn
            .lock()
            .unwrap()
            .execute(
                "DELETE FROM conversation_grants WHERE conversation = ?1 AND rule = ?2",
                params![conversation, rule],
            )
            .map_err(db_err)?;
        self.with_state(conversation, |s| s.grants.retain(|r| r.text != rule));
        Ok(n)
    }
}
