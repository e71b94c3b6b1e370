//! Real servers on loopback, started per test from `tests/peers/.venv` (installed by
//! tests/setup.sh): Radicale (CalDAV). Each lives in its own temp dir and dies with its handle.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/.venv/bin")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (bounded) until something accepts on the port.
pub fn wait_for_port(port: u16, child: &mut Child, what: &str, log: &Path) {
    let deadline = Instant::now() + crate::wait::patience();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "{what} exited ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on {port} within 20 s: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A peer's process and its temp dir (its log is `log` there): started until it listens on
/// `port`, killed when dropped.
struct Peer {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Peer {
    fn start(mut command: Command, port: u16, what: &str, dir: tempfile::TempDir) -> Peer {
        let log = dir.path().join("log");
        let mut child = command
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        wait_for_port(port, &mut child, what, &log);
        Peer { child, _dir: dir }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Radicale CalDAV server with plain-text htpasswd users.
pub struct Radicale {
    pub port: u16,
    _peer: Peer,
}

impl Radicale {
    pub fn start(users: &[(&str, &str)]) -> Radicale {
        Radicale::start_with(users, None)
    }

    /// Also takes OAuth bearer tokens (`tests/peers/radicale_bearer_auth.py`): valid when the
    /// provider at `introspection_url` says they are active; the user is their `sub`.
    pub fn start_bearer(users: &[(&str, &str)], introspection_url: String) -> Radicale {
        Radicale::start_with(users, Some(introspection_url))
    }

    fn start_with(users: &[(&str, &str)], introspection: Option<String>) -> Radicale {
        let bin = peers_dir().join("radicale");
        assert!(
            bin.exists(),
            "{} is missing: run tests/setup.sh",
            bin.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let users_file = dir.path().join("users");
        std::fs::write(
            &users_file,
            users
                .iter()
                .map(|(u, p)| format!("{u}:{p}\n"))
                .collect::<String>(),
        )
        .unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = {}\nhtpasswd_filename = {}\nhtpasswd_encryption = plain\n\
                 [storage]\nfilesystem_folder = {}\n[rights]\ntype = owner_only\n[logging]\nlevel = warning\n",
                if introspection.is_some() { "radicale_bearer_auth" } else { "htpasswd" },
                users_file.display(),
                dir.path().join("collections").display()
            ),
        )
        .unwrap();
        let mut command = Command::new(bin);
        command.args(["--config", config.to_str().unwrap()]);
        if let Some(url) = introspection {
            command
                .env(
                    "PYTHONPATH",
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers"),
                )
                .env("RADICALE_BEARER_INTROSPECTION", url);
        }
        Radicale {
            port,
            _peer: Peer::start(command, port, "radicale", dir),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

/// A DNS server on loopback answering from a zone file (`tests/peers/dns_zone.py`, dnslib).
pub struct DnsZone {
    pub port: u16,
    _peer: Peer,
}

impl DnsZone {
    /// Serves `zone` (master-file text, absolute names).
    pub fn start(zone: &str) -> DnsZone {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("zone");
        std::fs::write(&file, zone).unwrap();
        let port = free_port();
        let mut command = Command::new(peers_dir().join("python"));
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/dns_zone.py"))
            .arg(port.to_string())
            .arg(&file);
        DnsZone {
            port,
            _peer: Peer::start(command, port, "dns_zone.py", dir),
        }
    }

    /// `IP:PORT`, as settings' `accounts.dnsServer` takes it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// The tests' stand-in for Microsoft Graph's calendar API (`tests/peers/graph_calendar.py`),
/// seeded from `tests/data/graph/calendar.json`; tokens are checked at `introspection_url`.
pub struct GraphCalendar {
    pub port: u16,
    _peer: Peer,
}

impl GraphCalendar {
    pub fn start(introspection_url: String) -> GraphCalendar {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let port = free_port();
        let mut command = Command::new(peers_dir().join("python"));
        command
            .arg(root.join("peers/graph_calendar.py"))
            .arg(port.to_string())
            .arg(root.join("data/graph/calendar.json"))
            .arg(introspection_url);
        let dir = tempfile::tempdir().unwrap();
        GraphCalendar {
            port,
            _peer: Peer::start(command, port, "graph_calendar.py", dir),
        }
    }

    /// The service root an account is configured with.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1.0", self.port)
    }

    /// Every event as the server holds it (a test control, not Graph).
    pub async fn events(&self) -> Vec<serde_json::Value> {
        let url = format!("http://127.0.0.1:{}/_test/events", self.port);
        reqwest::get(url).await.unwrap().json().await.unwrap()
    }

    /// The body of the last PATCH the server took (a test control).
    pub async fn last_patch(&self) -> serde_json::Value {
        let url = format!("http://127.0.0.1:{}/_test/last-patch", self.port);
        reqwest::get(url).await.unwrap().json().await.unwrap()
    }

    /// The next create is made but its answer is lost on the way (a test control).
    pub async fn lose_next_answer(&self) {
        let url = format!("http://127.0.0.1:{}/_test/lose-next-answer", self.port);
        let answer = reqwest::Client::new().post(url).send().await.unwrap();
        assert!(answer.status().is_success(), "{answer:?}");
    }

    /// Changes an event on the server, as the person would in Outlook (a test control).
    pub async fn change(&self, id: &str, fields: serde_json::Value) {
        let url = format!("http://127.0.0.1:{}/_test/events/{id}", self.port);
        let answer = reqwest::Client::new()
            .patch(url)
            .json(&fields)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success(), "{answer:?}");
    }
}

/// The tests' mail server: Dovecot (IMAP, and LMTP delivery into Maildir) plus an SMTP front
/// (aiosmtpd, `tests/peers/smtp_front.py`) that delivers through LMTP. Users log in with
/// `name`/`password`; mail to `name@example.test` lands in `name`'s INBOX.
pub struct MailServer {
    pub imap_port: u16,
    /// IMAP over TLS, with a self-signed certificate (no client trusts it: tests of refusal).
    pub imaps_port: u16,
    pub smtp_port: u16,
    dovecot: Child,
    smtp: Child,
    _dir: tempfile::TempDir,
}

impl MailServer {
    /// `users`: (name, password), for IMAP and SMTP logins alike.
    pub fn start(users: &[(&str, &str)]) -> MailServer {
        MailServer::start_with(users, None)
    }

    /// Also takes OAuth bearer tokens (IMAP XOAUTH2/OAUTHBEARER through Dovecot's `oauth2`
    /// passdb, SMTP XOAUTH2 at the front), valid when `provider` says, by introspection, that
    /// they are active and issued to that user.
    pub fn start_oauth(users: &[(&str, &str)], provider: &OidcProvider) -> MailServer {
        MailServer::start_oauth_at(users, provider.introspection_url())
    }

    /// As [`MailServer::start_oauth`], given the provider's introspection URL.
    pub fn start_oauth_at(users: &[(&str, &str)], introspection_url: String) -> MailServer {
        MailServer::start_with(users, Some(introspection_url))
    }

    fn start_with(users: &[(&str, &str)], introspection: Option<String>) -> MailServer {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["run", "state", "mail"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        // Dovecot refuses uid 0 as a mail owner: as root, mail belongs to nobody.
        let me = std::fs::metadata(root).unwrap().uid();
        let (uid, gid) = if me == 0 {
            (65534, 65534)
        } else {
            (me, std::fs::metadata(root).unwrap().gid())
        };
        if me == 0 {
            let status = Command::new("chown")
                .args(["-R", "65534:65534", root.join("mail").to_str().unwrap()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        let users_file = root.join("users");
        let lines: String = users
            .iter()
            .map(|(u, p)| {
                format!(
                    "{u}:{{PLAIN}}{p}:{uid}:{gid}::{}\n",
                    root.join("mail").join(u).display()
                )
            })
            .collect();
        std::fs::write(&users_file, lines).unwrap();
        let (imap_port, imaps_port, lmtp_port, smtp_port) =
            (free_port(), free_port(), free_port(), free_port());
        let (cert, key) = (root.join("cert.pem"), root.join("key.pem"));
        let made = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=127.0.0.1",
                "-keyout",
            ])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl is not installed: run tests/setup.sh");
        assert!(made.success(), "openssl could not make a test certificate");
        let oauth = match &introspection {
            Some(url) => {
                let conf = root.join("oauth2.conf");
                std::fs::write(
                    &conf,
                    format!(
                        "introspection_mode = post\nintrospection_url = {url}\nusername_attribute = sub\n\
                         active_attribute = active\nactive_value = true\nforce_introspection = yes\n"
                    ),
                )
                .unwrap();
                format!(
                    "auth_mechanisms = plain login xoauth2 oauthbearer\npassdb {{\n  driver = oauth2\n  mechanisms = xoauth2 oauthbearer\n  args = {}\n}}\n",
                    conf.display()
                )
            }
            None => "auth_mechanisms = plain login\n".into(),
        };
        let login_user = if me == 0 {
            "nobody".to_string()
        } else {
            std::env::var("USER").unwrap_or_else(|_| "nobody".into())
        };
        let config = format!(
            "base_dir = {r}/run\nstate_dir = {r}/state\nlog_path = {r}/dovecot.log\nlisten = 127.0.0.1\nprotocols = imap lmtp\nimap_id_log = *\n\
             ssl = yes\nssl_cert = <{cert}\nssl_key = <{key}\ndisable_plaintext_auth = no\n{oauth}default_internal_user = {login_user}\n\
             default_login_user = {login_user}\nfirst_valid_uid = 1\nmail_location = maildir:~/Maildir\n\
             passdb {{\n  driver = passwd-file\n  mechanisms = plain login\n  args = scheme=PLAIN username_format=%n {users}\n}}\n\
             userdb {{\n  driver = passwd-file\n  args = username_format=%n {users}\n}}\n\
             service imap-login {{\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {imap_port}\n  }}\n  inet_listener imaps {{\n    address = 127.0.0.1\n    port = {imaps_port}\n    ssl = yes\n  }}\n}}\n\
             service lmtp {{\n  inet_listener lmtp {{\n    address = 127.0.0.1\n    port = {lmtp_port}\n  }}\n}}\n\
             namespace inbox {{\n  inbox = yes\n  mailbox Sent {{\n    auto = create\n    special_use = \\Sent\n  }}\n}}\n",
            r = root.display(),
            users = users_file.display(),
            cert = cert.display(),
            key = key.display(),
        );
        std::fs::write(root.join("dovecot.conf"), config).unwrap();
        let log = root.join("dovecot.log");
        let mut dovecot = Command::new("dovecot")
            .args(["-F", "-c", root.join("dovecot.conf").to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(root.join("dovecot.stderr")).unwrap())
            .spawn()
            .expect("dovecot is not installed: run tests/setup.sh");
        wait_for_port(imap_port, &mut dovecot, "dovecot", &log);
        let smtp_log = root.join("smtp.log");
        let logins = users
            .iter()
            .map(|(u, p)| format!("{u}:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut smtp = Command::new(peers_dir().join("python"))
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/smtp_front.py"))
            .args([&smtp_port.to_string(), &lmtp_port.to_string(), &logins])
            .args(introspection)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&smtp_log).unwrap())
            .spawn()
            .unwrap();
        wait_for_port(smtp_port, &mut smtp, "the SMTP front", &smtp_log);
        MailServer {
            imap_port,
            imaps_port,
            smtp_port,
            dovecot,
            smtp,
            _dir: dir,
        }
    }
}

impl MailServer {
    /// What Dovecot logged so far (logins, the `ID` clients sent, errors).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("dovecot.log")).unwrap_or_default()
    }

    /// The account settings for `user` here (`user@example.test`, plain, loopback).
    pub fn account(&self, user: &str) -> cowork_store::accounts::AccountConfig {
        use cowork_store::accounts::{AccountConfig, Security};
        AccountConfig::Mail {
            email: format!("{user}@example.test"),
            display_name: None,
            username: user.into(),
            imap_host: "127.0.0.1".into(),
            imap_port: self.imap_port,
            imap_security: Security::Plain,
            smtp_host: "127.0.0.1".into(),
            smtp_port: self.smtp_port,
            smtp_security: Security::Plain,
            auth: Default::default(),
        }
    }
}

impl Drop for MailServer {
    fn drop(&mut self) {
        for child in [&mut self.smtp, &mut self.dovecot] {
            // SIGTERM, so Dovecot's master takes its helper processes down with it.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }
}

/// `sh -c SCRIPT` inside a private D-Bus session whose Secret Service (gnome-keyring) is unlocked
/// first, with `cowork` as `$COWORK`, its data dir at `home` and the person's home at `user`:
/// the OS keyring the CLI stores passwords in, for one test.
pub fn in_private_keyring(script: &str, home: &Path, user: &Path) -> Command {
    let mut cmd = Command::new("dbus-run-session");
    cmd.args([
        "--",
        "sh",
        "-c",
        &format!(
            "printf 'unlock-pw' | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n{script}"
        ),
    ])
    .env("COWORK_HOME", home)
    .env("HOME", user)
    .env("XDG_DATA_HOME", user.join("data"))
    .env("XDG_CONFIG_HOME", user.join("config"))
    .env("XDG_RUNTIME_DIR", user);
    cmd
}

/// A certified OpenID provider (npm `oidc-provider`, `tests/peers/oidc_provider.mjs`): the
/// authorization server of the OAuth tests. `env` adds settings (`OIDC_ACCESS_TTL`, …).
pub struct OidcProvider {
    pub port: u16,
    _peer: Peer,
}

impl OidcProvider {
    pub fn start(env: &[(&str, &str)]) -> OidcProvider {
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
        assert!(
            peers.join("node_modules/oidc-provider").exists(),
            "{} is missing: run tests/setup.sh",
            peers.join("node_modules/oidc-provider").display()
        );
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new("node");
        command
            .arg(peers.join("oidc_provider.mjs"))
            .env("OIDC_PORT", port.to_string())
            .envs(env.iter().copied());
        OidcProvider {
            port,
            _peer: Peer::start(command, port, "oidc-provider", dir),
        }
    }

    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The person's browser: opens `url`, signs in on the provider's login page as `who`, and
    /// follows the redirects back to the loopback address the sign-in listens on.
    pub async fn person_signs_in(url: &reqwest::Url, who: &str) {
        let browser = reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .unwrap();
        let login_page = browser.get(url.clone()).send().await.unwrap();
        let at = login_page.url().clone();
        assert!(
            at.path().starts_with("/interaction/"),
            "the provider's login page, not {at}"
        );
        let mut page = login_page.text().await.unwrap();
        // The login form, then the consent form when the provider shows one: each posted as a
        // person would press its button, until the loopback page answers.
        for _ in 0..3 {
            let Some(action) = page
                .split("action=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .map(str::to_string)
            else {
                break;
            };
            let prompt = if page.contains("value=\"consent\"") {
                "consent"
            } else {
                "login"
            };
            page = browser
                .post(at.join(&action).unwrap())
                .form(&[("prompt", prompt), ("login", who), ("password", "any")])
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
        }
        assert!(page.contains("Cowork has the answer"), "{page}");
    }

    /// The token introspection endpoint (RFC 7662) with the resource servers' client
    /// credentials in it (`resource-server`, see `oidc_provider.mjs`).
    pub fn introspection_url(&self) -> String {
        format!(
            "http://resource-server:rs-secret@127.0.0.1:{}/token/introspection",
            self.port
        )
    }
}
