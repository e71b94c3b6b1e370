//! Accounts end to end through the `cowork` binary, with a real Secret Service (gnome-keyring in
//! a private D-Bus session), a real Dovecot + SMTP front and a real Radicale: passwords go to the
//! keyring and nowhere else; `account test` logs in; a mail queued by a process killed with -9
//! during its undo delay is sent exactly once by the next run.

use cowork_tests::output_text;
use cowork_tests::peers::{MailServer, Radicale, in_private_keyring};

const MAIL_PW: &str = "mail-pw-Zq81-secret";
const DAV_PW: &str = "dav-pw-Kx77-secret";

#[test]
fn accounts_keep_passwords_in_the_keyring_and_the_outbox_survives_kill_9() {
    let mail = MailServer::start(&[("alice", MAIL_PW)]);
    let dav = Radicale::start(&[("alice", DAV_PW)]);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        home.join("settings.json"),
        r#"{"mail": {"undoSeconds": 4}}"#,
    )
    .unwrap();
    let send = r#"{"account":"alice","to":["alice@example.test"],"subject":"Survives kill -9","body":"exactly once"}"#;
    let script = format!(
        r#"set -e
curl -s -u "alice:$DAV_PW" -X MKCALENDAR "{dav}alice/personal/" >/dev/null
printf '%s\n' "$MAIL_PW" | "$COWORK" account add alice --email alice@example.test --imap 127.0.0.1:{imap} --smtp 127.0.0.1:{smtp} --security plain --user alice
printf '%s\n' "$DAV_PW" | "$COWORK" account add dav --caldav {dav} --user alice
"$COWORK" account list
"$COWORK" account test alice
"$COWORK" account test dav
# Queue a mail, and kill the process with -9 while the message waits out its undo delay.
printf 'y\n' | COWORK_APPROVE_FROM_STDIN=1 "$COWORK" tools call email_send --args '{send}' > "$TMPD/send.out" 2>&1 &
pid=$!
for i in $(seq 1 100); do grep -q Queued "$TMPD/send.out" 2>/dev/null && break; sleep 0.1; done
kill -9 $pid
wait $pid 2>/dev/null || true
echo "killed: $(cat "$TMPD/send.out")"
# The next run sends it (after the delay), once.
"$COWORK" tools call email_outbox
"$COWORK" tools call email_outbox
"$COWORK" tools call email_check --args '{{"account":"alice"}}'
"#,
        dav = dav.url(),
        imap = mail.imap_port,
        smtp = mail.smtp_port,
    );
    let out = in_private_keyring(&script, &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .env("MAIL_PW", MAIL_PW)
        .env("DAV_PW", DAV_PW)
        .env("TMPD", tmp.path())
        // The most a person can ask the logs for, spelled by module as well as by crate:
        // protocol crates (IMAP LOGIN, SMTP AUTH) must still not write credentials.
        .env(
            "COWORK_LOG",
            "trace,async_imap::imap_stream=trace,imap_proto::parser=trace,lettre::transport::smtp=trace,[{password}]=trace",
        )
        .output()
        .expect("dbus-run-session is not installed: run tests/setup.sh");
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("account alice saved; its password is in the OS keyring"),
        "{text}"
    );
    assert!(
        stdout.contains("alice  mail  alice@example.test")
            && stdout.contains("dav  caldav  alice @"),
        "{text}"
    );
    assert!(
        stdout.contains("dav/personal: pushed 0, pulled 0"),
        "account test dav synced: {text}"
    );
    assert!(
        stdout.contains("killed: ") && stdout.contains("Queued \"Survives kill -9\""),
        "{text}"
    );
    assert!(
        stdout.contains("[sent] \"Survives kill -9\""),
        "the next run sent it: {text}"
    );
    assert_eq!(
        stdout.matches("Survives kill -9 — ").count(),
        1,
        "exactly one copy arrived: {text}"
    );

    let logs: String = std::fs::read_dir(home.join("logs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        logs.contains("log filter in force:") && logs.contains("imap_stream=trace"),
        "the log ran at trace: {}",
        &logs[..logs.len().min(500)]
    );
    // The passwords are nowhere in the data dir (database, WAL, settings, logs).
    let holding = cowork_tests::files_holding(&home, &[MAIL_PW, DAV_PW]);
    assert!(holding.is_empty(), "a password reached {holding:?}");
    assert!(
        !text.contains(MAIL_PW) && !text.contains(DAV_PW),
        "a password was printed"
    );
}
