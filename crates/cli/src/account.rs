//! Mail and calendar accounts (passwords in the OS keyring): `cowork account …`.

use super::*;
use cowork_app::{AccountKind, AccountSettings, Auth, Security};

#[derive(Subcommand)]
pub(crate) enum AccountCmd {
    /// Add or replace an account. `--email ADDRESS` alone finds the servers (built-in settings
    /// for the big providers, else the domain's autoconfig, Thunderbird's ISP database, or a
    /// guess) and shows them to confirm; then the provider's sign-in opens, or the password is
    /// read from standard input (one line).
    Add(Box<AddArgs>),
    List,
    /// Sign in to an OAuth account in your browser (again, after a sign-out or when the server
    /// asks); tasks waiting for it go on.
    Signin {
        name: String,
        #[arg(long)]
        no_browser: bool,
    },
    /// Sign out: the server revokes Cowork's access and the tokens leave the keyring.
    Signout {
        name: String,
    },
    /// Remove the account, its password from the keyring and its synced calendars.
    Remove {
        name: String,
    },
    /// Log in and read a little, through the scheduler (reviewed and audited).
    Test {
        name: String,
    },
}

const GRAPH_ROOT: &str = "https://graph.microsoft.com/v1.0";

#[derive(clap::Args)]
pub(crate) struct AddArgs {
    /// A short name used in rules and effects, e.g. `work`.
    name: String,
    /// A CalDAV server or principal URL (calendars are discovered).
    #[arg(long, conflicts_with_all = ["email", "imap", "smtp"])]
    caldav: Option<String>,
    /// A Microsoft 365 calendar through Microsoft Graph, at this service root (default
    /// https://graph.microsoft.com/v1.0); it signs in with --oauth.
    #[arg(long, num_args = 0..=1, default_missing_value = GRAPH_ROOT,
          conflicts_with_all = ["caldav", "imap", "smtp"], requires = "oauth")]
    microsoft_graph: Option<String>,
    /// The address mail is sent from.
    #[arg(long)]
    email: Option<String>,
    /// With --email alone: add the provider's calendars (Google's CalDAV, Microsoft 365
    /// through Graph, iCloud…) as this account, rather than its mail.
    #[arg(long, requires = "email")]
    calendar: bool,
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
    #[command(flatten)]
    oauth: OauthArgs,
    /// Use the settings found for the address without asking.
    #[arg(long)]
    yes: bool,
}

/// Signing in with OAuth 2 instead of a password (the provider's own sign-in page).
#[derive(clap::Args)]
pub(crate) struct OauthArgs {
    /// The authorization server (issuer URL) to sign in at; no password is asked.
    #[arg(long)]
    oauth: Option<String>,
    /// The OAuth client ID Cowork is registered as at that server.
    #[arg(long, requires = "oauth")]
    client_id: Option<String>,
    /// A scope to ask for (repeatable).
    #[arg(long = "scope", requires = "oauth")]
    scopes: Vec<String>,
    /// Print the sign-in address instead of opening the browser (over SSH, say).
    #[arg(long)]
    no_browser: bool,
}

impl OauthArgs {
    fn auth(&self) -> Result<Auth, String> {
        let Some(issuer) = &self.oauth else {
            return Ok(Auth::Password);
        };
        Ok(Auth::Oauth {
            issuer: issuer.clone(),
            client_id: self
                .client_id
                .clone()
                .ok_or("--oauth needs --client-id (the ID Cowork is registered as there)")?,
            scopes: self.scopes.clone(),
            endpoints: None,
        })
    }
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
        AccountCmd::Add(add_args) => {
            let AddArgs {
                name,
                caldav,
                microsoft_graph,
                email,
                calendar,
                imap,
                smtp,
                user,
                security,
                display_name,
                oauth,
                yes,
            } = *add_args;
            let security = parse_security(&security)?;
            let auth = oauth.auth()?;
            let config = match (caldav, microsoft_graph, email, imap, smtp) {
                (Some(url), None, None, ..) => caldav_account(url, user, auth)?,
                (None, Some(url), email, None, None) => AccountKind::MicrosoftGraph {
                    url,
                    username: user.or(email).ok_or("--microsoft-graph needs --user ADDRESS (shown with the account)")?,
                    auth,
                },
                (None, None, Some(email), None, None) if oauth.oauth.is_none() => {
                    found_setup(app, &email, user, display_name, calendar, yes).await?
                }
                (None, None, Some(email), Some(imap), Some(smtp)) => {
                    mail_account(email, [imap, smtp], user, display_name, security, auth)?
                }
                _ => return Err("give --caldav URL or --microsoft-graph (a calendar account), --email ADDRESS (its servers are looked up; --calendar for its calendars), or --email ADDRESS --imap HOST --smtp HOST".into()),
            };
            add(app, name, config, oauth.no_browser).await?;
        }
        AccountCmd::Signin { name, no_browser } => sign_in(app, &name, no_browser).await?,
        AccountCmd::Signout { name } => match app.sign_out(&name).await? {
            cowork_app::SignedOut::Revoked => say!(
                "signed out of {name}: the tokens left the keyring and the server revoked Cowork's access"
            ),
            cowork_app::SignedOut::NotRevoked(why) => say!(
                "signed out of {name}: the tokens left the keyring, but the server did not revoke Cowork's access ({why}) — remove Cowork in the account's own security settings to end it there"
            ),
            cowork_app::SignedOut::WasNot => say!("{name} was not signed in"),
        },
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

fn caldav_account(url: String, user: Option<String>, auth: Auth) -> Result<AccountKind, String> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(format!("--caldav {url:?}: give the server's https:// URL"));
    }
    Ok(AccountKind::Caldav {
        url,
        username: user.ok_or("--user is required for a CalDAV account")?,
        auth,
    })
}

/// A mail account; `[imap, smtp]` are HOST or HOST:PORT (the port defaults by `security`).
fn mail_account(
    email: String,
    [imap, smtp]: [String; 2],
    user: Option<String>,
    display_name: Option<String>,
    security: Security,
    auth: Auth,
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
        auth,
    })
}

/// The settings found for `email` (its mail, or with `calendar` its calendars), each step
/// shown, confirmed by the person (or `--yes`).
async fn found_setup(
    app: &App,
    email: &str,
    user: Option<String>,
    display_name: Option<String>,
    calendar: bool,
    yes: bool,
) -> Result<AccountKind, String> {
    say!("looking up the settings for {email}…");
    let found = app
        .find_mail_setup(email, &mut |step| say!("  {step}"))
        .await?;
    let mut config = if calendar {
        found.calendar.clone().ok_or_else(|| {
            format!("no calendar settings known for {email} (a provider whose calendars take only its sign-in needs accounts.oauthClients, docs/accounts.md): add one with --caldav URL --user NAME")
        })?
    } else {
        found.config.clone()
    };
    match &mut config {
        AccountKind::Mail {
            username,
            display_name: shown,
            ..
        } => {
            *username = user.unwrap_or(std::mem::take(username));
            *shown = display_name;
        }
        AccountKind::Caldav { username, .. } | AccountKind::MicrosoftGraph { username, .. } => {
            *username = user.unwrap_or(std::mem::take(username));
        }
    }
    say!("{} — found by {}:", found.provider, found.found_by);
    for line in describe(&config) {
        say!("  {line}");
    }
    if let Some((note, page)) = &found.password_note {
        say!(
            "  note: {note}{}",
            page.as_ref().map(|p| format!(" ({p})")).unwrap_or_default()
        );
    }
    if !calendar && found.calendar.is_some() {
        say!(
            "  its calendars can be added too: cowork account add NAME --email {email} --calendar"
        );
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err("confirm the settings above with --yes (or run this in a terminal)".into());
        }
        if !approve::ask_yes("Use these settings? [y/N] ")? {
            return Err("not added: give the servers yourself with --imap and --smtp".into());
        }
    }
    Ok(config)
}

/// How an account signs in, in words.
fn sign_in_words(username: &str, auth: &Auth) -> String {
    match auth {
        Auth::Password => format!("with a password, as {username}"),
        Auth::Oauth { issuer, .. } => {
            format!("as {username}, in your browser at {issuer} (OAuth; no password here)")
        }
    }
}

/// The settings in words: where mail is read and sent, or where the calendars are, and how the
/// account signs in.
fn describe(config: &AccountKind) -> Vec<String> {
    let words = |security: &Security| match security {
        Security::Tls => "TLS",
        Security::Starttls => "STARTTLS",
        Security::Plain => "unencrypted: this computer only",
    };
    match config {
        AccountKind::Mail {
            username,
            imap_host,
            imap_port,
            imap_security,
            smtp_host,
            smtp_port,
            smtp_security,
            auth,
            ..
        } => vec![
            format!(
                "read mail  IMAP {imap_host}:{imap_port} ({})",
                words(imap_security)
            ),
            format!(
                "send mail  SMTP {smtp_host}:{smtp_port} ({})",
                words(smtp_security)
            ),
            format!("sign in    {}", sign_in_words(username, auth)),
        ],
        AccountKind::Caldav {
            url,
            username,
            auth,
        } => vec![
            format!("calendars  CalDAV at {url}"),
            format!("sign in    {}", sign_in_words(username, auth)),
        ],
        AccountKind::MicrosoftGraph {
            url,
            username,
            auth,
        } => vec![
            format!("calendars  Microsoft 365 through Microsoft Graph ({url})"),
            format!("sign in    {}", sign_in_words(username, auth)),
        ],
    }
}

/// Saves the account: with its password read from standard input (one line), or signed in
/// through the provider's page.
async fn add(app: &App, name: String, config: AccountKind, no_browser: bool) -> Result<(), String> {
    let oauth = matches!(config.auth(), Auth::Oauth { .. });
    let password = if oauth {
        None
    } else {
        if std::io::stdin().is_terminal() {
            eprint!("password for {name}: ");
        }
        Some(approve::read_line()?)
    };
    let account = AccountSettings {
        name: name.clone(),
        config,
    };
    app.add_account(
        &account,
        password
            .as_deref()
            .map(|p| p.trim_end_matches(['\r', '\n'])),
    )?;
    if oauth {
        say!("account {name} saved; now sign in to it.");
        return sign_in(app, &name, no_browser).await;
    }
    say!(
        "account {name} saved; its password is in the OS keyring. Check it with `cowork account test {name}`."
    );
    Ok(())
}

/// Shows the sign-in address and opens the person's browser at it (unless told not to).
pub(crate) fn open_sign_in(name: &str, url: &str, no_browser: bool) {
    say!("Sign in to {name} in your browser at:\n  {url}");
    if !no_browser && open::that_detached(url).is_err() {
        say!("(no browser could be opened here: open the address above yourself)");
    }
}

/// The person signs in in their browser; the tokens go to the keyring.
async fn sign_in(app: &App, name: &str, no_browser: bool) -> Result<(), String> {
    let sign_in = app.begin_sign_in(name).await?;
    open_sign_in(name, sign_in.url().as_str(), no_browser);
    let minutes = cowork_app::SIGN_IN_TIMEOUT.as_secs() / 60;
    say!("waiting for the sign-in to finish (up to {minutes} minutes)…");
    app.finish_sign_in(sign_in).await?;
    say!(
        "signed in to {name}; the tokens are in the OS keyring. Check it with `cowork account test {name}`."
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
            AccountKind::Caldav { url, username, .. } => {
                say!("{}  caldav  {username} @ {url}", a.name)
            }
            AccountKind::MicrosoftGraph { url, username, .. } => {
                say!("{}  microsoft 365 calendar  {username} @ {url}", a.name)
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
