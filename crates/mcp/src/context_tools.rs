//! MCP resources and prompts, offered as four gateway tools so the model (and the palette) can
//! list and read them through the same review and audit as any call:
//! `mcp_list_resources`, `mcp_read_resource`, `mcp_list_prompts`, `mcp_get_prompt`.
//!
//! Listing and prompts only describe; reading a resource runs the server's code on a URI of its
//! choosing, so it is an `mcp.call` (unknown effects, asks) unless a rule allows it.

use crate::server::McpServer;
use cowork_contract::{
    Annotations, Content, DynTool, Effect, EffectEnv, EffectKind, PreparedCall, ToolError,
    ToolOutput, ToolSpec,
};
use serde_json::{Value, json};
use std::sync::{Arc, Weak};

/// Finds servers by name (all when None) at call time: the set changes as packs start and stop.
pub(crate) type FindServers = dyn Fn(Option<&str>) -> Vec<McpServer> + Send + Sync;
pub(crate) type Lookup = Weak<FindServers>;

#[derive(Clone, Copy)]
enum Kind {
    ListResources,
    ReadResource,
    ListPrompts,
    GetPrompt,
}

struct ContextTool {
    kind: Kind,
    spec: ToolSpec,
    lookup: Lookup,
}

pub(crate) fn tools(lookup: Lookup) -> Vec<Arc<dyn DynTool>> {
    let server =
        json!({"type": "string", "description": "The MCP server's name (as in mcp__<server>__…)."});
    let make = |kind,
                name: &str,
                title: &str,
                description: &str,
                schema: Value,
                effects: &[EffectKind]|
     -> Arc<dyn DynTool> {
        let read_only = effects.is_empty();
        Arc::new(ContextTool {
            kind,
            lookup: lookup.clone(),
            spec: ToolSpec {
                name: name.into(),
                title: title.into(),
                description: description.into(),
                category: "mcp".into(),
                input_schema: schema,
                output_schema: None,
                // What a server lists, serves or fills in is its words: the outside world.
                annotations: Annotations {
                    read_only,
                    idempotent: read_only,
                    open_world: true,
                    ..Default::default()
                },
                timeout_ms: 30_000,
                effects: effects.to_vec(),
                aliases: vec![],
                deferred: true,
                rate_limit: None,
                secret_args: vec![],
                arg_aliases: vec![],
            },
        })
    };
    vec![
        make(
            Kind::ListResources,
            "mcp_list_resources",
            "List MCP resources",
            "Lists the resources (documents, data) the running MCP servers offer, optionally of one server.",
            json!({"type": "object", "properties": {"server": server}, "additionalProperties": false}),
            &[],
        ),
        make(
            Kind::ReadResource,
            "mcp_read_resource",
            "Read an MCP resource",
            "Reads one resource by URI from an MCP server.",
            json!({"type": "object", "properties": {"server": server, "uri": {"type": "string"}}, "required": ["server", "uri"], "additionalProperties": false}),
            &[EffectKind::McpCall],
        ),
        make(
            Kind::ListPrompts,
            "mcp_list_prompts",
            "List MCP prompts",
            "Lists the prompt templates the running MCP servers offer, optionally of one server.",
            json!({"type": "object", "properties": {"server": server}, "additionalProperties": false}),
            &[],
        ),
        make(
            Kind::GetPrompt,
            "mcp_get_prompt",
            "Get an MCP prompt",
            "Fills in one prompt template of an MCP server with string arguments.",
            json!({"type": "object", "properties": {"server": server, "name": {"type": "string"}, "arguments": {"type": "object", "additionalProperties": {"type": "string"}}}, "required": ["server", "name"], "additionalProperties": false}),
            &[],
        ),
    ]
}

impl DynTool for ContextTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: Value, _env: &EffectEnv) -> Result<PreparedCall, ToolError> {
        let server = args.get("server").and_then(Value::as_str).map(String::from);
        let effects = match (self.kind, &server) {
            (Kind::ReadResource, Some(s)) => vec![Effect::McpCall {
                server: s.clone(),
                tool: "resources/read".into(),
                unfilled: None,
            }],
            _ => vec![],
        };
        let (kind, lookup, name) = (self.kind, self.lookup.clone(), self.spec.name.clone());
        Ok(PreparedCall::new(
            effects,
            Arc::new(move |_ctx| {
                let (args, server, lookup, _name) =
                    (args.clone(), server.clone(), lookup.clone(), name.clone());
                Box::pin(async move {
                    let find = lookup
                        .upgrade()
                        .ok_or_else(|| ToolError::failed("the MCP gateway is shut down"))?;
                    let servers = find(server.as_deref());
                    if servers.is_empty() {
                        let what = server
                            .map(|s| format!("no running MCP server named {s:?}"))
                            .unwrap_or_else(|| "no MCP servers are running".into());
                        return Err(ToolError::not_configured(
                            what,
                            "install or enable a toolpack (Toolpacks page, or `cowork toolpack install`)",
                        ));
                    }
                    let value = match kind {
                        Kind::ListResources | Kind::ListPrompts => {
                            let mut all = Vec::new();
                            for s in &servers {
                                // A server without resources/prompts answers "method not found": skip it.
                                let items = if matches!(kind, Kind::ListResources) {
                                    s.list_resources().await
                                } else {
                                    s.list_prompts().await
                                };
                                for mut item in items.unwrap_or_default() {
                                    item["server"] = json!(s.name());
                                    all.push(item);
                                }
                            }
                            Value::Array(all)
                        }
                        Kind::ReadResource => {
                            servers[0]
                                .read_resource(args["uri"].as_str().unwrap_or_default())
                                .await?
                        }
                        Kind::GetPrompt => {
                            let arguments = args
                                .get("arguments")
                                .and_then(Value::as_object)
                                .cloned()
                                .unwrap_or_default();
                            servers[0]
                                .get_prompt(args["name"].as_str().unwrap_or_default(), arguments)
                                .await?
                        }
                    };
                    Ok(ToolOutput {
                        content: vec![Content::Text {
                            text: render(kind, &value),
                        }],
                        structured: Some(value),
                        untrusted: true,
                        ..Default::default()
                    })
                })
            }),
        ))
    }
}

/// What the model reads: the text inside, not the protocol's envelope.
fn render(kind: Kind, value: &Value) -> String {
    match kind {
        Kind::ReadResource => value["contents"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|x| {
                        x["text"].as_str().map(String::from).unwrap_or_else(|| {
                            format!(
                                "[{} {}]",
                                x["mimeType"].as_str().unwrap_or("binary"),
                                x["uri"].as_str().unwrap_or("")
                            )
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        Kind::GetPrompt => value["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .map(|x| {
                        format!(
                            "{}: {}",
                            x["role"].as_str().unwrap_or("?"),
                            x["content"]["text"].as_str().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
        _ => serde_json::to_string_pretty(value).unwrap_or_default(),
    }
}
