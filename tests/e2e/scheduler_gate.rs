//! The spine's promise: every way to execute a tool yields a review and an audit row, and bad
//! input gets a clear error — also audited, with no gap in the chain.

use cowork_contract::ToolError;
use cowork_core::{CallRequest, Caller, DenyApprover, Layer, SchedulerConfig, ToolEvent};
use cowork_tests::Harness;
use cowork_tests::login_wall::{FileProbe, Pages};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn req(tool: &str, args: serde_json::Value) -> CallRequest {
    CallRequest::new(tool, args, Caller::Chat, "conv-1")
}

/// The public surface that can execute a tool is `Scheduler::call`, `Scheduler::call_batch`,
/// `Scheduler::call_unlisted` (below) and the three ways a suspended call runs again (`resume`,
/// `resume_if_ready`, `resume_ready`); the
/// CLI's `tools call` is covered in cli.rs, and `tool_search` runs as a tool itself. The
/// registry hands out specs only: `Registry::handler` is crate-private, and families expose only
/// their `ToolProvider`, so there is no other path to try.
/// A builtin's schemas are compiled at its first call, not at start: this is where one that
/// does not compile is caught instead.
#[tokio::test]
async fn every_builtin_tools_schemas_compile() {
    let h = Harness::new(Arc::new(DenyApprover));
    let registry = h.scheduler.registry();
    assert!(
        registry.list().len() > 50,
        "the app's families are registered"
    );
    assert_eq!(registry.uncompilable(), Vec::<String>::new());
}

#[tokio::test]
async fn every_public_execution_path_is_reviewed_and_audited() {
    let h = Harness::new(Arc::new(DenyApprover));
    let mut events = h.scheduler.subscribe();

    let single = h
        .scheduler
        .call(req("create_task", json!({"title": "Write report"})))
        .await;
    assert!(single.result.is_ok(), "{:?}", single.result);
    assert_eq!(
        single.review.as_ref().unwrap().decision,
        cowork_core::Action::Allow
    );
    let rows = h.audit_rows(&single.call_id);
    assert_eq!(
        rows.iter()
            .map(|r| r.record.phase.as_str())
            .collect::<Vec<_>>(),
        ["intent", "final"]
    );
    assert_eq!(rows[1].record.outcome.as_deref(), Some("ok"));
    assert_eq!(rows[1].record.caller, "chat");

    let batch = h
        .scheduler
        .call_batch(vec![
            req("list_tasks", json!({})),
            req("get_system_info", json!({})),
            req("create_task", json!({"title": "second"})),
            req("tool_search", json!({"query": "task"})),
            // Claude Code's name for web_fetch: a new site asks, and nobody answers here.
            req("WebFetch", json!({"url": "https://example.com/"})),
        ])
        .await;
    let names: Vec<&str> = batch.iter().map(|o| o.tool.as_str()).collect();
    assert_eq!(
        names,
        [
            "list_tasks",
            "get_system_info",
            "create_task",
            "tool_search",
            "web_fetch"
        ]
    );
    for outcome in &batch {
        assert!(
            outcome.review.is_some(),
            "{} was not reviewed",
            outcome.tool
        );
        let rows = h.audit_rows(&outcome.call_id);
        assert_eq!(
            rows.last().unwrap().record.phase,
            "final",
            "{} has no final audit row",
            outcome.tool
        );
        assert_eq!(rows.last().unwrap().record.tool, outcome.tool);
    }
    assert!(
        matches!(&batch[4].result, Err(ToolError::Denied { .. })),
        "{:?}",
        batch[4].result
    );
    // A tool that is not set up says what to configure, and is audited by its own name.
    let unset = h
        .scheduler
        .call(req("WebSearch", json!({"query": "rust"})))
        .await;
    match &unset.result {
        Err(ToolError::NotConfigured { how, .. }) => assert!(how.contains("Settings → Web")),
        other => panic!("web_search must say what to configure, got {other:?}"),
    }
    assert_eq!(unset.tool, "web_search");
    let rows = h.audit_rows(&unset.call_id);
    assert_eq!(rows.last().unwrap().record.tool, "web_search");
    assert_eq!(
        rows.last().unwrap().record.outcome.as_deref(),
        Some("not_configured")
    );
    let found = batch[3]
        .result
        .as_ref()
        .unwrap()
        .structured
        .clone()
        .unwrap();
    assert!(
        found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "create_task")
    );

    // Events: started and completed for the first call, with its id.
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        match event {
            ToolEvent::Started { call_id, .. } if call_id == single.call_id => seen.push("started"),
            ToolEvent::Completed {
                call_id,
                duration_us,
                ..
            } if call_id == single.call_id => {
                assert!(duration_us > 0);
                seen.push("completed")
            }
            _ => {}
        }
    }
    assert_eq!(seen, ["started", "completed"]);

    // The resume paths: by hand (the call meets its wall again), by its condition for one
    // suspension, and for all of them.
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, Arc::new(Pages(h.workspace.clone())));
    h.scheduler
        .add_resume_probe(Arc::new(FileProbe(h.workspace.clone())));
    let mut suspended = Vec::new();
    for page in ["a", "b", "c"] {
        let outcome = h
            .scheduler
            .call(req("probe_protected_page", json!({"page": page})))
            .await;
        match outcome.result {
            Err(ToolError::Suspended { id, .. }) => suspended.push(id),
            other => panic!("expected a suspension, got {other:?}"),
        }
    }
    let mut resumed = vec![
        h.scheduler
            .resume(&suspended[0], Caller::Cli)
            .await
            .unwrap(),
    ];
    assert!(matches!(
        resumed[0].result,
        Err(ToolError::Suspended { .. })
    ));
    std::fs::write(h.workspace.join("logged-in"), "").unwrap();
    resumed.push(
        h.scheduler
            .resume_if_ready(&suspended[1], Caller::Cli)
            .await
            .expect("its condition holds"),
    );
    let rest = h.scheduler.resume_ready(Caller::Chat).await;
    assert_eq!(rest.len(), 2, "c and a's new suspension: {rest:?}");
    resumed.extend(rest.into_iter().map(|(_, outcome)| outcome));
    for outcome in &resumed {
        assert!(outcome.review.is_some(), "a resumed call was not reviewed");
        let rows = h.audit_rows(&outcome.call_id);
        assert_eq!(rows.last().unwrap().record.phase, "final");
        assert_eq!(rows.last().unwrap().record.tool, "probe_protected_page");
    }
    assert!(resumed[1..].iter().all(|o| o.result.is_ok()));

    let report = h.scheduler.audit().verify().unwrap();
    assert!(report.ok(), "{:?}", report.problems);
}

#[tokio::test]
async fn bad_input_gets_clear_errors_and_still_leaves_audit_rows() {
    let config = SchedulerConfig {
        max_args_bytes: 1024,
        ..Default::default()
    };
    let h = Harness::with_config(Arc::new(DenyApprover), config);
    let cases = vec![
        (
            req("create_tsk", json!({"title": "x"})),
            "did you mean create_task",
        ),
        (
            req("create_task", json!({"title": 42})),
            "`/title`: value is not of type \"string\"",
        ),
        (
            req(
                "create_task",
                json!({"title": {"api_key": "sk-live-0123456789abcdef"}}),
            ),
            "`/title`: value is not of type",
        ),
        (
            req("create_task", json!({})),
            "\"title\" is a required property",
        ),
        (
            req("create_task", json!({"title": "x", "colour": "red"})),
            "colour",
        ),
        (
            req("create_task", json!({"title": "x", "priority": "whenever"})),
            "/priority",
        ),
        (
            req("create_task", json!({"title": "x", "due": "next tuesday"})),
            "YYYY-MM-DD",
        ),
        (req("update_task", json!({"id": 999})), "no task has id 999"),
        (
            req("create_task", json!({"title": "x".repeat(2000)})),
            "the limit is 1024 bytes",
        ),
    ];
    let n = cases.len();
    for (request, expected) in cases {
        let tool = request.tool.clone();
        let outcome = h.scheduler.call(request).await;
        let err = outcome.result.expect_err(&tool).to_string();
        assert!(
            err.contains(expected),
            "{tool}: {err:?} should contain {expected:?}"
        );
        let rows = h.audit_rows(&outcome.call_id);
        assert_eq!(
            rows.last().unwrap().record.error.as_deref(),
            Some(err.as_str())
        );
    }
    let mut leaked = false;
    h.scheduler
        .audit()
        .for_each(|row| leaked |= format!("{row:?}").contains("sk-live"))
        .unwrap();
    assert!(
        !leaked,
        "a secret in a mistyped argument reached the audit log"
    );
    let report = h.scheduler.audit().verify().unwrap();
    assert!(report.ok());
    // One final row per call, plus intent rows for the two calls that passed the schema and got
    // as far as running (the unparsable due date and the missing task id).
    assert_eq!(report.rows as usize, n + 2);
}

#[tokio::test]
async fn timeouts_cancellation_retries_rate_limits_and_output_validation() {
    let h = Harness::new(Arc::new(DenyApprover));

    let mut slow = req("flaky_probe", json!({"sleep_ms": 5000}));
    slow.timeout = Some(Duration::from_millis(50));
    assert!(matches!(
        h.scheduler.call(slow).await.result,
        Err(ToolError::Timeout { .. })
    ));

    let cancel_req = req("flaky_probe", json!({"sleep_ms": 5000}));
    let token = cancel_req.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let outcome = h.scheduler.call(cancel_req).await;
    assert!(
        matches!(outcome.result, Err(ToolError::Cancelled)),
        "{:?}",
        outcome.result
    );
    assert_eq!(
        h.audit_rows(&outcome.call_id)
            .last()
            .unwrap()
            .record
            .outcome
            .as_deref(),
        Some("cancelled")
    );

    // The person pauses all tools (the tray): the call in flight stops, new calls are
    // refused, both audited as `paused`; resuming lets calls through again.
    let running = {
        let scheduler = h.scheduler.clone();
        tokio::spawn(async move {
            scheduler
                .call(req("flaky_probe", json!({"sleep_ms": 5000})))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut paused = h.scheduler.paused();
    h.scheduler.pause_all();
    assert!(*paused.borrow_and_update());
    let stopped = tokio::time::timeout(cowork_tests::wait::patience(), running)
        .await
        .expect("the pause stops the call at once")
        .unwrap();
    assert!(matches!(stopped.result, Err(ToolError::Paused)));
    let refused = h.scheduler.call(req("list_tasks", json!({}))).await;
    assert!(
        refused
            .result
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("resume them from the tray"),
        "{:?}",
        refused.result
    );
    for id in [&stopped.call_id, &refused.call_id] {
        let rows = h.audit_rows(id);
        assert_eq!(
            rows.last().unwrap().record.outcome.as_deref(),
            Some("paused")
        );
    }
    h.scheduler.resume_all();
    assert!(!*paused.borrow_and_update());
    assert!(
        h.scheduler
            .call(req("list_tasks", json!({})))
            .await
            .result
            .is_ok()
    );

    // Idempotent + transient: retried with backoff; the first two attempts fail.
    let outcome = h
        .scheduler
        .call(req("flaky_probe", json!({"fail_times": 2})))
        .await;
    assert!(
        outcome.result.is_ok(),
        "third attempt should succeed: {:?}",
        outcome.result
    );
    let outcome = h
        .scheduler
        .call(req("flaky_probe", json!({"fail_times": 100})))
        .await;
    assert!(matches!(
        outcome.result,
        Err(ToolError::Failed {
            transient: true,
            ..
        })
    ));

    // Not idempotent: never retried. create_task has no transient failures, so use the rate-limited
    // probe (2 per minute, burst 2).
    for _ in 0..2 {
        assert!(
            h.scheduler
                .call(req("limited_probe", json!({})))
                .await
                .result
                .is_ok()
        );
    }
    let limited = h.scheduler.call(req("limited_probe", json!({}))).await;
    assert!(
        matches!(limited.result, Err(ToolError::RateLimited { .. })),
        "{:?}",
        limited.result
    );
    assert!(limited.result.unwrap_err().to_string().contains("retry in"));

    let liar = h.scheduler.call(req("liar_probe", json!({}))).await;
    let err = liar.result.unwrap_err().to_string();
    assert!(
        err.contains("does not match its output schema") && err.contains("/count"),
        "{err}"
    );

    // Secrets never reach the audit log.
    let outcome = h
        .scheduler
        .call(req(
            "flaky_probe",
            json!({"api_key": "sk-live-0123456789abcdef"}),
        ))
        .await;
    let rows = h.audit_rows(&outcome.call_id);
    assert!(rows[0].record.args.contains("[redacted]"));
    assert!(!rows.iter().any(|r| r.record.args.contains("sk-live")));
    assert!(h.scheduler.audit().verify().unwrap().ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_runs_read_only_calls_in_parallel_and_effectful_ones_in_order() {
    let h = Harness::new(Arc::new(DenyApprover));
    let start = Instant::now();
    let outcomes = h
        .scheduler
        .call_batch(
            (0..4)
                .map(|_| req("flaky_probe", json!({"sleep_ms": 1000})))
                .collect(),
        )
        .await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
    // Four 1 s calls one after another cannot take less than 4 s, however fast the machine;
    // overlapping, they take about 1 s. The bound is the floor of the wrong behaviour, not a speed.
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "read-only calls did not overlap: {:?}",
        start.elapsed()
    );

    // A write is a barrier: the read after it sees the task it created.
    let outcomes = h
        .scheduler
        .call_batch(vec![
            req("create_task", json!({"title": "barrier"})),
            req("list_tasks", json!({"text": "barrier"})),
        ])
        .await;
    let listed = outcomes[1]
        .result
        .as_ref()
        .unwrap()
        .structured
        .clone()
        .unwrap();
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn quick_note_writes_a_whole_markdown_file_and_an_index_row() {
    let h = Harness::new(Arc::new(DenyApprover));
    let outcome = h
        .scheduler
        .call(req(
            "quick_note",
            json!({"title": "周会 纪要", "body": "- ship the spine", "tags": ["#work"]}),
        ))
        .await;
    let saved = outcome.result.unwrap().structured.unwrap();
    let path = std::path::PathBuf::from(saved["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(path.starts_with(h.vault.root().join("notes")), "{path:?}");
    assert!(
        text.starts_with("---\nid: ")
            && text.contains("title: 周会 纪要\n")
            && text.contains("tags:\n- work\n")
            && text.ends_with("- ship the spine\n"),
        "{text}"
    );
    assert!(
        h.vault
            .get(saved["id"].as_str().unwrap())
            .unwrap()
            .is_some(),
        "the note is in the vault's index"
    );
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A tool's declared effect kinds decide parallelism and plan mode, so a call whose effects
/// have a kind its tool did not declare is refused before review, and nothing runs.
#[tokio::test]
async fn an_effect_kind_the_tool_did_not_declare_is_refused() {
    let h = Harness::new(Arc::new(DenyApprover));
    let out = h
        .scheduler
        .call(req(
            "undeclared_write_probe",
            json!({"target": "notes.txt"}),
        ))
        .await;
    let err = out.result.expect_err("refused").to_string();
    assert!(
        err.contains("returned a `fs.write` effect it does not declare"),
        "{err}"
    );
    assert!(!h.workspace.join("notes.txt").exists());
}

/// `Scheduler::call_unlisted` (a tool Cowork holds for something outside, such as a server's
/// sampling request) is one more public path: reviewed and audited like `call`, and its tool is
/// listed nowhere, so no caller can name it; a tool whose schema does not compile is refused,
/// on record.
#[tokio::test]
async fn an_unlisted_tool_is_reviewed_and_audited_and_nobody_can_name_it() {
    let h = Harness::new(Arc::new(DenyApprover));
    let tool = cowork_tests::FixedTool::new(
        "host_only_probe",
        "test",
        "Held by Cowork, listed nowhere.",
        json!({"type": "object"}),
        cowork_contract::ToolOutput::text("ran"),
    );
    let out = h
        .scheduler
        .call_unlisted(req("host_only_probe", json!({})), tool, Layer::Mcp)
        .await;
    assert_eq!(out.result.unwrap().text_content(), "ran");
    assert!(out.review.is_some());
    let rows = h.audit_rows(&out.call_id);
    assert_eq!(rows.last().unwrap().record.tool, "host_only_probe");
    assert_eq!(rows.last().unwrap().record.outcome.as_deref(), Some("ok"));

    let named = h.scheduler.call(req("host_only_probe", json!({}))).await;
    assert!(
        matches!(named.result, Err(ToolError::NotFound { .. })),
        "{:?}",
        named.result
    );
    assert!(
        !h.scheduler
            .registry()
            .list()
            .iter()
            .any(|t| t.spec.name == "host_only_probe")
    );

    let broken = cowork_tests::FixedTool::new(
        "broken_probe",
        "test",
        "Its schema does not compile.",
        json!({"type": 5}),
        cowork_contract::ToolOutput::text("never"),
    );
    let out = h
        .scheduler
        .call_unlisted(req("broken_probe", json!({})), broken, Layer::Mcp)
        .await;
    let err = out.result.unwrap_err().to_string();
    assert!(err.contains("does not compile"), "{err}");
    assert_eq!(h.audit_rows(&out.call_id).len(), 1);
}
