//! The memory panel: browsing the vault, its index's state, and its settings.

use super::Res;
use crate::Shell;
use tauri::State;

/// The memory panel's browsing: the newest entries (searching is `search_vault` through
/// `call_tool`; edits and deletes are vault tools too, reviewed and audited).
#[tauri::command]
#[specta::specta]
pub fn vault_recent(
    shell: State<'_, Shell>,
    filter: cowork_app::VaultFilter,
    limit: usize,
) -> Res<Vec<cowork_app::VaultEntry>> {
    shell.app.vault().recent(&filter, limit)
}

/// One entry as indexed (the editor's starting text).
#[tauri::command]
#[specta::specta]
pub fn vault_entry(shell: State<'_, Shell>, id: String) -> Res<Option<cowork_app::VaultEntry>> {
    shell.app.vault().get(&id)
}

#[derive(serde::Serialize, specta::Type)]
pub struct VaultStatus {
    stats: cowork_app::VaultStats,
    progress: cowork_app::VaultProgress,
}

/// Entries, model, problems, and what the indexer is doing now.
#[tauri::command]
#[specta::specta]
pub fn vault_status(shell: State<'_, Shell>) -> Res<VaultStatus> {
    let vault = shell.app.vault();
    Ok(VaultStatus {
        stats: vault.stats()?,
        progress: vault.progress().borrow().clone(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn vault_reindex(shell: State<'_, Shell>) -> Res<cowork_app::ReindexReport> {
    shell.app.vault().reindex().await
}

#[tauri::command]
#[specta::specta]
pub fn get_vault_settings(shell: State<'_, Shell>) -> Res<cowork_app::VaultSettings> {
    shell.app.settings::<cowork_app::VaultSettings>()
}

/// Saves the vault settings and switches to their model now; re-embedding runs in the
/// background (its progress is in `vault_status`).
#[tauri::command]
#[specta::specta]
pub fn save_vault_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::VaultSettings,
) -> Res<()> {
    tauri::async_runtime::spawn(shell.app.set_vault_settings(settings)?);
    Ok(())
}
