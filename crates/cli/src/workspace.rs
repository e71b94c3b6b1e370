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
        WorkspaceCmd::Trust { dir, yes } => return trust(app, &dir, yes, json),
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
        WorkspaceCmd::List => list(app, json)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Shows what trusting `dir` would allow, asks (unless `yes`), and pins the trust to the
/// settings as shown.
fn trust(app: &App, dir: &std::path::Path, yes: bool, json: bool) -> Result<ExitCode, String> {
    let review = app.workspace_review(dir)?;
    print::workspace_reviews(std::slice::from_ref(&review), json);
    if review.status.state == cowork_core::policy::TrustState::Trusted {
        esay!("already trusted as it is");
        return Ok(ExitCode::SUCCESS);
    }
    if !yes && !confirmed(&review.status.root)? {
        esay!("not trusted");
        return Ok(ExitCode::from(3));
    }
    app.scheduler()
        .policy()
        .trust_workspace(&review.status.root, &review.status.digest)
        .map_err(|e| e.to_string())?;
    if !json {
        say!(
            "trusted {} (pinned to its settings as shown: a change to them needs trust again)",
            review.status.root.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The person at the terminal says yes to trusting `root`; nobody there is an error, not a no.
fn confirmed(root: &std::path::Path) -> Result<bool, String> {
    if !std::io::stdin().is_terminal() {
        return Err(
            "nobody at a terminal to confirm: read the review above, then run again with --yes"
                .into(),
        );
    }
    eprint!(
        "Trust {} as shown? [y/N] > ",
        cowork_contract::text::printable_field(&root.display().to_string())
    );
    let answer = approve::read_line()?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn list(app: &App, json: bool) -> Result<(), String> {
    let list = app
        .scheduler()
        .policy()
        .trusted_workspaces()
        .map_err(|e| e.to_string())?;
    if json {
        print::print_json(&list);
        return Ok(());
    }
    if list.is_empty() {
        say!("no trusted folders");
    }
    for (root, at) in &list {
        say!(
            "{}  trusted {at}",
            cowork_contract::text::printable_field(root)
        );
    }
    Ok(())
}
