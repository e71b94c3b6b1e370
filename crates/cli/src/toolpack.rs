//! Toolpacks (MCP servers): `cowork toolpack …` and `cowork mcp servers`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum ToolpackCmd {
    /// Install from github:owner/repo[@ref], a folder, or a .mcpb file. Shows a review first.
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
}

#[derive(Subcommand)]
pub(crate) enum McpCmd {
    /// State, restarts, tool count, pid and log of each server.
    Servers,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnOff {
    On,
    Off,
}

/// How long a command waits for toolpack servers: just past a server's own start limit (30 s),
/// so a server that never answers has failed (and is remembered as broken) by the time we stop
/// waiting.
pub(crate) const SETTLE: std::time::Duration = std::time::Duration::from_secs(31);

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
        let state = serde_json::to_value(s.state)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let why = s
            .last_error
            .as_deref()
            .unwrap_or("it did not finish starting in time");
        esay!(
            "warning: toolpack server {} is {state}: {why} — `cowork mcp servers` and its log {}",
            s.name,
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

pub(crate) fn parse_config(
    pairs: &[String],
) -> Result<std::collections::BTreeMap<String, serde_json::Value>, String> {
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
    if !std::io::stdin().is_terminal() && std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_none() {
        return Err(
            "not installed: no terminal to ask — review the above and pass --yes to accept".into(),
        );
    }
    eprint!("Install {}? [y/N] > ", review.name);
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

pub(crate) async fn toolpack(app: &App, cmd: ToolpackCmd, json: bool) -> Result<ExitCode, String> {
    let err = |e: cowork_app::PackError| e.to_string();
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
            if !accept(&staged.review, yes, json)? {
                app.discard_toolpack(staged);
                esay!("not installed");
                return Ok(ExitCode::from(3));
            }
            let name = staged.manifest.name.clone();
            app.install_toolpack(staged, config, !no_deps)
                .map_err(err)?;
            let statuses = app.toolpacks_settled(SETTLE).await;
            print::servers(&statuses, json);
            if !json {
                say!("installed {name}");
            }
        }
        ToolpackCmd::List => print::toolpacks(&app.toolpack_records().map_err(err)?, json),
        ToolpackCmd::Enable { name } => {
            app.set_toolpack_enabled(&name, true).map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Disable { name } => {
            app.set_toolpack_enabled(&name, false).map_err(err)?;
            if !json {
                say!("disabled {name}");
            }
        }
        ToolpackCmd::Update { name, yes } => {
            let (staged, repair, source) =
                match app.check_toolpack_update(&name).await.map_err(err)? {
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
                esay!(
                    "the installed copy of {name} was changed on disk: reinstalling it from {source}"
                );
            }
            if !accept(&staged.review, yes, json)? {
                app.discard_toolpack(staged);
                esay!("not updated");
                return Ok(ExitCode::from(3));
            }
            app.install_toolpack(staged, Default::default(), true)
                .map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Sandbox { name, state } => {
            let on = state == OnOff::On;
            app.set_toolpack_sandbox(&name, on).map_err(err)?;
            if !json {
                if on {
                    say!("{name} runs sandboxed again");
                } else {
                    say!(
                        "{name} now runs without a sandbox, with all your rights: every call of its tools asks"
                    );
                }
            }
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Configure { name, values } => {
            app.configure_toolpack(&name, parse_config(&values)?)
                .map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Remove { name } => {
            app.remove_toolpack(&name).map_err(err)?;
            if !json {
                say!("removed {name}");
            }
        }
        ToolpackCmd::Reload => {
            warn_unstarted(app.reload_toolpacks().map_err(err)?);
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Import { config, yes } => {
            // The generated packs stay where they were written: they are the installed packs'
            // source, so `toolpack update` can reinstall from them.
            let out = app.home().root().join("toolpacks").join(".imported");
            for dir in cowork_app::import_claude_desktop_config(&config, &out).map_err(err)? {
                let staged = app
                    .stage_toolpack(&dir.display().to_string(), None)
                    .await
                    .map_err(err)?;
                if accept(&staged.review, yes, json)? {
                    let name = staged.manifest.name.clone();
                    app.install_toolpack(staged, Default::default(), false)
                        .map_err(err)?;
                    say!("imported {name}");
                } else {
                    app.discard_toolpack(staged);
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
