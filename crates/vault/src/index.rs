//! The vault's index in the store: rows, FTS5 (trigram) and vectors, and the SQL that reads
//! them. Everything here can be rebuilt from the files.

use crate::entry::{Kind, Source};
use crate::vectors::{from_blob, to_blob};
use rusqlite::{Connection, OptionalExtension, Transaction, params, params_from_iter};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An entry as the index knows it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultEntry")] // the TypeScript name (JSON does not carry it)
#[schemars(rename = "Entry")] // the tool schemas' name, unchanged
pub struct Entry {
    pub id: String,
    /// Relative to the vault folder.
    pub path: String,
    pub kind: Kind,
    pub scope: String,
    pub title: String,
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    pub body: String,
    pub created: String,
    pub updated: String,
}

/// What a file was when it was indexed: unchanged files are skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    pub mtime_ns: i64,
    pub size: i64,
}

const COLUMNS: &str = "id, path, kind, scope, title, tags, source, body, created, updated";

fn entry_from_row(r: &rusqlite::Row) -> rusqlite::Result<Entry> {
    entry_from_row_at(r, 0)
}

/// The COLUMNS of a row, starting at column `at`.
fn entry_from_row_at(r: &rusqlite::Row, at: usize) -> rusqlite::Result<Entry> {
    let tags: String = r.get(at + 5)?;
    let source: Option<String> = r.get(at + 6)?;
    let kind: String = r.get(at + 2)?;
    Ok(Entry {
        id: r.get(at)?,
        path: r.get(at + 1)?,
        kind: Kind::parse(&kind).unwrap_or(Kind::Note),
        scope: r.get(at + 3)?,
        title: r.get(at + 4)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        source: source
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default(),
        body: r.get(at + 7)?,
        created: r.get(at + 8)?,
        updated: r.get(at + 9)?,
    })
}

/// Inserts or replaces the row of `entry.path` (or of `entry.id`, when the file was renamed).
/// The vector, when given, is written in the same transaction.
pub fn upsert(
    tx: &Transaction,
    entry: &Entry,
    stamp: FileStamp,
    hash: &str,
    vector: Option<(&str, &[f32])>,
) -> rusqlite::Result<i64> {
    // The same id at another path is a rename (front-matter ids move with the file); a file
    // that replaced another at the same path takes over its row.
    let existing: Option<i64> = tx
        .query_row("SELECT row FROM vault_entries WHERE id = ?1 OR path = ?2 ORDER BY (id = ?1) DESC LIMIT 1", params![entry.id, entry.path], |r| r.get(0))
        .optional()?;
    if let Some(row) = existing {
        let gone: Vec<i64> = tx
            .prepare("DELETE FROM vault_entries WHERE (id = ?1 OR path = ?2) AND row <> ?3 RETURNING row")?
            .query_map(params![entry.id, entry.path, row], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for row in gone {
            tx.execute("DELETE FROM vault_grams WHERE rowid = ?1", [row])?;
        }
    }
    let tags = serde_json::to_string(&entry.tags).unwrap_or_else(|_| "[]".into());
    let source = (!entry.source.is_empty())
        .then(|| serde_json::to_string(&entry.source).unwrap_or_default());
    let values = params![
        entry.id,
        entry.path,
        entry.kind.as_str(),
        entry.scope,
        entry.title,
        tags,
        source,
        entry.body,
        entry.created,
        entry.updated,
        stamp.mtime_ns,
        stamp.size,
        hash
    ];
    let row = match existing {
        Some(row) => {
            tx.execute(
                "UPDATE vault_entries SET id=?1, path=?2, kind=?3, scope=?4, title=?5, tags=?6, source=?7, body=?8, created=?9, updated=?10, mtime_ns=?11, size=?12, hash=?13 WHERE row = ?14",
                rusqlite::params_from_iter(values.iter().copied().chain(std::iter::once(&row as &dyn rusqlite::ToSql))),
            )?;
            row
        }
        None => tx.query_row(
            &format!("INSERT INTO vault_entries ({COLUMNS}, mtime_ns, size, hash) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13) RETURNING row"),
            values,
            |r| r.get(0),
        )?,
    };
    write_grams(tx, row, &entry.title, &format!("{tags} {}", entry.body))?;
    // New text: every model's old vector of it is stale (switching back re-embeds it).
    tx.execute("DELETE FROM vault_vectors WHERE row = ?1", [row])?;
    if let Some((model, v)) = vector {
        set_vector(tx, row, model, v)?;
    }
    tx.execute("DELETE FROM vault_problems WHERE path = ?1", [&entry.path])?;
    Ok(row)
}

/// Removes the row of a file that is gone; its row number, for the vector cache.
pub fn remove_path(conn: &Connection, path: &str) -> rusqlite::Result<Option<i64>> {
    conn.execute("DELETE FROM vault_problems WHERE path = ?1", [path])?;
    let row: Option<i64> = conn
        .query_row(
            "DELETE FROM vault_entries WHERE path = ?1 RETURNING row",
            [path],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(row) = row {
        conn.execute("DELETE FROM vault_grams WHERE rowid = ?1", [row])?;
    }
    Ok(row)
}

/// The overlapping bigrams of every run of two or more CJK characters in `text`, one token
/// each (`护照在抽屉里` → `护照 照在 在抽 抽屉 屉里`): what `vault_grams` indexes, so a
/// two-character Chinese word is found by words. Nothing else of the text: trigrams serve it.
pub fn cjk_grams(text: &str) -> String {
    let mut out = String::new();
    for term in terms(text) {
        let chars: Vec<char> = term.chars().collect();
        if chars.len() >= 2 && chars.iter().all(|c| is_cjk(*c)) {
            for pair in chars.windows(2) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.extend(pair);
            }
        }
    }
    out
}

/// An entry's bigrams, replacing any it had.
fn write_grams(tx: &Connection, row: i64, title: &str, rest: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM vault_grams WHERE rowid = ?1", [row])?;
    let (title, rest) = (cjk_grams(title), cjk_grams(rest));
    if !title.is_empty() || !rest.is_empty() {
        tx.execute(
            "INSERT INTO vault_grams (rowid, title, body) VALUES (?1, ?2, ?3)",
            params![row, title, rest],
        )?;
    }
    Ok(())
}

/// Fills `vault_grams` for the entries indexed before it existed, once (migration V10 asks).
pub fn backfill_grams(conn: &mut Connection) -> rusqlite::Result<usize> {
    let asked: i64 = conn.query_row("SELECT count(*) FROM vault_grams_backfill", [], |r| {
        r.get(0)
    })?;
    if asked == 0 {
        return Ok(0);
    }
    let tx = conn.transaction()?;
    let entries: Vec<(i64, String, String, String)> = tx
        .prepare("SELECT row, title, tags, body FROM vault_entries")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (row, title, tags, body) in &entries {
        write_grams(&tx, *row, title, &format!("{tags} {body}"))?;
    }
    tx.execute("DELETE FROM vault_grams_backfill", [])?;
    tx.commit()?;
    Ok(entries.len())
}

pub fn stamps(conn: &Connection) -> rusqlite::Result<std::collections::HashMap<String, FileStamp>> {
    let mut stmt = conn.prepare("SELECT path, mtime_ns, size FROM vault_entries")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            FileStamp {
                mtime_ns: r.get(1)?,
                size: r.get(2)?,
            },
        ))
    })?;
    rows.collect()
}

pub fn hash_of(conn: &Connection, path: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT hash FROM vault_entries WHERE path = ?1",
        [path],
        |r| r.get(0),
    )
    .optional()
}

/// A file whose bytes did not change (touched, or rewritten as it was): only its stamp moves.
pub fn touch(conn: &Connection, path: &str, stamp: FileStamp) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE vault_entries SET mtime_ns = ?2, size = ?3 WHERE path = ?1",
        params![path, stamp.mtime_ns, stamp.size],
    )?;
    Ok(())
}

pub fn record_problem(conn: &Connection, path: &str, error: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO vault_problems (path, error, seen_at) VALUES (?1, ?2, ?3)",
        params![
            path,
            error,
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ],
    )?;
    Ok(())
}

pub fn problems(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare("SELECT path, error FROM vault_problems ORDER BY path")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

pub fn get(conn: &Connection, id_or_path: &str) -> rusqlite::Result<Option<(i64, Entry)>> {
    conn.query_row(
        &format!("SELECT row, {COLUMNS} FROM vault_entries WHERE id = ?1 OR path = ?1 LIMIT 1"),
        [id_or_path],
        |r| Ok((r.get(0)?, entry_from_row_at(r, 1)?)),
    )
    .optional()
}

pub fn entries_by_rows(
    conn: &Connection,
    rows: &[i64],
) -> rusqlite::Result<std::collections::HashMap<i64, Entry>> {
    let mut out = std::collections::HashMap::new();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT row, {COLUMNS} FROM vault_entries WHERE row = ?1"
    ))?;
    for row in rows {
        if let Some(entry) = stmt
            .query_row([row], |r| entry_from_row_at(r, 1))
            .optional()?
        {
            out.insert(*row, entry);
        }
    }
    Ok(out)
}

/// Every stored vector of `model`, for the cache.
pub fn vectors(
    conn: &Connection,
    model: &str,
    mut each: impl FnMut(i64, Vec<f32>),
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT row, vector FROM vault_vectors WHERE model = ?1")?;
    let mut rows = stmt.query([model])?;
    while let Some(r) = rows.next()? {
        each(r.get(0)?, from_blob(&r.get::<_, Vec<u8>>(1)?));
    }
    Ok(())
}

/// Rows with no vector of `model` (new, or made by another model): the background embedder's work.
pub fn missing_vectors(
    conn: &Connection,
    model: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT e.row, e.title, e.body FROM vault_entries e LEFT JOIN vault_vectors v ON v.row = e.row AND v.model = ?1
         WHERE v.row IS NULL ORDER BY e.row LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![model, limit as i64], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    rows.collect()
}

pub fn count_missing_vectors(conn: &Connection, model: &str) -> rusqlite::Result<usize> {
    conn.query_row(
        "SELECT count(*) FROM vault_entries e LEFT JOIN vault_vectors v ON v.row = e.row AND v.model = ?1 WHERE v.row IS NULL",
        [model],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n as usize)
}

pub fn set_vector(
    conn: &Connection,
    row: i64,
    model: &str,
    vector: &[f32],
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO vault_vectors (row, model, vector) VALUES (?1, ?2, ?3)",
        params![row, model, to_blob(vector)],
    )?;
    Ok(())
}

/// A model's language centroids (see language.rs), stored so they are computed once.
pub fn centroids(conn: &Connection, key: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    conn.query_row(
        "SELECT centroids FROM vault_models WHERE model = ?1",
        [key],
        |r| r.get(0),
    )
    .optional()
}

pub fn set_centroids(conn: &Connection, key: &str, blob: &[u8]) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO vault_models (model, centroids) VALUES (?1, ?2)",
        params![key, blob],
    )?;
    Ok(())
}

/// Which entries a search may return.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultFilter")] // the TypeScript name (JSON does not carry it)
#[schemars(rename = "Filter")] // the tool schemas' name, unchanged
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// `global`, `workspace:<path>`, `project:<name>`. Entries of other scopes are left out;
    /// `global` entries are always included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Any of note, memory (= the four below), preference, fact, decision, learning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// Entries with all of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Updated on or after this date (YYYY-MM-DD or RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Updated before this date (YYYY-MM-DD or RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.scope.is_none()
            && self.kinds.is_empty()
            && self.tags.is_empty()
            && self.since.is_none()
            && self.until.is_none()
    }

    /// A WHERE fragment over `e.` columns and its parameters.
    pub fn sql(&self) -> Result<(String, Vec<String>), String> {
        let mut clauses = vec!["1".to_string()];
        let mut values = Vec::new();
        if let Some(scope) = &self.scope {
            values.push(scope.clone());
            clauses.push(format!(
                "(e.scope = 'global' OR e.scope = ?{})",
                values.len()
            ));
        }
        if !self.kinds.is_empty() {
            let mut kinds: Vec<&str> = Vec::new();
            for k in &self.kinds {
                if k.eq_ignore_ascii_case("memory") || k.eq_ignore_ascii_case("memories") {
                    kinds.extend(
                        Kind::ALL
                            .iter()
                            .filter(|k| k.is_memory())
                            .map(|k| k.as_str()),
                    );
                } else {
                    kinds.push(Kind::parse(k).ok_or_else(|| format!("unknown kind {k:?}: use note, memory, preference, fact, decision or learning"))?.as_str());
                }
            }
            clauses.push(format!(
                "e.kind IN ({})",
                kinds
                    .iter()
                    .map(|k| format!("'{k}'"))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        for tag in &self.tags {
            values.push(crate::entry::normalize_tag(tag));
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM json_each(e.tags) WHERE lower(value) = lower(?{}))",
                values.len()
            ));
        }
        for (bound, op) in [(&self.since, ">="), (&self.until, "<")] {
            if let Some(date) = bound {
                let valid = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok()
                    || chrono::DateTime::parse_from_rfc3339(date).is_ok();
                if !valid {
                    return Err(format!("date {date:?} is not YYYY-MM-DD or RFC 3339"));
                }
                values.push(date.clone());
                clauses.push(format!("e.updated {op} ?{}", values.len()));
            }
        }
        Ok((clauses.join(" AND "), values))
    }
}

/// Rows the filter allows (None: all).
pub fn allowed_rows(
    conn: &Connection,
    filter: &Filter,
) -> Result<Option<std::collections::HashSet<i64>>, String> {
    if filter.is_empty() {
        return Ok(None);
    }
    let (clause, values) = filter.sql()?;
    let mut stmt = conn
        .prepare(&format!("SELECT e.row FROM vault_entries e WHERE {clause}"))
        .map_err(|e| e.to_string())?;
    let rows = stmt
        .query_map(params_from_iter(values.iter()), |r| r.get(0))
        .map_err(|e| e.to_string())?;
    rows.collect::<Result<_, _>>()
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Common English words that would match almost everything as trigrams.
pub(crate) const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "was", "what", "where", "when", "how", "who", "why", "that",
    "this", "with", "from", "you", "your", "have", "has", "did", "does", "about", "into", "can",
    "not", "but", "all", "any", "our", "out", "its", "his", "her", "they", "them", "there", "then",
    "than", "will", "would", "should", "could", "which", "while", "been", "were", "mine", "some",
];

use crate::language::is_cjk;

/// The query's terms: Latin words, and runs of CJK characters (which have no spaces).
pub fn terms(query: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut current_cjk = false;
    let flush = |current: &mut String, terms: &mut Vec<String>| {
        if !current.is_empty() {
            terms.push(std::mem::take(current).to_lowercase());
        }
    };
    for c in query.chars() {
        if c.is_alphanumeric() || c == '_' {
            let cjk = is_cjk(c);
            if cjk != current_cjk {
                flush(&mut current, &mut terms);
            }
            current_cjk = cjk;
            current.push(c);
        } else {
            flush(&mut current, &mut terms);
        }
    }
    flush(&mut current, &mut terms);
    terms
}

/// An FTS5 trigram query: OR of quoted terms of ≥ 3 characters. A CJK run longer than three
/// characters is split into its trigrams (a sentence is rarely in the text verbatim). None when
/// no term is long enough — then [`like_terms`] serves.
pub fn fts_query(query: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for term in terms(query) {
        let chars: Vec<char> = term.chars().collect();
        if chars.len() < 3 || STOPWORDS.contains(&term.as_str()) {
            continue;
        }
        if chars.iter().all(|c| is_cjk(*c)) && chars.len() > 3 {
            parts.extend(chars.windows(3).map(|w| w.iter().collect::<String>()));
        } else {
            parts.push(term);
        }
    }
    parts.dedup();
    (!parts.is_empty()).then(|| {
        parts
            .iter()
            .map(|p| format!("\"{}\"", p.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// A `vault_grams` query: OR of the bigrams of the query's CJK runs (我的护照放哪了 → 我的 OR
/// 的护 OR 护照 …; BM25's IDF keeps common pairs like 我的 from dominating). None without a
/// CJK run of two or more characters.
pub fn gram_query(query: &str) -> Option<String> {
    let mut grams: Vec<&str> = Vec::new();
    let text = cjk_grams(query);
    for gram in text.split(' ').filter(|g| !g.is_empty()) {
        if !grams.contains(&gram) {
            grams.push(gram);
        }
    }
    (!grams.is_empty()).then(|| {
        grams
            .iter()
            .map(|g| format!("\"{g}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// Terms no index holds (1–2 Latin characters, a single CJK character), searched with LIKE.
pub fn like_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for term in terms(query) {
        if term.chars().count() < 3 && !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// BM25 best first: over the trigram index, and over the CJK bigrams for Chinese words of two
/// characters; both lists fused by reciprocal rank when a query has both (title counts 10×,
/// tags 3× the body).
pub fn bm25(
    conn: &Connection,
    query: &str,
    filter: &Filter,
    limit: usize,
) -> Result<Vec<i64>, String> {
    let (clause, mut values) = filter.sql()?;
    let run = |sql: &str, values: &[String]| -> Result<Vec<i64>, String> {
        let mut stmt = conn.prepare_cached(sql).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(params_from_iter(values.iter()), |r| r.get(0))
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<Vec<i64>, _>>()
            .map_err(|e| e.to_string())
    };
    let ranked = |table: &str, weights: &str, fts: String| -> Result<Vec<i64>, String> {
        if filter.is_empty() {
            // The FTS table alone: joining every match to its row to filter costs more than
            // the ranking itself (p50 20 → 10 ms over 100k notes).
            let sql = format!(
                "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY bm25({table}, {weights}) LIMIT {limit}"
            );
            return run(&sql, &[fts]);
        }
        let mut values = values.clone();
        values.push(fts);
        let sql = format!(
            "SELECT e.row FROM {table} JOIN vault_entries e ON e.row = {table}.rowid
             WHERE {table} MATCH ?{} AND {clause} ORDER BY bm25({table}, {weights}) LIMIT {limit}",
            values.len()
        );
        run(&sql, &values)
    };
    let mut lists = Vec::new();
    if let Some(fts) = fts_query(query) {
        lists.push(ranked("vault_fts", "10.0, 1.0, 3.0", fts)?);
    }
    if let Some(grams) = gram_query(query) {
        lists.push(ranked("vault_grams", "10.0, 1.0", grams)?);
    }
    match lists.len() {
        0 => {}
        1 => return Ok(lists.pop().unwrap_or_default()),
        _ => return Ok(fuse(&lists, limit)),
    }
    // Short terms only: a bounded LIKE scan, the entries matching the most terms first.
    let like = like_terms(query);
    if like.is_empty() {
        return Ok(vec![]);
    }
    let mut score = Vec::new();
    for term in &like {
        values.push(format!(
            "%{}%",
            term.replace('%', "\\%").replace('_', "\\_")
        ));
        score.push(format!(
            "((e.title LIKE ?{n} ESCAPE '\\') * 3 + (e.body LIKE ?{n} ESCAPE '\\'))",
            n = values.len()
        ));
    }
    let sql = format!(
        "SELECT e.row FROM vault_entries e WHERE {clause} AND ({score}) > 0 ORDER BY ({score}) DESC, e.updated DESC LIMIT {limit}",
        score = score.join(" + ")
    );
    run(&sql, &values)
}

/// Reciprocal-rank fusion of ranked lists (the same constant as the hybrid search).
fn fuse(lists: &[Vec<i64>], limit: usize) -> Vec<i64> {
    let mut scores: std::collections::HashMap<i64, f32> = std::collections::HashMap::new();
    for list in lists {
        for (rank, row) in list.iter().enumerate() {
            *scores.entry(*row).or_default() += 1.0 / (crate::RRF_K + rank as f32 + 1.0);
        }
    }
    let mut rows: Vec<(i64, f32)> = scores.into_iter().collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.into_iter().take(limit).map(|(row, _)| row).collect()
}

pub struct Stats {
    pub entries: usize,
    pub by_kind: Vec<(String, usize)>,
    pub vectors: Vec<(String, usize)>,
}

pub fn stats(conn: &Connection) -> rusqlite::Result<Stats> {
    let entries = conn.query_row("SELECT count(*) FROM vault_entries", [], |r| {
        r.get::<_, i64>(0)
    })? as usize;
    let pairs = |sql: &str| -> rusqlite::Result<Vec<(String, usize)>> {
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?;
        rows.collect()
    };
    Ok(Stats {
        entries,
        by_kind: pairs("SELECT kind, count(*) FROM vault_entries GROUP BY kind ORDER BY kind")?,
        vectors: pairs("SELECT model, count(*) FROM vault_vectors GROUP BY model ORDER BY model")?,
    })
}

/// Most recently updated entries, for browsing.
pub fn recent(conn: &Connection, filter: &Filter, limit: usize) -> Result<Vec<Entry>, String> {
    let (clause, values) = filter.sql()?;
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM vault_entries e WHERE {clause} ORDER BY e.updated DESC LIMIT {limit}")).map_err(|e| e.to_string())?;
    let rows = stmt
        .query_map(params_from_iter(values.iter()), entry_from_row)
        .map_err(|e| e.to_string())?;
    rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_split_into_trigram_terms_and_short_like_terms() {
        assert_eq!(
            fts_query("Where is my passport?").as_deref(),
            Some("\"passport\"")
        );
        assert_eq!(
            fts_query("护照在哪里").as_deref(),
            Some("\"护照在\" OR \"照在哪\" OR \"在哪里\"")
        );
        assert_eq!(fts_query("is it"), None);
        assert_eq!(
            gram_query("我的护照放哪了").as_deref(),
            Some("\"我的\" OR \"的护\" OR \"护照\" OR \"照放\" OR \"放哪\" OR \"哪了\"")
        );
        assert_eq!(gram_query("passport 猫"), None, "no run of two");
        assert_eq!(
            cjk_grams("护照在抽屉里 passport"),
            "护照 照在 在抽 抽屉 屉里"
        );
        assert_eq!(like_terms("护照在哪里"), Vec::<String>::new());
        assert_eq!(like_terms("猫 is"), vec!["猫", "is"]);
        assert_eq!(like_terms("AI notes"), vec!["ai"]);
        assert_eq!(
            terms("blue文件夹 in Q3"),
            vec!["blue", "文件夹", "in", "q3"]
        );
    }
}
