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
  if (Number(n) === 0) { console.log(JSON.stringify({ start })); await context.close(); return; }
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

/// Runs the Node script on `url` with `actions` clicks and snapshots (0: start only).
async fn node_run(
    dir: &std::path::Path,
    url: &str,
    actions: usize,
    exe: &std::path::Path,
    profile: &str,
) -> serde_json::Value {
    let script = dir.join("bench.cjs");
    std::fs::write(&script, NODE_SCRIPT).unwrap();
    let node = tokio::process::Command::new("node")
        .arg(&script)
        .arg(driver_package())
        .args([url, &actions.to_string()])
        .arg(exe)
        .arg(dir.join(profile))
        .output()
        .await
        .expect("node is not installed: run tests/setup.sh");
    assert!(
        node.status.success(),
        "the Node baseline failed: {}",
        String::from_utf8_lossy(&node.stderr)
    );
    serde_json::from_slice(&node.stdout).unwrap()
}

/// Browser start → first page loaded and outlined, ours (a fresh browser family: driver,
/// Chromium, page, outline, through the gate) and Node's (Chromium, page, outline), in turns so
/// that neither always meets a cold disk cache; medians of `runs`.
async fn starts(url: &str, runs: usize) -> (f64, f64, f64) {
    let (mut ours, mut node, mut warmed) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        warmed.push(warmed_start(url).await);
        let (h, browser, config) = fresh_browser().await;
        let t0 = Instant::now();
        h.ok("browser_navigate", json!({"url": url})).await;
        ours.push(t0.elapsed());
        browser.close().await;
        let start = node_run(h.dir.path(), url, 0, &config.executable, "profile-node").await;
        node.push(Duration::from_secs_f64(
            start["start"].as_f64().unwrap() / 1e3,
        ));
        eprintln!(
            "  start run {run}: ours {:.0} ms · warmed {:.0} ms · Node {:.0} ms",
            ms(ours[run]),
            ms(warmed[run]),
            ms(node[run])
        );
    }
    (
        median_ms(&mut ours),
        median_ms(&mut node),
        median_ms(&mut warmed),
    )
}

/// How long before a call arrives the family hears it is coming: the model has named the tool
/// and is still writing its arguments (a navigate's ~30 tokens at ~100 tokens/s), then the
/// message ends and the call is reviewed. An assumption, stated with the figure.
const CALL_WRITTEN_IN: Duration = Duration::from_millis(300);

/// Call → page loaded and outlined, when the model began the call `CALL_WRITTEN_IN` earlier
/// (`ToolProvider::warm_up`, as the agent does when a stream names a browser tool).
async fn warmed_start(url: &str) -> Duration {
    use cowork_contract::ToolProvider;
    let (h, browser, _) = fresh_browser().await;
    browser.warm_up("browser_navigate");
    tokio::time::sleep(CALL_WRITTEN_IN).await;
    let t0 = Instant::now();
    h.ok("browser_navigate", json!({"url": url})).await;
    let took = t0.elapsed();
    browser.close().await;
    took
}

/// A browser family of its own (profile, gate, rules for the loopback shop), not started: the
/// gate's first call (policy, audit writer) is made, since it is not the browser's to pay — a
/// click with no page open is refused by its plan, before the browser starts.
async fn fresh_browser() -> (Harness, Arc<BrowserTools>, BrowserConfig) {
    let h = Harness::new(Arc::new(Recorder::default()));
    let mut config = BrowserConfig::new(h.dir.path().join("profile"));
    config.can_show_window = false;
    let browser = Arc::new(BrowserTools::new(config.clone()));
    h.scheduler
        .registry()
        .add_provider(Layer::Builtin, browser.clone());
    allow_loopback(&h);
    let _ = h.call("browser_click", json!({"selector": "#add"})).await;
    (h, browser, config)
}

fn allow_loopback(h: &Harness) {
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
}

#[tokio::main]
async fn main() {
    let actions = env("BROWSER_BENCH_ACTIONS", 200);
    let start_runs = env("BROWSER_BENCH_STARTS", 5);
    let shop = shop::start();
    let url = shop.url("/counter");
    let (our_start, node_start, warmed_start) = starts(&url, start_runs).await;

    // Ours, through the scheduler.
    let (h, browser, config) = fresh_browser().await;
    h.ok("browser_navigate", json!({"url": url})).await;
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
    let node = node_run(
        h.dir.path(),
        &url,
        actions,
        &config.executable,
        "profile-node",
    )
    .await;

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
        "  start → first navigation, median of {start_runs} in turns: ours {our_start:.0} ms (driver + Chromium + page + outline) · Node {node_start:.0} ms (Chromium + page + outline) · ratio {:.2}× (target ≤ 1.2×)",
        our_start / node_start
    );
    println!(
        "  the same when the model began the call {} ms before it arrived (warm_up): ours {warmed_start:.0} ms · ratio {:.2}× (target ≤ 1.2×)",
        CALL_WRITTEN_IN.as_millis(),
        warmed_start / node_start
    );
    assert!(shop.url("/").starts_with("http://127.0.0.1:"));
}
