//! The browser family: `browser_navigate`, `browser_snapshot`, `browser_click`, `browser_type`,
//! `browser_screenshot`, `browser_evaluate`, `browser_wait_for`, `browser_tabs` (`tools.rs`),
//! on one Chromium with the app's own persistent profile (`session.rs`), driven by
//! playwright-rs. A login wall (`login.rs`) suspends the call through the SuspendCoordinator and
//! shows the person the login page; `LoginProbe` tells the coordinator when they are through.

mod login;
mod session;
mod tools;

pub use login::{LoginCondition, PageFacts, left_login, wall_reason};
pub use session::{BrowserConfig, BrowserSettings};

use cowork_contract::{DefaultRule, DynTool, ResumeProbe, RuleAction, ToolProvider};
use session::Session;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

pub(crate) struct Shared {
    pub session: Session,
    /// Login pages already shown to the person by the probe in this process: a window they
    /// closed is not forced open again.
    shown: Mutex<HashSet<String>>,
}

#[derive(Clone)]
pub struct BrowserTools {
    shared: Arc<Shared>,
}

impl BrowserTools {
    pub fn new(config: BrowserConfig) -> Self {
        BrowserTools {
            shared: Arc::new(Shared {
                session: Session::new(config),
                shown: Mutex::new(HashSet::new()),
            }),
        }
    }

    /// The check the coordinator runs for this family's suspensions.
    pub fn resume_probe(&self) -> Arc<dyn ResumeProbe> {
        Arc::new(LoginProbe {
            shared: self.shared.clone(),
        })
    }

    /// Ends the browser (and its driver), e.g. before the app exits.
    pub async fn close(&self) {
        if let Some(live) = self.shared.session.lock().await.take() {
            let _ = live.context.close().await;
        }
    }
}

impl ToolProvider for BrowserTools {
    fn name(&self) -> &str {
        "browser"
    }

    /// Code execution in a page: asked every time, whatever allows the page's origin.
    fn default_rules(&self) -> Vec<DefaultRule> {
        vec![DefaultRule {
            action: RuleAction::Ask,
            rule: "browser_evaluate",
        }]
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.browser_tools()
    }

    /// A browser call is coming: the driver and Chromium (about 0.8 s for a first call) start
    /// while the model is still writing the call's arguments and it is reviewed, not after.
    /// Starting them opens no page, so nothing takes effect before the review.
    fn warm_up(&self, tool: &str) {
        // This family's tools are all named `browser_*` (tools.rs).
        if !tool.starts_with("browser_") {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = self.shared.clone();
        runtime.spawn(async move {
            let mut live = shared.session.lock().await;
            if let Err(e) = shared.session.ensure(&mut live).await {
                tracing::debug!("browser: the early start failed ({e}); the call will say why");
            }
        });
    }
}

/// Whether the person is past a login: judged on the page the headed browser shows. When no
/// browser is open for it (the app restarted while it waited), it opens the login page for them.
struct LoginProbe {
    shared: Arc<Shared>,
}

#[async_trait::async_trait]
impl ResumeProbe for LoginProbe {
    fn kind(&self) -> &str {
        "browser"
    }

    async fn holds(&self, resume_when: &serde_json::Value) -> bool {
        // The watcher asks every second: one answer never holds it (nor the browser) longer.
        tokio::time::timeout(std::time::Duration::from_secs(15), self.check(resume_when))
            .await
            .unwrap_or(false)
    }
}

impl LoginProbe {
    async fn check(&self, resume_when: &serde_json::Value) -> bool {
        let Ok(condition) = serde_json::from_value::<LoginCondition>(resume_when.clone()) else {
            return false;
        };
        let session = &self.shared.session;
        let mut live = session.lock().await;
        if live.as_ref().is_some_and(|l| l.context.is_closed()) {
            *live = None;
        }
        let headed = live.as_ref().is_some_and(|l| l.headed);
        if !headed {
            let first_time = self
                .shared
                .shown
                .lock()
                .unwrap()
                .insert(condition.login_url.clone());
            if first_time
                && session.config.can_show_window
                && let Err(e) = session
                    .relaunch(&mut live, true, &condition.login_url)
                    .await
            {
                tracing::warn!("browser: could not show the login page: {e}");
            }
            return false;
        }
        let Some(l) = live.as_ref() else { return false };
        let mut through = false;
        if let Some(name) = &condition.cookie {
            through = l
                .context
                .cookies(Some(&[condition.target_url.as_str()]))
                .await
                .is_ok_and(|c| c.iter().any(|c| &c.name == name));
        }
        // Any tab: the person may log in in another one than we opened (and Chromium's own
        // first tab can show up next to ours).
        for page in l
            .context
            .pages()
            .iter()
            .filter(|p| !p.is_closed() && !p.url().starts_with("about:"))
        {
            if through {
                break;
            }
            let Ok(facts) = session.facts(page, 0).await else {
                continue;
            };
            through = left_login(&condition, &facts, &session.config.sso_hosts);
            if !through && let Some(selector) = &condition.selector {
                through = page
                    .locator(selector.as_str())
                    .is_visible()
                    .await
                    .unwrap_or(false);
            }
        }
        if through {
            // Back to work without a window; the resumed call opens its page itself (loading
            // it here too would hit the site once more for nothing).
            if let Err(e) = session.relaunch(&mut live, false, "").await {
                tracing::warn!("browser: back to headless: {e}");
            }
        }
        through
    }
}
