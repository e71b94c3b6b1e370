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

/// An address whose domain has no autoconfig file is set up from what its DNS publishes (a real
/// DNS server on loopback): RFC 6186 SRV records for mail — the best priority first, a service
/// the domain says it does not offer (target `.`) skipped for the next, a server outside the
/// domain pointed out — and RFC 6764's `_caldavs._tcp` with its TXT path for the calendars. Each
/// step is printed as it goes; the settings saved are the ones shown.
#[test]
fn an_address_is_set_up_from_its_domains_dns_records() {
    use cowork_tests::peers::DnsZone;
    let dns = DnsZone::start(
        "_imaps._tcp.srv.test. 300 IN SRV 10 0 993 backup.srv.test.\n\
         _imaps._tcp.srv.test. 300 IN SRV 5 0 993 mail.srv.test.\n\
         _submissions._tcp.srv.test. 300 IN SRV 0 1 465 smtp.elsewhere.example.\n\
         _caldavs._tcp.srv.test. 300 IN SRV 0 1 8443 dav.srv.test.\n\
         _caldavs._tcp.srv.test. 300 IN TXT \"path=/dav/alice/\"\n\
         _imaps._tcp.dot.test. 300 IN SRV 0 0 0 .\n\
         _imap._tcp.dot.test. 300 IN SRV 0 0 143 imap.dot.test.\n\
         _submission._tcp.dot.test. 300 IN SRV 0 0 587 imap.dot.test.\n\
         _caldavs._tcp.dot.test. 300 IN SRV 0 0 443 dav.evil.example.\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    // No ISP database (a closed port): the domain's DNS is the source.
    std::fs::write(
        home.join("settings.json"),
        format!(
            r#"{{"accounts": {{"autoconfigUrl": "http://127.0.0.1:1/v1.1/", "dnsServer": "{}"}}}}"#,
            dns.address()
        ),
    )
    .unwrap();
    let script = r#"set -e
printf 'pw\n' | "$COWORK" account add srv --email alice@srv.test --yes
printf 'pw\n' | "$COWORK" account add srv-calendar --email alice@srv.test --calendar --yes
printf 'pw\n' | "$COWORK" account add dot --email bob@dot.test --yes
"$COWORK" account list
"#;
    let out = in_private_keyring(script, &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .output()
        .expect("dbus-run-session is not installed: run tests/setup.sh");
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    for expected in [
        "asking DNS for _imaps._tcp.srv.test and _submissions._tcp.srv.test (RFC 6186)",
        "found by srv.test's DNS (SRV records)",
        "read mail  IMAP mail.srv.test:993 (TLS)",
        "send mail  SMTP smtp.elsewhere.example:465 (TLS)",
        "note: smtp.elsewhere.example is not under srv.test",
        "asking DNS for _caldavs._tcp.srv.test (RFC 6764)",
        "calendars  CalDAV at https://dav.srv.test:8443/dav/alice/",
        "its calendars can be added too",
        "read mail  IMAP imap.dot.test:143 (STARTTLS)",
        "https://dav.evil.example/ is neither at dot.test nor at its mail servers: not offered",
        "send mail  SMTP imap.dot.test:587 (STARTTLS)",
        "srv-calendar  caldav  alice@srv.test @ https://dav.srv.test:8443/dav/alice/",
        "srv  mail  alice@srv.test  imap mail.srv.test:993  smtp smtp.elsewhere.example:465",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(
        !text.contains("backup.srv.test"),
        "the lower priority was not chosen: {text}"
    );
}
