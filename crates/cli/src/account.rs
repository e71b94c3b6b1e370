//! Mail and calendar accounts (passwords in the OS keyring): `cowork account …`.

use super::*;
use cowork_app::{AccountKind, AccountSettings, Security};

#[derive(Subcommand)]
pub(crate) enum AccountCmd {
    /// Add or replace an account; the password is read from standard input (one line).
    Add {
        /// A short name used in rules and effects, e.g. `work`.
        name: String,
        /// A CalDAV server or principal URL (calendars are discovered).
        #[arg(long, conflicts_with_all = ["email", "imap", "smtp"])]
        caldav: Option<String>,
        /// The address mail is sent from.
        #[arg(long, requires_all = ["imap", "smtp"])]
        email: Option<String>,
        /// IMAP server, HOST or HOST:PORT.
        #[arg(long)]
        imap: Option<String>,
        /// SMTP server, HOST or HOST:PORT.
        #[arg(long)]
        smtp: Option<String>,
        /// Login name (default: the email address).
        #[arg(long)]
        user: Option<String>,
        /// tls (default), starttls, or plain (this computer only).
        #[arg(long, default_value = "tls")]
        security: String,
        #[arg(long)]
        display_name: Option<String>,
    },
    List,
    /// Remove the account, its password from the keyring and its synced calendars.
    Remove {
        name: String,
    },
    /// Log in and read a little, through the scheduler (reviewed and audited).
    Test {
        name: String,
    },
}

pub(crate) fn host_port(
    flag: &str,
    text: &str,
    default_port: u16,
) -> Result<(String, u16), String> {
    match text.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => Ok((
            host.to_string(),
            port.parse()
                .map_err(|_| format!("--{flag} {text:?}: the port must be a number"))?,
        )),
        _ => Ok((text.to_string(), default_port)),
    }
}

pub(crate) async fn account(
    app: &App,
    cmd: AccountCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    match cmd {
        AccountCmd::Add {
            name,
            caldav,
            email,
            imap,
            smtp,
            user,
            security,
            display_name,
        } => {
            let security = parse_security(&security)?;
            let config = match (caldav, email) {
                (Some(url), None) => caldav_account(url, user)?,
                (None, Some(email)) => {
                    let servers = [imap, smtp].map(Option::unwrap_or_default);
                    mail_account(email, servers, user, display_name, security)?
                }
                _ => return Err("give --caldav URL (a calendar account) or --email ADDRESS --imap HOST --smtp HOST (a mail account)".into()),
            };
            add(app, name, config)?;
        }
        AccountCmd::List => list(app, json)?,
        AccountCmd::Remove { name } => {
            if !app.remove_account(&name)? {
                return Err(format!(
                    "no account {name:?}: `cowork account list` shows them"
                ));
            }
            say!("account {name} removed (settings, keyring entry and synced calendars)");
        }
        AccountCmd::Test { name } => {
            let outcome = app.test_account(&name, Caller::Cli, conversation).await?;
            print_committed(app.scheduler(), &outcome, json)?;
            return Ok(success_if(outcome.result.is_ok()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_security(text: &str) -> Result<Security, String> {
    match text {
        "tls" => Ok(Security::Tls),
        "starttls" => Ok(Security::Starttls),
        "plain" => Ok(Security::Plain),
        other => Err(format!("--security {other:?}: use tls, starttls or plain")),
    }
}

fn caldav_account(url: String, user: Option<String>) -> Result<AccountKind, String> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(format!("--caldav {url:?}: give the server's https:// URL"));
    }
    Ok(AccountKind::Caldav {
        url,
        username: user.ok_or("--user is required for a CalDAV account")?,
    })
}

/// A mail account; `[imap, smtp]` are HOST or HOST:PORT (the port defaults by `security`).
fn mail_account(
    email: String,
    [imap, smtp]: [String; 2],
    user: Option<String>,
    display_name: Option<String>,
    security: Security,
) -> Result<AccountKind, String> {
    let (imap_port, smtp_port) = security.default_ports();
    let (imap_host, imap_port) = host_port("imap", &imap, imap_port)?;
    let (smtp_host, smtp_port) = host_port("smtp", &smtp, smtp_port)?;
    Ok(AccountKind::Mail {
        username: user.unwrap_or_else(|| email.clone()),
        email,
        display_name,
        imap_host,
        imap_port,
        imap_security: security,
        smtp_host,
        smtp_port,
        smtp_security: security,
    })
}

/// Saves the account with the password read from standard input (one line).
fn add(app: &App, name: String, config: AccountKind) -> Result<(), String> {
    if std::io::stdin().is_terminal() {
        eprint!("password for {name}: ");
    }
    let password = approve::read_line()?;
    app.add_account(
        &AccountSettings {
            name: name.clone(),
            config,
        },
        password.trim_end_matches(['\r', '\n']),
    )?;
    say!(
        "account {name} saved; its password is in the OS keyring. Check it with `cowork account test {name}`."
    );
    Ok(())
}

fn list(app: &App, json: bool) -> Result<(), String> {
    let accounts = app.accounts()?;
    if json {
        say!("{}", serde_json::to_string(&accounts).unwrap_or_default());
        return Ok(());
    }
    if accounts.is_empty() {
        say!(
            "no accounts: add one with `cowork account add NAME --caldav URL --user NAME` or `--email ADDRESS --imap HOST --smtp HOST`"
        );
    }
    for a in &accounts {
        match &a.config {
            AccountKind::Caldav { url, username } => {
                say!("{}  caldav  {username} @ {url}", a.name)
            }
            AccountKind::Mail {
                email,
                imap_host,
                imap_port,
                smtp_host,
                smtp_port,
                ..
            } => {
                say!(
                    "{}  mail  {email}  imap {imap_host}:{imap_port}  smtp {smtp_host}:{smtp_port}",
                    a.name
                )
            }
        }
    }
    Ok(())
}
