//! Browser figures (with their targets), side by side in one run on the loopback shop's /counter
//! page, headless Debian Chromium for both:
//! - median latency of a click and of a snapshot through our tools (the whole gate: validate,
//!   review, audit, then playwright-rs) vs the same actions from Node Playwright
//!   (`playwright-core` 1.64, the very driver package playwright-rs speaks to): target ≤ 1.2×;
//! - browser start to first navigation (driver + Chromium + page loaded and outlined).
//!
//! Our click also reads back where the page is (URL, title, login wall): one more round trip
//! the Node baseline does not make, included in the ratio.
//!
//!     cargo bench -p cowork-tests --bench browser   (BROWSER_BENCH_ACTIONS=200)

use cowork_browser::{BrowserConfig, BrowserTools};
use cowork_core::policy::Action;
use cowork_core::{Layer, RuleSource};
use cowork_tests::bench::{env, ms, percentile};
use cowork_tests::{Harness, Recorder, shop};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Node side: the same page, the same actions, timed inside Node (its own start excluded,
/// as ours excludes the test binary's).
const NODE_SCRIPT: &str = r##"
const { chromium } = require(process.argv[2]);
(async () => {
  const [url, n, exe, profile] = process.argv.slice(3);
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const t0 = now();
  const args = ["--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-quic"];
  if (process.getuid && process.getuid() === 0) args.push("--no-sandbox");
  const context = await chromium.launchPersistentContext(profile, { headless: true, executablePath: exe, args, viewport: { width: 1280, height: 800 } });
  const page = context.pages()[0] || await context.newPage();
  await page.goto(url, { waitUntil: "load" });
  await page.ariaSnapshot({ mode: "ai" });
  const start = now() - t0;
  const click = [], snapshot = [];
  for (let i = 0; i < 5; i++) { await page.click("#add"); await page.ariaSnapshot({ mode: "ai" }); }
  for (let i = 0; i < Number(n); i++) { const t = now(); await page.click("#add"); click.push(now() - t); }
  for (let i = 0; i < Number(n); i++) { const t = now(); await page.ariaSnapshot({ mode: "ai" }); snapshot.push(now() - t); }
  console.log(JSON.stringify({ start, click, snapshot }));
  await context.close();
})().catch((e) => { console.error(e); process.exit(1); });
"##;

fn median_ms(v: &mut [Duration]) -> f64 {
    ms(percentile(v, 0.5))
}

fn node_median(values: &serde_json::Value) -> f64 {
    let mut v: Vec<Duration> = values
        .as_array()
        .unwrap()
        .iter()
        .map(|x| Duration::from_secs_f64(x.as_f64().unwrap() / 1e3))
        .collect();
    median_ms(&mut v)
}

/// Where `cowork assets fetch` put playwright-core 1.64 (the package playwright-rs runs).
fn driver_package() -> std::path::PathBuf {
    let package = cowork_assets::main_path("playwright-driver").expect("HOME is set");
    assert!(
        package.join("package.json").exists(),
        "no playwright-core package at {}: run `cowork assets fetch playwright-driver`",
        package.display()
    );
    package
}

#[tokio::main]
async fn main() {
    let actions = env("BROWSER_BENCH_ACTIONS", 200);
    let shop = shop::start();
    let url = shop.url("/counter");

    // Ours, through the scheduler.
    let h = Harness::new(Arc::new(Recorder::default()));
    let mut config = BrowserConfig::new(h.dir.path().join("profile-ours"));
    config.can_show_window = false;
    let browser = Arc::new(BrowserTools::new(config.clone()));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, browser.clone());
    for tool in ["browser_navigate", "browser_click"] {
        h.scheduler
            .policy()
            .add_rule(
                Action::Allow,
                &format!("{tool}(http://127.0.0.1:*)"),
                RuleSource::User,
            )
            .unwrap();
    }
    let t0 = Instant::now();
    h.ok("browser_navigate", json!({"url": url})).await;
    let our_start = t0.elapsed();
    for _ in 0..5 {
        h.ok("browser_click", json!({"selector": "#add"})).await;
        h.ok("browser_snapshot", json!({})).await;
    }
    let mut click = Vec::with_capacity(actions);
    for _ in 0..actions {
        let t = Instant::now();
        h.ok("browser_click", json!({"selector": "#add"})).await;
        click.push(t.elapsed());
    }
    let mut snapshot = Vec::with_capacity(actions);
    for _ in 0..actions {
        let t = Instant::now();
        h.ok("browser_snapshot", json!({})).await;
        snapshot.push(t.elapsed());
    }
    browser.close().await;

    // Node Playwright on the same page, after ours has closed (one browser at a time).
    let script = h.dir.path().join("bench.cjs");
    std::fs::write(&script, NODE_SCRIPT).unwrap();
    let node = tokio::process::Command::new("node")
        .arg(&script)
        .arg(driver_package())
        .args([&url, &actions.to_string()])
        .arg(&config.executable)
        .arg(h.dir.path().join("profile-node"))
        .output()
        .await
        .expect("node is not installed: run tests/setup.sh");
    assert!(
        node.status.success(),
        "the Node baseline failed: {}",
        String::from_utf8_lossy(&node.stderr)
    );
    let node: serde_json::Value = serde_json::from_slice(&node.stdout).unwrap();

    let (our_click, node_click) = (median_ms(&mut click), node_median(&node["click"]));
    let (our_snapshot, node_snapshot) = (median_ms(&mut snapshot), node_median(&node["snapshot"]));
    println!(
        "browser: {actions} clicks and {actions} snapshots each, /counter on loopback, headless Chromium"
    );
    println!(
        "  click     median: ours {our_click:.2} ms · Node Playwright {node_click:.2} ms · ratio {:.2}× (target ≤ 1.2×)",
        our_click / node_click
    );
    println!(
        "  snapshot  median: ours {our_snapshot:.2} ms · Node Playwright {node_snapshot:.2} ms · ratio {:.2}× (target ≤ 1.2×)",
        our_snapshot / node_snapshot
    );
    println!(
        "  start → first navigation: ours {:.0} ms (driver + Chromium + page + outline) · Node {:.0} ms (Chromium + page + outline)",
        ms(our_start),
        node["start"].as_f64().unwrap()
    );
    assert!(shop.url("/").starts_with("http://127.0.0.1:"));
}
