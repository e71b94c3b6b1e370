//! The database is shared, its tables are not: each crate that keeps tables ships a [`Schema`]
//! (its owner name and its migrations, in order) and the app composes the list it opens the
//! store with. Each owner's version is recorded on its own, so a family adds a migration without
//! touching anyone else's list.
//!
//! Written here rather than with `rusqlite_migration`: that crate versions one list through
//! `PRAGMA user_version`, and a version per owner is what lets families own their migrations.
//! The runner is small: every step runs in its own transaction with its version bump, so a crash
//! leaves each owner at a step it fully applied.
//!
//! Databases made before owners had versions carry the single list's number in `user_version`
//! (1–10). Each step says which number of that list applied it ([`Step::legacy`]), so such a
//! database is upgraded in place: an owner's first version is the count of its steps already
//! applied there, and only the rest run.

use rusqlite::{Connection, OptionalExtension, params};

/// The last number of the single migration list: a larger `user_version` was written by a
/// newer Cowork.
const LAST_LEGACY_VERSION: u32 = 10;

/// One crate's tables: its migrations, applied in order, never edited once released.
#[derive(Debug)]
pub struct Schema {
    pub owner: &'static str,
    pub steps: &'static [Step],
}

#[derive(Debug)]
pub struct Step {
    pub sql: &'static str,
    /// The version of the single list (before per-owner versions) that applied this step.
    pub legacy: Option<u32>,
}

impl Step {
    pub const fn new(sql: &'static str) -> Step {
        Step { sql, legacy: None }
    }

    /// A step the single list applied at its version `version`.
    pub const fn legacy(version: u32, sql: &'static str) -> Step {
        Step {
            sql,
            legacy: Some(version),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("{0}")]
    Sql(#[from] rusqlite::Error),
    #[error("the database is at version {found} of `{owner}`, this Cowork knows {known}")]
    Newer {
        owner: String,
        found: u32,
        known: u32,
    },
    #[error("the database's single-list version {0} is newer than this Cowork's")]
    NewerLegacy(u32),
    #[error("`{owner}` step {step}: {source}")]
    Step {
        owner: String,
        step: u32,
        source: rusqlite::Error,
    },
}

/// Brings every owner in `schemas` to its latest version.
pub fn apply(conn: &mut Connection, schemas: &[&Schema]) -> Result<(), SchemaError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_versions (
             owner   TEXT PRIMARY KEY,
             version INTEGER NOT NULL
         )",
    )?;
    let legacy: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if legacy > LAST_LEGACY_VERSION {
        return Err(SchemaError::NewerLegacy(legacy));
    }
    for schema in schemas {
        let recorded: Option<u32> = conn
            .query_row(
                "SELECT version FROM schema_versions WHERE owner = ?1",
                [schema.owner],
                |r| r.get(0),
            )
            .optional()?;
        let known = schema.steps.len() as u32;
        let current = recorded.unwrap_or_else(|| {
            schema
                .steps
                .iter()
                .take_while(|s| s.legacy.is_some_and(|v| v <= legacy))
                .count() as u32
        });
        if current > known {
            return Err(SchemaError::Newer {
                owner: schema.owner.into(),
                found: current,
                known,
            });
        }
        if recorded.is_none() {
            conn.execute(
                "INSERT INTO schema_versions (owner, version) VALUES (?1, ?2)",
                params![schema.owner, current],
            )?;
        }
        for (index, step) in schema.steps.iter().enumerate().skip(current as usize) {
            let version = index as u32 + 1;
            let failed = |source| SchemaError::Step {
                owner: schema.owner.into(),
                step: version,
                source,
            };
            let tx = conn.transaction()?;
            tx.execute_batch(step.sql).map_err(failed)?;
            tx.execute(
                "UPDATE schema_versions SET version = ?2 WHERE owner = ?1",
                params![schema.owner, version],
            )?;
            tx.commit()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    static FIRST: Schema = Schema {
        owner: "first",
        steps: &[
            Step::legacy(1, "CREATE TABLE a (x INTEGER)"),
            Step::legacy(3, "ALTER TABLE a ADD COLUMN y INTEGER"),
            Step::new("CREATE TABLE a2 (x INTEGER)"),
        ],
    };
    static SECOND: Schema = Schema {
        owner: "second",
        steps: &[Step::legacy(2, "CREATE TABLE b (x INTEGER)")],
    };

    fn version(conn: &Connection, owner: &str) -> u32 {
        conn.query_row(
            "SELECT version FROM schema_versions WHERE owner = ?1",
            [owner],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn a_fresh_database_gets_every_step_and_a_second_run_changes_nothing() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn, &[&FIRST, &SECOND]).unwrap();
        assert_eq!((version(&conn, "first"), version(&conn, "second")), (3, 1));
        conn.execute("INSERT INTO a (x, y) VALUES (1, 2)", [])
            .unwrap();
        apply(&mut conn, &[&FIRST, &SECOND]).unwrap();
        let kept: i64 = conn
            .query_row("SELECT count(*) FROM a", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, 1);
    }

    #[test]
    fn a_single_list_database_runs_only_the_steps_it_lacks() {
        let mut conn = Connection::open_in_memory().unwrap();
        // What the single list had done by its version 2: `a` without `y`, and `b`.
        conn.execute_batch(
            "CREATE TABLE a (x INTEGER); CREATE TABLE b (x INTEGER);
             INSERT INTO a (x) VALUES (7); PRAGMA user_version = 2;",
        )
        .unwrap();
        apply(&mut conn, &[&FIRST, &SECOND]).unwrap();
        assert_eq!((version(&conn, "first"), version(&conn, "second")), (3, 1));
        let row: (i64, Option<i64>) = conn
            .query_row("SELECT x, y FROM a", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(row, (7, None));
    }

    #[test]
    fn a_newer_database_is_refused_and_left_alone() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn, &[&FIRST]).unwrap();
        conn.execute(
            "UPDATE schema_versions SET version = 9 WHERE owner = 'first'",
            [],
        )
        .unwrap();
        let err = apply(&mut conn, &[&FIRST]).unwrap_err();
        assert!(
            matches!(
                err,
                SchemaError::Newer {
                    found: 9,
                    known: 3,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_failing_step_leaves_its_owner_at_the_step_before() {
        static BROKEN: Schema = Schema {
            owner: "broken",
            steps: &[
                Step::new("CREATE TABLE c (x INTEGER)"),
                Step::new("CREATE TABLE d (x INTEGER); THIS IS NOT SQL"),
            ],
        };
        let mut conn = Connection::open_in_memory().unwrap();
        let err = apply(&mut conn, &[&BROKEN]).unwrap_err();
        assert!(matches!(err, SchemaError::Step { step: 2, .. }), "{err}");
        assert_eq!(version(&conn, "broken"), 1);
        let d: Option<String> = conn
            .query_row("SELECT name FROM sqlite_master WHERE name = 'd'", [], |r| {
                r.get(0)
            })
            .optional()
            .unwrap();
        assert_eq!(d, None, "the failed step's first statement was rolled back");
    }
}
