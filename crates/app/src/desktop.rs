//! Living on the desktop: the window's settings (tray, notifications, autostart), the links and
//! files the desktop hands to Cowork (`cowork://…`, a `.mcpb` opened in the file manager), and
//! the folders the person opened as workspaces.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `desktop` in settings.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct DesktopSettings {
    /// Closing the window keeps Cowork running in the tray.
    pub close_to_tray: bool,
    /// Notifications while the window is hidden or in the background.
    pub notifications: bool,
    /// Nothing is shown; asks wait for the window (they are never denied unseen).
    pub do_not_disturb: bool,
    /// Start Cowork in the tray when the person logs in.
    pub autostart: bool,
    /// A run that took longer than this notifies when it finishes in the background.
    pub long_run_secs: u32,
    /// Folders opened as workspaces, newest first.
    pub recent_workspaces: Vec<PathBuf>,
    /// The global shortcut that opens the quick-ask window (empty: none).
    pub quick_ask_shortcut: String,
}

impl cowork_store::settings::Section for DesktopSettings {
    const KEY: &'static str = "desktop";
}

impl Default for DesktopSettings {
    fn default() -> Self {
        DesktopSettings {
            close_to_tray: true,
            notifications: true,
            do_not_disturb: false,
            autostart: false,
            long_run_secs: 30,
            recent_workspaces: Vec::new(),
            quick_ask_shortcut: "Ctrl+Alt+Space".into(),
        }
    }
}

/// How many recent folders the picker offers.
const RECENT_WORKSPACES: usize = 8;

impl DesktopSettings {
    /// `folder` goes to the top of the recent list (once).
    pub fn remember_workspace(&mut self, folder: &Path) {
        self.recent_workspaces.retain(|f| f != folder);
        self.recent_workspaces.insert(0, folder.to_path_buf());
        self.recent_workspaces.truncate(RECENT_WORKSPACES);
    }
}

/// The XDG autostart entry that starts Cowork in the tray at login.
pub fn autostart_entry() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("autostart").join("cowork.desktop"))
}

/// Writes (or removes) the autostart entry for this program, started hidden in the tray.
/// Hand-written: the XDG autostart entry is one small file, and the plugin for it would bring
/// commands the webview must not have.
pub fn set_autostart(enabled: bool, program: &Path) -> Result<(), String> {
    let entry =
        autostart_entry().ok_or("no HOME or XDG_CONFIG_HOME to put the autostart entry in")?;
    if !enabled {
        return match std::fs::remove_file(&entry) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("{}: {e}", entry.display()))
            }
            _ => Ok(()),
        };
    }
    let exec = program.to_string_lossy();
    if exec
        .chars()
        .any(|c| c.is_control() || "\\\"`$%".contains(c))
    {
        return Err(format!(
            "{exec:?}: cannot be written into an autostart entry"
        ));
    }
    let text = format!(
        "[Desktop Entry]\nType=Application\nName=Cowork\nComment=Start Cowork in the tray\nExec=\"{exec}\" --hidden\nIcon=cowork\nX-GNOME-Autostart-enabled=true\n"
    );
    if let Some(dir) = entry.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&entry, text).map_err(|e| format!("{}: {e}", entry.display()))
}

/// What the desktop asked Cowork to do: a `cowork://` link clicked in a browser or a README, or a
/// file opened with Cowork. Each only *starts* the usual review; nothing here installs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DesktopRequest {
    /// Show the install review of a toolpack (`source` as `cowork toolpacks add` takes it).
    InstallToolpack { source: String },
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DesktopRequestError {
    #[error(
        "{0:?} is not a Cowork link — expected cowork://toolpack/install?source=github:owner/repo[@ref]"
    )]
    NotALink(String),
    #[error(
        "{0:?}: a link installs only from GitHub (source=github:owner/repo[@ref]) or the MCP Registry (source=registry:<name>); add a folder or a .mcpb in Toolpacks instead"
    )]
    NotFromElsewhere(String),
}

/// Reads one command-line argument the desktop passed (a link or a file). Only sources from
/// elsewhere come by link (GitHub, the MCP Registry): a page must not point the review at a
/// folder on this computer.
pub fn desktop_request(arg: &str) -> Result<DesktopRequest, DesktopRequestError> {
    // A file manager may hand a file over as a file: URL (the desktop entry's %u).
    let local = url::Url::parse(arg)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok());
    let path = local.as_deref().unwrap_or(Path::new(arg));
    let text = path.to_string_lossy();
    let arg: &str = &text;
    if !arg.contains("://")
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("mcpb"))
    {
        return Ok(DesktopRequest::InstallToolpack {
            source: path
                .canonicalize()
                .unwrap_or_else(|_| path.to_path_buf())
                .to_string_lossy()
                .into_owned(),
        });
    }
    let not_a_link = || DesktopRequestError::NotALink(arg.to_string());
    let url = url::Url::parse(arg).map_err(|_| not_a_link())?;
    if url.scheme() != "cowork"
        || url.host_str() != Some("toolpack")
        || url.path().trim_end_matches('/') != "/install"
    {
        return Err(not_a_link());
    }
    let source = url
        .query_pairs()
        .find(|(k, _)| k == "source")
        .map(|(_, v)| v.trim().to_string())
        .ok_or_else(not_a_link)?;
    match cowork_mcp::Source::parse(&source) {
        Ok(cowork_mcp::Source::Github { .. } | cowork_mcp::Source::Registry { .. })
            if !source.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            Ok(DesktopRequest::InstallToolpack { source })
        }
        _ => Err(DesktopRequestError::NotFromElsewhere(source)),
    }
}

/// The bus name a desktop's tray host owns (the StatusNotifier protocol KDE, Xfce, and GNOME's
/// AppIndicator extension speak).
pub const TRAY_HOST: &str = "org.kde.StatusNotifierWatcher";

/// The session bus (or the bus at `address`, a test's), given three seconds to answer.
pub(crate) async fn session_bus(address: Option<&str>) -> Result<zbus::Connection, String> {
    let connect = async {
        match address {
            Some(address) => zbus::connection::Builder::address(address)?.build().await,
            None => zbus::Connection::session().await,
        }
    };
    match tokio::time::timeout(std::time::Duration::from_secs(3), connect).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(format!("no session bus ({e})")),
        Err(_) => Err("the session bus does not answer".into()),
    }
}

/// Whether `name` has an owner on the bus `session`.
pub(crate) async fn name_owned(
    session: &zbus::Connection,
    name: &str,
) -> Result<bool, zbus::Error> {
    let bus = zbus::fdo::DBusProxy::new(session).await?;
    let name = zbus::names::BusName::try_from(name).map_err(zbus::Error::from)?;
    Ok(bus.name_has_owner(name).await?)
}

/// Whether the desktop shows tray icons, kept current: a tray icon with no host to show it is
/// nowhere, so a window closed "to the tray" would be a lost app. Checked once now, then
/// followed as hosts come and go (an extension turned on, a panel restarted).
pub async fn follow_tray_host() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use futures::StreamExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let seen = std::sync::Arc::new(AtomicBool::new(false));
    let Ok(session) = session_bus(None).await else {
        return seen;
    };
    let owned = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        name_owned(&session, TRAY_HOST),
    )
    .await;
    seen.store(matches!(owned, Ok(Ok(true))), Ordering::Relaxed);
    let followed = seen.clone();
    tokio::spawn(async move {
        let Ok(bus) = zbus::fdo::DBusProxy::new(&session).await else {
            return;
        };
        let Ok(mut changes) = bus
            .receive_name_owner_changed_with_args(&[(0, TRAY_HOST)])
            .await
        else {
            return;
        };
        while let Some(change) = changes.next().await {
            if let Ok(args) = change.args() {
                followed.store(args.new_owner().is_some(), Ordering::Relaxed);
            }
        }
    });
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_start_only_a_review_of_a_source_from_elsewhere() {
        assert_eq!(
            desktop_request("cowork://toolpack/install?source=github:acme/notes-pack@v1.2.0"),
            Ok(DesktopRequest::InstallToolpack {
                source: "github:acme/notes-pack@v1.2.0".into()
            })
        );
        assert_eq!(
            desktop_request("cowork://toolpack/install?source=github%3Aacme%2Fpack"),
            Ok(DesktopRequest::InstallToolpack {
                source: "github:acme/pack".into()
            })
        );
        assert_eq!(
            desktop_request("cowork://toolpack/install?source=registry:io.github.acme/notes"),
            Ok(DesktopRequest::InstallToolpack {
                source: "registry:io.github.acme/notes".into()
            })
        );
        for local in [
            "cowork://toolpack/install?source=registry:io.github.acme/notes/../x",
            "cowork://toolpack/install?source=registry:notes",
            "cowork://toolpack/install?source=/tmp",
            "cowork://toolpack/install?source=/home/me/Downloads/x.mcpb",
            "cowork://toolpack/install?source=github:acme/pack/../../x",
            "cowork://toolpack/install?source=github:acme/pack@v1%0A--yes",
        ] {
            assert!(
                matches!(
                    desktop_request(local),
                    Err(DesktopRequestError::NotFromElsewhere(_))
                ),
                "{local}"
            );
        }
        for other in [
            "https://example.com/?source=github:a/b",
            "cowork://toolpack/remove?source=github:a/b",
            "cowork://settings/install?source=github:a/b",
            "cowork://toolpack/install",
            "notes.txt",
        ] {
            assert!(
                matches!(
                    desktop_request(other),
                    Err(DesktopRequestError::NotALink(_))
                ),
                "{other}"
            );
        }
        for file in ["/tmp/weather.mcpb", "file:///tmp/weather.mcpb"] {
            assert!(
                matches!(
                    desktop_request(file),
                    Ok(DesktopRequest::InstallToolpack { source }) if source == "/tmp/weather.mcpb"
                ),
                "{file}"
            );
        }
    }

    #[test]
    fn recent_workspaces_are_newest_first_once_and_bounded() {
        let mut s = DesktopSettings::default();
        for i in 0..10 {
            s.remember_workspace(Path::new(&format!("/w/{i}")));
        }
        s.remember_workspace(Path::new("/w/5"));
        assert_eq!(s.recent_workspaces.len(), RECENT_WORKSPACES);
        assert_eq!(s.recent_workspaces[0], Path::new("/w/5"));
        assert_eq!(
            s.recent_workspaces
                .iter()
                .filter(|p| *p == Path::new("/w/5"))
                .count(),
            1
        );
    }
}
