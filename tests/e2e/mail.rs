//! The mail family through the scheduler against a real Dovecot (IMAP + LMTP) with an SMTP front
//! on loopback: send → the outbox waits the undo delay → the message is in the recipient's IMAP
//! inbox; a reply threads; undo takes a message back; a GB2312 multipart with an attachment
//! decodes; a wrong password names the account; reading taints the conversation.

use cowork_contract::Effect;
use cowork_store::accounts::{self, AccountConfig, Security};
use cowork_tests::peers::MailServer;
use cowork_tests::{Harness, MAIL_UNDO, Recorder};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const USERS: [(&str, &str); 2] = [("alice", "alice-pw-93kd"), ("bob", "bob-pw-x81q")];

fn add_account(h: &Harness, server: &MailServer, name: &str, password: &str) {
    let mut config = server.account(name);
    if let AccountConfig::Mail { display_name, .. } = &mut config {
        *display_name = Some(name.to_uppercase());
    }
    h.add_account(name, config, password);
}

async fn setup() -> (MailServer, Harness, Arc<Recorder>) {
    let server = tokio::task::spawn_blocking(|| MailServer::start(&USERS))
        .await
        .unwrap();
    let yes = Arc::new(Recorder::default());
    let h = Harness::new(yes.clone());
    for (name, password) in USERS {
        add_account(&h, &server, name, password);
    }
    tokio::spawn(h.app.outbox_worker());
    (server, h, yes)
}

/// Polls (bounded) until `account`'s inbox holds a message with this subject.
async fn wait_for(h: &Harness, account: &str, subject: &str) -> Value {
    for _ in 0..100 {
        let found = h
            .ok(
                "email_check",
                json!({"account": account, "subject": subject}),
            )
            .await;
        if let Some(m) = found["messages"].as_array().unwrap().first() {
            return m.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{subject:?} never reached {account}'s inbox");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_waits_for_undo_then_arrives_and_a_reply_threads() {
    let (_server, h, yes) = setup().await;
    std::fs::write(h.workspace.join("agenda.txt"), "1. budget\n2. hiring\n").unwrap();
    let sent = h.call(
        "email_send",
        json!({"account": "alice", "to": ["bob@example.test"], "subject": "Agenda for Thursday", "body": "Hi Bob,\nthe agenda is attached.", "attachments": ["agenda.txt"]}),
    )
    .await;
    let queued = sent.result.as_ref().unwrap().structured.clone().unwrap();
    // Sending asked, and the review named account and recipients.
    let (tool, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(tool, "email_send");
    assert!(
        effects.contains(&Effect::MailSend {
            account: "alice".into(),
            recipients: vec!["bob@example.test".into()]
        }),
        "{effects:?}"
    );
    // Within the undo delay it has not left.
    let early = h.ok("email_check", json!({"account": "bob"})).await;
    assert_eq!(early["total"], 0, "sent before the undo delay: {early}");
    let outbox = h.ok("email_outbox", json!({})).await;
    assert_eq!(outbox["messages"][0]["state"], "queued");

    let summary = wait_for(&h, "bob", "Agenda for Thursday").await;
    assert_eq!(summary["from"], "ALICE <alice@example.test>");
    assert_eq!(summary["unread"], true);
    let read = h
        .call(
            "email_read",
            json!({"account": "bob", "uid": summary["uid"]}),
        )
        .await;
    assert!(
        read.result.as_ref().unwrap().untrusted,
        "incoming mail is untrusted"
    );
    // A message's body is someone's private message: reading it asked, naming the account.
    let (tool, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(tool, "email_read");
    assert!(effects.contains(&Effect::SensitiveRead {
        category: cowork_contract::Sensitive::PrivateMessages,
        subject: "bob".into()
    }));
    let message = read.result.unwrap().structured.unwrap();
    assert!(
        message["text"]
            .as_str()
            .unwrap()
            .contains("the agenda is attached"),
        "{message}"
    );
    assert_eq!(message["attachments"][0]["name"], "agenda.txt");
    assert_eq!(
        message["message_id"].as_str().unwrap(),
        format!("{}", queued["message_id"].as_str().unwrap())
    );
    // Reading did not mark it read.
    let again = h
        .ok(
            "email_check",
            json!({"account": "bob", "unread_only": true}),
        )
        .await;
    assert_eq!(again["total"], 1);

    // Bob replies: the reply goes to Alice, threaded, and the modal named her. The conversation
    // read mail, so it is tainted: the egress is asked regardless.
    h.ok(
        "email_reply",
        json!({"account": "bob", "uid": summary["uid"], "body": "Thanks, see you."}),
    )
    .await;
    let (_, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert!(
        effects.contains(&Effect::MailSend {
            account: "bob".into(),
            recipients: vec!["alice@example.test".into()]
        }),
        "{effects:?}"
    );
    let reply = wait_for(&h, "alice", "Re: Agenda for Thursday").await;
    let reply = h
        .ok(
            "email_read",
            json!({"account": "alice", "uid": reply["uid"]}),
        )
        .await;
    assert!(reply["text"].as_str().unwrap().contains("see you"));
    assert_eq!(
        reply["in_reply_to"], queued["message_id"],
        "the reply threads under the original"
    );
    let outbox = h.ok("email_outbox", json!({})).await;
    assert!(
        outbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["state"] == "sent"),
        "{outbox}"
    );
    let check = h
        .call(
            "email_reply",
            json!({"account": "alice", "uid": 999, "body": "x"}),
        )
        .await;
    assert!(
        check
            .result
            .unwrap_err()
            .to_string()
            .contains("email_read first")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_takes_a_message_back_before_it_leaves() {
    let (_server, h, _) = setup().await;
    let queued = h.ok("email_send", json!({"account": "alice", "to": ["bob@example.test"], "subject": "Oops", "body": "not meant"})).await;
    let undone = h.ok("email_undo", json!({"id": queued["id"]})).await;
    assert_eq!(undone["state"], "cancelled");
    tokio::time::sleep(MAIL_UNDO + Duration::from_millis(1500)).await;
    assert_eq!(
        h.ok("email_check", json!({"account": "bob"})).await["total"],
        0
    );
    let outbox = h.ok("email_outbox", json!({})).await;
    assert_eq!(outbox["messages"][0]["state"], "cancelled");
    // Too late is said plainly.
    let sent = h.ok("email_send", json!({"account": "alice", "to": ["bob@example.test"], "subject": "Fine", "body": "ok"})).await;
    wait_for(&h, "bob", "Fine").await;
    let late = h.call("email_undo", json!({"id": sent["id"]})).await;
    assert!(late.result.unwrap_err().to_string().contains("too late"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gb2312_multipart_with_an_attachment_decodes_and_bad_passwords_name_the_account() {
    let (server, h, _) = setup().await;
    // "会议议程" (subject) and "你好" (body) in GB2312, from another mail client.
    let raw = "From: =?gb2312?B?1cW3qw==?= <zhang@example.test>\r\nTo: bob@example.test\r\nSubject: =?gb2312?B?u+HS6dLps8w=?=\r\n\
Message-ID: <gb-1@example.test>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n\
Content-Type: text/plain; charset=gb2312\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=C4=E3=BA=C3\r\n\
--b\r\nContent-Type: application/pdf; name=\"agenda.pdf\"\r\nContent-Disposition: attachment; filename=\"agenda.pdf\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--b--\r\n";
    let script = format!(
        "import smtplib,sys\ns=smtplib.SMTP('127.0.0.1',{});s.login('alice','{}');s.sendmail('zhang@example.test',['bob@example.test'],sys.stdin.buffer.read());s.quit()",
        server.smtp_port, USERS[0].1
    );
    let mut child = std::process::Command::new("python3")
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(raw.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());

    let found = wait_for(&h, "bob", "会议议程").await;
    assert_eq!(found["from"], "张帆 <zhang@example.test>");
    let message = h
        .ok("email_read", json!({"account": "bob", "uid": found["uid"]}))
        .await;
    assert_eq!(message["text"].as_str().unwrap().trim(), "你好");
    assert_eq!(
        message["attachments"],
        json!([{"name": "agenda.pdf", "content_type": "application/pdf", "size": 9}])
    );

    h.secrets.set(&accounts::secret_name("bob"), "wrong");
    let error = h
        .call("email_check", json!({"account": "bob"}))
        .await
        .result
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"bob\"") && error.contains("refused the login"),
        "{error}"
    );
    let none = h
        .call("email_check", json!({"account": "carol"}))
        .await
        .result
        .unwrap_err()
        .to_string();
    assert!(none.contains("cowork account add"), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn email_check_reads_1000_headers_quickly() {
    let (server, h, _) = setup().await;
    // 1,000 messages delivered in one SMTP session.
    let script = format!(
        "import smtplib\ns=smtplib.SMTP('127.0.0.1',{});s.login('alice','{}')\n\
for i in range(1000):\n  s.sendmail('a@example.test',['bob@example.test'],('Subject: bulk %d\\r\\nFrom: a@example.test\\r\\n\\r\\nbody %d\\r\\n' % (i,i)).encode())\ns.quit()",
        server.smtp_port, USERS[0].1
    );
    assert!(
        std::process::Command::new("python3")
            .args(["-c", &script])
            .status()
            .unwrap()
            .success()
    );
    let started = std::time::Instant::now();
    let all = h
        .ok("email_check", json!({"account": "bob", "limit": 1000}))
        .await;
    let took = started.elapsed();
    assert_eq!(all["total"], 1000);
    assert_eq!(all["messages"].as_array().unwrap().len(), 1000);
    assert_eq!(all["messages"][0]["subject"], "bulk 999", "newest first");
    // The client said who it is (RFC 2971): NetEase's servers open no folder otherwise.
    let log = server.log();
    assert!(log.contains("ID sent: name=Cowork"), "{log}");
    eprintln!("1,000 headers in {took:?} (the speed is benches/mail.rs's to judge)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_starttls_to_an_untrusted_certificate_are_refused_naming_the_account() {
    let (server, h, _) = setup().await;
    for (name, port, security) in [
        ("implicit", server.imaps_port, Security::Tls),
        ("upgraded", server.imap_port, Security::Starttls),
    ] {
        let mut config = server.account("alice");
        if let AccountConfig::Mail {
            imap_port,
            imap_security,
            ..
        } = &mut config
        {
            (*imap_port, *imap_security) = (port, security);
        }
        h.add_account(name, config, USERS[0].1);
        // Dovecot's self-signed certificate: the TLS handshake happens and the certificate is
        // refused; the password is never sent.
        let error = h
            .call("email_check", json!({"account": name}))
            .await
            .result
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(&format!("{name:?}")) && error.to_lowercase().contains("certificate"),
            "{error}"
        );
    }
}
