//! `cowork doctor`: what works on this computer, what is missing, and the one command or click
//! that fixes each. Every check asks the real thing (the keyring answers, bubblewrap makes a
//! sandbox, the model files load, a bus name has an owner), never a guess from the distribution.
//! Nothing here starts the app's workers: a doctor must run where the app itself cannot.

use crate::agent_settings::{AgentSettings, LOCAL_SERVERS, check_provider, detect_local_servers};
use crate::desktop::DesktopSettings;
use cowork_store::DataDir;
use cowork_store::settings::Section;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// What Cowork can do on this computer, one row each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    Data,
    Model,
    LocalModelServer,
    Keyring,
    Sandbox,
    Memory,
    Browser,
    VoiceIn,
    VoiceOut,
    Tray,
    Shortcut,
    Notifications,
}

impl Capability {
    pub fn title(self) -> &'static str {
        match self {
            Capability::Data => "Your data",
            Capability::Model => "The chat model",
            Capability::LocalModelServer => "A model server on this computer",
            Capability::Keyring => "Passwords and keys (keyring)",
            Capability::Sandbox => "Programs run confined (sandbox)",
            Capability::Memory => "Memory found by meaning",
            Capability::Browser => "The browser",
            Capability::VoiceIn => "Speaking to Cowork",
            Capability::VoiceOut => "Cowork reading aloud",
            Capability::Tray => "The tray icon",
            Capability::Shortcut => "The quick-ask shortcut",
            Capability::Notifications => "Notifications",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Health {
    Works,
    /// It works in part (memory by words without the model; a shortcut bound by hand).
    Degraded,
    Missing,
    /// Not set up, and nothing needs it yet.
    NotSetUp,
}

/// One row: how a capability is, in words, and what fixes it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Finding {
    pub capability: Capability,
    pub health: Health,
    pub detail: String,
    /// The one command or click that fixes it.
    pub fix: Option<String>,
    /// The person turned on or set up something that needs it: broken, it fails the doctor.
    pub needed: bool,
}

impl Finding {
    fn new(capability: Capability, health: Health, detail: impl Into<String>) -> Finding {
        Finding {
            capability,
            health,
            detail: detail.into(),
            fix: None,
            needed: false,
        }
    }
    fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = Some(fix.into());
        self
    }
    fn needed(mut self, needed: bool) -> Finding {
        self.needed = needed;
        self
    }

    /// Something the person relies on does not work.
    pub fn fails(&self) -> bool {
        self.needed && matches!(self.health, Health::Missing | Health::Degraded)
    }
}

/// The desktop session the checks look at.
#[derive(Clone, Debug)]
pub struct Place {
    /// A session bus address instead of the session's own (tests).
    pub bus: Option<String>,
    pub display: Display,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    X11,
    Wayland,
    /// No desktop session (a server, a container): the CLI works, the window cannot open.
    None,
}

impl Place {
    /// This process's session, as its environment names it.
    pub fn here() -> Place {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let display = match (set("WAYLAND_DISPLAY"), set("DISPLAY")) {
            (true, _) => Display::Wayland,
            (false, true) => Display::X11,
            (false, false) => Display::None,
        };
        Place { bus: None, display }
    }
}

/// Every check, in the order a person reads them, for the data in `home` (else where the app
/// keeps it) in the session `place`.
pub async fn examine(
    home: Option<std::path::PathBuf>,
    place: &Place,
) -> Result<Vec<Finding>, cowork_store::StoreError> {
    let home = match home {
        Some(home) => DataDir::at(home),
        None => DataDir::locate()?,
    };
    let home = &home;
    let settings = home.settings_path();
    let agent = AgentSettings::load(&settings);
    let desktop = DesktopSettings::load(&settings).unwrap_or_default();
    let session = crate::desktop::session_bus(place.bus.as_deref()).await;
    let (model, servers, keyring) = tokio::join!(
        model(&agent),
        local_servers(),
        tokio::task::spawn_blocking(keyring),
    );
    let keyring = keyring
        .unwrap_or_else(|e| Finding::new(Capability::Keyring, Health::Missing, e.to_string()));
    // The key is read from the keyring when no variable is named; a server on this computer
    // (Ollama, llama.cpp) takes none, so only a model elsewhere relies on it.
    let uses_keyring = matches!(&agent, Ok(Some(a)) if a.api_key_env.is_empty() && !a.is_local());
    Ok(vec![
        data(home),
        model,
        servers,
        keyring.needed(uses_keyring),
        sandbox(),
        memory(&settings),
        browser(home).await,
        voice_in(&settings),
        voice_out(),
        desktop_service(
            &session,
            place,
            Capability::Tray,
            TRAY,
            desktop.close_to_tray,
        )
        .await,
        shortcut(&desktop, place.display),
        desktop_service(
            &session,
            place,
            Capability::Notifications,
            NOTIFICATIONS,
            desktop.notifications && !desktop.do_not_disturb,
        )
        .await,
    ])
}

const NO_DESKTOP: &str =
    "no desktop session here (the window needs one; the command line does not)";

/// A desktop service matters only where the window can run: on a server it is not set up, not
/// broken.
async fn desktop_service(
    session: &Result<zbus::Connection, String>,
    place: &Place,
    capability: Capability,
    service: BusService,
    wanted: bool,
) -> Finding {
    match place.display {
        Display::None => Finding::new(capability, Health::NotSetUp, NO_DESKTOP),
        Display::X11 | Display::Wayland => bus_service(session, capability, service)
            .await
            .needed(wanted),
    }
}

fn data(home: &DataDir) -> Finding {
    let settings = home.settings_path();
    if settings.exists()
        && let Err(e) = cowork_store::settings::read_json(&settings)
    {
        return Finding::new(Capability::Data, Health::Missing, e).needed(true);
    }
    let unreadable = crate::families::unreadable_settings(&settings);
    if !unreadable.is_empty() {
        let (keys, whys): (Vec<_>, Vec<_>) = unreadable.into_iter().unzip();
        let why = format!(
            "{} — until then `{}` use their defaults",
            whys.join("; "),
            keys.join("`, `")
        );
        return Finding::new(Capability::Data, Health::Degraded, why).needed(true);
    }
    Finding::new(
        Capability::Data,
        Health::Works,
        format!("kept in {}", home.root().display()),
    )
}

async fn model(agent: &Result<Option<AgentSettings>, String>) -> Finding {
    let settings = match agent {
        Err(e) => {
            return Finding::new(Capability::Model, Health::Missing, e.clone())
                .fix("fix it in Settings → Model")
                .needed(true);
        }
        Ok(None) => {
            return Finding::new(Capability::Model, Health::NotSetUp, "no model chosen yet")
                .fix("open Cowork and pick a model server or paste a key (Settings → Model), or `cowork provider set`");
        }
        Ok(Some(settings)) => settings,
    };
    let answer = tokio::time::timeout(Duration::from_secs(5), check_provider(settings)).await;
    let place = format!("{} at {}", settings.model, settings.base_url);
    match answer {
        Ok(Ok(_)) => Finding::new(Capability::Model, Health::Works, format!("{place} answers")),
        Ok(Err(e)) => Finding::new(Capability::Model, Health::Missing, format!("{place}: {e}"))
            .fix("check the address and key in Settings → Model (Test connection)")
            .needed(true),
        Err(_) => Finding::new(Capability::Model, Health::Missing, format!("{place}: no answer within 5 s"))
            .fix("check that the server runs and this computer reaches it, then Settings → Model → Test connection")
            .needed(true),
    }
}

async fn local_servers() -> Finding {
    let found = detect_local_servers(LOCAL_SERVERS).await;
    if found.is_empty() {
        return Finding::new(
            Capability::LocalModelServer,
            Health::NotSetUp,
            "none running (Ollama, LM Studio, llama.cpp at their usual ports)",
        )
        .fix("optional: install Ollama (https://ollama.com) and `ollama pull qwen2.5`, for a model that never leaves this computer");
    }
    let names: Vec<String> = found
        .iter()
        .map(|s| format!("{} ({} models)", s.name, s.models.len()))
        .collect();
    Finding::new(
        Capability::LocalModelServer,
        Health::Works,
        names.join(", "),
    )
}

fn keyring() -> Finding {
    match crate::secrets::get("doctor/probe") {
        Ok(_) => Finding::new(Capability::Keyring, Health::Works, "the Secret Service answers"),
        Err(e) => Finding::new(Capability::Keyring, Health::Missing, e)
            .fix("run Cowork in a desktop session with a keyring (GNOME Keyring: `sudo apt install gnome-keyring`), or name an environment variable for the key in Settings → Model"),
    }
}

fn sandbox() -> Finding {
    use cowork_contract::confine;
    let finding = match (confine::bwrap(), confine::available()) {
        (Some(_), true) => Finding::new(Capability::Sandbox, Health::Works, "bubblewrap confines commands and toolpacks"),
        (None, _) => Finding::new(Capability::Sandbox, Health::Missing, "bubblewrap is not installed: commands and toolpacks cannot be confined")
            .fix("sudo apt install bubblewrap"),
        (Some(path), false) => Finding::new(
            Capability::Sandbox,
            Health::Missing,
            format!("{} cannot make a sandbox here (user namespaces are off)", path.display()),
        )
        .fix("sudo sysctl -w kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d to keep it), or run Cowork outside this container"),
    };
    finding.needed(true)
}

fn memory(settings: &Path) -> Finding {
    let vault = crate::VaultSettings::load(settings).unwrap_or_default();
    match crate::vault::local_embedder(&vault.embedder) {
        None => Finding::new(
            Capability::Memory,
            Health::Works,
            "an embedding server of yours (Settings → Memory)",
        ),
        Some(Ok(_)) => Finding::new(
            Capability::Memory,
            Health::Works,
            "the offline model multilingual-e5-small is here",
        ),
        Some(Err(e)) if matches!(vault.embedder, cowork_vault::EmbedderSettings::None) => {
            Finding::new(
                Capability::Memory,
                Health::NotSetUp,
                format!("by words only: {e}"),
            )
        }
        Some(Err(e)) => Finding::new(
            Capability::Memory,
            Health::Degraded,
            format!("found by words only: {e}"),
        )
        .needed(true),
    }
}

async fn browser(home: &DataDir) -> Finding {
    let settings = cowork_browser::BrowserSettings::load(&home.settings_path()).unwrap_or_default();
    let config =
        cowork_browser::BrowserConfig::from_settings(home.root().join("browser-profile"), settings);
    match config.check().await {
        Ok(what) => Finding::new(Capability::Browser, Health::Works, what),
        Err(cowork_contract::ToolError::NotConfigured { what, how, .. }) => {
            Finding::new(Capability::Browser, Health::Missing, what).fix(how)
        }
        Err(e) => Finding::new(Capability::Browser, Health::Missing, e.to_string()),
    }
}

fn voice_in(settings: &Path) -> Finding {
    let voice = cowork_voice::VoiceSettings::load(settings).unwrap_or_default();
    let model = voice.model_path();
    if !model.is_file() {
        return Finding::new(
            Capability::VoiceIn,
            Health::Missing,
            format!("no speech model at {}", model.display()),
        )
        .fix(cowork_voice::model_setup());
    }
    let microphones = cowork_voice::input_devices();
    match microphones.is_empty() {
        true => Finding::new(Capability::VoiceIn, Health::Degraded, "the speech model is here, but no microphone was found (files can still be transcribed)")
            .fix("plug in a microphone, or check it in the system's sound settings"),
        false => Finding::new(
            Capability::VoiceIn,
            Health::Works,
            format!("{} microphone(s); model {}", microphones.len(), model.display()),
        ),
    }
}

fn voice_out() -> Finding {
    match cowork_mcp::sandbox::find_program("espeak-ng", Path::new("/")) {
        Some(path) => Finding::new(
            Capability::VoiceOut,
            Health::Works,
            format!("espeak-ng at {}", path.display()),
        ),
        None => Finding::new(
            Capability::VoiceOut,
            Health::Missing,
            "espeak-ng is not installed",
        )
        .fix("sudo apt install espeak-ng"),
    }
}

/// The desktop services Cowork looks for on the session bus, with what their absence means.
struct BusService {
    name: &'static str,
    works: &'static str,
    missing: &'static str,
    fix: &'static str,
}

const TRAY: BusService = BusService {
    name: crate::desktop::TRAY_HOST,
    works: "the desktop shows tray icons",
    missing: "this desktop shows no tray icons (GNOME needs an extension): closing the window quits Cowork instead of hiding it",
    fix: "on GNOME: sudo apt install gnome-shell-extension-appindicator, then log in again",
};

const NOTIFICATIONS: BusService = BusService {
    name: "org.freedesktop.Notifications",
    works: "the desktop shows notifications",
    missing: "no notification service: asks wait in the window, unseen until you open it",
    fix: "log in to a desktop session (GNOME, KDE, Xfce show notifications), or install a notification daemon such as dunst",
};

async fn bus_service(
    session: &Result<zbus::Connection, String>,
    capability: Capability,
    service: BusService,
) -> Finding {
    let session = match session {
        Ok(session) => session,
        Err(e) => {
            return Finding::new(
                capability,
                Health::Missing,
                format!("{e}: {}", service.missing),
            )
            .fix(service.fix);
        }
    };
    let owned = crate::desktop::name_owned(session, service.name);
    match tokio::time::timeout(Duration::from_secs(3), owned).await {
        Ok(Ok(true)) => Finding::new(capability, Health::Works, service.works),
        Ok(Ok(false)) => {
            Finding::new(capability, Health::Missing, service.missing).fix(service.fix)
        }
        Ok(Err(e)) => Finding::new(capability, Health::Missing, format!("the session bus: {e}"))
            .fix(service.fix),
        Err(_) => Finding::new(
            capability,
            Health::Missing,
            "the session bus does not answer",
        )
        .fix(service.fix),
    }
}

/// A global shortcut is grabbed through X11; a Wayland session gives it only through its own
/// settings (or the desktop portal), so there it does not work from Cowork's side.
fn shortcut(desktop: &DesktopSettings, display: Display) -> Finding {
    let wanted = !desktop.quick_ask_shortcut.is_empty();
    let key = desktop.quick_ask_shortcut.as_str();
    let finding = match (display, wanted) {
        (Display::None, _) => Finding::new(Capability::Shortcut, Health::NotSetUp, NO_DESKTOP),
        (Display::Wayland, _) => Finding::new(
            Capability::Shortcut,
            Health::Degraded,
            "a Wayland session does not let apps take a global shortcut",
        )
        .fix(format!(
            "on GNOME, press “Bind it in GNOME” in Settings → Desktop; elsewhere bind the command `cowork-desktop --quick-ask` to {} in your desktop's keyboard settings",
            if wanted { key } else { "a key" }
        )),
        (Display::X11, true) => Finding::new(
            Capability::Shortcut,
            Health::Works,
            format!("{key} opens quick ask"),
        ),
        (Display::X11, false) => {
            Finding::new(Capability::Shortcut, Health::NotSetUp, "no shortcut chosen")
                .fix("choose one in Settings → Desktop")
        }
    };
    finding.needed(wanted && display != Display::None)
}
