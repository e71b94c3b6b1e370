//! Settings → Web: search, weather and news settings, search keys, and links opened outside.

use super::Res;
use crate::Shell;
use tauri::State;

#[tauri::command]
#[specta::specta]
pub fn get_web_settings(shell: State<'_, Shell>) -> Res<cowork_app::WebSettings> {
    shell.app.settings::<cowork_app::WebSettings>()
}

/// Saves the web settings; the next web call uses them (a changed proxy too).
#[tauri::command]
#[specta::specta]
pub fn save_web_settings(shell: State<'_, Shell>, settings: cowork_app::WebSettings) -> Res<()> {
    shell.app.save_settings(&settings)
}

/// Stores a search provider's key in the OS keyring. The key is never sent back.
#[tauri::command]
#[specta::specta]
pub fn set_web_key(provider: cowork_app::SearchProvider, key: String) -> Res<()> {
    cowork_app::set_web_key(provider, &key)
}

#[tauri::command]
#[specta::specta]
pub fn has_web_key(provider: cowork_app::SearchProvider) -> Res<bool> {
    cowork_app::has_web_key(provider)
}

/// Opens a web link (a search result, a headline) in the system browser.
#[tauri::command]
#[specta::specta]
pub fn open_link<R: tauri::Runtime>(app: tauri::AppHandle<R>, url: String) -> Res<()> {
    use tauri_plugin_opener::OpenerExt;
    let url = cowork_app::link_to_open(&url)?;
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|e| format!("the system browser could not be opened: {e}"))
}
