//! `cowork mcp serve`: parses, opens the app with the client's form as the approver, prints
//! where to connect; the server itself is `cowork_app::mcp_serve`.

use crate::{Cli, open_app_with};
use cowork_app::mcp_serve::{self, ClientAsks, CoworkServer, ServeOptions, Toolpacks};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Streamable HTTP on 127.0.0.1 instead of stdio (the client needs the token it prints).
    #[arg(long)]
    http: bool,
    /// The HTTP port (0: any free one, printed).
    #[arg(long, default_value_t = 0, requires = "http")]
    port: u16,
    /// The client's name in audit rows and grants (`mcp:<name>`); default: the name it declares.
    #[arg(long = "as", value_name = "NAME")]
    client: Option<String>,
    /// Also serve this toolpack's tools (repeatable; `all` for every enabled pack).
    #[arg(long = "toolpack", value_name = "NAME")]
    toolpacks: Vec<String>,
}

impl ServeArgs {
    fn options(&self) -> ServeOptions {
        let toolpacks = match self.toolpacks.as_slice() {
            [] => Toolpacks::None,
            names if names.iter().any(|n| n == "all") => Toolpacks::All,
            names => Toolpacks::Named(names.iter().cloned().collect()),
        };
        ServeOptions {
            client: self.client.clone(),
            toolpacks,
        }
    }
}

pub(crate) async fn serve(cli: &Cli, args: &ServeArgs) -> Result<ExitCode, String> {
    let asks = Arc::new(ClientAsks::default());
    let app = open_app_with(cli, asks.clone())?;
    if !args.toolpacks.is_empty() {
        crate::start_toolpacks(&app).await?;
    }
    let server = CoworkServer::new(&app, asks, args.options());
    if !args.http {
        mcp_serve::serve_stdio(server).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .map_err(|e| format!("127.0.0.1:{}: {e} — choose another --port", args.port))?;
    let url = format!(
        "http://{}/mcp",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let token = mcp_serve::http_token(app.home().root(), args.client.as_deref())?;
    announce(&url, &token, cli.json);
    mcp_serve::serve_http(server, listener, token, until_terminated()).await?;
    Ok(ExitCode::SUCCESS)
}

/// Where to connect and with what, for the person to copy into their client (on stdout as JSON
/// with `--json`, for scripts).
fn announce(url: &str, token: &str, json: bool) {
    if json {
        say!("{}", serde_json::json!({"url": url, "token": token}));
        return;
    }
    esay!("Cowork serves MCP at {url}");
    esay!("Send the header: Authorization: Bearer {token}");
    esay!(
        "Claude Code: claude mcp add --transport http cowork {url} --header \"Authorization: Bearer {token}\""
    );
    esay!("Stop with Ctrl-C.");
}

/// Ctrl-C at the terminal, or the service manager's SIGTERM.
async fn until_terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        },
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
