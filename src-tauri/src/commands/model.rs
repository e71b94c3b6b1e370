//! Settings → Model: the provider, its key and its models, and what the first screen needs.

use super::Res;
use super::chat::chat_agent;
use crate::Shell;
use cowork_app::AgentSettings;
use cowork_core::Mode;
use serde::Serialize;
use std::sync::Arc;
use tauri::State;

#[derive(Serialize, specta::Type)]
pub struct FirstRun {
    provider_configured: bool,
    provider_error: Option<String>,
    /// Model servers running on this computer (looked for only while no provider is set).
    local_servers: Vec<cowork_app::LocalServer>,
    mode: Mode,
    /// A workspace is open: rules may go to its `.cowork/settings.json`.
    workspace: bool,
}

#[tauri::command]
#[specta::specta]
pub async fn first_run(shell: State<'_, Shell>) -> Res<FirstRun> {
    let (configured, error) = match shell.app.agent() {
        Ok(agent) => {
            let configured = agent.is_some();
            *shell.agent.lock().unwrap() = agent.map(Arc::new);
            (configured, None)
        }
        Err(e) => (false, Some(e)),
    };
    let local_servers = match configured {
        true => vec![],
        false => cowork_app::detect_local_servers(cowork_app::LOCAL_SERVERS).await,
    };
    Ok(FirstRun {
        provider_configured: configured,
        provider_error: error,
        local_servers,
        mode: shell.app.scheduler().policy().mode(),
        workspace: shell.app.scheduler().policy().has_workspace(),
    })
}

#[tauri::command]
#[specta::specta]
pub fn get_agent_settings(shell: State<'_, Shell>) -> Res<Option<AgentSettings>> {
    AgentSettings::load(&shell.app.home().settings_path())
}

#[tauri::command]
#[specta::specta]
pub fn save_agent_settings(shell: State<'_, Shell>, settings: AgentSettings) -> Res<()> {
    settings.save(&shell.app.home().settings_path())?;
    *shell.agent.lock().unwrap() = shell.app.agent()?.map(Arc::new);
    Ok(())
}

/// Stores the current provider's API key in the OS keyring. The key is never sent back.
#[tauri::command]
#[specta::specta]
pub fn set_api_key(shell: State<'_, Shell>, key: String) -> Res<()> {
    let settings =
        AgentSettings::load(&shell.app.home().settings_path())?.ok_or("save the provider first")?;
    cowork_app::secrets::set(&settings.keyring_account(), &key)?;
    *shell.agent.lock().unwrap() = shell.app.agent()?.map(Arc::new);
    Ok(())
}

/// Whether a key is stored for the current provider (never the key itself).
#[tauri::command]
#[specta::specta]
pub fn has_api_key(shell: State<'_, Shell>) -> Res<bool> {
    let Some(settings) = AgentSettings::load(&shell.app.home().settings_path())? else {
        return Ok(false);
    };
    Ok(cowork_app::secrets::get(&settings.keyring_account())?.is_some())
}

/// Whether these (unsaved) provider settings reach a server that answers: the models it offers,
/// or the error that names the fix.
#[tauri::command]
#[specta::specta]
pub async fn test_provider(settings: cowork_app::AgentSettings) -> Res<Vec<String>> {
    cowork_app::check_provider(&settings).await
}

/// The models the configured provider offers.
#[tauri::command]
#[specta::specta]
pub async fn list_models(shell: State<'_, Shell>) -> Res<Vec<String>> {
    let agent = chat_agent(&shell)?;
    agent.provider().models().await.map_err(|e| e.to_string())
}
