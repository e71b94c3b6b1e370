//! `tool_search`: how a model finds deferred tools (and any tool) by need. A builtin of the
//! core because it reads the registry; it runs through the scheduler like every tool.

use crate::registry::Registry;
use cowork_contract::{ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Weak;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// `select:name1,name2` for exact tools, or keywords; prefix a word with `+` to require it.
    pub query: String,
    /// How many tools to return (default 5, at most 50).
    pub limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
pub struct FoundTool {
    pub name: String,
    pub description: String,
    pub category: String,
    pub input_schema: serde_json::Value,
}

#[derive(Serialize, JsonSchema)]
pub struct ToolSearchOutput {
    pub tools: Vec<FoundTool>,
}

/// What it found becomes callable by the model in this conversation.
fn found_names(output: &ToolSearchOutput) -> Vec<String> {
    output.tools.iter().map(|t| t.name.clone()).collect()
}

/// The provider of `tool_search`: it holds the registry weakly (the registry holds the tool).
#[derive(Clone)]
pub(crate) struct SearchTools {
    pub(crate) registry: Weak<Registry>,
}

#[tools(list = search_tools)]
impl SearchTools {
    #[tool(name = "tool_search", title = "Search tools", category = "system", read_only, idempotent,
           description = "Find tools by keywords (`+word` required) or load exact ones with `select:name1,name2`; returns their input schemas so they can be called.",
           reveals = found_names)]
    async fn tool_search(&self, input: &ToolSearchInput) -> ToolResult<ToolSearchOutput> {
        let registry = self
            .registry
            .upgrade()
            .ok_or_else(|| ToolError::failed("the registry is shutting down"))?;
        let limit = input.limit.unwrap_or(5).clamp(1, 50) as usize;
        let tools = registry
            .search(&input.query, limit)
            .into_iter()
            .filter_map(|hit| registry.get(&hit.name))
            .map(|info| FoundTool {
                name: info.spec.name.clone(),
                description: info.spec.description.clone(),
                category: info.spec.category.clone(),
                input_schema: info.spec.input_schema.clone(),
            })
            .collect();
        Ok(ToolSearchOutput { tools })
    }
}
