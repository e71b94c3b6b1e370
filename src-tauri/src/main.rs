#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]
//! The Cowork window. Opens the core like the CLI does (cowork-app), with the window as the
//! Approver, and exposes commands and events to the webview. No business logic lives here.

mod commands;

use commands::Shell;
use cowork_app::{App, AppOptions};
use cowork_core::{ChannelApprover, SchedulerConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tauri::{Emitter, Manager};

fn main() {
    let started = std::time::Instant::now();
    if cfg!(target_os = "linux") && std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        eprintln!(
            "Cowork needs a display. Without one, run it under Xvfb:\n  xvfb-run -a cargo run --release -p cowork-desktop\n\
             or use the command line:\n  cargo run --release -p cowork-cli -- --help"
        );
        std::process::exit(1);
    }
    if cfg!(target_os = "linux") && std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        // A chat UI needs no GPU compositing; without it WebKit's web process takes ~60 MB less
        // (measured: idle PSS 228 → 166 MB) and some drivers stop showing blank windows.
        // SAFETY: first thing in main, before any thread exists.
        unsafe { std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1") };
    }
    let (approver, mut asks) = ChannelApprover::new("window", 16);
    let workspaces = std::env::var_os("COWORK_WORKSPACE").map(|w| vec![w.into()]).unwrap_or_default();
    let app = match App::open(AppOptions { home: None, workspace_roots: workspaces, approver: Arc::new(approver), scheduler: SchedulerConfig::default() }) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Cowork cannot start: {e}");
            std::process::exit(2);
        }
    };
    let conversations = cowork_agent::Conversations::open(app.store()).unwrap_or_else(|e| {
        eprintln!("Cowork cannot start: {e}");
        std::process::exit(2);
    });
    let shell = Shell { started, app, conversations, agent: Mutex::new(None), runs: Mutex::new(HashMap::new()), approvals: Mutex::new(HashMap::new()) };

    tauri::Builder::default()
        .manage(shell)
        .setup(move |tauri_app| {
            let handle = tauri_app.handle().clone();
            // Asks become a modal: keep the answer channel by call id, show the request.
            tauri::async_runtime::spawn(async move {
                while let Some((request, answer)) = asks.recv().await {
                    let shell = handle.state::<Shell>();
                    shell.approvals.lock().unwrap().insert(request.call_id.clone(), answer);
                    let _ = handle.emit("approval-request", &request);
                }
            });
            let handle = tauri_app.handle().clone();
            let mut events = tauri_app.state::<Shell>().app.scheduler().subscribe();
            tauri::async_runtime::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(event) => {
                            let _ = handle.emit("tool-event", &event);
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    }
                }
            });
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::first_run,
            commands::send_message,
            commands::stop_run,
            commands::list_conversations,
            commands::get_messages,
            commands::rename_conversation,
            commands::delete_conversation,
            commands::list_tools,
            commands::call_tool,
            commands::answer_approval,
            commands::get_agent_settings,
            commands::save_agent_settings,
            commands::list_rules,
            commands::add_rule,
            commands::remove_rule,
            commands::set_mode,
            commands::audit_list,
            commands::audit_verify,
            commands::ui_ready,
            commands::set_api_key,
            commands::has_api_key,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"))
        .expect("error while running Cowork");
}
