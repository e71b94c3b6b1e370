use std::time::Duration;
use thiserror::Error;

/// Every way a tool call can fail. The message is what the model and the person read, so each
/// one says what to do next.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum ToolError {
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: String, message: String },
    #[error("no tool named {name:?}{}", suggestions_text(.suggestions))]
    NotFound {
        name: String,
        suggestions: Vec<String>,
    },
    #[error("not allowed: {reason}")]
    Denied { reason: String },
    #[error("security violation: {reason}")]
    SecurityViolation { reason: String },
    #[error("timed out after {:.1} s", .after.as_secs_f64())]
    Timeout { after: Duration },
    #[error("cancelled")]
    Cancelled,
    #[error("{message}")]
    Failed { message: String, transient: bool },
    #[error("{tool}: {what} — {how}")]
    NotConfigured {
        tool: String,
        what: String,
        how: String,
    },
    /// The call stopped to wait for the person (a login, a code, an answer). Nothing failed:
    /// resuming the suspension runs the same call again.
    #[error(
        "suspended: {reason} — do what it needs, then Resume in the window or `cowork tasks resume {id}`"
    )]
    Suspended { id: String, reason: String },
    /// The person paused every tool (the tray's "Pause all tools").
    #[error("paused: the person paused all tools — resume them from the tray or the window")]
    Paused,
    #[error("rate limited: {tool} allows {per_minute} calls per minute; retry in {:.1} s", .retry_after.as_secs_f64())]
    RateLimited {
        tool: String,
        per_minute: u32,
        retry_after: Duration,
    },
}

/// What a tool's `call` returns.
pub type ToolResult<T> = Result<T, ToolError>;

fn suggestions_text(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        "; `cowork tools list` shows what exists".into()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

impl ToolError {
    /// A file system error on `path`, in words a person acts on.
    pub fn io(path: &std::path::Path, e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => {
                ToolError::failed(format!("{} does not exist", path.display()))
            }
            std::io::ErrorKind::PermissionDenied => ToolError::failed(format!(
                "{}: permission denied by the system",
                path.display()
            )),
            _ => ToolError::failed(format!("{}: {e}", path.display())),
        }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            transient: false,
        }
    }

    /// Arguments the tool cannot use; say what to give instead. The scheduler adds the tool's
    /// name ([`ToolError::stamped`]).
    pub fn invalid(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments {
            tool: String::new(),
            message: message.into(),
        }
    }

    /// Something the person must set up first (`what`), and how (`how`, a command or a place in
    /// Settings that exists).
    pub fn not_configured(what: impl Into<String>, how: impl Into<String>) -> Self {
        ToolError::NotConfigured {
            tool: String::new(),
            what: what.into(),
            how: how.into(),
        }
    }

    /// Names `tool` in an error that does not name one yet: tools do not label their own errors,
    /// the gate does, once, for every path a call takes.
    pub fn stamped(mut self, name: &str) -> Self {
        match &mut self {
            ToolError::InvalidArguments { tool, .. }
            | ToolError::NotConfigured { tool, .. }
            | ToolError::RateLimited { tool, .. }
                if tool.is_empty() =>
            {
                *tool = name.to_string();
            }
            _ => {}
        }
        self
    }

    pub fn transient(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            transient: true,
        }
    }

    /// A short stable name for audit rows, events and `--json` output.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments { .. } => "invalid_arguments",
            ToolError::NotFound { .. } => "not_found",
            ToolError::Denied { .. } => "denied",
            ToolError::SecurityViolation { .. } => "security_violation",
            ToolError::Timeout { .. } => "timeout",
            ToolError::Cancelled => "cancelled",
            ToolError::Failed {
                transient: true, ..
            } => "failed_transient",
            ToolError::Failed {
                transient: false, ..
            } => "failed",
            ToolError::NotConfigured { .. } => "not_configured",
            ToolError::RateLimited { .. } => "rate_limited",
            ToolError::Suspended { .. } => "suspended",
            ToolError::Paused => "paused",
        }
    }

    /// Worth retrying for an idempotent tool.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ToolError::Failed {
                transient: true,
                ..
            } | ToolError::Timeout { .. }
        )
    }
}
