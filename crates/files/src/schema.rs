//! The shadow filesystem (staged changes and their journal) and the coding agent's plans.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "files",
    steps: &[Step::legacy(
        3,
        r#"
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
"#,
    )],
};
