//! kill -9 at random moments while `cowork tools call create_task` runs: every call that
//! reported success has its task row and its audit rows afterwards, and the chain verifies.

use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn kill_9_at_random_moments_loses_no_reported_write() {
    let home = tempfile::tempdir().unwrap();
    // Deterministic "random" delays (xorshift), so a failure can be replayed.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut reported = Vec::new();
    let mut killed = 0;
    for i in 0..40 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cowork"))
            .args([
                "tools",
                "call",
                "create_task",
                "--json",
                "--args",
                &format!(r#"{{"title": "durable {i}"}}"#),
            ])
            .env("COWORK_HOME", home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Delays spread over a call's whole life (start-up, migration check, commit, print).
        std::thread::sleep(Duration::from_micros(next() % 60_000));
        let _ = child.kill(); // SIGKILL on Unix
        let out = child.wait_with_output().unwrap();
        if out.status.code().is_none() {
            killed += 1;
        }
        if let Ok(json) = serde_json::from_slice::<serde_json::Value>(&out.stdout)
            && json["ok"] == true
        {
            reported.push((
                json["call_id"].as_str().unwrap().to_string(),
                json["output"]["structured"]["id"].as_i64().unwrap(),
            ));
        }
    }
    // Make sure the run exercised both sides: some calls killed, some reported.
    assert!(
        killed > 0,
        "no call was killed: the delays are too long for this machine"
    );
    let ok = Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args([
            "tools",
            "call",
            "create_task",
            "--json",
            "--args",
            r#"{"title": "after"}"#,
        ])
        .env("COWORK_HOME", home.path())
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    reported.push((
        json["call_id"].as_str().unwrap().to_string(),
        json["output"]["structured"]["id"].as_i64().unwrap(),
    ));

    let conn = rusqlite::Connection::open(home.path().join("cowork.db")).unwrap();
    for (call_id, task_id) in &reported {
        let task: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM tasks WHERE id = ?1 AND call_id = ?2",
                rusqlite::params![task_id, call_id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            task, 1,
            "task {task_id} of reported call {call_id} is missing"
        );
        let phases: Vec<String> = conn
            .prepare("SELECT phase FROM audit_log WHERE call_id = ?1 ORDER BY seq")
            .unwrap()
            .query_map([call_id], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            phases,
            ["intent", "final"],
            "audit rows of reported call {call_id}"
        );
    }
    // Every task that exists (reported or not) was authorized on record: its intent row exists.
    let orphans: i64 = conn
        .query_row("SELECT COUNT(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM audit_log a WHERE a.call_id = t.call_id AND a.phase = 'intent')", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        orphans, 0,
        "a task was written without a committed intent row"
    );
    let verify = Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(["audit", "verify"])
        .env("COWORK_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    eprintln!(
        "durability: {} reported, {killed} killed of 40",
        reported.len()
    );
}
