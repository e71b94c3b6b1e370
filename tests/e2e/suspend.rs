//! The SuspendCoordinator: a call that meets a wall (here a probe "login" that needs a file to
//! exist) ends as suspended, on record; the suspension survives a restart; Resume runs the same
//! call again through the gate; a second Resume, a cancel and a timeout are settled once each.

use cowork_contract::{SuspendRequest, ToolError};
use cowork_core::{
    CallRequest, Caller, DenyApprover, Layer, SuspendCoordinator, SuspendError, SuspensionEvent,
};
use cowork_tests::Harness;
use cowork_tests::login_wall::{FileProbe, Pages};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn suspended_id(outcome: &cowork_core::CallOutcome) -> String {
    match &outcome.result {
        Err(ToolError::Suspended { id, reason }) => {
            assert!(reason.contains("login needed"), "{reason}");
            id.clone()
        }
        other => panic!("expected a suspension, got {other:?}"),
    }
}

#[tokio::test]
async fn a_call_behind_a_login_is_suspended_survives_a_restart_and_resumes_once() {
    let h = Harness::new(Arc::new(DenyApprover));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, Arc::new(Pages(h.workspace.clone())));
    let page = || {
        CallRequest::new(
            "probe_protected_page",
            json!({"page": "orders"}),
            Caller::Chat,
            "conv",
        )
    };

    // Without a store for suspensions (a bare scheduler; the app's has one), the tool says
    // what to do instead.
    let bare = cowork_core::Scheduler::new(
        h.scheduler.registry().clone(),
        h.scheduler.policy().clone(),
        h.scheduler.audit().clone(),
        Arc::new(DenyApprover),
        (*h.scheduler.env()).clone(),
        Default::default(),
    );
    let bare = bare.call(page()).await;
    let message = bare.result.unwrap_err().to_string();
    assert!(
        message.contains("login needed") && message.contains("cannot wait for you"),
        "{message}"
    );

    let coordinator = h.tasks();
    let mut events = coordinator.subscribe();
    let first = h.scheduler.call(page()).await;
    let id = suspended_id(&first);
    assert!(
        first
            .result
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains(&format!("cowork tasks resume {id}"))
    );
    assert_eq!(
        h.audit_rows(&first.call_id)
            .last()
            .unwrap()
            .record
            .outcome
            .as_deref(),
        Some("suspended"),
        "on record"
    );
    match events.try_recv().unwrap() {
        SuspensionEvent::Suspended { suspension } => assert_eq!(
            (suspension.id.as_str(), suspension.tool.as_str()),
            (id.as_str(), "probe_protected_page")
        ),
        other => panic!("{other:?}"),
    }

    // A restart: a new coordinator on the same store sees it, with what it needs to run again.
    let reopened = SuspendCoordinator::open(&h.store).unwrap();
    let open = reopened.list(false).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].args.clone(), open[0].resume_when.clone()),
        (
            json!({"page": "orders"}),
            json!({"kind": "file", "file_exists": "logged-in"})
        )
    );

    // Resumed before logging in: the call runs again and meets the wall again (a new suspension).
    let again = h.scheduler.resume(&id, Caller::Palette).await.unwrap();
    let second = suspended_id(&again);
    assert_ne!(second, id);
    assert_eq!(reopened.get(&id).unwrap().unwrap().state, "resumed");

    // The person logs in; Resume (from the CLI, say) reads the page.
    std::fs::write(h.workspace.join("logged-in"), "").unwrap();
    let done = h.scheduler.resume(&second, Caller::Cli).await.unwrap();
    assert_eq!(
        done.result.unwrap().text_content(),
        "order status of orders: shipped"
    );
    let twice = h
        .scheduler
        .resume(&second, Caller::Palette)
        .await
        .unwrap_err();
    assert_eq!(
        twice,
        SuspendError::Settled {
            id: second.clone(),
            state: "resumed".into(),
            wanted: "resumed"
        }
    );
    assert!(twice.to_string().contains("resumed, not suspended"));
    assert!(coordinator.list(false).unwrap().is_empty());

    // Cancel, and a timeout the person did not extend.
    std::fs::remove_file(h.workspace.join("logged-in")).unwrap();
    let third = suspended_id(&h.scheduler.call(page()).await);
    assert_eq!(
        coordinator.cancel(&third, "window").unwrap().state,
        "cancelled"
    );
    assert!(matches!(
        h.scheduler.resume(&third, Caller::Cli).await,
        Err(SuspendError::Settled { .. })
    ));
    let request = SuspendRequest {
        reason: "2FA code".into(),
        resume_when: json!(null),
        timeout: Duration::from_millis(1),
    };
    let brief = "suspension-brief".to_string();
    coordinator
        .record(
            &brief,
            &cowork_core::suspend::Stopped {
                call_id: "call-x",
                caller: "chat",
                conversation: "conv",
                tool: "probe_protected_page",
                args: &json!({"page": "x"}),
            },
            &request,
        )
        .unwrap();
    assert_eq!(
        coordinator
            .extend(&brief, Duration::from_secs(60))
            .unwrap()
            .state,
        "suspended",
        "extended in time"
    );
    let expiring = "suspension-expiring";
    coordinator
        .record(
            expiring,
            &cowork_core::suspend::Stopped {
                call_id: "call-y",
                caller: "chat",
                conversation: "conv",
                tool: "probe_protected_page",
                args: &json!({"page": "y"}),
            },
            &request,
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        coordinator.get(expiring).unwrap().unwrap().state,
        "timed_out"
    );
    let open: Vec<String> = coordinator
        .list(false)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(open, vec![brief]);
    assert!(matches!(
        coordinator.cancel("nope", "cli"),
        Err(SuspendError::NotFound(_))
    ));
}

/// The coordinator is not the browser's: any family's probe lets its suspensions go on by
/// themselves once their condition holds (settled by `auto`), and leaves them waiting before.
#[tokio::test]
async fn a_probe_lets_a_suspension_go_on_by_itself_once_its_condition_holds() {
    let h = Harness::new(Arc::new(DenyApprover));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, Arc::new(Pages(h.workspace.clone())));
    let coordinator = h.tasks();
    let id = suspended_id(
        &h.scheduler
            .call(CallRequest::new(
                "probe_protected_page",
                json!({"page": "orders"}),
                Caller::Chat,
                "conv",
            ))
            .await,
    );

    // No probe for its kind yet, then a probe whose condition does not hold: it waits.
    assert!(h.scheduler.resume_ready(Caller::Chat).await.is_empty());
    h.scheduler
        .add_resume_probe(Arc::new(FileProbe(h.workspace.clone())));
    assert!(h.scheduler.resume_ready(Caller::Chat).await.is_empty());
    assert!(
        h.scheduler
            .resume_if_ready(&id, Caller::Cli)
            .await
            .is_none()
    );
    assert_eq!(coordinator.get(&id).unwrap().unwrap().state, "suspended");

    std::fs::write(h.workspace.join("logged-in"), "").unwrap();
    let done = h.scheduler.resume_ready(Caller::Chat).await;
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, id);
    assert_eq!(
        done[0].1.result.as_ref().unwrap().text_content(),
        "order status of orders: shipped"
    );
    let row = coordinator.get(&id).unwrap().unwrap();
    assert_eq!(
        (row.state.as_str(), row.settled_by.as_deref()),
        ("resumed", Some("auto"))
    );
    // Settled once: nothing more to resume.
    assert!(h.scheduler.resume_ready(Caller::Chat).await.is_empty());
    assert!(
        h.scheduler
            .resume_if_ready(&id, Caller::Cli)
            .await
            .is_none()
    );
}

/// The shells' follow-ups live in the app: following a suspension until its condition holds,
/// handing the resumed result back to the model's turn, and the outbox drain.
#[tokio::test]
async fn the_app_follows_a_suspension_and_hands_its_result_back_to_the_turn() {
    use cowork_app::{App, AppOptions, Drained, Following};
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let app = App::open(AppOptions {
        home: Some(dir.path().join("home")),
        workspace_roots: vec![workspace.clone()],
        approver: Arc::new(DenyApprover),
        scheduler: cowork_core::SchedulerConfig::default(),
    })
    .unwrap();
    let scheduler = app.scheduler();
    scheduler
        .registry()
        .add_provider(Layer::Builtin, Arc::new(Pages(workspace.clone())));
    scheduler.add_resume_probe(Arc::new(FileProbe(workspace.clone())));
    let first = scheduler
        .call(CallRequest::new(
            "probe_protected_page",
            json!({"page": "orders"}),
            Caller::Chat,
            "conv-f",
        ))
        .await;
    let id = suspended_id(&first);
    assert!(
        app.resume_continuation(&id, &first).is_none(),
        "a call still suspended does not continue the turn"
    );

    let login = workspace.join("logged-in");
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        std::fs::write(login, "").unwrap();
    });
    let mut heard = Vec::new();
    let done = app
        .follow_suspension(first, Caller::Cli, |step| heard.push(step))
        .await;
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert!(matches!(&heard[..], [Following::Waiting { id: waited, .. }] if *waited == id));
    let (conversation, resumed) = app.resume_continuation(&id, &done).unwrap();
    assert_eq!(conversation, "conv-f");
    assert!(
        resumed.ok && resumed.result.contains("shipped"),
        "{resumed:?}"
    );
    assert_eq!(resumed.tool, "probe_protected_page");

    assert_eq!(
        app.drain_outbox("conv-f", std::future::pending()).await,
        Drained::Nothing
    );
}

/// Another app's call (an MCP client through `cowork mcp serve`) that meets a wall runs again
/// as that app's call when the person resumes it — its review, its grants, its name on record —
/// never as the resumer's.
#[tokio::test]
async fn another_apps_suspended_call_resumes_as_that_apps() {
    let h = Harness::new(Arc::new(DenyApprover));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, Arc::new(Pages(h.workspace.clone())));
    let first = h
        .scheduler
        .call(CallRequest::new(
            "probe_protected_page",
            json!({"page": "orders"}),
            Caller::mcp("some-app"),
            "mcp:some-app",
        ))
        .await;
    let id = suspended_id(&first);
    assert_eq!(
        h.tasks().get(&id).unwrap().unwrap().caller.as_deref(),
        Some("mcp:some-app")
    );
    std::fs::write(h.workspace.join("logged-in"), "").unwrap();
    let done = h.scheduler.resume(&id, Caller::Palette).await.unwrap();
    assert!(done.result.is_ok(), "{:?}", done.result);
    let row = h.audit_rows(&done.call_id).pop().unwrap().record;
    assert_eq!(row.caller, "mcp:some-app", "resumed as the app's call");
}
