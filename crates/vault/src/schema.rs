//! The vault's index: every row can be rebuilt from the Markdown files (`cowork vault reindex`).
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "vault",
    steps: &[
        Step::legacy(
            5,
            r#"
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
"#,
        ),
        // vault: files the vault is writing, recorded before the write and cleared once indexed, so a
        // kill -9 in between is indexed at the next search instead of waiting for a full re-index.
        Step::legacy(
            8,
            r#"
CREATE TABLE vault_pending (
    path  TEXT PRIMARY KEY,
    since TEXT NOT NULL
);
"#,
        ),
        // vault: Chinese words of two characters (护照, 会议) are found by words: the trigram index
        // cannot hold them, so every run of CJK characters is also indexed as its overlapping bigrams
        // (the CJK analysis of Lucene and Elasticsearch). Contentless: the vault family writes the
        // bigrams beside each entry, and fills the table for existing entries at its next open while
        // `vault_grams_backfill` holds a row.
        Step::legacy(
            10,
            r#"
CREATE VIRTUAL TABLE vault_grams USING fts5(title, body, content='', contentless_delete=1, tokenize='unicode61');
CREATE TABLE vault_grams_backfill (reason TEXT NOT NULL);
INSERT INTO vault_grams_backfill (reason)
    SELECT 'CJK bigrams for existing entries' WHERE EXISTS (SELECT 1 FROM vault_entries);
"#,
        ),
    ],
};
