//! MCP sampling: a toolpack's server asks the person's model a question. Each request is a call
//! of the unlisted tool `mcp_sampling` through the whole gate (`Scheduler::call_unlisted`):
//! - its effect `model.sample(<server>)` asks by default; "Allow for this toolpack" is the
//!   widest grant the modal offers (the caller and its grants are the server's own, forgotten
//!   with the pack);
//! - the modal shows the server's question and which model would answer, in plain words;
//! - the audit has a row like any call's, under caller and conversation `mcp-server:<server>`;
//! - nothing of the person's conversations is added (MCP's `includeContext` is ignored), and the
//!   answer goes only to the server, so nothing here taints a conversation of the person's;
//! - a server may ask only while a call Cowork made to it runs (`Inner::calls` in the gateway),
//!   and withdraws its ask by cancelling;
//! - a budget per server bounds how often ([`PER_HOUR`]) and how long ([`MAX_TOKENS`]).

use crate::agent_settings::AgentSettings;
use cowork_agent::{ChatRequest, Message, Part, Role, StopReason, StreamEvent};
use cowork_contract::{
    Annotations, DynTool, Effect, EffectEnv, EffectKind, PreparedCall, ToolError, ToolOutput,
    ToolSpec,
};
use cowork_core::{CallRequest, Caller, Layer, Scheduler};
use cowork_mcp::{SamplingReply, SamplingRequest};
use futures::StreamExt;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::json;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

/// The tool's name in audit rows and rules (it is listed in no registry).
pub const SAMPLING_TOOL: &str = "mcp_sampling";
/// Sampling requests one server may make in an hour (a burst of a fifth of it at once).
pub const PER_HOUR: u32 = 30;
/// The longest answer a server may ask for; a larger `maxTokens` is cut to this.
pub const MAX_TOKENS: u32 = 2048;

/// The sampler the gateway hands servers' requests to.
pub(crate) fn sampler(settings: PathBuf, scheduler: Weak<Scheduler>) -> cowork_mcp::Sampler {
    let quota = Quota::per_hour(NonZeroU32::new(PER_HOUR).expect("non-zero"))
        .allow_burst(NonZeroU32::new(PER_HOUR / 5).expect("non-zero"));
    let budget: Arc<DefaultKeyedRateLimiter<String>> = Arc::new(RateLimiter::keyed(quota));
    Arc::new(move |request: SamplingRequest| {
        let (settings, scheduler, budget) = (settings.clone(), scheduler.clone(), budget.clone());
        Box::pin(async move {
            let scheduler = scheduler.upgrade().ok_or("Cowork is shutting down")?;
            // Refusals go through the gate too (the tool's `prepare` says them), so each is on
            // record like any call.
            let within_budget = budget.check_key(&request.server).is_ok();
            let model = AgentSettings::load(&settings).and_then(|m| {
                m.ok_or_else(|| "no model is configured in Cowork (Settings → Model)".into())
            });
            let model_name = model.as_ref().map(|m| m.model.clone()).unwrap_or_default();
            let caller = Caller::mcp_server(&request.server);
            let conversation = caller.as_str().to_string();
            let mut call = CallRequest::new(
                SAMPLING_TOOL,
                arguments(&request, &model_name),
                caller,
                &conversation,
            );
            call.cancel = request.cancel.clone();
            let tool = Arc::new(SamplingTool::new(model, request.server, within_budget));
            let outcome = scheduler.call_unlisted(call, tool, Layer::Mcp).await;
            let output = outcome.result.map_err(|e| e.to_string())?;
            Ok(SamplingReply {
                model: model_name,
                text: output.text_content(),
                hit_limit: output
                    .structured
                    .as_ref()
                    .and_then(|s| s["hit_limit"].as_bool())
                    == Some(true),
            })
        })
    })
}

/// What the modal and the audit row show: the server's question, in its own words, and the
/// model that would answer.
fn arguments(request: &SamplingRequest, model: &str) -> serde_json::Value {
    let messages: Vec<_> = request
        .messages
        .iter()
        .map(|m| json!({"from": if m.from_model { "model" } else { "server" }, "text": m.text}))
        .collect();
    json!({
        "server": request.server,
        "model": model,
        "system": request.system,
        "messages": messages,
        "max_tokens": request.max_tokens.clamp(1, MAX_TOKENS),
    })
}

/// One server's request to the person's model, run once the gate lets it.
struct SamplingTool {
    spec: ToolSpec,
    /// The provider is made (its key read) only once the gate let the request through.
    model: Result<AgentSettings, String>,
    server: String,
    within_budget: bool,
}

impl SamplingTool {
    fn new(model: Result<AgentSettings, String>, server: String, within_budget: bool) -> Self {
        let text = json!({"type": "string"});
        let spec = ToolSpec {
            name: SAMPLING_TOOL.into(),
            title: "A toolpack asks your model".into(),
            description: "An MCP server's question to the person's model (MCP sampling).".into(),
            category: "mcp".into(),
            input_schema: json!({"type": "object", "properties": {
                "server": text, "model": text, "system": {"type": ["string", "null"]},
                "messages": {"type": "array", "items": {"type": "object", "properties": {
                    "from": {"enum": ["server", "model"]}, "text": text},
                    "required": ["from", "text"]}},
                "max_tokens": {"type": "integer", "minimum": 1}},
                "required": ["server", "model", "messages", "max_tokens"]}),
            output_schema: None,
            annotations: Annotations::default(),
            timeout_ms: 120_000,
            effects: vec![EffectKind::ModelSample],
            aliases: vec![],
            deferred: false,
            rate_limit: None,
            secret_args: vec![],
            arg_aliases: vec![],
        };
        SamplingTool {
            spec,
            model,
            server,
            within_budget,
        }
    }
}

impl DynTool for SamplingTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: serde_json::Value, _: &EffectEnv) -> Result<PreparedCall, ToolError> {
        if !self.within_budget {
            return Err(ToolError::failed(format!(
                "{} has used its sampling budget ({PER_HOUR} requests an hour): try again later",
                self.server
            )));
        }
        let settings = self
            .model
            .clone()
            .map_err(|e| ToolError::not_configured(e, "choose a model in Settings → Model"))?;
        let model = args["model"].as_str().unwrap_or_default().to_string();
        let effect = Effect::ModelSample {
            server: self.server.clone(),
            model: model.clone(),
        };
        let request = Arc::new(ChatRequest {
            model,
            system: args["system"].as_str().unwrap_or_default().to_string(),
            messages: messages(&args),
            tools: vec![],
            max_tokens: args["max_tokens"].as_u64().unwrap_or(1) as u32,
        });
        Ok(PreparedCall::new(
            vec![effect],
            Arc::new(move |ctx| {
                let (settings, request) = (settings.clone(), request.clone());
                Box::pin(async move {
                    let provider = settings.provider().map_err(ToolError::failed)?;
                    answer(provider, &request, ctx.cancel).await
                })
            }),
        ))
    }
}

fn messages(args: &serde_json::Value) -> Vec<Message> {
    let listed = args["messages"].as_array().cloned().unwrap_or_default();
    listed
        .iter()
        .map(|m| Message {
            role: match m["from"] == "model" {
                true => Role::Assistant,
                false => Role::User,
            },
            parts: vec![Part::Text {
                text: m["text"].as_str().unwrap_or_default().to_string(),
            }],
        })
        .collect()
}

/// The model's whole answer (for the server alone: it reaches no conversation of the person's).
async fn answer(
    provider: Arc<dyn cowork_agent::Provider>,
    request: &ChatRequest,
    cancel: cowork_contract::CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let failed = |e: cowork_agent::ProviderError| ToolError::failed(e.to_string());
    let mut stream = provider.stream(request, cancel).await.map_err(failed)?;
    let (mut text, mut hit_limit) = (String::new(), false);
    while let Some(event) = stream.next().await {
        match event.map_err(failed)? {
            StreamEvent::TextDelta(delta) => text.push_str(&delta),
            StreamEvent::Done { stop, .. } => {
                hit_limit = stop == StopReason::MaxTokens;
                break;
            }
            _ => {}
        }
    }
    let mut output = ToolOutput::text(text);
    output.structured = Some(json!({"hit_limit": hit_limit}));
    Ok(output)
}
