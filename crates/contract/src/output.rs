use serde::{Deserialize, Serialize};

/// A content block, aligned with MCP's `CallToolResult.content`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    Json {
        value: serde_json::Value,
    },
    Image {
        mime_type: String,
        data_base64: String,
    },
    ResourceLink {
        uri: String,
        name: String,
        mime_type: Option<String>,
    },
}

/// What a tool returns: content blocks for the model and the UI, the typed result as JSON
/// (validated against the output schema), and whether the content came from an untrusted origin
/// (web page, incoming mail…), which taints the conversation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted: bool,
    /// Deferred tools this result makes available to the model from now on in the
    /// conversation (what a tool search found): data the agent acts on, whatever tool says it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reveals: Vec<String>,
    /// The interactive view the tool's server offers for this result (an MCP App: a `ui://`
    /// resource of that server), for the window to render in a sandboxed frame. Never sent to a
    /// model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppView>,
}

/// An MCP App's view: the server that serves it and its `ui://` resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AppView {
    pub server: String,
    pub resource: String,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::Text { text: text.into() }],
            ..Default::default()
        }
    }

    /// The image blocks (a screenshot): the window shows them under the call's text.
    pub fn images(&self) -> Vec<Content> {
        self.content
            .iter()
            .filter(|c| matches!(c, Content::Image { .. }))
            .cloned()
            .collect()
    }

    /// All text blocks joined: what a terminal or a model prompt shows.
    pub fn text_content(&self) -> String {
        let mut parts = Vec::new();
        for block in &self.content {
            match block {
                Content::Text { text } => parts.push(text.clone()),
                Content::Json { value } => parts.push(value.to_string()),
                Content::Image { mime_type, .. } => parts.push(format!("[image {mime_type}]")),
                Content::ResourceLink { uri, name, .. } => parts.push(format!("[{name}]({uri})")),
            }
        }
        parts.join("\n")
    }
}
