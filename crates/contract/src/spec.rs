use crate::EffectKind;
use serde::{Deserialize, Serialize};

/// MCP's ToolAnnotations, as plain booleans (unknown = the cautious value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Talks to an open world (web, mail, third-party servers): its output is untrusted.
    pub open_world: bool,
    /// What it changes Cowork keeps the earlier version of (journaled file changes, the calendar's
    /// history): the person can undo it. The approval says so, unless the call also reaches
    /// people (an invitation), which no undo takes back.
    #[serde(default)]
    pub undoable: bool,
}

/// A per-tool call budget enforced by the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RateLimit {
    pub per_minute: u32,
    pub burst: u32,
}

/// Everything the registry, the policy and a model need to know about a tool — never the tool
/// itself. Handed out freely; execution goes through the scheduler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolSpec {
    pub name: String,
    pub title: String,
    pub description: String,
    pub category: String,
    pub input_schema: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    pub annotations: Annotations,
    pub timeout_ms: u64,
    /// The effect kinds calls of this tool may have; each call computes the concrete ones.
    pub effects: Vec<EffectKind>,
    /// Other names that resolve to this tool (e.g. Claude Code's `Read` for `read_file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Hidden from the model's tool list until `tool_search` selects it.
    #[serde(default)]
    pub deferred: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// Argument names whose values are secrets: redacted in audit rows, events and logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_args: Vec<String>,
    /// Argument names accepted for others (`file_path` → `path`), renamed before validation, so
    /// calls shaped for Claude Code's tools (`Read`, `Grep`, `Bash`…) work unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arg_aliases: Vec<(String, String)>,
}

impl ToolSpec {
    /// `args` with aliased names renamed (None when nothing needed renaming). A name the schema
    /// itself uses is never renamed, and an alias never overwrites an argument given directly.
    pub fn canonical_args(&self, args: &serde_json::Value) -> Option<serde_json::Value> {
        let object = args.as_object()?;
        if !self
            .arg_aliases
            .iter()
            .any(|(from, _)| object.contains_key(from))
        {
            return None;
        }
        let mut renamed = object.clone();
        for (from, to) in &self.arg_aliases {
            if !renamed.contains_key(to)
                && let Some(value) = renamed.remove(from)
            {
                renamed.insert(to.clone(), value);
            }
        }
        Some(serde_json::Value::Object(renamed))
    }

    pub fn is_read_only(&self) -> bool {
        self.annotations.read_only || self.effects.iter().all(|k| k.is_read_only())
    }

    /// Parameter names from the input schema's top-level properties (for tool search).
    pub fn parameter_names(&self) -> Vec<&str> {
        self.input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}
