//! The core: registry (discovery), scheduler (the only way to run a tool), PolicyBridge (the
//! one review) and the audit log. See ARCHITECTURE.md for the call path.

pub mod approver;
pub mod audit;
pub mod hooks;
mod person_tools;
pub mod placeholders;
pub mod plain;
pub mod policy;
pub mod redact;
pub mod registry;
pub mod scheduler;
mod schema;
mod search_tool;
pub mod suspend;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

pub use approver::{
    Answered, ApprovalChoice, ApprovalRequest, Approver, Attention, ChannelApprover, DenyApprover,
    ElicitationAnswer, ElicitationRequest, PendingApproval, PendingElicitation,
};
pub use audit::{
    Anchor, AuditEntry, AuditError, AuditFilter, AuditLog, AuditRecord, Ticket, VerifyReport,
};
pub use person_tools::register as register_person_tools;
pub use policy::{
    Action, Grant, Managed, Mode, PolicyBridge, PolicyError, Review, RuleSource, ToolProfile,
};
pub use registry::{Layer, Registry, SearchHit, ToolInfo};
pub use scheduler::{
    CallOutcome, CallRequest, Caller, Explanation, PersonAnswer, Scheduler, SchedulerConfig,
    ToolEvent, ToolFinder,
};
pub use suspend::{SuspendCoordinator, SuspendError, Suspension, SuspensionEvent};

use std::sync::Arc;

/// Registers the core's own builtins (`tool_search`) into `registry`.
pub fn register_core_tools(registry: &Arc<Registry>) {
    let search = search_tool::SearchTools {
        registry: Arc::downgrade(registry),
    };
    for tool in search.search_tools() {
        registry.register(Layer::Builtin, tool);
    }
}
