//! The MCP family: a gateway that runs MCP servers and offers their tools to the registry,
//! and toolpacks — MCPB folders installed from GitHub, a folder or a `.mcpb` file, pinned to a
//! commit and a content hash.
//!
//! - `manifest.rs`: the MCPB manifest and our effect declarations (`_meta["app.cowork"]`).
//! - `effects.rs`: declared effect templates → the concrete effects of one call.
//! - `server.rs`: one supervised server (lifecycle, restart with backoff, calls, progress,
//!   cancellation, per-server log).
//! - `gateway.rs`: all servers as a `ToolProvider` (`mcp__<server>__<tool>`).
//! - `context_tools.rs`: resources and prompts as four gateway tools.
//! - `sandbox.rs`: bubblewrap around every stdio server; its reach scores the calls.
//! - `toolpacks.rs`: install (stage → review → commit), pin, verify, enable/disable, remove.
//! - `import.rs`: `claude_desktop_config.json` → toolpacks.
//! - `skills.rs`: Agent Skills and Agent Plugins (their skills; their MCP servers as toolpacks).
//! - `auth.rs`: signing in to remote servers behind OAuth (the MCP authorization spec).

pub mod auth;
pub mod catalog;
pub mod context_tools;
pub mod effects;
pub mod gateway;
pub mod import;
pub mod instructions;
pub mod legacy_sse;
pub mod manifest;
pub mod sandbox;
pub mod server;
pub mod skills;
pub mod tasks;
pub mod toolpacks;

pub use gateway::{McpGateway, ViewReach, tool_name};
pub use manifest::Manifest;
pub use sandbox::{Sandbox, Unconfined};
pub use server::{
    ElicitReply, Elicitation, Elicitor, HttpProtocol, LaunchSpec, McpServer, Offers, RestartPolicy,
    SampledMessage, Sampler, SamplingReply, SamplingRequest, ServerState, ServerStatus, Transport,
    Workspace,
};
pub use toolpacks::{PackError, Record, Review, Source, Staged, Toolpacks};
