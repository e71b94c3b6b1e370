//! MCP Apps: a toolpack's interactive view under its tool's result. The view's page is served
//! by the `cowork-view` scheme (`view_page`); what the view asks of Cowork comes here from the
//! window's bridge and goes to cowork-app's `mcp_apps`, which reviews it.

use super::Res;
use crate::Shell;
use tauri::State;

/// Reads the view's page from its server (the person asked to see it) and returns the address
/// the frame loads.
#[tauri::command]
#[specta::specta]
pub async fn open_app_view(
    shell: State<'_, Shell>,
    conversation: String,
    server: String,
    resource: String,
) -> Res<String> {
    let token = shell
        .app
        .open_app_view(&conversation, &server, &resource)
        .await
        .map_err(|e| e.to_string())?;
    Ok(view_address(&token))
}

/// A tool call the view makes: its server's tools only, reviewed with the view as the caller.
/// The answer is MCP's `CallToolResult`, which the bridge hands to the view as it is.
#[tauri::command]
#[specta::specta]
pub async fn call_app_tool(
    shell: State<'_, Shell>,
    server: String,
    tool: String,
    args: serde_json::Value,
) -> Res<serde_json::Value> {
    Ok(shell.app.call_from_view(&server, &tool, args).await)
}

/// A message the view asks to add: the attachment the composer holds for the person to send
/// or drop (the server's words, never theirs).
#[tauri::command]
#[specta::specta]
pub fn app_view_message(
    shell: State<'_, Shell>,
    server: String,
    text: String,
) -> cowork_agent::Part {
    shell.app.message_from_view(&server, &text)
}

/// The scheme the views' pages are served on: an origin of its own, which the window's CSP
/// lets frames load and nothing else.
pub const VIEW_SCHEME: &str = "cowork-view";

/// The frame's address for a page (WebKitGTK and WKWebView name custom schemes as they are;
/// WebView2 reaches them over http).
fn view_address(token: &str) -> String {
    if cfg!(windows) {
        format!("http://{VIEW_SCHEME}.localhost/{token}")
    } else {
        format!("{VIEW_SCHEME}://localhost/{token}")
    }
}

/// The `cowork-view` scheme: a page by its token, with its own CSP; anything else is not found.
pub fn view_page<R: tauri::Runtime>(
    ctx: tauri::UriSchemeContext<'_, R>,
    request: tauri::http::Request<Vec<u8>>,
) -> tauri::http::Response<Vec<u8>> {
    use tauri::Manager;
    let token = request.uri().path().trim_start_matches('/');
    let page = ctx.app_handle().state::<Shell>().app.app_view_page(token);
    let builder = tauri::http::Response::builder();
    match page {
        Some(page) => builder
            .header("Content-Type", "text/html; charset=utf-8")
            .header("Content-Security-Policy", &page.csp)
            .header("X-Content-Type-Options", "nosniff")
            .header("Cache-Control", "no-store")
            .body(page.html.clone().into_bytes()),
        None => builder.status(404).body(Vec::new()),
    }
    .unwrap_or_default()
}
