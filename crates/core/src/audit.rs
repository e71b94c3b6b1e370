//! The audit log: append-only SQLite rows, each hash-chained to the previous one.
//!
//! Durability contract (group commit). Rows are chained and committed by one writer thread, in
//! batches: everything queued when it wakes goes into one transaction (at most 4096 rows).
//! - [`AuditLog::append`] queues a row and returns a [`Ticket`] at once.
//! - [`AuditLog::durable`] / [`AuditLog::flush`] return once the row / every row queued so far
//!   is committed to the WAL (they hurry the writer): from then on it survives a crash or kill -9 of the app, and (with
//!   the store's `synchronous=NORMAL`) an OS crash or power loss once the WAL is synced at the next
//!   checkpoint.
//! - The scheduler waits for durability of the *intent* row before any effectful tool runs
//!   (write-ahead: no effect without a committed record of who allowed it). A call's *final* row
//!   is queued before the call returns and committed in the next batch — at most [`LINGER`]
//!   (2 ms) later unless someone waits; the CLI flushes before it prints, the app on shutdown, and dropping the
//!   log drains the queue. Only a kill -9 inside that window can lose final rows, never an
//!   effectful call's intent row.
//!
//! Tamper evidence: `hash = sha256(prev_hash, seq, every column)`, and `audit_head` (updated in
//! the same transaction) names the last row. `verify` finds edited, deleted, inserted and
//! reordered rows and says which. Someone who can rewrite the whole file can recompute the chain;
//! anchoring `cowork audit head` elsewhere defeats that.

use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Condvar, Mutex};
use thiserror::Error;
use tokio::sync::watch;

/// The triggers that make the log append-only, exactly as the store's migrations create them:
/// `verify` reports one that is missing or altered.
const GUARD_TRIGGERS: &[(&str, &str)] = &[
    (
        "audit_log_no_update",
        "CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END",
    ),
    (
        "audit_log_no_delete",
        "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END",
    ),
    (
        "audit_head_forward_only",
        "CREATE TRIGGER audit_head_forward_only BEFORE UPDATE ON audit_head WHEN NEW.seq < OLD.seq OR NEW.id != OLD.id BEGIN SELECT RAISE(ABORT, 'audit_head only moves forward'); END",
    ),
    (
        "audit_head_no_delete",
        "CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head BEGIN SELECT RAISE(ABORT, 'audit_head cannot be deleted'); END",
    ),
];

/// A head written down elsewhere (`cowork audit head`): `SEQ HASH`, `SEQ:HASH`, or a bare hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub seq: Option<i64>,
    pub hash: String,
}

impl Anchor {
    /// The anchors [`AuditLog::append_anchor`] wrote to `file`: one `TIME SEQ HASH` per line
    /// (the time is for the person reading it).
    pub fn read_file(file: &std::path::Path) -> Result<Vec<Anchor>, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words[words.len().saturating_sub(2)..].join(" ").parse()
            })
            .collect()
    }
}

impl std::str::FromStr for Anchor {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (seq, hash) = match text.split_once([' ', ':', '\t']) {
            Some((seq, hash)) => (
                Some(
                    seq.trim()
                        .trim_start_matches('#')
                        .parse::<i64>()
                        .map_err(|_| format!("anchor {text:?}: the row number must be a number"))?,
                ),
                hash.trim(),
            ),
            None => (None, text),
        };
        if hash.len() != 64 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "anchor {text:?}: write `SEQ HASH` as `cowork audit head` prints it (the hash is 64 hex digits)"
            ));
        }
        Ok(Anchor {
            seq,
            hash: hash.to_ascii_lowercase(),
        })
    }
}

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
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
#[cfg_attr(feature = "specta", derive(specta::Type))]
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

/// A queued row: ready, or built by the writer thread. Building a row (JSON of the arguments
/// and effects, the timestamp text, a dozen strings) costs a few thousand instructions that a
/// caller waiting on its result should not pay; the writer builds rows while callers wait on
/// their tools' I/O.
enum Pending {
    Ready(Box<AuditRecord>),
    Deferred(Box<dyn FnOnce() -> AuditRecord + Send>),
}

impl Pending {
    fn build(self) -> AuditRecord {
        match self {
            Pending::Ready(record) => *record,
            Pending::Deferred(build) => build(),
        }
    }
}

/// A queued row's position; ask [`AuditLog::durable`] when it is committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

const MAX_BATCH: usize = 4096;

struct State {
    queue: Vec<Pending>,
    /// Tickets handed out so far (the last queued row's ticket).
    enqueued: u64,
    /// Every ticket up to this one has been through a transaction (committed or failed).
    done_through: u64,
    /// Ticket ranges whose transaction failed, so their waiters learn it (rare; bounded).
    failed: Vec<(u64, u64, String)>,
    /// The highest ticket someone is waiting on (durable/flush): commit it without lingering.
    urgent: u64,
    shutdown: bool,
}

/// How long the writer lets non-urgent rows gather before committing. Each commit costs tens of
/// microseconds of CPU that, on a 2-core machine, competes with the tools being called; a short
/// linger turns a commit per call into one per few calls (the MCP gateway benchmark: +60 µs →
/// +5 µs per sequential call). Waiters (write-ahead intents, flush) never wait for it.
const LINGER: std::time::Duration = std::time::Duration::from_millis(2);

struct Shared {
    state: Mutex<State>,
    wake_writer: Condvar,
    done: Condvar,
    /// The same progress as `done`, for async waiters.
    done_tx: watch::Sender<u64>,
}

struct Writer {
    conn: Connection,
}

pub struct AuditLog {
    store: Store,
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AuditFilter {
    pub tool: Option<String>,
    pub decision: Option<String>,
    pub call_id: Option<String>,
    pub conversation: Option<String>,
    pub limit: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Problem {
    pub seq: i64,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (mut seq, mut prev): (i64, String) = tx
            .query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
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
                insert
                    .execute(params![
                        seq,
                        r.ts,
                        r.call_id,
                        r.phase,
                        r.tool,
                        r.layer,
                        r.caller,
                        r.conversation,
                        r.args,
                        r.effects,
                        r.decision,
                        r.score,
                        r.rule,
                        r.approved_by,
                        r.outcome,
                        r.error,
                        r.duration_us,
                        prev,
                        hash
                    ])
                    // A trigger that drops the row (`RAISE(IGNORE)`) must not pass for a write.
                    .and_then(|stored| match stored {
                        1 => Ok(()),
                        n => Err(rusqlite::Error::StatementChangedRows(n)),
                    })?;
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
        let conn = store
            .connect()
            .map_err(|e| AuditError::Write(e.to_string()))?;
        let (done_tx, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: Vec::new(),
                enqueued: 0,
                done_through: 0,
                failed: Vec::new(),
                urgent: 0,
                shutdown: false,
            }),
            wake_writer: Condvar::new(),
            done: Condvar::new(),
            done_tx,
        });
        let writer_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("cowork-audit".into())
            .spawn(move || run_writer(Writer { conn }, &writer_shared))
            .map_err(|e| AuditError::Write(format!("cannot start the audit writer: {e}")))?;
        Ok(AuditLog {
            store: store.clone(),
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues a row (chained and committed by the writer, in queue order).
    pub fn append(&self, record: AuditRecord) -> Result<Ticket, AuditError> {
        self.enqueue(Pending::Ready(Box::new(record)))
    }

    /// Queues a row that the writer builds: same order and durability as [`AuditLog::append`];
    /// `build` must capture everything it needs (the timestamp included) when it is made.
    pub fn append_deferred(
        &self,
        build: impl FnOnce() -> AuditRecord + Send + 'static,
    ) -> Result<Ticket, AuditError> {
        self.enqueue(Pending::Deferred(Box::new(build)))
    }

    fn enqueue(&self, record: Pending) -> Result<Ticket, AuditError> {
        let mut state = self.shared.state.lock().unwrap();
        if state.shutdown {
            return Err(AuditError::Write("the audit log is closed".into()));
        }
        state.queue.push(record);
        state.enqueued += 1;
        let ticket = Ticket(state.enqueued);
        // Wake the writer only when it sleeps for want of rows or the batch is full: while it
        // lingers it collects the rest itself, and a wake-up per row costs a context switch.
        let wake = state.queue.len() == 1 || state.queue.len() >= MAX_BATCH;
        drop(state);
        if wake {
            self.shared.wake_writer.notify_one();
        }
        Ok(ticket)
    }

    /// Someone waits for this ticket: the writer commits it without lingering.
    fn hurry(&self, ticket: Ticket) {
        let mut state = self.shared.state.lock().unwrap();
        if ticket.0 > state.urgent {
            state.urgent = ticket.0;
            drop(state);
            self.shared.wake_writer.notify_one();
        }
    }

    fn outcome(state: &State, ticket: Ticket) -> Result<(), AuditError> {
        match state
            .failed
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&ticket.0))
        {
            Some((_, _, message)) => Err(AuditError::Write(message.clone())),
            None => Ok(()),
        }
    }

    /// Waits (async) until the row is committed; an error if its transaction failed.
    pub async fn durable(&self, ticket: Ticket) -> Result<(), AuditError> {
        let mut rx = self.shared.done_tx.subscribe();
        self.hurry(ticket);
        rx.wait_for(|done| *done >= ticket.0)
            .await
            .map_err(|_| AuditError::Write("the audit writer stopped".into()))?;
        Self::outcome(&self.shared.state.lock().unwrap(), ticket)
    }

    /// Waits (blocking) until every row queued so far is committed.
    pub fn flush(&self) -> Result<(), AuditError> {
        let ticket = Ticket(self.shared.state.lock().unwrap().enqueued);
        self.hurry(ticket);
        let mut state = self.shared.state.lock().unwrap();
        while state.done_through < ticket.0 {
            state = self.shared.done.wait(state).unwrap();
        }
        Self::outcome(&state, ticket)
    }

    /// Appends and waits for the commit: for rows that must be on disk before anything else
    /// happens (write-ahead intent rows).
    pub async fn append_durable(&self, record: AuditRecord) -> Result<(), AuditError> {
        let ticket = self.append(record)?;
        self.durable(ticket).await
    }

    fn read_conn(&self) -> Result<Connection, AuditError> {
        self.store
            .connect()
            .map_err(|e| AuditError::Read(e.to_string()))
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
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| AuditError::Read(e.to_string()))?;
        let rows = stmt
            .query_map(
                params![
                    filter.tool,
                    filter.decision,
                    filter.call_id,
                    filter.conversation,
                    limit
                ],
                entry_from_row,
            )
            .map_err(|e| AuditError::Read(e.to_string()))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| AuditError::Read(e.to_string()))
    }

    /// Every row in order, for `export --jsonl`.
    pub fn for_each(&self, f: impl FnMut(AuditEntry)) -> Result<(), AuditError> {
        Self::for_each_on(&self.read_conn()?, f)
    }

    fn for_each_on(conn: &Connection, mut f: impl FnMut(AuditEntry)) -> Result<(), AuditError> {
        let mut stmt = conn
            .prepare(&format!("SELECT {COLUMNS} FROM audit_log ORDER BY seq"))
            .map_err(|e| AuditError::Read(e.to_string()))?;
        let rows = stmt
            .query_map([], entry_from_row)
            .map_err(|e| AuditError::Read(e.to_string()))?;
        for row in rows {
            f(row.map_err(|e| AuditError::Read(e.to_string()))?);
        }
        Ok(())
    }

    pub fn head(&self) -> Result<(i64, String), AuditError> {
        Self::head_on(&self.read_conn()?)
    }

    /// Appends the head, with the time, to an anchor file the person chose (one `TIME SEQ HASH`
    /// line; `verify --anchor-file` reads it back). Returns the head.
    pub fn append_anchor(&self, file: &std::path::Path) -> Result<(i64, String), AuditError> {
        use std::io::Write;
        let (seq, hash) = self.head()?;
        let write = || -> std::io::Result<()> {
            let mut out = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)?;
            writeln!(out, "{} {seq} {hash}", chrono::Utc::now().to_rfc3339())?;
            out.sync_all()
        };
        write().map_err(|e| AuditError::Write(format!("anchor file {}: {e}", file.display())))?;
        Ok((seq, hash))
    }

    fn head_on(conn: &Connection) -> Result<(i64, String), AuditError> {
        conn.query_row("SELECT seq, hash FROM audit_head WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map(|h| h.unwrap_or((0, GENESIS_HASH.to_string())))
        .map_err(|e| AuditError::Read(e.to_string()))
    }

    /// Walks the chain and reports every row that is not what was written.
    pub fn verify(&self) -> Result<VerifyReport, AuditError> {
        self.verify_anchored(&[])
    }

    /// [`AuditLog::verify`], plus: the append-only triggers are in place as written, and each
    /// anchor (a head written down elsewhere earlier) is still in the chain. The chain alone
    /// cannot show a log rewritten whole (its algorithm is public); an anchor can.
    pub fn verify_anchored(&self, anchors: &[Anchor]) -> Result<VerifyReport, AuditError> {
        let mut report = self.verify_chain()?;
        let conn = self.read_conn()?;
        report.problems.extend(Self::trigger_problems(&conn)?);
        // An anchor taken of an empty log (the genesis hash) holds for any log.
        for anchor in anchors.iter().filter(|a| a.hash != GENESIS_HASH) {
            let hash: Option<String> = match anchor.seq {
                Some(seq) => conn
                    .query_row("SELECT hash FROM audit_log WHERE seq = ?1", [seq], |r| {
                        r.get(0)
                    })
                    .optional(),
                None => conn
                    .query_row(
                        "SELECT hash FROM audit_log WHERE hash = ?1",
                        [&anchor.hash],
                        |r| r.get(0),
                    )
                    .optional(),
            }
            .map_err(|e| AuditError::Read(e.to_string()))?;
            let at = anchor
                .seq
                .map(|s| format!("row {s}"))
                .unwrap_or_else(|| "a row".into());
            match hash {
                Some(h) if h == anchor.hash => {}
                Some(_) => report.problems.push(Problem {
                    seq: anchor.seq.unwrap_or(0),
                    message: format!(
                        "{at} does not match the anchor {}: the log was rewritten up to there",
                        anchor.hash
                    ),
                }),
                None => report.problems.push(Problem {
                    seq: anchor.seq.unwrap_or(0),
                    message: format!(
                        "{at} with the anchor's hash {} is gone: the log was rewritten or cut",
                        anchor.hash
                    ),
                }),
            }
        }
        Ok(report)
    }

    /// The log's tables carry exactly the guards, as created: a missing or altered guard, or any
    /// other trigger acting on them (one could drop, rewrite or fake rows as they are written,
    /// whatever the chain says afterwards), is a problem.
    fn trigger_problems(conn: &rusqlite::Connection) -> Result<Vec<Problem>, AuditError> {
        let mut problems = Vec::new();
        let mut triggers = conn
            .prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
            .map_err(|e| AuditError::Read(e.to_string()))?;
        let all: Vec<(String, String, String)> = triggers
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| AuditError::Read(e.to_string()))?
            .collect::<Result<_, _>>()
            .map_err(|e| AuditError::Read(e.to_string()))?;
        // Only the guards may act on the log's tables: any other trigger there could drop,
        // rewrite or fake rows as they are written, whatever the chain says afterwards.
        for (name, table, _) in &all {
            let audit_table =
                table.eq_ignore_ascii_case("audit_log") || table.eq_ignore_ascii_case("audit_head");
            if audit_table && !GUARD_TRIGGERS.iter().any(|(guard, _)| guard == name) {
                problems.push(Problem {
                    seq: 0,
                    message: format!(
                        "an unknown trigger {name} acts on {table}: it could drop or change rows as they are written"
                    ),
                });
            }
        }
        let present: Vec<(String, String)> =
            all.into_iter().map(|(name, _, sql)| (name, sql)).collect();
        let squash = |sql: &str| sql.split_whitespace().collect::<Vec<_>>().join(" ");
        for (name, sql) in GUARD_TRIGGERS {
            match present.iter().find(|(n, _)| n == name) {
                None => problems.push(Problem {
                    seq: 0,
                    message: format!(
                        "the trigger {name} is missing: rows could have been changed without it"
                    ),
                }),
                Some((_, found)) if squash(found) != squash(sql) => problems.push(Problem {
                    seq: 0,
                    message: format!(
                        "the trigger {name} was altered: rows could have been changed"
                    ),
                }),
                Some(_) => {}
            }
        }
        Ok(problems)
    }

    fn verify_chain(&self) -> Result<VerifyReport, AuditError> {
        // One read transaction: the head and the rows come from the same snapshot, even while
        // the writer commits a batch (otherwise a live log could look truncated).
        let mut conn = self.read_conn()?;
        let tx = conn
            .transaction()
            .map_err(|e| AuditError::Read(e.to_string()))?;
        let (head_seq, head_hash) = Self::head_on(&tx)?;
        let mut problems = Vec::new();
        let mut expected_seq = 1i64;
        let mut expected_prev = GENESIS_HASH.to_string();
        let mut rows = 0u64;
        Self::for_each_on(&tx, |e| {
            rows += 1;
            if e.seq != expected_seq {
                let message = if e.seq > expected_seq {
                    format!("rows {expected_seq}..{} are missing (deleted)", e.seq - 1)
                } else {
                    format!("row {} is out of order", e.seq)
                };
                problems.push(Problem {
                    seq: expected_seq,
                    message,
                });
            } else if e.prev_hash != expected_prev {
                problems.push(Problem {
                    seq: e.seq,
                    message: format!("row {}: does not link to the row before it (a row was inserted, deleted or reordered)", e.seq),
                });
            }
            if chain_hash(&e.prev_hash, e.seq, &e.record) != e.hash {
                problems.push(Problem {
                    seq: e.seq,
                    message: format!("row {}: contents do not match its hash (edited)", e.seq),
                });
            }
            expected_seq = e.seq + 1;
            expected_prev = e.hash;
        })?;
        let last_seq = expected_seq - 1;
        if head_seq != last_seq || (head_seq > 0 && head_hash != expected_prev) {
            let message = if head_seq > last_seq {
                format!(
                    "rows {}..{head_seq} at the end are missing (deleted); the head names row {head_seq}",
                    last_seq + 1
                )
            } else {
                format!("the head names row {head_seq} but the log ends at row {last_seq}")
            };
            problems.push(Problem {
                seq: head_seq.max(last_seq),
                message,
            });
        }
        Ok(VerifyReport {
            rows,
            head_seq,
            head_hash,
            problems,
        })
    }
}

fn run_writer(mut writer: Writer, shared: &Shared) {
    loop {
        let (batch, last) = {
            let mut state = shared.state.lock().unwrap();
            while state.queue.is_empty() && !state.shutdown {
                state = shared.wake_writer.wait(state).unwrap();
            }
            if state.queue.is_empty() {
                return;
            }
            let deadline = std::time::Instant::now() + LINGER;
            while !state.shutdown
                && state.urgent <= state.done_through
                && state.queue.len() < MAX_BATCH
            {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break;
                }
                state = shared.wake_writer.wait_timeout(state, left).unwrap().0;
            }
            let n = state.queue.len().min(MAX_BATCH);
            let batch: Vec<Pending> = state.queue.drain(..n).collect();
            (batch, state.done_through + n as u64)
        };
        let batch: Vec<AuditRecord> = batch.into_iter().map(Pending::build).collect();
        let result = writer.write_batch(&batch);
        let mut state = shared.state.lock().unwrap();
        if let Err(e) = result {
            tracing::error!("audit log write failed for {} rows: {e}", batch.len());
            if state.failed.len() >= 256 {
                state.failed.remove(0);
            }
            state
                .failed
                .push((last + 1 - batch.len() as u64, last, e.to_string()));
        }
        state.done_through = last;
        drop(state);
        shared.done.notify_all();
        shared.done_tx.send_replace(last);
    }
}

impl Drop for AuditLog {
    /// Drains the queue: every appended row is committed before the log goes away.
    fn drop(&mut self) {
        self.shared.state.lock().unwrap().shutdown = true;
        self.shared.wake_writer.notify_all();
        if let Some(thread) = self.thread.lock().unwrap().take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_store::DataDir;

    fn record(i: usize) -> AuditRecord {
        AuditRecord {
            ts: format!("t{i}"),
            call_id: format!("c{i}"),
            phase: "final".into(),
            tool: "x".into(),
            decision: "allow".into(),
            args: "{}".into(),
            effects: "[]".into(),
            caller: "test".into(),
            conversation: "conv".into(),
            ..Default::default()
        }
    }

    #[test]
    fn concurrent_appends_form_one_unbroken_chain() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path()), &[&crate::SCHEMA]).unwrap();
        let log = std::sync::Arc::new(AuditLog::open(&store).unwrap());
        // A second AuditLog on the same file stands for another process (the CLI next to the app).
        let other = std::sync::Arc::new(AuditLog::open(&store).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let log = if t % 2 == 0 {
                    log.clone()
                } else {
                    other.clone()
                };
                std::thread::spawn(move || {
                    (0..50).for_each(|i| {
                        log.append(record(t * 100 + i)).unwrap();
                    });
                    log.flush().unwrap();
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let report = log.verify().unwrap();
        assert_eq!(report.rows, 400);
        assert!(report.ok(), "{:?}", report.problems);
        assert_eq!(report.head_seq, 400);
    }

    #[test]
    fn verify_while_the_writer_commits_sees_one_snapshot() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path()), &[&crate::SCHEMA]).unwrap();
        let log = std::sync::Arc::new(AuditLog::open(&store).unwrap());
        let writer = {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..600 {
                    log.append(record(i)).unwrap();
                }
                log.flush().unwrap();
            })
        };
        // A live log must never look truncated or edited to a concurrent verify.
        while !writer.is_finished() {
            let report = log.verify().unwrap();
            assert!(report.ok(), "{:?}", report.problems);
        }
        writer.join().unwrap();
        assert_eq!(log.verify().unwrap().rows, 600);
    }
}
