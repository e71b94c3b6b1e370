//! The browser tools. Navigation is reviewed as `browser.navigate(origin)`, acting on a page as
//! `browser.act(origin)` of the page shown; `browser_evaluate` runs code in the page, which a
//! built-in rule always asks about. Every tool that returns page content is open-world: the
//! content is untrusted and taints the conversation.

use crate::login::{LoginCondition, wall_reason};
use crate::session::{Live, browser_error};
use crate::{BrowserTools, Shared};
use cowork_contract::{
    CallPlan, Content, Effect, EffectEnv, SuspendRequest, ToolContext, ToolError, ToolResult, tools,
};
use playwright_rs::protocol::{
    AriaSnapshotMode, AriaSnapshotOptions, GotoOptions, Locator, Page, ScreenshotOptions,
    WaitForOptions, WaitForState, WaitUntil,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The most page text one call hands the model.
const MAX_TEXT: usize = 30_000;

/// `scheme://host:port` of a web address; only http(s) pages are opened.
pub(crate) fn origin_of(raw: &str) -> Result<String, ToolError> {
    cowork_contract::address::web_origin(raw).map(|(_, origin)| origin)
}

/// The plan of opening `url`: reviewed as navigation to its origin.
fn opening(url: &str) -> Result<CallPlan, ToolError> {
    Ok(CallPlan::new(vec![Effect::BrowserNavigate {
        origin: origin_of(url)?,
    }]))
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[… cut: call browser_snapshot on a smaller part, or browser_evaluate]");
    }
    text
}

/// The page's accessible outline with refs (`[ref=e12]`) the other tools accept.
async fn outline(page: &Page) -> Result<String, ToolError> {
    let text = page
        .aria_snapshot(AriaSnapshotOptions::default().mode(AriaSnapshotMode::Ai))
        .await
        .map_err(|e| browser_error("reading the page outline", e))?;
    Ok(cut(text))
}

/// Which element: a ref from browser_snapshot, a CSS selector, or visible text.
#[derive(Deserialize, JsonSchema, Default, Clone)]
pub struct Target {
    /// A ref from browser_snapshot, e.g. `e12` (preferred).
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    /// A CSS selector.
    pub selector: Option<String>,
    /// Visible text of the element (first match).
    pub text: Option<String>,
}

impl Target {
    fn locate(&self, page: &Page) -> Result<Locator, ToolError> {
        match (&self.reference, &self.selector, &self.text) {
            (Some(r), None, None) => {
                Ok(page.locator(format!("aria-ref={}", r.trim().trim_start_matches("ref="))))
            }
            (None, Some(s), None) => Ok(page.locator(s.as_str())),
            (None, None, Some(t)) => Ok(page.get_by_text(t, false).first()),
            _ => Err(ToolError::invalid(
                "name the element one way: `ref` (from browser_snapshot), `selector` or `text`",
            )),
        }
    }
}

/// Where the page is after an action.
#[derive(Serialize, JsonSchema)]
pub struct PageState {
    pub url: String,
    pub title: String,
    /// Set when the page now asks for a login: call browser_navigate on `url` to have the
    /// person log in (the task waits for them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub login_wall: Option<String>,
}

impl Shared {
    async fn state(&self, page: &Page) -> Result<PageState, ToolError> {
        let facts = self.session.facts(page, 0).await?;
        self.session.set_current_url(&facts.url);
        let login_wall = wall_reason(&facts, &self.session.config.sso_hosts);
        Ok(PageState {
            url: facts.url,
            title: facts.title,
            login_wall,
        })
    }

    /// Runs `act` on the current tab (the browser starts if none runs), one browser call at a
    /// time; a failure whose browser went away leaves none behind.
    async fn on_page<T>(
        &self,
        act: impl AsyncFnOnce(Page) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let mut live = self.session.lock().await;
        let result = match self.session.page(&mut live).await {
            Ok(page) => act(page).await,
            Err(e) => Err(e),
        };
        self.settle(&mut live, result)
    }

    /// Runs `act` on the element `target` names in the current tab, then tells where the page
    /// is.
    async fn on_element(
        &self,
        target: &Target,
        act: impl AsyncFnOnce(&Page, Locator) -> Result<(), ToolError>,
    ) -> Result<PageState, ToolError> {
        self.on_page(async |page| {
            act(&page, target.locate(&page)?).await?;
            self.state(&page).await
        })
        .await
    }

    /// A failed call whose browser went away leaves none behind: the next call starts afresh.
    fn settle<T>(
        &self,
        live: &mut Option<Live>,
        result: Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        if let Err(e) = &result {
            self.session.forget_if_gone(live, e);
        }
        result
    }
}

fn state_text(s: &PageState) -> String {
    let mut text = format!("{} — {}", s.title, s.url);
    if let Some(why) = &s.login_wall {
        text.push_str(&format!("\nThis page asks for a login ({why}): call browser_navigate on it so the person can log in."));
    }
    text
}

// ---------------------------------------------------------------- browser_navigate

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateInput {
    /// A full http(s) address.
    pub url: String,
    /// When the page counts as loaded: `load` (default), `domcontentloaded` or `networkidle`.
    pub wait_until: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct NavigateOutput {
    pub url: String,
    pub title: String,
    /// HTTP status of the page (0 when not known).
    pub status: u16,
    /// The accessible outline with element refs (as browser_snapshot).
    pub snapshot: String,
}

/// When a page counts as loaded, as `wait_until` names it (`load` when unset).
fn wait_until(raw: Option<&str>) -> Result<WaitUntil, ToolError> {
    match raw.map(str::to_ascii_lowercase).as_deref() {
        None | Some("load") => Ok(WaitUntil::Load),
        Some("domcontentloaded") => Ok(WaitUntil::DomContentLoaded),
        Some("networkidle") => Ok(WaitUntil::NetworkIdle),
        Some(other) => Err(ToolError::invalid(format!(
            "wait_until {other:?}: use load, domcontentloaded or networkidle"
        ))),
    }
}

fn navigate_text(out: &NavigateOutput) -> String {
    format!(
        "{} — {} (HTTP {})\n\n{}",
        out.title, out.url, out.status, out.snapshot
    )
}

impl Shared {
    /// The login wall: shows the person the login page in a browser window (when there is a
    /// display) and suspends the call until they are through.
    #[allow(clippy::too_many_arguments)]
    async fn suspend_for_login(
        &self,
        ctx: &ToolContext,
        live: &mut Option<Live>,
        origin: &str,
        wanted: &str,
        login_url: &str,
        why: &str,
    ) -> ToolError {
        let shown = if live.as_ref().is_some_and(|l| l.headed) {
            "the browser window is open on it".to_string()
        } else if self.session.config.can_show_window {
            match self.session.relaunch(live, true, login_url).await {
                Ok(_) => "a browser window is open on it".to_string(),
                Err(e) => format!("the browser window could not open ({e})"),
            }
        } else {
            "there is no display to show the browser on: run Cowork on a desktop (or under xvfb-run) and Resume".to_string()
        };
        let condition = LoginCondition {
            kind: "browser".into(),
            login_url: login_url.into(),
            target_url: wanted.into(),
            ..Default::default()
        };
        ctx.suspend(SuspendRequest {
            reason: format!("login needed at {origin} ({why}); {shown}. Log in, then Resume"),
            resume_when: serde_json::to_value(condition).unwrap_or_default(),
            timeout: self.session.config.login_timeout,
        })
    }
}

// ---------------------------------------------------------------- browser_snapshot

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct SnapshotInput {}

#[derive(Serialize, JsonSchema)]
pub struct SnapshotOutput {
    pub url: String,
    pub title: String,
    pub snapshot: String,
}

fn snapshot_text(out: &SnapshotOutput) -> String {
    format!("{} — {}\n\n{}", out.title, out.url, out.snapshot)
}

// ---------------------------------------------------------------- browser_click

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickInput {
    #[serde(flatten)]
    pub target: Target,
}

// ---------------------------------------------------------------- browser_type

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeInput {
    #[serde(flatten)]
    pub target: Target,
    /// What to type (replaces the field's content).
    pub value: String,
    /// Press Enter afterwards (submits most forms).
    #[serde(default)]
    pub submit: bool,
}

// ---------------------------------------------------------------- browser_screenshot

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotInput {
    /// The whole scrollable page instead of the visible part.
    #[serde(default)]
    pub full_page: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct ScreenshotOutput {
    pub url: String,
    /// Size of the PNG in bytes.
    pub bytes: usize,
    /// The PNG itself travels as an image block, not in the structured result.
    #[serde(skip)]
    #[schemars(skip)]
    pub png: Vec<u8>,
}

fn screenshot_text(out: &ScreenshotOutput) -> String {
    format!("Screenshot of {} ({} bytes, PNG)", out.url, out.bytes)
}

fn screenshot_content(out: &ScreenshotOutput) -> Vec<Content> {
    use base64::Engine;
    vec![
        Content::Text {
            text: screenshot_text(out),
        },
        Content::Image {
            mime_type: "image/png".into(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(&out.png),
        },
    ]
}

// ---------------------------------------------------------------- browser_evaluate

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateInput {
    /// A JavaScript expression or function (`() => document.title`), run in the page.
    pub expression: String,
}

#[derive(Serialize, JsonSchema)]
pub struct EvaluateOutput {
    pub url: String,
    pub value: serde_json::Value,
}

fn evaluate_text(out: &EvaluateOutput) -> String {
    cut(serde_json::to_string_pretty(&out.value).unwrap_or_default())
}

// ---------------------------------------------------------------- browser_wait_for

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForInput {
    #[serde(flatten)]
    pub target: Target,
    /// Wait for the element to go away instead of to show.
    #[serde(default)]
    pub gone: bool,
    /// At most this long (default 10 000, max 60 000).
    pub timeout_ms: Option<u64>,
}

// ---------------------------------------------------------------- browser_tabs

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabsInput {
    /// `list` (default), `new` (optionally with url), `select` or `close` (with index).
    pub action: Option<String>,
    pub index: Option<usize>,
    pub url: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Tab {
    pub index: usize,
    pub url: String,
    pub title: String,
    pub current: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct TabsOutput {
    pub tabs: Vec<Tab>,
}

/// Does what `input.action` asks on the running browser's tabs (`list`: nothing).
async fn tab_action(l: &mut Live, input: &TabsInput) -> Result<(), ToolError> {
    let pages = l.context.pages();
    let index = |i: Option<usize>| {
        i.filter(|i| *i < pages.len()).ok_or_else(|| {
            ToolError::invalid(format!(
                "give an index from 0 to {}",
                pages.len().saturating_sub(1)
            ))
        })
    };
    match input.action.as_deref().unwrap_or("list") {
        "list" => {}
        "new" => {
            let page = l
                .context
                .new_page()
                .await
                .map_err(|e| browser_error("opening a tab", e))?;
            if let Some(url) = &input.url {
                page.goto(url, None)
                    .await
                    .map_err(|e| browser_error(&format!("opening {url}"), e))?;
            }
            l.current = l.context.pages().len().saturating_sub(1);
        }
        "select" => {
            l.current = index(input.index)?;
            let _ = pages[l.current].bring_to_front().await;
        }
        "close" => {
            let i = index(input.index)?;
            pages[i]
                .close()
                .await
                .map_err(|e| browser_error("closing the tab", e))?;
            l.current = l.current.min(l.context.pages().len().saturating_sub(1));
        }
        other => {
            return Err(ToolError::invalid(format!(
                "action {other:?}: use list, new, select or close"
            )));
        }
    }
    Ok(())
}

/// The browser's tabs, the current one marked.
async fn list_tabs(l: &Live) -> Vec<Tab> {
    let mut tabs = Vec::new();
    for (i, page) in l.context.pages().iter().enumerate() {
        tabs.push(Tab {
            index: i,
            url: page.url(),
            title: page.title().await.unwrap_or_default(),
            current: i == l.current,
        });
    }
    tabs
}

fn tabs_text(out: &TabsOutput) -> String {
    out.tabs
        .iter()
        .map(|t| {
            format!(
                "{}{} {} — {}",
                if t.current { "▶ " } else { "  " },
                t.index,
                t.title,
                t.url
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tools(list = browser_tools)]
impl BrowserTools {
    #[tool(name = "browser_navigate", title = "Open a page", category = "browser",
           effects = [BrowserNavigate], read_only, idempotent, open_world, timeout = Duration::from_secs(60),
           plan = Self::plan_navigate, text = navigate_text, description = "Open a URL in the app's browser (its own profile: logins persist). Returns the page's outline with element refs. A login page pauses the task until the person logs in.")]
    async fn navigate(
        &self,
        input: &NavigateInput,
        ctx: &ToolContext,
    ) -> ToolResult<NavigateOutput> {
        let wait_until = wait_until(input.wait_until.as_deref())?;
        let url = input.url.trim();
        let origin = origin_of(url)?;
        let session = &self.shared.session;
        let mut live = session.lock().await;
        let result = async {
            let page = session.page(&mut live).await?;
            let response = page
                .goto(
                    url,
                    GotoOptions::new()
                        .wait_until(wait_until)
                        .timeout(Duration::from_secs(45)),
                )
                .await
                .map_err(|e| browser_error(&format!("opening {url}"), e))?;
            let facts = session
                .facts(&page, response.map(|r| r.status()).unwrap_or(0))
                .await?;
            session.set_current_url(&facts.url);
            if let Some(why) = wall_reason(&facts, &session.config.sso_hosts) {
                return Err(self
                    .shared
                    .suspend_for_login(ctx, &mut live, &origin, url, &facts.url, &why)
                    .await);
            }
            Ok(NavigateOutput {
                snapshot: outline(&page).await?,
                url: facts.url,
                title: facts.title,
                status: facts.status,
            })
        }
        .await;
        self.shared.settle(&mut live, result)
    }

    fn plan_navigate(
        &self,
        input: &NavigateInput,
        _env: &EffectEnv,
    ) -> Result<CallPlan, ToolError> {
        opening(&input.url)
    }

    /// The plan of a tool that acts on the page on screen: the page's origin is what it is
    /// reviewed as.
    fn act_on_current_page<I>(&self, _input: &I, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let url = self.shared.session.current_url();
        if url.is_empty() || url.starts_with("about:") {
            return Err(ToolError::invalid(
                "no page is open: call browser_navigate first",
            ));
        }
        Ok(CallPlan::new(vec![Effect::BrowserAct {
            origin: origin_of(&url)?,
        }]))
    }

    #[tool(name = "browser_snapshot", title = "Read the page", category = "browser",
           read_only, idempotent, open_world, text = snapshot_text,
           description = "The current page as an accessible text outline; each element has a ref (e.g. e12) that browser_click and browser_type accept.")]
    async fn snapshot(&self, _: &SnapshotInput) -> ToolResult<SnapshotOutput> {
        self.shared
            .on_page(async |page| {
                // Both asked at once: the driver answers them in parallel (one round trip, not two).
                let (snapshot, title) = tokio::join!(outline(&page), page.title());
                let title = title.map_err(|e| browser_error("reading the title", e))?;
                Ok(SnapshotOutput {
                    url: page.url(),
                    title,
                    snapshot: snapshot?,
                })
            })
            .await
    }

    #[tool(name = "browser_click", title = "Click", category = "browser", effects = [BrowserAct],
           open_world, plan = Self::act_on_current_page, text = state_text,
           description = "Click an element of the current page: by ref (from browser_snapshot), CSS selector, or visible text.")]
    async fn click(&self, input: &ClickInput) -> ToolResult<PageState> {
        self.shared
            .on_element(&input.target, async |_, element| {
                element
                    .click(None)
                    .await
                    .map_err(|e| browser_error("clicking", e))
            })
            .await
    }

    #[tool(name = "browser_type", title = "Type", category = "browser", effects = [BrowserAct],
           open_world, plan = Self::act_on_current_page, text = state_text,
           description = "Type into a field of the current page (by ref, selector or text), optionally pressing Enter.")]
    async fn type_in(&self, input: &TypeInput) -> ToolResult<PageState> {
        self.shared
            .on_element(&input.target, async |page, field| {
                field
                    .fill(&input.value, None)
                    .await
                    .map_err(|e| browser_error("typing", e))?;
                if input.submit {
                    field
                        .press("Enter", None)
                        .await
                        .map_err(|e| browser_error("pressing Enter", e))?;
                    let _ = page.wait_for_load_state(Some(WaitUntil::Load)).await;
                }
                Ok(())
            })
            .await
    }

    #[tool(name = "browser_screenshot", title = "Screenshot", category = "browser",
           read_only, idempotent, open_world, text = screenshot_text, content = screenshot_content,
           description = "A PNG screenshot of the current page (visible part, or the full page).")]
    async fn screenshot(&self, input: &ScreenshotInput) -> ToolResult<ScreenshotOutput> {
        self.shared
            .on_page(async |page| {
                let options = ScreenshotOptions::builder()
                    .full_page(input.full_page)
                    .build();
                let png = page
                    .screenshot(Some(options))
                    .await
                    .map_err(|e| browser_error("taking the screenshot", e))?;
                Ok(ScreenshotOutput {
                    url: page.url(),
                    bytes: png.len(),
                    png,
                })
            })
            .await
    }

    #[tool(name = "browser_evaluate", title = "Run JavaScript in the page", category = "browser",
           effects = [BrowserAct], open_world, plan = Self::act_on_current_page, text = evaluate_text,
           description = "Run JavaScript in the current page and return its JSON result. Code execution: always asks.")]
    async fn evaluate(&self, input: &EvaluateInput) -> ToolResult<EvaluateOutput> {
        self.shared
            .on_page(async |page| {
                let value = page
                    .evaluate::<(), serde_json::Value>(&input.expression, None)
                    .await
                    .map_err(|e| browser_error("running the script", e))?;
                Ok(EvaluateOutput {
                    url: page.url(),
                    value,
                })
            })
            .await
    }

    #[tool(name = "browser_wait_for", title = "Wait for the page", category = "browser",
           read_only, idempotent, open_world, timeout = Duration::from_secs(65), text = state_text,
           description = "Wait until an element (ref, selector or text) shows — or, with gone, disappears.")]
    async fn wait_for(&self, input: &WaitForInput) -> ToolResult<PageState> {
        let timeout = input.timeout_ms.unwrap_or(10_000).clamp(1, 60_000) as f64;
        let state = if input.gone {
            WaitForState::Hidden
        } else {
            WaitForState::Visible
        };
        let options = WaitForOptions::builder()
            .state(state)
            .timeout(timeout)
            .build();
        self.shared
            .on_element(&input.target, async |_, element| {
                element
                    .wait_for(Some(options))
                    .await
                    .map_err(|e| browser_error("waiting", e))
            })
            .await
    }

    #[tool(name = "browser_tabs", title = "Browser tabs", category = "browser",
           effects = [BrowserNavigate], open_world, plan = Self::plan_tabs, text = tabs_text,
           description = "List the browser's tabs, open a new one (optionally at a URL), switch to one, or close one.")]
    async fn tabs(&self, input: &TabsInput) -> ToolResult<TabsOutput> {
        let session = &self.shared.session;
        let mut live = session.lock().await;
        let result = async {
            session.page(&mut live).await?;
            let l = live.as_mut().expect("page() started the browser");
            tab_action(l, input).await?;
            let tabs = list_tabs(l).await;
            if let Some(current) = tabs.iter().find(|t| t.current) {
                session.set_current_url(&current.url);
            }
            Ok(TabsOutput { tabs })
        }
        .await;
        self.shared.settle(&mut live, result)
    }

    fn plan_tabs(&self, input: &TabsInput, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        match (input.action.as_deref(), &input.url) {
            (Some("new"), Some(url)) => opening(url),
            _ => Ok(CallPlan::new(vec![])),
        }
    }
}
