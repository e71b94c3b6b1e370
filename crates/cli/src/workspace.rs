//! Folders opened as workspaces and the trust the person gives them: `cowork workspace …`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum WorkspaceCmd {
    /// Each open workspace (`--workspace DIR`): trusted or not, what its settings ask for.
    Status,
    /// Shows what trusting DIR would allow (its allow rules, mode, what its repository runs), then asks.
    Trust {
        dir: PathBuf,
        /// Trust without asking (scripts). The review is still printed.
        #[arg(long)]
        yes: bool,
    },
    /// Withdraw trust: the folder's settings only narrow again.
    Untrust { dir: PathBuf },
    /// Every trusted folder.
    List,
}

pub(crate) fn workspace(app: &App, cmd: WorkspaceCmd, json: bool) -> Result<ExitCode, String> {
    let policy = app.scheduler().policy();
    match cmd {
        WorkspaceCmd::Status => {
            let reviews = policy
                .workspaces()
                .iter()
                .map(|w| app.workspace_review(&w.root))
                .collect::<Result<Vec<_>, _>>()?;
            if reviews.is_empty() && !json {
                say!("no workspace is open: pass --workspace DIR");
            }
            print::workspace_reviews(&reviews, json);
        }
        WorkspaceCmd::Trust { dir, yes } => {
            let review = app.workspace_review(&dir)?;
            print::workspace_reviews(std::slice::from_ref(&review), json);
            if review.status.state == cowork_core::policy::TrustState::Trusted {
                esay!("already trusted as it is");
                return Ok(ExitCode::SUCCESS);
            }
            if !yes {
                if !std::io::stdin().is_terminal() {
                    return Err("nobody at a terminal to confirm: read the review above, then run again with --yes".into());
                }
                eprint!(
                    "Trust {} as shown? [y/N] > ",
                    cowork_contract::text::printable_field(
                        &review.status.root.display().to_string()
                    )
                );
                let mut answer = String::new();
                std::io::stdin()
                    .read_line(&mut answer)
                    .map_err(|e| e.to_string())?;
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    esay!("not trusted");
                    return Ok(ExitCode::from(3));
                }
            }
            policy
                .trust_workspace(&review.status.root, &review.status.digest)
                .map_err(|e| e.to_string())?;
            if !json {
                say!(
                    "trusted {} (pinned to its settings as shown: a change to them needs trust again)",
                    review.status.root.display()
                );
            }
        }
        WorkspaceCmd::Untrust { dir } => {
            let was = policy.untrust_workspace(&dir).map_err(|e| e.to_string())?;
            if !json {
                say!(
                    "{}",
                    if was {
                        "no longer trusted: its settings only narrow"
                    } else {
                        "it was not trusted"
                    }
                );
            }
        }
        WorkspaceCmd::List => {
            let list = policy.trusted_workspaces().map_err(|e| e.to_string())?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                );
            } else if list.is_empty() {
                say!("no trusted folders");
            }
            for (root, at) in list.iter().filter(|_| !json) {
                say!(
                    "{}  trusted {at}",
                    cowork_contract::text::printable_field(root)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
