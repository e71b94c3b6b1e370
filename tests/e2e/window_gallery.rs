//! The gallery: the window's screens as a person meets them — first run, a chat with a tool
//! card and code, an error with its remedy, every Settings page, the other pages — in light
//! and dark, English and Chinese, at 760, 1280 and 1920 px. Each screen, in both themes, is
//! checked by axe-core run in the real webview: no serious or critical violation (text contrast
//! under 4.5:1 is one). Every picture goes into one contact sheet, `gallery.png`.

#[path = "webdriver.rs"]
mod webdriver;

use cowork_tests::llm_server::{ScriptedLlm, Turn};
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use webdriver::{Driver, artifacts, contact_sheet, launch_on_screen};

/// axe-core, as npm installed it for the UI (tests/setup.sh).
fn axe_source() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} — run tests/setup.sh (npm ci in ui/)",
            path.display()
        )
    })
}

/// The screens' serious and critical accessibility violations, as "screen/theme: rule — where".
#[derive(Default)]
struct Audit {
    violations: Vec<String>,
    pictures: Vec<String>,
}

impl Audit {
    /// Runs axe on the page as it is, in both themes, and photographs it in the theme it is in.
    async fn screen(&mut self, d: &Driver, axe: &str, name: &str) {
        let picture = format!("gallery-{name}.png");
        d.screenshot(&artifacts().join(&picture)).await;
        self.pictures.push(picture);
        let shown = d
            .exec("return document.documentElement.dataset.theme", json!([]))
            .await;
        for theme in ["light", "dark"] {
            d.exec(
                &format!("document.documentElement.dataset.theme = '{theme}'"),
                json!([]),
            )
            .await;
            tokio::time::sleep(Duration::from_millis(150)).await;
            for v in run_axe(d, axe).await {
                self.violations.push(format!("{name}/{theme}: {v}"));
            }
        }
        d.exec(
            "document.documentElement.dataset.theme = arguments[0]",
            json!([shown]),
        )
        .await;
    }
}

/// axe's WCAG 2 A/AA rules on the whole page; the serious and critical violations, with the
/// first few places each was found.
async fn run_axe(d: &Driver, axe: &str) -> Vec<String> {
    let loaded = d.exec("return typeof window.axe", json!([])).await;
    if loaded != "object" {
        d.exec(&format!("{axe}\n;return true;"), json!([])).await;
    }
    let found = d
        .exec_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] }, resultTypes: ['violations'] })
               .then((r) => done(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
                 .map((v) => `${v.id} (${v.impact}) — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ') + (n.any[0] && n.any[0].message ? ' [' + n.any[0].message + ']' : '')).join('; ')}`)))
               .catch((e) => done(['axe failed: ' + e]));",
            json!([]),
        )
        .await;
    found
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_else(|| vec![format!("axe returned {found}")])
}

/// Every Settings page, one picture each.
async fn settings_pages(d: &Driver, axe: &str, audit: &mut Audit, suffix: &str) {
    d.open_view("settings").await;
    let pages = d
        .exec(
            "return [...document.querySelectorAll('[data-page]')].map((e) => e.dataset.page)",
            json!([]),
        )
        .await;
    let pages: Vec<String> = pages
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(String::from))
        .collect();
    assert!(pages.len() >= 5, "Settings is split into pages: {pages:?}");
    for page in pages {
        d.settings_page(&page).await;
        if page == "computer" {
            // The doctor's rows, each capability said in words with its state.
            let rows = d
                .wait_for("[data-testid=doctor] li[data-capability=sandbox]")
                .await;
            let said = d.text(&rows).await;
            let states = [
                "Works",
                "In part",
                "Missing",
                "Not set up",
                "可用",
                "缺失",
                "未设置",
            ];
            assert!(
                states.iter().any(|s| said.starts_with(s)),
                "the row leads with its state in words: {said}"
            );
        }
        audit
            .screen(d, axe, &format!("settings-{page}{suffix}"))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_screen_passes_axe_in_both_themes_and_the_gallery_is_one_sheet() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("README.md"), "# Garden planner\n").unwrap();
    let web_data = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    let axe = axe_source();
    let (_xvfb, _driver, d) = launch_on_screen(
        home.path(),
        &[
            ("COWORK_WORKSPACE", workspace.path().as_os_str()),
            ("XDG_DATA_HOME", web_data.path().as_os_str()),
        ],
        "1920x1200x24",
    )
    .await;
    let mut audit = Audit::default();
    d.resize(1280, 800).await;
    d.switch_look("en", "light").await;

    // First run: no model yet.
    d.wait_for("[data-testid=first-run]").await;
    audit.screen(&d, &axe, "first-run").await;

    // A model (the scripted one, saved through the window's own command), then a chat with a
    // tool card, a list and code.
    d.exec_async(
        "const done = arguments[arguments.length - 1];
         window.__TAURI_INTERNALS__.invoke('save_agent_settings', { settings: { provider: 'openai', baseUrl: arguments[0], model: 'scripted', apiKeyEnv: '' } }).then(() => done(true), (e) => done(String(e)));",
        json!([server.openai_base()]),
    )
    .await;
    d.exec("location.reload()", json!([])).await;
    d.wait_for("[data-testid=empty-chat]").await;
    audit.screen(&d, &axe, "empty-chat").await;
    server.push(Turn::tools(
        "I'll note it first. ",
        &[("g1", "create_task", json!({"title": "Water the tomatoes"}))],
    ));
    server.push(Turn::text("Done. Your week:\n\n- **Monday**: water the tomatoes\n- **Friday**: buy seeds\n\n```python\nfor day in ['mon', 'fri']:\n    print(day)\n```\n"));
    d.fill("[data-testid=chat-input]", "plan my garden week")
        .await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    d.wait_for_text(".messages", "buy seeds").await;
    for (width, height) in [(760, 800), (1920, 1080), (1280, 800)] {
        d.resize(width, height).await;
        audit.screen(&d, &axe, &format!("chat-{width}")).await;
    }

    // An error keeps its turn and offers what to do.
    server.push(Turn::Error {
        status: 401,
        retry_after: None,
        body: json!({"error": {"message": "Incorrect API key provided"}}).to_string(),
    });
    d.fill("[data-testid=chat-input]", "and next week?").await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
    d.wait_for("[data-testid=open-settings]").await;
    audit.screen(&d, &axe, "error").await;

    // A schedule made in the window: its repeat in words and its next runs before it is added.
    d.open_view("settings").await;
    d.settings_page("schedules").await;
    d.fill("[data-testid=schedule-prompt]", "Summarize my unread mail")
        .await;
    d.exec(
        "const e = document.querySelector('[data-testid=schedule-time]'); e.value = '07:30'; e.dispatchEvent(new Event('input', { bubbles: true }));",
        json!([]),
    )
    .await;
    d.wait_for_text("[data-testid=schedule-preview]", "Weekdays at 07:30")
        .await;
    d.click(
        &d.wait_for("[data-testid=add-schedule]:not([disabled])")
            .await,
    )
    .await;
    d.wait_for_text(
        "[data-testid=schedules] .schedules",
        "summarize-my-unread-mail",
    )
    .await;

    settings_pages(&d, &axe, &mut audit, "").await;
    // An address found (Cowork's built-in iCloud settings, no network): the settings in words,
    // the app-password note, and its calendars offered, unticked, with the same password.
    d.settings_page("accounts").await;
    d.fill("[data-testid=find-mail] [data-field=name]", "home")
        .await;
    d.fill(
        "[data-testid=find-mail] [data-field=email]",
        "you@icloud.com",
    )
    .await;
    d.exec(
        "[...document.querySelectorAll('[data-testid=find-mail] button')].find((b) => b.textContent.includes('Find')).click()",
        json!([]),
    )
    .await;
    d.wait_for("[data-testid=found-settings] [data-field=with-calendar]")
        .await;
    let offered = d
        .exec(
            "return document.querySelector('[data-field=with-calendar]').checked",
            json!([]),
        )
        .await;
    assert_eq!(
        offered,
        json!(false),
        "a password calendar is ticked only by the person"
    );
    d.wait_for_text("[data-testid=found-settings]", "caldav.icloud.com")
        .await;
    audit.screen(&d, &axe, "settings-accounts-found").await;
    for view in ["tools", "audit", "memory", "changes", "toolpacks"] {
        d.open_view(view).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        audit.screen(&d, &axe, view).await;
    }

    // Chinese, dark: the chat and every Settings page again.
    d.switch_look("zh-CN", "dark").await;
    d.open_view("chat").await;
    audit.screen(&d, &axe, "chat-zh-dark").await;
    settings_pages(&d, &axe, &mut audit, "-zh-dark").await;
    // The schedule's time in the person's language.
    d.settings_page("schedules").await;
    d.wait_for_text("[data-testid=schedules] .schedules", "工作日")
        .await;
    d.resize(760, 800).await;
    audit.screen(&d, &axe, "settings-760-zh-dark").await;

    contact_sheet(&audit.pictures, &artifacts().join("gallery.png"), 5);
    assert!(
        audit.violations.is_empty(),
        "{} serious or critical accessibility violations:\n{}",
        audit.violations.len(),
        audit.violations.join("\n")
    );
}
