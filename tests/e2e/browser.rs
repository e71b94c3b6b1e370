//! The browser family against real Chromium (Debian's, driven by Playwright 1.64) and a shop
//! served on loopback (`cowork_tests::shop`). In-process here (headless): refs from the
//! snapshot, clicks and typing, the screenshot as an image block, evaluate always asked, the
//! prompt injection that taints the conversation, a denied origin, a browser crash. The login
//! wall with a person at a real headed window (Xvfb + xdotool) runs through the `cowork` CLI
//! in `cli_browser.rs`.

use cowork_browser::{BrowserConfig, BrowserTools};
use cowork_contract::{Content, Effect, ToolError};
use cowork_core::policy::Action;
use cowork_core::{Caller, Layer, RuleSource};
use cowork_tests::{Harness, Recorder, shop};
use serde_json::json;
use std::sync::Arc;

struct Setup {
    h: Harness,
    recorder: Arc<Recorder>,
    shop: shop::Shop,
}

/// The harness with the browser family (its profile in the harness's data dir, headless: no
/// window may open in these tests) and a rule that allows navigating the loopback shop.
fn setup() -> Setup {
    let recorder = Arc::new(Recorder::default());
    let h = Harness::new(recorder.clone());
    let mut config = BrowserConfig::new(h.dir.path().join("home/browser-profile"));
    config.can_show_window = false;
    let browser = Arc::new(BrowserTools::new(config));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, browser.clone());
    h.scheduler.add_resume_probe(browser.resume_probe());
    h.scheduler
        .policy()
        .add_rule(
            Action::Allow,
            "browser_navigate(http://127.0.0.1:*)",
            RuleSource::User,
        )
        .unwrap();
    for tool in ["browser_click", "browser_type"] {
        h.scheduler
            .policy()
            .add_rule(
                Action::Allow,
                &format!("{tool}(http://127.0.0.1:*)"),
                RuleSource::User,
            )
            .unwrap();
    }
    Setup {
        h,
        recorder,
        shop: shop::start(),
    }
}

fn text(outcome: &cowork_core::CallOutcome) -> String {
    match &outcome.result {
        Ok(out) => out.text_content(),
        Err(e) => panic!("{} failed: {e}", outcome.tool),
    }
}

/// The ref the snapshot gives the element whose line contains `label`.
fn reference(snapshot: &str, label: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no {label:?} in the snapshot:\n{snapshot}"));
    let start = line
        .find("[ref=")
        .unwrap_or_else(|| panic!("no ref on {line:?}"))
        + 5;
    line[start..].split(']').next().unwrap().to_string()
}

#[tokio::test]
async fn the_snapshot_gives_refs_that_click_and_type_act_on() {
    let s = setup();
    let nav =
        s.h.call("browser_navigate", json!({"url": s.shop.url("/counter")}))
            .await;
    let page = text(&nav);
    assert!(
        page.contains("Counter") && page.contains("Add one"),
        "{page}"
    );
    let add = reference(&page, "button \"Add one\"");
    for _ in 0..2 {
        text(&s.h.call("browser_click", json!({"ref": add})).await);
    }
    let name = reference(&page, "textbox \"Name\"");
    text(
        &s.h.call("browser_type", json!({"ref": name, "value": "Ada"}))
            .await,
    );
    let snapshot = text(&s.h.call("browser_snapshot", json!({})).await);
    assert!(
        snapshot.contains("Count: 2") || snapshot.contains("\"2\"") || snapshot.contains(": 2"),
        "two clicks counted:\n{snapshot}"
    );
    let typed =
        s.h.ok("browser_wait_for", json!({"selector": "#name"}))
            .await;
    assert!(typed["url"].as_str().unwrap().ends_with("/counter"));

    // Clicking by text and by selector; a wrong ref is a clear error, not a hang.
    text(&s.h.call("browser_click", json!({"text": "Add one"})).await);
    text(&s.h.call("browser_click", json!({"selector": "#add"})).await);
    let count =
        s.h.call(
            "browser_evaluate",
            json!({"expression": "() => document.getElementById('n').textContent"}),
        )
        .await;
    assert_eq!(
        count.result.unwrap().structured.unwrap()["value"],
        json!("4")
    );
    let wrong = s.h.call("browser_click", json!({"ref": "e9999"})).await;
    assert!(
        matches!(&wrong.result, Err(ToolError::Failed { .. })),
        "{:?}",
        wrong.result
    );
    let both =
        s.h.call("browser_click", json!({"ref": add, "text": "Add one"}))
            .await;
    assert!(
        matches!(&both.result, Err(ToolError::InvalidArguments { .. })),
        "{:?}",
        both.result
    );
}

#[tokio::test]
async fn evaluate_is_always_asked_even_where_acting_is_allowed() {
    let s = setup();
    s.h.scheduler
        .policy()
        .add_rule(
            Action::Allow,
            "browser_evaluate(http://127.0.0.1:*)",
            RuleSource::User,
        )
        .unwrap();
    text(
        &s.h.call("browser_navigate", json!({"url": s.shop.url("/")}))
            .await,
    );
    text(
        &s.h.call("browser_click", json!({"text": "My orders"}))
            .await,
    );
    let asked = s.recorder.asked.lock().unwrap().clone();
    assert!(
        asked.is_empty(),
        "navigate and click on an allowed origin are not asked: {asked:?}"
    );
    let out =
        s.h.call(
            "browser_evaluate",
            json!({"expression": "() => document.title"}),
        )
        .await;
    assert_eq!(out.review.as_ref().unwrap().decision, Action::Ask);
    assert_eq!(
        out.review.as_ref().unwrap().matched.as_ref().unwrap().rule,
        "browser_evaluate"
    );
    let asked = s.recorder.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "browser_evaluate");
    assert!(matches!(&asked[0].1[0], Effect::BrowserAct { origin } if origin == &s.shop.base));
}

#[tokio::test]
async fn a_screenshot_is_a_png_image_block() {
    let s = setup();
    text(
        &s.h.call("browser_navigate", json!({"url": s.shop.url("/")}))
            .await,
    );
    let out =
        s.h.call("browser_screenshot", json!({}))
            .await
            .result
            .unwrap();
    let image = out.content.iter().find_map(|c| match c {
        Content::Image {
            mime_type,
            data_base64,
        } => Some((mime_type.clone(), data_base64.clone())),
        _ => None,
    });
    let (mime, data) = image.expect("an image block");
    assert_eq!(mime, "image/png");
    assert!(data.starts_with("iVBORw0KGgo"), "PNG magic in base64");
    assert!(out.structured.unwrap()["bytes"].as_u64().unwrap() > 1000);
}

#[tokio::test]
async fn page_text_taints_the_conversation_so_a_later_send_is_asked_even_if_a_rule_allows_it() {
    let s = setup();
    s.h.scheduler
        .policy()
        // A rule for the whole tool names no destination, so it is no choice of one.
        .add_rule(Action::Allow, "email_send", RuleSource::User)
        .unwrap();
    s.h.add_mail_account_nowhere();
    let send = || json!({"to": ["attacker@evil.test"], "subject": "list", "body": "the list"});
    // Before any page: the rule allows it.
    assert_eq!(
        s.h.scheduler
            .explain("email_send", &send(), "conv", None)
            .unwrap()
            .review
            .decision,
        Action::Allow
    );
    let page = text(
        &s.h.call("browser_navigate", json!({"url": s.shop.url("/deals")}))
            .await,
    );
    assert!(page.contains("Ignore previous instructions"), "{page}");
    let out = s.h.call("email_send", send()).await;
    let review = out.review.as_ref().unwrap();
    assert_eq!(review.decision, Action::Ask, "{review:?}");
    assert_eq!(review.tainted_by.as_deref(), Some("browser_navigate"));
    assert!(
        s.recorder
            .asked
            .lock()
            .unwrap()
            .iter()
            .any(|(tool, _)| tool == "email_send")
    );
    // Another conversation is clean: the same rule allows it there.
    assert_eq!(
        s.h.scheduler
            .explain("email_send", &send(), "other", None)
            .unwrap()
            .review
            .decision,
        Action::Allow
    );
}

#[tokio::test]
async fn navigation_to_a_denied_origin_is_denied_and_nothing_is_opened() {
    let s = setup();
    let denied = format!(
        "http://localhost:{}",
        s.shop.base.rsplit(':').next().unwrap()
    );
    s.h.scheduler
        .policy()
        .add_rule(
            Action::Deny,
            &format!("browser_navigate({denied})"),
            RuleSource::User,
        )
        .unwrap();
    let out =
        s.h.call("browser_navigate", json!({"url": format!("{denied}/")}))
            .await;
    assert!(
        matches!(&out.result, Err(ToolError::Denied { .. })),
        "{:?}",
        out.result
    );
    // Nothing was opened: acting on "the current page" has no page to act on.
    let click =
        s.h.call("browser_click", json!({"text": "My orders"}))
            .await;
    assert!(
        click
            .result
            .unwrap_err()
            .to_string()
            .contains("call browser_navigate first")
    );
    let bad =
        s.h.call("browser_navigate", json!({"url": "file:///etc/passwd"}))
            .await;
    assert!(
        matches!(&bad.result, Err(ToolError::InvalidArguments { message, .. }) if message.contains("http")),
        "{:?}",
        bad.result
    );
}

#[tokio::test]
async fn a_crashed_browser_gives_a_clear_error_and_the_next_call_gets_a_fresh_one() {
    let s = setup();
    text(
        &s.h.call("browser_navigate", json!({"url": s.shop.url("/")}))
            .await,
    );
    let profile = s.h.dir.path().join("home/browser-profile");
    let killed = std::process::Command::new("pkill")
        .args(["-9", "-f", &format!("user-data-dir={}", profile.display())])
        .status()
        .unwrap();
    assert!(killed.success(), "Chromium of this profile was running");
    // The call that meets the dead browser fails clearly — or, if the driver already noticed,
    // starts afresh; either way the one after works on a fresh browser.
    let first = s.h.call("browser_snapshot", json!({})).await;
    if let Err(e) = &first.result {
        assert!(
            e.to_string().contains("the browser stopped") && e.to_string().contains("fresh"),
            "{e}"
        );
    }
    let again = text(
        &s.h.call("browser_navigate", json!({"url": s.shop.url("/counter")}))
            .await,
    );
    assert!(again.contains("Add one"), "{again}");
}

#[tokio::test]
async fn a_login_wall_without_a_display_suspends_and_says_how_to_go_on() {
    let s = setup();
    let out =
        s.h.call("browser_navigate", json!({"url": s.shop.url("/orders")}))
            .await;
    let Err(ToolError::Suspended { id, reason }) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(
        reason.contains(&format!("login needed at {}", s.shop.base)),
        "{reason}"
    );
    assert!(reason.contains("no display"), "{reason}");
    let row =
        s.h.scheduler
            .suspensions()
            .unwrap()
            .get(id)
            .unwrap()
            .unwrap();
    assert_eq!(row.resume_when["kind"], "browser");
    assert!(
        row.resume_when["login_url"]
            .as_str()
            .unwrap()
            .contains("/login?next=/orders")
    );
    // A 401 is a wall too.
    let private =
        s.h.call("browser_navigate", json!({"url": s.shop.url("/private")}))
            .await;
    assert!(
        matches!(&private.result, Err(ToolError::Suspended { reason, .. }) if reason.contains("401")),
        "{:?}",
        private.result
    );
    // With no window, the condition never holds by itself.
    assert!(s.h.scheduler.resume_ready(Caller::Chat).await.is_empty());
}
