#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]
//! The Cowork window: checks the display, then runs the shell library on the real webview.

fn main() {
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        eprintln!(
            "Cowork needs a display. Without one, run it under Xvfb:\n  xvfb-run -a cargo run --release -p cowork-desktop\n\
             or use the command line:\n  cargo run --release -p cowork-cli -- --help"
        );
        std::process::exit(1);
    }
    if cfg!(target_os = "linux") && std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        // A chat UI needs no GPU compositing; without it WebKit's web process takes ~60 MB less
        // (measured: idle PSS 228 → 166 MB) and some drivers stop showing blank windows.
        // SAFETY: first thing in main, before any thread exists.
        unsafe { std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1") };
    }
    let workspaces = std::env::var_os("COWORK_WORKSPACE")
        .map(|w| vec![w.into()])
        .unwrap_or_default();
    let (shell, asks) = cowork_desktop::Shell::open(None, workspaces).unwrap_or_else(|e| {
        eprintln!("Cowork cannot start: {e}");
        std::process::exit(2);
    });
    cowork_desktop::builder(tauri::Builder::default(), shell, asks)
        .build(cowork_desktop::context())
        .expect("error while starting Cowork")
        .run(cowork_desktop::on_run_event);
}
