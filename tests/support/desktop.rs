//! The desktop's services for one test: a private D-Bus session bus and a notification server on
//! it (org.freedesktop.Notifications, as dunst or GNOME Shell serve it) that records what it was
//! asked to show and can click a notification (the `ActionInvoked` signal a daemon sends).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A private session bus (`dbus-daemon --session`), killed when dropped.
pub struct SessionBus {
    child: Child,
    pub address: String,
}

impl SessionBus {
    pub fn start(dir: &Path) -> SessionBus {
        let socket = dir.join("session-bus");
        let address = format!("unix:path={}", socket.display());
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address"])
            .arg(format!("--address={address}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is not installed: run tests/setup.sh");
        // The daemon prints its address once it accepts connections; the socket's file appears
        // earlier (at bind), and a client that comes then is refused.
        let mut ready = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut ready,
        )
        .unwrap();
        assert!(!ready.is_empty(), "the session bus did not start");
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
    pub async fn wait_for(&self, text: &str) -> Shown {
        crate::wait::until_true(&format!("a notification {text:?}"), || {
            let shown = self.shown();
            match shown.iter().any(|s| s.summary.contains(text)) {
                true => Ok(()),
                false => Err(format!("{shown:?}")),
            }
        })
        .await;
        let mut shown = self.shown().into_iter();
        shown.find(|s| s.summary.contains(text)).unwrap()
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

/// A tray host on `bus`, as a desktop's panel is one: the StatusNotifierWatcher apps register
/// their tray icon with (libayatana-appindicator, which tauri's tray uses, looks for it), and a
/// way to click an item of the icon's menu (the dbusmenu `Event` a panel sends).
pub struct TrayHost {
    connection: zbus::Connection,
    items: Arc<Mutex<Vec<(String, String)>>>,
}

#[derive(Clone, Default)]
struct Watcher(Arc<Mutex<Vec<(String, String)>>>);

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    /// `service` is the item's object path (appindicator) or its bus name (others).
    fn register_status_notifier_item(
        &self,
        service: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
    ) {
        let sender = header.sender().map(|s| s.to_string()).unwrap_or_default();
        let (bus, path) = if service.starts_with('/') {
            (sender, service)
        } else {
            (service, "/StatusNotifierItem".to_string())
        };
        self.0.lock().unwrap().push((bus, path));
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(bus, path)| format!("{bus}{path}"))
            .collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

/// One entry of a tray menu: its dbusmenu id and label (mnemonic underscores removed).
#[derive(Clone, Debug)]
pub struct MenuEntry {
    pub id: i32,
    pub label: String,
    pub enabled: bool,
}

type Layout = (
    i32,
    std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
    Vec<zbus::zvariant::OwnedValue>,
);

impl TrayHost {
    pub async fn start(bus: &SessionBus) -> TrayHost {
        TrayHost::on(&bus.address).await
    }

    /// A tray host on the bus at `address` (one started elsewhere: a bench's, a clean root's).
    pub async fn on(address: &str) -> TrayHost {
        let watcher = Watcher::default();
        let items = watcher.0.clone();
        let connection = zbus::connection::Builder::address(address)
            .unwrap()
            .name("org.kde.StatusNotifierWatcher")
            .unwrap()
            .serve_at("/StatusNotifierWatcher", watcher)
            .unwrap()
            .build()
            .await
            .expect("the tray host could not take its name");
        TrayHost { connection, items }
    }

    /// The menu of the first icon registered, waiting for one.
    pub async fn menu(&self) -> Vec<MenuEntry> {
        crate::wait::until_true("a tray icon to register", || {
            match self.items.lock().unwrap().is_empty() {
                true => Err("none".into()),
                false => Ok(()),
            }
        })
        .await;
        let (bus, path) = self.items.lock().unwrap()[0].clone();
        let menu = self.menu_path(&bus, &path).await;
        let proxy = zbus::Proxy::new(&self.connection, bus, menu, "com.canonical.dbusmenu")
            .await
            .unwrap();
        let (_revision, layout): (u32, Layout) = proxy
            .call("GetLayout", &(0i32, -1i32, Vec::<String>::new()))
            .await
            .expect("the tray menu's layout");
        let mut entries = Vec::new();
        flatten(layout, &mut entries);
        entries
    }

    /// Waits until the menu shows what `shows` looks for (menus follow the app's state
    /// asynchronously), and returns it.
    pub async fn menu_when(
        &self,
        what: &str,
        shows: impl Fn(&[MenuEntry]) -> bool,
    ) -> Vec<MenuEntry> {
        crate::wait::until(what, || async {
            let menu = self.menu().await;
            match shows(&menu) {
                true => Ok(menu),
                false => Err(format!("{menu:?}")),
            }
        })
        .await
    }

    async fn menu_path(&self, bus: &str, path: &str) -> zbus::zvariant::OwnedObjectPath {
        let item = zbus::Proxy::new(
            &self.connection,
            bus.to_string(),
            path.to_string(),
            "org.kde.StatusNotifierItem",
        )
        .await
        .unwrap();
        item.get_property("Menu")
            .await
            .expect("the tray icon names its menu")
    }

    /// The person clicks the menu entry labelled `label`.
    pub async fn click(&self, label: &str) {
        let entries = self.menu().await;
        let entry = entries
            .iter()
            .find(|e| e.label == label)
            .unwrap_or_else(|| panic!("no tray menu entry {label:?} in {entries:?}"));
        let (bus, path) = self.items.lock().unwrap()[0].clone();
        let menu = self.menu_path(&bus, &path).await;
        let proxy = zbus::Proxy::new(&self.connection, bus, menu, "com.canonical.dbusmenu")
            .await
            .unwrap();
        let timestamp = 0u32;
        let _: () = proxy
            .call(
                "Event",
                &(
                    entry.id,
                    "clicked",
                    zbus::zvariant::Value::I32(0),
                    timestamp,
                ),
            )
            .await
            .expect("the tray menu took the click");
    }
}

fn flatten(layout: Layout, out: &mut Vec<MenuEntry>) {
    let (id, properties, children) = layout;
    let text = |key: &str| {
        properties
            .get(key)
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
    };
    if let Some(label) = text("label") {
        out.push(MenuEntry {
            id,
            label: label.replace('_', ""),
            enabled: properties
                .get("enabled")
                .and_then(|v| bool::try_from(v).ok())
                .unwrap_or(true),
        });
    }
    for child in children {
        if let Ok(child) = Layout::try_from(child) {
            flatten(child, out);
        }
    }
}
