//! `cowork changes apply` killed with SIGKILL mid-apply: every file is old or new, never torn,
//! and reopening the shadow store settles the journal so the record agrees with the disk.

use cowork_core::{ApprovalChoice, ApprovalRequest, Approver, CallRequest, Caller};
use cowork_files::shadow::Shadow;
use cowork_tests::Harness;
use serde_json::json;
use std::sync::Arc;

struct Yes;

#[async_trait::async_trait]
impl Approver for Yes {
    fn name(&self) -> &str {
        "test"
    }
    async fn decide(&self, _request: &ApprovalRequest) -> ApprovalChoice {
        ApprovalChoice::Once
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_during_apply_leaves_each_file_old_or_new_and_the_journal_recovers() {
    let h = Harness::new(Arc::new(Yes));
    let names = ["a.txt", "b.txt", "c.txt", "d.txt"];
    let mut ids = Vec::new();
    for name in names {
        std::fs::write(h.workspace.join(name), format!("old {name}\n").repeat(1000)).unwrap();
        let request = CallRequest::new(
            "write_file",
            json!({"path": name, "content": format!("new {name}\n").repeat(1000)}),
            Caller::Chat,
            "conv",
        );
        let out = h.scheduler.call(request).await;
        ids.push(
            out.result.unwrap().structured.unwrap()["id"]
                .as_i64()
                .unwrap()
                .to_string(),
        );
    }
    // Each file pauses 300 ms between its fsynced temp file and the rename; kill in the middle.
    let mut args = vec!["changes".to_string(), "apply".into()];
    args.extend(ids.iter().cloned());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(&args)
        .env("COWORK_HOME", h.dir.path().join("home"))
        .env("COWORK_APPROVE_FROM_STDIN", "1")
        .env("COWORK_TEST_APPLY_PAUSE_MS", "300")
        .arg("--conversation")
        .arg("conv")
        .arg("--workspace")
        .arg(&h.workspace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all("y\n".repeat(8).as_bytes())
            .unwrap();
    }
    // Wait until at least one file is new, then kill -9 (bounded wait).
    let deadline = std::time::Instant::now() + cowork_tests::wait::patience();
    while std::time::Instant::now() < deadline
        && !names.iter().any(|n| {
            std::fs::read_to_string(h.workspace.join(n))
                .unwrap()
                .starts_with("new")
        })
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().unwrap();
    child.wait().unwrap();

    let mut new_count = 0;
    for name in names {
        let text = std::fs::read_to_string(h.workspace.join(name)).unwrap();
        let (old, new) = (
            format!("old {name}\n").repeat(1000),
            format!("new {name}\n").repeat(1000),
        );
        assert!(text == old || text == new, "{name} is torn");
        new_count += usize::from(text == new);
    }
    assert!(
        new_count >= 1 && new_count < names.len(),
        "the kill landed mid-apply ({new_count} new)"
    );
    // Reopening settles the journal: the record agrees with the disk, then the rest applies.
    let shadow = Shadow::open(&h.store).unwrap();
    for (name, id) in names.iter().zip(&ids) {
        let text = std::fs::read_to_string(h.workspace.join(name)).unwrap();
        let change = shadow
            .list(None, Some("conv"))
            .unwrap()
            .into_iter()
            .find(|c| c.id.to_string() == *id)
            .unwrap();
        let expected = if text.starts_with("new") {
            "applied"
        } else {
            "staged"
        };
        assert_eq!(change.status, expected, "{name}");
        if expected == "staged" {
            shadow.apply(change.id, None).unwrap();
        }
        assert!(!h.workspace.join(format!(".{name}.cowork-1.tmp")).exists());
    }
    for name in names {
        assert!(
            std::fs::read_to_string(h.workspace.join(name))
                .unwrap()
                .starts_with("new")
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&h.workspace)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
