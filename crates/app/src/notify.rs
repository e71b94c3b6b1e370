//! Notifications through the desktop's notification service (org.freedesktop.Notifications on
//! the session bus): what waits for the person while the window is hidden or in the background.
//! A notice says what waits, never what it is about in detail: no arguments, no mail bodies, no
//! secrets. Clicking one names the place to open ([`NoticeTarget`]).
//!
//! Written on zbus rather than a notification crate: the window needs the click (the
//! `ActionInvoked` signal) as an async stream, and the crates that wrap the service either drop
//! it on Linux (tauri-plugin-notification) or block a thread per notice waiting for it.

use cowork_core::{ApprovalRequest, ElicitationRequest};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Where clicking a notice leads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoticeTarget {
    /// The approval modal of this call.
    Approval { id: String },
    /// A server's form (elicitation).
    Question { id: String },
    /// A task suspended at a login or another wall.
    Suspension { id: String },
    /// A conversation whose long run finished.
    Conversation { id: String },
    /// The outbox, while a mail can still be taken back.
    Outbox { id: String },
    /// A calendar event whose reminder fell due (what the window shows of it).
    Event {
        calendar: String,
        uid: String,
        title: String,
        /// RFC 3339.
        starts: String,
        all_day: bool,
        location: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub summary: String,
    pub body: String,
    pub target: NoticeTarget,
    /// Asks outrank news: a critical notice stays until it is clicked or the ask settles.
    pub waits_for_answer: bool,
}

impl Notice {
    /// An approval: the tool's title only (its arguments may hold a mail or a secret).
    pub fn approval(request: &ApprovalRequest) -> Notice {
        Notice {
            summary: "Cowork is waiting for your answer".into(),
            body: format!("Allow “{}”? Answer in the window.", request.title),
            target: NoticeTarget::Approval {
                id: request.call_id.clone(),
            },
            waits_for_answer: true,
        }
    }

    /// A server's question: who asks, not what (the message is the server's text).
    pub fn question(request: &ElicitationRequest) -> Notice {
        Notice {
            summary: "Cowork has a question for you".into(),
            body: format!("{} asks for input. Answer in the window.", request.from),
            target: NoticeTarget::Question {
                id: request.id.clone(),
            },
            waits_for_answer: true,
        }
    }

    /// A task stopped at a wall (a login page) until the person does what it needs.
    pub fn suspended(id: &str, tool: &str) -> Notice {
        Notice {
            summary: "A task is waiting for you".into(),
            body: format!(
                "{tool} waits for you (a login, a code or your approval). Open Cowork to go on."
            ),
            target: NoticeTarget::Suspension { id: id.to_string() },
            waits_for_answer: false,
        }
    }

    /// A mail waits in the outbox for its undo delay: how many it goes to and when, never its
    /// subject or body.
    pub fn mail_leaving(row: &cowork_mail::OutboxRow) -> Notice {
        let when = chrono::DateTime::parse_from_rfc3339(&row.send_after)
            .map(|t| {
                t.with_timezone(&chrono::Local)
                    .format("%H:%M:%S")
                    .to_string()
            })
            .unwrap_or_else(|_| row.send_after.clone());
        Notice {
            summary: "A mail is about to leave".into(),
            body: format!(
                "To {} recipient(s) at {when}. Open Cowork to undo.",
                row.recipients.len()
            ),
            target: NoticeTarget::Outbox {
                id: row.id.to_string(),
            },
            waits_for_answer: false,
        }
    }

    /// A calendar reminder: the event's title, when and where, as the person's calendar has
    /// them (never its description or attendees).
    pub fn reminder(reminder: &cowork_calendar::Reminder) -> Notice {
        let starts = reminder.starts.with_timezone(&chrono::Local);
        let today = chrono::Local::now().date_naive();
        let day = if starts.date_naive() == today {
            "Today".to_string()
        } else {
            starts.format("%a %d %b").to_string()
        };
        let when = if reminder.all_day {
            day
        } else {
            format!("{day} {}", starts.format("%H:%M"))
        };
        let body = match reminder.location.trim() {
            "" => when,
            place => format!("{when} · {place}"),
        };
        Notice {
            summary: reminder.title.clone(),
            body,
            target: NoticeTarget::Event {
                calendar: reminder.calendar.clone(),
                uid: reminder.uid.clone(),
                title: reminder.title.clone(),
                starts: reminder.starts.to_rfc3339(),
                all_day: reminder.all_day,
                location: reminder.location.clone(),
            },
            waits_for_answer: false,
        }
    }

    /// A long run finished while the person was elsewhere.
    pub fn finished(conversation: &str, title: &str) -> Notice {
        Notice {
            summary: "Cowork finished".into(),
            body: format!("“{title}” is done."),
            target: NoticeTarget::Conversation {
                id: conversation.to_string(),
            },
            waits_for_answer: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error(
        "no session bus ({0}) — notifications need a desktop session (DBUS_SESSION_BUS_ADDRESS)"
    )]
    NoSessionBus(String),
    #[error(
        "no notification service answered ({0}) — start the desktop's notification daemon (e.g. dunst or notification-daemon)"
    )]
    NoService(String),
    #[error("notifications are off (do not disturb)")]
    Quiet,
}

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, zbus::zvariant::Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
}

/// dunst's own do-not-disturb switch (`dunstctl set-paused true`); other daemons keep theirs
/// to themselves and simply hold back banners, which they do without our help.
#[zbus::proxy(
    interface = "org.dunstproject.cmd0",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Dunst {
    #[zbus(property)]
    fn paused(&self) -> zbus::Result<bool>;
}

struct Connected {
    proxy: NotificationsProxy<'static>,
    markup: bool,
}

/// A call to the service waits this long at most: a wedged daemon must not hold up an ask.
const CALL_LIMIT: Duration = Duration::from_secs(3);

/// The session's notification service, connected when the first notice is shown (startup pays
/// nothing), reconnected after a failure (a daemon started later is found).
pub struct Notifier {
    connected: tokio::sync::Mutex<Option<Connected>>,
    shown: Arc<Mutex<HashMap<u32, NoticeTarget>>>,
    clicks: mpsc::UnboundedSender<NoticeTarget>,
    quiet: std::sync::atomic::AtomicBool,
    /// The bus to use instead of the session's (tests).
    address: Option<String>,
}

impl Notifier {
    /// The notifier and the stream of clicked notices' targets.
    pub fn new() -> (Notifier, mpsc::UnboundedReceiver<NoticeTarget>) {
        let (clicks, clicked) = mpsc::unbounded_channel();
        (
            Notifier {
                connected: tokio::sync::Mutex::new(None),
                shown: Arc::default(),
                clicks,
                quiet: Default::default(),
                address: None,
            },
            clicked,
        )
    }

    /// A notifier on the bus at `address` (a test's private bus) rather than the session's.
    pub fn on_bus(address: &str) -> (Notifier, mpsc::UnboundedReceiver<NoticeTarget>) {
        let (mut notifier, clicked) = Notifier::new();
        notifier.address = Some(address.to_string());
        (notifier, clicked)
    }

    /// The person's do-not-disturb (Settings → Desktop): nothing is shown, and asks wait for
    /// the window.
    pub fn set_quiet(&self, quiet: bool) {
        self.quiet
            .store(quiet, std::sync::atomic::Ordering::Relaxed);
    }

    /// Shows `notice`; Ok means a notification service took it (the person can see it).
    pub async fn show(&self, notice: &Notice) -> Result<u32, NotifyError> {
        if self.quiet.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(NotifyError::Quiet);
        }
        let mut connected = self.connected.lock().await;
        if connected.is_none() {
            *connected = Some(self.connect().await?);
        }
        let service = connected.as_ref().expect("connected above");
        if paused(service.proxy.inner().connection()).await {
            return Err(NotifyError::Quiet);
        }
        let text = |s: &str| {
            // Escaped for the terminal's sake and, where the service reads markup, as markup:
            // a tool title from a toolpack must not style or link anything.
            let s = cowork_contract::text::printable_field(s).into_owned();
            if service.markup {
                s.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            } else {
                s
            }
        };
        let mut hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
        hints.insert("desktop-entry", "cowork".into());
        hints.insert("urgency", zbus::zvariant::Value::U8(1));
        if notice.waits_for_answer {
            hints.insert("resident", true.into());
        }
        let sent = tokio::time::timeout(
            CALL_LIMIT,
            service.proxy.notify(
                "Cowork",
                0,
                "cowork",
                &text(&notice.summary),
                &text(&notice.body),
                &["default", "Open Cowork"],
                hints,
                if notice.waits_for_answer { 0 } else { -1 },
            ),
        )
        .await;
        match sent {
            Ok(Ok(id)) => {
                self.shown.lock().unwrap().insert(id, notice.target.clone());
                Ok(id)
            }
            Ok(Err(e)) => {
                *connected = None;
                Err(NotifyError::NoService(e.to_string()))
            }
            Err(_) => {
                *connected = None;
                Err(NotifyError::NoService("no answer within 3 s".into()))
            }
        }
    }

    /// Takes back the notice about `target` (answered in the window meanwhile).
    pub async fn withdraw(&self, target: &NoticeTarget) {
        let ids: Vec<u32> = {
            let mut shown = self.shown.lock().unwrap();
            let ids = shown
                .iter()
                .filter(|(_, t)| *t == target)
                .map(|(id, _)| *id)
                .collect::<Vec<_>>();
            ids.iter().for_each(|id| {
                shown.remove(id);
            });
            ids
        };
        if ids.is_empty() {
            return;
        }
        if let Some(service) = self.connected.lock().await.as_ref() {
            for id in ids {
                let _ =
                    tokio::time::timeout(CALL_LIMIT, service.proxy.close_notification(id)).await;
            }
        }
    }

    async fn connect(&self) -> Result<Connected, NotifyError> {
        let connection = match &self.address {
            Some(address) => {
                zbus::connection::Builder::address(address.as_str())
                    .map_err(|e| NotifyError::NoSessionBus(e.to_string()))?
                    .build()
                    .await
            }
            None => zbus::Connection::session().await,
        }
        .map_err(|e| NotifyError::NoSessionBus(e.to_string()))?;
        let proxy = NotificationsProxy::new(&connection)
            .await
            .map_err(|e| NotifyError::NoService(e.to_string()))?;
        let capabilities = tokio::time::timeout(CALL_LIMIT, proxy.get_capabilities())
            .await
            .map_err(|_| NotifyError::NoService("no answer within 3 s".into()))?
            .map_err(|e| NotifyError::NoService(e.to_string()))?;
        let mut clicked = proxy
            .receive_action_invoked()
            .await
            .map_err(|e| NotifyError::NoService(e.to_string()))?;
        let clicks = self.clicks.clone();
        let targets = self.shown.clone();
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(signal) = clicked.next().await {
                let Ok(args) = signal.args() else { continue };
                let target = targets.lock().unwrap().get(&args.id).cloned();
                if let Some(target) = target
                    && clicks.send(target).is_err()
                {
                    break;
                }
            }
        });
        Ok(Connected {
            proxy,
            markup: capabilities.iter().any(|c| c == "body-markup"),
        })
    }
}

/// Whether the service is dunst with its notifications paused (its do-not-disturb).
async fn paused(connection: &zbus::Connection) -> bool {
    let built = DunstProxy::builder(connection)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await;
    let Ok(dunst) = built else {
        return false;
    };
    matches!(
        tokio::time::timeout(CALL_LIMIT, dunst.paused()).await,
        Ok(Ok(true))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a notice may say: how many and when for a mail, the tool for a wall — never a
    /// subject, an address or a page.
    #[test]
    fn news_notices_say_what_waits_not_what_it_is_about() {
        let mail = cowork_mail::OutboxRow {
            id: 7,
            account: "acme-office".into(),
            recipients: vec!["boss@example.com".into(), "hr@example.com".into()],
            subject: "Resignation".into(),
            state: "queued".into(),
            send_after: "2026-11-25T10:00:30+00:00".into(),
            error: None,
        };
        let notice = Notice::mail_leaving(&mail);
        let text = format!("{} {}", notice.summary, notice.body);
        assert!(text.contains("2 recipient"), "{text}");
        for leaked in ["Resignation", "boss@", "hr@", "acme-office"] {
            assert!(!text.contains(leaked), "{leaked:?} in {text}");
        }
        assert_eq!(notice.target, NoticeTarget::Outbox { id: "7".into() });
        assert!(!notice.waits_for_answer);

        let wall = Notice::suspended("s-1", "browser_open");
        assert!(wall.body.contains("browser_open") && wall.body.contains("approval"));
        assert_eq!(wall.target, NoticeTarget::Suspension { id: "s-1".into() });
        let done = Notice::finished("c-9", "Quarterly numbers");
        assert_eq!(done.target, NoticeTarget::Conversation { id: "c-9".into() });
    }
}
