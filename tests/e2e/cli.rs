//! The `cowork` binary as a person (or a script) uses it: real processes on a real data dir.

mod house;

use cowork_tests::{output_text, run_cowork};
use std::path::Path;
use std::process::Output;

fn cowork(home: &Path, args: &[&str]) -> Output {
    run_cowork(env!("CARGO_BIN_EXE_cowork"), home, args, None)
}

fn cowork_with_stdin(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    run_cowork(env!("CARGO_BIN_EXE_cowork"), home, args, stdin)
}

fn text(out: &Output) -> String {
    output_text(out)
}

/// What every model is shown — names, descriptions, schemas, annotations, declared effects,
/// aliases, timeouts — changes only when someone means it to: a refactor that moves a tool's
/// declaration must leave `tests/data/tool-specs.json` as it is. After a deliberate change:
/// `COWORK_WRITE_SPECS=1 cargo test -p cowork-cli --test cli tool_definitions`.
#[test]
fn tool_definitions_change_only_on_purpose() {
    let home = tempfile::tempdir().unwrap();
    let out = cowork(home.path(), &["--json", "tools", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = String::from_utf8(out.stdout).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/tool-specs.json");
    if std::env::var_os("COWORK_WRITE_SPECS").is_some() {
        std::fs::write(&path, &listed).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        listed == expected,
        "the tool definitions changed; if that was meant, regenerate tests/data/tool-specs.json: COWORK_WRITE_SPECS=1 cargo test -p cowork-cli --test cli tool_definitions"
    );
}

/// Every tool Cowork ships has a Chinese title in the window (`ui/src/i18n.ts`'s
/// `zhToolTitles`): a tool added without one would show its English title in the Chinese window.
#[test]
fn every_shipped_tool_has_a_chinese_title() {
    let specs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/tool-specs.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let i18n =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/i18n.ts"))
            .unwrap();
    let table = i18n
        .split("const zhToolTitles")
        .nth(1)
        .and_then(|rest| rest.split("};").next())
        .expect("i18n.ts has zhToolTitles");
    let missing: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["spec"]["name"].as_str())
        .filter(|name| !table.contains(&format!(" {name}: ")))
        .collect();
    assert!(
        missing.is_empty(),
        "no Chinese title in ui/src/i18n.ts for {missing:?}"
    );
}

#[test]
fn tools_list_show_search_and_export() {
    let home = tempfile::tempdir().unwrap();
    let out = cowork(home.path(), &["tools", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    let listing = text(&out);
    for tool in [
        "create_task",
        "list_tasks",
        "update_task",
        "quick_note",
        "get_system_info",
    ] {
        let line = listing
            .lines()
            .find(|l| l.starts_with(tool))
            .unwrap_or_else(|| panic!("{tool} missing:\n{listing}"));
        assert!(line.contains("builtin"), "{line}");
    }
    let json: serde_json::Value = serde_json::from_slice(
        &cowork(
            home.path(),
            &["tools", "list", "--json", "--category", "tasks"],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(json.as_array().unwrap().len(), 3);

    let show = text(&cowork(home.path(), &["tools", "show", "create_task"]));
    assert!(
        show.contains("effects: tasks.write") && show.contains("\"title\""),
        "{show}"
    );
    let search = text(&cowork(home.path(), &["tools", "search", "task +update"]));
    assert!(
        search.lines().next().unwrap().contains("update_task"),
        "{search}"
    );
    let missing = cowork(home.path(), &["tools", "show", "create_tsk"]);
    assert!(!missing.status.success() && text(&missing).contains("did you mean create_task"));

    let anthropic: serde_json::Value =
        serde_json::from_slice(&cowork(home.path(), &["tools", "export"]).stdout).unwrap();
    assert!(
        anthropic
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "create_task" && t["input_schema"]["type"] == "object")
    );
    let openai: serde_json::Value = serde_json::from_slice(
        &cowork(home.path(), &["tools", "export", "--format", "openai"]).stdout,
    )
    .unwrap();
    assert!(
        openai
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "list_tasks")
    );
}

#[test]
fn calls_explain_rules_and_terminal_approval() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let created = cowork(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            r#"{"title": "Buy milk", "due": "2026-11-23"}"#,
        ],
    );
    assert!(created.status.success(), "{}", text(&created));
    assert!(text(&created).contains("Created task #1: Buy milk (due 2026-11-23)"));

    let explain = text(&cowork(
        h,
        &[
            "policy",
            "explain",
            "create_task",
            "--args",
            r#"{"title": "x"}"#,
        ],
    ));
    assert!(
        explain.contains("ALLOW")
            && explain.contains("risk 2/10")
            && explain.contains("+2 changes tasks"),
        "{explain}"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &cowork(
            h,
            &[
                "policy",
                "explain",
                "create_task",
                "--json",
                "--args",
                r#"{"title": "x"}"#,
            ],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(json["review"]["decision"], "allow");
    assert_eq!(json["review"]["score"], 2);

    // An ask rule: piped stdin is nobody at a terminal → denied (exit 3) with the fix named.
    assert!(
        cowork(h, &["policy", "rules", "add", "ask", "create_task"])
            .status
            .success()
    );
    let rules = text(&cowork(h, &["policy", "rules", "list"]));
    assert!(
        rules.lines().any(|l| l.starts_with("ask")
            && l.contains("create_task")
            && l.contains("user settings")),
        "{rules}"
    );
    let denied = cowork(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            r#"{"title": "Sneaky"}"#,
        ],
    );
    assert_eq!(denied.status.code(), Some(3), "{}", text(&denied));
    assert!(
        text(&denied).contains("not allowed: ask rule `create_task`"),
        "{}",
        text(&denied)
    );

    // A person answering at the prompt: "o" allows once; the prompt shows risk and reasons.
    let approved = cowork_with_stdin(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            r#"{"title": "Approved"}"#,
        ],
        Some("o\n"),
    );
    assert!(approved.status.success(), "{}", text(&approved));
    let prompt = String::from_utf8_lossy(&approved.stderr);
    assert!(
        prompt.contains("risk 2/10") && prompt.contains("[o]nce") && prompt.contains("[d]eny"),
        "{prompt}"
    );
    // A stray Enter is a denial.
    let stray = cowork_with_stdin(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            r#"{"title": "Stray"}"#,
        ],
        Some("\n"),
    );
    assert_eq!(stray.status.code(), Some(3));

    assert!(
        cowork(h, &["policy", "rules", "remove", "create_task"])
            .status
            .success()
    );
    let listed = text(&cowork(h, &["tools", "call", "list_tasks"]));
    assert!(
        listed.contains("Buy milk")
            && listed.contains("Approved")
            && !listed.contains("Sneaky")
            && !listed.contains("Stray"),
        "{listed}"
    );

    let bad = cowork(h, &["tools", "call", "create_task", "--args", "{title: x}"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad).contains("not valid JSON") && text(&bad).contains("--args '{\"title\""),
        "{}",
        text(&bad)
    );
    // Secrets reach neither the database nor the logs, even in a rejected call.
    let secret = "hunter2-f00dcafe";
    let rejected = cowork(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            &format!(r#"{{"title": "x", "password": "{secret}"}}"#),
        ],
    );
    assert_eq!(rejected.status.code(), Some(2), "invalid arguments exit 2");
    let rejected = cowork(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            &format!(r#"{{"title": {{"password": "{secret}"}}}}"#),
        ],
    );
    assert_eq!(rejected.status.code(), Some(2));
    for entry in std::fs::read_dir(h)
        .unwrap()
        .chain(std::fs::read_dir(h.join("logs")).unwrap())
    {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret),
                "the secret reached {}",
                path.display()
            );
        }
    }

    let bad_rule = cowork(
        h,
        &["policy", "rules", "add", "allow", "run_command(git status"],
    );
    assert!(!bad_rule.status.success() && text(&bad_rule).contains("closing parenthesis"));

    assert!(text(&cowork(h, &["policy", "mode", "plan"])).contains("mode: plan"));
    let blocked = cowork(
        h,
        &[
            "tools",
            "call",
            "create_task",
            "--args",
            r#"{"title": "in plan mode"}"#,
        ],
    );
    assert_eq!(blocked.status.code(), Some(3));
    assert!(text(&blocked).contains("plan mode"));
    cowork(h, &["policy", "mode", "normal"]);

    let verify = cowork(h, &["audit", "verify"]);
    assert!(
        verify.status.success() && text(&verify).contains("chain intact"),
        "{}",
        text(&verify)
    );
    let export = cowork(h, &["audit", "export", "--jsonl"]);
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.len() >= 8);
    assert!(rows.iter().all(|r| r["hash"].as_str().unwrap().len() == 64));
    assert!(
        rows.iter()
            .any(|r| r["tool"] == "create_task" && r["approved_by"] == "terminal: once")
    );
}

/// Copies a data dir with a populated log, tampers with the copy's SQLite file, and checks that
/// `cowork audit verify` fails naming the row.
#[test]
fn audit_verify_detects_edits_deletions_and_reordering() {
    let home = tempfile::tempdir().unwrap();
    for i in 0..6 {
        let out = cowork(
            home.path(),
            &[
                "tools",
                "call",
                "create_task",
                "--args",
                &format!(r#"{{"title": "task {i}"}}"#),
            ],
        );
        assert!(out.status.success());
    }
    assert!(cowork(home.path(), &["audit", "verify"]).status.success());

    let tamper = |name: &str, sql: &str, expect: &str| {
        let copy = tempfile::tempdir().unwrap();
        for file in ["cowork.db", "cowork.db-wal", "cowork.db-shm"] {
            let from = home.path().join(file);
            if from.exists() {
                std::fs::copy(&from, copy.path().join(file)).unwrap();
            }
        }
        let conn = rusqlite::Connection::open(copy.path().join("cowork.db")).unwrap();
        // An attacker with the file can drop the append-only triggers; the chain still tells.
        conn.execute_batch("DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;")
            .unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let out = cowork(copy.path(), &["audit", "verify"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: verify must fail\n{}",
            text(&out)
        );
        assert!(
            text(&out).contains(expect),
            "{name}: expected {expect:?} in\n{}",
            text(&out)
        );
    };
    tamper(
        "edit",
        "UPDATE audit_log SET args = '{\"title\":\"harmless\"}' WHERE seq = 4",
        "row 4: contents do not match its hash (edited)",
    );
    tamper(
        "delete",
        "DELETE FROM audit_log WHERE seq = 5",
        "rows 5..5 are missing (deleted)",
    );
    tamper(
        "reorder",
        "UPDATE audit_log SET seq = -1 WHERE seq = 3; UPDATE audit_log SET seq = 3 WHERE seq = 6; UPDATE audit_log SET seq = 6 WHERE seq = -1;",
        "row 3: does not link",
    );
    tamper(
        "truncate",
        "DELETE FROM audit_log WHERE seq >= 11",
        "rows 11..12 at the end are missing",
    );
    tamper(
        "edit approver",
        "UPDATE audit_log SET approved_by = 'terminal: once' WHERE seq = 2",
        "row 2: contents do not match",
    );
}

/// `cowork voice transcribe` reads a file in the workspace aloud into text; outside it, the
/// policy refuses (a file is read through the same gate as every tool).
#[test]
fn voice_transcribe_from_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let raw = ws.path().join("raw.wav");
    let spoken = std::process::Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "140", "-w"])
        .arg(&raw)
        .arg("add milk and bread to my shopping list")
        .status()
        .expect("espeak-ng (tests/setup.sh installs it)");
    assert!(spoken.success());
    let ws_arg = ws.path().to_str().unwrap();
    let out = cowork(
        home.path(),
        &["--workspace", ws_arg, "voice", "transcribe", "raw.wav"],
    );
    let said = text(&out).to_lowercase();
    assert!(out.status.success(), "{said}");
    for word in ["milk", "bread", "list"] {
        assert!(said.contains(word), "{word} not heard in {said:?}");
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("x.wav");
    std::fs::copy(&raw, &outside).unwrap();
    let refused = cowork(
        home.path(),
        &[
            "--workspace",
            ws_arg,
            "voice",
            "transcribe",
            outside.to_str().unwrap(),
        ],
    );
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("outside the workspace"),
        "{}",
        text(&refused)
    );
}

/// `ask_user` at the terminal: the choices are shown (escaped), several can be picked, and the
/// answer comes back as data; with nobody at the terminal the task waits (exit 4) for
/// `cowork tasks resume`, which asks again.
#[test]
fn ask_user_at_the_terminal_and_waiting_when_nobody_is_there() {
    let home = tempfile::tempdir().unwrap();
    let args = r#"{"questions": [{"question": "Which meals?\u001b[2J", "options": [{"label": "breakfast"}, {"label": "dinner"}], "multiSelect": true}]}"#;
    let out = cowork_with_stdin(
        home.path(),
        &["tools", "call", "ask_user", "--json", "--args", args],
        Some("y\nbreakfast, dinner\nno nuts\n"),
    );
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("breakfast / dinner, comma-separated"),
        "the choices are shown: {all}"
    );
    assert!(!all.contains('\u{1b}'), "escaped: {all}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let answer = &json["output"]["structured"]["answers"][0];
    assert_eq!(
        answer["selected"],
        serde_json::json!(["breakfast", "dinner"])
    );
    assert_eq!(answer["text"], "no nuts");

    // Nobody at the terminal: the task waits, named by its question.
    let out = cowork(home.path(), &["tools", "call", "ask_user", "--args", args]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let listed = text(&cowork(home.path(), &["tasks", "suspended"]));
    assert!(
        listed.contains("A question for you: Which meals?"),
        "{listed}"
    );
}

/// A chain killed with -9 mid-step is found interrupted; resuming never runs a step twice: the
/// finished step keeps its result, the step that may have acted (its audit has the intent, no
/// outcome) waits for the person's word, and `--skip` goes on with the rest.
#[test]
fn a_chain_killed_mid_step_is_interrupted_and_resumes_without_repeating_a_step() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws_arg = ws.path().to_str().unwrap();
    std::fs::create_dir_all(home.path().join("chains")).unwrap();
    std::fs::write(
        home.path().join("chains/slow.toml"),
        r#"
name = "slow"
description = "A task, a long command, a task"

[[steps]]
id = "first"
tool = "create_task"
args = { title = "first" }

[[steps]]
id = "wait"
tool = "run_command"
args = { command = "sleep 20" }

[[steps]]
id = "last"
tool = "create_task"
args = { title = "last" }
"#,
    )
    .unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"permissions": {"allow": ["run_command(sleep 20)"]}}"#,
    )
    .unwrap();
    let listed = text(&cowork(home.path(), &["chains", "list"]));
    assert!(
        listed.contains("slow  A task, a long command, a task (3 steps)"),
        "{listed}"
    );

    let mut running = std::process::Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(["--workspace", ws_arg, "chains", "run", "slow"])
        .env("COWORK_HOME", home.path())
        .env_remove("COWORK_APPROVE_FROM_STDIN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it while the command runs (its intent is on record, its outcome is not).
    let db = home.path().join("cowork.db");
    let started = std::time::Instant::now();
    loop {
        let intents: i64 = rusqlite::Connection::open(&db)
            .ok()
            .and_then(|c| {
                c.query_row(
                    "SELECT count(*) FROM audit_log WHERE tool = 'run_command' AND phase = 'intent'",
                    [],
                    |r| r.get(0),
                )
                .ok()
            })
            .unwrap_or(0);
        if intents == 1 {
            break;
        }
        assert!(
            started.elapsed() < cowork_tests::wait::patience(),
            "the chain never reached its second step"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    running.kill().unwrap();
    running.wait().unwrap();

    let runs: serde_json::Value =
        serde_json::from_slice(&cowork(home.path(), &["--json", "chains", "runs"]).stdout).unwrap();
    assert_eq!(runs[0]["state"], "interrupted", "{runs}");
    let run = runs[0]["id"].as_str().unwrap().to_string();

    let refused = cowork(
        home.path(),
        &["--workspace", ws_arg, "chains", "resume", &run],
    );
    let said = text(&refused);
    assert!(!refused.status.success());
    assert!(
        said.contains("\"wait\"")
            && said.contains("--skip wait")
            && said.contains("may already have acted"),
        "{said}"
    );
    let resumed = cowork(
        home.path(),
        &[
            "--workspace",
            ws_arg,
            "chains",
            "resume",
            &run,
            "--skip",
            "wait",
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed));

    // Each task made once; the audit agrees.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let titles: Vec<String> = conn
        .prepare("SELECT title FROM tasks ORDER BY title")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(titles, ["first", "last"]);
    let made: i64 = conn
        .query_row(
            "SELECT count(*) FROM audit_log WHERE tool = 'create_task' AND phase = 'final' AND caller = 'chain'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(made, 2);
}

/// `cowork doctor` from the terminal: it answers before the app opens (a settings file the app
/// would refuse is itself the finding), and its exit code says whether something the person set
/// up does not work.
#[test]
fn doctor_exits_non_zero_when_what_the_person_set_up_does_not_work() {
    let home = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!(
        "http://127.0.0.1:{}/v1",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let agent = serde_json::json!({"agent": {"provider": "openai", "baseUrl": base, "model": "m", "apiKeyEnv": ""}});
    std::fs::write(home.path().join("settings.json"), agent.to_string()).unwrap();
    let out = cowork(home.path(), &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let model = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["capability"] == "model")
        .unwrap();
    assert_eq!(model["health"], "missing", "{model}");
    assert!(model["fix"].as_str().unwrap().contains("Settings → Model"));

    std::fs::write(home.path().join("settings.json"), "{ not json").unwrap();
    let out = cowork(home.path(), &["doctor"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("MISS  Your data") && said.contains("settings.json"),
        "{said}"
    );
}

/// `cowork assets`: what each asset costs before anything is fetched, a fetch from a mirror folder
/// (the real archives run-all kept) with a progress line, and a clear error for a name that is
/// not in the manifest. Answers before the app opens, like the doctor.
#[test]
fn assets_say_their_cost_then_come_from_a_mirror_with_progress() {
    let home = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let kept = cowork_assets::cache_root()
        .unwrap()
        .join("cowork/downloads");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_cowork"))
            .args(args)
            .env("COWORK_HOME", home.path())
            .env("XDG_CACHE_HOME", cache.path())
            .output()
            .unwrap()
    };
    let listed = output_text(&run(&["assets", "list"]));
    assert!(
        listed.contains("whisper-tiny-en") && listed.contains("download 72 MB"),
        "{listed}"
    );

    let fetched = run(&[
        "assets",
        "fetch",
        "whisper-tiny-en",
        "--mirror",
        kept.to_str().unwrap(),
    ]);
    let said = output_text(&fetched);
    assert!(fetched.status.success(), "{said}");
    assert!(
        said.contains("making ggml-tiny.en.bin") && said.contains("whisper-tiny-en: ready"),
        "{said}"
    );
    let listed = output_text(&run(&["assets", "list"]));
    let row = listed
        .lines()
        .find(|l| l.starts_with("whisper-tiny-en"))
        .unwrap();
    assert!(row.contains(" here "), "{listed}");
    let again = output_text(&run(&["assets", "fetch", "whisper-tiny-en"]));
    assert!(
        !again.contains("making"),
        "a present asset is not made again: {again}"
    );

    let unknown = run(&["assets", "fetch", "gpt-5"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(output_text(&unknown).contains("no asset named “gpt-5” (see `cowork assets list`)"));
}

/// `cowork calendar`: add, list, free time, export and import, accounts — each a reviewed,
/// audited tool call — and a daily series that starts at a time the clock change skips.
#[test]
fn the_calendar_from_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // Files are read and written in the workspace the command names (Cowork's own data
    // folder is not one: writing there is always asked).
    let work = tempfile::tempdir().unwrap();
    let ws = work.path().to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = cowork(
            h,
            &[&["--workspace", ws, "--json", "calendar"], args].concat(),
        );
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let berlin = ["--timezone", "Europe/Berlin"];
    let free_on_dec_3 = || {
        let day = [
            "free",
            "--from",
            "2026-12-03",
            "--to",
            "2026-12-04",
            "--minutes",
            "60",
        ];
        json(&[&day[..], &berlin].concat())
    };
    let added = json(
        &[
            &[
                "add",
                "Dentist",
                "2026-12-03T10:00",
                "--location",
                "Main St",
            ][..],
            &berlin,
        ]
        .concat(),
    );
    assert_eq!(added["ok"], true, "{added}");
    let day = json(&[&["list", "--from", "2026-12-03"][..], &berlin].concat());
    let events = &day["output"]["structured"]["events"];
    assert_eq!(events[0]["title"], "Dentist", "{day}");
    assert_eq!(events[0]["start"], "2026-12-03T10:00:00+01:00", "{day}");
    let free = free_on_dec_3();
    let slots = free["output"]["structured"]["slots"]
        .as_array()
        .unwrap()
        .clone();
    let starts: Vec<&str> = slots.iter().map(|s| s["start"].as_str().unwrap()).collect();
    assert_eq!(
        starts,
        ["2026-12-03T09:00:00+01:00", "2026-12-03T11:00:00+01:00"],
        "{free}"
    );

    // Starts at 02:30 on the night Berlin skips 02:00–03:00: 03:30 that night, 02:30 after.
    json(
        &[
            &["add", "Night", "2026-03-29T02:30", "--repeat", "FREQ=DAILY"][..],
            &berlin,
        ]
        .concat(),
    );
    let nights = json(
        &[
            &[
                "list",
                "--from",
                "2026-03-29",
                "--to",
                "2026-03-31",
                "--query",
                "Night",
            ][..],
            &berlin,
        ]
        .concat(),
    );
    let starts: Vec<String> = nights["output"]["structured"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["start"].as_str().unwrap(),
                e["end"].as_str().unwrap()
            )
        })
        .collect();
    // An hour long each, the first too (its default end is an hour after 03:30).
    assert_eq!(
        starts,
        [
            "2026-03-29T03:30:00+02:00 2026-03-29T04:30:00+02:00",
            "2026-03-30T02:30:00+02:00 2026-03-30T03:30:00+02:00"
        ],
        "{nights}"
    );

    // Out to a file (named from where the command runs) and into another Cowork.
    let file = work.path().join("out.ics");
    json(&["export", file.to_str().unwrap()]);
    let other = tempfile::tempdir().unwrap();
    let imported = cowork(
        other.path(),
        &[
            "--workspace",
            ws,
            "--json",
            "calendar",
            "import",
            file.to_str().unwrap(),
        ],
    );
    let imported: serde_json::Value = serde_json::from_slice(&imported.stdout).unwrap();
    assert_eq!(
        imported["output"]["structured"]["imported"], 2,
        "{imported}"
    );
    let accounts = json(&["accounts"]);
    assert_eq!(
        accounts["output"]["structured"]["calendars"][0]["id"], "local",
        "{accounts}"
    );
    // Cancelled events and instances are shown as such and keep no time busy.
    let called_off = work.path().join("off.ics");
    std::fs::write(&called_off, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n\
        BEGIN:VEVENT\r\nUID:off\r\nDTSTART:20261203T130000Z\r\nDURATION:PT1H\r\nSTATUS:Cancelled\r\nSUMMARY:Off\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:weekly\r\nDTSTART:20261126T140000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:Sync\r\nEND:VEVENT\r\n\
        BEGIN:VEVENT\r\nUID:weekly\r\nRECURRENCE-ID:20261203T140000Z\r\nDTSTART:20261203T140000Z\r\nDURATION:PT1H\r\nSTATUS:CANCELLED\r\nSUMMARY:Sync\r\nEND:VEVENT\r\n\
        END:VCALENDAR\r\n").unwrap();
    json(&["import", called_off.to_str().unwrap()]);
    let day = json(&[&["list", "--from", "2026-12-03"][..], &berlin].concat());
    let shown: Vec<(String, bool)> = day["output"]["structured"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["title"].as_str().unwrap().to_string(),
                e["cancelled"] == true,
            )
        })
        .collect();
    let want = [
        ("Night", false),
        ("Dentist", false),
        ("Off", true),
        ("Sync", true),
    ];
    let want = want.map(|(t, c)| (t.to_string(), c));
    assert_eq!(shown, want, "{day}");
    let again = free_on_dec_3();
    assert_eq!(
        again["output"]["structured"]["slots"], free["output"]["structured"]["slots"],
        "{again}"
    );
    // The words a person reads, without --json.
    let listed = text(&cowork(
        h,
        &[
            "calendar",
            "list",
            "--from",
            "2026-12-03",
            "--timezone",
            "Europe/Berlin",
        ],
    ));
    assert!(
        listed.contains("Dentist") && listed.contains("Main St"),
        "{listed}"
    );

    // The dentist was added by mistake: its number from the history, then taken back.
    let changes = json(&["changes"]);
    let dentist = changes["output"]["structured"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "Dentist")
        .cloned()
        .unwrap_or_else(|| panic!("{changes}"));
    assert_eq!(dentist["action"], "created");
    let id = dentist["id"].to_string();
    // Taking back a creation removes the event: it asks, and says it can be undone in turn.
    let refused = cowork(h, &["calendar", "undo", &id]);
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused));
    let undone = cowork_with_stdin(h, &["calendar", "undo", &id], Some("o\n"));
    let prompt = String::from_utf8_lossy(&undone.stderr);
    assert!(
        prompt.contains("Cowork keeps the earlier version"),
        "{prompt}"
    );
    let undone = text(&undone);
    assert!(
        undone.contains(&format!("Took back change #{id}")),
        "{undone}"
    );
    let day = json(&[&["list", "--from", "2026-12-03"][..], &berlin].concat());
    assert!(!day.to_string().contains("Dentist"), "{day}");
    let listed = text(&cowork(h, &["calendar", "changes", "--limit", "1"]));
    assert!(listed.contains(&format!("took back #{id}")), "{listed}");
}

/// An organisation's managed settings (`/etc/cowork/managed-settings.json`, here one more file
/// named by COWORK_MANAGED_SETTINGS): its rules and mode ceiling apply, are shown as the
/// organisation's, and the person can neither remove them nor choose a wider mode.
#[test]
fn a_managed_policy_is_shown_as_the_organisations_and_cannot_be_loosened() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let managed = dir.path().join("managed-settings.json");
    std::fs::write(
        &managed,
        r#"{"permissions": {"deny": ["create_task"], "modeCeiling": "normal"}}"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cowork"))
            .args(args)
            .env("COWORK_HOME", &home)
            .env("COWORK_MANAGED_SETTINGS", &managed)
            .env_remove("COWORK_APPROVE_FROM_STDIN")
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    // Only a file only the administrator can write is the organisation's.
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata(&managed).unwrap().uid() != 0 {
        let (_, said) = run(&["policy", "rules", "list"]);
        assert!(said.contains("must be owned by root"), "{said}");
        return;
    }
    let (code, said) = run(&["policy", "mode", "accept-edits"]);
    assert_ne!(code, Some(0), "{said}");
    assert!(
        said.contains("wider than your organisation allows"),
        "{said}"
    );
    assert!(said.contains("managed-settings.json"), "{said}");
    let (_, said) = run(&["policy", "mode"]);
    assert!(
        said.contains("mode: normal") && said.contains("mode ceiling: normal"),
        "{said}"
    );

    // The person's allow rule does not loosen the organisation's deny.
    let (code, said) = run(&["policy", "rules", "add", "allow", "create_task"]);
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = run(&[
        "tools",
        "call",
        "create_task",
        "--args",
        r#"{"title": "x"}"#,
    ]);
    assert_eq!(code, Some(3), "{said}");
    let (_, said) = run(&[
        "policy",
        "explain",
        "create_task",
        "--args",
        r#"{"title": "x"}"#,
    ]);
    assert!(
        said.contains("DENY") && said.contains("your organisation (managed)"),
        "{said}"
    );
    assert!(said.contains("managed by your organisation"), "{said}");
    let (_, said) = run(&["policy", "rules", "list"]);
    assert!(said.contains("your organisation (managed)"), "{said}");

    // The person's own grants are listed in one place and can be taken back; the
    // organisation's rule by the same text cannot.
    let (_, said) = run(&["policy", "grants"]);
    assert!(
        said.contains("create_task") && said.contains("always"),
        "{said}"
    );
    assert!(
        !said.contains("managed"),
        "the organisation's rules are not the person's grants: {said}"
    );
    let (code, said) = run(&["policy", "grants", "revoke", "create_task"]);
    assert_eq!(code, Some(0), "{said}");
    let (_, said) = run(&["policy", "grants"]);
    assert!(said.contains("no standing permissions"), "{said}");
    let (code, said) = run(&["policy", "rules", "remove", "create_task"]);
    assert_ne!(code, Some(0), "{said}");
    assert!(said.contains("set by your organisation"), "{said}");

    // One anyone else could write is the person's own, not the organisation's: not applied.
    let mut perms = std::fs::metadata(&managed).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o666);
    std::fs::set_permissions(&managed, perms).unwrap();
    let (code, said) = run(&["policy", "mode", "accept-edits"]);
    assert_eq!(code, Some(0), "{said}");
    let (_, said) = run(&["policy", "rules", "list"]);
    assert!(said.contains("must be owned by root"), "{said}");
    run(&["policy", "mode", "normal"]);
    let mut perms = std::fs::metadata(&managed).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o644);
    std::fs::set_permissions(&managed, perms).unwrap();

    // A managed file that cannot be read stops Cowork instead of running without it.
    std::fs::write(&managed, "{not json").unwrap();
    let (code, said) = run(&["policy", "mode"]);
    assert_ne!(code, Some(0), "{said}");
    assert!(said.contains("managed-settings.json"), "{said}");
}

/// `cowork chat`: one turn through the agent from the command line, in the window's
/// conversation store. The answer streams to stdout; `-c` goes on with the latest conversation
/// (the model is sent what came before); `--output json` and `stream-json` print what scripts
/// read; a call the model asks for is reviewed and audited as in the window, and with no
/// terminal to ask at, a call that would ask is refused (the model hears why).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_answers_goes_on_with_c_and_prints_json() {
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let home = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::json!({"policy": {"allowMax": 1},
            "agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": "",
                "profiles": [{"name": "reading", "effects": ["fs.read", "tasks.read"]}]}})
        .to_string(),
    )
    .unwrap();
    server.push(Turn::text("Hello from the model."));
    server.push(Turn::tools(
        "",
        &[(
            "call_1",
            "create_task",
            serde_json::json!({"title": "Renew passport"}),
        )],
    ));
    server.push(Turn::text("I could not add it."));
    server.push(Turn::text("Still here."));
    let home_path = home.path().to_path_buf();
    let run = move |args: Vec<&'static str>| {
        let home = home_path.clone();
        tokio::task::spawn_blocking(move || cowork(&home, &args))
    };

    let first = run(vec!["chat", "say hello"]).await.unwrap();
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        "Hello from the model."
    );

    // Goes on: the model is sent the first turn too. The call asks (score 2 > allowMax 1) and,
    // with no terminal, is refused; the turn still ends, and the exit code says why.
    let second = run(vec![
        "--json",
        "chat",
        "-c",
        "--output",
        "json",
        "add a task",
    ])
    .await
    .unwrap();
    assert_eq!(second.status.code(), Some(3), "{}", text(&second));
    assert!(text(&second).contains("--allow RULE"), "{}", text(&second));
    let answer: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(answer["text"], "I could not add it.");
    assert_eq!(
        answer["tool_calls"],
        serde_json::json!([{"tool": "create_task", "ok": false}])
    );
    let asked = server.requests();
    let body = asked[1].2.to_string();
    assert!(
        body.contains("say hello") && body.contains("add a task"),
        "{body}"
    );
    let conversation = answer["conversation"].as_str().unwrap().to_string();

    // The same conversation named, every event a JSON line.
    let third = {
        let home = home.path().to_path_buf();
        let conversation = conversation.clone();
        tokio::task::spawn_blocking(move || {
            cowork(
                &home,
                &[
                    "--conversation",
                    &conversation,
                    "chat",
                    "--output",
                    "stream-json",
                    "still there?",
                ],
            )
        })
        .await
        .unwrap()
    };
    assert!(third.status.success(), "{}", text(&third));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&third.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().any(|l| l["type"] == "text_delta"), "{lines:?}");
    assert_eq!(lines.last().unwrap()["conversation"], conversation.as_str());

    // A rule for this run lets the call through unasked; a rule too wide or a profile that is
    // not defined is refused before anything runs.
    server.push(Turn::tools(
        "",
        &[(
            "call_2",
            "create_task",
            serde_json::json!({"title": "Renew passport"}),
        )],
    ));
    server.push(Turn::text("Added."));
    let allowed = run(vec!["chat", "-c", "--allow", "create_task", "add it now"])
        .await
        .unwrap();
    assert!(allowed.status.success(), "{}", text(&allowed));
    assert!(
        text(&allowed).contains("[create_task: done]"),
        "{}",
        text(&allowed)
    );
    for wrong in [
        vec!["chat", "--allow", "*", "hi"],
        vec!["chat", "--allow", "run_command", "hi"],
        vec!["chat", "--profile", "nope", "hi"],
    ] {
        let out = run(wrong.clone()).await.unwrap();
        assert_eq!(out.status.code(), Some(2), "{wrong:?}: {}", text(&out));
    }
    // A profile chosen here stays the conversation's: the next turn offers only reads.
    server.push(Turn::text("Reading only."));
    server.push(Turn::text("Still reading only."));
    let profiled = run(vec!["chat", "-c", "--profile", "reading", "look around"])
        .await
        .unwrap();
    assert!(profiled.status.success(), "{}", text(&profiled));
    let again = run(vec!["chat", "-c", "and again"]).await.unwrap();
    assert!(again.status.success(), "{}", text(&again));
    let last = server.requests().last().unwrap().2.clone();
    let offered: Vec<&str> = last["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"read_file"), "{offered:?}");
    assert!(!offered.contains(&"create_task"), "{offered:?}");

    // Audited as the window's chat is, in that conversation.
    let audit = cowork(home.path(), &["--json", "audit", "list"]);
    let rows = String::from_utf8_lossy(&audit.stdout).to_string();
    assert!(
        rows.contains("create_task") && rows.contains(&conversation),
        "{rows}"
    );

    // Nothing configured: a clear error naming the fix.
    let bare = tempfile::tempdir().unwrap();
    let none = cowork(bare.path(), &["chat", "hi"]);
    assert!(!none.status.success());
    assert!(
        text(&none).contains("cowork provider set"),
        "{}",
        text(&none)
    );
}
