//! The approval panel: ten kinds of approval (tasks, a file, three commands from `ls` to a
//! download piped to a shell, a site, a browser, a mail, an invitation, a git hook), each asked
//! in the REAL window in English (light) and in Chinese (dark) — twenty screenshots. A checker
//! reads each modal as the person first sees it: a sentence of what will happen, where (the
//! folder, the site, the people), whether it can be undone, the risk as a word — and no tool
//! id, effect name or JSON above the fold. The sentences go to `approval-panel.json` and the
//! pictures to one contact sheet, `approval-panel.png`.

#[path = "webdriver.rs"]
mod webdriver;

use cowork_tests::llm_server::{ScriptedLlm, Turn};
use serde_json::{Value, json};
use std::path::Path;
use webdriver::{Driver, artifacts, contact_sheet, launch};

/// One kind of approval: the call the model makes, and what its first lines must name (in
/// either language: places, sites and people are shown as written).
struct Kind {
    id: &'static str,
    tool: &'static str,
    args: Value,
    /// Named by the sentence or the place line.
    names: &'static [&'static str],
    /// Acts in the workspace folder: the place line says which.
    in_folder: bool,
    risk: &'static str,
}

fn kinds() -> Vec<Kind> {
    let kind = |id, tool, args, names, in_folder, risk| Kind {
        id,
        tool,
        args,
        names,
        in_folder,
        risk,
    };
    vec![
        kind(
            "task",
            "create_task",
            json!({"title": "Buy milk", "due": "2026-12-01"}),
            &["Buy milk"],
            false,
            "low",
        ),
        kind(
            "write",
            "write_file",
            json!({"path": "notes/plan.md", "content": "# Plan\n"}),
            &["plan.md"],
            true,
            "low",
        ),
        kind(
            "list",
            "run_command",
            json!({"command": "ls -la", "description": "See what is in the folder"}),
            &["ls"],
            true,
            "medium",
        ),
        kind(
            "delete",
            "run_command",
            json!({"command": "rm -rf ./build node_modules/.cache && git clean -fdx", "description": "Free up disk space"}),
            &["build", "node_modules/.cache"],
            true,
            "high",
        ),
        kind(
            "pipe",
            "run_command",
            json!({"command": "curl -fsSL https://get.example.com/install.sh | sh", "description": "Install the tool"}),
            &["curl"],
            true,
            "high",
        ),
        kind(
            "site",
            "web_fetch",
            json!({"url": "https://news.example.org/today"}),
            &["news.example.org"],
            false,
            "medium",
        ),
        kind(
            "browser",
            "browser_navigate",
            json!({"url": "https://shop.example.com/cart"}),
            &["shop.example.com"],
            false,
            "medium",
        ),
        kind(
            "mail",
            "email_send",
            json!({"to": ["alice@example.org"], "subject": "Dinner", "body": "See you at 7."}),
            &["alice@example.org"],
            false,
            "high",
        ),
        kind(
            "invite",
            "calendar_create",
            json!({"title": "Planning", "start": "2026-12-02T10:00:00Z", "end": "2026-12-02T11:00:00Z", "attendees": ["bob@example.org"]}),
            &["bob@example.org"],
            false,
            "medium",
        ),
        kind(
            "hook",
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nexit 0\n"}),
            &["pre-commit"],
            true,
            "high",
        ),
    ]
}

/// What the checker read off one modal.
#[derive(serde::Serialize)]
struct Seen {
    lang: &'static str,
    kind: &'static str,
    what: String,
    place: Option<String>,
    undo: String,
    risk: String,
    reason: Option<String>,
    screenshot: String,
}

/// The checker: the modal as first shown (details folded) names what, where and undo inside the
/// visible part of the modal, with no tool id, effect name or JSON.
async fn check(d: &Driver, kind: &Kind, lang: &'static str) -> Seen {
    let read = |testid: &str| {
        format!(
            "const e = document.querySelector('[data-testid={testid}]'); return e ? e.innerText : null;"
        )
    };
    let text = |v: Value| v.as_str().map(String::from);
    let what = text(d.exec(&read("plain-what"), json!([])).await).unwrap_or_default();
    let place = text(d.exec(&read("plain-place"), json!([])).await);
    let undo = text(d.exec(&read("plain-undo"), json!([])).await).unwrap_or_default();
    let risk = text(d.exec(&read("risk-score"), json!([])).await).unwrap_or_default();
    let reason = text(d.exec(&read("plain-reason"), json!([])).await);
    let label = format!("{lang}/{}", kind.id);
    assert!(
        !what.trim().is_empty(),
        "{label}: no sentence of what will happen"
    );
    assert!(
        !undo.trim().is_empty(),
        "{label}: no line saying whether it can be undone"
    );
    let args = text(d.exec(&read("plain-args"), json!([])).await).unwrap_or_default();
    let first_lines = format!("{what}\n{}\n{args}", place.clone().unwrap_or_default());
    for name in kind.names {
        assert!(
            first_lines.contains(name),
            "{label}: the first lines do not name {name:?}:\n{first_lines}"
        );
    }
    assert_eq!(
        place.is_some(),
        kind.in_folder,
        "{label}: the folder line: {place:?}"
    );
    if lang == "zh-CN" {
        let chinese = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        assert!(
            chinese(&what) && chinese(&undo) && chinese(&risk),
            "{label}: English left in Chinese: {what} / {undo} / {risk}"
        );
        let names = d
            .exec(
                "return [...document.querySelectorAll('[data-testid=plain-args] dt')].map((e) => e.innerText)",
                json!([]),
            )
            .await;
        for name in names
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str())
        {
            assert!(
                chinese(name),
                "{label}: the value named {name:?} in English"
            );
        }
    }
    let level = d
        .exec(
            "return document.querySelector('[data-testid=risk-score]').className",
            json!([]),
        )
        .await;
    assert!(
        level.as_str().unwrap_or("").contains(kind.risk),
        "{label}: risk {level} ({risk}), expected {}",
        kind.risk
    );
    // Above the fold: the modal's visible text with details folded.
    let visible = d
        .exec(
            "const m = document.querySelector('[data-testid=approval-modal]'); const box = m.getBoundingClientRect();
             const inside = (id) => { const e = m.querySelector(`[data-testid=${id}]`); if (!e) return true; const r = e.getBoundingClientRect(); return r.top >= box.top - 1 && r.bottom <= Math.min(box.bottom, innerHeight) + 1; };
             return { text: m.innerText, folded: !m.querySelector('[data-testid=approval-details]'), inside: ['plain-what', 'plain-place', 'plain-undo', 'risk-score'].every(inside) };",
            json!([]),
        )
        .await;
    assert_eq!(visible["folded"], true, "{label}: details open at first");
    assert_eq!(
        visible["inside"], true,
        "{label}: the first lines are not all in view"
    );
    let shown = visible["text"].as_str().unwrap_or_default();
    let kinds_of_effect = [
        "fs.",
        "process.exec",
        "net.fetch",
        "browser.",
        "mail.send",
        "calendar.",
        "tasks.",
    ];
    for raw in [kind.tool, "{\"", "\":"].into_iter().chain(kinds_of_effect) {
        assert!(
            !shown.contains(raw),
            "{label}: {raw:?} shows above the fold:\n{shown}"
        );
    }
    let screenshot = format!("approval-{lang}-{}.png", kind.id);
    d.screenshot(&artifacts().join(&screenshot)).await;
    Seen {
        lang,
        kind: kind.id,
        what,
        place,
        undo,
        risk,
        reason,
        screenshot,
    }
}

/// Asks for each kind in turn, checks the modal, denies it, and waits for the model's answer.
async fn walk(d: &Driver, server: &ScriptedLlm, lang: &'static str, seen: &mut Vec<Seen>) {
    for (i, kind) in kinds().iter().enumerate() {
        let call = format!("{lang}-{i}");
        server.push(Turn::tools("", &[(&call, kind.tool, kind.args.clone())]));
        let done = format!("Noted {lang} {i}.");
        server.push(Turn::text(&done));
        d.fill(
            "[data-testid=chat-input]",
            &format!("please do {} ({lang})", kind.id),
        )
        .await;
        d.click(&d.wait_for("[data-testid=send]").await).await;
        d.wait_for("[data-testid=approval-modal]").await;
        seen.push(check(d, kind, lang).await);
        d.exec(
            "window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))",
            json!([]),
        )
        .await;
        d.wait_for_text(".messages", &done).await;
    }
}

/// A mail account the send can name (its password is never needed: the call is denied).
fn mail_account(home: &Path) {
    let store = cowork_store::Store::open(cowork_store::DataDir::at(home), &[]).unwrap();
    let account = cowork_store::accounts::Account {
        name: "me".into(),
        config: cowork_tests::mail_nowhere(),
    };
    cowork_store::accounts::put(&store.connect().unwrap(), &account).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_approval_says_what_where_and_undo_first_in_both_languages() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join(".git/hooks")).unwrap();
    let server = ScriptedLlm::start().await;
    let tools: Vec<&str> = kinds().iter().map(|k| k.tool).collect();
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::to_string_pretty(&json!({
            // Every kind asks, whatever its score, so that each one is seen.
            "permissions": {"ask": tools},
            "agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": ""}
        }))
        .unwrap(),
    )
    .unwrap();
    mail_account(home.path());
    // A private web data folder: this test switches the language and theme (localStorage).
    let web_data = tempfile::tempdir().unwrap();
    let (_xvfb, _driver, d) = launch(
        home.path(),
        &[
            ("COWORK_WORKSPACE", workspace.path().as_os_str()),
            ("XDG_DATA_HOME", web_data.path().as_os_str()),
        ],
    )
    .await;
    d.wait_for("[data-testid=chat-input]").await;
    let mut seen = vec![];
    d.switch_look("en", "light").await;
    walk(&d, &server, "en", &mut seen).await;
    d.switch_look("zh-CN", "dark").await;
    walk(&d, &server, "zh-CN", &mut seen).await;
    assert_eq!(seen.len(), 20);
    // Nothing denied ran: no task, no file, no hook.
    assert!(!workspace.path().join("notes/plan.md").exists());
    assert!(!workspace.path().join(".git/hooks/pre-commit").exists());
    std::fs::write(
        artifacts().join("approval-panel.json"),
        serde_json::to_string_pretty(&seen).unwrap(),
    )
    .unwrap();
    let pictures: Vec<String> = seen.iter().map(|s| s.screenshot.clone()).collect();
    contact_sheet(&pictures, &artifacts().join("approval-panel.png"), 4);
}

/// One JSON-RPC message to `cowork mcp serve --http` with its token: the session the reply
/// names and its JSON-RPC message.
async fn mcp_post(
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, Value) {
    let bearer = format!("Bearer {token}");
    let (_, session, message) =
        cowork_tests::mcp::post(url, &[("authorization", bearer.as_str())], session, body).await;
    (session, message)
}

/// Another app's model (an MCP client of `cowork mcp serve`) asks for a command: the REAL
/// window shows the modal with the app named above the fold, the person allows it there, and
/// the app's call runs. Screenshot: `approval-from-app.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_apps_ask_is_named_in_the_windows_modal_and_answered_there() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (_xvfb, _driver, d) = launch(home.path(), &[]).await;
    d.wait_for("[data-testid=chat-input]").await;
    // `cowork` is built beside the window's binary (both faces of one install).
    let cowork = Path::new(env!("CARGO_BIN_EXE_cowork-desktop")).with_file_name("cowork");
    let ws = workspace.path().display().to_string();
    let (_serve, url, token) =
        cowork_tests::mcp::serve_http(&cowork, home.path(), &["--workspace", &ws]).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "Window Test App", "version": "1"}}});
    let (session, _) = mcp_post(&url, &token, None, init).await;
    let session = session.expect("a session");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_post(&url, &token, Some(&session), initialized).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_command", "arguments": {"command": "echo relayed-$((40+2))"}}});
    let (u, t, s) = (url.clone(), token.clone(), session.clone());
    let running = tokio::spawn(async move { mcp_post(&u, &t, Some(&s), call).await.1 });

    let asker = cowork_tests::wait::until("the app's ask in the modal", || async {
        if running.is_finished() {
            return Ok(None);
        }
        d.look_for("[data-testid=approval-asker]").await.map(Some)
    })
    .await;
    let Some(asker) = asker else {
        panic!(
            "the call ended with no ask in the window: {}",
            running.await.unwrap()
        );
    };
    assert!(
        d.text(&asker).await.contains("Window-Test-App"),
        "{}",
        d.text(&asker).await
    );
    d.screenshot(&artifacts().join("approval-from-app.png"))
        .await;
    let buttons = d.find_all("[data-choice]").await;
    let mut offered = vec![];
    for b in &buttons {
        offered.push(d.text(b).await);
    }
    assert!(
        !offered.iter().any(|t| t.contains("Always")),
        "an app is never offered a rule for everyone: {offered:?}"
    );
    d.click(&d.wait_for("button[data-choice=once]:not([disabled])").await)
        .await;
    let reply = running.await.unwrap();
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
    assert!(text.contains("relayed-42"), "{reply}");
}

/// A toolpack's server asks the person's model (MCP sampling) during a call the assistant made:
/// the REAL window's modal quotes the server's question as its own and names the model, offers
/// "Allow for this toolpack" and never "Always"; allowed once, the model's answer reaches the
/// server and the chat. Screenshot: `approval-sampling.png`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolpacks_question_to_the_model_is_quoted_in_the_windows_modal() {
    let home = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.path().join("settings.json"),
        json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted-model", "apiKeyEnv": ""}})
            .to_string(),
    )
    .unwrap();
    // Installed as a person would, with the CLI beside the window's binary.
    let cowork = Path::new(env!("CARGO_BIN_EXE_cowork-desktop")).with_file_name("cowork");
    let pack = cowork_tests::mcp::probe_pack(
        home.path(),
        "probe",
        &[],
        json!({"effects": {"ask_model": []}}),
    );
    let installed = std::process::Command::new(&cowork)
        .args(["toolpack", "install", pack.to_str().unwrap(), "--yes"])
        .env("COWORK_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    server.push(Turn::tools(
        "",
        &[(
            "s1",
            "mcp__probe__ask_model",
            json!({"question": "Which is larger, 9.11 or 9.9?"}),
        )],
    ));
    server.push(Turn::text("9.9"));
    server.push(Turn::text("The toolpack heard back."));
    let (_xvfb, _driver, d) = launch(home.path(), &[]).await;
    d.wait_for("[data-testid=chat-input]").await;
    // The window starts packs in the background: the turn waits until the probe runs.
    cowork_tests::wait::until_true("the probe toolpack running", || {
        let out = std::process::Command::new(&cowork)
            .args(["mcp", "servers"])
            .env("COWORK_HOME", home.path())
            .output()
            .unwrap();
        match String::from_utf8_lossy(&out.stdout).contains("running") {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stdout).into_owned()),
        }
    })
    .await;
    d.fill("[data-testid=chat-input]", "Ask the probe").await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    let preview = d.wait_for("[data-testid=sampling-preview]").await;
    let quoted = d.text(&preview).await;
    assert!(quoted.contains("Which is larger, 9.11 or 9.9?"), "{quoted}");
    let what = d.text(&d.wait_for("[data-testid=plain-what]").await).await;
    assert!(
        what.contains("probe") && what.contains("scripted-model"),
        "{what}"
    );
    d.screenshot(&artifacts().join("approval-sampling.png"))
        .await;
    let mut offered = vec![];
    for b in &d.find_all("[data-choice]").await {
        offered.push(d.text(b).await);
    }
    assert!(
        offered.iter().any(|t| t.contains("for this toolpack")),
        "{offered:?}"
    );
    assert!(!offered.iter().any(|t| t.contains("Always")), "{offered:?}");
    d.click(&d.wait_for("button[data-choice=once]:not([disabled])").await)
        .await;
    d.wait_for_text(".messages", "The toolpack heard back.")
        .await;
    // The model heard the server's words alone (a system line and the question), and the
    // chat's next turn carried the server's result with the model's answer.
    let requests = server.requests();
    let sampled = &requests[1].2;
    assert_eq!(
        sampled["messages"].as_array().map(Vec::len),
        Some(2),
        "{sampled}"
    );
    assert!(
        requests[2]
            .2
            .to_string()
            .contains("scripted-model said: 9.9")
    );
}

/// A sub-agent's ask names it and offers a grant for its task alone; its work folds under the
/// task's card; a profile is chosen in the bar (the next turn is offered only its tools) and
/// edited in Settings.
#[tokio::test]
async fn a_sub_agents_ask_names_it_its_work_folds_under_the_task_and_a_profile_is_chosen() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.path().join("settings.json"),
        json!({
            // Writes ask by their score (not by a rule), so a grant is offered.
            "policy": {"allowMax": 1},
            "agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": "",
                "profiles": [{"name": "writer", "tools": ["write_file", "read_file"]}]},
        })
        .to_string(),
    )
    .unwrap();
    server.push(Turn::tools(
        "",
        &[(
            "t1",
            "task",
            json!({"name": "drafter", "prompt": "Write hello.txt saying hi.", "profile": "writer"}),
        )],
    ));
    server.push_for(
        "«drafter»",
        Turn::tools(
            "",
            &[(
                "w1",
                "write_file",
                json!({"path": "hello.txt", "content": "hi"}),
            )],
        ),
    );
    server.push_for("«drafter»", Turn::text("Wrote hello.txt."));
    server.push(Turn::text("The drafter wrote it."));
    let (_xvfb, _driver, d) = launch(
        home.path(),
        &[("COWORK_WORKSPACE", workspace.path().as_os_str())],
    )
    .await;
    d.fill("[data-testid=chat-input]", "Have a helper write hello.txt")
        .await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    let asker = d
        .wait_for_text("[data-testid=approval-asker]", "drafter")
        .await;
    assert!(
        d.text(&asker).await.contains("sub-agent"),
        "{}",
        d.text(&asker).await
    );
    let mut offered = vec![];
    for b in &d.find_all("[data-choice]").await {
        offered.push(d.text(b).await);
    }
    assert!(
        offered.iter().any(|t| t.contains("this sub-agent's task")),
        "{offered:?}"
    );
    d.screenshot(&artifacts().join("approval-sub-agent.png"))
        .await;
    d.click(&d.wait_for("button[data-choice=once]:not([disabled])").await)
        .await;
    d.wait_for_text(".messages", "The drafter wrote it.").await;
    // The sub-agent's work, folded under the task until opened.
    d.click(&d.wait_for("[data-testid=sub-agent-toggle]").await)
        .await;
    let thread = d
        .wait_for_text("[data-testid=sub-agent-thread]", "Wrote hello.txt.")
        .await;
    let shown = d.text(&thread).await;
    assert!(shown.contains("Write hello.txt saying hi."), "{shown}");
    d.wait_for("[data-testid=sub-agent-thread] [data-tool=write_file][data-status=ok]")
        .await;
    d.screenshot(&artifacts().join("sub-agent-work.png")).await;

    // The bar's profile: the next turn is offered the profile's tools only.
    d.exec(
        "const s = document.querySelector('[data-testid=chat-profile]'); s.value = 'writer'; s.dispatchEvent(new Event('change', {bubbles: true}));",
        json!([]),
    )
    .await;
    server.push(Turn::text("Only writing now."));
    cowork_tests::wait::until_true("the profile saved", || {
        let conversations = home.path().join("cowork.db");
        let db = rusqlite::Connection::open(&conversations).map_err(|e| e.to_string())?;
        let settings: String = db
            .query_row(
                "SELECT settings FROM conversations WHERE parent IS NULL",
                [],
                |r| r.get(0),
            )
            .map_err(|e| e.to_string())?;
        match settings.contains("\"profile\":\"writer\"") {
            true => Ok(()),
            false => Err(settings),
        }
    })
    .await;
    d.fill("[data-testid=chat-input]", "Go on").await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    d.wait_for_text(".messages", "Only writing now.").await;
    let last = server.requests().last().unwrap().2.clone();
    let mut tools: Vec<&str> = last["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    tools.sort();
    assert_eq!(tools, ["read_file", "write_file"]);

    // Settings → the profile as the person reads it.
    d.open_view("settings").await;
    d.settings_page("model").await;
    d.wait_for("[data-testid=profiles] [data-testid=profile]")
        .await;
    d.exec(
        "document.querySelector('[data-testid=profiles]').scrollIntoView(); document.querySelector('[data-testid=profile] details').open = true;",
        json!([]),
    )
    .await;
    d.screenshot(&artifacts().join("settings-profiles.png"))
        .await;
}

/// Issue 42's whole scenario, from the installed binaries: a conversation started at the
/// terminal delegates to two sub-agents under narrower profiles, uses an installed skill (one
/// published on npm), a hook denies one call, it goes on with `cowork chat -c`, and then in the
/// window. (Two workers: the CLI runs are waited for while the scripted server answers them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_delegates_uses_a_skill_meets_a_hook_and_goes_on_from_terminal_to_window() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "The launch is on Friday.").unwrap();
    let server = ScriptedLlm::start().await;
    let refuse_secrets =
        r#"input=$(cat); case "$input" in *secret*) echo "no secret tasks" >&2; exit 2;; esac"#;
    std::fs::write(
        home.path().join("settings.json"),
        json!({
            "agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": "",
                "profiles": [{"name": "reader", "effects": ["fs.read"]},
                             {"name": "tasks", "tools": ["create_task", "list_tasks"]}]},
            "hooks": {"PreToolUse": [{"matcher": "create_task", "hooks": [{"type": "command", "command": refuse_secrets}]}]},
        })
        .to_string(),
    )
    .unwrap();
    let cowork = Path::new(env!("CARGO_BIN_EXE_cowork-desktop")).with_file_name("cowork");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&cowork)
            .args(args)
            .env("COWORK_HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{args:?}: {said}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), said)
    };
    let skill = std::path::PathBuf::from(std::env::var("HOME").unwrap())
        .join(".cache/cowork/corpora/skills/ckelsoe-claude-skill-prompt-architect-2.1.4.tgz");
    run(&["skill", "install", skill.to_str().unwrap(), "--yes"]);

    server.push(Turn::tools(
        "",
        &[
            ("s1", "skill", json!({"name": "prompt-architect"})),
            ("t1", "task", json!({"name": "reader", "prompt": "When is the launch? See notes.txt.", "profile": "reader"})),
            ("t2", "task", json!({"name": "planner", "prompt": "Add a task for the launch.", "profile": "tasks"})),
        ],
    ));
    server.push_for(
        "«reader»",
        Turn::tools("", &[("r1", "read_file", json!({"path": "notes.txt"}))]),
    );
    server.push_for("«reader»", Turn::text("The launch is on Friday."));
    server.push_for(
        "«planner»",
        Turn::tools(
            "",
            &[
                ("p1", "create_task", json!({"title": "secret launch plan"})),
                ("p2", "create_task", json!({"title": "Prepare the launch"})),
            ],
        ),
    );
    server.push_for(
        "«planner»",
        Turn::text("One task added; a hook refused the other."),
    );
    server.push(Turn::text("Friday, and the task is added."));
    let ws_arg = ws.path().to_str().unwrap();
    let (_, first) = run(&["--workspace", ws_arg, "chat", "Plan the launch"]);
    assert!(first.contains("Friday, and the task is added."), "{first}");
    assert!(first.contains("[task: done]"), "{first}");
    server.push(Turn::text("Going on from the terminal."));
    let (_, second) = run(&["--workspace", ws_arg, "chat", "-c", "Anything else?"]);
    assert!(second.contains("Going on from the terminal."), "{second}");

    // On record: the skill loaded, each sub-agent's calls as its own, the hook's refusal.
    let (audit, _) = run(&["--json", "audit", "list", "--limit", "200"]);
    let rows: Vec<Value> = serde_json::from_str(&audit).unwrap_or_else(|e| panic!("{e}: {audit}"));
    let row = |tool: &str, decision: &str| {
        rows.iter()
            .find(|r| r["tool"] == tool && r["decision"] == decision && r["phase"] == "final")
            .unwrap_or_else(|| panic!("no {decision} row for {tool}: {audit}"))
            .clone()
    };
    assert_eq!(row("skill", "allow")["outcome"], "ok");
    assert!(
        row("read_file", "allow")["caller"]
            .as_str()
            .unwrap()
            .ends_with("/reader")
    );
    let refused = row("create_task", "deny");
    assert!(
        refused["caller"].as_str().unwrap().ends_with("/planner"),
        "{refused}"
    );
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("no secret tasks"),
        "{refused}"
    );
    let reader_tools = server
        .requests()
        .iter()
        .find(|(_, _, b)| b.to_string().contains("«reader»"))
        .map(|(_, _, b)| b["tools"].to_string())
        .unwrap();
    assert!(
        !reader_tools.contains("create_task") && !reader_tools.contains("\"task\""),
        "{reader_tools}"
    );

    // The same conversation, in the window: its turns are there and it goes on.
    server.push(Turn::text("And now in the window."));
    let (_xvfb, _driver, d) =
        launch(home.path(), &[("COWORK_WORKSPACE", ws.path().as_os_str())]).await;
    d.click(&d.wait_for("[data-testid=conversation] button.link").await)
        .await;
    d.wait_for_text(".messages", "Going on from the terminal.")
        .await;
    d.wait_for("[data-testid=sub-agent-toggle]").await;
    d.fill("[data-testid=chat-input]", "And in the window?")
        .await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    d.wait_for_text(".messages", "And now in the window.").await;
    let last = server.requests().last().unwrap().2.to_string();
    assert!(
        last.contains("Plan the launch")
            && last.contains("Anything else?")
            && last.contains("And in the window?"),
        "{last}"
    );
    d.screenshot(&artifacts().join("terminal-to-window.png"))
        .await;
}
