//! The registry: discovery and metadata. It hands out [`ToolInfo`] (spec + layer), never a
//! handler: only the scheduler (same crate) reaches [`Registry::handler`].
//!
//! Layers: MCP > builtin. A higher layer replaces a lower one of the same name and the
//! replacement stays visible (`ToolInfo::overrides`, shown in the catalog and every audit row).

use cowork_contract::{DynTool, ToolError, ToolProvider, ToolSpec};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Builtin,
    Mcp,
}

/// Who keeps an alias claimed by several layers: higher wins.
fn alias_rank(layer: Layer) -> u8 {
    match layer {
        Layer::Builtin => 1,
        Layer::Mcp => 0,
    }
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Builtin => "builtin",
            Layer::Mcp => "mcp",
        }
    }
}

/// What callers see of a tool.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolInfo {
    pub spec: Arc<ToolSpec>,
    pub layer: Layer,
    /// Lower layers this tool replaces (e.g. an MCP tool overriding a builtin of the same name).
    pub overrides: Vec<Layer>,
}

/// The scheduler's view of a tool: the handler plus its compiled schemas.
pub(crate) struct Handler {
    pub tool: Arc<dyn DynTool>,
    pub info: ToolInfo,
    /// Compiled at first use for builtins: a `cowork` start compiled every builtin's two
    /// schemas (~70 tools) to run one of them. A pack's are compiled when it registers, so a
    /// schema that does not compile leaves its tool out rather than failing at its first call.
    input: OnceLock<Option<Arc<jsonschema::Validator>>>,
    output: OnceLock<Option<Arc<jsonschema::Validator>>>,
}

impl Handler {
    /// The input schema, compiled; an error names the tool whose schema does not compile.
    pub fn input(&self) -> Result<&jsonschema::Validator, ToolError> {
        let spec = &self.info.spec;
        self.input
            .get_or_init(|| compile(&spec.input_schema, "input", &spec.name))
            .as_deref()
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "{}'s input schema does not compile (see the log)",
                    spec.name
                ))
            })
    }

    /// The output schema, compiled, where the tool declares one that compiles.
    pub fn output(&self) -> Option<&jsonschema::Validator> {
        let spec = &self.info.spec;
        self.output
            .get_or_init(|| {
                let schema = spec.output_schema.as_ref()?;
                compile(schema, "output", &spec.name)
            })
            .as_deref()
    }
}

enum Source {
    Provider(Arc<dyn ToolProvider>),
    Tool(Arc<dyn DynTool>),
}

#[derive(Default)]
struct Snapshot {
    tools: BTreeMap<String, Arc<Handler>>,
    aliases: HashMap<String, String>,
    /// The families' default rules (see [`cowork_contract::ToolProvider::default_rules`]).
    default_rules: Vec<cowork_contract::DefaultRule>,
}

/// Each source's tools with its layer.
type LayeredTools = Vec<(Layer, Vec<Arc<dyn DynTool>>)>;

/// Told the families' default rules after every reload (the scheduler hands them to the policy).
pub type OnRules = Arc<dyn Fn(&[cowork_contract::DefaultRule]) + Send + Sync>;

#[derive(Default)]
pub struct Registry {
    sources: Mutex<Vec<(Layer, Source)>>,
    snapshot: RwLock<Arc<Snapshot>>,
    on_rules: RwLock<Option<OnRules>>,
    /// A source was added since the table was built. Adding does not rebuild: the app adds some
    /// twenty sources at start, and rebuilding after each asked every family for its tools (and
    /// derived their schemas) twenty times over. The next read rebuilds once.
    stale: AtomicBool,
}

#[derive(Clone, Debug, Serialize)]
pub struct SearchHit {
    pub name: String,
    pub title: String,
    pub description: String,
    pub category: String,
    pub score: u32,
}

fn compile(
    schema: &serde_json::Value,
    what: &str,
    name: &str,
) -> Option<Arc<jsonschema::Validator>> {
    match jsonschema::validator_for(schema) {
        Ok(v) => Some(Arc::new(v)),
        Err(e) => {
            tracing::error!("tool {name}: its {what} schema does not compile ({e})");
            None
        }
    }
}

/// The tools by name, each layer's replacing the lower ones' of the same name (`sources` come
/// lowest layer first).
fn tool_table(sources: LayeredTools) -> BTreeMap<String, Arc<Handler>> {
    let mut tools: BTreeMap<String, Arc<Handler>> = BTreeMap::new();
    for (layer, layer_tools) in sources {
        for tool in layer_tools {
            let previous = tools.get(&tool.spec().name).map(|h| &h.info);
            if let Some(handler) = handler(layer, tool, previous) {
                tools.insert(handler.info.spec.name.clone(), Arc::new(handler));
            }
        }
    }
    tools
}

/// The handler of a tool listed in no registry (see `Scheduler::call_unlisted`); None, as for
/// any pack's tool, when its schemas do not compile.
pub(crate) fn unlisted(layer: Layer, tool: Arc<dyn DynTool>) -> Option<Handler> {
    handler(layer, tool, None)
}

/// A tool's handler with the layers it replaces; for a pack's tool None when a schema does not
/// compile (logged, and the tool is left out).
fn handler(layer: Layer, tool: Arc<dyn DynTool>, previous: Option<&ToolInfo>) -> Option<Handler> {
    let spec = tool.spec();
    let mut overrides = Vec::new();
    if let Some(previous) = previous {
        overrides = previous.overrides.clone();
        overrides.push(previous.layer);
        if previous.layer == layer {
            tracing::warn!(
                "two {} tools are named {}; the later one wins",
                layer.as_str(),
                spec.name
            );
        }
    }
    let info = ToolInfo {
        spec: Arc::new(spec.clone()),
        layer,
        overrides,
    };
    let handler = Handler {
        tool,
        info,
        input: OnceLock::new(),
        output: OnceLock::new(),
    };
    if layer == Layer::Mcp {
        let compiled = handler.input().is_ok()
            && (handler.info.spec.output_schema.is_none() || handler.output().is_some());
        return compiled.then_some(handler);
    }
    Some(handler)
}

/// Aliases never shadow a real name. One claimed by tools of different layers goes to the
/// more trusted layer — builtin, then MCP — so a pack's tool named `Bash` cannot take `Bash`
/// from run_command (a pack takes over a builtin only by an explicit override, shown in its
/// review). Two claimants of the same rank: neither.
fn resolve_aliases(tools: &BTreeMap<String, Arc<Handler>>) -> HashMap<String, String> {
    let mut claimed: HashMap<String, Vec<(u8, String)>> = HashMap::new();
    for (name, handler) in tools {
        for alias in &handler.info.spec.aliases {
            claimed
                .entry(alias.clone())
                .or_default()
                .push((alias_rank(handler.info.layer), name.clone()));
        }
    }
    let mut aliases = HashMap::new();
    for (alias, mut names) in claimed {
        names.sort();
        let top = names.last().map(|(rank, _)| *rank).unwrap_or_default();
        let winners: Vec<&String> = names
            .iter()
            .filter(|(rank, _)| *rank == top)
            .map(|(_, n)| n)
            .collect();
        if tools.contains_key(&alias) || winners.len() > 1 {
            tracing::warn!("alias {alias} is ambiguous ({winners:?}) and is ignored");
            continue;
        }
        if names.len() > 1 {
            tracing::info!(
                "alias {alias} goes to {} (also claimed by {:?})",
                winners[0],
                &names[..names.len() - 1]
            );
        }
        aliases.insert(alias, winners[0].clone());
    }
    aliases
}

impl Registry {
    pub fn new() -> Arc<Self> {
        Arc::new(Registry::default())
    }

    pub fn register(&self, layer: Layer, tool: Arc<dyn DynTool>) {
        self.sources
            .lock()
            .unwrap()
            .push((layer, Source::Tool(tool)));
        self.stale.store(true, Ordering::Release);
    }

    /// A family's tools; asked again on every [`Registry::reload`].
    pub fn add_provider(&self, layer: Layer, provider: Arc<dyn ToolProvider>) {
        self.sources
            .lock()
            .unwrap()
            .push((layer, Source::Provider(provider)));
        self.stale.store(true, Ordering::Release);
    }

    /// Rebuilds the tool table from every source (hot reload: in-flight calls keep the handler
    /// they resolved; new calls see the new table).
    pub fn reload(&self) {
        self.stale.store(false, Ordering::Release);
        let (sources, default_rules) = self.ask_sources();
        let tools = tool_table(sources);
        let aliases = resolve_aliases(&tools);
        let snap = Arc::new(Snapshot {
            tools,
            aliases,
            default_rules,
        });
        *self.snapshot.write().unwrap() = snap.clone();
        if let Some(on_rules) = self.on_rules.read().unwrap().clone() {
            on_rules(&snap.default_rules);
        }
    }

    /// Every source's tools by layer, lowest layer first, and the families' default rules.
    fn ask_sources(&self) -> (LayeredTools, Vec<cowork_contract::DefaultRule>) {
        let mut default_rules = Vec::new();
        let mut sources: LayeredTools = self
            .sources
            .lock()
            .unwrap()
            .iter()
            .map(|(layer, source)| match source {
                Source::Provider(p) => {
                    default_rules.extend(p.default_rules());
                    (*layer, p.tools())
                }
                Source::Tool(t) => (*layer, vec![t.clone()]),
            })
            .collect();
        sources.sort_by_key(|(layer, _)| *layer);
        (sources, default_rules)
    }

    /// Who is told the families' default rules, now and after every reload.
    pub fn set_on_rules(&self, on_rules: OnRules) {
        on_rules(&self.snap().default_rules);
        *self.on_rules.write().unwrap() = Some(on_rules);
    }

    /// The current table, rebuilt first if a source was added since (a read from inside the
    /// rebuild — a family asking the registry while it lists its tools — sees the previous one).
    fn snap(&self) -> Arc<Snapshot> {
        if self.stale.swap(false, Ordering::AcqRel) {
            self.reload();
        }
        self.snapshot.read().unwrap().clone()
    }

    /// The canonical name for a name or alias.
    pub fn canonical_name(&self, name: &str) -> Option<String> {
        let snap = self.snap();
        if snap.tools.contains_key(name) {
            return Some(name.to_string());
        }
        snap.aliases.get(name).cloned()
    }

    /// The tools whose input or output schema does not compile (each logged): a builtin's are
    /// compiled at its first call, so this is how a check finds one before a person does.
    pub fn uncompilable(&self) -> Vec<String> {
        self.snap()
            .tools
            .values()
            .filter(|h| {
                h.input().is_err() || (h.info.spec.output_schema.is_some() && h.output().is_none())
            })
            .map(|h| h.info.spec.name.clone())
            .collect()
    }

    pub(crate) fn handler(&self, name: &str) -> Option<Arc<Handler>> {
        let snap = self.snap();
        let canonical = snap.aliases.get(name).map(String::as_str).unwrap_or(name);
        snap.tools.get(canonical).cloned()
    }

    pub fn get(&self, name: &str) -> Option<ToolInfo> {
        self.handler(name).map(|h| h.info.clone())
    }

    pub fn has(&self, name: &str) -> bool {
        self.handler(name).is_some()
    }

    pub fn list(&self) -> Vec<ToolInfo> {
        self.snap().tools.values().map(|h| h.info.clone()).collect()
    }

    pub fn categories(&self) -> Vec<String> {
        let mut cats: Vec<String> = self
            .snap()
            .tools
            .values()
            .map(|h| h.info.spec.category.clone())
            .collect();
        cats.sort();
        cats.dedup();
        cats
    }

    /// Specs for a list of names (or aliases), in order; the first unknown name is an error.
    pub fn resolve(&self, names: &[&str]) -> Result<Vec<ToolInfo>, ToolError> {
        names
            .iter()
            .map(|n| self.get(n).ok_or_else(|| self.not_found(n)))
            .collect()
    }

    /// Tells the families that a call of `name` is coming ([`ToolProvider::warm_up`]).
    pub fn warm_up(&self, name: &str) {
        let Some(name) = self.canonical_name(name) else {
            return;
        };
        for (_, source) in self.sources.lock().unwrap().iter() {
            if let Source::Provider(p) = source {
                p.warm_up(&name);
            }
        }
    }

    pub fn not_found(&self, name: &str) -> ToolError {
        let why = self
            .sources
            .lock()
            .unwrap()
            .iter()
            .find_map(|(_, source)| match source {
                Source::Provider(p) => p.why_missing(name),
                Source::Tool(_) => None,
            });
        if let Some(why) = why {
            return ToolError::failed(format!("{name} is not available now: {why}"));
        }
        let snap = self.snap();
        let lower = name.to_lowercase();
        let mut scored: Vec<(f64, &String)> = snap
            .tools
            .keys()
            .chain(snap.aliases.keys())
            .map(|candidate| {
                (
                    strsim::jaro_winkler(&lower, &candidate.to_lowercase()),
                    candidate,
                )
            })
            .filter(|(score, _)| *score > 0.8)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        ToolError::NotFound {
            name: name.to_string(),
            suggestions: scored.into_iter().take(3).map(|(_, n)| n.clone()).collect(),
        }
    }

    /// The tools a model sees: everything not deferred, plus the deferred ones already
    /// selected through `tool_search`.
    pub fn visible(&self, loaded: &[String]) -> Vec<ToolInfo> {
        self.snap()
            .tools
            .values()
            .filter(|h| !h.info.spec.deferred || loaded.contains(&h.info.spec.name))
            .map(|h| h.info.clone())
            .collect()
    }

    /// Ranked keyword search over names, titles, descriptions and parameter names.
    /// `select:a,b` picks exact names; `+word` makes a word required.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let snap = self.snap();
        let hit = |h: &Handler, score| SearchHit {
            name: h.info.spec.name.clone(),
            title: h.info.spec.title.clone(),
            description: h.info.spec.description.clone(),
            category: h.info.spec.category.clone(),
            score,
        };
        if let Some(names) = query.trim().strip_prefix("select:") {
            return names
                .split(',')
                .filter_map(|n| self.handler(n.trim()))
                .map(|h| hit(&h, 100))
                .collect();
        }
        let words: Vec<(bool, String)> = query
            .split_whitespace()
            .map(|w| match w.strip_prefix('+') {
                Some(req) => (true, req.to_lowercase()),
                None => (false, w.to_lowercase()),
            })
            .filter(|(_, w)| !w.is_empty())
            .collect();
        let mut hits: Vec<SearchHit> = snap
            .tools
            .values()
            .filter_map(|h| {
                let spec = &h.info.spec;
                let name = spec.name.to_lowercase();
                let name_parts: Vec<&str> = name.split(['_', '-', '.']).collect();
                let text =
                    format!("{} {} {}", spec.title, spec.description, spec.category).to_lowercase();
                let params = spec.parameter_names().join(" ").to_lowercase();
                let aliases = spec.aliases.join(" ").to_lowercase();
                let mut total = 0;
                for (required, word) in &words {
                    let score = if name == *word || aliases.split(' ').any(|a| a == word) {
                        20
                    } else if name_parts.contains(&word.as_str()) {
                        10
                    } else if name.contains(word.as_str()) {
                        6
                    } else if params.contains(word.as_str()) {
                        3
                    } else if text.contains(word.as_str()) {
                        2
                    } else {
                        0
                    };
                    if *required && score == 0 {
                        return None;
                    }
                    total += score;
                }
                (total > 0).then(|| hit(h, total))
            })
            .collect();
        hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
        hits.truncate(limit);
        hits
    }

    /// Anthropic Messages `tools` entries.
    pub fn export_anthropic(tools: &[ToolInfo]) -> serde_json::Value {
        serde_json::Value::Array(
            tools
                .iter()
                .map(|t| serde_json::json!({"name": t.spec.name, "description": t.spec.description, "input_schema": t.spec.input_schema}))
                .collect(),
        )
    }

    /// OpenAI Chat Completions `tools` entries.
    pub fn export_openai(tools: &[ToolInfo]) -> serde_json::Value {
        serde_json::Value::Array(
            tools
                .iter()
                .map(|t| {
                    serde_json::json!({"type": "function", "function": {
                        "name": t.spec.name, "description": t.spec.description, "parameters": t.spec.input_schema}})
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_contract::{Annotations, EffectEnv, PreparedCall, ToolMeta};

    struct Fake(ToolSpec);
    impl DynTool for Fake {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn prepare(
            &self,
            _args: serde_json::Value,
            _env: &EffectEnv,
        ) -> Result<PreparedCall, ToolError> {
            Ok(PreparedCall::new(
                vec![],
                Arc::new(|_| Box::pin(async { Ok(Default::default()) })),
            ))
        }
    }

    fn fake(meta: ToolMeta) -> Arc<dyn DynTool> {
        let schema =
            serde_json::json!({"type": "object", "properties": {"recipient": {"type": "string"}}});
        Arc::new(Fake(ToolSpec::from_meta(
            meta.annotations(Annotations::default()),
            schema,
        )))
    }

    #[test]
    fn a_schema_that_does_not_compile_leaves_a_packs_tool_out_and_fails_a_builtins_call() {
        let broken = |name: &str| -> Arc<dyn DynTool> {
            let schema = serde_json::json!({"type": "object", "properties": {"n": {"type": 7}}});
            let meta = ToolMeta::new(name, name, "broken").annotations(Annotations::default());
            Arc::new(Fake(ToolSpec::from_meta(meta, schema)))
        };
        let registry = Registry::new();
        registry.register(Layer::Mcp, broken("from_a_pack"));
        registry.register(Layer::Builtin, broken("builtin"));
        assert!(registry.get("from_a_pack").is_none());
        let builtin = registry.handler("builtin").expect("a builtin is listed");
        let err = builtin.input().expect_err("its schema does not compile");
        assert!(err.to_string().contains("builtin's input schema"), "{err}");
    }

    #[test]
    fn layers_override_visibly_and_deferred_tools_wait_for_selection() {
        let registry = Registry::new();
        registry.register(
            Layer::Builtin,
            fake(ToolMeta::new("email_send", "Send", "builtin").aliases(&["Mail", "Shared"])),
        );
        registry.register(
            Layer::Mcp,
            fake(ToolMeta::new("email_send", "Send", "from a toolpack")),
        );
        let info = registry.get("email_send").unwrap();
        assert_eq!(
            (info.layer, info.overrides.clone()),
            (Layer::Mcp, vec![Layer::Builtin])
        );
        assert_eq!(info.spec.description, "from a toolpack");

        registry.register(
            Layer::Builtin,
            fake(
                ToolMeta::new("archive_mail", "Archive", "Move mail to the archive")
                    .deferred()
                    .aliases(&["Shared"]),
            ),
        );
        assert!(
            registry
                .visible(&[])
                .iter()
                .all(|t| t.spec.name != "archive_mail")
        );
        assert!(
            registry
                .visible(&["archive_mail".into()])
                .iter()
                .any(|t| t.spec.name == "archive_mail")
        );
        // The MCP override replaced the builtin (and its aliases), so `Shared` has one claimant.
        assert_eq!(
            registry.canonical_name("Shared").as_deref(),
            Some("archive_mail")
        );
        assert!(registry.resolve(&["email_send", "nope"]).is_err());

        let names = |q: &str| {
            registry
                .search(q, 5)
                .into_iter()
                .map(|h| h.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names("mail archive"),
            ["archive_mail", "email_send"],
            "ranked by name matches"
        );
        assert_eq!(
            names("+archive mail"),
            ["archive_mail"],
            "`+word` is required"
        );
        let hits = registry.search("recipient", 5);
        assert_eq!(hits.len(), 2, "parameter names are searched");
        assert_eq!(
            registry.search("select:archive_mail,email_send", 5).len(),
            2
        );
    }

    #[test]
    fn a_builtin_alias_survives_a_pack_tool_of_the_same_name() {
        let registry = Registry::new();
        registry.register(
            Layer::Builtin,
            fake(ToolMeta::new("run_command", "Run", "").aliases(&["Bash"])),
        );
        registry.register(
            Layer::Mcp,
            fake(ToolMeta::new("mcp__evil__Bash", "Bash", "").aliases(&["Bash"])),
        );
        assert_eq!(
            registry.canonical_name("Bash").as_deref(),
            Some("run_command")
        );
    }

    #[test]
    fn an_alias_claimed_twice_goes_to_neither() {
        let registry = Registry::new();
        registry.register(
            Layer::Builtin,
            fake(ToolMeta::new("a", "A", "").aliases(&["Both"])),
        );
        registry.register(
            Layer::Builtin,
            fake(ToolMeta::new("b", "B", "").aliases(&["Both"])),
        );
        assert_eq!(registry.canonical_name("Both"), None);
        let exported = Registry::export_openai(&registry.list());
        assert_eq!(exported[0]["function"]["name"], "a");
    }
}
