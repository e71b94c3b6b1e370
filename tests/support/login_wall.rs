//! A page behind a login, for the suspension tests: a tool that suspends until
//! `<workspace>/logged-in` exists, and the family's probe of that condition.

use cowork_contract::{SuspendRequest, Tool, ToolContext, ToolProvider, ToolResult, tool, typed};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A page behind a login: suspended until `<workspace>/logged-in` exists.
pub struct Protected {
    pub workspace: PathBuf,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct PageInput {
    pub page: String,
}

#[tool(
    name = "probe_protected_page",
    title = "Protected page",
    description = "Reads a page behind a login."
)]
impl Tool for Protected {
    type Input = PageInput;
    type Output = String;

    fn to_text(&self, page: &String) -> String {
        page.clone()
    }

    async fn call(&self, input: &PageInput, _: &(), ctx: &ToolContext) -> ToolResult<String> {
        if !self.workspace.join("logged-in").exists() {
            return Err(ctx.suspend(SuspendRequest {
                reason: format!("login needed at http://127.0.0.1/{}", input.page),
                resume_when: json!({"kind": "file", "file_exists": "logged-in"}),
                timeout: Duration::from_secs(600),
            }));
        }
        Ok(format!("order status of {}: shipped", input.page))
    }
}

pub struct Pages(pub PathBuf);

impl ToolProvider for Pages {
    fn name(&self) -> &str {
        "pages"
    }
    fn tools(&self) -> Vec<Arc<dyn cowork_contract::DynTool>> {
        vec![typed(Protected {
            workspace: self.0.clone(),
        })]
    }
}

/// The family's check of its own condition (here: the file exists), as a ResumeProbe.
pub struct FileProbe(pub PathBuf);

#[async_trait::async_trait]
impl cowork_contract::ResumeProbe for FileProbe {
    fn kind(&self) -> &str {
        "file"
    }
    async fn holds(&self, resume_when: &serde_json::Value) -> bool {
        self.0
            .join(resume_when["file_exists"].as_str().unwrap_or_default())
            .exists()
    }
}
