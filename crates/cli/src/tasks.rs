//! Suspended tasks (a login wall, a code): `cowork tasks list | resume | cancel`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum TasksCmd {
    /// Suspended tasks, oldest first (`--all`: settled ones too).
    Suspended {
        #[arg(long)]
        all: bool,
    },
    /// Run the suspended call again (reviewed and audited like any call).
    Resume {
        id: String,
        /// If it suspends again, wait and go on by itself once its condition holds (e.g. you
        /// logged in in the browser window it shows).
        #[arg(long)]
        wait: bool,
    },
    Cancel {
        id: String,
    },
    /// More time before it times out.
    Extend {
        id: String,
        #[arg(long, default_value_t = 30)]
        minutes: u64,
    },
}

pub(crate) async fn tasks(app: &App, cmd: TasksCmd, json: bool) -> Result<ExitCode, String> {
    let scheduler = app.scheduler();
    let coordinator = scheduler
        .suspensions()
        .ok_or("this build keeps no suspended tasks")?;
    match cmd {
        TasksCmd::Suspended { all } => {
            print::suspensions(&coordinator.list(all).map_err(|e| e.to_string())?, json)
        }
        TasksCmd::Resume { id, wait } => {
            let mut outcome = scheduler
                .resume(&id, Caller::Cli)
                .await
                .map_err(|e| e.to_string())?;
            if wait {
                outcome = wait_while_suspended(app, outcome).await;
            }
            // A chain run that waited on this task goes on from its next step.
            match app.task_resumed(&id, &outcome.result).await {
                Some(Ok(report)) => esay!(
                    "the chain {} (run {}) went on: {:?}",
                    report.chain,
                    report.run,
                    report.state
                ),
                Some(Err(e)) => esay!("the chain waiting on this task: {e}"),
                None => {}
            }
            scheduler.flush().map_err(|e| e.to_string())?;
            print::outcome(&outcome, json);
            return Ok(if outcome.result.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        TasksCmd::Cancel { id } => print::suspensions(
            &[coordinator.cancel(&id, "cli").map_err(|e| e.to_string())?],
            json,
        ),
        TasksCmd::Extend { id, minutes } => print::suspensions(
            &[coordinator
                .extend(&id, std::time::Duration::from_secs(minutes * 60))
                .map_err(|e| e.to_string())?],
            json,
        ),
    }
    Ok(ExitCode::SUCCESS)
}
