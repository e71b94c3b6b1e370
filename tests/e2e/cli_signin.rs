//! OAuth mail accounts end to end through the `cowork` binary, each added by its address: its
//! settings found in an ISP database on loopback (Thunderbird's autoconfig format, one shaped as
//! Gmail's and one as Microsoft 365's), then a real OpenID provider (npm `oidc-provider`) signs
//! the person in — the browser's part driven here, the loopback
//! redirect real — a real Dovecot takes the token over IMAP XOAUTH2 (its `oauth2` passdb
//! introspecting the token at the provider) and the SMTP front over SMTP XOAUTH2; the tokens
//! live in a real Secret Service and nowhere else; a sign-out revokes them at the provider, and
//! the account then says it needs a sign-in.

use cowork_tests::output_text;
use cowork_tests::peers::{GraphCalendar, MailServer, OidcProvider, in_private_keyring};
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

/// Autoconfig files (Thunderbird's format) as an ISP database on loopback would serve them:
/// one shaped as Gmail's (OAuth or a password, the endpoints given), one as Microsoft 365's
/// (OAuth only, the endpoints found from the provider's metadata).
fn ispdb(dir: &std::path::Path, mail: &MailServer, issuer: &str) {
    let server = |tag: &str, kind: &str, port: u16, methods: &str| {
        format!(
            "<{tag} type=\"{kind}\"><hostname>127.0.0.1</hostname><port>{port}</port><socketType>plain</socketType>\
             <username>%EMAILLOCALPART%</username>{methods}</{tag}>"
        )
    };
    let file = |domain: &str, name: &str, methods: &str, oauth: &str| {
        let xml = format!(
            "<?xml version=\"1.0\"?><clientConfig version=\"1.1\"><emailProvider id=\"{domain}\"><domain>{domain}</domain>\
             <displayName>{name}</displayName>{}{}</emailProvider>{oauth}</clientConfig>",
            server("incomingServer", "imap", mail.imap_port, methods),
            server("outgoingServer", "smtp", mail.smtp_port, methods),
        );
        std::fs::write(dir.join(domain), xml).unwrap();
    };
    std::fs::create_dir_all(dir).unwrap();
    file(
        "gmail-shaped.test",
        "Gmail-shaped",
        "<authentication>OAuth2</authentication><authentication>password-cleartext</authentication>",
        &format!(
            "<oAuth2><issuer>{issuer}</issuer><scope>openid offline_access mail</scope>\
             <authURL>{issuer}/auth</authURL><tokenURL>{issuer}/token</tokenURL></oAuth2>"
        ),
    );
    file(
        "m365-shaped.test",
        "M365-shaped",
        "<authentication>OAuth2</authentication>",
        &format!(
            "<oAuth2><issuer>{issuer}</issuer><scope>openid offline_access mail</scope></oAuth2>"
        ),
    );
}

#[test]
fn accounts_are_added_by_address_and_sign_in_then_read_send_and_sign_out() {
    let issued = tempfile::NamedTempFile::new().unwrap();
    let provider = OidcProvider::start(&[("OIDC_TOKEN_LOG", issued.path().to_str().unwrap())]);
    let mail = MailServer::start_oauth(&[("alice", "unused-pw"), ("bob", "unused-pw")], &provider);
    let graph = GraphCalendar::start(provider.introspection_url());
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    ispdb(&tmp.path().join("ispdb/v1.1"), &mail, &provider.issuer());
    let ispdb_port = cowork_tests::peers::free_port();
    std::fs::write(
        home.join("settings.json"),
        format!(
            r#"{{"mail": {{"undoSeconds": 0}}, "accounts": {{"autoconfigUrl": "http://127.0.0.1:{ispdb_port}/v1.1/",
               "oauthClients": {{"{issuer}": {{"clientId": "cowork-test", "hosts": ["127.0.0.1"]}}}}}}}}"#,
            issuer = provider.issuer()
        ),
    )
    .unwrap();
    let send = r#"{"account":"alice","to":["bob@m365-shaped.test"],"subject":"Sent with a token","body":"no password anywhere"}"#;
    let script = format!(
        r#"set -e
python3 -m http.server --bind 127.0.0.1 --directory "$TMPD/ispdb" {ispdb_port} >/dev/null 2>&1 &
trap "kill $!" EXIT
for i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:{ispdb_port}/" && break; sleep 0.1; done
"$COWORK" account add alice --email alice@gmail-shaped.test --yes --no-browser > "$TMPD/alice.out" 2>&1
cat "$TMPD/alice.out"
"$COWORK" account add bob --email bob@m365-shaped.test --yes --no-browser > "$TMPD/bob.out" 2>&1
cat "$TMPD/bob.out"
"$COWORK" account add bob-calendar --microsoft-graph {graph_url} --user bob@m365-shaped.test \
  --oauth {issuer} --client-id cowork-test --scope openid --scope offline_access --no-browser > "$TMPD/bob-calendar.out" 2>&1
cat "$TMPD/bob-calendar.out"
"$COWORK" tools call calendar_sync --args '{{"account":"bob-calendar"}}'
"$COWORK" account test alice
printf 'y\n' | COWORK_APPROVE_FROM_STDIN=1 "$COWORK" tools call email_send --args '{send}'
for i in $(seq 1 50); do "$COWORK" tools call email_outbox | grep -q '\[sent\]' && break; sleep 0.2; done
"$COWORK" tools call email_check --args '{{"account":"bob","subject":"Sent with a token"}}'
"$COWORK" account signout alice
echo "after sign-out:"
"$COWORK" account test alice || echo "test refused: $?"
"#,
        graph_url = graph.url(),
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
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for who in ["alice", "bob", "bob-calendar"] {
        let url = printed_url(
            &tmp.path().join(format!("{who}.out")),
            Instant::now() + Duration::from_secs(60),
        );
        assert!(
            url.as_str().starts_with(&provider.issuer()),
            "the address is the provider's: {url}"
        );
        let person = who.split('-').next().unwrap();
        runtime.block_on(OidcProvider::person_signs_in(&url, person));
    }
    let out = child.wait_with_output().unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let (before, after) = text.split_once("after sign-out:").expect(&text);
    for (who, shape) in [("alice", "Gmail-shaped"), ("bob", "M365-shaped")] {
        assert!(
            before.contains(&format!(
                "{shape} — found by http://127.0.0.1:{ispdb_port}/v1.1/"
            )),
            "{text}"
        );
        assert!(before.contains(&format!("signed in to {who}")), "{text}");
    }
    assert!(
        before.contains("in your browser at http://127.0.0.1:"),
        "the person saw where they sign in: {text}"
    );
    assert!(
        before.contains("\"Sent with a token\""),
        "sent by alice over SMTP XOAUTH2, read by bob over IMAP XOAUTH2: {text}"
    );
    assert!(
        before.contains("signed in to bob-calendar") && before.contains("pulled 2"),
        "a Microsoft 365-shaped calendar signed in and synced through Graph: {text}"
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
    let holding = cowork_tests::files_holding(&home, &issued);
    assert!(holding.is_empty(), "a token reached {holding:?}");
    assert!(
        !issued.iter().any(|t| text.contains(t)),
        "a token was printed: {text}"
    );
}
