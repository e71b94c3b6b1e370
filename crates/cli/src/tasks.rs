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
    let code = answer(app, cmd, json).await;
    // A clean close writes the browser's cookies (a login) to the profile now.
    app.close_browser().await;
    code
}

async fn answer(app: &App, cmd: TasksCmd, json: bool) -> Result<ExitCode, String> {
    let coordinator = app
        .scheduler()
        .suspensions()
        .ok_or("this build keeps no suspended tasks")?;
    let task = match cmd {
        TasksCmd::Suspended { all } => {
            print::suspensions(&coordinator.list(all).map_err(|e| e.to_string())?, json);
            return Ok(ExitCode::SUCCESS);
        }
        TasksCmd::Resume { id, wait } => return resume(app, &id, wait, json).await,
        TasksCmd::Cancel { id } => coordinator.cancel(&id, "cli"),
        TasksCmd::Extend { id, minutes } => {
            coordinator.extend(&id, std::time::Duration::from_secs(minutes * 60))
        }
    };
    print::suspensions(&[task.map_err(|e| e.to_string())?], json);
    Ok(ExitCode::SUCCESS)
}

/// Runs the suspended call again; a chain run that waited on it goes on from its next step.
async fn resume(app: &App, id: &str, wait: bool, json: bool) -> Result<ExitCode, String> {
    let scheduler = app.scheduler();
    let mut outcome = scheduler
        .resume(id, Caller::Cli)
        .await
        .map_err(|e| e.to_string())?;
    if wait {
        outcome = wait_while_suspended(app, outcome).await;
    }
    match app.task_resumed(id, &outcome.result).await {
        Some(Ok(report)) => esay!(
            "the chain {} (run {}) went on: {:?}",
            report.chain,
            report.run,
            report.state
        ),
        Some(Err(e)) => esay!("the chain waiting on this task: {e}"),
        None => {}
    }
    print_committed(scheduler, &outcome, json)?;
    Ok(success_if(outcome.result.is_ok()))
}
