//! Keeps the index in step with edits made outside the app (Obsidian, an editor, a sync
//! client): file events, debounced, re-index just the paths they name. A rename arrives as
//! its old and new paths: the old row goes, the new file comes in (keeping its front-matter id).

use crate::Vault;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// How long the watcher waits for a burst of writes (a save, a sync) to settle.
const SETTLE: Duration = Duration::from_millis(300);

/// Watches the vault folder until the returned future is dropped. Starts with a re-index, so
/// what changed while the app was closed is picked up too.
pub async fn watch(vault: Arc<Vault>) -> Result<(), String> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<DebounceEventResult>();
    let mut debouncer = new_debouncer(SETTLE, None, move |result: DebounceEventResult| {
        let _ = tx.send(result);
    })
    .map_err(|e| format!("cannot watch the vault folder: {e}"))?;
    debouncer
        .watch(vault.root(), RecursiveMode::Recursive)
        .map_err(|e| format!("cannot watch {}: {e}", vault.root().display()))?;
    if let Err(e) = vault.reindex().await {
        tracing::warn!("vault: re-index at start failed: {e}");
    }
    while let Some(result) = rx.recv().await {
        let events = match result {
            Ok(events) => events,
            Err(errors) => {
                // Lost events (e.g. an inotify queue overflow): only a full pass is safe.
                tracing::warn!(
                    "vault: watcher errors ({}), re-indexing the folder",
                    errors.len()
                );
                if let Err(e) = vault.reindex().await {
                    tracing::warn!("vault: re-index failed: {e}");
                }
                continue;
            }
        };
        let paths: BTreeSet<String> = events
            .iter()
            .flat_map(|e| e.paths.iter())
            .filter_map(|p| vault.rel(p))
            .collect();
        // A folder moved or deleted names only the folder: walk it all (unchanged files are skipped).
        // (Our own atomic writes show as `.tmp` files beside their target: those are not folders.)
        if paths
            .iter()
            .any(|rel| !rel.ends_with(".md") && !rel.ends_with(".tmp") && !crate::is_hidden(rel))
        {
            if let Err(e) = vault.reindex().await {
                tracing::warn!("vault: re-index failed: {e}");
            }
            continue;
        }
        for rel in paths {
            if let Err(e) = vault.index_path(&rel).await {
                tracing::warn!(path = %rel, "vault: {e}");
            }
        }
    }
    drop(debouncer);
    Ok(())
}
