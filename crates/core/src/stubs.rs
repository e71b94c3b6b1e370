//! The stub layer: every catalog tool exists from day one. Until its family is built and
//! configured, calling it (through the scheduler, reviewed and audited like any call) answers
//! with exactly what is missing and how to get it.

use cowork_contract::{
    Annotations, DynTool, EffectEnv, PreparedCall, ToolError, ToolMeta, ToolProvider, ToolSpec,
};
use std::sync::Arc;

struct StubTool {
    spec: ToolSpec,
    what: &'static str,
    how: &'static str,
}

impl DynTool for StubTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(
        &self,
        _args: serde_json::Value,
        _env: &EffectEnv,
    ) -> Result<PreparedCall, ToolError> {
        let err = ToolError::not_configured(self.what, self.how);
        // A stub has no effects: it does nothing but explain.
        Ok(PreparedCall::new(
            vec![],
            Arc::new(move |_ctx| {
                let err = err.clone();
                Box::pin(async move { Err(err) })
            }),
        ))
    }
}

/// What is missing, and how to get it.
type Missing = (&'static str, &'static str);

const WEB: Missing = (
    "the web family is not built into this version yet",
    "planned: Settings → Web (search provider base URL)",
);
const VOICE: Missing = (
    "voice is not built into this version yet",
    "planned: Settings → Voice (speech model is downloaded by setup)",
);
const MCP: Missing = (
    "toolpacks are not built into this version yet",
    "planned: `cowork toolpack install github:owner/repo`",
);
const PERSONAL: Missing = (
    "no weather/news source configured: not built into this version yet",
    "planned: Settings → Sources (base URL of Open-Meteo or an RSS feed)",
);

/// name, category, description, aliases, what is missing
const CATALOG: &[(&str, &str, &str, &[&str], Missing)] = &[
    (
        "web_fetch",
        "web",
        "Fetch a URL and return it as Markdown.",
        &["WebFetch"],
        WEB,
    ),
    ("web_search", "web", "Search the web.", &["WebSearch"], WEB),
    (
        "get_weather",
        "personal",
        "Weather forecast for a place.",
        &[],
        PERSONAL,
    ),
    (
        "get_news",
        "personal",
        "Latest headlines from configured feeds.",
        &[],
        PERSONAL,
    ),
    ("speak", "voice", "Say a text aloud.", &[], VOICE),
    (
        "transcribe",
        "voice",
        "Transcribe speech from the microphone or a file.",
        &[],
        VOICE,
    ),
    (
        "reload_tools",
        "mcp",
        "Re-read toolpacks and refresh the tool list.",
        &[],
        MCP,
    ),
];

pub struct StubCatalog;

impl ToolProvider for StubCatalog {
    fn name(&self) -> &str {
        "stubs"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        CATALOG
            .iter()
            .map(|(name, category, description, aliases, (what, how))| {
                let meta = ToolMeta::new(
                    name,
                    &name.replace('_', " "),
                    &format!("{description} (not configured: {what})"),
                )
                .category(category)
                .aliases(aliases)
                .annotations(Annotations {
                    read_only: true,
                    ..Default::default()
                })
                .timeout(std::time::Duration::from_secs(1));
                Arc::new(StubTool {
                    spec: ToolSpec::from_meta(meta, serde_json::json!({"type": "object"})),
                    what,
                    how,
                }) as Arc<dyn DynTool>
            })
            .collect()
    }
}
