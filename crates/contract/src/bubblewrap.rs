//! Whether bubblewrap can confine processes on this machine. Shared by the families that run
//! other programs (`run_command`, MCP servers), so both agree on what "sandboxed" means here.

use std::sync::OnceLock;

/// bubblewrap installed and allowed to create its namespaces (a container may forbid user
/// namespaces): probed once per process with a tiny sandbox.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::process::Command::new("bwrap")
            .args([
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}
