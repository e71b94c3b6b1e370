//! The assistant's staged file changes: `cowork changes list | diff | apply | reject | rollback`.
//! The review side of the shadow FS runs as tools: reviewed and audited like any call.

use super::*;
use serde_json::json;

#[derive(Subcommand)]
pub(crate) enum ChangesCmd {
    /// Staged and settled changes, newest first.
    List {
        /// staged | applied | rejected | rolled_back
        #[arg(long)]
        status: Option<String>,
    },
    /// One change's diff, with numbered hunks.
    Diff { id: i64 },
    /// Write staged changes to disk (asks first); `--hunks 1,3` applies part of one change.
    Apply {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long, value_delimiter = ',')]
        hunks: Option<Vec<usize>>,
    },
    /// Drop a staged change.
    Reject { id: i64 },
    /// Put back the exact previous bytes of an applied change.
    Rollback { id: i64 },
}

pub(crate) async fn changes(
    app: &App,
    cmd: ChangesCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    for (tool, args) in calls(cmd)? {
        let code = call_and_print(app.scheduler(), tool, args, conversation, json).await?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The tool calls a command makes, in order: one per change.
fn calls(cmd: ChangesCmd) -> Result<Vec<(&'static str, serde_json::Value)>, String> {
    Ok(match cmd {
        ChangesCmd::List { status } => vec![("changes_list", json!({"status": status}))],
        ChangesCmd::Diff { id } => vec![("changes_diff", json!({"id": id}))],
        ChangesCmd::Apply { ids, hunks } => {
            if hunks.is_some() && ids.len() > 1 {
                return Err("--hunks applies to one change: give one id".into());
            }
            ids.iter()
                .map(|id| ("changes_apply", json!({"id": id, "hunks": hunks})))
                .collect()
        }
        ChangesCmd::Reject { id } => vec![("changes_reject", json!({"id": id}))],
        ChangesCmd::Rollback { id } => vec![("changes_rollback", json!({"id": id}))],
    })
}
