//! A stdio MCP server that runs its one tool as a task (MCP Tasks, SEP-2663), on the official
//! Rust SDK's own task runtime (`rmcp::task_manager`): no published server on npm or PyPI speaks
//! SEP-2663 yet (the TypeScript SDKs serve the 2025-11-25 draft's `tasks/result`; the Python
//! SDK 2.3 refuses a task as a `tools/call` result), so the SDK's is the peer the gateway's
//! task following is tested against (tests/e2e/mcp.rs).
//!
//! `report {seconds}` says "gathering" then "writing" and ends after `seconds` with its text.
//! Each call started and each task cancelled is written to stderr (the server's log), for the
//! test to find.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, ErrorData, GetTaskParams, GetTaskResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::Arc;
use std::time::Duration;

struct Tasks {
    tasks: TaskManager,
}

impl ServerHandler for Tasks {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({"type": "object",
            "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!()
        };
        let tool = Tool::new("report", "Writes a report (a long task).", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if !declared {
            return Err(ErrorData::invalid_request(
                "report runs as a task: declare the tasks extension",
                None,
            ));
        }
        let seconds = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("seconds"))
            .and_then(|s| s.as_f64())
            .unwrap_or(1.0);
        eprintln!("report started");
        let options = TaskOptions::new()
            .with_poll_interval_ms(100)
            .with_status_message("gathering");
        let task = self.tasks.spawn(options, move |ctx| {
            Box::pin(async move {
                let half = Duration::from_secs_f64(seconds / 2.0);
                let work = async {
                    tokio::time::sleep(half).await;
                    ctx.set_status_message("writing");
                    tokio::time::sleep(half).await;
                };
                tokio::select! {
                    _ = ctx.cancelled() => {
                        eprintln!("task {} cancelled", ctx.task_id());
                        Err(TaskExit::Cancelled)
                    }
                    _ = work => Ok(CallToolResult::success(vec![ContentBlock::text("the report, written")])),
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = Tasks {
        tasks: TaskManager::new(),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .expect("the MCP handshake");
    let _ = running.waiting().await;
}
