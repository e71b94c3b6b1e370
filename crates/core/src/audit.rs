//! The audit log: append-only SQLite rows, each hash-chained to the previous one.
//!
//! Durability contract: [`AuditLog::append`] returns only after the row's transaction has
//! committed to the WAL. From then on the row survives a crash or kill -9 of the app; with the
//! store's `synchronous=NORMAL` it survives an OS crash or power loss once the WAL is synced (at
//! the next checkpoint). Concurrent appends are group-committed: whoever holds the writer commits
//! every row queued so far in one transaction, so throughput grows with concurrency while a lone
//! caller pays one commit.
//!
//! Tamper evidence: `hash = sha256(prev_hash, seq, every column)`, and `audit_head` (updated in
//! the same transaction) names the last row. `verify` finds edited, deleted, inserted and
//! reordered rows and says which. Someone who can rewrite the whole file can recompute the chain;
//! anchoring `cowork audit head` elsewhere defeats that.

use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use thiserror::Error;

pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[derive(Debug, Error)]
pub enum AuditError {
    #[error("audit log: {0} — the call was not run; check the disk and the data dir's permissions")]
    Write(String),
    #[error("audit log: {0}")]
    Read(String),
}

/// One audit row's content (everything but its position and hashes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub ts: String,
    pub call_id: String,
    /// `intent` (written before an effectful call runs) or `final`.
    pub phase: String,
    pub tool: String,
    pub layer: Option<String>,
    pub caller: String,
    pub conversation: String,
    /// JSON, secrets redacted.
    pub args: String,
    /// JSON array of effects.
    pub effects: String,
    /// allow | ask | deny | rejected (never reached review: unknown tool, bad arguments).
    pub decision: String,
    pub score: Option<i64>,
    pub rule: Option<String>,
    pub approved_by: Option<String>,
    /// ok | error kind; None on intent rows.
    pub outcome: Option<String>,
    pub error: Option<String>,
    pub duration_us: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub seq: i64,
    #[serde(flatten)]
    pub record: AuditRecord,
    pub prev_hash: String,
    pub hash: String,
}

fn chain_hash(prev_hash: &str, seq: i64, r: &AuditRecord) -> String {
    let mut h = Sha256::new();
    // Length-prefixed fields: no two different rows serialize to the same bytes.
    let mut field = |value: Option<&str>| match value {
        Some(v) => {
            h.update((v.len() as u64).to_le_bytes());
            h.update(v.as_bytes());
        }
        None => h.update(u64::MAX.to_le_bytes()),
    };
    let score = r.score.map(|s| s.to_string());
    let duration = r.duration_us.map(|d| d.to_string());
    field(Some(prev_hash));
    field(Some(&seq.to_string()));
    for v in [
        Some(r.ts.as_str()),
        Some(&r.call_id),
        Some(&r.phase),
        Some(&r.tool),
        r.layer.as_deref(),
        Some(&r.caller),
        Some(&r.conversation),
        Some(&r.args),
        Some(&r.effects),
        Some(&r.decision),
        score.as_deref(),
        r.rule.as_deref(),
        r.approved_by.as_deref(),
        r.outcome.as_deref(),
        r.error.as_deref(),
        duration.as_deref(),
    ] {
        field(v);
    }
    hex::encode(h.finalize())
}

struct Queue {
    next_ticket: u64,
    rows: Vec<AuditRecord>,
}

struct Writer {
    conn: Connection,
    /// Every ticket up to this one has been through a transaction (committed or failed).
    done_through: u64,
    /// Ticket ranges whose transaction failed, so their callers learn it (rare; bounded).
    failed: Vec<(u64, u64, String)>,
}

pub struct AuditLog {
    store: Store,
    queue: Mutex<Queue>,
    writer: Mutex<Writer>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AuditFilter {
    pub tool: Option<String>,
    pub decision: Option<String>,
    pub call_id: Option<String>,
    pub conversation: Option<String>,
    pub limit: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    pub seq: i64,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    pub rows: u64,
    pub head_seq: i64,
    pub head_hash: String,
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

const COLUMNS: &str = "seq, ts, call_id, phase, tool, layer, caller, conversation, args, effects, decision, score, rule, approved_by, outcome, error, duration_us, prev_hash, hash";

fn entry_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        seq: r.get(0)?,
        record: AuditRecord {
            ts: r.get(1)?,
            call_id: r.get(2)?,
            phase: r.get(3)?,
            tool: r.get(4)?,
            layer: r.get(5)?,
            caller: r.get(6)?,
            conversation: r.get(7)?,
            args: r.get(8)?,
            effects: r.get(9)?,
            decision: r.get(10)?,
            score: r.get(11)?,
            rule: r.get(12)?,
            approved_by: r.get(13)?,
            outcome: r.get(14)?,
            error: r.get(15)?,
            duration_us: r.get(16)?,
        },
        prev_hash: r.get(17)?,
        hash: r.get(18)?,
    })
}

impl Writer {
    fn write_batch(&mut self, rows: &[AuditRecord]) -> rusqlite::Result<()> {
        // IMMEDIATE takes the write lock first, so reading the head and appending are atomic
        // even when another process (CLI next to the app) writes the same log.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (mut seq, mut prev): (i64, String) = tx
            .query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, GENESIS_HASH.to_string()));
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO audit_log (seq, ts, call_id, phase, tool, layer, caller, conversation, args, effects, decision,
                 score, rule, approved_by, outcome, error, duration_us, prev_hash, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            )?;
            for r in rows {
                seq += 1;
                let hash = chain_hash(&prev, seq, r);
                insert.execute(params![
                    seq, r.ts, r.call_id, r.phase, r.tool, r.layer, r.caller, r.conversation, r.args, r.effects,
                    r.decision, r.score, r.rule, r.approved_by, r.outcome, r.error, r.duration_us, prev, hash
                ])?;
                prev = hash;
            }
            tx.prepare_cached("INSERT INTO audit_head (id, seq, hash) VALUES (1, ?1, ?2) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash")?
                .execute(params![seq, prev])?;
        }
        tx.commit()
    }
}

impl AuditLog {
    pub fn open(store: &Store) -> Result<Self, AuditError> {
        let conn = store.connect().map_err(|e| AuditError::Write(e.to_string()))?;
        Ok(AuditLog {
            store: store.clone(),
            queue: Mutex::new(Queue { next_ticket: 0, rows: Vec::new() }),
            writer: Mutex::new(Writer { conn, done_through: 0, failed: Vec::new() }),
        })
    }

    /// Appends a row; returns once it is committed (see the module doc).
    pub fn append(&self, record: AuditRecord) -> Result<(), AuditError> {
        let ticket = {
            let mut q = self.queue.lock().unwrap();
            q.next_ticket += 1;
            q.rows.push(record);
            q.next_ticket
        };
        let mut w = self.writer.lock().unwrap();
        if w.done_through < ticket {
            // Leader: commit everything queued so far, ours included.
            let (batch, last) = {
                let mut q = self.queue.lock().unwrap();
                (std::mem::take(&mut q.rows), q.next_ticket)
            };
            let first = last + 1 - batch.len() as u64;
            if let Err(e) = w.write_batch(&batch) {
                if w.failed.len() >= 256 {
                    w.failed.remove(0);
                }
                w.failed.push((first, last, e.to_string()));
            }
            w.done_through = last;
        }
        match w.failed.iter().find(|(a, b, _)| (*a..=*b).contains(&ticket)) {
            Some((_, _, message)) => Err(AuditError::Write(message.clone())),
            None => Ok(()),
        }
    }

    fn read_conn(&self) -> Result<Connection, AuditError> {
        self.store.connect().map_err(|e| AuditError::Read(e.to_string()))
    }

    /// Newest first.
    pub fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, AuditError> {
        let conn = self.read_conn()?;
        let sql = format!(
            "SELECT {COLUMNS} FROM audit_log
             WHERE (?1 IS NULL OR tool = ?1) AND (?2 IS NULL OR decision = ?2) AND (?3 IS NULL OR call_id = ?3)
               AND (?4 IS NULL OR conversation = ?4)
             ORDER BY seq DESC LIMIT ?5"
        );
        let limit = filter.limit.map(|l| l as i64).unwrap_or(-1);
        let mut stmt = conn.prepare(&sql).map_err(|e| AuditError::Read(e.to_string()))?;
        let rows = stmt
            .query_map(params![filter.tool, filter.decision, filter.call_id, filter.conversation, limit], entry_from_row)
            .map_err(|e| AuditError::Read(e.to_string()))?;
        rows.collect::<Result<_, _>>().map_err(|e| AuditError::Read(e.to_string()))
    }

    /// Every row in order, for `export --jsonl`.
    pub fn for_each(&self, mut f: impl FnMut(AuditEntry)) -> Result<(), AuditError> {
        let conn = self.read_conn()?;
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM audit_log ORDER BY seq")).map_err(|e| AuditError::Read(e.to_string()))?;
        let rows = stmt.query_map([], entry_from_row).map_err(|e| AuditError::Read(e.to_string()))?;
        for row in rows {
            f(row.map_err(|e| AuditError::Read(e.to_string()))?);
        }
        Ok(())
    }

    pub fn head(&self) -> Result<(i64, String), AuditError> {
        let conn = self.read_conn()?;
        conn.query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map(|h| h.unwrap_or((0, GENESIS_HASH.to_string())))
            .map_err(|e| AuditError::Read(e.to_string()))
    }

    /// Walks the chain and reports every row that is not what was written.
    pub fn verify(&self) -> Result<VerifyReport, AuditError> {
        let (head_seq, head_hash) = self.head()?;
        let mut problems = Vec::new();
        let mut expected_seq = 1i64;
        let mut expected_prev = GENESIS_HASH.to_string();
        let mut rows = 0u64;
        self.for_each(|e| {
            rows += 1;
            if e.seq != expected_seq {
                let message = if e.seq > expected_seq {
                    format!("rows {expected_seq}..{} are missing (deleted)", e.seq - 1)
                } else {
                    format!("row {} is out of order", e.seq)
                };
                problems.push(Problem { seq: expected_seq, message });
            } else if e.prev_hash != expected_prev {
                problems.push(Problem {
                    seq: e.seq,
                    message: format!("row {}: does not link to the row before it (a row was inserted, deleted or reordered)", e.seq),
                });
            }
            if chain_hash(&e.prev_hash, e.seq, &e.record) != e.hash {
                problems.push(Problem { seq: e.seq, message: format!("row {}: contents do not match its hash (edited)", e.seq) });
            }
            expected_seq = e.seq + 1;
            expected_prev = e.hash;
        })?;
        let last_seq = expected_seq - 1;
        if head_seq != last_seq || (head_seq > 0 && head_hash != expected_prev) {
            let message = if head_seq > last_seq {
                format!("rows {}..{head_seq} at the end are missing (deleted); the head names row {head_seq}", last_seq + 1)
            } else {
                format!("the head names row {head_seq} but the log ends at row {last_seq}")
            };
            problems.push(Problem { seq: head_seq.max(last_seq), message });
        }
        Ok(VerifyReport { rows, head_seq, head_hash, problems })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_store::DataDir;

    fn record(i: usize) -> AuditRecord {
        AuditRecord { ts: format!("t{i}"), call_id: format!("c{i}"), phase: "final".into(), tool: "x".into(), decision: "allow".into(), args: "{}".into(), effects: "[]".into(), caller: "test".into(), conversation: "conv".into(), ..Default::default() }
    }

    #[test]
    fn concurrent_appends_form_one_unbroken_chain() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path())).unwrap();
        let log = std::sync::Arc::new(AuditLog::open(&store).unwrap());
        // A second AuditLog on the same file stands for another process (the CLI next to the app).
        let other = std::sync::Arc::new(AuditLog::open(&store).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let log = if t % 2 == 0 { log.clone() } else { other.clone() };
                std::thread::spawn(move || (0..50).for_each(|i| log.append(record(t * 100 + i)).unwrap()))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let report = log.verify().unwrap();
        assert_eq!(report.rows, 400);
        assert!(report.ok(), "{:?}", report.problems);
        assert_eq!(report.head_seq, 400);
    }
}
