//! One ordered migration list for the whole database. Each table names its owner; append new
//! migrations, never edit applied ones.

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

const V1: &str = r#"
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

-- personal/tasks
CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT NOT NULL,
    notes       TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'todo'
                CHECK (status IN ('todo', 'in_progress', 'done', 'cancelled')),
    priority    TEXT NOT NULL DEFAULT 'normal'
                CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    due         TEXT,
    tags        TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    call_id     TEXT
);
CREATE INDEX tasks_status_due ON tasks(status, due);

-- personal/notes: the Markdown file is the content; this is its index.
CREATE TABLE notes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    path        TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL,
    tags        TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    call_id     TEXT
);
"#;

const V2: &str = r#"
-- agent: conversations and their messages (provider-neutral parts as JSON).
CREATE TABLE conversations (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    loaded_tools TEXT NOT NULL DEFAULT '[]'   -- deferred tools selected through tool_search
);
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    parts        TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation, id);
"#;

const V3: &str = r#"
-- files/shadow: staged writes per conversation. Contents live as content-addressed blobs in
-- `changes/blobs/<sha256>`; `base_sha` NULL = the file did not exist, `new_sha` NULL = delete.
CREATE TABLE file_changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation TEXT    NOT NULL,
    path         TEXT    NOT NULL,
    base_sha     TEXT,
    base_mode    INTEGER,
    new_sha      TEXT,
    status       TEXT    NOT NULL,   -- staged | applied | rejected | rolled_back
    applied_sha  TEXT,               -- what apply wrote (a partial apply differs from new_sha)
    created_at   TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL
);
CREATE INDEX file_changes_by_status ON file_changes (status, conversation);
-- files/shadow: write-ahead journal of apply and rollback. A row is committed before the file
-- is touched and closed after; on open, a row still open is settled by what is on disk.
CREATE TABLE file_journal (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    change_id   INTEGER NOT NULL,
    action      TEXT    NOT NULL,    -- apply | rollback
    path        TEXT    NOT NULL,
    before_sha  TEXT,
    after_sha   TEXT,
    mode        INTEGER,
    done        INTEGER NOT NULL DEFAULT 0
);
-- files/todo: the coding agent's plan per conversation (Claude Code's TodoWrite).
CREATE TABLE todos (
    conversation TEXT    NOT NULL,
    position     INTEGER NOT NULL,
    content      TEXT    NOT NULL,
    status       TEXT    NOT NULL,   -- pending | in_progress | completed
    active_form  TEXT,
    PRIMARY KEY (conversation, position)
);
"#;

const V4: &str = r#"
-- Accounts (CalDAV, IMAP/SMTP): settings only. Passwords live in the OS keyring under
-- `account/<name>`, never here.
CREATE TABLE accounts (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,        -- caldav | mail
    config     TEXT NOT NULL,        -- JSON: urls, hosts, ports, user name
    created_at TEXT NOT NULL
);
-- calendar: calendars (the local one always exists; CalDAV ones mirror a server collection).
CREATE TABLE calendars (
    id         TEXT PRIMARY KEY,     -- `local`, or `<account>/<collection>`
    name       TEXT NOT NULL,
    account    TEXT,                 -- NULL for local calendars
    url        TEXT,                 -- the collection URL on the server
    ctag       TEXT,
    last_sync  TEXT,
    last_error TEXT
);
INSERT INTO calendars (id, name) VALUES ('local', 'Local');
-- calendar: one row per calendar object resource (one UID: a master and its overrides), its
-- iCalendar text as the source of truth, and its sync state.
CREATE TABLE calendar_objects (
    calendar   TEXT NOT NULL,
    uid        TEXT NOT NULL,
    ics        TEXT NOT NULL,
    href       TEXT,                 -- on the server; NULL until first pushed
    etag       TEXT,                 -- the server's version we last saw
    dirty      INTEGER NOT NULL DEFAULT 0,   -- 1: a local change waits to be pushed
    deleted    INTEGER NOT NULL DEFAULT 0,   -- 1: deleted locally, the server delete is queued
    updated_at TEXT NOT NULL,
    PRIMARY KEY (calendar, uid)
);
-- calendar: what range queries need, derived from `ics` (rebuilt whenever it changes).
-- Times are UTC seconds; a recurring master's `series_end` is NULL when it never ends.
CREATE TABLE calendar_index (
    calendar      TEXT    NOT NULL,
    uid           TEXT    NOT NULL,
    recurrence_id INTEGER,           -- set on an override of one instance
    start_utc     INTEGER NOT NULL,
    end_utc       INTEGER NOT NULL,
    series_end    INTEGER,
    rrule         TEXT,              -- DTSTART/RRULE/RDATE/EXDATE lines of a recurring master
    all_day       INTEGER NOT NULL,
    summary       TEXT    NOT NULL,
    location      TEXT    NOT NULL,
    busy          INTEGER NOT NULL DEFAULT 1
);
-- (start, end): the range scan reads the index alone, never the rows it passes over.
CREATE INDEX calendar_index_single ON calendar_index (start_utc, end_utc) WHERE rrule IS NULL;
CREATE INDEX calendar_index_uid ON calendar_index (calendar, uid);
-- calendar: sync conflicts, kept until the person looks; both versions are preserved.
CREATE TABLE calendar_conflicts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    calendar    TEXT NOT NULL,
    uid         TEXT NOT NULL,
    kept        TEXT NOT NULL,       -- which version the calendar now shows: server | local
    copy_uid    TEXT,                -- the other version, saved as a separate event
    detail      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
-- mail: the outbox. A message waits here for the undo delay; `state` walks
-- queued → sending → sent | failed | cancelled, each step committed before the next.
CREATE TABLE mail_outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account     TEXT NOT NULL,
    message_id  TEXT NOT NULL UNIQUE,
    sender      TEXT NOT NULL,       -- the envelope's MAIL FROM
    recipients  TEXT NOT NULL,       -- JSON array: the envelope's RCPT TO (Bcc included)
    subject     TEXT NOT NULL,
    raw         BLOB NOT NULL,       -- the RFC 5322 message, built once
    send_after  TEXT NOT NULL,
    state       TEXT NOT NULL,       -- + uncertain: the app stopped mid-send (never resent blindly)
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    conversation TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX mail_outbox_state ON mail_outbox (state, send_after);
"#;

/// The vault's index. The Markdown files in the vault folder are the truth: every row here can be
/// rebuilt from them (`cowork vault reindex`).
const V5: &str = r#"
CREATE TABLE vault_entries (
    row         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,   -- the front matter's id, or `path:<relative path>` without one
    path        TEXT NOT NULL UNIQUE,   -- relative to the vault folder, '/'-separated
    kind        TEXT NOT NULL,          -- note | preference | fact | decision | learning
    scope       TEXT NOT NULL,          -- global | workspace:<path> | project:<name>
    title       TEXT NOT NULL,
    tags        TEXT NOT NULL,          -- JSON array
    source      TEXT,                   -- JSON: conversation, tool, call, promoted_from
    body        TEXT NOT NULL,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL,
    mtime_ns    INTEGER NOT NULL,       -- with size: unchanged files are skipped by a re-index
    size        INTEGER NOT NULL,
    hash        TEXT NOT NULL
);
CREATE INDEX vault_entries_updated ON vault_entries (updated);
-- trigram, not unicode61: unicode61 makes one token of a whole Chinese sentence (FACTS.md).
CREATE VIRTUAL TABLE vault_fts USING fts5(title, body, tags, content='vault_entries', content_rowid='row', tokenize='trigram');
CREATE TRIGGER vault_entries_ai AFTER INSERT ON vault_entries BEGIN
    INSERT INTO vault_fts (rowid, title, body, tags) VALUES (new.row, new.title, new.body, new.tags);
END;
CREATE TRIGGER vault_entries_ad AFTER DELETE ON vault_entries BEGIN
    INSERT INTO vault_fts (vault_fts, rowid, title, body, tags) VALUES ('delete', old.row, old.title, old.body, old.tags);
END;
CREATE TRIGGER vault_entries_au AFTER UPDATE OF title, body, tags ON vault_entries BEGIN
    INSERT INTO vault_fts (vault_fts, rowid, title, body, tags) VALUES ('delete', old.row, old.title, old.body, old.tags);
    INSERT INTO vault_fts (rowid, title, body, tags) VALUES (new.row, new.title, new.body, new.tags);
END;
-- One vector per entry, tagged with the model that made it: a search reads only the current
-- model's vectors, and a model switch re-embeds the rest in the background.
CREATE TABLE vault_vectors (
    row         INTEGER NOT NULL REFERENCES vault_entries (row) ON DELETE CASCADE,
    model       TEXT NOT NULL,          -- model id + language-centring version
    vector      BLOB NOT NULL,          -- little-endian f32, L2-normalized
    PRIMARY KEY (model, row)
) WITHOUT ROWID;
CREATE INDEX vault_vectors_row ON vault_vectors (row);
-- Per model: the language centroids its vectors are centred with (computed once).
CREATE TABLE vault_models (
    model       TEXT PRIMARY KEY,
    centroids   BLOB NOT NULL
);
-- Files a re-index could not read (not UTF-8, broken front matter): reported, skipped, retried.
CREATE TABLE vault_problems (
    path        TEXT PRIMARY KEY,
    error       TEXT NOT NULL,
    seen_at     TEXT NOT NULL
);
"#;

/// Suspended calls (the SuspendCoordinator in core): a call that must wait for the person ends
/// as suspended; resuming runs it again with the same arguments, after a restart too.
const V6: &str = r#"
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
"#;

/// core/policy: folders the person trusts, pinned to the bytes of their `.cowork/settings.json`
/// they saw (a changed file is untrusted again). core/audit: the head only moves forward and is
/// never deleted, so truncating the log needs the triggers dropped first (which verify notices).
const V7: &str = r#"
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
"#;

/// vault: files the vault is writing, recorded before the write and cleared once indexed, so a
/// kill -9 in between is indexed at the next search instead of waiting for a full re-index.
const V8: &str = r#"
CREATE TABLE vault_pending (
    path  TEXT PRIMARY KEY,
    since TEXT NOT NULL
);
"#;

/// calendar: dates and floating times are kept as wall-clock values, placed in a zone only when
/// a query names one (they were pinned to the importing machine's zone), and stored text is
/// rewritten without the DTSTAMP/UID lines RFC 5545 forbids in VTIMEZONE and VALARM. Both need
/// the iCalendar parser, so the calendar family rebuilds its index at its next open while
/// `calendar_rebuild` holds a row.
const V9: &str = r#"
ALTER TABLE calendar_index ADD COLUMN floating INTEGER NOT NULL DEFAULT 0;
CREATE TABLE calendar_rebuild (reason TEXT NOT NULL);
INSERT INTO calendar_rebuild (reason)
    SELECT 'dates and floating times, valid text' WHERE EXISTS (SELECT 1 FROM calendar_objects);
"#;

/// vault: Chinese words of two characters (护照, 会议) are found by words: the trigram index
/// cannot hold them, so every run of CJK characters is also indexed as its overlapping bigrams
/// (the CJK analysis of Lucene and Elasticsearch). Contentless: the vault family writes the
/// bigrams beside each entry, and fills the table for existing entries at its next open while
/// `vault_grams_backfill` holds a row.
const V10: &str = r#"
CREATE VIRTUAL TABLE vault_grams USING fts5(title, body, content='', contentless_delete=1, tokenize='unicode61');
CREATE TABLE vault_grams_backfill (reason TEXT NOT NULL);
INSERT INTO vault_grams_backfill (reason)
    SELECT 'CJK bigrams for existing entries' WHERE EXISTS (SELECT 1 FROM vault_entries);
"#;

pub fn apply(conn: &mut Connection) -> Result<(), rusqlite_migration::Error> {
    Migrations::new(vec![
        M::up(V1),
        M::up(V2),
        M::up(V3),
        M::up(V4),
        M::up(V5),
        M::up(V6),
        M::up(V7),
        M::up(V8),
        M::up(V9),
        M::up(V10),
    ])
    .to_latest(conn)
}
