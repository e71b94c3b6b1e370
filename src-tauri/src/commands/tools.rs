//! The tools: the registry's list, and a call the person makes in the window (a slash command,
//! a panel's button), shown as a tool card.

use super::Res;
use crate::Shell;
use cowork_core::{Action, CallRequest, Caller, ToolInfo};
use serde::Serialize;
use tauri::State;

#[tauri::command]
#[specta::specta]
pub fn list_tools(shell: State<'_, Shell>) -> Vec<ToolInfo> {
    shell.app.scheduler().registry().list()
}

#[derive(Clone, Serialize, specta::Type)]
pub struct ToolCallView {
    call_id: String,
    tool: String,
    ok: bool,
    /// The suspension the call waits on, when it stopped for the person.
    suspended: Option<String>,
    text: String,
    /// The tool's structured output (panels like the change review read it).
    structured: Option<serde_json::Value>,
    /// Image blocks (a screenshot), shown under the text.
    images: Vec<cowork_contract::Content>,
    /// The MCP App view shown under the result, when the tool's server offers one.
    app: Option<cowork_contract::AppView>,
    decision: Option<Action>,
    score: Option<u8>,
    duration_ms: u64,
}

/// The person's own act in the window (a slash command, a panel's button): a direct call through
/// the same scheduler, review and audit; the act is its approval (see [`Caller::Person`]).
#[tauri::command]
#[specta::specta]
pub async fn call_tool(
    shell: State<'_, Shell>,
    name: String,
    args: serde_json::Value,
    conversation: String,
    card: Option<String>,
) -> Res<ToolCallView> {
    let mut request = CallRequest::new(&name, args, Caller::Person, &conversation);
    request.caller_ref = card;
    Ok(call_view(&shell.app.scheduler().call(request).await))
}

pub(crate) fn call_view(outcome: &cowork_core::CallOutcome) -> ToolCallView {
    let (ok, text, structured) = match &outcome.result {
        Ok(output) => (true, output.text_content(), output.structured.clone()),
        Err(e) => (false, e.to_string(), None),
    };
    ToolCallView {
        call_id: outcome.call_id.clone(),
        tool: outcome.tool.clone(),
        ok,
        suspended: match &outcome.result {
            Err(cowork_contract::ToolError::Suspended { id, .. }) => Some(id.clone()),
            _ => None,
        },
        text,
        structured,
        images: outcome
            .result
            .as_ref()
            .map(|o| o.images())
            .unwrap_or_default(),
        app: outcome.result.as_ref().ok().and_then(|o| o.app.clone()),
        decision: outcome.review.as_ref().map(|r| r.decision),
        score: outcome.review.as_ref().map(|r| r.score),
        duration_ms: outcome.duration.as_millis() as u64,
    }
}
