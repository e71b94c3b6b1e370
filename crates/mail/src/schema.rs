//! The outbox.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "mail",
    steps: &[Step::legacy(
        4,
        r#"
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
"#,
    )],
};
