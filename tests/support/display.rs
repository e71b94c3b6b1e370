//! A private X server for tests that need a display (the window, a headed browser), and a
//! child process that is killed when the test ends.

use std::process::{Child, Command, Stdio};

pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private X server on a free display number (Xvfb picks it and writes it to a pipe).
pub fn start_xvfb() -> (Kill, String) {
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1280x820x24", "-nolisten", "tcp"])
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
