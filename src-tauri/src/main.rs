#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]
//! The Cowork window: checks the display, then runs the shell library on the real webview.

/// The first argument that makes this program the command line (the packages' `cowork` launcher
/// passes it): one program for both faces keeps the package half the size of two.
const CLI_ARG: &str = "--cli";

fn main() -> std::process::ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == CLI_ARG) {
        let args = std::iter::once("cowork".into()).chain(std::env::args_os().skip(2));
        return cowork_cli::main_from(args);
    }
    window();
    std::process::ExitCode::SUCCESS
}

fn window() {
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
        // Nor does GTK's own GL, then: opening the display, GDK asks GLX for its best visuals,
        // which loads mesa's llvmpipe (libLLVM, ~45 MB) into a start hidden in the tray that
        // shows nothing. Only with compositing off: WebKit's GPU path draws through GDK's GL.
        if std::env::var_os("GDK_GL").is_none() {
            // SAFETY: as above.
            unsafe { std::env::set_var("GDK_GL", "disable") };
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let hidden = args.iter().any(|a| a == "--hidden");
    let handed: Vec<String> = args.into_iter().filter(|a| a != "--hidden").collect();
    // One window per data dir: a later launch (a clicked cowork:// link, a .mcpb opened in the
    // file manager) hands its arguments to the window that runs and exits.
    let home = cowork_app::Home::locate().unwrap_or_else(|e| {
        eprintln!("Cowork cannot start: {e}");
        std::process::exit(2);
    });
    let arrivals = match cowork_app::instance::claim(home.root(), &handed) {
        Ok(cowork_app::instance::Instance::Forwarded) => return,
        Ok(cowork_app::instance::Instance::First(arrivals)) => Some(arrivals),
        Err(e) => {
            eprintln!("Cowork: {e}; going on without handing over links");
            None
        }
    };
    let workspaces = std::env::var_os("COWORK_WORKSPACE")
        .map(|w| vec![w.into()])
        .unwrap_or_default();
    let (shell, asks) = cowork_desktop::Shell::open(Some(home.root().to_path_buf()), workspaces)
        .unwrap_or_else(|e| {
            eprintln!("Cowork cannot start: {e}");
            std::process::exit(2);
        });
    let mut context = cowork_desktop::context();
    if hidden {
        // Started at login: no window (no web view, no GL) until the person opens one.
        cowork_desktop::desktop::without_window(&mut context);
    }
    let app = cowork_desktop::builder(tauri::Builder::default(), shell, asks)
        .build(context)
        .expect("error while starting Cowork");
    cowork_desktop::desktop::launched(app.handle(), arrivals, handed, hidden);
    app.run(cowork_desktop::on_run_event);
}
