//! A private X server for tests that need a display (the window, a headed browser), and a
//! child process that is killed when the test ends.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private X server on a free display number (Xvfb picks it and writes it to a pipe).
pub fn start_xvfb() -> (Kill, String) {
    start_xvfb_sized("1280x820x24")
}

/// A private X display of `screen` (`WIDTHxHEIGHTxDEPTH`): the gallery needs one wider than a
/// laptop's to show the window at 1920 px.
pub fn start_xvfb_sized(screen: &str) -> (Kill, String) {
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let child = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            screen,
            "-nolisten",
            "tcp",
        ])
        .stdout(writer.try_clone().expect("pipe"))
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb is not installed: run tests/setup.sh");
    drop(writer);
    let mut number = String::new();
    use std::io::Read;
    let mut byte = [0u8; 1];
    while reader.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        number.push(byte[0] as char);
    }
    assert!(!number.is_empty(), "Xvfb did not report a display");
    (Kill(child), format!(":{number}"))
}

/// A simulated person at the X display: finds windows by title, clicks and types with xdotool.
pub struct Person {
    pub display: String,
}

impl Person {
    pub fn at(display: &str) -> Person {
        Person {
            display: display.to_string(),
        }
    }

    pub fn xdotool(&self, args: &[&str]) -> std::process::Output {
        Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool is not installed: run tests/setup.sh")
    }

    /// The id of a visible window whose title contains `title`, once there is one.
    pub fn window_named(&self, title: &str, deadline: Instant) -> String {
        loop {
            let found = self.xdotool(&["search", "--onlyvisible", "--name", title]);
            if let Some(id) = String::from_utf8_lossy(&found.stdout).lines().last() {
                return id.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no visible window titled {title:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Clicks at a point of `window` given as fractions of its size.
    pub fn click_at(&self, window: &str, x: f64, y: f64) {
        self.xdotool(&["windowfocus", "--sync", window]);
        let geometry = String::from_utf8_lossy(
            &self
                .xdotool(&["getwindowgeometry", "--shell", window])
                .stdout,
        )
        .to_string();
        let size = |key: &str| {
            geometry
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(800.0)
        };
        let (x, y) = (
            ((size("WIDTH=") * x) as u32).to_string(),
            ((size("HEIGHT=") * y) as u32).to_string(),
        );
        self.xdotool(&["mousemove", "--window", window, &x, &y, "click", "1"]);
    }

    /// Types into whatever has the keyboard focus, a key at a time as a person does.
    pub fn types(&self, text: &str) {
        self.xdotool(&["type", "--delay", "30", text]);
    }

    pub fn presses(&self, key: &str) {
        self.xdotool(&["key", key]);
    }

    /// A screenshot of the whole display, for a failure message.
    pub fn screenshot(&self, name: &str) -> std::path::PathBuf {
        let shot = std::env::temp_dir().join(name);
        let _ = Command::new("import")
            .args(["-window", "root"])
            .arg(&shot)
            .env("DISPLAY", &self.display)
            .status();
        shot
    }
}
