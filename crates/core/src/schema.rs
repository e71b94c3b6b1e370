//! The core's tables: the audit log, per-conversation policy state, suspensions, trusted folders.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "core",
    steps: &[
        Step::legacy(
            1,
            r#"
-- core/audit: append-only, hash-chained. Every column is covered by the row hash.
CREATE TABLE audit_log (
    seq          INTEGER PRIMARY KEY,
    ts           TEXT    NOT NULL,
    call_id      TEXT    NOT NULL,
    phase        TEXT    NOT NULL,   -- 'intent' (before an effectful call runs) | 'final'
    tool         TEXT    NOT NULL,
    layer        TEXT,
    caller       TEXT    NOT NULL,
    conversation TEXT    NOT NULL,
    args         TEXT    NOT NULL,   -- JSON, secrets redacted
    effects      TEXT    NOT NULL,   -- JSON array
    decision     TEXT    NOT NULL,   -- allow | ask | deny | rejected
    score        INTEGER,
    rule         TEXT,
    approved_by  TEXT,
    outcome      TEXT,
    error        TEXT,
    duration_us  INTEGER,
    prev_hash    TEXT    NOT NULL,
    hash         TEXT    NOT NULL
);
-- No secondary indexes: each costs a page write per commit on the write-ahead path (measured
-- with the gate bench: a call_id index took the effectful p50 from 80 to 90 µs and throughput
-- from 63k to 48k calls/s). Viewers read newest-first along seq and stop at their LIMIT.
-- The chain's head, written in the same transaction as each batch: verify compares it with the
-- last row, so deleting rows from the end is detected too.
CREATE TABLE audit_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL,
    hash TEXT    NOT NULL
);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- core/policy: per-conversation state (taint, grants "for this conversation").
CREATE TABLE conversation_state (
    conversation TEXT PRIMARY KEY,
    tainted_by   TEXT,
    tainted_at   TEXT
);
CREATE TABLE conversation_grants (
    conversation TEXT NOT NULL,
    rule         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (conversation, rule)
);

"#,
        ),
        // Suspended calls (the SuspendCoordinator in core): a call that must wait for the person ends
        // as suspended; resuming runs it again with the same arguments, after a restart too.
        Step::legacy(
            6,
            r#"
CREATE TABLE suspensions (
    id          TEXT PRIMARY KEY,       -- UUID v7
    call_id     TEXT NOT NULL,          -- the call that stopped (its audit rows)
    conversation TEXT NOT NULL,
    tool        TEXT NOT NULL,
    args        TEXT NOT NULL,          -- JSON, to run the call again
    reason      TEXT NOT NULL,
    resume_when TEXT NOT NULL,          -- JSON, the family's condition (null: the person's Resume)
    state       TEXT NOT NULL,          -- suspended | resumed | cancelled | timed_out
    created_at  TEXT NOT NULL,
    deadline    TEXT NOT NULL,
    settled_at  TEXT,
    settled_by  TEXT                    -- window | cli | condition | timeout
);
CREATE INDEX suspensions_open ON suspensions (state, created_at);
"#,
        ),
        // core/policy: folders the person trusts, pinned to the bytes of their `.cowork/settings.json`
        // they saw (a changed file is untrusted again). core/audit: the head only moves forward and is
        // never deleted, so truncating the log needs the triggers dropped first (which verify notices).
        Step::legacy(
            7,
            r#"
CREATE TABLE workspace_trust (
    root            TEXT PRIMARY KEY,   -- canonical folder
    settings_sha256 TEXT NOT NULL,      -- of .cowork/settings.json as shown ('absent' if none)
    trusted_at      TEXT NOT NULL
);
CREATE TRIGGER audit_head_forward_only BEFORE UPDATE ON audit_head
WHEN NEW.seq < OLD.seq OR NEW.id != OLD.id
BEGIN SELECT RAISE(ABORT, 'audit_head only moves forward'); END;
CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
BEGIN SELECT RAISE(ABORT, 'audit_head cannot be deleted'); END;
"#,
        ),
        // core/policy: a conversation the model put into plan mode (`enter_plan_mode`) stays there
        // until the person approves its plan, across restarts too.
        Step::new("ALTER TABLE conversation_state ADD COLUMN planning INTEGER NOT NULL DEFAULT 0;"),
        // core/policy: what the person wrote in each conversation, for provenance (a value the
        // person wrote does not ask because of untrusted content; see policy/provenance.rs).
        Step::new(
            r#"
CREATE TABLE conversation_words (
    conversation TEXT NOT NULL,
    text         TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX conversation_words_by_conversation ON conversation_words (conversation);
"#,
        ),
        // core/suspend: who made a suspended call, so another app's call resumes as that app's
        // (its review, its grants), not as the person's chat.
        Step::new("ALTER TABLE suspensions ADD COLUMN caller TEXT;"),
        // core/policy: a counter every change of a conversation's policy state moves (triggers:
        // whoever writes, from whichever process), so a process knows its cache is stale
        // without being thrown off by writes that do not matter to it (the audit log's).
        Step::new(
            r#"
CREATE TABLE policy_generation (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO policy_generation (id, n) VALUES (1, 0);
CREATE TRIGGER policy_state_insert AFTER INSERT ON conversation_state
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_state_update AFTER UPDATE ON conversation_state
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_state_delete AFTER DELETE ON conversation_state
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_grants_insert AFTER INSERT ON conversation_grants
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_grants_delete AFTER DELETE ON conversation_grants
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_words_insert AFTER INSERT ON conversation_words
BEGIN UPDATE policy_generation SET n = n + 1; END;
CREATE TRIGGER policy_words_delete AFTER DELETE ON conversation_words
BEGIN UPDATE policy_generation SET n = n + 1; END;
"#,
        ),
        // core/placeholders: values that reach a remote model only as `«secret:N»`, numbered
        // once per conversation; a sub-agent's conversation numbers with its root's.
        Step::new(
            r#"
CREATE TABLE kept_values (
    conversation TEXT NOT NULL,
    n            INTEGER NOT NULL,
    value        TEXT NOT NULL,
    category     TEXT NOT NULL,
    tool         TEXT,
    subject      TEXT,
    kept_at      TEXT NOT NULL,
    PRIMARY KEY (conversation, n),
    UNIQUE (conversation, value)
);
CREATE TABLE kept_roots (
    conversation TEXT PRIMARY KEY,
    root         TEXT NOT NULL
);
"#,
        ),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_store::{DataDir, Store};

    #[test]
    fn audit_rows_cannot_be_updated_or_deleted_through_sql() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(DataDir::at(tmp.path()), &[&SCHEMA]).unwrap();
        let conn = store.connect().unwrap();
        conn.execute(
            "INSERT INTO audit_log (seq, ts, call_id, phase, tool, layer, caller, conversation, args,
             effects, decision, score, rule, approved_by, outcome, error, duration_us, prev_hash, hash)
             VALUES (1,'t','c','final','x','builtin','cli','conv','{}','[]','allow',1,NULL,NULL,'ok',NULL,0,'0','h')",
            [],
        )
        .unwrap();
        let update = conn
            .execute("UPDATE audit_log SET tool = 'y'", [])
            .unwrap_err();
        assert!(update.to_string().contains("append-only"));
        assert!(conn.execute("DELETE FROM audit_log", []).is_err());
    }
}
