//! Hooks: the person's own commands before and after each call and at a turn's end, as Claude
//! Code writes them in settings.json. A hook refuses a call (exit 2, or a JSON decision) and is
//! audited as the refusal; nothing it says lets a call through that the review would ask or
//! deny; it runs confined (Cowork's own data out of sight); a folder's hooks run only while the
//! person trusts the folder, and the trust review lists them.

use cowork_core::{AuditFilter, CallRequest, Caller, DenyApprover};
use cowork_tests::Harness;
use serde_json::{Value, json};
use std::sync::Arc;

/// Writes `hooks` into the person's settings and has the policy read them.
fn person_hooks(h: &Harness, hooks: Value) {
    let path = h.store.dir().settings_path();
    let mut root: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    root["hooks"] = hooks;
    std::fs::write(&path, root.to_string()).unwrap();
    h.scheduler.policy().reload().unwrap();
}

fn command(command: &str) -> Value {
    json!([{"type": "command", "command": command, "timeout": 5}])
}

async fn call(h: &Harness, tool: &str, args: Value) -> Result<String, String> {
    let outcome = h
        .scheduler
        .call(CallRequest::new(tool, args, Caller::Chat, "conv"))
        .await;
    outcome
        .result
        .map(|o| o.text_content())
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_hook_refuses_a_call_never_lets_one_through_and_runs_confined() {
    let h = Harness::new(Arc::new(DenyApprover));
    let log = h.workspace.join("hooks.log");
    let data = h.store.dir().root().to_path_buf();
    person_hooks(
        &h,
        json!({
            // Refuses a task whose input mentions a secret, with its reason.
            "PreToolUse": [
                {"matcher": "create_task", "hooks": command(r#"input=$(cat); case "$input" in *secret*) echo "no secrets in tasks" >&2; exit 2;; esac"#)},
                // Says "allow" for a command the review asks about: it changes nothing.
                {"matcher": "exec_probe", "hooks": command(r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'"#)},
                {"matcher": "limited_probe", "hooks": [{"type": "command", "command": "sleep 5", "timeout": 1}]},
                // Written for Claude Code: its tool name, its argument name.
                {"matcher": "Bash", "hooks": command(r#"input=$(cat); case "$input" in *'"command":"rm'*) echo "no rm" >&2; exit 2;; esac"#)},
                // A gate that cannot run refuses rather than waving calls through.
                {"matcher": "list_tasks", "hooks": command("no-such-program-here")},
            ],
            // Logs what ran, and whether Cowork's own data was in sight.
            "PostToolUse": [{"matcher": "*", "hooks": command(&format!(
                r#"input=$(cat); echo "$input" | grep -o '"tool_name":"[a-z_]*"' >> {log}; test -e {data}/cowork.db && echo DATA-VISIBLE >> {log}; true"#,
                log = log.display(), data = data.display()))}],
        }),
    );

    let refused = call(&h, "create_task", json!({"title": "my secret plan"}))
        .await
        .unwrap_err();
    assert!(refused.contains("no secrets in tasks"), "{refused}");
    call(&h, "create_task", json!({"title": "buy milk"}))
        .await
        .unwrap();
    let asked = call(&h, "exec_probe", json!({"target": "ls"})).await;
    assert!(asked.is_err(), "a hook's allow let an asked call through");
    let slow = call(&h, "limited_probe", json!({"target": "x"}))
        .await
        .unwrap_err();
    assert!(slow.contains("did not finish within 1 s"), "{slow}");
    let rm = call(&h, "run_command", json!({"command": "rm -rf x"}))
        .await
        .unwrap_err();
    assert!(rm.contains("no rm"), "{rm}");
    let broken = call(&h, "list_tasks", json!({})).await.unwrap_err();
    assert!(broken.contains("could not run"), "{broken}");

    // The refusal is on record as the hook's; the call that ran is logged by the post hook.
    h.scheduler.flush().unwrap();
    let rows = h
        .scheduler
        .audit()
        .list(&AuditFilter {
            tool: Some("create_task".into()),
            ..Default::default()
        })
        .unwrap();
    let denied = rows
        .iter()
        .find(|r| r.record.decision == "deny")
        .expect("a denial on record");
    assert!(
        denied
            .record
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("the hook"),
        "{denied:?}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged.lines().filter(|l| l.contains("create_task")).count(),
        1,
        "only the call that ran: {logged}"
    );
    if cowork_contract::confine::available() {
        assert!(!logged.contains("DATA-VISIBLE"), "{logged}");
    }
}

#[tokio::test]
async fn a_folders_hooks_run_only_while_the_person_trusts_it() {
    let h = Harness::new(Arc::new(DenyApprover));
    std::fs::create_dir_all(h.workspace.join(".cowork")).unwrap();
    std::fs::write(
        h.workspace.join(".cowork/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "", "hooks": command("echo 'the folder says no' >&2; exit 2")}]}})
            .to_string(),
    )
    .unwrap();
    let policy = h.scheduler.policy();
    policy.reload().unwrap();
    let ws = policy.workspaces()[0].clone();
    assert_eq!(
        ws.hooks,
        ["PreToolUse (every tool): echo 'the folder says no' >&2; exit 2"]
    );
    assert!(
        policy
            .problems()
            .iter()
            .any(|p| p.message.contains("1 hook(s) not run")),
        "{:?}",
        policy.problems()
    );
    call(&h, "create_task", json!({"title": "untrusted folder"}))
        .await
        .unwrap();
    policy.trust_workspace(&ws.root, &ws.digest).unwrap();
    let refused = call(&h, "create_task", json!({"title": "trusted folder"}))
        .await
        .unwrap_err();
    assert!(refused.contains("the folder says no"), "{refused}");
}
