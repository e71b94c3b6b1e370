//! Settings → This computer: the doctor's findings and the downloaded assets (models, the
//! browser driver).

use super::Res;
use crate::Shell;
use crate::events::{AssetProgress, push};
use tauri::{AppHandle, Runtime, State};

/// Settings → This computer: what works here and what is missing, with each fix (the same
/// checks as `cowork doctor`).
#[tauri::command]
#[specta::specta]
pub async fn doctor(shell: State<'_, Shell>) -> Res<Vec<cowork_app::doctor::Finding>> {
    let home = shell.app.home().root().to_path_buf();
    cowork_app::doctor::examine(Some(home), &cowork_app::doctor::Place::here())
        .await
        .map_err(|e| e.to_string())
}

/// Settings → This computer: the models and the browser driver Cowork downloads, each with
/// whether it is here and what fetching it costs.
#[tauri::command]
#[specta::specta]
pub fn list_assets() -> Res<Vec<cowork_app::assets::AssetStatus>> {
    cowork_app::assets::list().map_err(|e| e.to_string())
}

/// Downloads one asset, pushing `asset-progress` events; answers when it is ready or failed.
#[tauri::command]
#[specta::specta]
pub async fn fetch_asset<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    id: String,
) -> Res<()> {
    let asset = cowork_app::assets::find(&id)
        .ok_or_else(|| cowork_app::assets::AssetError::Unknown(id.clone()).to_string())?;
    let home = shell.app.home().root().to_path_buf();
    let fetcher = cowork_app::assets::fetcher(Some(home), None)?;
    fetcher
        .fetch(asset, &|progress| {
            push(&handle, AssetProgress(progress.clone()));
        })
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn get_asset_settings(shell: State<'_, Shell>) -> Res<cowork_app::assets::AssetSettings> {
    shell.app.settings::<cowork_app::assets::AssetSettings>()
}

#[tauri::command]
#[specta::specta]
pub fn save_asset_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::assets::AssetSettings,
) -> Res<()> {
    shell.app.save_settings(&settings)
}
