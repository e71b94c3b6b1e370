//! The window on the desktop: the tray (status and menu), notifications for what waits while the
//! window is away, closing to the tray, and requests handed over by later launches (links,
//! `.mcpb` files). Routing only: what a notice says and what a link may ask live in cowork-app.

use crate::Shell;
use crate::events::{DesktopRequestArrived, DesktopStatus, OpenTarget, ReminderDue, push};
use cowork_app::notify::{Notice, NoticeTarget};
use cowork_app::{DesktopRequest, DesktopSettings};
use serde::Serialize;
use std::sync::Mutex;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime, WebviewWindow, WindowEvent};

/// What the tray shows: the most pressing state wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Idle,
    Working,
    WaitingForYou,
    Paused,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Idle => "Idle",
            Status::Working => "Working…",
            Status::WaitingForYou => "Waiting for you",
            Status::Paused => "Tools paused",
        }
    }
}

/// The tray's items that change.
pub struct Tray<R: Runtime> {
    status: MenuItem<R>,
    pause: CheckMenuItem<R>,
    shown: Mutex<Status>,
}

pub fn main_window<R: Runtime>(handle: &AppHandle<R>) -> Option<WebviewWindow<R>> {
    handle.get_webview_window("main")
}

/// Brings the window back (from the tray, behind other windows, minimized): made anew when it
/// was closed to the tray (its webview is gone then, and with it most of the memory).
pub fn show_window<R: Runtime>(handle: &AppHandle<R>) {
    let window = main_window(handle).or_else(|| {
        let config = handle
            .config()
            .app
            .windows
            .iter()
            .find(|w| w.label == "main")?;
        tauri::WebviewWindowBuilder::from_config(handle, config)
            .and_then(|builder| builder.build())
            .map_err(|e| tracing::warn!("the window could not open again: {e}"))
            .ok()
    });
    if let Some(window) = window {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
    mark_pending_reached(handle);
}

/// Whether the desktop shows tray icons now (`cowork_app::follow_tray_host`).
struct TrayHostSeen(std::sync::Arc<std::sync::atomic::AtomicBool>);

/// Whether closing the last window keeps Cowork running in the tray: only where a tray host
/// shows the icon (GNOME without its extension shows none; hidden there, Cowork would be lost).
pub fn stays_in_tray<R: Runtime>(handle: &AppHandle<R>) -> bool {
    handle.try_state::<Tray<R>>().is_some()
        && handle
            .try_state::<TrayHostSeen>()
            .is_some_and(|seen| seen.0.load(std::sync::atomic::Ordering::Relaxed))
        && handle
            .state::<Shell>()
            .app
            .settings::<DesktopSettings>()
            .unwrap_or_default()
            .close_to_tray
}

/// Whether the person is looking at the window now.
fn window_in_front<R: Runtime>(handle: &AppHandle<R>) -> (bool, bool) {
    let Some(window) = main_window(handle) else {
        return (false, false);
    };
    let on_screen = window.is_visible().unwrap_or(false) && !window.is_minimized().unwrap_or(false);
    (on_screen, on_screen && window.is_focused().unwrap_or(false))
}

/// Builds the tray: status, Open, Pause all tools, Quit. Without a tray host (a bare X server)
/// the icon has nowhere to show; the window then simply stays open when closed.
pub fn build_tray<R: Runtime>(handle: &AppHandle<R>) -> tauri::Result<()> {
    let status = MenuItem::with_id(handle, "status", Status::Idle.label(), false, None::<&str>)?;
    let open = MenuItem::with_id(handle, "open", "Open Cowork", true, None::<&str>)?;
    let quick = MenuItem::with_id(handle, "quick", "Quick ask…", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(
        handle,
        "pause",
        "Pause all tools",
        true,
        false,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(handle, "quit", "Quit Cowork", true, None::<&str>)?;
    let menu = Menu::with_items(
        handle,
        &[
            &status,
            &PredefinedMenuItem::separator(handle)?,
            &open,
            &quick,
            &pause,
            &PredefinedMenuItem::separator(handle)?,
            &quit,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id("main")
        .tooltip("Cowork — idle")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => show_window(app),
            "quick" => open_quick_ask(app),
            "pause" => {
                // Read, then set: the watch's read guard must be gone before pausing writes it.
                let paused = *app.state::<Shell>().app.scheduler().paused().borrow();
                set_paused(app, !paused);
            }
            "quit" => app.exit(0),
            _ => {}
        });
    if let Some(icon) = handle.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(handle)?;
    handle.manage(Tray {
        status,
        pause,
        shown: Mutex::new(Status::Idle),
    });
    Ok(())
}

/// The person pauses or resumes every tool (the tray, the window's button).
pub fn set_paused<R: Runtime>(handle: &AppHandle<R>, paused: bool) {
    let scheduler = handle.state::<Shell>().app.scheduler().clone();
    if paused {
        scheduler.pause_all();
    } else {
        scheduler.resume_all();
    }
}

/// The status from what is waiting and running.
pub fn status<R: Runtime>(handle: &AppHandle<R>) -> Status {
    let shell = handle.state::<Shell>();
    if *shell.app.scheduler().paused().borrow() {
        Status::Paused
    } else if !shell.approvals.lock().unwrap().is_empty()
        || !shell.elicitations.lock().unwrap().is_empty()
    {
        Status::WaitingForYou
    } else if !shell.runs.lock().unwrap().is_empty() || !shell.in_flight.lock().unwrap().is_empty()
    {
        Status::Working
    } else {
        Status::Idle
    }
}

/// Shows the status where it changed: the tray's first line and tooltip, the window.
pub fn refresh_status<R: Runtime>(handle: &AppHandle<R>) {
    let status = status(handle);
    let paused = status == Status::Paused;
    if let Some(tray) = handle.try_state::<Tray<R>>() {
        let mut shown = tray.shown.lock().unwrap();
        if *shown != status {
            *shown = status;
            let _ = tray.status.set_text(status.label());
            let _ = tray.pause.set_checked(paused);
            if let Some(icon) = handle.tray_by_id("main") {
                let _ = icon.set_tooltip(Some(format!("Cowork — {}", status.label())));
            }
        }
    }
    push(handle, DesktopStatus(status));
}

/// An ask (approval or form) was put before the window: it has reached the person if the
/// window is in front, or once a notification about it is on screen. Otherwise it waits for
/// the window (never denied unseen).
pub async fn reach<R: Runtime>(handle: AppHandle<R>, id: String, notice: Notice) {
    refresh_status(&handle);
    let (on_screen, in_front) = window_in_front(&handle);
    let shell = handle.state::<Shell>();
    if in_front {
        shell.attention.mark_reached(&id);
        return;
    }
    match notify(&handle, &notice).await {
        Ok(()) => shell.attention.mark_reached(&id),
        // An unfocused window still shows the modal.
        Err(_) if on_screen => shell.attention.mark_reached(&id),
        Err(e) => tracing::info!("{e}; the ask waits for the window"),
    }
}

/// Shows a notice if the person's settings allow one.
pub async fn notify<R: Runtime>(handle: &AppHandle<R>, notice: &Notice) -> Result<(), String> {
    let shell = handle.state::<Shell>();
    let settings = shell.app.settings::<DesktopSettings>().unwrap_or_default();
    if !settings.notifications || settings.do_not_disturb {
        return Err("notifications are off in Settings → Desktop".into());
    }
    shell
        .notifier
        .show(notice)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Every ask waiting now has reached the person (the window came to the front): their
/// notifications go, and silence counts from now.
fn mark_pending_reached<R: Runtime>(handle: &AppHandle<R>) {
    let shell = handle.state::<Shell>();
    let approvals: Vec<String> = shell.approvals.lock().unwrap().keys().cloned().collect();
    let questions: Vec<String> = shell.elicitations.lock().unwrap().keys().cloned().collect();
    let targets: Vec<NoticeTarget> = approvals
        .into_iter()
        .map(|id| NoticeTarget::Approval { id })
        .chain(
            questions
                .into_iter()
                .map(|id| NoticeTarget::Question { id }),
        )
        .collect();
    for target in &targets {
        if let NoticeTarget::Approval { id } | NoticeTarget::Question { id } = target {
            shell.attention.mark_reached(id);
        }
    }
    let handle = handle.clone();
    tauri::async_runtime::spawn(async move {
        let notifier = handle.state::<Shell>().notifier.clone();
        for target in targets {
            notifier.withdraw(&target).await;
        }
    });
}

/// The window's own events: coming to the front reaches waiting asks.
pub fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    if window.label() != "main" {
        return;
    }
    // Closing needs nothing here: closing to the tray lets the window go (its WebKit processes
    // with it), `on_run_event` keeps the app, and the tray opens a new window.
    if let WindowEvent::Focused(true) = event {
        mark_pending_reached(window.app_handle());
    }
}

/// A clicked notice opens its place: the window comes back and the view is told where to go.
pub fn open_target<R: Runtime>(handle: &AppHandle<R>, target: NoticeTarget) {
    show_window(handle);
    push(handle, OpenTarget(target));
}

/// Arguments from a launch (this one or a later one): each link or file starts its review in
/// the window; anything else is said and ignored.
pub fn handle_launch<R: Runtime>(handle: &AppHandle<R>, args: &[String]) {
    for arg in args {
        if arg == QUICK_ASK_ARG {
            open_quick_ask(handle);
            continue;
        }
        match cowork_app::desktop_request(arg) {
            Ok(request) => {
                handle
                    .state::<Shell>()
                    .desktop_requests
                    .lock()
                    .unwrap()
                    .push(request);
                // The view takes the requests (`take_desktop_requests`) when told.
                push(handle, DesktopRequestArrived);
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }
}

/// Requests that arrived before the view listened (the first launch's own arguments).
pub fn take_requests<R: Runtime>(handle: &AppHandle<R>) -> Vec<DesktopRequest> {
    std::mem::take(&mut *handle.state::<Shell>().desktop_requests.lock().unwrap())
}

/// Tool calls as they run: the tray's "working", and a notice when one stops at a wall (a
/// login) while the person is elsewhere.
pub async fn on_tool_event<R: Runtime>(handle: &AppHandle<R>, event: &cowork_core::ToolEvent) {
    use cowork_core::ToolEvent;
    let shell = handle.state::<Shell>();
    match event {
        ToolEvent::Started { call_id, .. } => {
            shell.in_flight.lock().unwrap().insert(call_id.clone());
        }
        ToolEvent::Completed { call_id, .. } => {
            shell.in_flight.lock().unwrap().remove(call_id);
            if !window_in_front(handle).1 {
                notify_leaving_mail(handle).await;
            }
        }
        ToolEvent::Failed {
            error_kind,
            tool,
            call_id,
            ..
        } => {
            shell.in_flight.lock().unwrap().remove(call_id);
            if error_kind == "suspended" && !window_in_front(handle).1 {
                let _ = notify(handle, &Notice::suspended(call_id, tool)).await;
            }
        }
        _ => return,
    }
    refresh_status(handle);
}

/// A turn ended: a long one finished while the person was elsewhere is worth a notice.
pub async fn on_turn_done<R: Runtime>(
    handle: &AppHandle<R>,
    conversation: &str,
    took: std::time::Duration,
) {
    refresh_status(handle);
    let shell = handle.state::<Shell>();
    let settings = shell.app.settings::<DesktopSettings>().unwrap_or_default();
    if took.as_secs() < u64::from(settings.long_run_secs) || window_in_front(handle).1 {
        return;
    }
    let title = shell
        .conversations
        .list(None)
        .ok()
        .and_then(|all| all.into_iter().find(|c| c.id == conversation))
        .map(|c| c.title)
        .unwrap_or_default();
    let _ = notify(handle, &Notice::finished(conversation, &title)).await;
}

/// A calendar reminder fell due: a notification (clicking it brings the window back showing the
/// event), and an open window shows it at once.
pub fn remind<R: Runtime>(handle: &AppHandle<R>, due: cowork_app::Reminder) {
    let notice = Notice::reminder(&due);
    push(handle, ReminderDue(notice.target.clone()));
    let handle = handle.clone();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = notify(&handle, &notice).await {
            tracing::info!("reminder shown in the window only: {e}");
        }
    });
}

/// An ask was answered in the window: its notice goes and the status follows.
pub fn answered<R: Runtime>(handle: &AppHandle<R>, target: NoticeTarget) {
    refresh_status(handle);
    let notifier = handle.state::<Shell>().notifier.clone();
    tauri::async_runtime::spawn(async move { notifier.withdraw(&target).await });
}

/// After the app is built, on the real desktop: the tray, this launch's own arguments, later launches' (on a thread), and
/// `--hidden` (started at login: straight to the tray, if there is one).
pub fn launched<R: Runtime>(
    handle: &AppHandle<R>,
    arrivals: Option<cowork_app::instance::Arrivals>,
    args: Vec<String>,
    hidden: bool,
) {
    // The real desktop only (the IPC tests' mock runtime has no GTK for a menu, no X server
    // for a shortcut).
    match build_tray(handle) {
        Ok(()) => {
            let seen = tauri::async_runtime::block_on(cowork_app::follow_tray_host());
            handle.manage(TrayHostSeen(seen));
        }
        Err(e) => tracing::warn!("no tray icon: {e}"),
    }
    register_quick_ask(handle);
    if hidden && !stays_in_tray(handle) {
        // No tray to live in (or the person keeps Cowork out of it): the window after all.
        show_window(handle);
    }
    handle_launch(handle, &args);
    if let Some(arrivals) = arrivals {
        let handle = handle.clone();
        let scheduler = handle.state::<Shell>().app.scheduler().clone();
        std::thread::spawn(move || {
            arrivals.serve(
                move |args| {
                    // `--quick-ask` is a desktop's own shortcut (Wayland gives apps none): only
                    // the small window, not the main one.
                    if !args.iter().any(|a| a == QUICK_ASK_ARG) {
                        show_window(&handle);
                    }
                    handle_launch(&handle, &args);
                },
                // An MCP client's ask, relayed by `cowork mcp serve`: the same modal as the
                // assistant's own (it names the client), answered here, the grant kept there.
                // Bounded here too: the asker's own timeout cannot take the modal away.
                move |request| {
                    let limit = scheduler.policy().thresholds().ask_timeout_secs;
                    // Made inside the runtime: a timer needs one from the start.
                    let answer = async {
                        let answer = scheduler.approver().answer(&request);
                        tokio::time::timeout(std::time::Duration::from_secs(limit), answer).await
                    };
                    match tauri::async_runtime::block_on(answer) {
                        Ok(answered) => answered.choice,
                        Err(_) => cowork_core::ApprovalChoice::Deny,
                    }
                },
            )
        });
    }
}

/// The argument that opens the quick-ask window: what a person binds to a key in their
/// desktop's own shortcut settings where Cowork cannot take one (Wayland).
pub const QUICK_ASK_ARG: &str = "--quick-ask";

/// The quick-ask shortcut from Settings → Desktop, for the whole desktop.
fn register_quick_ask<R: Runtime>(handle: &AppHandle<R>) {
    use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};
    let settings = handle
        .state::<Shell>()
        .app
        .settings::<DesktopSettings>()
        .unwrap_or_default();
    let shortcut = settings.quick_ask_shortcut.trim().to_string();
    if shortcut.is_empty() {
        return;
    }
    if let Err(e) = handle.plugin(tauri_plugin_global_shortcut::Builder::new().build()) {
        tracing::warn!("no global shortcuts: {e}");
        return;
    }
    let registered = handle
        .global_shortcut()
        .on_shortcut(shortcut.as_str(), |app, _, event| {
            if event.state == ShortcutState::Pressed {
                open_quick_ask(app);
            }
        });
    if let Err(e) = registered {
        tracing::warn!("quick ask shortcut {shortcut}: {e} — change it in Settings → Desktop");
    }
}

/// A small window for one question, above the others; its answer can move into the chat.
pub fn open_quick_ask<R: Runtime>(handle: &AppHandle<R>) {
    if let Some(window) = handle.get_webview_window("quick") {
        let _ = window.show();
        let _ = window.set_focus();
        return;
    }
    let built = tauri::WebviewWindowBuilder::new(
        handle,
        "quick",
        tauri::WebviewUrl::App("index.html#quick".into()),
    )
    .title("Cowork — quick ask")
    .inner_size(600.0, 260.0)
    .always_on_top(true)
    .skip_taskbar(true)
    .center()
    .build();
    if let Err(e) = built {
        tracing::warn!("quick ask: {e}");
    }
}

/// The quick answer moves into the full chat: the window shows that conversation.
pub fn open_in_chat<R: Runtime>(handle: &AppHandle<R>, conversation: String) {
    if let Some(quick) = handle.get_webview_window("quick") {
        let _ = quick.close();
    }
    open_target(handle, NoticeTarget::Conversation { id: conversation });
}

/// Mail that just entered the outbox while the person is elsewhere: a notice while it can still
/// be taken back (once per message).
async fn notify_leaving_mail<R: Runtime>(handle: &AppHandle<R>) {
    let shell = handle.state::<Shell>();
    let Ok(recent) = shell.app.outbox(5) else {
        return;
    };
    let fresh: Vec<_> = {
        let mut told = shell.mail_told.lock().unwrap();
        recent
            .into_iter()
            .filter(|row| row.state == "queued" && told.insert(row.id))
            .collect()
    };
    for row in fresh {
        let _ = notify(handle, &Notice::mail_leaving(&row)).await;
    }
}

/// The main window is not made at startup (`--hidden`); [`show_window`] makes it from the same
/// configuration when the person asks.
pub fn without_window<R: Runtime>(context: &mut tauri::Context<R>) {
    for window in &mut context.config_mut().app.windows {
        window.create = false;
    }
}
