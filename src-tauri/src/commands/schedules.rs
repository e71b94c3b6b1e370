//! Settings → Schedules: scheduled chains and prompts, their next times and their runs.

use super::Res;
use crate::Shell;
use tauri::State;

/// Settings → Schedules: every schedule and its next time.
#[tauri::command]
#[specta::specta]
pub fn list_schedules(shell: State<'_, Shell>) -> Res<Vec<cowork_app::chains::Schedule>> {
    shell.app.schedules().list().map_err(|e| e.to_string())
}

/// The run history (of one schedule, or all), newest first.
#[tauri::command]
#[specta::specta]
pub fn schedule_runs(
    shell: State<'_, Shell>,
    name: Option<String>,
) -> Res<Vec<cowork_app::chains::ScheduleRun>> {
    shell
        .app
        .schedules()
        .history(name.as_deref(), 30)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_schedule(shell: State<'_, Shell>, name: String) -> Res<()> {
    shell
        .app
        .schedules()
        .remove(&name)
        .map_err(|e| e.to_string())
}

/// Settings → Schedules, the new-schedule form: the pattern in words and its next times, asked
/// as the person types.
#[tauri::command]
#[specta::specta]
pub fn preview_schedule(cron: String) -> Res<cowork_app::chains::CronPreview> {
    cowork_app::chains::preview(&cron, chrono::Utc::now(), 3).map_err(|e| e.to_string())
}

/// A scheduled prompt made in the window: it is granted nothing, so whatever needs an approval
/// waits for the person as a task.
#[tauri::command]
#[specta::specta]
pub fn add_prompt_schedule(
    shell: State<'_, Shell>,
    name: Option<String>,
    cron: String,
    prompt: String,
    profile: Option<String>,
    missed: cowork_app::chains::Missed,
) -> Res<cowork_app::chains::Schedule> {
    shell
        .app
        .schedules()
        .add_prompt(
            name.as_deref(),
            &cron,
            &prompt,
            profile.as_deref(),
            missed,
            chrono::Utc::now(),
        )
        .map_err(|e| e.to_string())
}
