//! Mail and calendar accounts (passwords in the OS keyring): `cowork account …`.

use super::*;

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
    use cowork_app::{AccountKind, AccountSettings, Security};
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
            let security = match security.as_str() {
                "tls" => Security::Tls,
                "starttls" => Security::Starttls,
                "plain" => Security::Plain,
                other => return Err(format!("--security {other:?}: use tls, starttls or plain")),
            };
            let config = match (caldav, email) {
                (Some(url), None) => {
                    if !(url.starts_with("https://") || url.starts_with("http://")) {
                        return Err(format!("--caldav {url:?}: give the server's https:// URL"));
                    }
                    AccountKind::Caldav { url, username: user.ok_or("--user is required for a CalDAV account")? }
                }
                (None, Some(email)) => {
                    let (imap_port, smtp_port) = security.default_ports();
                    let (imap_host, imap_port) = host_port("imap", imap.as_deref().unwrap_or_default(), imap_port)?;
                    let (smtp_host, smtp_port) = host_port("smtp", smtp.as_deref().unwrap_or_default(), smtp_port)?;
                    AccountKind::Mail {
                        username: user.unwrap_or_else(|| email.clone()),
                        email,
                        display_name,
                        imap_host,
                        imap_port,
                        imap_security: security,
                        smtp_host,
                        smtp_port,
                        smtp_security: security,
                    }
                }
                _ => return Err("give --caldav URL (a calendar account) or --email ADDRESS --imap HOST --smtp HOST (a mail account)".into()),
            };
            if std::io::stdin().is_terminal() {
                eprint!("password for {name}: ");
            }
            let mut password = String::new();
            std::io::stdin()
                .read_line(&mut password)
                .map_err(|e| e.to_string())?;
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
        }
        AccountCmd::List => {
            let accounts = app.accounts()?;
            if json {
                say!("{}", serde_json::to_string(&accounts).unwrap_or_default());
            } else if accounts.is_empty() {
                say!(
                    "no accounts: add one with `cowork account add NAME --caldav URL --user NAME` or `--email ADDRESS --imap HOST --smtp HOST`"
                );
            }
            for a in accounts.iter().filter(|_| !json) {
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
        }
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
            app.scheduler().flush().map_err(|e| e.to_string())?;
            print::outcome(&outcome, json);
            return Ok(if outcome.result.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}
