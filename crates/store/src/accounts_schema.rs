//! The accounts table (the store keeps account settings for every family).
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use crate::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "store",
    steps: &[Step::legacy(
        4,
        r#"
-- Accounts (CalDAV, IMAP/SMTP): settings only. Passwords live in the OS keyring under
-- `account/<name>`, never here.
CREATE TABLE accounts (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,        -- caldav | mail
    config     TEXT NOT NULL,        -- JSON: urls, hosts, ports, user name
    created_at TEXT NOT NULL
);
"#,
    )],
};
