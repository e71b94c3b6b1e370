//! Toolpacks (MCP servers): `cowork toolpack …` and `cowork mcp servers`.

use super::*;
use cowork_app::StagedToolpack;

#[derive(Subcommand)]
pub(crate) enum ToolpackCmd {
    /// Install from github:owner/repo[@ref], registry:<name> (the MCP Registry), a folder, or a
    /// .mcpb file. Shows a review first.
    Install {
        source: String,
        /// Accept the review without asking (scripts).
        #[arg(long)]
        yes: bool,
        /// Refuse unless the content hashes to this (a pin shared from another toolpacks.json).
        #[arg(long)]
        sha256: Option<String>,
        /// A user_config value, `key=value` (repeatable; JSON values allowed).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// Skip npm/pip (the dependencies are already in the folder).
        #[arg(long)]
        no_deps: bool,
    },
    /// Search the MCP Registry's catalog (offline: its last answer). Install an entry with
    /// `cowork toolpack install registry:<name>`.
    Search {
        /// Words in the server's name (nothing: the whole catalog, a page at a time).
        query: Vec<String>,
        /// The next page: the cursor the previous page printed.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Installed toolpacks with their pins.
    List,
    Enable {
        name: String,
    },
    Disable {
        name: String,
    },
    /// Fetch the source again (same ref), show the permission changes and ask.
    Update {
        name: String,
        #[arg(long)]
        yes: bool,
    },
    /// Turn a pack's sandbox on or off. Off: its server runs with all your rights, and every
    /// call of its tools asks.
    Sandbox {
        name: String,
        #[arg(value_enum)]
        state: OnOff,
    },
    /// Set user_config values: `cowork toolpack configure NAME key=value …`.
    Configure {
        name: String,
        values: Vec<String>,
    },
    Remove {
        name: String,
    },
    /// Restart every enabled toolpack's server from disk.
    Reload,
    /// Turn the servers of a claude_desktop_config.json into toolpacks.
    Import {
        config: PathBuf,
        #[arg(long)]
        yes: bool,
    },
    /// Sign in to a pack's remote server in your browser (the MCP authorization spec).
    Signin {
        name: String,
        /// Print the sign-in address instead of opening the browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the sign-in to a pack's remote server.
    Signout {
        name: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum McpCmd {
    /// State, restarts, tool count, pid and log of each server.
    Servers,
    /// Serve Cowork's tools to another program's model (Claude Desktop, Claude Code, goose,
    /// Zed…) over stdio, or Streamable HTTP on this computer: every call reviewed and audited
    /// as the client's own (`mcp:<client>`), its asks shown in the client's form.
    Serve(crate::serve::ServeArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnOff {
    On,
    Off,
}

/// How long a command waits for toolpack servers (the app's one wait, for every path).
pub(crate) const SETTLE: std::time::Duration = cowork_app::TOOLPACK_SETTLE;

pub(crate) async fn start_toolpacks(app: &App) -> Result<(), String> {
    warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
    let (_, skipped) = app.toolpacks_settled_healthy(SETTLE).await;
    for (name, why) in skipped {
        esay!(
            "warning: toolpack {name} did not start last time ({why}); not waiting for it — `cowork mcp servers` checks it again; `cowork toolpack update {name}` reinstalls it"
        );
    }
    Ok(())
}

/// A server this command waited for that is not up: say so and why, instead of letting its
/// tools look as if they did not exist.
pub(crate) fn warn_not_running(statuses: &[cowork_app::ServerStatus]) {
    for s in statuses
        .iter()
        .filter(|s| s.state != cowork_app::ServerState::Running)
    {
        let why = s
            .last_error
            .as_deref()
            .unwrap_or("it did not finish starting in time");
        esay!(
            "warning: toolpack server {} is {}: {why} — `cowork mcp servers` and its log {}",
            s.name,
            print::server_state(s.state),
            s.log_file.display()
        );
    }
}

pub(crate) fn warn_unstarted(started: Vec<cowork_app::Started>) {
    for s in started {
        if let Some(e) = s.error {
            esay!("warning: toolpack {} not started: {e}", s.name);
        }
    }
}

/// user_config values by key.
type Config = std::collections::BTreeMap<String, serde_json::Value>;

pub(crate) fn parse_config(pairs: &[String]) -> Result<Config, String> {
    pairs
        .iter()
        .map(|pair| {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected key=value"))?;
            // Typed later by the pack's own settings (a string field keeps `8.10` as typed).
            Ok((
                k.trim().to_string(),
                serde_json::Value::String(v.to_string()),
            ))
        })
        .collect()
}

/// Shows the review and asks; `--yes` accepts, and without a terminal nothing is accepted
/// silently (COWORK_APPROVE_FROM_STDIN lets scripts answer).
pub(crate) fn accept(
    review: &cowork_app::ToolpackReview,
    yes: bool,
    json: bool,
) -> Result<bool, String> {
    print::toolpack_review(review, json);
    if yes {
        return Ok(true);
    }
    if !approve::person_at_terminal() {
        return Err(
            "not installed: no terminal to ask — review the above and pass --yes to accept".into(),
        );
    }
    approve::ask_yes(&format!("Install {}? [y/N] > ", review.name))
}

/// Shows the review and installs what the person accepts; `None`: declined, and discarded.
async fn review_then_install(
    app: &App,
    staged: StagedToolpack,
    config: Config,
    install_deps: bool,
    yes: bool,
    json: bool,
) -> Result<Option<String>, String> {
    if !accept(&staged.review, yes, json)? {
        app.discard_toolpack(staged);
        return Ok(None);
    }
    let name = staged.manifest.name.clone();
    app.install_toolpack(staged, config, install_deps)
        .map_err(err)?;
    Ok(Some(name))
}

fn err(e: cowork_app::PackError) -> String {
    e.to_string()
}

/// Waits for the servers to settle and prints them.
async fn print_settled(app: &App, json: bool) {
    print::servers(&app.toolpacks_settled(SETTLE).await, json);
}

pub(crate) async fn toolpack(app: &App, cmd: ToolpackCmd, json: bool) -> Result<ExitCode, String> {
    match cmd {
        ToolpackCmd::Install {
            source,
            yes,
            sha256,
            config,
            no_deps,
        } => {
            let config = parse_config(&config)?;
            let staged = app
                .stage_toolpack(&source, sha256.as_deref())
                .await
                .map_err(err)?;
            return install(app, staged, config, !no_deps, yes, json).await;
        }
        ToolpackCmd::Search { query, cursor } => {
            let page = app
                .search_catalog(&query.join(" "), cursor.as_deref())
                .await
                .map_err(err)?;
            print::catalog(&page, json);
        }
        ToolpackCmd::List => print::toolpacks(&app.toolpack_records().map_err(err)?, json),
        ToolpackCmd::Enable { name } => {
            app.set_toolpack_enabled(&name, true).map_err(err)?;
            print_settled(app, json).await;
        }
        ToolpackCmd::Disable { name } => {
            app.set_toolpack_enabled(&name, false).map_err(err)?;
            if !json {
                say!("disabled {name}");
            }
        }
        ToolpackCmd::Update { name, yes } => return update(app, &name, yes, json).await,
        ToolpackCmd::Sandbox { name, state } => {
            sandbox(app, &name, state == OnOff::On, json).await?
        }
        ToolpackCmd::Configure { name, values } => {
            app.configure_toolpack(&name, parse_config(&values)?)
                .map_err(err)?;
            print_settled(app, json).await;
        }
        ToolpackCmd::Remove { name } => {
            app.remove_toolpack(&name).map_err(err)?;
            if !json {
                say!("removed {name}");
            }
        }
        ToolpackCmd::Reload => {
            warn_unstarted(app.reload_toolpacks().map_err(err)?);
            print_settled(app, json).await;
        }
        ToolpackCmd::Import { config, yes } => import(app, &config, yes, json).await?,
        ToolpackCmd::Signin { name, no_browser } => {
            let sign_in = app.begin_toolpack_sign_in(&name).await?;
            crate::account::open_sign_in(&name, sign_in.url(), no_browser);
            app.finish_toolpack_sign_in(&name, sign_in).await?;
            say!("signed in to {name}'s server; the tokens are in the OS keyring");
            print_settled(app, json).await;
        }
        ToolpackCmd::Signout { name } => {
            if app.sign_out_toolpack(&name)? {
                say!("signed out of {name}'s server: its tokens left the keyring");
            } else {
                say!("{name} was not signed in");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn install(
    app: &App,
    staged: StagedToolpack,
    config: Config,
    install_deps: bool,
    yes: bool,
    json: bool,
) -> Result<ExitCode, String> {
    let Some(name) = review_then_install(app, staged, config, install_deps, yes, json).await?
    else {
        esay!("not installed");
        return Ok(ExitCode::from(3));
    };
    print_settled(app, json).await;
    if !json {
        say!("installed {name}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn update(app: &App, name: &str, yes: bool, json: bool) -> Result<ExitCode, String> {
    let (staged, repair, source) = match app.check_toolpack_update(name).await.map_err(err)? {
        cowork_app::UpdateCheck::UpToDate => {
            say!("{name} is up to date");
            return Ok(ExitCode::SUCCESS);
        }
        cowork_app::UpdateCheck::Changed {
            staged,
            repair,
            source,
        } => (*staged, repair, source),
    };
    if repair {
        esay!("the installed copy of {name} was changed on disk: reinstalling it from {source}");
    }
    let installed = review_then_install(app, staged, Default::default(), true, yes, json).await?;
    if installed.is_none() {
        esay!("not updated");
        return Ok(ExitCode::from(3));
    }
    print_settled(app, json).await;
    Ok(ExitCode::SUCCESS)
}

async fn sandbox(app: &App, name: &str, on: bool, json: bool) -> Result<(), String> {
    app.set_toolpack_sandbox(name, on).map_err(err)?;
    if !json {
        if on {
            say!("{name} runs sandboxed again");
        } else {
            say!(
                "{name} now runs without a sandbox, with all your rights: every call of its tools asks"
            );
        }
    }
    print_settled(app, json).await;
    Ok(())
}

async fn import(app: &App, config: &std::path::Path, yes: bool, json: bool) -> Result<(), String> {
    // The generated packs stay where they were written: they are the installed packs'
    // source, so `toolpack update` can reinstall from them.
    let out = app.home().root().join("toolpacks").join(".imported");
    for dir in cowork_app::import_claude_desktop_config(config, &out).map_err(err)? {
        let staged = app
            .stage_toolpack(&dir.display().to_string(), None)
            .await
            .map_err(err)?;
        match review_then_install(app, staged, Default::default(), false, yes, json).await? {
            Some(name) => say!("imported {name}"),
            None => {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    Ok(())
}

pub(crate) fn mcp(app: &App, cmd: McpCmd, json: bool) -> Result<ExitCode, String> {
    match cmd {
        McpCmd::Servers => print::servers(&app.mcp_servers(), json),
        McpCmd::Serve(_) => unreachable!("`mcp serve` opens the app itself (serve::serve)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `cowork open LINK`: a link installs a toolpack through the same review as `toolpack install`
/// (a link can never skip the question).
pub(crate) async fn open(app: &App, link: &str, json: bool) -> Result<ExitCode, String> {
    let cowork_app::DesktopRequest::InstallToolpack { source } =
        cowork_app::desktop_request(link).map_err(|e| e.to_string())?;
    let install = ToolpackCmd::Install {
        source,
        yes: false,
        sha256: None,
        config: Vec::new(),
        no_deps: false,
    };
    toolpack(app, install, json).await
}
