//! IMAP with `async-imap`: connect (TLS, STARTTLS, or plain to loopback only), log in, search
//! and fetch. Folders are opened with EXAMINE (read-only), so listing and reading never mark
//! mail as read behind the person's back.

use crate::account::MailAccount;
use crate::parse::{self, ReplyBasis, Summary};
use async_imap::Session;
use cowork_contract::{Credential, ToolError};
use cowork_store::accounts::Security;
use futures::TryStreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug> Stream for T {}

pub type ImapSession = Session<Box<dyn Stream>>;

const TIMEOUT: Duration = Duration::from_secs(30);

pub fn tls_config() -> Arc<tokio_rustls::rustls::ClientConfig> {
    let roots = tokio_rustls::rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    Arc::new(
        tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

async fn tls(host: &str, stream: TcpStream) -> Result<Box<dyn Stream>, String> {
    let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| format!("{host}: {e}"))?;
    let connector = tokio_rustls::TlsConnector::from(tls_config());
    let stream = connector
        .connect(name, stream)
        .await
        .map_err(|e| format!("TLS with {host}: {e}"))?;
    Ok(Box::new(stream))
}

fn unreachable(account: &MailAccount, e: impl std::fmt::Display) -> ToolError {
    ToolError::transient(format!(
        "mail account {:?}: cannot reach the IMAP server {}:{} ({e})",
        account.name, account.imap_host, account.imap_port
    ))
}

/// A logged-in session. A refused login names the account and how to fix it.
pub async fn connect(account: &MailAccount) -> Result<ImapSession, ToolError> {
    let attempt = async {
        let tcp = TcpStream::connect((account.imap_host.as_str(), account.imap_port))
            .await
            .map_err(|e| unreachable(account, e))?;
        let stream: Box<dyn Stream> = match account.imap_security {
            Security::Tls => tls(&account.imap_host, tcp)
                .await
                .map_err(|e| unreachable(account, e))?,
            Security::Plain => Box::new(tcp),
            Security::Starttls => {
                let mut client = async_imap::Client::new(tcp);
                client
                    .read_response()
                    .await
                    .map_err(|e| unreachable(account, e))?;
                client
                    .run_command_and_check_ok("STARTTLS", None)
                    .await
                    .map_err(|e| unreachable(account, format!("STARTTLS: {e}")))?;
                tls(&account.imap_host, client.into_inner())
                    .await
                    .map_err(|e| unreachable(account, e))?
            }
        };
        let mut client = async_imap::Client::new(stream);
        if account.imap_security != Security::Starttls {
            client
                .read_response()
                .await
                .map_err(|e| unreachable(account, e))?;
        }
        let session = match &account.credential {
            Credential::Password(password) => client.login(&account.username, password).await,
            Credential::Bearer(token) => {
                let xoauth2 = Xoauth2::new(&account.username, token);
                client.authenticate("XOAUTH2", xoauth2).await
            }
        };
        let mut session = session.map_err(|(e, _)| refused(account, e))?;
        identify(&mut session).await;
        Ok(session)
    };
    tokio::time::timeout(TIMEOUT, attempt)
        .await
        .map_err(|_| unreachable(account, "timed out"))?
}

/// Says who the client is (RFC 2971 `ID`) to a server that asks for it: NetEase's (163, 126,
/// yeah.net) will not open a folder for a client that has not ("Unsafe Login"); the others
/// take it as information. Best effort: a server that fails it still serves the session.
async fn identify(session: &mut ImapSession) {
    let asks = session
        .capabilities()
        .await
        .is_ok_and(|caps| caps.has_str("ID"));
    if asks {
        let me = [
            ("name", Some("Cowork")),
            ("version", Some(env!("CARGO_PKG_VERSION"))),
            ("vendor", Some("Cowork")),
        ];
        if let Err(e) = session.id(me).await {
            tracing::debug!("IMAP ID refused: {e}");
        }
    }
}

fn refused(account: &MailAccount, e: async_imap::error::Error) -> ToolError {
    let fix = match account.credential {
        Credential::Password(_) => "check the user name and password",
        Credential::Bearer(_) => "sign in to the account again, then check it",
    };
    ToolError::failed(format!(
        "mail account {:?}: the IMAP server refused the login for {:?} ({e}) — {fix} with `cowork account test {}`",
        account.name, account.username, account.name
    ))
}

/// SASL XOAUTH2 (Google's and Microsoft's IMAP/SMTP OAuth mechanism): the user and the bearer
/// token in one initial response; a refusal arrives as a challenge (a JSON error) answered
/// with an empty line, after which the server says NO. `async-imap` runs the exchange; the
/// message format is the only part here.
struct Xoauth2 {
    initial: Option<String>,
}

impl Xoauth2 {
    fn new(user: &str, token: &str) -> Xoauth2 {
        Xoauth2 {
            initial: Some(format!("user={user}\x01auth=Bearer {token}\x01\x01")),
        }
    }
}

impl async_imap::Authenticator for Xoauth2 {
    type Response = String;

    fn process(&mut self, _challenge: &[u8]) -> String {
        self.initial.take().unwrap_or_default()
    }
}

fn imap_error(account: &MailAccount, what: &str, e: async_imap::error::Error) -> ToolError {
    match e {
        async_imap::error::Error::No(m) | async_imap::error::Error::Bad(m) => {
            ToolError::failed(format!(
                "mail account {:?}: {what}: the server said {m}",
                account.name
            ))
        }
        other => ToolError::transient(format!("mail account {:?}: {what}: {other}", account.name)),
    }
}

/// IMAP quoted string (RFC 3501 §4.3): quotes and backslashes escaped, no line breaks.
pub fn quote(text: &str) -> String {
    let clean: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    format!("\"{}\"", clean.replace('\\', "\\\\").replace('"', "\\\""))
}

#[derive(Default)]
pub struct Criteria<'a> {
    pub unread_only: bool,
    pub from: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub text: Option<&'a str>,
    pub since: Option<chrono::NaiveDate>,
}

impl Criteria<'_> {
    fn query(&self) -> String {
        let mut parts = vec!["ALL".to_string()];
        if self.unread_only {
            parts.push("UNSEEN".into());
        }
        if let Some(from) = self.from {
            parts.push(format!("FROM {}", quote(from)));
        }
        if let Some(subject) = self.subject {
            parts.push(format!("SUBJECT {}", quote(subject)));
        }
        if let Some(text) = self.text {
            parts.push(format!("TEXT {}", quote(text)));
        }
        if let Some(since) = self.since {
            parts.push(format!("SINCE {}", since.format("%-d-%b-%Y")));
        }
        parts.join(" ")
    }
}

/// The newest `limit` messages matching, newest first, and how many matched in all.
pub async fn check(
    session: &mut ImapSession,
    account: &MailAccount,
    folder: &str,
    criteria: &Criteria<'_>,
    limit: usize,
) -> Result<(Vec<Summary>, usize), ToolError> {
    session
        .examine(folder)
        .await
        .map_err(|e| imap_error(account, &format!("open folder {folder:?}"), e))?;
    let mut uids: Vec<u32> = session
        .uid_search(criteria.query())
        .await
        .map_err(|e| imap_error(account, "search", e))?
        .into_iter()
        .collect();
    let total = uids.len();
    uids.sort_unstable();
    let newest: Vec<u32> = uids.iter().rev().take(limit).copied().collect();
    if newest.is_empty() {
        return Ok((Vec::new(), total));
    }
    let set = newest
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let fetched: Vec<_> = session
        .uid_fetch(
            &set,
            "(UID FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)])",
        )
        .await
        .map_err(|e| imap_error(account, "fetch", e))?
        .try_collect()
        .await
        .map_err(|e| imap_error(account, "fetch", e))?;
    let mut out: Vec<Summary> = fetched
        .iter()
        .filter_map(|f| {
            let unread = !f
                .flags()
                .any(|flag| matches!(flag, async_imap::types::Flag::Seen));
            Some(parse::summary(
                f.uid?,
                f.header().unwrap_or_default(),
                unread,
                f.size.unwrap_or(0),
            ))
        })
        .collect();
    out.sort_by_key(|m| std::cmp::Reverse(m.uid));
    Ok((out, total))
}

/// One whole message (not marked read unless `mark_read`).
pub async fn read(
    session: &mut ImapSession,
    account: &MailAccount,
    folder: &str,
    uid: u32,
    mark_read: bool,
) -> Result<(parse::Message, ReplyBasis), ToolError> {
    if mark_read {
        session
            .select(folder)
            .await
            .map_err(|e| imap_error(account, &format!("open folder {folder:?}"), e))?;
    } else {
        session
            .examine(folder)
            .await
            .map_err(|e| imap_error(account, &format!("open folder {folder:?}"), e))?;
    }
    let fetched: Vec<_> = session
        .uid_fetch(
            uid.to_string(),
            if mark_read {
                "(UID BODY[])"
            } else {
                "(UID BODY.PEEK[])"
            },
        )
        .await
        .map_err(|e| imap_error(account, "fetch", e))?
        .try_collect()
        .await
        .map_err(|e| imap_error(account, "fetch", e))?;
    let raw = fetched
        .iter()
        .find(|f| f.uid == Some(uid))
        .and_then(|f| f.body())
        .ok_or_else(|| {
            ToolError::failed(format!(
                "no message with uid {uid} in {folder:?} of {:?}: list them with email_check",
                account.name
            ))
        })?;
    parse::message(uid, folder, raw).map_err(ToolError::failed)
}

/// Files a sent message into the Sent folder (best effort: a server without one still sent it).
pub async fn append_sent(account: &MailAccount, raw: &[u8]) -> Result<(), ToolError> {
    let mut session = connect(account).await?;
    let result = session
        .append("Sent", Some("(\\Seen)"), None, raw)
        .await
        .map_err(|e| imap_error(account, "file into Sent", e));
    let _ = session.logout().await;
    result
}
