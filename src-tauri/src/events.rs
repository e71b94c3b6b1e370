//! What the window pushes to the webview without being asked: one type per event, each with the
//! one name it is sent under. bindings.ts exports every one (`events`, with its payload type)
//! and `ui/src/api.ts` listens through them, so an event renamed or dropped here fails to compile
//! there. Payloads defined elsewhere (the core's, cowork-app's) are wrapped; `#[serde(transparent)]`
//! sends and types each wrapper as what it wraps.

use crate::commands::tools::ToolCallView;
use cowork_agent::AgentEvent;
use cowork_app::notify::NoticeTarget;
use serde::Serialize;
use tauri::{Emitter, Runtime};
use tauri_specta::Event;

/// An event bindings.ts exports: only these can be pushed (the list at the end of this file).
pub trait Pushed: Event + Serialize + Clone {}

/// Pushes `event` to the webviews under its name. (Not `Event::emit`: that needs tauri-specta's
/// registry, mounted in `setup`, and a launch's own links are handed over before setup runs.)
pub fn push<R: Runtime, E: Pushed>(handle: &impl Emitter<R>, event: E) {
    let _ = handle.emit(E::NAME, event);
}

/// One step of a conversation's turn.
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "agent-event")]
pub struct AgentEventPayload {
    pub(crate) conversation: String,
    pub(crate) event: AgentEvent,
}

/// A turn ended (`error` says why, when it failed; `remedy`, what the person can do about it).
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "agent-done")]
pub struct AgentDone {
    pub(crate) conversation: String,
    pub(crate) error: Option<String>,
    pub(crate) remedy: Option<cowork_agent::Remedy>,
}

/// A suspended task ran again (by the button or by itself).
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "task-resumed")]
pub struct TaskResumed {
    pub(crate) id: String,
    pub(crate) call: ToolCallView,
}

/// A tool call waits for the person's approval (the approval modal).
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "approval-request")]
pub struct ApprovalRequested(pub cowork_core::ApprovalRequest);

/// An MCP server asks the person to fill in a form (the elicitation modal).
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "elicitation-request")]
pub struct ElicitationRequested(pub cowork_core::ElicitationRequest);

/// The scheduler's event stream: a call started, progressed, finished or failed.
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "tool-event")]
pub struct ToolCallEvent(pub cowork_core::ToolEvent);

/// A chain's progress, whoever runs it (the model, a schedule).
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "chain-event")]
pub struct ChainProgress(pub cowork_app::chains::ChainEvent);

/// Toolpack servers changed (started, failed, their tools changed): read them again.
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "toolpacks-changed")]
pub struct ToolpacksChanged;

/// A resource the person attached changed on its server: the composer reads it again.
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "resource-updated")]
pub struct ResourceChanged(pub cowork_app::ResourceUpdated);

/// The vault's indexing moved on: read its status again.
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "vault-changed")]
pub struct VaultChanged;

/// The microphone's state, whoever opened it (the window's button, the model's `listen`).
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "mic-state")]
pub struct MicStateChanged(pub cowork_app::MicState);

/// The tray's status (working, waiting for you, paused), as the window shows it too.
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "desktop-status")]
pub struct DesktopStatus(pub crate::desktop::Status);

/// A launch handed over links or files: take them (`take_desktop_requests`).
#[derive(Clone, Serialize, specta::Type, Event)]
#[tauri_specta(event_name = "desktop-request")]
pub struct DesktopRequestArrived;

/// A clicked notification (or the quick ask's "open in chat"): show its place.
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "open-target")]
pub struct OpenTarget(pub NoticeTarget);

/// A calendar reminder fell due.
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "reminder")]
pub struct ReminderDue(pub NoticeTarget);

/// An asset's download moved on (Settings → This computer).
#[derive(Clone, Serialize, specta::Type, Event)]
#[serde(transparent)]
#[tauri_specta(event_name = "asset-progress")]
pub struct AssetProgress(pub cowork_app::assets::FetchProgress);

/// Lists the events once: each may be pushed, and `all()` gives them to bindings.ts.
macro_rules! events {
    ($($event:path),* $(,)?) => {
        $(impl Pushed for $event {})*

        /// Every event the window pushes, for `ipc()` (bindings.ts).
        pub fn all() -> tauri_specta::Events {
            tauri_specta::collect_events![$($event),*]
        }
    };
}

events![
    AgentEventPayload,
    AgentDone,
    TaskResumed,
    ApprovalRequested,
    ElicitationRequested,
    ToolCallEvent,
    ChainProgress,
    ToolpacksChanged,
    ResourceChanged,
    VaultChanged,
    MicStateChanged,
    DesktopStatus,
    DesktopRequestArrived,
    OpenTarget,
    ReminderDue,
    AssetProgress,
];
