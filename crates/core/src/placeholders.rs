//! Values that stay home. What a read of secrets, payment data or a government ID returned (see
//! [`Sensitive::kept_home`]) and anything shaped like a credential reach a remote model only as
//! placeholders (`«secret:1»`). A call that uses one gets the value back from the gate after its
//! review: the model never sees it, the audit log records only the placeholder, and a
//! placeholder may fill what a call carries but never change what its review judged (where it
//! reaches, who receives it) — the gate refuses a call whose effects the value would change.
//!
//! Kept per conversation in the store, numbered once and never renumbered, so a placeholder the
//! model wrote (or a summary of older turns holds) means the same value for the whole
//! conversation, in every process.

use crate::redact::looks_like_secret;
use aho_corasick::{AhoCorasick, MatchKind};
use cowork_contract::Sensitive;
use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Shorter values are not hidden: nothing that short guards anything (a card's code has 3
/// digits), and they would hide ordinary words wherever they occur.
const SHORTEST_KEPT: usize = 3;

/// One value kept home, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub n: u32,
    pub value: String,
    pub category: Sensitive,
    /// The read that returned it; None: recognized by its shape (a token in what was sent).
    pub tool: Option<String>,
    pub subject: Option<String>,
}

impl Kept {
    pub fn placeholder(&self) -> String {
        placeholder(self.n)
    }
}

pub fn placeholder(n: u32) -> String {
    format!("«secret:{n}»")
}

#[derive(Debug, thiserror::Error)]
pub enum PlaceholderError {
    #[error(
        "{} is no value this conversation holds: use only the placeholders you were given",
        placeholder(*.0)
    )]
    Unknown(u32),
    #[error(
        "{} is written against other letters or digits: a value kept from the model goes in whole, on its own (`pw «secret:1»`, not `pw«secret:1»`)",
        placeholder(*.0)
    )]
    Glued(u32),
    #[error("could not keep a value home: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("could not keep a value home: {0}")]
    Open(#[from] cowork_store::StoreError),
}

/// A conversation's kept values, and the matcher that finds them in text.
#[derive(Default)]
struct Table {
    kept: Vec<Kept>,
    values: HashSet<String>,
    /// Each value and its JSON-escaped form (a tool's text is often JSON), longest first, with
    /// the index of its `Kept`.
    matcher: Option<(AhoCorasick, Vec<usize>)>,
}

impl Table {
    fn new(kept: Vec<Kept>) -> Table {
        let mut patterns: Vec<(String, usize)> = Vec::new();
        for (i, k) in kept.iter().enumerate() {
            patterns.push((k.value.clone(), i));
            let escaped = serde_json::to_string(&k.value).unwrap_or_default();
            let escaped = escaped.trim_matches('"');
            if escaped != k.value {
                patterns.push((escaped.to_string(), i));
            }
        }
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns.iter().map(|(p, _)| p))
            .ok()
            .filter(|_| !patterns.is_empty())
            .map(|ac| (ac, patterns.iter().map(|(_, i)| *i).collect()));
        let values = kept.iter().map(|k| k.value.clone()).collect();
        Table {
            kept,
            values,
            matcher,
        }
    }

    fn get(&self, n: u32) -> Option<&Kept> {
        self.kept.iter().find(|k| k.n == n)
    }

    /// Where kept values stand in `text`, whole: a value that begins or ends with a Latin letter
    /// or digit is not found inside a longer word or number (a code `123` in `41234`); next to
    /// Chinese text (`密码是hunter2`) it is. A placeholder glued to letters is refused at the
    /// gate, so a value cannot be put back inside a word and read out again.
    fn found<'t>(
        &'t self,
        text: &'t str,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, &'t Kept)> + 't {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        self.matcher.iter().flat_map(move |(matcher, index)| {
            matcher.find_iter(text).filter_map(move |m| {
                let found = &text[m.range()];
                let inside = (word(found.chars().next()) && word(text[..m.start()].chars().last()))
                    || (word(found.chars().last()) && word(text[m.end()..].chars().next()));
                (!inside).then(|| (m.range(), &self.kept[index[m.pattern().as_usize()]]))
            })
        })
    }

    /// `text` with every kept value replaced by its placeholder, in one pass (a value can never
    /// match inside a placeholder put there before).
    fn veil(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = 0;
        for (range, kept) in self.found(text) {
            out.push_str(&text[rest..range.start]);
            out.push_str(&kept.placeholder());
            rest = range.end;
        }
        out.push_str(&text[rest..]);
        out
    }

    /// A JSON text is veiled value by value and written again when a value was found in it:
    /// a value its writer escaped otherwise (`\u0026`, `\/`, `\u00e4`) is found once parsed.
    /// Numbers are caught in the text. A text holding no kept value goes out as it came.
    fn veil_text_or_json(&self, text: &str) -> String {
        if self.kept.is_empty() {
            return text.to_string();
        }
        match serde_json::from_str::<Value>(text) {
            Ok(parsed) if parsed.is_object() || parsed.is_array() => {
                let veiled = map_strings(&parsed, &mut |s| Ok::<_, PlaceholderError>(self.veil(s)))
                    .expect("veiling cannot fail");
                match veiled == parsed {
                    true => self.veil(text),
                    false => self.veil(&veiled.to_string()),
                }
            }
            _ => self.veil(text),
        }
    }
}

/// Where values are kept, per conversation (table `kept_values`; a sub-agent's conversation
/// numbers with its parent's, `kept_roots`), cached in memory.
pub struct Placeholders {
    conn: Mutex<Connection>,
    /// By root conversation.
    tables: Mutex<HashMap<String, Arc<Table>>>,
    roots: Mutex<HashMap<String, String>>,
    /// Every value kept in any conversation (and how many rows there were): a value one
    /// conversation read and saved somewhere (a note, a file) is hidden when another reads it.
    everywhere: Mutex<(i64, Arc<Table>)>,
}

impl Placeholders {
    pub fn open(store: &Store) -> Result<Self, PlaceholderError> {
        Ok(Placeholders {
            conn: Mutex::new(store.connect()?),
            tables: Mutex::new(HashMap::new()),
            roots: Mutex::new(HashMap::new()),
            everywhere: Mutex::new((-1, Arc::default())),
        })
    }

    /// The conversation whose numbers `conversation` uses: its own, or its first parent's.
    fn root(&self, conversation: &str) -> Result<String, PlaceholderError> {
        if let Some(root) = self.roots.lock().unwrap().get(conversation) {
            return Ok(root.clone());
        }
        let root: Option<String> = self
            .conn
            .lock()
            .unwrap()
            .prepare_cached("SELECT root FROM kept_roots WHERE conversation = ?1")?
            .query_row([conversation], |r| r.get(0))
            .optional()?;
        let root = root.unwrap_or_else(|| conversation.to_string());
        self.roots
            .lock()
            .unwrap()
            .insert(conversation.to_string(), root.clone());
        Ok(root)
    }

    fn table(&self, root: &str) -> Result<Arc<Table>, PlaceholderError> {
        if let Some(table) = self.tables.lock().unwrap().get(root) {
            return Ok(table.clone());
        }
        self.reload(root)
    }

    fn reload(&self, root: &str) -> Result<Arc<Table>, PlaceholderError> {
        let kept = load(&self.conn.lock().unwrap(), Some(root))?;
        let table = Arc::new(Table::new(kept));
        self.tables
            .lock()
            .unwrap()
            .insert(root.to_string(), table.clone());
        Ok(table)
    }

    /// Reads the values again where the store holds more than this process knows (another
    /// Cowork process kept some: a call through `cowork mcp serve`); asked once before each
    /// request to a model.
    pub fn refresh(&self, conversation: &str) -> Result<(), PlaceholderError> {
        let root = self.root(conversation)?;
        let (mine, all): (i64, i64) = self.conn.lock().unwrap().query_row(
            "SELECT COUNT(*) FILTER (WHERE conversation = ?1), COUNT(*) FROM kept_values",
            [&root],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if self.table(&root)?.kept.len() as i64 != mine {
            self.reload(&root)?;
        }
        let mut everywhere = self.everywhere.lock().unwrap();
        if everywhere.0 != all {
            let kept = load(&self.conn.lock().unwrap(), None)?;
            *everywhere = (all, Arc::new(Table::new(kept)));
        }
        Ok(())
    }

    /// The values kept in a conversation, in the order they were numbered.
    pub fn kept(&self, conversation: &str) -> Result<Vec<Kept>, PlaceholderError> {
        Ok(self.table(&self.root(conversation)?)?.kept.clone())
    }

    /// Keeps `values` home in `conversation` (those not kept yet get the next numbers).
    pub fn keep(
        &self,
        conversation: &str,
        values: &[String],
        category: Sensitive,
        tool: Option<&str>,
        subject: Option<&str>,
    ) -> Result<(), PlaceholderError> {
        let fresh: Vec<Kept> = values
            .iter()
            .map(|value| Kept {
                n: 0,
                value: value.clone(),
                category,
                tool: tool.map(str::to_string),
                subject: subject.map(str::to_string),
            })
            .collect();
        self.insert(&self.root(conversation)?, fresh)
    }

    fn insert(&self, root: &str, values: Vec<Kept>) -> Result<(), PlaceholderError> {
        let table = self.table(root)?;
        let fresh: Vec<Kept> = values
            .into_iter()
            .filter(|k| {
                k.value.chars().count() >= SHORTEST_KEPT && !table.values.contains(&k.value)
            })
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        {
            let mut conn = self.conn.lock().unwrap();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            for k in fresh {
                // Numbered under the write lock, so two processes never give one number twice;
                // a value another process kept meanwhile keeps its number.
                tx.execute(
                    "INSERT INTO kept_values (conversation, n, value, category, tool, subject, kept_at)
                     SELECT ?1, COALESCE(MAX(n), 0) + 1, ?2, ?3, ?4, ?5, ?6 FROM kept_values WHERE conversation = ?1
                     ON CONFLICT (conversation, value) DO NOTHING",
                    params![root, k.value, k.category.as_str(), k.tool, k.subject, chrono::Utc::now().to_rfc3339()],
                )?;
            }
            tx.commit()?;
        }
        self.reload(root)?;
        Ok(())
    }

    /// A sub-agent's conversation `child` numbers with its parent's: a placeholder means the
    /// same value in both, whichever kept it (the answer it hands back is read by the parent's
    /// model).
    pub fn inherit(&self, child: &str, parent: &str) -> Result<(), PlaceholderError> {
        let root = self.root(parent)?;
        self.conn.lock().unwrap().execute(
            "INSERT OR REPLACE INTO kept_roots (conversation, root) VALUES (?1, ?2)",
            params![child, root],
        )?;
        self.roots.lock().unwrap().insert(child.to_string(), root);
        Ok(())
    }

    /// `text` as a remote model may see it: credential-shaped tokens are kept first (so they
    /// have numbers), and values any conversation kept are kept here too; then every value
    /// kept in the conversation is replaced by its placeholder — or only the shaped ones, for
    /// words the model or the person wrote (`values: false`), which hold a kept value only by
    /// coincidence (a site's name the person typed).
    pub fn veil(
        &self,
        conversation: &str,
        text: &str,
        values: bool,
    ) -> Result<String, PlaceholderError> {
        let root = self.root(conversation)?;
        let shaped = shaped_secrets(text);
        if !shaped.is_empty() {
            let found = shaped.iter().map(|value| Kept {
                n: 0,
                value: value.clone(),
                category: Sensitive::Secrets,
                tool: None,
                subject: None,
            });
            self.insert(&root, found.collect())?;
        }
        if values {
            let everywhere = self.everywhere.lock().unwrap().1.clone();
            let elsewhere: Vec<Kept> = everywhere.found(text).map(|(_, k)| k.clone()).collect();
            if !elsewhere.is_empty() {
                self.insert(&root, elsewhere)?;
            }
            return Ok(self.table(&root)?.veil_text_or_json(text));
        }
        if shaped.is_empty() {
            return Ok(text.to_string());
        }
        let table = self.table(&root)?;
        let only_shaped = Table::new(
            table
                .kept
                .iter()
                .filter(|k| shaped.contains(&k.value))
                .cloned()
                .collect(),
        );
        Ok(only_shaped.veil(text))
    }

    /// Every string in `value` (keys too) veiled as [`Placeholders::veil`] does.
    pub fn veil_json(
        &self,
        conversation: &str,
        value: &Value,
        values: bool,
    ) -> Result<Value, PlaceholderError> {
        map_strings(value, &mut |s| self.veil(conversation, s, values))
    }

    /// A tool's output as another app's model may see it (`cowork mcp serve`): every block
    /// and the structured output veiled as a tool result is in a request to a model.
    pub fn veil_output(
        &self,
        conversation: &str,
        output: cowork_contract::ToolOutput,
    ) -> Result<cowork_contract::ToolOutput, PlaceholderError> {
        use cowork_contract::Content;
        self.refresh(conversation)?;
        let content = output
            .content
            .into_iter()
            .map(|block| {
                Ok(match block {
                    Content::Text { text } => Content::Text {
                        text: self.veil(conversation, &text, true)?,
                    },
                    Content::Json { value } => Content::Json {
                        value: self.veil_json(conversation, &value, true)?,
                    },
                    other => other,
                })
            })
            .collect::<Result<_, PlaceholderError>>()?;
        let structured = match &output.structured {
            Some(value) => Some(self.veil_json(conversation, value, true)?),
            None => None,
        };
        Ok(cowork_contract::ToolOutput {
            content,
            structured,
            ..output
        })
    }

    /// How many of `text`'s first `limit` characters to keep so that no kept value is cut in
    /// two (its first half would reach the model unhidden): `limit`, or where the value that
    /// the cut would split begins.
    pub fn cut_point(
        &self,
        conversation: &str,
        text: &str,
        limit: usize,
    ) -> Result<usize, PlaceholderError> {
        let Some((at, _)) = text.char_indices().nth(limit) else {
            return Ok(limit);
        };
        let table = self.table(&self.root(conversation)?)?;
        let split = table.matcher.iter().flat_map(|(matcher, _)| {
            matcher
                .find_iter(text)
                .find(|m| m.start() < at && m.end() > at)
        });
        Ok(match split.into_iter().next() {
            Some(m) => text[..m.start()].chars().count(),
            None => limit,
        })
    }

    /// The placeholders `args` uses (in values and keys), each with its value: None when it
    /// uses none. A number the conversation does not hold is refused, and so is a placeholder
    /// written against letters or digits.
    pub fn used(
        &self,
        conversation: &str,
        args: &Value,
    ) -> Result<Option<Vec<Kept>>, PlaceholderError> {
        // Every call of every caller passes here: the arguments are read, never copied.
        let mut numbers = Vec::new();
        each_string(args, &mut |s| {
            for (range, n) in placeholders_in(s) {
                let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
                if glued(s[..range.start].chars().last()) || glued(s[range.end..].chars().next()) {
                    return Err(PlaceholderError::Glued(n));
                }
                numbers.push(n);
            }
            Ok(())
        })?;
        if numbers.is_empty() {
            return Ok(None);
        }
        numbers.sort_unstable();
        numbers.dedup();
        let root = self.root(conversation)?;
        let mut table = self.table(&root)?;
        if numbers.iter().any(|n| table.get(*n).is_none()) {
            // Kept by another process since this one last looked.
            table = self.reload(&root)?;
        }
        numbers
            .into_iter()
            .map(|n| table.get(n).cloned().ok_or(PlaceholderError::Unknown(n)))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// `args` with each placeholder of `used` replaced by its value.
pub fn reveal(args: &Value, used: &[Kept]) -> Value {
    map_strings(args, &mut |s| {
        let mut out = String::with_capacity(s.len());
        let mut rest = 0;
        for (range, n) in placeholders_in(s) {
            out.push_str(&s[rest..range.start]);
            match used.iter().find(|k| k.n == n) {
                Some(kept) => out.push_str(&kept.value),
                None => out.push_str(&s[range.clone()]),
            }
            rest = range.end;
        }
        out.push_str(&s[rest..]);
        Ok::<_, PlaceholderError>(out)
    })
    .expect("revealing cannot fail")
}

/// Every `«secret:N»` in `text`, where it is and its number.
fn placeholders_in(text: &str) -> Vec<(std::ops::Range<usize>, u32)> {
    const OPEN: &str = "«secret:";
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(OPEN).map(|i| from + i) {
        let digits_at = at + OPEN.len();
        let digits = text[digits_at..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let end = digits_at + digits;
        if digits > 0 && text[end..].starts_with('»') {
            if let Ok(n) = text[digits_at..end].parse() {
                found.push((at..end + '»'.len_utf8(), n));
            }
            from = end + '»'.len_utf8();
        } else {
            from = digits_at;
        }
    }
    found
}

/// Credential-shaped tokens in `text`: issued keys and tokens (recognized by the prefixes their
/// issuers give them so that scanners can: `looks_like_secret`) and private-key blocks.
pub fn shaped_secrets(text: &str) -> Vec<String> {
    let mut found: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|token| token.trim_end_matches('.'))
        .filter(|token| looks_like_secret(token) && token.bytes().any(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    found.extend(private_key_blocks(text));
    found.sort();
    found.dedup();
    found
}

/// PEM and PGP private keys, whole (`-----BEGIN … PRIVATE KEY[ BLOCK]-----` to its
/// `-----END …-----`).
fn private_key_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(begin) = text[from..].find("-----BEGIN ").map(|i| from + i) {
        let Some(header_end) = text[begin + 11..].find("-----").map(|i| begin + 11 + i) else {
            break;
        };
        let label = &text[begin + 11..header_end];
        from = header_end + 5;
        if !label.contains("PRIVATE KEY") || label.len() > 40 {
            continue;
        }
        let footer = format!("-----END {label}-----");
        if let Some(end) = text[from..].find(&footer).map(|i| from + i + footer.len()) {
            blocks.push(text[begin..end].to_string());
            from = end;
        }
    }
    blocks
}

/// The values a kept-home read returned, to keep: every string and number of its structured
/// output and of each of its blocks read as JSON, else each text block whole — except values
/// the call's own arguments hold (the item's name the model asked for is no secret from it).
/// A pack that returns JSON gives each value its own placeholder (docs/mcp.md).
pub fn values_of(output: &cowork_contract::ToolOutput, args: &Value) -> Vec<String> {
    let mut asked = Vec::new();
    leaves(args, &mut asked);
    let mut values = Vec::new();
    if let Some(structured) = &output.structured {
        leaves(structured, &mut values);
    }
    for block in &output.content {
        match block {
            cowork_contract::Content::Json { value } => leaves(value, &mut values),
            cowork_contract::Content::Text { text } => match serde_json::from_str::<Value>(text) {
                Ok(parsed) if parsed.is_object() || parsed.is_array() => {
                    leaves(&parsed, &mut values)
                }
                _ => values.push(text.trim().to_string()),
            },
            _ => {}
        }
    }
    // A web address in a login is where the secret is used, not the secret: hidden, it would
    // stop the model from going there (a call whose address is a placeholder is refused).
    let address = |v: &str| {
        url::Url::parse(v).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
    };
    values.retain(|v| !v.is_empty() && !asked.contains(v) && !address(v));
    values.sort();
    values.dedup();
    values
}

fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.trim().to_string()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// Calls `f` on every string in `value`, object keys included.
fn each_string<E>(value: &Value, f: &mut impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().try_for_each(|v| each_string(v, f)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            f(k)?;
            each_string(v, f)
        }),
        _ => Ok(()),
    }
}

/// `value` with every string, object keys included, mapped by `f`.
fn map_strings<E>(
    value: &Value,
    f: &mut impl FnMut(&str) -> Result<String, E>,
) -> Result<Value, E> {
    Ok(match value {
        Value::String(s) => Value::String(f(s)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| map_strings(v, f))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((f(k)?, map_strings(v, f)?)))
                .collect::<Result<_, E>>()?,
        ),
        other => other.clone(),
    })
}

/// The values kept in `conversation`, in their order; None: in every conversation.
fn load(conn: &Connection, conversation: Option<&str>) -> rusqlite::Result<Vec<Kept>> {
    let mut stmt = conn.prepare_cached(
        "SELECT n, value, category, tool, subject FROM kept_values
         WHERE ?1 IS NULL OR conversation = ?1 ORDER BY conversation, n",
    )?;
    let rows = stmt.query_map([conversation], |r| {
        let category: String = r.get(2)?;
        Ok(Kept {
            n: r.get(0)?,
            value: r.get(1)?,
            category: Sensitive::ALL
                .into_iter()
                .find(|c| c.as_str() == category)
                .unwrap_or(Sensitive::Secrets),
            tool: r.get(3)?,
            subject: r.get(4)?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_store::DataDir;
    use proptest::prelude::*;
    use serde_json::json;

    fn open() -> (tempfile::TempDir, Placeholders) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path()), &[&crate::SCHEMA]).unwrap();
        let placeholders = Placeholders::open(&store).unwrap();
        (tmp, placeholders)
    }

    #[test]
    fn a_kept_read_is_veiled_everywhere_and_revealed_only_for_its_conversation() {
        let (_tmp, p) = open();
        let args = json!({"item": "github"});
        let output = r#"{"title":"github","username":"bob@example.com","password":"hunter2-\"x"}"#;
        let values = values_of(&cowork_contract::ToolOutput::text(output), &args);
        assert_eq!(values, ["bob@example.com", "hunter2-\"x"]);
        p.keep(
            "c1",
            &values,
            Sensitive::Secrets,
            Some("get"),
            Some("github"),
        )
        .unwrap();
        let veiled = p.veil("c1", output, true).unwrap();
        // A JSON text is veiled value by value (and written again).
        assert_eq!(
            veiled,
            r#"{"password":"«secret:2»","title":"github","username":"«secret:1»"}"#
        );
        // However its writer escaped it (Go writes `"` as \u0022).
        let go = r#"{"pw":"hunter2-\u0022x"}"#;
        assert_eq!(p.veil("c1", go, true).unwrap(), r#"{"pw":"«secret:2»"}"#);
        // The person's or the model's words keep what merely coincides with a kept value.
        assert_eq!(
            p.veil("c1", "mail bob@example.com", false).unwrap(),
            "mail bob@example.com"
        );
        let call = json!({"text": "pw «secret:2» for «secret:1»", "n": 3});
        let used = p.used("c1", &call).unwrap().unwrap();
        assert_eq!(
            reveal(&call, &used),
            json!({"text": "pw hunter2-\"x for bob@example.com", "n": 3})
        );
        assert!(matches!(
            p.used("c2", &call),
            Err(PlaceholderError::Unknown(1))
        ));
        assert!(
            p.used("c1", &json!({"text": "«secret:»«secret:x»"}))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_value_goes_in_whole_and_is_never_cut_in_two() {
        let (_tmp, p) = open();
        p.keep(
            "c",
            &["hunter2-long".into()],
            Sensitive::Secrets,
            Some("get"),
            None,
        )
        .unwrap();
        // Glued to letters, it could be read back inside a word that no longer matches.
        assert!(matches!(
            p.used("c", &json!({"text": "A«secret:1»"})),
            Err(PlaceholderError::Glued(1))
        ));
        assert!(
            p.used("c", &json!({"text": "pw: «secret:1»."}))
                .unwrap()
                .is_some()
        );
        // A cut that would split the value keeps everything before it.
        let text = "0123456789 hunter2-long tail";
        assert_eq!(p.cut_point("c", text, 14).unwrap(), 11);
        assert_eq!(p.cut_point("c", text, 8).unwrap(), 8);
        assert_eq!(p.cut_point("c", text, 99).unwrap(), 99);
    }

    #[test]
    fn a_sub_agent_numbers_with_its_parent_and_a_value_saved_elsewhere_stays_hidden() {
        let (_tmp, p) = open();
        p.keep(
            "parent",
            &["card-4242".into()],
            Sensitive::Payment,
            Some("wallet"),
            None,
        )
        .unwrap();
        p.inherit("child", "parent").unwrap();
        p.keep(
            "child",
            &["token-of-the-child".into()],
            Sensitive::Secrets,
            None,
            None,
        )
        .unwrap();
        // The child's answer names its own value by a number the parent reads the same way.
        let used = p.used("parent", &json!("«secret:2»")).unwrap().unwrap();
        assert_eq!(used[0].value, "token-of-the-child");
        // Another conversation reads a note that holds the card: it is hidden there too.
        p.refresh("other").unwrap();
        assert_eq!(
            p.veil("other", "note: card-4242", true).unwrap(),
            "note: «secret:1»"
        );
        assert_eq!(p.kept("other").unwrap()[0].category, Sensitive::Payment);
    }

    #[test]
    fn a_web_address_in_a_login_is_not_kept() {
        let output = json!({"url": "https://github.com/login", "password": "pw-value"});
        let values = values_of(
            &cowork_contract::ToolOutput::text(output.to_string()),
            &json!({}),
        );
        assert_eq!(values, ["pw-value"]);
    }

    #[test]
    fn a_json_text_holding_no_kept_value_goes_out_as_it_came() {
        let (_tmp, p) = open();
        let pretty = "{\"b\": true,\n \"a\": \"x\"}";
        assert_eq!(p.veil("c", pretty, true).unwrap(), pretty);
        p.keep("c", &["kept-value".into()], Sensitive::Secrets, None, None)
            .unwrap();
        assert_eq!(p.veil("c", pretty, true).unwrap(), pretty);
    }

    #[test]
    fn a_short_value_is_hidden_only_whole() {
        let (_tmp, p) = open();
        p.keep(
            "c",
            &["123".into(), "4111 1111".into()],
            Sensitive::Payment,
            Some("card"),
            None,
        )
        .unwrap();
        assert_eq!(
            p.veil(
                "c",
                r#"{"cvv":"123","n":"4111 1111"} room 41234, code 123."#,
                true
            )
            .unwrap(),
            r#"{"cvv":"«secret:1»","n":"«secret:2»"} room 41234, code «secret:1»."#
        );
        assert_eq!(
            p.veil("c", "安全码是123。", true).unwrap(),
            "安全码是«secret:1»。"
        );
    }

    #[test]
    fn numbers_hold_across_processes_and_a_value_is_numbered_once() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path()), &[&crate::SCHEMA]).unwrap();
        let (a, b) = (
            Placeholders::open(&store).unwrap(),
            Placeholders::open(&store).unwrap(),
        );
        a.keep("c", &["first-value".into()], Sensitive::Payment, None, None)
            .unwrap();
        b.keep(
            "c",
            &["second-value".into(), "first-value".into()],
            Sensitive::Secrets,
            None,
            None,
        )
        .unwrap();
        // `a` learns of the second value when a call names it.
        let used = a.used("c", &json!("«secret:2»")).unwrap().unwrap();
        assert_eq!(used[0].value, "second-value");
        assert_eq!(b.kept("c").unwrap()[0].category, Sensitive::Payment);
    }

    #[test]
    fn a_private_key_block_is_kept_whole() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        let pgp =
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----";
        let text = format!(
            "here:\n{key}\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n{pgp}"
        );
        assert_eq!(shaped_secrets(&text), [key, pgp]);
    }

    fn token() -> impl Strategy<Value = String> {
        let prefixes = prop::sample::select(vec![
            "sk-ant-",
            "sk-",
            "sk_live_",
            "ghp_",
            "github_pat_",
            "xoxb-",
            "glpat-",
            "AKIA",
            "AIza",
        ]);
        (prefixes, "[A-Za-z0-9_-]{12,40}[0-9]").prop_map(|(p, rest)| format!("{p}{rest}"))
    }

    proptest! {
        /// Any issued-token shape, anywhere in any prose (Chinese too), never reaches the model,
        /// and the placeholder the model sees puts back exactly that token.
        #[test]
        fn a_shaped_token_in_any_text_is_veiled_and_revealed_exactly(
            before in "([ a-z,:;=\"'(\\[\n令牌是]{0,30}[ ,:;=\"'(\\[\n令牌是])?",
            secret in token(),
            after in "[ a-z,;\"')\\]\n。]{0,30}",
        ) {
            let (_tmp, p) = open();
            let text = format!("{before}{secret}{after}");
            let veiled = p.veil("c", &text, false).unwrap();
            prop_assert!(!veiled.contains(&secret), "{veiled}");
            let used = p.used("c", &json!(veiled)).unwrap().unwrap();
            prop_assert_eq!(reveal(&json!(veiled), &used), json!(text));
        }

        /// Text with no token shape and no kept value passes unchanged.
        #[test]
        fn prose_without_secrets_is_unchanged(text in "[ a-zA-Z0-9_.,\n-]{0,80}") {
            let (_tmp, p) = open();
            p.keep("c", &["a-value-kept".into()], Sensitive::Secrets, None, None).unwrap();
            prop_assume!(!text.contains("a-value-kept") && shaped_secrets(&text).is_empty());
            prop_assert_eq!(p.veil("c", &text, true).unwrap(), text);
        }
    }
}
