//! The real window over W3C WebDriver (WebKitWebDriver) under a private Xvfb: launching it on
//! a data dir, finding, typing, clicking, running script in the page, screenshots. Shared by the
//! window tests and the window benchmarks (`#[path]`-included: each is its own crate).

#![allow(dead_code)]
use cowork_tests::display::{Kill, start_xvfb_sized};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Driver {
    pub http: reqwest::Client,
    pub base: String,
    pub session: String,
    /// The X display the window (and any browser the app opens) is on.
    pub display: String,
}

impl Driver {
    pub async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{}", self.base, self.session, path);
        let mut req = self
            .http
            .request(method, &url)
            .timeout(cowork_tests::wait::patience());
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("webdriver {path}: {e}"));
        let value: Value = resp.json().await.unwrap();
        value["value"].clone()
    }
    pub async fn find(&self, css: &str) -> Option<String> {
        self.look_for(css).await.ok()
    }
    /// The element matching `css`, or what WebDriver said instead ("no such element", or an
    /// error that means the page itself is gone) for a failure message to quote.
    pub async fn look_for(&self, css: &str) -> Result<String, String> {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        // W3C: a found element is {"element-6066-…": id}; a miss is {"error": "no such element", …}.
        match v["element-6066-11e4-a52e-4f735466cecf"].as_str() {
            Some(id) => Ok(id.to_string()),
            None => Err(v["error"].as_str().unwrap_or("no answer").to_string()),
        }
    }
    /// Waits (up to the tests' shared patience) for an element; on failure the panic names the
    /// selector, what WebDriver said last and a screenshot of what the window showed instead.
    pub async fn wait_for(&self, css: &str) -> String {
        let limit = cowork_tests::wait::patience();
        let start = Instant::now();
        loop {
            let said = match self.look_for(css).await {
                Ok(id) => return id,
                Err(said) => said,
            };
            if start.elapsed() > limit {
                let shot = artifacts().join("timeout.png");
                let pictured = match self.try_screenshot(&shot).await {
                    Ok(()) => format!("screenshot: {}", shot.display()),
                    Err(why) => format!("no screenshot: {why}"),
                };
                panic!(
                    "{css} did not appear within {limit:?}; WebDriver said {said:?} ({pictured})"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    /// Clicks what matches `target` until `proof` appears — a tab, a page or a view switch,
    /// where a click that lands while the page re-renders is lost and clicking again is
    /// harmless. Never for a button whose effect must happen once. Returns the proof.
    pub async fn click_to(&self, target: &str, proof: &str) -> String {
        cowork_tests::wait::until(&format!("{proof} after clicking {target}"), || async {
            if let Ok(shown) = self.look_for(proof).await {
                return Ok(shown);
            }
            let clicked = self.look_for(target).await?;
            self.click(&clicked).await;
            // Give the click a moment to take effect before it is judged lost.
            for _ in 0..20 {
                if let Ok(shown) = self.look_for(proof).await {
                    return Ok(shown);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err("clicked, nothing yet".to_string())
        })
        .await
    }
    /// Waits until the first element matching `css` says `needle` (a list re-rendering after a
    /// search, a panel loading); the panic quotes what it said last.
    pub async fn wait_for_text(&self, css: &str, needle: &str) -> String {
        cowork_tests::wait::until(&format!("{css} to say {needle:?}"), || async {
            let Some(id) = self.find(css).await else {
                return Err("not there".to_string());
            };
            let said = self.text(&id).await;
            match said.contains(needle) {
                true => Ok(id),
                false => Err(said),
            }
        })
        .await
    }

    pub async fn text(&self, element: &str) -> String {
        let v = self
            .cmd(
                reqwest::Method::GET,
                &format!("/element/{element}/text"),
                None,
            )
            .await;
        v.as_str()
            .unwrap_or_else(|| panic!("element text: {v}"))
            .to_string()
    }
    pub async fn click(&self, element: &str) {
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }
    pub async fn type_into(&self, element: &str, text: &str) {
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }
    /// Types `text` into the field matching `css` until the field holds exactly that, and
    /// returns the field: keys typed before a page has started, or while it re-renders, can be
    /// lost, and a step that then presses Enter would send half a path or question.
    pub async fn fill(&self, css: &str, text: &str) -> String {
        cowork_tests::wait::until(&format!("{css} to hold {text:?}"), || async {
            let field = self.wait_for(css).await;
            let element = json!([{"element-6066-11e4-a52e-4f735466cecf": field}]);
            let value = self
                .exec("return arguments[0].value", element.clone())
                .await;
            if value == text {
                return Ok(field);
            }
            self.exec("arguments[0].value = ''", element).await;
            self.type_into(&field, text).await;
            Err(value.to_string())
        })
        .await
    }
    pub async fn screenshot(&self, path: &Path) {
        if let Err(why) = self.try_screenshot(path).await {
            panic!(
                "no screenshot for {}: WebDriver answered {why}",
                path.display()
            )
        }
    }
    /// Switches the window to a sidebar view and waits until it is the one shown.
    pub async fn open_view(&self, view: &str) {
        self.click_to(
            &format!("[data-view={view}]"),
            &format!("[data-view={view}].active"),
        )
        .await;
    }
    /// Opens a page of Settings (the window shows Settings) and waits until it is shown.
    pub async fn settings_page(&self, page: &str) {
        self.click_to(
            &format!("[data-page={page}]"),
            &format!("[data-testid=settings-page-{page}]"),
        )
        .await;
    }
    /// A picture of the window; Err says what WebDriver answered instead (a page that is gone).
    pub async fn try_screenshot(&self, path: &Path) -> Result<(), String> {
        // WebKit may hand back the previous frame right after a change.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let answer = self.cmd(reqwest::Method::GET, "/screenshot", None).await;
        let b64 = answer.as_str().ok_or_else(|| answer.to_string())?;
        std::fs::write(path, base64_decode(b64)).map_err(|e| e.to_string())
    }
}

/// Standard base64 (WebDriver screenshots); small enough not to need a crate.
pub fn base64_decode(s: &str) -> Vec<u8> {
    let table = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, c)| acc | (table(*c) as u32) << (18 - 6 * i));
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    out
}

/// Pictures from [`artifacts`] in one labelled sheet (ImageMagick's montage, from setup), so a
/// person sees a whole panel at a glance.
pub fn contact_sheet(pictures: &[String], out: &Path, columns: u32) {
    // ImageMagick's default label font (Helvetica) is not on Debian: name the one fontconfig picks.
    let font = Command::new("fc-match")
        .args(["-f", "%{file}", "sans"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut montage = Command::new("montage");
    if !font.is_empty() {
        montage.args(["-font", &font]);
    }
    for picture in pictures {
        montage
            .arg("-label")
            .arg(picture.trim_end_matches(".png"))
            .arg(artifacts().join(picture));
    }
    let made = montage
        .args([
            "-tile",
            &format!("{columns}x"),
            "-geometry",
            "480x300+6+6",
            "-pointsize",
            "14",
        ])
        .arg(out)
        .status()
        .expect("ImageMagick's montage is not installed (apt imagemagick): run tests/setup.sh");
    assert!(made.success(), "montage could not make {}", out.display());
}

pub fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The real window under Xvfb, driven by WebKitWebDriver, on the data dir `home`.
pub async fn launch(home: &Path, env: &[(&str, &std::ffi::OsStr)]) -> (Kill, Kill, Driver) {
    launch_on_screen(home, env, "1280x820x24").await
}

/// [`launch`] on an X screen of the given size (`WIDTHxHEIGHTxDEPTH`).
pub async fn launch_on_screen(
    home: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    screen: &str,
) -> (Kill, Kill, Driver) {
    let (xvfb, display) = start_xvfb_sized(screen);
    let port = free_port();
    let mut command = Command::new("WebKitWebDriver");
    command
        .arg(format!("--port={port}"))
        .env("DISPLAY", &display)
        .env("COWORK_HOME", home)
        .env("TAURI_WEBVIEW_AUTOMATION", "true")
        // WebKitWebDriver's screenshots need compositing, which the app turns off by default.
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let driver =
        Kill(command.spawn().expect(
            "WebKitWebDriver is not installed (apt webkit2gtk-driver): run tests/setup.sh",
        ));
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let caps = json!({"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {"binary": env!("CARGO_BIN_EXE_cowork-desktop"), "args": []}}}});
    let start = Instant::now();
    let session = loop {
        match http
            .post(format!("{base}/session"))
            .json(&caps)
            .timeout(cowork_tests::wait::patience())
            .send()
            .await
        {
            Ok(resp) => {
                let v: Value = resp.json().await.unwrap();
                break v["value"]["sessionId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no session: {v}"))
                    .to_string();
            }
            Err(_) if start.elapsed() < cowork_tests::wait::patience() => {
                tokio::time::sleep(Duration::from_millis(200)).await
            }
            Err(e) => panic!("WebKitWebDriver did not answer: {e}"),
        }
    };
    (
        xvfb,
        driver,
        Driver {
            http,
            base,
            session,
            display,
        },
    )
}

impl Driver {
    /// Runs `script` in the page (W3C execute/sync); its return value.
    pub async fn exec(&self, script: &str, args: Value) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Turns to the frame `element` (None: back to the window's own page), W3C switch to frame.
    pub async fn switch_to_frame(&self, element: Option<&str>) {
        let id = element.map(|e| json!({"element-6066-11e4-a52e-4f735466cecf": e}));
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/frame",
                Some(json!({"id": id.unwrap_or(Value::Null)})),
            )
            .await;
        assert!(v.is_null(), "switch to frame: {v}");
    }

    /// Runs `script` in the page until it calls its last argument (W3C execute/async).
    pub async fn exec_async(&self, script: &str, args: Value) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/async",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Sets the window's size and waits until the page sees it (it learns of it a frame later).
    pub async fn resize(&self, width: u32, height: u32) {
        self.cmd(
            reqwest::Method::POST,
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .await;
        cowork_tests::wait::until(&format!("the page to be {width} px wide"), || async {
            let seen = self.exec("return window.innerWidth", json!([])).await;
            // The page's width can differ from the window's by a border.
            match seen
                .as_u64()
                .is_some_and(|w| w.abs_diff(width as u64) <= 40)
            {
                true => Ok(()),
                false => Err(seen.to_string()),
            }
        })
        .await
    }

    /// Switches the page's language and theme (kept in its storage: a reload) and waits for
    /// the page to come back in them.
    pub async fn switch_look(&self, lang: &str, theme: &str) {
        self.exec(
            "localStorage.setItem('lang', arguments[0]); localStorage.setItem('theme', arguments[1]); location.reload();",
            json!([lang, theme]),
        )
        .await;
        let wanted = format!("{lang} {theme} true");
        cowork_tests::wait::until(&format!("the page in {lang}/{theme}"), || async {
            let now = self
                .exec(
                    "return document.documentElement.lang + ' ' + document.documentElement.dataset.theme + ' ' + !!document.querySelector('[data-testid=chat-input], nav')",
                    json!([]),
                )
                .await;
            match now.as_str() == Some(wanted.as_str()) {
                true => Ok(()),
                false => Err(now.to_string()),
            }
        })
        .await
    }

    /// Every element matching `css`.
    pub async fn find_all(&self, css: &str) -> Vec<String> {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                e["element-6066-11e4-a52e-4f735466cecf"]
                    .as_str()
                    .map(String::from)
            })
            .collect()
    }
}
