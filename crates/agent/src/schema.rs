//! Conversations and their messages.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "agent",
    steps: &[
        Step::legacy(
            2,
            r#"
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
"#,
        ),
        // The folder a conversation works in (the window's workspace picker); NULL: none.
        Step::new("ALTER TABLE conversations ADD COLUMN workspace TEXT;"),
    ],
};
