//! The terminal's answer to an ask: shows what the modal shows, reads one line.

use cowork_core::{ApprovalChoice, ApprovalRequest, Approver};
use std::io::{BufRead, Write};

pub struct TerminalApprover;

fn prompt(request: &ApprovalRequest) -> ApprovalChoice {
    let mut err = std::io::stderr().lock();
    let r = &request.review;
    let _ = writeln!(err, "\n┌ {} wants to run {} ({})", request.caller, request.tool, request.title);
    let _ = writeln!(err, "│ arguments: {}", serde_json::to_string_pretty(&request.args).unwrap_or_default().replace('\n', "\n│   "));
    for effect in &request.effects {
        let _ = writeln!(err, "│ effect: {effect}");
    }
    let _ = writeln!(err, "│ risk {}/10:", r.score);
    for reason in &r.reasons {
        let _ = writeln!(err, "│   {:+} {}", reason.points, reason.text);
    }
    let _ = writeln!(err, "│ why asked: {}", r.why);
    let keys: Vec<&str> = request
        .choices
        .iter()
        .map(|c| match c {
            ApprovalChoice::Once => "[o]nce",
            ApprovalChoice::Conversation => "[c]onversation",
            ApprovalChoice::Always => "[a]lways",
            ApprovalChoice::AlwaysWorkspace => "always in this [w]orkspace",
            ApprovalChoice::Deny => "[d]eny",
        })
        .collect();
    let _ = write!(err, "└ allow? {} (default: deny) > ", keys.join(" / "));
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
        return ApprovalChoice::Deny;
    }
    // Only an explicit answer allows; anything else (a stray Enter included) denies.
    match line.trim().to_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => ApprovalChoice::Once,
        "c" | "conversation" => ApprovalChoice::Conversation,
        "a" | "always" => ApprovalChoice::Always,
        "w" | "workspace" => ApprovalChoice::AlwaysWorkspace,
        _ => ApprovalChoice::Deny,
    }
}

#[async_trait::async_trait]
impl Approver for TerminalApprover {
    fn name(&self) -> &str {
        "terminal"
    }

    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice {
        let request = request.clone();
        tokio::task::spawn_blocking(move || prompt(&request)).await.unwrap_or(ApprovalChoice::Deny)
    }
}
