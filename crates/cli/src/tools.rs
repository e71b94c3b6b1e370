//! The tools: `cowork tools list | search | show | call | export`.

use super::*;
use cowork_core::Registry;

#[derive(Subcommand)]
pub(crate) enum ToolsCmd {
    List {
        #[arg(long)]
        category: Option<String>,
    },
    Search {
        query: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    Show {
        name: String,
    },
    /// Call a tool through the scheduler (review, approval, audit).
    Call {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// If the call is suspended (a login wall), wait and go on by itself once its
        /// condition holds — you log in in the browser window it opens. Exit 4 without it.
        #[arg(long)]
        wait: bool,
    },
    /// The tool definitions a model would receive.
    Export {
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Anthropic,
    Openai,
}

pub(crate) async fn tools(
    app: &App,
    cmd: ToolsCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let registry = app.scheduler().registry();
    match cmd {
        ToolsCmd::List { category } => list(registry, category.as_deref(), json),
        ToolsCmd::Search { query, limit } => print::search(&registry.search(&query, limit), json),
        ToolsCmd::Show { name } => show(registry, &name, json)?,
        ToolsCmd::Export { format } => export(registry, format),
        ToolsCmd::Call { name, args, wait } => {
            return call(app, &name, &args, wait, conversation, json).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(registry: &Registry, category: Option<&str>, json: bool) {
    let tools: Vec<_> = registry
        .list()
        .into_iter()
        .filter(|t| category.is_none_or(|c| t.spec.category == c))
        .collect();
    print::tools(&tools, json);
}

fn show(registry: &Registry, name: &str, json: bool) -> Result<(), String> {
    let info = registry
        .get(name)
        .ok_or_else(|| registry.not_found(name).to_string())?;
    print::tool(&info, json);
    Ok(())
}

fn export(registry: &Registry, format: Format) {
    let visible = registry.visible(&[]);
    let out = match format {
        Format::Anthropic => Registry::export_anthropic(&visible),
        Format::Openai => Registry::export_openai(&visible),
    };
    say!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}

async fn call(
    app: &App,
    name: &str,
    args: &str,
    wait: bool,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    // A tool call sends due mail from this process and waits for it to leave (`drain_outbox`).
    // Other commands never start a send they would not wait for: exiting mid-SMTP would leave
    // the message uncertain.
    let outbox = tokio::spawn(app.outbox_worker());
    let args = parse_args(args)?;
    let code = call_and_print_waiting(
        app.scheduler(),
        name,
        args,
        conversation,
        json,
        wait.then_some(app),
    )
    .await?;
    // A clean close writes the browser's cookies (a login) to the profile now.
    app.close_browser().await;
    drain_outbox(app, conversation).await;
    outbox.abort();
    Ok(code)
}
