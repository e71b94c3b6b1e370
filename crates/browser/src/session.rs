//! The app's one browser: Chromium on the app's own persistent profile (never the person's
//! Chrome profile), driven through Playwright's driver. Started on first use, headless for
//! work; restarted headed on the same profile when the person must act (a login), and headless
//! again afterwards, carrying the cookies across (session cookies would not survive a
//! restart of Chromium otherwise). A crashed browser is dropped: the call that saw it fails
//! with a clear error and the next call starts a fresh one.

use crate::login::{FACTS_JS, PageFacts};
use cowork_contract::ToolError;
use playwright_rs::protocol::{BrowserContext, BrowserContextOptions, Page, Playwright, Viewport};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct BrowserConfig {
    /// The persistent profile (cookies, storage): `<data dir>/browser-profile`.
    pub profile_dir: PathBuf,
    /// Chromium (Debian's `/usr/bin/chromium` by default; `COWORK_CHROMIUM` or settings
    /// `browser.executable` choose another).
    pub executable: PathBuf,
    /// More sign-in hosts than the built-in list (`browser.ssoHosts`): a company's IdP.
    pub sso_hosts: Vec<String>,
    /// How long a login suspension waits before it times out (the person can extend it).
    pub login_timeout: Duration,
    /// Per-action timeout inside a page (clicks, waits), in ms.
    pub action_timeout_ms: f64,
    /// Whether a browser window can be shown (a display exists): without one, a login
    /// suspension says how to get one instead of opening a window.
    pub can_show_window: bool,
}

/// `browser` in settings.json.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrowserSettings {
    /// Another Chromium than Debian's.
    pub executable: Option<PathBuf>,
    /// More sign-in hosts than the built-in list: a company's IdP.
    pub sso_hosts: Vec<String>,
    /// How long a login waits, in minutes.
    pub login_minutes: Option<f64>,
}

impl cowork_store::settings::Section for BrowserSettings {
    const KEY: &'static str = "browser";
}

impl BrowserConfig {
    /// The configuration for `settings`, with the app's own profile in `profile_dir`.
    pub fn from_settings(profile_dir: PathBuf, settings: BrowserSettings) -> Self {
        let mut config = BrowserConfig::new(profile_dir);
        if let Some(exe) = settings.executable {
            config.executable = exe;
        }
        config.sso_hosts = settings.sso_hosts;
        if let Some(minutes) = settings.login_minutes.filter(|m| *m > 0.0) {
            config.login_timeout = Duration::from_secs_f64(minutes * 60.0);
        }
        config
    }

    pub fn new(profile_dir: PathBuf) -> Self {
        BrowserConfig {
            profile_dir,
            executable: std::env::var_os("COWORK_CHROMIUM")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium")),
            sso_hosts: Vec::new(),
            login_timeout: Duration::from_secs(30 * 60),
            action_timeout_ms: 10_000.0,
            can_show_window: has_display(),
        }
    }
}

pub(crate) struct Live {
    // Dropping the Playwright handle ends the driver (and its Chromium): kept for its life.
    _playwright: Playwright,
    pub context: BrowserContext,
    pub headed: bool,
    /// Index of the current tab in `context.pages()`.
    pub current: usize,
}

pub(crate) struct Session {
    pub config: BrowserConfig,
    live: tokio::sync::Mutex<Option<Live>>,
    /// The current tab's address: effects are computed before the call, without the browser.
    current_url: Mutex<String>,
}

impl BrowserConfig {
    fn chromium(&self) -> Result<(), ToolError> {
        match self.executable.exists() {
            true => Ok(()),
            false => Err(ToolError::not_configured(
                format!("no Chromium at {}", self.executable.display()),
                "install Chromium (`sudo apt-get install chromium`), or name yours in Settings → Browser (COWORK_CHROMIUM)",
            )),
        }
    }

    /// Whether the browser can start here: Chromium is where the settings say, and the
    /// Playwright driver starts (and is ended again). For `cowork doctor`.
    pub async fn check(&self) -> Result<String, ToolError> {
        self.chromium()?;
        drop(driver().await?);
        Ok(format!(
            "Chromium at {} and the Playwright driver start",
            self.executable.display()
        ))
    }
}

async fn driver() -> Result<Playwright, ToolError> {
    Playwright::launch().await.map_err(|e| {
        ToolError::not_configured(
            format!(
                "the Playwright driver could not start: {}",
                e.to_string().lines().next().unwrap_or_default()
            ),
            cowork_assets::fetch_hint("playwright-driver"),
        )
    })
}

/// Whether a display exists for a headed window.
fn has_display() -> bool {
    std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty())
        || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty())
}

fn running_as_root() -> bool {
    // Chromium refuses its sandbox as root; anyone else keeps it.
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// A Playwright error as a tool error; a closed target means the browser went away.
pub(crate) fn browser_error(what: &str, e: playwright_rs::Error) -> ToolError {
    let text = e.to_string();
    if is_gone(&text) {
        return ToolError::failed(format!(
            "the browser stopped while {what} (it crashed or was closed): the next browser call starts a fresh one"
        ));
    }
    let text = text.lines().take(6).collect::<Vec<_>>().join("\n");
    ToolError::failed(format!("{what}: {text}"))
}

fn is_gone(text: &str) -> bool {
    let t = text.to_lowercase();
    t.contains("target closed")
        || t.contains("has been closed")
        || t.contains("browser has disconnected")
        || t.contains("connection closed")
        || t.contains("channel closed")
}

impl Session {
    pub fn new(config: BrowserConfig) -> Self {
        Session {
            config,
            live: tokio::sync::Mutex::new(None),
            current_url: Mutex::new(String::new()),
        }
    }

    pub fn current_url(&self) -> String {
        self.current_url.lock().unwrap().clone()
    }

    pub fn set_current_url(&self, url: &str) {
        *self.current_url.lock().unwrap() = url.to_string();
    }

    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, Option<Live>> {
        self.live.lock().await
    }

    async fn launch(&self, headed: bool) -> Result<Live, ToolError> {
        let c = &self.config;
        c.chromium()?;
        if headed && !c.can_show_window {
            return Err(ToolError::failed(
                "a browser window is needed but there is no display (DISPLAY is unset): run Cowork on a desktop, or under `xvfb-run -a`",
            ));
        }
        std::fs::create_dir_all(&c.profile_dir).map_err(|e| {
            ToolError::failed(format!("browser profile {}: {e}", c.profile_dir.display()))
        })?;
        let started = std::time::Instant::now();
        let playwright = driver().await?;
        let driver_ms = started.elapsed().as_millis();
        let mut args: Vec<String> = [
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-quic",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if running_as_root() {
            args.push("--no-sandbox".into());
        }
        let mut options = BrowserContextOptions::builder()
            .viewport(Viewport {
                width: 1280,
                height: 800,
            })
            .build();
        options.headless = Some(!headed);
        options.executable_path = Some(c.executable.to_string_lossy().into_owned());
        options.args = Some(args);
        options.timeout = Some(30_000.0);
        let context = playwright
            .chromium()
            .launch_persistent_context_with_options(c.profile_dir.to_string_lossy().into_owned(), options)
            .await
            .map_err(|e| {
                let text = e.to_string();
                if text.contains("ProcessSingleton") || text.contains("profile") && text.contains("in use") || text.contains("SingletonLock") {
                    ToolError::failed(format!("the browser profile {} is in use by another Cowork process (the window?): close it, or use the browser from there", c.profile_dir.display()))
                } else {
                    ToolError::failed(format!("Chromium did not start: {}", text.lines().take(4).collect::<Vec<_>>().join(" ")))
                }
            })?;
        context.set_default_timeout(c.action_timeout_ms).await;
        context.set_default_navigation_timeout(30_000.0).await;
        let chromium_ms = started.elapsed().as_millis() - driver_ms;
        tracing::info!(headed, driver_ms, chromium_ms, profile = %c.profile_dir.display(), "browser started");
        Ok(Live {
            _playwright: playwright,
            context,
            headed,
            current: 0,
        })
    }

    /// The live browser (started headless if none, or again if it went away).
    pub async fn ensure<'a>(&self, live: &'a mut Option<Live>) -> Result<&'a mut Live, ToolError> {
        if live.as_ref().is_some_and(|l| l.context.is_closed()) {
            tracing::warn!("browser: the previous browser is gone; starting a fresh one");
            *live = None;
            self.set_current_url("");
        }
        if live.is_none() {
            let fresh = self.launch(false).await?;
            // Use Chromium's own first tab rather than open a second one beside it.
            first_tab(&fresh.context).await;
            *live = Some(fresh);
        }
        Ok(live.as_mut().unwrap())
    }

    /// The current tab (a new one when the browser has none).
    pub async fn page(&self, live: &mut Option<Live>) -> Result<Page, ToolError> {
        let l = self.ensure(live).await?;
        let pages = l.context.pages();
        let page = match pages.get(l.current.min(pages.len().saturating_sub(1))) {
            Some(p) if !p.is_closed() => p.clone(),
            _ => {
                l.current = 0;
                l.context
                    .new_page()
                    .await
                    .map_err(|e| browser_error("opening a tab", e))?
            }
        };
        Ok(page)
    }

    /// Drops the live browser when it went away, so the next call starts a fresh one.
    pub fn forget_if_gone(&self, live: &mut Option<Live>, error: &ToolError) {
        if is_gone(&error.to_string()) || live.as_ref().is_some_and(|l| l.context.is_closed()) {
            *live = None;
            self.set_current_url("");
        }
    }

    /// Restarts the browser on the same profile, headed or headless, carrying the cookies, and
    /// opens `url` in it.
    pub async fn relaunch(
        &self,
        live: &mut Option<Live>,
        headed: bool,
        url: &str,
    ) -> Result<Page, ToolError> {
        let mut cookies = Vec::new();
        if let Some(old) = live.take()
            && !old.context.is_closed()
        {
            cookies = old.context.cookies(None).await.unwrap_or_default();
            let _ = old.context.close().await;
        }
        let fresh = self.launch(headed).await?;
        if !cookies.is_empty()
            && let Err(e) = fresh.context.add_cookies(&cookies).await
        {
            tracing::warn!("browser: cookies not carried over: {e}");
        }
        let page = match first_tab(&fresh.context).await {
            Some(p) => p,
            None => fresh
                .context
                .new_page()
                .await
                .map_err(|e| browser_error("opening a tab", e))?,
        };
        *live = Some(fresh);
        if !url.is_empty() {
            page.goto(url, None)
                .await
                .map_err(|e| browser_error(&format!("opening {url}"), e))?;
            self.set_current_url(&page.url());
        }
        Ok(page)
    }

    /// What the page shows now (see `login.rs`).
    pub async fn facts(&self, page: &Page, status: u16) -> Result<PageFacts, ToolError> {
        // Playwright's evaluate has no timeout of its own, and a page caught mid-navigation
        // (a login form just submitted) can leave it unanswered: bound it.
        let read = page.evaluate::<(), PageFacts>(FACTS_JS, None);
        let mut facts: PageFacts = tokio::time::timeout(Duration::from_secs(5), read)
            .await
            .map_err(|_| {
                ToolError::failed("the page did not answer within 5 s (still loading?): try again")
            })?
            .map_err(|e| browser_error("reading the page", e))?;
        facts.status = status;
        Ok(facts)
    }
}

/// Chromium's first tab of a just-started persistent context. Playwright announces it a moment
/// after the launch returns; a tab opened before that would sit beside it, and a person could
/// log in in the other one.
async fn first_tab(context: &BrowserContext) -> Option<Page> {
    for _ in 0..40 {
        if let Some(page) = context.pages().into_iter().next() {
            return Some(page);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}
