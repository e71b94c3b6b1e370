//! `cowork vault` end to end through the binary: a re-index killed with -9 resumes where it
//! stopped and ends with the index matching the folder; secret-looking text in notes (and in
//! files that cannot be read) never reaches a log line.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "sk-live-9QzT4wXbN7kP2mR8";
const FILES: usize = 480;

fn cowork(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cowork"))
        .arg("--home")
        .arg(home)
        .args(args)
        .env("COWORK_LOG", "debug")
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    cowork_tests::output_text(out)
}

fn count(home: &std::path::Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(home.join("cowork.db")).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn a_reindex_killed_with_9_resumes_and_secrets_stay_out_of_the_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let vault = home.join("vault/Imported");
    std::fs::create_dir_all(&vault).unwrap();
    for i in 0..FILES {
        let body = format!(
            "---\ntags: [import]\n---\n# Note {i}\n\nMeeting {i} with team {} about topic {}. Follow up on item {}.\n",
            i % 17,
            i % 23,
            i * 7
        );
        std::fs::write(vault.join(format!("note-{i:04}.md")), body).unwrap();
    }
    // One with a key in it that cannot be parsed: reported, but the key is not logged.
    std::fs::write(
        vault.join("broken.md"),
        format!("---\napi_key: [{SECRET}\n---\nx\n"),
    )
    .unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_cowork"))
        .arg("--home")
        .arg(&home)
        .args(["vault", "reindex"])
        .env("COWORK_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Words are indexed first (fast), then the vectors: kill it while it embeds.
    let deadline = Instant::now() + cowork_tests::wait::patience() * 2;
    while count(&home, "vault_vectors") < 32 {
        assert!(
            Instant::now() < deadline,
            "no batch of vectors was committed in time"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the re-index ended before it could be killed: raise FILES"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (words, vectors) = (
        count(&home, "vault_entries") as u64,
        count(&home, "vault_vectors") as u64,
    );
    assert!(
        vectors < FILES as u64,
        "killed mid-way ({vectors} of {FILES} embedded)"
    );

    let again = cowork(&home, &["--json", "vault", "reindex"]);
    assert!(again.status.success(), "{}", text(&again));
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(report["files"], FILES + 1);
    assert_eq!(
        report["unchanged"].as_u64().unwrap(),
        words,
        "committed words are not indexed again: {report}"
    );
    assert_eq!(
        report["indexed"].as_u64().unwrap() + words,
        FILES as u64,
        "{report}"
    );
    assert_eq!(
        report["embedded"].as_u64().unwrap(),
        FILES as u64 - vectors,
        "resumed, not restarted: {report}"
    );
    assert_eq!(report["problems"][0][0], "Imported/broken.md");

    let stats = cowork(&home, &["--json", "vault", "stats"]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        stats["entries"], FILES,
        "the index matches the files: {stats}"
    );
    assert_eq!(
        stats["vectors"][0][1], FILES,
        "every entry has its vector: {stats}"
    );
    assert_eq!(stats["cached_vectors"], FILES);

    // A memory holding a key: saved, found, and nowhere in the logs.
    let saved = cowork(
        &home,
        &[
            "vault",
            "save",
            &format!("The staging API key is {SECRET}"),
            "--kind",
            "fact",
        ],
    );
    assert!(saved.status.success(), "{}", text(&saved));
    let found = cowork(&home, &["vault", "search", "staging API key"]);
    assert!(text(&found).contains("staging API key"), "{}", text(&found));
    let third = cowork(
        &home,
        &[
            "vault", "search", "note 7", "--kind", "note", "--tag", "import", "-k", "3",
        ],
    );
    assert!(
        third.status.success() && text(&third).contains("Note 7"),
        "{}",
        text(&third)
    );

    let mut logged = String::new();
    for entry in std::fs::read_dir(home.join("logs")).unwrap() {
        logged.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(logged.contains("vault"), "the logs are written: {logged}");
    assert!(
        !logged.contains(SECRET),
        "a secret reached the log:\n{logged}"
    );
}
