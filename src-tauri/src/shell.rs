//! The state every command and event pump shares: the app, the conversations, and what is
//! running or waiting for the person now.

use cowork_agent::{Agent, Conversations};
use cowork_app::notify::{NoticeTarget, Notifier};
use cowork_app::{App, AppOptions};
use cowork_core::{
    ApprovalChoice, ChannelApprover, ElicitationAnswer, PendingApproval, PendingElicitation,
    SchedulerConfig,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The window's state (Tauri manages it; every command and event pump reads it).
pub struct Shell {
    pub started: std::time::Instant,
    pub app: App,
    pub conversations: Conversations,
    pub agent: Mutex<Option<Arc<Agent>>>,
    pub runs: Mutex<HashMap<String, CancellationToken>>,
    /// Asks waiting for the person, by id: what was asked (shown again by a window that
    /// opens later) and where the answer goes.
    pub approvals: Waiting<cowork_core::ApprovalRequest, ApprovalChoice>,
    pub elicitations: Waiting<cowork_core::ElicitationRequest, ElicitationAnswer>,
    /// Fetched toolpacks waiting for the person's decision on their review, by token.
    pub staged: Mutex<HashMap<String, cowork_app::StagedToolpack>>,
    /// Which waiting asks the person has seen (their silence timeout counts from then).
    pub attention: Arc<cowork_core::Attention>,
    pub notifier: Arc<cowork_app::notify::Notifier>,
    /// Tool calls running now, by call id (the tray's "working").
    pub in_flight: Mutex<std::collections::HashSet<String>>,
    /// Outbox messages already notified (the undo window's notice goes out once).
    pub mail_told: Mutex<std::collections::HashSet<i64>>,
    /// Links and files handed over by launches, until the view takes them.
    pub desktop_requests: Mutex<Vec<cowork_app::DesktopRequest>>,
    /// OAuth sign-ins started in the window, by account, until the browser comes back.
    pub sign_ins: Mutex<HashMap<String, cowork_app::SignIn>>,
    /// The same for toolpacks' remote servers.
    pub toolpack_sign_ins: Mutex<HashMap<String, cowork_app::ToolpackSignIn>>,
}

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
        // The window starts with tools running: a pause left by a window that was killed
        // would otherwise hold `cowork mcp serve` still with nothing on screen saying so.
        app.scheduler().policy().set_paused_everywhere(false);
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
            sign_ins: Mutex::default(),
            toolpack_sign_ins: Mutex::default(),
        };
        Ok((shell, asks))
    }
}

impl Shell {
    /// The conversations with a turn running now.
    pub fn running(&self) -> Vec<String> {
        self.runs.lock().unwrap().keys().cloned().collect()
    }
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
