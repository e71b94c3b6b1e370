//! The web: `cowork web …` — settings and keys, and the four web tools (each reviewed and
//! audited like any call).

use super::*;
use cowork_app::SearchProvider;
use cowork_app::Section;

#[derive(Subcommand)]
pub(crate) enum WebCmd {
    /// Choose the search provider (searxng, brave, tavily) and, optionally, its address.
    Provider {
        /// searxng, brave or tavily.
        provider: String,
        #[arg(long)]
        url: Option<String>,
    },
    /// Store the current search provider's key (read from stdin) in the OS keyring.
    Key,
    /// Print the web settings (search, weather, feeds, proxy).
    Settings,
    /// Search the web with the chosen provider (web_search).
    Search {
        query: String,
        #[arg(long)]
        count: Option<u8>,
    },
    /// Read a page as Markdown, or a PDF as text (web_fetch).
    Fetch {
        url: String,
        #[arg(long)]
        selector: Option<String>,
    },
    /// The weather for a place, in any language (get_weather).
    Weather {
        place: String,
        #[arg(long)]
        days: Option<u8>,
    },
    /// The latest headlines from the news feeds (get_news).
    News {
        /// Only items mentioning these words.
        query: Option<String>,
        /// 2026-11-20, 12h, 3d.
        #[arg(long)]
        since: Option<String>,
        #[arg(long)]
        language: Option<String>,
    },
}

pub(crate) async fn web(
    app: &App,
    cmd: WebCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let path = app.home().settings_path();
    let (tool, args) = match cmd {
        WebCmd::Provider { provider, url } => return set_provider(&path, &provider, url),
        WebCmd::Key => return store_key(&path),
        WebCmd::Settings => {
            let settings = cowork_app::WebSettings::load(&path)?;
            say!(
                "{}",
                serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())?
            );
            return Ok(ExitCode::SUCCESS);
        }
        WebCmd::Search { query, count } => (
            "web_search",
            serde_json::json!({ "query": query, "count": count }),
        ),
        WebCmd::Fetch { url, selector } => (
            "web_fetch",
            serde_json::json!({ "url": url, "selector": selector }),
        ),
        WebCmd::Weather { place, days } => (
            "get_weather",
            serde_json::json!({ "place": place, "days": days }),
        ),
        WebCmd::News {
            query,
            since,
            language,
        } => (
            "get_news",
            serde_json::json!({ "query": query, "since": since, "language": language }),
        ),
    };
    call_and_print(app.scheduler(), tool, args, conversation, json).await
}

/// Chooses the search provider and, with `url`, its address (each search still asks before it
/// reaches a new origin).
fn set_provider(
    settings_path: &std::path::Path,
    name: &str,
    url: Option<String>,
) -> Result<ExitCode, String> {
    let provider: SearchProvider =
        serde_json::from_value(serde_json::Value::String(name.to_lowercase()))
            .map_err(|_| format!("{name:?}: choose searxng, brave or tavily"))?;
    let mut settings = cowork_app::WebSettings::load(settings_path)?;
    settings.search.provider = Some(provider);
    if let Some(url) = url {
        let (_, origin) = cowork_contract::address::web_origin(&url).map_err(|e| e.to_string())?;
        let slot = match provider {
            SearchProvider::Searxng => &mut settings.search.searxng_url,
            SearchProvider::Brave => &mut settings.search.brave_url,
            SearchProvider::Tavily => &mut settings.search.tavily_url,
        };
        *slot = url.trim_end_matches('/').to_string();
        say!(
            "each search asks before it reaches {origin} until you allow it (`cowork policy allow \"web_search({origin})\"`)"
        );
    }
    settings.save(settings_path)?;
    say!(
        "web search: {provider:?} (saved to {})",
        settings_path.display()
    );
    if provider.needs_key() && !cowork_app::has_web_key(provider)? {
        say!("store its key: `cowork web key` (reads it from stdin)");
    }
    Ok(ExitCode::SUCCESS)
}

/// The chosen provider's key, read from standard input, into the OS keyring.
fn store_key(settings_path: &std::path::Path) -> Result<ExitCode, String> {
    let provider = cowork_app::WebSettings::load(settings_path)?
        .search
        .provider
        .ok_or("choose a provider first: `cowork web provider brave`")?;
    let key = approve::read_line()?;
    cowork_app::set_web_key(provider, &key)?;
    say!(
        "key stored in the OS keyring ({})",
        provider.keyring_account()
    );
    Ok(ExitCode::SUCCESS)
}
