//! Settings → Desktop and the window on the desktop: the tray's status and pause, the
//! quick-ask window, links handed over by launches, and the desktop's own shortcut.

use super::Res;
use crate::Shell;
use tauri::{AppHandle, Manager, Runtime, State};

/// Links and files handed to Cowork (`cowork://toolpack/install?…`, a `.mcpb`) not yet shown:
/// each opens the usual install review.
#[tauri::command]
#[specta::specta]
pub fn take_desktop_requests<R: Runtime>(handle: AppHandle<R>) -> Vec<cowork_app::DesktopRequest> {
    crate::desktop::take_requests(&handle)
}

#[tauri::command]
#[specta::specta]
pub fn get_desktop_settings(shell: State<'_, Shell>) -> Res<cowork_app::DesktopSettings> {
    shell.app.settings::<cowork_app::DesktopSettings>()
}

#[tauri::command]
#[specta::specta]
pub fn save_desktop_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::DesktopSettings,
) -> Res<()> {
    shell.app.save_settings(&settings)?;
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    cowork_app::set_autostart(settings.autostart, &program)
}

/// Pauses (or resumes) every tool, as the tray's "Pause all tools" does.
#[tauri::command]
#[specta::specta]
pub fn set_tools_paused<R: Runtime>(handle: AppHandle<R>, paused: bool) {
    crate::desktop::set_paused(&handle, paused);
}

/// The tray's status now (then pushed as `desktop-status`).
#[tauri::command]
#[specta::specta]
pub fn desktop_status<R: Runtime>(handle: AppHandle<R>) -> crate::desktop::Status {
    crate::desktop::status(&handle)
}

/// The quick-ask window's answer continues in the main window.
#[tauri::command]
#[specta::specta]
pub fn open_in_chat<R: Runtime>(handle: AppHandle<R>, conversation: String) {
    crate::desktop::open_in_chat(&handle, conversation);
}

/// Closes the quick-ask window (Escape).
#[tauri::command]
#[specta::specta]
pub fn close_quick_ask<R: Runtime>(handle: AppHandle<R>) {
    if let Some(quick) = handle.get_webview_window("quick") {
        let _ = quick.close();
    }
}

/// Ctrl+W: the window closes; Cowork stays in the tray when the person chose so.
#[tauri::command]
#[specta::specta]
pub fn close_window<R: Runtime>(window: tauri::Window<R>) {
    let _ = window.close();
}

/// Settings → Desktop: quick ask on `shortcut` through GNOME's own custom shortcuts (a Wayland
/// session lets no app take a global key). Says what it did.
#[tauri::command]
#[specta::specta]
pub fn bind_quick_ask_in_gnome(shortcut: String) -> Res<String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    cowork_app::gnome_shortcut::Gsettings::default()
        .bind_quick_ask(&shortcut, &program)
        .map_err(|e| e.to_string())
}
