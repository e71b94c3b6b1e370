//! The Cowork window as a library: the binary (`main.rs`) runs it on the real webview, and the
//! IPC tests run the very same builder on Tauri's mock runtime (`tauri::test`), capabilities
//! included. No business logic lives here; commands call cowork-app and the core.

pub mod commands;
pub mod desktop;
pub mod events;
mod pumps;
mod shell;

pub use shell::{Asks, Shell};
use tauri::{Manager, Runtime};

/// The app's builder: state, the event pumps (`pumps`) and every command. The same for the real
/// and the mock runtime.
pub fn builder<R: Runtime>(
    builder: tauri::Builder<R>,
    shell: Shell,
    asks: Asks,
) -> tauri::Builder<R> {
    builder
        .manage(shell)
        .on_window_event(desktop::on_window_event)
        // Rust-side only (`open_link` checks the address first): no opener permission is given
        // to the webview.
        .plugin(tauri_plugin_opener::init())
        // Rust-side only too (`pick_folder`): the webview gets no dialog permission.
        .plugin(tauri_plugin_dialog::init())
        // MCP Apps' pages, each in a frame of its own origin (see `commands::apps`).
        .register_uri_scheme_protocol(commands::apps::VIEW_SCHEME, commands::apps::view_page)
        .setup(move |tauri_app| {
            pumps::start(tauri_app.handle(), asks);
            Ok(())
        })
        .invoke_handler(ipc::<R>().invoke_handler())
}

/// The window's commands and events, typed: this registers every command (build.rs finds them in
/// `src/commands/`) and generates `ui/src/bindings.ts` with every event (`events::all`), so the
/// webview's types cannot drift from Rust's. `cargo test -p cowork-desktop --lib bindings` checks
/// the file is current; `COWORK_WRITE_BINDINGS=1` rewrites it.
pub fn ipc<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        // A failed command rejects its promise, as `invoke` does.
        .error_handling(tauri_specta::ErrorHandlingMode::Throw)
        // serde_json writes every integer as a JSON number, and that is what the webview reads.
        .dangerously_cast_bigints_to_number()
        // One TypeScript type per Rust type (what the webview reads and sends agree field for field).
        .disable_serde_phases()
        .commands(include!(concat!(env!("OUT_DIR"), "/commands.rs")))
        .events(events::all())
}

/// The app's context from the root `tauri.conf.json`: window, CSP, the built UI and the
/// capability files (so the IPC tests exercise the real permissions).
pub fn context<R: Runtime>() -> tauri::Context<R> {
    tauri::generate_context!("../tauri.conf.json")
}

/// What the window does as the app exits: the browser is closed cleanly, so a login the person
/// just made is written to the app's profile.
pub fn on_run_event<R: Runtime>(handle: &tauri::AppHandle<R>, event: tauri::RunEvent) {
    match event {
        tauri::RunEvent::Exit => {
            tauri::async_runtime::block_on(handle.state::<Shell>().app.close_browser());
        }
        // The last window closed: Cowork stays in the tray when the person chose so (the tray's
        // Quit exits with a code and is not held).
        tauri::RunEvent::ExitRequested {
            api, code: None, ..
        } if desktop::stays_in_tray(handle) => api.prevent_exit(),
        _ => {}
    }
}

#[cfg(test)]
mod bindings {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// What `ipc()` generates now.
    fn fresh_bindings() -> String {
        let fresh = std::env::temp_dir().join(format!("cowork-bindings-{}.ts", std::process::id()));
        super::ipc::<tauri::Wry>()
            .export(specta_typescript::Typescript::default(), &fresh)
            .expect("the bindings export");
        let fresh_text = std::fs::read_to_string(&fresh).unwrap();
        let _ = std::fs::remove_file(&fresh);
        fresh_text
    }

    /// `ui/src/bindings.ts` is what `ipc()` generates now: a command or type changed in Rust and
    /// not regenerated fails here (and `npm run build` would type-check the UI against it).
    #[test]
    fn bindings_are_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let fresh_text = fresh_bindings();
        if std::env::var_os("COWORK_WRITE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh_text).unwrap();
            return;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == fresh_text,
            "ui/src/bindings.ts is out of date: run `COWORK_WRITE_BINDINGS=1 cargo test -p cowork-desktop --lib bindings`"
        );
    }

    /// The ACL names the same commands: build.rs declares one permission per command and the
    /// set `app-commands` of them all, and the capability grants commands through that set
    /// alone (a command missing there is unreachable; one extra, stale).
    #[test]
    fn the_capability_grants_exactly_the_commands() {
        let invoked: BTreeSet<String> = fresh_bindings()
            .split("__TAURI_INVOKE<")
            .skip(1)
            .filter_map(|rest| rest.split("(\"").nth(1)?.split('"').next())
            .map(|command| format!("allow-{}", command.replace('_', "-")))
            .collect();
        let set = std::fs::read_to_string(
            Path::new(env!("OUT_DIR")).join("permissions/app-commands.toml"),
        )
        .unwrap();
        let declared: BTreeSet<String> = set
            .split("permissions = [")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .unwrap_or_default()
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        assert_eq!(
            invoked, declared,
            "build.rs's app-commands and ipc()'s commands differ"
        );
        let capability: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities/default.json"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            capability["permissions"],
            serde_json::json!([
                "core:event:allow-listen",
                "core:event:allow-unlisten",
                "app-commands"
            ]),
            "capabilities/default.json grants the commands through app-commands, and nothing else"
        );
    }
}
