//! The tools through which the model turns to the person — `ask_user` (`AskUserQuestion`),
//! `confirm`, `request_input` — and the plan mode it drives (`enter_plan_mode`,
//! `exit_plan_mode`), through the real scheduler: answered in the window's channel, never
//! guessed when nobody answers (the task suspends), and plan mode holding writes back until the
//! person approves the plan.

use cowork_core::{
    ApprovalChoice, CallRequest, Caller, ChannelApprover, DenyApprover, ElicitationAnswer,
    PendingElicitation,
};
use cowork_tests::Harness;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;

fn call(tool: &str, args: Value, conversation: &str) -> CallRequest {
    CallRequest::new(tool, args, Caller::Chat, conversation)
}

/// A window whose person answers every form with `answer` (and allows every approval).
fn window(answer: impl Fn(&Value) -> ElicitationAnswer + Send + 'static) -> Harness {
    let (approver, mut asks) = ChannelApprover::new("window", 4);
    let (approver, mut forms) = approver.with_elicitations(4);
    tokio::spawn(async move {
        while let Some((_, reply)) = asks.recv().await {
            let _ = reply.send(ApprovalChoice::Once);
        }
    });
    tokio::spawn(async move {
        while let Some((request, reply)) = forms.recv().await {
            let _ = reply.send(answer(&request.schema));
        }
    });
    Harness::new(Arc::new(approver))
}

fn accept(content: Value) -> ElicitationAnswer {
    ElicitationAnswer::Accept { content }
}

#[tokio::test]
async fn ask_user_puts_choices_to_the_person_and_returns_only_what_they_chose() {
    let h = window(|schema| {
        // The form the window shows: choices, several for the second, free words for the third.
        assert_eq!(schema["properties"]["q0"]["enum"], json!(["9:40", "10:10"]));
        assert_eq!(schema["properties"]["q1"]["type"], "array");
        accept(json!({
            "q0": "10:10",
            // Not an option: dropped (the answer is data, never widened by the model's guess).
            "q1": ["breakfast", "champagne"],
            "q1_other": "  no nuts ",
            "q2": "a window seat"
        }))
    });
    // Claude Code's name for it works too.
    let out = h
        .ok(
            "AskUserQuestion",
            json!({"questions": [
                {"question": "Which train?", "header": "Train", "options": [{"label": "9:40"}, {"label": "10:10"}]},
                {"question": "Which meals?", "options": [{"label": "breakfast"}, {"label": "dinner"}], "multiSelect": true},
                {"question": "Anything else?"}
            ]}),
        )
        .await;
    assert_eq!(out["answered"], true);
    let answers = out["answers"].as_array().unwrap();
    assert_eq!(answers[0]["selected"], json!(["10:10"]));
    assert_eq!(answers[1]["selected"], json!(["breakfast"]));
    assert_eq!(answers[1]["text"], "no nuts");
    assert_eq!(answers[2]["selected"], json!([]));
    assert_eq!(answers[2]["text"], "a window seat");

    let bad = h.call("ask_user", json!({"questions": []})).await;
    assert!(
        bad.result.unwrap_err().to_string().contains("1 to 4"),
        "an empty question list is refused with the limit"
    );
}

#[tokio::test]
async fn a_decline_is_no_answer_and_confirm_is_only_an_explicit_yes() {
    let h = window(|_| ElicitationAnswer::Decline);
    let out = h
        .ok(
            "ask_user",
            json!({"questions": [{"question": "Which city?", "options": [{"label": "Paris"}, {"label": "Rome"}]}]}),
        )
        .await;
    assert_eq!(out, json!({"answered": false, "answers": []}));
    let no = h.ok("confirm", json!({"message": "Book the 9:40?"})).await;
    assert_eq!(no["confirmed"], false);

    let h = window(|_| accept(json!({})));
    let yes = h.ok("confirm", json!({"message": "Book the 9:40?"})).await;
    assert_eq!(yes["confirmed"], true);
}

#[tokio::test]
async fn request_input_keeps_typed_values_and_never_asks_for_a_secret() {
    let h =
        window(|_| accept(json!({"city": "Lyon", "nights": 3, "breakfast": "yes", "extra": "x"})));
    let out = h
        .ok(
            "request_input",
            json!({"prompt": "For the booking", "fields": [
                {"name": "city", "required": true},
                {"name": "nights", "kind": "number"},
                {"name": "breakfast", "kind": "boolean"}
            ]}),
        )
        .await;
    assert_eq!(out["provided"], true);
    // `breakfast` came as text, not a boolean; `extra` was never asked for.
    assert_eq!(out["values"], json!({"city": "Lyon", "nights": 3}));

    for field in [
        json!({"name": "password"}),
        json!({"name": "code", "label": "Your bank PIN"}),
    ] {
        let refused = h
            .call(
                "request_input",
                json!({"prompt": "Log in", "fields": [field]}),
            )
            .await;
        let err = refused.result.unwrap_err().to_string();
        assert!(err.contains("keyring"), "{err}");
    }
}

/// Nobody can answer (a headless run) or nobody does (silence past the ask timeout): the task
/// suspends, waiting for the person — the model is never handed a made-up answer.
#[tokio::test]
async fn nobody_to_answer_suspends_the_task_instead_of_guessing() {
    let headless = Harness::new(Arc::new(DenyApprover));
    let tasks = headless.tasks();
    let outcome = headless
        .call("confirm", json!({"message": "Send the invoice now?"}))
        .await;
    let err = outcome.result.unwrap_err();
    assert!(
        matches!(err, cowork_contract::ToolError::Suspended { .. }),
        "{err}"
    );
    let waiting = tasks.list(false).unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool, "confirm");
    assert!(
        waiting[0].reason.contains("Send the invoice now?"),
        "{:?}",
        waiting[0].reason
    );

    // A window where nobody answers: after the ask timeout, suspended too (not declined).
    let (approver, _asks) = ChannelApprover::new("window", 4);
    let (approver, mut forms): (_, mpsc::Receiver<PendingElicitation>) =
        approver.with_elicitations(4);
    let quiet = Harness::new(Arc::new(approver));
    std::fs::write(
        quiet.store.dir().settings_path(),
        r#"{"policy": {"askTimeoutSecs": 1}}"#,
    )
    .unwrap();
    quiet.scheduler.policy().reload().unwrap();
    let tasks = quiet.tasks();
    let scheduler = quiet.scheduler.clone();
    let asked = tokio::spawn(async move {
        scheduler
            .call(call(
                "ask_user",
                json!({"questions": [{"question": "Which hotel?"}]}),
                "c1",
            ))
            .await
    });
    let (_request, _unanswered) = forms.recv().await.unwrap();
    let outcome = asked.await.unwrap();
    assert!(
        matches!(
            outcome.result,
            Err(cowork_contract::ToolError::Suspended { .. })
        ),
        "{:?}",
        outcome.result.err()
    );
    assert_eq!(tasks.list(false).unwrap().len(), 1);
}

/// The model plans first: in its conversation only read-only tools run until the person
/// approves the plan; "revise" keeps it planning; other conversations are untouched.
#[tokio::test]
async fn plan_mode_entered_by_the_model_holds_writes_until_the_person_approves_the_plan() {
    let decisions = Arc::new(std::sync::Mutex::new(vec!["approve", "revise"]));
    let next = decisions.clone();
    let h = window(move |schema| {
        assert_eq!(
            schema["properties"]["decision"]["enum"],
            json!(["approve", "revise"])
        );
        let decision = next.lock().unwrap().pop().unwrap();
        accept(json!({"decision": decision, "notes": "book the earlier train"}))
    });
    let s = &h.scheduler;
    let entered = s.call(call("enter_plan_mode", json!({}), "c1")).await;
    assert!(entered.result.is_ok());
    let held = s
        .call(call(
            "create_task",
            json!({"title": "Book the train"}),
            "c1",
        ))
        .await;
    let err = held.result.unwrap_err().to_string();
    assert!(err.contains("plan mode"), "{err}");
    assert!(
        s.call(call("list_tasks", json!({}), "c1"))
            .await
            .result
            .is_ok(),
        "reading goes on in plan mode"
    );
    assert!(
        s.call(call("create_task", json!({"title": "Other chat"}), "c2"))
            .await
            .result
            .is_ok(),
        "another conversation is not planning"
    );

    let plan = json!({"plan": "1. Find trains\n2. Book the 9:40"});
    let revised = s.call(call("exit_plan_mode", plan.clone(), "c1")).await;
    let out = revised.result.unwrap().structured.unwrap();
    assert_eq!(out["approved"], false);
    assert_eq!(out["notes"], "book the earlier train");
    assert!(s.policy().planning("c1"), "revise keeps it planning");

    let approved = s.call(call("exit_plan_mode", plan, "c1")).await;
    assert_eq!(
        approved.result.unwrap().structured.unwrap()["approved"],
        true
    );
    assert!(!s.policy().planning("c1"));
    assert!(
        s.call(call(
            "create_task",
            json!({"title": "Book the train"}),
            "c1"
        ))
        .await
        .result
        .is_ok()
    );
    // The person's own plan mode stays the ceiling: approving the model's plan does not lift it.
    s.policy().set_mode(cowork_core::Mode::Plan, false).unwrap();
    assert!(
        s.call(call("create_task", json!({"title": "x"}), "c1"))
            .await
            .result
            .is_err()
    );
}

/// Plan mode driven by a (scripted) model through the agent: it plans, its write is held, it
/// presents the plan, the person approves in the window, and the same write then runs.
#[tokio::test]
async fn a_scripted_model_plans_first_and_acts_once_the_person_approves() {
    use cowork_agent::provider::openai::OpenAiCompatible;
    use cowork_agent::{Agent, AgentConfig, AgentEvent, Conversations};
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let h = window(|_| accept(json!({"decision": "approve"})));
    let server = ScriptedLlm::start().await;
    let agent = Agent::new(
        h.scheduler.clone(),
        Arc::new(OpenAiCompatible::new("openai", &server.openai_base(), "k")),
        Conversations::open(&h.store).unwrap(),
        AgentConfig {
            model: "scripted".into(),
            ..Default::default()
        },
    );
    let task = json!({"title": "Book the 9:40 to Lyon"});
    server.push(Turn::tools("", &[("a", "enter_plan_mode", json!({}))]));
    server.push(Turn::tools("", &[("b", "create_task", task.clone())]));
    server.push(Turn::tools(
        "",
        &[(
            "c",
            "ExitPlanMode",
            json!({"plan": "1. Book the 9:40 to Lyon"}),
        )],
    ));
    server.push(Turn::tools("", &[("d", "create_task", task)]));
    server.push(Turn::text("Booked."));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let done = agent
        .send(
            "trip",
            "book my train, plan first",
            &tx,
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    assert!(done.is_ok(), "{done:?}");
    drop(tx);
    let mut finished = Vec::new();
    while let Some(event) = rx.recv().await {
        if let AgentEvent::ToolCallFinished {
            name, ok, result, ..
        } = event
        {
            finished.push((name, ok, result));
        }
    }
    let names: Vec<&str> = finished.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "enter_plan_mode",
            "create_task",
            "ExitPlanMode",
            "create_task"
        ]
    );
    assert!(finished[0].1);
    assert!(
        !finished[1].1 && finished[1].2.contains("plan mode"),
        "held while planning: {:?}",
        finished[1]
    );
    assert!(
        finished[2].1 && finished[2].2.contains("\"approved\": true"),
        "{:?}",
        finished[2]
    );
    assert!(finished[3].1, "runs once approved: {:?}", finished[3]);
}
