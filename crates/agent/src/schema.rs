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
        // Branches: each message hangs off the one before it on its branch (`parent`), and a
        // conversation shows the branch that ends at `head`. Edits and regenerations add
        // siblings; nothing is overwritten. Rows from before are one straight branch.
        // `usage`: the model call's tokens and cost (assistant messages). `settings`: the
        // conversation's model, system prompt and tool loading. `token_ratio`: the provider's
        // reported prompt tokens over our estimate, to correct the next estimate.
        // `compactions`: summaries that stand in for the messages up to `upto` in requests.
        Step::new(
            r#"
ALTER TABLE messages ADD COLUMN parent INTEGER REFERENCES messages(id) ON DELETE CASCADE;
ALTER TABLE messages ADD COLUMN usage TEXT;
ALTER TABLE conversations ADD COLUMN head INTEGER;
ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE conversations ADD COLUMN token_ratio REAL;
UPDATE messages SET parent = (SELECT MAX(p.id) FROM messages p WHERE p.conversation = messages.conversation AND p.id < messages.id);
UPDATE conversations SET head = (SELECT MAX(m.id) FROM messages m WHERE m.conversation = conversations.id);
CREATE INDEX messages_parent ON messages(parent);
CREATE TABLE compactions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    upto          INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    summary       TEXT NOT NULL,
    messages      INTEGER NOT NULL,
    tokens_before INTEGER NOT NULL,
    tokens_after  INTEGER NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX compactions_conversation ON compactions(conversation, upto);
"#,
        ),
        // A sub-agent's conversation hangs off the one whose model started it: not listed
        // with the person's, deleted with its parent.
        Step::new(
            r#"
ALTER TABLE conversations ADD COLUMN parent TEXT REFERENCES conversations(id) ON DELETE CASCADE;
CREATE INDEX conversations_parent ON conversations(parent);
"#,
        ),
    ],
};
