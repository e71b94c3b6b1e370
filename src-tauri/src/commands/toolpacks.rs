//! Toolpacks: the installed ones and their servers, and an install in two steps (the review,
//! then the person's yes).

use super::Res;
use crate::Shell;
use serde::Serialize;
use tauri::State;

#[derive(Serialize, specta::Type)]
pub struct ToolpacksView {
    records: std::collections::BTreeMap<String, cowork_app::ToolpackRecord>,
    servers: Vec<cowork_app::ServerStatus>,
}

#[tauri::command]
#[specta::specta]
pub fn list_toolpacks(shell: State<'_, Shell>) -> Res<ToolpacksView> {
    Ok(ToolpacksView {
        records: shell.app.toolpack_records().map_err(|e| e.to_string())?,
        servers: shell.app.mcp_servers(),
    })
}

#[derive(Serialize, specta::Type)]
pub struct StagedView {
    token: String,
    review: cowork_app::ToolpackReview,
    /// An update of an installed pack (the review's `changes` say what it changes).
    update: bool,
    /// The installed copy was changed on disk: installing its source again repairs it.
    repair: bool,
}

/// Keeps a staged pack for the person's answer and returns its review.
fn keep(
    shell: &Shell,
    staged: cowork_app::StagedToolpack,
    update: bool,
    repair: bool,
) -> StagedView {
    let review = staged.review.clone();
    // Unique per staging: a second review of the same pack must not replace an open one.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let token = format!(
        "{}-{}-{nanos:x}",
        review.name,
        review.sha256.get(..12).unwrap_or_default()
    );
    if let Some(replaced) = shell.staged.lock().unwrap().insert(token.clone(), staged) {
        shell.app.discard_toolpack(replaced);
    }
    StagedView {
        token,
        review,
        update,
        repair,
    }
}

/// Fetches and unpacks a toolpack and returns its review; nothing runs until `install_toolpack`.
/// `source` as `cowork toolpack install` takes it (`registry:<name>` for a catalog entry).
#[tauri::command]
#[specta::specta]
pub async fn stage_toolpack(shell: State<'_, Shell>, source: String) -> Res<StagedView> {
    let staged = shell
        .app
        .stage_toolpack(source.trim(), None)
        .await
        .map_err(|e| e.to_string())?;
    let update = shell
        .app
        .toolpack_records()
        .is_ok_and(|r| r.contains_key(&staged.review.name));
    Ok(keep(&shell, staged, update, false))
}

/// Fetches an installed pack's source again: `None` when nothing changed, else the review of
/// the update (installed like any other, with `install_toolpack`).
#[tauri::command]
#[specta::specta]
pub async fn check_toolpack_update(
    shell: State<'_, Shell>,
    name: String,
) -> Res<Option<StagedView>> {
    match shell
        .app
        .check_toolpack_update(&name)
        .await
        .map_err(|e| e.to_string())?
    {
        cowork_app::UpdateCheck::UpToDate => Ok(None),
        cowork_app::UpdateCheck::Changed { staged, repair, .. } => {
            Ok(Some(keep(&shell, *staged, true, repair)))
        }
    }
}

/// One page of the MCP Registry's catalog (the cached answer when offline, marked so).
#[tauri::command]
#[specta::specta]
pub async fn search_catalog(
    shell: State<'_, Shell>,
    query: String,
    cursor: Option<String>,
) -> Res<cowork_app::CatalogPage> {
    shell
        .app
        .search_catalog(&query, cursor.as_deref())
        .await
        .map_err(|e| e.to_string())
}

/// Claude Desktop's servers (its config file at `path`, or where Claude Desktop keeps it):
/// one review each, installed only by the person's yes to each.
#[tauri::command]
#[specta::specta]
pub async fn import_claude_desktop(
    shell: State<'_, Shell>,
    path: Option<String>,
) -> Res<Vec<StagedView>> {
    let config = match path.filter(|p| !p.trim().is_empty()) {
        Some(p) => std::path::PathBuf::from(p.trim()),
        None => cowork_app::claude_desktop_config_path().ok_or("no home folder to look in")?,
    };
    let out = shell.app.home().root().join("toolpacks").join(".imported");
    let dirs =
        cowork_app::import_claude_desktop_config(&config, &out).map_err(|e| e.to_string())?;
    let mut views = Vec::new();
    for dir in dirs {
        let staged = shell
            .app
            .stage_toolpack(&dir.display().to_string(), None)
            .await
            .map_err(|e| e.to_string())?;
        let update = shell
            .app
            .toolpack_records()
            .is_ok_and(|r| r.contains_key(&staged.review.name));
        views.push(keep(&shell, staged, update, false));
    }
    Ok(views)
}

/// The pack's settings with their current values (a secret only says whether it is set).
#[tauri::command]
#[specta::specta]
pub fn toolpack_settings(
    shell: State<'_, Shell>,
    name: String,
) -> Res<Vec<cowork_app::ToolpackSetting>> {
    shell
        .app
        .toolpack_settings(&name)
        .map_err(|e| e.to_string())
}

/// Saves the values the person changed (checked and typed by the pack's manifest; secrets to
/// the keyring) and restarts its server with them.
#[tauri::command]
#[specta::specta]
pub async fn configure_toolpack(
    shell: State<'_, Shell>,
    name: String,
    values: std::collections::BTreeMap<String, serde_json::Value>,
) -> Res<()> {
    shell
        .app
        .configure_toolpack(&name, values)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// On or off; off is the person's choice after the window said what it means. Async like every
/// command that (re)starts a server: a server's tasks need the runtime, which sync commands
/// (run on the main thread) do not have.
#[tauri::command]
#[specta::specta]
pub async fn set_toolpack_sandbox(shell: State<'_, Shell>, name: String, on: bool) -> Res<()> {
    shell
        .app
        .set_toolpack_sandbox(&name, on)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The person accepted the review (the modal): install (npm/pip may take a while), start.
#[tauri::command]
#[specta::specta]
pub async fn install_toolpack(
    shell: State<'_, Shell>,
    token: String,
    config: std::collections::BTreeMap<String, serde_json::Value>,
) -> Res<cowork_app::ToolpackRecord> {
    let staged = shell
        .staged
        .lock()
        .unwrap()
        .remove(&token)
        .ok_or("this review expired; install again")?;
    let record = tokio::task::block_in_place(|| shell.app.install_toolpack(staged, config, true))
        .map_err(|e| e.to_string())?;
    shell
        .app
        .toolpacks_settled(std::time::Duration::from_secs(30))
        .await;
    Ok(record)
}

#[tauri::command]
#[specta::specta]
pub fn discard_toolpack(shell: State<'_, Shell>, token: String) {
    if let Some(staged) = shell.staged.lock().unwrap().remove(&token) {
        shell.app.discard_toolpack(staged);
    }
}

#[tauri::command]
#[specta::specta]
pub async fn set_toolpack_enabled(shell: State<'_, Shell>, name: String, enabled: bool) -> Res<()> {
    shell
        .app
        .set_toolpack_enabled(&name, enabled)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_toolpack(shell: State<'_, Shell>, name: String) -> Res<()> {
    shell.app.remove_toolpack(&name).map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub async fn reload_toolpacks(shell: State<'_, Shell>) -> Res<Vec<cowork_app::Started>> {
    shell.app.reload_toolpacks().map_err(|e| e.to_string())
}

/// The end of a server's stderr log (what the UI shows under "Logs").
#[tauri::command]
#[specta::specta]
pub fn toolpack_log(shell: State<'_, Shell>, server: String) -> Res<String> {
    let status = shell
        .app
        .mcp_servers()
        .into_iter()
        .find(|s| s.name == server)
        .ok_or("no such server")?;
    let text = std::fs::read_to_string(&status.log_file).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    Ok(lines[lines.len().saturating_sub(200)..].join("\n"))
}

/// Starts signing in to a pack's remote server (the MCP authorization spec): the person's
/// browser opens at its authorization server; the address is returned too, for the window to
/// show when no browser opened. `finish_toolpack_sign_in` waits for the browser to come back.
#[tauri::command]
#[specta::specta]
pub async fn begin_toolpack_sign_in<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    shell: State<'_, Shell>,
    name: String,
) -> Res<String> {
    let sign_in = shell.app.begin_toolpack_sign_in(&name).await?;
    let url = sign_in.url().to_string();
    super::accounts::open_sign_in_page(&app, &url);
    shell
        .toolpack_sign_ins
        .lock()
        .unwrap()
        .insert(name, sign_in);
    Ok(url)
}

/// Waits for the browser to come back; the tokens go to the OS keyring and the pack's server
/// starts again with them.
#[tauri::command]
#[specta::specta]
pub async fn finish_toolpack_sign_in(shell: State<'_, Shell>, name: String) -> Res<()> {
    let sign_in = shell
        .toolpack_sign_ins
        .lock()
        .unwrap()
        .remove(&name)
        .ok_or_else(|| format!("no sign-in to {name} is under way: start it again"))?;
    shell.app.finish_toolpack_sign_in(&name, sign_in).await
}
