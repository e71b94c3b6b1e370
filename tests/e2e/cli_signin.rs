//! An OAuth mail account end to end through the `cowork` binary: a real OpenID provider
//! (npm `oidc-provider`) signs the person in — the browser's part driven here, the loopback
//! redirect real — a real Dovecot takes the token over IMAP XOAUTH2 (its `oauth2` passdb
//! introspecting the token at the provider) and the SMTP front over SMTP XOAUTH2; the tokens
//! live in a real Secret Service and nowhere else; a sign-out revokes them at the provider, and
//! the account then says it needs a sign-in.

use cowork_tests::output_text;
use cowork_tests::peers::{MailServer, OidcProvider, in_private_keyring};
use std::time::{Duration, Instant};

/// The sign-in address the CLI printed into `out`, once it has.
fn printed_url(out: &std::path::Path, deadline: Instant) -> reqwest::Url {
    loop {
        let text = std::fs::read_to_string(out).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("http")) {
            return line.trim().parse().unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "no sign-in address was printed: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_oauth_mail_account_signs_in_reads_and_sends_then_signs_out() {
    let issued = tempfile::NamedTempFile::new().unwrap();
    let provider = OidcProvider::start(&[("OIDC_TOKEN_LOG", issued.path().to_str().unwrap())]);
    let mail = MailServer::start_oauth(&[("alice", "unused-pw")], &provider);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        home.join("settings.json"),
        r#"{"mail": {"undoSeconds": 0}}"#,
    )
    .unwrap();
    let send = r#"{"account":"alice","to":["alice@example.test"],"subject":"Sent with a token","body":"no password anywhere"}"#;
    let script = format!(
        r#"set -e
"$COWORK" account add alice --email alice@example.test --user alice --imap 127.0.0.1:{imap} --smtp 127.0.0.1:{smtp} --security plain \
  --oauth {issuer} --client-id cowork-test --scope openid --scope offline_access --scope mail --no-browser > "$TMPD/signin.out" 2>&1
cat "$TMPD/signin.out"
"$COWORK" account test alice
printf 'y\n' | COWORK_APPROVE_FROM_STDIN=1 "$COWORK" tools call email_send --args '{send}'
for i in $(seq 1 50); do "$COWORK" tools call email_outbox | grep -q '\[sent\]' && break; sleep 0.2; done
"$COWORK" tools call email_check --args '{{"account":"alice","subject":"Sent with a token"}}'
"$COWORK" account signout alice
echo "after sign-out:"
"$COWORK" account test alice || echo "test refused: $?"
"#,
        imap = mail.imap_port,
        smtp = mail.smtp_port,
        issuer = provider.issuer(),
    );
    let child = in_private_keyring(&script, &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .env("TMPD", tmp.path())
        .env("COWORK_LOG", "trace")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dbus-run-session is not installed: run tests/setup.sh");
    let url = printed_url(
        &tmp.path().join("signin.out"),
        Instant::now() + Duration::from_secs(60),
    );
    assert!(
        url.as_str().starts_with(&provider.issuer()),
        "the address is the provider's: {url}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(OidcProvider::person_signs_in(&url, "alice"));
    let out = child.wait_with_output().unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let (before, after) = text.split_once("after sign-out:").expect(&text);
    assert!(before.contains("signed in to alice"), "{text}");
    assert!(
        before.contains("\"Sent with a token\""),
        "read back over IMAP XOAUTH2 after SMTP XOAUTH2: {text}"
    );
    assert!(
        before.contains("signed out of alice"),
        "the sign-out revoked: {text}"
    );
    assert!(
        after.contains("is signed out") && after.contains("cowork account signin alice"),
        "after signing out, the account asks for a sign-in: {after}"
    );
    // The code and the tokens the provider issued are nowhere in the data dir (database, WAL,
    // settings, logs at trace) nor in what was printed.
    let issued = std::fs::read_to_string(issued.path()).unwrap();
    let issued: Vec<&str> = issued.lines().filter(|l| l.len() >= 20).collect();
    assert!(
        issued.len() >= 3,
        "a code, an access and a refresh token were issued: {issued:?}"
    );
    let tokens_in = |text: &str| issued.iter().any(|t| text.contains(t));
    let mut files = vec![home.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let bytes = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert!(!tokens_in(&bytes), "a token reached {}", path.display());
        }
    }
    assert!(!tokens_in(&text), "a token was printed: {text}");
}
