//! Web figures (with their targets):
//! - extracting a 1 MB article once its bytes have arrived (charset, main content, Markdown):
//!   target ≤ 50 ms median;
//! - a `web_fetch` answered from the cache, end to end through the gate (validate, review,
//!   audit, cache read, extraction of a 64 KB article): target ≤ 2 ms median.
//!
//!     cargo bench -p cowork-tests --bench web   (WEB_BENCH_RUNS=50)

use cowork_app::Section;
use cowork_core::policy::Action;
use cowork_core::{DenyApprover, RuleSource};
use cowork_tests::bench::{env, ms, percentile};
use cowork_tests::{Harness, world};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let runs = env("WEB_BENCH_RUNS", 50);
    let html = world::article(1 << 20);
    let mut extract = Vec::new();
    for _ in 0..runs.min(30) {
        let t = Instant::now();
        let page = cowork_web::page::read(
            html.as_bytes(),
            Some("text/html; charset=utf-8"),
            "https://news.example.org/tram",
            None,
        )
        .unwrap();
        extract.push(t.elapsed());
        assert!(page.markdown.contains("tram plan"));
        assert!(!page.markdown.contains("Related story number"));
    }

    let h = Harness::new(Arc::new(DenyApprover));
    let w = world::start();
    w.settings(None)
        .save(&h.store.dir().settings_path())
        .unwrap();
    h.scheduler
        .policy()
        .add_rule(
            Action::Allow,
            &format!("web_fetch({})", w.base),
            RuleSource::User,
        )
        .unwrap();
    let args = json!({"url": w.url("/article")});
    h.ok("web_fetch", args.clone()).await;
    let mut hits: Vec<Duration> = Vec::new();
    for i in 0..runs {
        // A conversation each: one that has read a page asks before the next request out.
        let request = cowork_core::CallRequest::new(
            "web_fetch",
            args.clone(),
            cowork_core::Caller::Chat,
            &format!("bench-{i}"),
        );
        let t = Instant::now();
        let out = h.scheduler.call(request).await;
        hits.push(t.elapsed());
        let out = out.result.unwrap();
        assert!(
            out.text_content().contains("cache ("),
            "{}",
            out.text_content()
        );
    }
    assert_eq!(
        w.requested("/article").len(),
        1,
        "one network fetch, then the cache"
    );
    println!(
        "web: 1 MB article extraction median {:.1} ms (p90 {:.1}) over {} runs; cache hit through the gate median {:.2} ms (p90 {:.2}) over {} calls",
        ms(percentile(&mut extract, 0.5)),
        ms(percentile(&mut extract, 0.9)),
        extract.len(),
        ms(percentile(&mut hits, 0.5)),
        ms(percentile(&mut hits, 0.9)),
        hits.len()
    );
}
