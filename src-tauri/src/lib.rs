//! The Cowork window as a library: the binary (`main.rs`) runs it on the real webview, and the
//! IPC tests run the very same builder on Tauri's mock runtime (`tauri::test`), capabilities
//! included. No business logic lives here; commands call cowork-app and the core.

pub mod commands;
pub mod desktop;

pub use commands::Shell;
use cowork_app::notify::{Notice, NoticeTarget, Notifier};
use cowork_app::{App, AppOptions};
use cowork_core::{ChannelApprover, PendingApproval, PendingElicitation, SchedulerConfig};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tauri::{Emitter, Manager, Runtime};
use tokio::sync::mpsc;

/// What waits for the person, in the order it was asked: approvals (the approval modal) and
/// MCP servers' forms (the elicitation modal).
pub struct Asks {
    pub approvals: mpsc::Receiver<PendingApproval>,
    pub elicitations: mpsc::Receiver<PendingElicitation>,
    /// Notifications the person clicked.
    pub clicks: mpsc::UnboundedReceiver<NoticeTarget>,
}

impl Shell {
    /// Opens the core with the window as its Approver. `home: None` means `COWORK_HOME` or the
    /// platform data dir.
    pub fn open(
        home: Option<PathBuf>,
        workspace_roots: Vec<PathBuf>,
    ) -> Result<(Shell, Asks), String> {
        let started = std::time::Instant::now();
        let (approver, approvals) = ChannelApprover::new("window", 16);
        let (approver, elicitations) = approver.with_elicitations(4);
        let (approver, attention) = approver.with_attention();
        let (notifier, clicks) = Notifier::new();
        let asks = Asks {
            approvals,
            elicitations,
            clicks,
        };
        let app = App::open(AppOptions {
            home,
            workspace_roots,
            approver: Arc::new(approver),
            scheduler: SchedulerConfig::default(),
        })
        .map_err(|e| e.to_string())?;
        let conversations = cowork_agent::Conversations::open(app.store())?;
        app.record_anchor_at_start();
        let shell = Shell {
            started,
            app,
            conversations,
            agent: Mutex::new(None),
            runs: Mutex::new(HashMap::new()),
            approvals: Mutex::new(HashMap::new()),
            elicitations: Mutex::new(HashMap::new()),
            staged: Mutex::new(HashMap::new()),
            attention,
            notifier: Arc::new(notifier),
            in_flight: Default::default(),
            mail_told: Mutex::default(),
            desktop_requests: Mutex::default(),
        };
        Ok((shell, asks))
    }
}

/// The app's builder: state, the two event pumps (approval requests and scheduler events) and
/// every command. The same for the real and the mock runtime.
pub fn builder<R: Runtime>(
    builder: tauri::Builder<R>,
    shell: Shell,
    asks: Asks,
) -> tauri::Builder<R> {
    let Asks {
        approvals: asks,
        elicitations,
        mut clicks,
    } = asks;
    builder
        .manage(shell)
        .on_window_event(desktop::on_window_event)
        // Rust-side only (`open_link` checks the address first): no opener permission is given
        // to the webview.
        .plugin(tauri_plugin_opener::init())
        // Rust-side only too (`pick_folder`): the webview gets no dialog permission.
        .plugin(tauri_plugin_dialog::init())
        .setup(move |tauri_app| {
            // Asks become the approval modal and servers' forms the elicitation modal: keep each
            // answer channel by id, show the request; `answer_approval` / `answer_elicitation` reply.
            forward(
                tauri_app.handle().clone(),
                asks,
                "approval-request",
                |r| r.call_id.clone(),
                Notice::approval,
                |s| &s.approvals,
            );
            forward(
                tauri_app.handle().clone(),
                elicitations,
                "elicitation-request",
                |r| r.id.clone(),
                Notice::question,
                |s| &s.elicitations,
            );
            let handle = tauri_app.handle().clone();
            tauri::async_runtime::spawn(async move {
                while let Some(target) = clicks.recv().await {
                    desktop::open_target(&handle, target);
                }
            });
            let handle = tauri_app.handle().clone();
            let mut paused = tauri_app.state::<Shell>().app.scheduler().paused();
            tauri::async_runtime::spawn(async move {
                while paused.changed().await.is_ok() {
                    desktop::refresh_status(&handle);
                }
            });
            // Toolpack servers start in the background; their tools join the registry as each
            // comes up, so the window opens without waiting for them.
            let handle = tauri_app.handle().clone();
            tauri::async_runtime::spawn(async move {
                match handle.state::<Shell>().app.start_toolpacks() {
                    Ok(started) => started
                        .iter()
                        .filter_map(|s| s.error.as_ref().map(|e| (&s.name, e)))
                        .for_each(|(n, e)| tracing::warn!("toolpack {n}: {e}")),
                    Err(e) => tracing::warn!("toolpacks: {e}"),
                }
            });
            // Mail leaves the outbox once its undo delay has passed, while the window lives.
            tauri::async_runtime::spawn(tauri_app.state::<Shell>().app.outbox_worker());
            // Scheduled runs, while the window (or the tray) lives.
            tauri::async_runtime::spawn(tauri_app.state::<Shell>().app.schedule_worker());
            // The vault's index follows its folder (edits in Obsidian) while the window lives.
            tauri::async_runtime::spawn(tauri_app.state::<Shell>().app.vault_worker());
            // A chain's progress, whoever runs it (the model, a schedule): the window's card.
            let handle = tauri_app.handle().clone();
            let mut chain_events = tauri_app.state::<Shell>().app.chains().subscribe();
            tauri::async_runtime::spawn(async move {
                loop {
                    match chain_events.recv().await {
                        Ok(event) => {
                            let _ = handle.emit("chain-event", event);
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    }
                }
            });
            // Calendar reminders at their time: a notification, and the window shows them too
            // (do not disturb, or no notification service).
            let handle = tauri_app.handle().clone();
            tauri::async_runtime::spawn(
                tauri_app
                    .state::<Shell>()
                    .app
                    .reminder_worker(move |due| desktop::remind(&handle, due)),
            );
            // Suspended tasks whose condition came true (the person logged in) go on by themselves.
            // The banner says what they did.
            let handle = tauri_app.handle().clone();
            let on_resumed = move |id: &str, outcome: &cowork_core::CallOutcome| {
                commands::emit_resumed(&handle, id, outcome)
            };
            tauri::async_runtime::spawn(
                tauri_app
                    .state::<Shell>()
                    .app
                    .suspension_watcher(cowork_core::Caller::Chat, on_resumed),
            );
            // State the views show, pushed when it changes (no view polls): toolpack servers
            // (started, failed, tools changed) and the vault's indexing progress.
            let handle = tauri_app.handle().clone();
            let mut toolpacks = tauri_app.state::<Shell>().app.toolpack_changes();
            tauri::async_runtime::spawn(async move {
                while toolpacks.changed().await.is_ok() {
                    let _ = handle.emit("toolpacks-changed", ());
                }
            });
            let handle = tauri_app.handle().clone();
            let mut vault = tauri_app.state::<Shell>().app.vault().progress();
            tauri::async_runtime::spawn(async move {
                while vault.changed().await.is_ok() {
                    let _ = handle.emit("vault-changed", ());
                }
            });
            // The microphone's state, whoever opened it (the window's button, the model's
            // `listen`): while it is open the window always shows it.
            let handle = tauri_app.handle().clone();
            let mut mic = tauri_app.state::<Shell>().app.voice().microphone().state();
            tauri::async_runtime::spawn(async move {
                while mic.changed().await.is_ok() {
                    let state = mic.borrow_and_update().clone();
                    let _ = handle.emit("mic-state", &state);
                }
            });
            let handle = tauri_app.handle().clone();
            let mut events = tauri_app.state::<Shell>().app.scheduler().subscribe();
            tauri::async_runtime::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(event) => {
                            desktop::on_tool_event(&handle, &event).await;
                            let _ = handle.emit("tool-event", &event);
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    }
                }
            });
            Ok(())
        })
        .invoke_handler(ipc::<R>().invoke_handler())
}

/// The window's commands, typed: this one list registers them and generates
/// `ui/src/bindings.ts` (with the types of the events the window listens to), so the webview's
/// types cannot drift from Rust's. `cargo test -p cowork-desktop --lib bindings` checks the file
/// is current; `COWORK_WRITE_BINDINGS=1` rewrites it.
pub fn ipc<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        // A failed command rejects its promise, as `invoke` does.
        .error_handling(tauri_specta::ErrorHandlingMode::Throw)
        // serde_json writes every integer as a JSON number, and that is what the webview reads.
        .dangerously_cast_bigints_to_number()
        // One TypeScript type per Rust type (what the webview reads and sends agree field for field).
        .disable_serde_phases()
        .commands(tauri_specta::collect_commands![
            commands::first_run,
            commands::send_message::<tauri::Wry>,
            commands::edit_message::<tauri::Wry>,
            commands::regenerate::<tauri::Wry>,
            commands::compact_conversation::<tauri::Wry>,
            commands::get_thread,
            commands::switch_branch,
            commands::set_pinned,
            commands::export_conversation,
            commands::save_export::<tauri::Wry>,
            commands::get_conversation_settings,
            commands::save_conversation_settings,
            commands::list_models,
            commands::test_provider,
            commands::pick_files::<tauri::Wry>,
            commands::attach_path,
            commands::attach_pasted,
            commands::stop_run,
            commands::list_conversations,
            commands::get_messages,
            commands::rename_conversation,
            commands::delete_conversation,
            commands::list_tools,
            commands::call_tool,
            commands::answer_approval::<tauri::Wry>,
            commands::answer_elicitation::<tauri::Wry>,
            commands::get_agent_settings,
            commands::save_agent_settings,
            commands::list_rules,
            commands::add_rule,
            commands::policy_problems,
            commands::workspace_reviews,
            commands::trust_workspace,
            commands::remove_rule,
            commands::set_mode,
            commands::audit_list,
            commands::audit_verify,
            commands::ui_ready,
            commands::set_api_key,
            commands::has_api_key,
            commands::list_toolpacks,
            commands::stage_toolpack,
            commands::install_toolpack,
            commands::discard_toolpack,
            commands::set_toolpack_enabled,
            commands::remove_toolpack,
            commands::reload_toolpacks,
            commands::toolpack_log,
            commands::list_accounts,
            commands::add_account,
            commands::remove_account,
            commands::test_account,
            commands::outbox,
            commands::vault_recent,
            commands::vault_entry,
            commands::vault_status,
            commands::vault_reindex,
            commands::get_vault_settings,
            commands::save_vault_settings,
            commands::list_suspensions,
            commands::resume_suspension::<tauri::Wry>,
            commands::cancel_suspension,
            commands::extend_suspension,
            commands::voice_devices,
            commands::get_voice_settings,
            commands::save_voice_settings,
            commands::voice_stop,
            commands::get_web_settings,
            commands::save_web_settings,
            commands::set_web_key,
            commands::has_web_key,
            commands::open_link::<tauri::Wry>,
            commands::take_desktop_requests::<tauri::Wry>,
            commands::get_desktop_settings,
            commands::save_desktop_settings,
            commands::set_tools_paused::<tauri::Wry>,
            commands::desktop_status::<tauri::Wry>,
            commands::workspace_state,
            commands::choose_workspace,
            commands::enter_conversation,
            commands::pick_folder::<tauri::Wry>,
            commands::open_in_chat::<tauri::Wry>,
            commands::close_quick_ask::<tauri::Wry>,
            commands::pending_asks,
            commands::close_window::<tauri::Wry>,
            commands::list_schedules,
            commands::preview_schedule,
            commands::add_prompt_schedule,
            commands::schedule_runs,
            commands::remove_schedule,
            commands::doctor,
            commands::list_assets,
            commands::fetch_asset::<tauri::Wry>,
            commands::get_asset_settings,
            commands::save_asset_settings,
            commands::bind_quick_ask_in_gnome,
        ])
        .typ::<commands::AgentEventPayload>()
        .typ::<commands::AgentDone>()
        .typ::<commands::TaskResumed>()
        .typ::<cowork_core::ToolEvent>()
        .typ::<cowork_core::ApprovalRequest>()
        .typ::<cowork_core::ElicitationRequest>()
        .typ::<cowork_app::MicState>()
        .typ::<cowork_app::notify::NoticeTarget>()
        .typ::<cowork_app::chains::ChainEvent>()
        .typ::<desktop::Status>()
        .typ::<cowork_app::assets::FetchProgress>()
}

pub type Waiting<Q, A> = Mutex<HashMap<String, (Q, tokio::sync::oneshot::Sender<A>)>>;

/// The asks still waiting, oldest first (one whose asker gave up is left out).
pub fn still_waiting<Q: Clone + serde::Serialize, A>(waiting: &Waiting<Q, A>) -> Vec<Q> {
    let mut waiting: Vec<(String, Q)> = waiting
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, (_, answer))| !answer.is_closed())
        .map(|(id, (q, _))| (id.clone(), q.clone()))
        .collect();
    // Ids are UUIDv7 (time-ordered) for calls; good enough an order for forms too.
    waiting.sort_by(|a, b| a.0.cmp(&b.0));
    waiting.into_iter().map(|(_, q)| q).collect()
}

/// Forwards requests that wait for the person to the webview as `event`, keeping each answer
/// channel in the shell under the request's id.
fn forward<R: Runtime, Q: serde::Serialize + Clone + Send + 'static, A: Send + 'static>(
    handle: tauri::AppHandle<R>,
    mut requests: mpsc::Receiver<(Q, tokio::sync::oneshot::Sender<A>)>,
    event: &'static str,
    id: fn(&Q) -> String,
    notice: fn(&Q) -> Notice,
    waiting: fn(&Shell) -> &Waiting<Q, A>,
) {
    tauri::async_runtime::spawn(async move {
        while let Some((request, answer)) = requests.recv().await {
            let shell = handle.state::<Shell>();
            waiting(&shell)
                .lock()
                .unwrap()
                .insert(id(&request), (request.clone(), answer));
            let _ = handle.emit(event, &request);
            // Notifying may take a moment (the session bus): the next ask need not wait for it.
            tauri::async_runtime::spawn(desktop::reach(
                handle.clone(),
                id(&request),
                notice(&request),
            ));
        }
    });
}

/// The app's context from the root `tauri.conf.json`: window, CSP, the built UI and the
/// capability files (so the IPC tests exercise the real permissions).
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!("../tauri.conf.json")
}

/// What the window does as the app exits: the browser is closed cleanly, so a login the person
/// just made is written to the app's profile.
pub fn on_run_event<R: Runtime>(handle: &tauri::AppHandle<R>, event: tauri::RunEvent) {
    match event {
        tauri::RunEvent::Exit => {
            tauri::async_runtime::block_on(handle.state::<Shell>().app.close_browser());
        }
        // The last window closed: Cowork stays in the tray when the person chose so (the tray's
        // Quit exits with a code and is not held).
        tauri::RunEvent::ExitRequested {
            api, code: None, ..
        } if desktop::stays_in_tray(handle) => api.prevent_exit(),
        _ => {}
    }
}

#[cfg(test)]
mod bindings {
    /// `ui/src/bindings.ts` is what `ipc()` generates now: a command or type changed in Rust and
    /// not regenerated fails here (and `npm run build` would type-check the UI against it).
    #[test]
    fn bindings_are_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let fresh = std::env::temp_dir().join(format!("cowork-bindings-{}.ts", std::process::id()));
        super::ipc::<tauri::Wry>()
            .export(specta_typescript::Typescript::default(), &fresh)
            .expect("the bindings export");
        let fresh_text = std::fs::read_to_string(&fresh).unwrap();
        let _ = std::fs::remove_file(&fresh);
        if std::env::var_os("COWORK_WRITE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh_text).unwrap();
            return;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == fresh_text,
            "ui/src/bindings.ts is out of date: run `COWORK_WRITE_BINDINGS=1 cargo test -p cowork-desktop --lib bindings`"
        );

        // The ACL names the same commands: build.rs declares one permission per command and
        // the capability grants each (a command missing there is unreachable; one extra, stale).
        let invoked: std::collections::BTreeSet<String> = fresh_text
            .split("__TAURI_INVOKE<")
            .skip(1)
            .filter_map(|rest| rest.split("(\"").nth(1)?.split('"').next())
            .map(str::to_string)
            .collect();
        let manifest_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let build = std::fs::read_to_string(manifest_dir.join("build.rs")).unwrap();
        let declared: std::collections::BTreeSet<String> = build
            .split("const COMMANDS")
            .nth(1)
            .and_then(|rest| rest.split("];").next())
            .unwrap_or_default()
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        assert_eq!(
            invoked, declared,
            "build.rs's COMMANDS and ipc()'s commands differ"
        );
        let capability =
            std::fs::read_to_string(manifest_dir.join("capabilities/default.json")).unwrap();
        for command in &invoked {
            let permission = format!("\"allow-{}\"", command.replace('_', "-"));
            assert!(
                capability.contains(&permission),
                "capabilities/default.json does not grant {permission}"
            );
        }
    }
}
