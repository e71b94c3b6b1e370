//! A database made by the last release of the single migration list (`tests/data/main-v10.db`,
//! written by `cowork tools call` at commit f647cf3: a task, an event, a vault entry, a todo
//! list, the audit rows of those calls) opens with per-owner migrations, loses nothing, and
//! keeps its audit chain whole.

use cowork_app::{App, AppOptions};
use cowork_core::{CallRequest, Caller, DenyApprover, SchedulerConfig};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn a_database_made_by_the_single_list_opens_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/main-v10.db");
    std::fs::copy(&fixture, home.join("cowork.db")).unwrap();

    let app = App::open(AppOptions {
        home: Some(home.clone()),
        workspace_roots: vec![],
        approver: Arc::new(DenyApprover),
        scheduler: SchedulerConfig::default(),
    })
    .unwrap();

    let conn = app.store().connect().unwrap();
    let versions: Vec<(String, u32)> = conn
        .prepare("SELECT owner, version FROM schema_versions ORDER BY owner")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: Vec<(String, u32)> = {
        let mut all: Vec<_> = std::iter::once(("store".to_string(), 1))
            .chain(
                cowork_app::SCHEMAS
                    .iter()
                    .map(|s| (s.owner.to_string(), s.steps.len() as u32)),
            )
            .collect();
        all.sort();
        all
    };
    assert_eq!(versions, expected, "every owner is at its latest version");

    let audit = app.scheduler().audit().verify().unwrap();
    assert!(audit.rows >= 8, "the old audit rows are kept: {audit:?}");
    assert!(audit.problems.is_empty(), "the chain is whole: {audit:?}");

    let call = |tool: &str, args: serde_json::Value| {
        app.scheduler()
            .call(CallRequest::new(tool, args, Caller::Cli, "upgrade"))
    };
    let tasks = call("list_tasks", json!({})).await.result.unwrap();
    let tasks = tasks.structured.unwrap();
    assert_eq!(tasks["tasks"][0]["title"], "Renew passport", "{tasks}");
    let events = call(
        "calendar_check",
        json!({"start": "2026-12-02", "end": "2026-12-03", "timezone": "Asia/Shanghai"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    assert_eq!(events["events"][0]["title"], "Dentist", "{events}");
    let todos: i64 = conn
        .query_row("SELECT count(*) FROM todos", [], |r| r.get(0))
        .unwrap();
    assert_eq!(todos, 1);

    // Opening again applies nothing and keeps the versions.
    drop(conn);
    drop(app);
    let again =
        cowork_store::Store::open(cowork_store::DataDir::at(&home), &cowork_app::SCHEMAS).unwrap();
    let count: i64 = again
        .connect()
        .unwrap()
        .query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 1);
}
