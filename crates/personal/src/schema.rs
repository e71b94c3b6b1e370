//! Tasks and notes.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "personal",
    steps: &[Step::legacy(
        1,
        r#"
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
"#,
    )],
};
