//! Settings → Voice: the devices and settings, and stopping what is recorded or read aloud.

use super::Res;
use crate::Shell;
use tauri::State;

/// The microphones and speakers cpal sees (Settings → Voice), defaults first.
#[derive(Clone, Debug, serde::Serialize, specta::Type)]
pub struct VoiceDevices {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn voice_devices() -> Res<VoiceDevices> {
    // Enumerating devices opens each briefly: off the main thread.
    tauri::async_runtime::spawn_blocking(|| VoiceDevices {
        inputs: cowork_app::voice_input_devices(),
        outputs: cowork_app::voice_output_devices(),
    })
    .await
    .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn get_voice_settings(shell: State<'_, Shell>) -> Res<cowork_app::VoiceSettings> {
    shell.app.settings::<cowork_app::VoiceSettings>()
}

/// Saves the voice settings; the next recording or reply read aloud uses them.
#[tauri::command]
#[specta::specta]
pub fn save_voice_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::VoiceSettings,
) -> Res<()> {
    shell.app.save_settings(&settings)
}

/// Ends the recording in progress (the person let go of the key, keeping what was said) and
/// any speech being read aloud (Esc). Recording and speaking are tool calls (`call_tool`).
#[tauri::command]
#[specta::specta]
pub fn voice_stop(shell: State<'_, Shell>) -> bool {
    shell.app.voice().stop()
}
