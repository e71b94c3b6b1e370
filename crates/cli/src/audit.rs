//! The audit log: `cowork audit list | verify | export | head`.

use super::*;
use cowork_core::{Anchor, AuditFilter, AuditLog};

#[derive(Subcommand)]
pub(crate) enum AuditCmd {
    List {
        #[arg(long)]
        tool: Option<String>,
        #[arg(long)]
        decision: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Check the hash chain and its guards; exits 1 naming each problem.
    Verify {
        /// A head written down earlier (`SEQ HASH` from `cowork audit head`): proves the log was
        /// not rewritten whole since (repeatable).
        #[arg(long = "anchor", value_name = "SEQ:HASH")]
        anchors: Vec<String>,
        /// A file of heads, one per line (what `cowork audit head --append FILE` writes).
        #[arg(long)]
        anchor_file: Option<PathBuf>,
    },
    /// Every row, oldest first.
    Export {
        /// One JSON object per line (the only format so far).
        #[arg(long)]
        jsonl: bool,
    },
    /// The last row's number and hash: write it down elsewhere to anchor the chain.
    Head {
        /// Also append it (with the time) to this file — somewhere the data dir's owner cannot
        /// quietly rewrite, ideally (another machine, a synced folder, removable media).
        #[arg(long)]
        append: Option<PathBuf>,
    },
}

pub(crate) fn audit(app: &App, cmd: AuditCmd, json: bool) -> Result<ExitCode, String> {
    let log = app.scheduler().audit();
    match cmd {
        AuditCmd::List {
            tool,
            decision,
            limit,
        } => {
            let filter = AuditFilter {
                tool,
                decision,
                limit: Some(limit),
                ..Default::default()
            };
            print::audit_rows(&log.list(&filter).map_err(|e| e.to_string())?, json);
        }
        AuditCmd::Verify {
            anchors,
            anchor_file,
        } => return verify(log, &anchors, anchor_file.as_deref(), json),
        AuditCmd::Export { jsonl: _ } => export_jsonl(log)?,
        AuditCmd::Head { append } => head(log, append.as_deref(), json)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(
    log: &AuditLog,
    anchors: &[String],
    anchor_file: Option<&std::path::Path>,
    json: bool,
) -> Result<ExitCode, String> {
    let mut anchors = anchors
        .iter()
        .map(|a| a.parse::<Anchor>())
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(file) = anchor_file {
        anchors.extend(Anchor::read_file(file)?);
    }
    let report = log.verify_anchored(&anchors).map_err(|e| e.to_string())?;
    print::verify(&report, json);
    Ok(success_if(report.ok()))
}

/// Every row as one JSON object per line, written as it is read.
fn export_jsonl(log: &AuditLog) -> Result<(), String> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut write_err = None;
    log.for_each(|row| {
        if write_err.is_none()
            && let Err(e) = writeln!(out, "{}", serde_json::to_string(&row).unwrap_or_default())
        {
            write_err = Some(e);
        }
    })
    .map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

fn head(log: &AuditLog, append: Option<&std::path::Path>, json: bool) -> Result<(), String> {
    let (seq, hash) = match append {
        Some(file) => log.append_anchor(file),
        None => log.head(),
    }
    .map_err(|e| e.to_string())?;
    if json {
        say!("{}", serde_json::json!({"seq": seq, "hash": hash}));
    } else {
        say!("{seq} {hash}");
    }
    Ok(())
}
