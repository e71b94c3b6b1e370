//! The chains' runs and steps. Migrations are appended, never edited once released.

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "chains",
    steps: &[
        Step::new(
            r#"
-- chains: one row per run of a chain; `running` rows whose process is gone are interrupted.
CREATE TABLE chain_runs (
    id           TEXT PRIMARY KEY,      -- UUID v7
    chain        TEXT NOT NULL,
    source       TEXT NOT NULL,         -- the chain file it ran
    inputs       TEXT NOT NULL,         -- JSON
    conversation TEXT NOT NULL,
    state        TEXT NOT NULL,         -- running | completed | failed | interrupted | waiting
    waiting_on   TEXT,                  -- the suspended task a waiting run goes on after
    pid          INTEGER NOT NULL,      -- the process running it
    started_at   TEXT NOT NULL,
    ended_at     TEXT,
    error        TEXT,
    outputs      TEXT                   -- JSON
);
CREATE INDEX chain_runs_started ON chain_runs (started_at);
-- chains: each step's last end in a run (its result feeds later steps and a resume); a step
-- cut short mid-call has no row: the audit log's rows since the last one tell what it did.
CREATE TABLE chain_steps (
    run        TEXT NOT NULL,
    step       TEXT NOT NULL,
    tool       TEXT NOT NULL,
    state       TEXT NOT NULL,          -- completed | skipped | failed | waiting (none while it runs)
    attempt     INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    result     TEXT,                    -- JSON: { ok, skipped, result }
    error      TEXT,
    PRIMARY KEY (run, step)
);
"#,
        ),
        Step::new(
            r#"
-- chains: schedules (cron in the person's zone) of a chain or a prompt, and the effects the
-- person granted their unattended runs.
CREATE TABLE schedules (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    cron       TEXT NOT NULL,
    target     TEXT NOT NULL,           -- JSON: {kind: chain, chain, inputs} | {kind: prompt, prompt}
    missed     TEXT NOT NULL,           -- run_once | skip
    granted    TEXT NOT NULL,           -- JSON: the effects granted, as shown
    enabled    INTEGER NOT NULL,
    next_due   TEXT NOT NULL,           -- UTC, RFC 3339
    created_at TEXT NOT NULL
);
CREATE INDEX schedules_due ON schedules (enabled, next_due);
-- chains: every run a schedule made or skipped.
CREATE TABLE schedule_runs (
    id         TEXT PRIMARY KEY,
    schedule   TEXT NOT NULL,
    due_at     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    state      TEXT NOT NULL,           -- running | completed | failed | waiting | skipped | interrupted
    missed     INTEGER NOT NULL,
    pid        INTEGER NOT NULL,
    detail     TEXT
);
CREATE INDEX schedule_runs_started ON schedule_runs (started_at);
"#,
        ),
        Step::new(
            r#"
-- chains: the suspended tasks (JSON list of ids) a waiting schedule run goes on after.
ALTER TABLE schedule_runs ADD COLUMN waiting_on TEXT;
"#,
        ),
    ],
};
