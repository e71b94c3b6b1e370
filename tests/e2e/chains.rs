//! Tool chains through the real scheduler: conditions and every `on_error` mode, the six
//! events, outputs from earlier results; `explain` and the person's approval covering exactly
//! the effects shown (a step whose effects were not known up front asks on its own); the chain
//! as a tool.

use cowork_app::chains::{ChainEvent, Chains, RunOptions, RunState};
use cowork_core::{ApprovalChoice, CallRequest, Caller, ChannelApprover};
use cowork_tests::Harness;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A window's approver whose person allows every ask once, counting them.
fn allowing_person() -> (Arc<ChannelApprover>, Arc<AtomicUsize>) {
    let (approver, mut asks) = ChannelApprover::new("window", 8);
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    tokio::spawn(async move {
        while let Some((_, reply)) = asks.recv().await {
            count.fetch_add(1, Ordering::SeqCst);
            let _ = reply.send(ApprovalChoice::Once);
        }
    });
    (Arc::new(approver), asked)
}

/// A window whose person allows every ask, counting them.
fn window() -> (Harness, Arc<AtomicUsize>) {
    let (approver, asked) = allowing_person();
    (Harness::new(approver), asked)
}

fn chains_in(h: &Harness, files: &[(&str, &str)]) -> Chains {
    let dir = h.store.dir().root().join("chains");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let chains = Chains::open(&h.store, h.scheduler.clone(), vec![dir]).unwrap();
    h.scheduler
        .registry()
        .add_provider(cowork_core::Layer::Builtin, chains.provider());
    chains
}

const TRIAGE: &str = r#"
name = "triage"
description = "Look, note, try, insist, stop"

[inputs.topic]
type = "string"

[inputs.make_task]
type = "boolean"
default = false

[[steps]]
id = "look"
tool = "list_tasks"

[[steps]]
id = "note"
tool = "create_task"
when = "inputs.make_task"
args = { title = "Follow up {{ inputs.topic }}" }

[[steps]]
id = "try"
tool = "read_probe"
on_error = "skip"
args = { target = "notes.md", fail_times = 1 }

[[steps]]
id = "insist"
tool = "exec_probe"
on_error = "retry(2, 10ms)"
args = { target = "make {{ inputs.topic }}", fail_times = 2 }

[[steps]]
id = "finish"
tool = "create_task"
when = "steps.insist.ok and not steps.try.ok"
args = { title = "Made {{ steps.insist.result.target }}" }

[outputs]
made = "{{ steps.finish.result.title }}"
tried = "{{ steps.try.ok }}"
"#;

#[tokio::test]
async fn conditions_and_every_on_error_mode_with_the_six_events() {
    let (h, _) = window();
    let chains = chains_in(&h, &[("triage.toml", TRIAGE)]);
    let chain = chains.get("triage").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let report = chains
        .run(
            &chain,
            &json!({"topic": "report"}),
            &RunOptions {
                conversation: "c1".into(),
                granted: None,
                unattended: false,
            },
            &move |e: &ChainEvent| seen.lock().unwrap().push(e.clone()),
        )
        .await
        .unwrap();
    assert_eq!(report.state, RunState::Completed, "{report:?}");
    assert_eq!(
        report.outputs,
        json!({"made": "Made make report", "tried": false})
    );
    let events = events.lock().unwrap().clone();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            let v = serde_json::to_value(e).unwrap();
            format!(
                "{}:{}",
                v["type"].as_str().unwrap(),
                v["step"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "chain_started:",
            "step_started:look",
            "step_completed:look",
            "step_completed:note", // skipped: its condition is false
            "step_started:try",
            "step_failed:try",
            "step_completed:try", // on_error = skip
            "step_started:insist",
            "step_failed:insist",
            "step_started:insist",
            "step_failed:insist",
            "step_started:insist",
            "step_completed:insist",
            "step_started:finish",
            "step_completed:finish",
            "chain_completed:",
        ]
    );
    // Every step was a reviewed, audited call by the chain; the retried one three times.
    h.scheduler.flush().unwrap();
    let rows = h
        .scheduler
        .audit()
        .list(&cowork_core::AuditFilter {
            conversation: Some("c1".into()),
            ..Default::default()
        })
        .unwrap();
    let finals = |tool: &str| {
        rows.iter()
            .filter(|r| r.record.tool == tool && r.record.phase == "final")
            .inspect(|r| assert_eq!(r.record.caller, "chain"))
            .count()
    };
    assert_eq!(finals("exec_probe"), 3);
    assert_eq!(finals("create_task"), 1, "the skipped step never ran");

    // stop: the chain fails at the step, and says which.
    let stop = TRIAGE
        .replace("on_error = \"retry(2, 10ms)\"", "on_error = \"stop\"")
        .replace("fail_times = 2", "fail_times = 9");
    let chains = chains_in(&h, &[("triage.toml", &stop)]);
    let report = chains
        .run(
            &chains.get("triage").unwrap(),
            &json!({"topic": "x"}),
            &RunOptions {
                conversation: "c2".into(),
                granted: None,
                unattended: false,
            },
            &|_| {},
        )
        .await
        .unwrap();
    assert_eq!(report.state, RunState::Failed);
    assert_eq!(report.failed_step.as_deref(), Some("insist"));
    assert!(report.error.unwrap().contains("flaky peer"));
}

const DEPLOY: &str = r#"
name = "deploy"
description = "Build, then tell whoever the build names"

[inputs.target]
type = "string"

[[steps]]
id = "build"
tool = "exec_probe"
args = { target = "make {{ inputs.target }}" }

[[steps]]
id = "tell"
tool = "mail_probe"
args = { target = "{{ steps.build.result.target }}@example.com" }
"#;

/// `explain` shows every step's effects; approving the chain covers exactly those: the step
/// whose effects were known is not asked again, the one whose arguments came from a result is.
#[tokio::test]
async fn approving_a_chain_covers_exactly_the_effects_it_showed() {
    let (h, asked) = window();
    let chains = chains_in(&h, &[("deploy.toml", DEPLOY)]);
    let chain = chains.get("deploy").unwrap();
    let plan = chains
        .explain(&chain, &json!({"target": "site"}), "c1")
        .unwrap();
    assert_eq!(
        serde_json::to_value(&plan.effects).unwrap(),
        json!([{"kind": "process.exec", "command": "make site"}])
    );
    assert_eq!(plan.steps[0].decision.as_deref(), Some("ask"));
    assert!(plan.steps[1].effects.is_none(), "known only when it runs");

    // The chain as a tool: one ask for the chain (its effects), one for the step it could not show.
    let outcome = h
        .scheduler
        .call(CallRequest::new(
            "chain_deploy",
            json!({"target": "site"}),
            Caller::Chat,
            "c1",
        ))
        .await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    h.scheduler.flush().unwrap();
    let rows = h
        .scheduler
        .audit()
        .list(&cowork_core::AuditFilter {
            conversation: Some("c1".into()),
            ..Default::default()
        })
        .unwrap();
    let approved = |tool: &str| {
        rows.iter()
            .find(|r| r.record.tool == tool && r.record.phase == "final")
            .and_then(|r| r.record.approved_by.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        approved("exec_probe"),
        "person: approved these effects up front"
    );
    assert!(
        approved("mail_probe").starts_with("window"),
        "asked on its own: {}",
        approved("mail_probe")
    );

    // Run without the person's approval (a rule-free run): nothing is covered, every ask asks.
    let before = asked.load(Ordering::SeqCst);
    let report = chains
        .run(
            &chain,
            &json!({"target": "site"}),
            &RunOptions {
                conversation: "c2".into(),
                granted: None,
                unattended: false,
            },
            &|_| {},
        )
        .await
        .unwrap();
    assert_eq!(report.state, RunState::Completed);
    assert_eq!(asked.load(Ordering::SeqCst) - before, 2);
}

#[tokio::test]
async fn bad_chain_files_are_listed_with_line_and_field_and_never_become_tools() {
    let (h, _) = window();
    let broken = DEPLOY.replace(
        "tool = \"mail_probe\"",
        "tool = \"mail_probe\"\nallow = \"everything\"",
    );
    let chains = chains_in(
        &h,
        &[
            ("deploy.toml", &broken),
            ("good.toml", &TRIAGE.replace("\"triage\"", "\"good\"")),
        ],
    );
    let (found, problems) = chains.load_all();
    assert_eq!(found.len(), 1);
    assert_eq!(problems.len(), 1);
    let problem = problems[0].to_string();
    assert!(
        problem.contains("deploy.toml:16") && problem.contains("unknown field `allow`"),
        "{problem}"
    );
    assert!(h.scheduler.registry().get("chain_good").is_some());
    assert!(h.scheduler.registry().get("chain_deploy").is_none());
}

/// Unattended (a schedule): what the person granted runs; an ask outside it neither hangs nor is
/// denied — the step becomes a task waiting for the person, and when they resume it (and
/// approve), that run of the step is its result and the chain goes on. No step runs twice.
#[tokio::test]
async fn an_unattended_run_waits_for_the_person_at_an_ungranted_step_and_goes_on_after() {
    let (h, asked) = window();
    let tasks = h.tasks();
    let chains = chains_in(&h, &[("deploy.toml", DEPLOY)]);
    let chain = chains.get("deploy").unwrap();
    let plan = chains
        .explain(&chain, &json!({"target": "site"}), "sched")
        .unwrap();
    let started = std::time::Instant::now();
    let report = chains
        .run(
            &chain,
            &json!({"target": "site"}),
            &RunOptions {
                conversation: "schedule:deploy".into(),
                granted: Some(Arc::from(plan.effects)),
                unattended: true,
            },
            &|_| {},
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < cowork_tests::wait::patience(),
        "never hangs"
    );
    assert_eq!(report.state, RunState::Waiting, "{report:?}");
    assert_eq!(report.failed_step.as_deref(), Some("tell"));
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody was asked");
    let waiting = tasks.list(false).unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool, "mail_probe");
    assert!(
        waiting[0].reason.contains("needs your approval"),
        "{}",
        waiting[0].reason
    );

    // The person resumes the task (and approves it in the window): the chain goes on.
    let outcome = h
        .scheduler
        .resume(&waiting[0].id, Caller::Palette)
        .await
        .unwrap();
    assert!(outcome.result.is_ok());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let went_on = chains
        .continue_after(&waiting[0].id, &outcome.result, &|_| {})
        .await
        .expect("a run waits on that task")
        .unwrap();
    assert_eq!(went_on.state, RunState::Completed, "{went_on:?}");
    assert_eq!(
        ran_ok(&h.scheduler, "mail_probe"),
        1,
        "the mail step ran once"
    );
}

/// How many calls of `tool` ran to an ok end, by the audit log.
fn ran_ok(scheduler: &cowork_core::Scheduler, tool: &str) -> usize {
    scheduler.flush().unwrap();
    scheduler
        .audit()
        .list(&cowork_core::AuditFilter {
            tool: Some(tool.into()),
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .filter(|r| r.record.phase == "final" && r.record.outcome.as_deref() == Some("ok"))
        .count()
}

/// A clock the test moves: the schedule worker sleeps on it like on the real one.
struct TestClock {
    now: Mutex<chrono::DateTime<chrono::Utc>>,
    moved: Arc<tokio::sync::Notify>,
    /// How many times the worker looked at the time (once per wake).
    looks: AtomicUsize,
}

impl TestClock {
    fn at(now: chrono::DateTime<chrono::Utc>) -> Arc<TestClock> {
        Arc::new(TestClock {
            now: Mutex::new(now),
            moved: Arc::default(),
            looks: AtomicUsize::new(0),
        })
    }
    fn advance(&self, by: chrono::TimeDelta) {
        *self.now.lock().unwrap() += by;
        self.moved.notify_waiters();
    }
}

struct Shared(Arc<TestClock>);

impl cowork_app::chains::Clock for Shared {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.looks.fetch_add(1, Ordering::SeqCst);
        *self.0.now.lock().unwrap()
    }
    fn sleep_until(
        &self,
        at: chrono::DateTime<chrono::Utc>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let clock = self.0.clone();
        Box::pin(async move {
            loop {
                let moved = clock.moved.notified();
                if *clock.now.lock().unwrap() >= at {
                    return;
                }
                moved.await;
            }
        })
    }
}

async fn settle<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    cowork_tests::wait::until(what, || {
        std::future::ready(probe().ok_or_else(|| "not yet".to_string()))
    })
    .await
}

/// Schedules under a clock the test moves: a run at its time (what was granted runs, an
/// ungranted step waits for the person as a task), a simulated sleep of three days makes one
/// missed run (not three) or a skipped one, and with a thousand schedules the worker wakes
/// only when one is due.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_fire_at_their_time_handle_a_missed_run_and_sleep_between() {
    use cowork_app::chains::{Missed, ScheduleRunState, Schedules, Target};
    use std::time::Duration as StdDuration;
    let (h, asked) = window();
    let tasks = h.tasks();
    let chains = Arc::new(chains_in(&h, &[("deploy.toml", DEPLOY)]));
    let schedules = Arc::new(Schedules::open(&h.store).unwrap());
    // 07:59 today, in the person's zone.
    let start = chrono::Local::now()
        .date_naive()
        .and_hms_opt(7, 59, 0)
        .unwrap()
        .and_local_timezone(chrono::Local)
        .unwrap()
        .with_timezone(&chrono::Utc);
    let clock = TestClock::at(start);
    let inputs = json!({"target": "site"});
    let plan = chains
        .explain(&chains.get("deploy").unwrap(), &inputs, "schedule:deploy")
        .unwrap();
    let daily = schedules
        .add(
            "deploy",
            "0 8 * * *",
            Target::Chain {
                chain: "deploy".into(),
                inputs: inputs.clone(),
            },
            Missed::RunOnce,
            plan.effects.clone(),
            start,
        )
        .unwrap();
    assert_eq!(daily.next_due, start + chrono::TimeDelta::minutes(1));
    schedules
        .add(
            "skipper",
            "30 8 * * *",
            Target::Chain {
                chain: "deploy".into(),
                inputs: inputs.clone(),
            },
            Missed::Skip,
            vec![],
            start,
        )
        .unwrap();
    let bad = schedules.add(
        "typo",
        "0 8 * *",
        Target::Prompt {
            prompt: "x".into(),
            profile: None,
        },
        Missed::Skip,
        vec![],
        start,
    );
    assert!(bad.unwrap_err().to_string().contains("0 8 * * 1-5"));
    let prompts = Arc::new(AtomicUsize::new(0));
    let counted = prompts.clone();
    let prompt: cowork_app::chains::PromptRunner = Arc::new(move |_, _, _, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Ok(cowork_app::chains::PromptReply {
                text: "done".into(),
                waiting_on: vec![],
            })
        })
    });
    let worker = tokio::spawn(cowork_app::chains::serve(
        schedules.clone(),
        chains.clone(),
        Arc::new(Shared(clock.clone())),
        prompt,
    ));
    tokio::time::sleep(StdDuration::from_millis(200)).await;
    assert!(
        schedules.history(None, 10).unwrap().is_empty(),
        "nothing before 8:00"
    );

    // 8:00: the granted build runs; the mail step, not granted, waits for the person.
    clock.advance(chrono::TimeDelta::seconds(90));
    let run = settle("the 8:00 run to end", || {
        schedules
            .history(Some("deploy"), 1)
            .unwrap()
            .into_iter()
            .find(|r| r.state != ScheduleRunState::Running)
    })
    .await;
    assert_eq!(run.state, ScheduleRunState::Waiting, "{run:?}");
    assert!(!run.missed);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody was asked");
    let waiting = tasks.list(false).unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].tool, "mail_probe");
    assert_eq!(run.waiting_on, [waiting[0].id.clone()], "named in the run");

    // Between runs the worker sleeps, however many schedules there are: moving the clock short
    // of the next time wakes nothing.
    for i in 0..200 {
        schedules
            .add(
                &format!("brief-{i}"),
                "0 3 * * *",
                Target::Prompt {
                    prompt: "summarize my night".into(),
                    profile: None,
                },
                Missed::RunOnce,
                vec![],
                *clock.now.lock().unwrap(),
            )
            .unwrap();
    }
    tokio::time::sleep(StdDuration::from_millis(200)).await;
    let looks = clock.looks.load(Ordering::SeqCst);
    for _ in 0..10 {
        clock.advance(chrono::TimeDelta::seconds(60));
        tokio::time::sleep(StdDuration::from_millis(20)).await;
    }
    assert_eq!(
        clock.looks.load(Ordering::SeqCst),
        looks,
        "the worker woke with nothing due"
    );

    // The computer sleeps three days: one missed run of `deploy` (not three), `skipper`'s
    // missed run skipped and on record.
    clock.advance(chrono::TimeDelta::days(3));
    let missed = settle("the missed run to end", || {
        schedules
            .history(Some("deploy"), 5)
            .unwrap()
            .into_iter()
            .find(|r| r.missed && r.state != ScheduleRunState::Running)
    })
    .await;
    assert_eq!(missed.state, ScheduleRunState::Waiting);
    assert_eq!(schedules.history(Some("deploy"), 10).unwrap().len(), 2);
    let skipped = schedules.history(Some("skipper"), 10).unwrap();
    assert!(
        skipped
            .iter()
            .any(|r| r.state == ScheduleRunState::Skipped && r.missed),
        "{skipped:?}"
    );
    assert!(
        skipped
            .iter()
            .all(|r| r.state != ScheduleRunState::Running && r.state != ScheduleRunState::Completed)
    );
    assert!(
        prompts.load(Ordering::SeqCst) >= 1,
        "the 3:00 prompts ran once each"
    );
    worker.abort();
}

/// A scheduled prompt runs through the agent (the model of Settings), unattended: the call the
/// schedule was granted runs, a call outside the grant becomes a task waiting for the person
/// (nobody is asked, nothing hangs, nothing is denied), and the run is `waiting` on it; once
/// the person resumes and approves it, the run is completed. The run fell due a day ago (the
/// machine was off): it runs once at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_prompt_runs_unattended_through_the_agent_and_waits_for_an_ungranted_call() {
    use chrono::Timelike;
    use cowork_app::chains::{Missed, ScheduleRunState, Target};
    use cowork_app::{App, AppOptions};
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.join("settings.json"),
        // The person asked to be asked before system details are read.
        json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": ""},
               "permissions": {"ask": ["get_system_info"]}})
            .to_string(),
    )
    .unwrap();
    let (approver, asked) = allowing_person();
    let app = App::open(AppOptions {
        home: Some(home.clone()),
        workspace_roots: vec![ws.clone()],
        approver,
        scheduler: cowork_core::SchedulerConfig::default(),
    })
    .unwrap();
    server.push(Turn::tools(
        "",
        &[
            ("a", "create_task", json!({"title": "Review the week"})),
            ("b", "get_system_info", json!({})),
        ],
    ));
    server.push(Turn::text(
        "A task is made; the system details wait for you.",
    ));
    server.push(Turn::text("(unused)"));
    // Due once a day, at this minute yesterday: missed while the machine was off.
    let yesterday = chrono::Local::now() - chrono::TimeDelta::days(1);
    let cron = format!("{} {} * * *", yesterday.minute(), yesterday.hour());
    app.schedules()
        .add(
            "weekly-review",
            &cron,
            Target::Prompt {
                prompt: "make my weekly review".into(),
                profile: None,
            },
            Missed::RunOnce,
            vec![cowork_contract::Effect::TasksWrite],
            (yesterday - chrono::TimeDelta::minutes(1)).with_timezone(&chrono::Utc),
        )
        .unwrap();
    let worker = tokio::spawn(app.schedule_worker());
    let run = settle("the weekly review's run to end", || {
        app.schedules()
            .history(Some("weekly-review"), 5)
            .unwrap()
            .into_iter()
            .find(|r| r.state != ScheduleRunState::Running)
    })
    .await;
    assert_eq!(run.state, ScheduleRunState::Waiting, "{run:?}");
    assert!(run.missed);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody was asked");
    let tasks = app.scheduler().suspensions().unwrap().list(false).unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0].tool, "get_system_info");
    assert_eq!(run.waiting_on, [tasks[0].id.clone()]);
    let titles = app.scheduler().call(cowork_core::CallRequest::new(
        "list_tasks",
        json!({}),
        Caller::Palette,
        "check",
    ));
    let listed = titles.await.result.unwrap();
    assert!(
        serde_json::to_string(&listed.structured)
            .unwrap()
            .contains("Review the week"),
        "the granted call ran: {listed:?}"
    );

    // The person resumes the task and approves it: the run is completed, the call made once.
    let outcome = app
        .scheduler()
        .resume(&tasks[0].id, Caller::Palette)
        .await
        .unwrap();
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(
        app.task_resumed(&tasks[0].id, &outcome.result)
            .await
            .is_none(),
        "no chain"
    );
    let done = app.schedules().history(Some("weekly-review"), 5).unwrap();
    assert_eq!(done.len(), 1, "one run for the missed day: {done:?}");
    assert_eq!(done[0].state, ScheduleRunState::Completed, "{done:?}");
    assert!(done[0].waiting_on.is_empty());
    assert_eq!(
        ran_ok(app.scheduler(), "get_system_info"),
        1,
        "it ran once, when the person said so"
    );
    worker.abort();
}

/// A scheduled prompt runs under its schedule's tool profile: the model is offered only its
/// tools, and a call outside it is denied on record (not held for the person).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_prompt_runs_under_its_schedules_tool_profile() {
    use chrono::Timelike;
    use cowork_app::chains::{Missed, ScheduleRunState};
    use cowork_app::{App, AppOptions};
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.join("settings.json"),
        json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": "",
            "profiles": [{"name": "look only", "tools": ["list_tasks"]}]}})
        .to_string(),
    )
    .unwrap();
    let (approver, asked) = allowing_person();
    let app = App::open(AppOptions {
        home: Some(home.clone()),
        workspace_roots: vec![ws.clone()],
        approver,
        scheduler: cowork_core::SchedulerConfig::default(),
    })
    .unwrap();
    server.push(Turn::tools(
        "",
        &[("a", "create_task", json!({"title": "Sneak in"}))],
    ));
    server.push(Turn::text("I may only look."));
    let yesterday = chrono::Local::now() - chrono::TimeDelta::days(1);
    let cron = format!("{} {} * * *", yesterday.minute(), yesterday.hour());
    app.schedules()
        .add_prompt(
            Some("look"),
            &cron,
            "check my tasks",
            Some("look only"),
            Missed::RunOnce,
            (yesterday - chrono::TimeDelta::minutes(1)).with_timezone(&chrono::Utc),
        )
        .unwrap();
    let worker = tokio::spawn(app.schedule_worker());
    let run = settle("the look schedule's run to end", || {
        app.schedules()
            .history(Some("look"), 5)
            .unwrap()
            .into_iter()
            .find(|r| r.state != ScheduleRunState::Running)
    })
    .await;
    worker.abort();
    assert_eq!(run.state, ScheduleRunState::Completed, "{run:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody was asked");
    let offered: Vec<String> = server.requests()[0].2["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(String::from))
        .collect();
    assert_eq!(offered, ["list_tasks"]);
    app.scheduler().flush().unwrap();
    let rows = app
        .scheduler()
        .audit()
        .list(&cowork_core::AuditFilter {
            tool: Some("create_task".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(
        rows.iter().any(|r| r.record.decision == "deny"
            && r.record
                .error
                .as_deref()
                .unwrap_or_default()
                .contains("«look only»")),
        "{rows:?}"
    );
}

/// A toolpack installed by an earlier process (the window, `cowork toolpack install`), whose
/// server nothing has started in this one: `report` runs as a task and ends with its text.
fn install_tasks_pack(home: &std::path::Path, ws: &std::path::Path) {
    let pack = cowork_tests::mcp::tasks_pack(
        home,
        std::path::Path::new(env!("CARGO_BIN_EXE_tasks-server")),
    );
    install_pack(home, ws, &pack);
}

/// Installs the toolpack folder `pack`, in a process (an app) of its own.
fn install_pack(home: &std::path::Path, ws: &std::path::Path, pack: &std::path::Path) {
    let app = open_app(home, ws);
    let runtime = tokio::runtime::Handle::current();
    let staged = tokio::task::block_in_place(|| {
        runtime.block_on(app.stage_toolpack(&pack.display().to_string(), None))
    })
    .unwrap();
    app.install_toolpack(staged, Default::default(), false)
        .unwrap();
}

/// Adds `prompt` as schedule `name` whose run fell due yesterday (missed: run once), runs the
/// schedule worker until that run ends, and returns it.
async fn run_missed_prompt(
    app: &cowork_app::App,
    name: &str,
    prompt: &str,
) -> cowork_app::chains::ScheduleRun {
    use chrono::Timelike;
    use cowork_app::chains::{Missed, ScheduleRunState};
    let yesterday = chrono::Local::now() - chrono::TimeDelta::days(1);
    let cron = format!("{} {} * * *", yesterday.minute(), yesterday.hour());
    app.schedules()
        .add_prompt(
            Some(name),
            &cron,
            prompt,
            None,
            Missed::RunOnce,
            (yesterday - chrono::TimeDelta::minutes(1)).with_timezone(&chrono::Utc),
        )
        .unwrap();
    let worker = tokio::spawn(app.schedule_worker());
    let run = cowork_tests::wait::until("the scheduled prompt to end", || {
        let runs = app.schedules().history(Some(name), 5).unwrap();
        let ended = runs
            .into_iter()
            .find(|r| r.state != ScheduleRunState::Running);
        std::future::ready(ended.ok_or_else(|| "still running".to_string()))
    })
    .await;
    worker.abort();
    run
}

fn open_app(home: &std::path::Path, ws: &std::path::Path) -> cowork_app::App {
    let (approver, _) = allowing_person();
    cowork_app::App::open(cowork_app::AppOptions {
        home: Some(home.to_path_buf()),
        workspace_roots: vec![ws.to_path_buf()],
        approver,
        scheduler: cowork_core::SchedulerConfig::default(),
    })
    .unwrap()
}

/// Whether `app`'s toolpack `report` ran to its end, on record.
fn report_ran(app: &cowork_app::App) -> usize {
    ran_ok(app.scheduler(), "mcp__tasks__report")
}

/// In a process that started no toolpack (`cowork schedule serve`, `cowork chains run`), a
/// scheduled prompt is offered a pack's tool and calls it, and a chain's step calls one: the
/// servers start for them, through the one function every path uses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_prompt_and_a_chain_reach_a_toolpack_nothing_had_started() {
    use cowork_app::chains::{RunOptions, RunState, ScheduleRunState};
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.join("settings.json"),
        json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": ""},
               "permissions": {"allow": ["mcp__tasks__report"]}})
        .to_string(),
    )
    .unwrap();
    install_tasks_pack(&home, &ws);

    // A scheduled prompt, in a process of its own.
    let app = open_app(&home, &ws);
    assert!(app.mcp_servers().is_empty(), "nothing started yet");
    server.push(Turn::tools(
        "",
        &[("a", "mcp__tasks__report", json!({"seconds": 0.2}))],
    ));
    server.push(Turn::text("The report is written."));
    let run = run_missed_prompt(&app, "report", "write the report").await;
    assert_eq!(run.state, ScheduleRunState::Completed, "{run:?}");
    assert_eq!(report_ran(&app), 1, "the model's call reached the pack");
    drop(app);

    // A chain, in another.
    std::fs::create_dir_all(home.join("chains")).unwrap();
    std::fs::write(
        home.join("chains/weekly.toml"),
        r#"
name = "weekly"
description = "Write the report"

[[steps]]
id = "write"
tool = "mcp__tasks__report"
args = { seconds = 0.2 }
"#,
    )
    .unwrap();
    let app = open_app(&home, &ws);
    assert!(app.mcp_servers().is_empty(), "nothing started yet");
    let chain = app.chains().get("weekly").unwrap();
    let options = RunOptions {
        conversation: "chain-test".into(),
        granted: None,
        unattended: true,
    };
    let report = app
        .chains()
        .run(&chain, &json!({}), &options, &|_| {})
        .await
        .unwrap();
    assert_eq!(report.state, RunState::Completed, "{report:?}");
    assert_eq!(report_ran(&app), 2, "both runs on record");
}

/// A password manager pack's login item, read by a scheduled prompt's model and used by it: the
/// provider never receives the password (the model works with «secret:N»), and the pack's own
/// write gets the real value back from the gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_a_toolpack_returns_reaches_the_model_as_a_placeholder_and_the_pack_gets_it_back()
 {
    use cowork_app::chains::ScheduleRunState;
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let dir = tempfile::tempdir().unwrap();
    let (home, ws) = (dir.path().join("home"), dir.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    let login = ws.join("login.txt");
    let server = ScriptedLlm::start().await;
    // The item's read is allowed whole: the pack's folder grant makes each call also declare
    // a write there, which a rule naming the item alone would not cover.
    let allow = [
        "mcp__vaultpack__item".to_string(),
        format!("mcp__vaultpack__plant({}/**)", ws.display()),
    ];
    std::fs::write(
        home.join("settings.json"),
        json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": ""},
               "permissions": {"allow": allow}})
        .to_string(),
    )
    .unwrap();
    // The adversarial suite's scripted server: `item` returns a login as JSON, `plant` writes.
    let pack = home.join("pack-vault");
    std::fs::create_dir_all(&pack).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("adversarial/hostile-server.js");
    std::fs::copy(script, pack.join("s.js")).unwrap();
    let manifest = json!({"manifest_version": "0.3", "name": "vaultpack", "version": "1.0.0",
        "server": {"type": "node", "entry_point": "s.js",
            "mcp_config": {"command": "node", "args": ["${__dirname}/s.js"]}},
        "_meta": {"app.cowork": {
            "effects": {"item": [{"kind": "sensitive.read", "category": "secrets", "subject": "{item}"}],
                        "plant": [{"kind": "fs.write", "path": "{path}"}]},
            "sandbox": {"write": [ws]}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    install_pack(&home, &ws, &pack);

    let app = open_app(&home, &ws);
    server.push(Turn::tools(
        "",
        &[("a", "mcp__vaultpack__item", json!({"item": "github"}))],
    ));
    // The login's values, in order: the user name «secret:1», the password «secret:2».
    server.push(Turn::tools(
        "",
        &[(
            "b",
            "mcp__vaultpack__plant",
            json!({"path": login, "text": "«secret:1» «secret:2»"}),
        )],
    ));
    server.push(Turn::text("Saved."));
    let prompt = format!("write my github login to {}", login.display());
    let run = run_missed_prompt(&app, "login", &prompt).await;
    app.scheduler().flush().unwrap();
    let rows = app.scheduler().audit().list(&Default::default()).unwrap();
    assert_eq!(run.state, ScheduleRunState::Completed, "{run:?} {rows:?}");
    let password = "hunter2-correct-horse-github";
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    for (_, _, body) in &requests {
        assert!(!body.to_string().contains(password), "{body}");
    }
    assert!(requests[1].2.to_string().contains("«secret:2»"));
    assert_eq!(
        std::fs::read_to_string(&login).unwrap(),
        format!("bob {password}")
    );
}
