//! The audit log's viewer: the rows and the hash chain's check.

use super::Res;
use crate::Shell;
use cowork_core::{AuditEntry, AuditFilter, VerifyReport};
use tauri::State;

#[tauri::command]
#[specta::specta]
pub fn audit_list(shell: State<'_, Shell>, filter: AuditFilter) -> Res<Vec<AuditEntry>> {
    // Final rows are group-committed just after a call returns; the viewer must show them.
    shell.app.scheduler().flush().map_err(|e| e.to_string())?;
    shell
        .app
        .scheduler()
        .audit()
        .list(&filter)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn audit_verify(shell: State<'_, Shell>) -> Res<VerifyReport> {
    shell.app.scheduler().flush().map_err(|e| e.to_string())?;
    shell
        .app
        .scheduler()
        .audit()
        .verify()
        .map_err(|e| e.to_string())
}
