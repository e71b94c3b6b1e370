//! The desktop's services for one test: a private D-Bus session bus and a notification server on
//! it (org.freedesktop.Notifications, as dunst or GNOME Shell serve it) that records what it was
//! asked to show and can click a notification (the `ActionInvoked` signal a daemon sends).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A private session bus (`dbus-daemon --session`), killed when dropped.
pub struct SessionBus {
    child: Child,
    pub address: String,
}

impl SessionBus {
    pub fn start(dir: &Path) -> SessionBus {
        let socket = dir.join("session-bus");
        let address = format!("unix:path={}", socket.display());
        let child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is not installed: run tests/setup.sh");
        let start = Instant::now();
        while !socket.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the session bus did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        SessionBus { child, address }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One notification as the server received it.
#[derive(Clone, Debug)]
pub struct Shown {
    pub id: u32,
    pub app_name: String,
    pub summary: String,
    pub body: String,
    pub actions: Vec<String>,
}

#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<Shown>>>);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Recorded {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.0.lock().unwrap();
        let id = shown.len() as u32 + 1;
        shown.push(Shown {
            id,
            app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        // Like dunst: bodies may carry markup, so what Cowork sends must be escaped.
        vec!["actions".into(), "body".into(), "body-markup".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "cowork-test".into(),
            "cowork".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &zbus::object_server::SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;
}

/// A notification server on `bus`.
pub struct NotificationServer {
    connection: zbus::Connection,
    shown: Recorded,
}

impl NotificationServer {
    pub async fn start(bus: &SessionBus) -> NotificationServer {
        let shown = Recorded::default();
        let connection = zbus::connection::Builder::address(bus.address.as_str())
            .unwrap()
            .name("org.freedesktop.Notifications")
            .unwrap()
            .serve_at("/org/freedesktop/Notifications", shown.clone())
            .unwrap()
            .build()
            .await
            .expect("the notification server could not take its name");
        NotificationServer { connection, shown }
    }

    pub fn shown(&self) -> Vec<Shown> {
        self.shown.0.lock().unwrap().clone()
    }

    /// Waits for a notification whose summary contains `text`.
    pub async fn wait_for(&self, text: &str, timeout: Duration) -> Shown {
        let start = Instant::now();
        loop {
            if let Some(found) = self.shown().into_iter().find(|s| s.summary.contains(text)) {
                return found;
            }
            assert!(
                start.elapsed() < timeout,
                "no notification {text:?} within {timeout:?}; shown: {:?}",
                self.shown()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The person clicks the notification (its default action).
    pub async fn click(&self, id: u32) {
        let emitter = zbus::object_server::SignalEmitter::new(
            &self.connection,
            "/org/freedesktop/Notifications",
        )
        .unwrap();
        Recorded::action_invoked(&emitter, id, "default")
            .await
            .unwrap();
    }
}
