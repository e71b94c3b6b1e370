//! The vault (memory and notes): `cowork vault …`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum VaultCmd {
    /// Remember something (save_to_vault, reviewed and audited).
    Save {
        content: String,
        #[arg(long, default_value = "")]
        title: String,
        /// note (default), fact, preference, decision, learning
        #[arg(long)]
        kind: Option<String>,
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// global (default), workspace:<path>, project:<name>
        #[arg(long)]
        scope: Option<String>,
    },
    /// Search by meaning and words (search_vault, reviewed and audited).
    Search {
        query: String,
        #[arg(short, long, default_value_t = 5)]
        k: usize,
        /// note, memory, fact, preference, decision, learning (repeatable)
        #[arg(long = "kind")]
        kinds: Vec<String>,
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[arg(long)]
        scope: Option<String>,
        /// Updated on or after (YYYY-MM-DD)
        #[arg(long)]
        since: Option<String>,
        /// Updated before (YYYY-MM-DD)
        #[arg(long)]
        until: Option<String>,
        /// hybrid (default), words, meaning
        #[arg(long, default_value = "hybrid")]
        mode: String,
    },
    /// Bring the index in step with the folder (resumable; shows progress), then embed what lacks a vector.
    Reindex,
    /// Entries, vectors per model, problems, memory of the vector cache.
    Stats,
}

pub(crate) async fn vault(
    app: &App,
    cmd: VaultCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let scheduler = app.scheduler();
    match cmd {
        VaultCmd::Save {
            content,
            title,
            kind,
            tags,
            scope,
        } => {
            let args = serde_json::json!({"content": content, "title": title, "kind": kind, "tags": tags, "scope": scope});
            call_and_print(scheduler, "save_to_vault", args, conversation, json).await
        }
        VaultCmd::Search {
            query,
            k,
            kinds,
            tags,
            scope,
            since,
            until,
            mode,
        } => {
            let args = serde_json::json!({"query": query, "k": k, "kinds": kinds, "tags": tags, "scope": scope, "since": since, "until": until, "mode": mode});
            call_and_print(scheduler, "search_vault", args, conversation, json).await
        }
        VaultCmd::Reindex => {
            let mut progress = app.vault().progress();
            let show = tokio::spawn(async move {
                while progress.changed().await.is_ok() {
                    let p = progress.borrow_and_update().clone();
                    if p.total > 0 {
                        eprint!("\r{:?}: {}/{}   ", p.phase, p.done, p.total);
                    }
                }
            });
            let report = app.vault().reindex().await;
            show.abort();
            esay!("");
            let report = report?;
            print::vault_reindex(&report, json);
            Ok(ExitCode::SUCCESS)
        }
        VaultCmd::Stats => {
            print::vault_stats(&app.vault().stats()?, json);
            Ok(ExitCode::SUCCESS)
        }
    }
}
