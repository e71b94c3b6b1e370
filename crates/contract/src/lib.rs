//! The tool contract: the smallest crate, depended on by every other one.
//!
//! A tool is described by a [`ToolSpec`], declares the [`Effect`]s a call will have (computed from
//! its arguments), and runs with a [`ToolContext`]. Tools are written as typed [`Tool`]s (serde +
//! schemars types, schemas derived once) and handed to the core erased as [`DynTool`]. Nothing in
//! this crate executes a tool: only the core's `Scheduler::call` does.

pub mod address;
pub mod confine;
mod context;
mod credentials;
mod effect;
mod error;
mod gitdirs;
mod output;
pub mod pathclass;
mod spec;
pub mod text;
mod tool;

pub use context::{
    EffectEnv, Progress, ProgressSink, ResumeProbe, SecretSource, SuspendRequest, Suspender,
    ToolContext,
};
pub use credentials::{Credential, CredentialError, Credentials, SIGNED_IN};
pub use effect::{Access, Effect, EffectKind, KindClass, Reach, Risk, Sensitive, Subject, Undo};
pub use error::{ToolError, ToolResult};
pub use output::{AppView, Content, ToolOutput};
pub use spec::{Annotations, RateLimit, ToolSpec};
pub use tool::{
    CallPlan, DefaultRule, DynTool, PreparedCall, RuleAction, Tool, ToolMeta, ToolProvider, Typed,
    typed,
};

/// Used by `#[tool]`'s expansion, so families need not depend on it.
pub use async_trait::async_trait;
pub use cowork_tool_macro::{tool, tools};

/// Re-exported so families derive schemas with the same schemars version as the contract.
pub use schemars;
pub use tokio_util::sync::CancellationToken;
