//! What the window learns without asking, pushed to it while it lives (no view polls): asks for
//! the person, clicked notifications, the scheduler's tool events, chains' progress, reminders,
//! resumed tasks, and the state the views show. Also the background work that runs while the
//! window (or the tray) lives.

use crate::events::{
    ApprovalRequested, ChainProgress, ElicitationRequested, MicStateChanged, Pushed,
    ResourceChanged, ToolCallEvent, ToolpacksChanged, VaultChanged, push,
};
use crate::shell::Waiting;
use crate::{Asks, Shell, desktop};
use cowork_app::notify::Notice;
use tauri::async_runtime::spawn;
use tauri::{AppHandle, Manager, Runtime};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Starts every pump and worker (the app's `setup`).
pub fn start<R: Runtime>(handle: &AppHandle<R>, asks: Asks) {
    forward_asks(handle, asks);
    start_workers(handle);
    push_tool_events(handle);
    push_chain_events(handle);
    push_resource_updates(handle);
    push_state_changes(handle);
    remind_and_resume(handle);
}

/// Asks become the approval modal and servers' forms the elicitation modal: keep each answer
/// channel by id, show the request; `answer_approval` / `answer_elicitation` reply. A clicked
/// notification opens its place.
fn forward_asks<R: Runtime>(handle: &AppHandle<R>, asks: Asks) {
    let Asks {
        approvals,
        elicitations,
        mut clicks,
    } = asks;
    forward(
        handle.clone(),
        approvals,
        ApprovalRequested,
        |r| r.call_id.clone(),
        Notice::approval,
        |s| &s.approvals,
    );
    forward(
        handle.clone(),
        elicitations,
        ElicitationRequested,
        |r| r.id.clone(),
        Notice::question,
        |s| &s.elicitations,
    );
    let handle = handle.clone();
    spawn(async move {
        while let Some(target) = clicks.recv().await {
            desktop::open_target(&handle, target);
        }
    });
}

/// Forwards requests that wait for the person to the webview as the event `event` makes,
/// keeping each answer channel in the shell under the request's id.
fn forward<R: Runtime, Q, A, E>(
    handle: AppHandle<R>,
    mut requests: mpsc::Receiver<(Q, oneshot::Sender<A>)>,
    event: fn(Q) -> E,
    id: fn(&Q) -> String,
    notice: fn(&Q) -> Notice,
    waiting: fn(&Shell) -> &Waiting<Q, A>,
) where
    Q: Clone + Send + 'static,
    A: Send + 'static,
    E: Pushed,
{
    spawn(async move {
        while let Some((request, answer)) = requests.recv().await {
            let (key, shown) = (id(&request), notice(&request));
            let shell = handle.state::<Shell>();
            waiting(&shell)
                .lock()
                .unwrap()
                .insert(key.clone(), (request.clone(), answer));
            push(&handle, event(request));
            // Notifying may take a moment (the session bus): the next ask need not wait for it.
            spawn(desktop::reach(handle.clone(), key, shown));
        }
    });
}

/// Work that goes on while the window (or the tray) lives.
fn start_workers<R: Runtime>(handle: &AppHandle<R>) {
    // Toolpack servers start in the background; their tools join the registry as each comes
    // up, so the window opens without waiting for them.
    let starting = handle.clone();
    spawn(async move {
        match starting.state::<Shell>().app.start_toolpacks() {
            Ok(started) => started
                .iter()
                .filter_map(|s| s.error.as_ref().map(|e| (&s.name, e)))
                .for_each(|(n, e)| tracing::warn!("toolpack {n}: {e}")),
            Err(e) => tracing::warn!("toolpacks: {e}"),
        }
    });
    let shell = handle.state::<Shell>();
    let app = &shell.app;
    // Mail leaves the outbox once its undo delay has passed.
    spawn(app.outbox_worker());
    // Scheduled runs.
    spawn(app.schedule_worker());
    // The vault's index follows its folder (edits in Obsidian).
    spawn(app.vault_worker());
}

/// Tool calls as they run: the tray's "working" and notices (`desktop::on_tool_event`), then the
/// window's tool cards.
fn push_tool_events<R: Runtime>(handle: &AppHandle<R>) {
    let handle = handle.clone();
    let mut events = handle.state::<Shell>().app.scheduler().subscribe();
    spawn(async move {
        while let Some(event) = next(&mut events).await {
            desktop::on_tool_event(&handle, &event).await;
            push(&handle, ToolCallEvent(event));
        }
    });
}

/// A chain's progress, whoever runs it (the model, a schedule): the window's card.
fn push_chain_events<R: Runtime>(handle: &AppHandle<R>) {
    let handle = handle.clone();
    let mut events = handle.state::<Shell>().app.chains().subscribe();
    spawn(async move {
        while let Some(event) = next(&mut events).await {
            push(&handle, ChainProgress(event));
        }
    });
}

/// Resources the person attached that changed on their server: the composer's attachment.
fn push_resource_updates<R: Runtime>(handle: &AppHandle<R>) {
    let handle = handle.clone();
    let mut updates = handle.state::<Shell>().app.resource_updates();
    spawn(async move {
        while let Some(update) = next(&mut updates).await {
            push(&handle, ResourceChanged(update));
        }
    });
}

/// State the views show, pushed when it changes: toolpack servers (started, failed, tools
/// changed), the vault's indexing progress, the microphone (whoever opened it: the window's
/// button, the model's `listen`; while it is open the window always shows it), and the pause
/// (the tray's status).
fn push_state_changes<R: Runtime>(handle: &AppHandle<R>) {
    let shell = handle.state::<Shell>();
    let app = &shell.app;
    let h = handle.clone();
    on_change(app.toolpack_changes(), move |_| push(&h, ToolpacksChanged));
    let h = handle.clone();
    on_change(app.vault().progress(), move |_| push(&h, VaultChanged));
    let h = handle.clone();
    on_change(app.voice().microphone().state(), move |state| {
        push(&h, MicStateChanged(state))
    });
    let h = handle.clone();
    on_change(app.scheduler().paused(), move |_| {
        desktop::refresh_status(&h)
    });
}

/// Calendar reminders at their time, and suspended tasks that went on by themselves.
fn remind_and_resume<R: Runtime>(handle: &AppHandle<R>) {
    let shell = handle.state::<Shell>();
    let app = &shell.app;
    // A notification, and the window shows them too (do not disturb, or no notification service).
    let h = handle.clone();
    spawn(app.reminder_worker(move |due| desktop::remind(&h, due)));
    // Suspended tasks whose condition came true (the person logged in) go on by themselves.
    // The banner says what they did.
    let h = handle.clone();
    let on_resumed = move |id: &str, outcome: &cowork_core::CallOutcome| {
        crate::commands::suspensions::emit_resumed(&h, id, outcome)
    };
    spawn(app.suspension_watcher(cowork_core::Caller::Chat, on_resumed));
}

/// The next message on a broadcast channel (ones missed while this fell behind are skipped);
/// None once it closed.
async fn next<T: Clone>(channel: &mut broadcast::Receiver<T>) -> Option<T> {
    loop {
        match channel.recv().await {
            Ok(message) => return Some(message),
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return None,
        }
    }
}

/// Calls `changed` with each new value of `watch`, while both ends live. (The value is cloned
/// out first: no read guard is held while `changed` runs, which may write the same watch.)
fn on_change<T, F>(mut watch: watch::Receiver<T>, mut changed: F)
where
    T: Clone + Send + Sync + 'static,
    F: FnMut(T) + Send + 'static,
{
    spawn(async move {
        while watch.changed().await.is_ok() {
            let value = watch.borrow_and_update().clone();
            changed(value);
        }
    });
}
