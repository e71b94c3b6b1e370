//! The login wall with a person at a real headed Chromium, through the `cowork` binary: the
//! task meets the wall and waits, the browser window opens on the login page (Xvfb), a
//! simulated person (xdotool) signs in, and the task goes on by itself and reads the protected
//! page. The login is then reused by the next task without waiting; and a task killed with -9
//! while it waits is resumed by `cowork tasks resume ID --wait` after the "restart".

use cowork_tests::display::{Person, start_xvfb};
use cowork_tests::shop::{self, ORDER_TEXT};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cowork(home: &Path, display: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cowork"));
    command
        .arg("--home")
        .arg(home)
        .env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null());
    command
}

fn text(out: &Output) -> String {
    cowork_tests::output_text(out)
}

/// Waits (bounded) for a child to end, killing it if it does not.
fn finish(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("cowork did not finish in {limit:?}:\n{}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

fn suspended(home: &Path, display: &str) -> Vec<serde_json::Value> {
    let out = cowork(home, display)
        .args(["--json", "tasks", "suspended"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

/// A private display with a person at it, the shop, and a data dir whose rules let the browser
/// open the shop.
struct Scene {
    _xvfb: cowork_tests::display::Kill,
    display: String,
    person: Person,
    shop: shop::Shop,
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    /// `browser_navigate`'s arguments for the protected page.
    orders: String,
}

impl Scene {
    fn new() -> Scene {
        let (xvfb, display) = start_xvfb();
        let shop = shop::start();
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("cowork");
        let out = cowork(&home, &display)
            .args([
                "policy",
                "rules",
                "add",
                "allow",
                "browser_navigate(http://127.0.0.1:*)",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let orders = serde_json::json!({"url": shop.url("/orders")}).to_string();
        Scene {
            _xvfb: xvfb,
            person: Person::at(&display),
            display,
            shop,
            _tmp: tmp,
            home,
            orders,
        }
    }
}

#[test]
fn a_task_waits_at_the_login_wall_while_the_person_logs_in_then_reads_the_page() {
    let Scene {
        _xvfb,
        display,
        person,
        shop,
        _tmp,
        home,
        orders,
    } = Scene::new();

    // The task meets the wall, shows the login page in a real window, and waits.
    let task = cowork(&home, &display)
        .args([
            "tools",
            "call",
            "browser_navigate",
            "--args",
            &orders,
            "--wait",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    person.logs_in_to(&shop);
    let out = finish(task, cowork_tests::wait::patience() * 2);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("waiting: login needed at"),
        "it said why it waited: {}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(ORDER_TEXT),
        "{}",
        text(&out)
    );
    assert_eq!(shop.logins(), 1);
    let settled = cowork(&home, &display)
        .args(["--json", "tasks", "suspended", "--all"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&settled.stdout).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["state"].as_str(), rows[0]["settled_by"].as_str()),
        (Some("resumed"), Some("auto")),
        "{rows:?}"
    );

    // The next task reuses the login from the app's profile: no wall, no waiting.
    let again = cowork(&home, &display)
        .args(["tools", "call", "browser_navigate", "--args", &orders])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains(ORDER_TEXT),
        "{}",
        text(&again)
    );
    assert_eq!(shop.logins(), 1, "no second login");
    assert!(suspended(&home, &display).is_empty());
}

#[test]
fn a_task_killed_while_it_waits_is_resumed_after_the_restart() {
    let Scene {
        _xvfb,
        display,
        person,
        shop,
        _tmp,
        home,
        orders,
    } = Scene::new();

    let mut task = cowork(&home, &display)
        .args([
            "tools",
            "call",
            "browser_navigate",
            "--args",
            &orders,
            "--wait",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + cowork_tests::wait::patience();
    let waiting = loop {
        if let Some(row) = suspended(&home, &display).pop() {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "the task did not suspend at the wall"
        );
        assert!(
            task.try_wait().unwrap().is_none(),
            "the task ended instead of waiting"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    person.window_named(shop::LOGIN_TITLE, deadline); // the person sees the login page…
    task.kill().unwrap(); // …and the app dies (SIGKILL) before they log in.
    task.wait().unwrap();
    assert!(
        waiting["reason"]
            .as_str()
            .unwrap()
            .starts_with(&format!("login needed at {}", shop.base)),
        "{waiting}"
    );

    // After the restart the task is still there, and resuming it shows the login page again.
    let after = suspended(&home, &display);
    assert_eq!(
        after.len(),
        1,
        "the suspension survived the kill: {after:?}"
    );
    let id = after[0]["id"].as_str().unwrap().to_string();
    let resumed = cowork(&home, &display)
        .args(["tasks", "resume", &id, "--wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    person.logs_in_to(&shop);
    let out = finish(resumed, cowork_tests::wait::patience() * 2);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(ORDER_TEXT),
        "{}",
        text(&out)
    );
    assert_eq!(shop.logins(), 1);
    assert!(
        suspended(&home, &display).is_empty(),
        "nothing is left waiting"
    );
}
