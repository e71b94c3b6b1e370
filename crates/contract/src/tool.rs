use crate::{
    Annotations, Content, Effect, EffectEnv, EffectKind, RateLimit, ToolContext, ToolError,
    ToolOutput, ToolSpec,
};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};
use std::sync::Arc;
use std::time::Duration;

/// The hand-written part of a spec; schemas come from the typed input and output.
#[derive(Clone, Debug)]
pub struct ToolMeta {
    pub name: String,
    pub title: String,
    pub description: String,
    pub category: String,
    pub annotations: Annotations,
    pub timeout: Duration,
    pub effects: Vec<EffectKind>,
    pub aliases: Vec<String>,
    pub deferred: bool,
    pub rate_limit: Option<RateLimit>,
    pub secret_args: Vec<String>,
    pub arg_aliases: Vec<(String, String)>,
}

impl ToolMeta {
    pub fn new(name: &str, title: &str, description: &str) -> Self {
        ToolMeta {
            name: name.into(),
            title: title.into(),
            description: description.into(),
            category: "general".into(),
            annotations: Annotations::default(),
            timeout: Duration::from_secs(30),
            effects: Vec::new(),
            aliases: Vec::new(),
            deferred: false,
            rate_limit: None,
            secret_args: Vec::new(),
            arg_aliases: Vec::new(),
        }
    }
    pub fn category(mut self, category: &str) -> Self {
        self.category = category.into();
        self
    }
    pub fn effects(mut self, effects: &[EffectKind]) -> Self {
        self.effects = effects.to_vec();
        self
    }
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    pub fn aliases(mut self, aliases: &[&str]) -> Self {
        self.aliases = aliases.iter().map(|a| a.to_string()).collect();
        self
    }
    pub fn deferred(mut self) -> Self {
        self.deferred = true;
        self
    }
    pub fn rate_limit(mut self, per_minute: u32, burst: u32) -> Self {
        self.rate_limit = Some(RateLimit { per_minute, burst });
        self
    }
    /// Other names for arguments, `(alias, name)`: see [`ToolSpec::arg_aliases`].
    pub fn arg_aliases(mut self, pairs: &[(&str, &str)]) -> Self {
        self.arg_aliases = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        self
    }
    pub fn secret_args(mut self, names: &[&str]) -> Self {
        self.secret_args = names.iter().map(|a| a.to_string()).collect();
        self
    }
}

impl ToolSpec {
    /// A spec from its hand-written part and an input schema (typed tools derive the schema;
    /// MCP tools bring their own).
    pub fn from_meta(meta: ToolMeta, input_schema: serde_json::Value) -> ToolSpec {
        ToolSpec {
            name: meta.name,
            title: meta.title,
            description: meta.description,
            category: meta.category,
            input_schema,
            output_schema: None,
            annotations: meta.annotations,
            timeout_ms: meta.timeout.as_millis() as u64,
            effects: meta.effects,
            aliases: meta.aliases,
            deferred: meta.deferred,
            rate_limit: meta.rate_limit,
            secret_args: meta.secret_args,
            arg_aliases: meta.arg_aliases,
        }
    }
}

/// What a call will do, worked out before review: the effects the PolicyBridge judges, and what
/// the tool found out while working them out (a resolved path) that the run must use as is.
/// The scheduler hands `data` to [`Tool::call`], so a run acts on exactly what was reviewed.
#[derive(Debug)]
pub struct CallPlan<P = ()> {
    pub effects: Vec<Effect>,
    pub data: P,
}

impl CallPlan {
    pub fn new(effects: Vec<Effect>) -> Self {
        CallPlan { effects, data: () }
    }
}

impl<P> CallPlan<P> {
    pub fn with(effects: Vec<Effect>, data: P) -> Self {
        CallPlan { effects, data }
    }
}

impl From<Vec<Effect>> for CallPlan {
    fn from(effects: Vec<Effect>) -> Self {
        CallPlan::new(effects)
    }
}

/// A tool written the Rust way: typed input and output (serde + schemars), effects computed from
/// the typed input. Declare one with `#[tool(...)]` (it writes `meta`, and `Plan`/`plan` for a tool
/// whose effects are fixed) and wrap it with [`typed`] to register it.
///
/// Errors a tool returns need not name it: the scheduler stamps the tool's name into them.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    type Output: Serialize + JsonSchema + Send + 'static;
    /// What [`Tool::plan`] passes on to [`Tool::call`]; `()` for most tools.
    type Plan: Send + Sync + 'static;

    fn meta(&self) -> ToolMeta;

    /// The concrete effects of this call. Paths must be resolved through `env` so the policy
    /// sees the real target.
    fn plan(&self, input: &Self::Input, env: &EffectEnv)
    -> Result<CallPlan<Self::Plan>, ToolError>;

    async fn call(
        &self,
        input: &Self::Input,
        plan: &Self::Plan,
        ctx: &ToolContext,
    ) -> Result<Self::Output, ToolError>;

    /// The text block the model and the terminal see; JSON by default.
    fn to_text(&self, output: &Self::Output) -> String {
        serde_json::to_string_pretty(output).unwrap_or_default()
    }

    /// Deferred tools this output makes available to the model (see [`ToolOutput::reveals`]).
    fn reveals(&self, _output: &Self::Output) -> Vec<String> {
        Vec::new()
    }

    /// The content blocks: the text alone by default; a tool that makes an image (a
    /// screenshot) adds it here.
    fn content(&self, output: &Self::Output) -> Vec<Content> {
        vec![Content::Text {
            text: self.to_text(output),
        }]
    }
}

type Runner =
    Arc<dyn Fn(ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync>;

/// A call whose arguments are parsed and whose effects are known, ready for review. Only the
/// scheduler runs it (possibly more than once, for retries of idempotent tools).
pub struct PreparedCall {
    pub effects: Vec<Effect>,
    runner: Runner,
}

impl PreparedCall {
    pub fn new(effects: Vec<Effect>, runner: Runner) -> Self {
        PreparedCall { effects, runner }
    }

    pub fn run(&self, ctx: ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        (self.runner)(ctx)
    }
}

/// A tool with its types erased: what the registry stores and the scheduler executes. Callers
/// outside the core never get one (the registry hands out [`ToolSpec`]s only).
pub trait DynTool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    fn prepare(&self, args: serde_json::Value, env: &EffectEnv) -> Result<PreparedCall, ToolError>;
}

/// A family's set of tools; the registry asks again on `reload`.
pub trait ToolProvider: Send + Sync {
    fn name(&self) -> &str;
    fn tools(&self) -> Vec<Arc<dyn DynTool>>;
    /// Rules this family ships as the floor under every person's settings (`sudo` denied, code in
    /// a page asked): the family knows its tools' dangers, the policy only applies them.
    fn default_rules(&self) -> Vec<DefaultRule> {
        Vec::new()
    }
    /// Why a tool named `name`, of this provider's naming, is not offered now and what would
    /// bring it (a remote server waiting for the person's sign-in): the "no tool named" error
    /// says so instead. `None`: not this provider's, or nothing to say.
    fn why_missing(&self, _name: &str) -> Option<String> {
        None
    }
    /// The model has begun a call of `tool` (its arguments are still arriving): a family whose
    /// tools need a slow start (a browser) may begin it now, off the caller's task. Nothing may
    /// take effect: the call is not reviewed yet, and may never be made.
    fn warm_up(&self, _tool: &str) {}
}

/// A rule a family ships ([`ToolProvider::default_rules`]), in the rule syntax of settings.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultRule {
    pub action: RuleAction,
    pub rule: &'static str,
}

/// Only narrowing actions: a family's code may make a call ask or refuse it, never allow one
/// (what is allowed is the person's to say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleAction {
    Ask,
    Deny,
}

/// Adapter from [`Tool`] to [`DynTool`]; builds the spec (with derived schemas) once.
pub struct Typed<T: Tool> {
    tool: Arc<T>,
    spec: ToolSpec,
}

pub fn typed<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    Arc::new(Typed::new(tool))
}

fn schema_value<S: JsonSchema>() -> serde_json::Value {
    // An optional field's `"default": null` tells the model nothing it does not know from the
    // field being optional, and the model reads every byte of every schema: leave it out.
    let drop_null_default = |schema: &mut schemars::Schema| {
        if schema.get("default") == Some(&serde_json::Value::Null) {
            schema.remove("default");
        }
    };
    let schema = schemars::generate::SchemaSettings::default()
        .with_transform(schemars::transform::RecursiveTransform(drop_null_default))
        .into_generator()
        .into_root_schema_for::<S>();
    let mut value = serde_json::to_value(schema).unwrap_or_default();
    // Tool-definition formats (MCP, Anthropic, OpenAI) want a bare object schema.
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
    }
    value
}

impl<T: Tool> Typed<T> {
    pub fn new(tool: T) -> Self {
        let mut spec = ToolSpec::from_meta(tool.meta(), schema_value::<T::Input>());
        spec.output_schema = Some(schema_value::<T::Output>());
        Typed {
            tool: Arc::new(tool),
            spec,
        }
    }
}

impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: serde_json::Value, env: &EffectEnv) -> Result<PreparedCall, ToolError> {
        let input: T::Input =
            serde_json::from_value(args).map_err(|e| ToolError::invalid(e.to_string()))?;
        let CallPlan { effects, data } = self.tool.plan(&input, env)?;
        let input = Arc::new(input);
        let data = Arc::new(data);
        let tool = self.tool.clone();
        let untrusted = self.spec.annotations.open_world;
        let runner: Runner = Arc::new(move |ctx: ToolContext| {
            let tool = tool.clone();
            let input = input.clone();
            let data = data.clone();
            Box::pin(async move {
                let output = tool.call(&input, &data, &ctx).await?;
                let content = tool.content(&output);
                let reveals = tool.reveals(&output);
                let structured = serde_json::to_value(&output)
                    .map_err(|e| ToolError::failed(format!("output not serializable: {e}")))?;
                Ok(ToolOutput {
                    content,
                    structured: Some(structured),
                    untrusted,
                    reveals,
                    app: None,
                })
            })
        });
        Ok(PreparedCall::new(effects, runner))
    }
}
