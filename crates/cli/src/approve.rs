//! The terminal's answer to an ask (shows what the modal shows, reads one line) and to an MCP
//! server's form (elicitation), field by field.

use cowork_contract::text::printable_field as field;
use cowork_core::plain::Undo;
use cowork_core::{
    ApprovalChoice, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest,
};
use std::io::{BufRead, Write};

pub struct TerminalApprover;

fn prompt(request: &ApprovalRequest) -> ApprovalChoice {
    let mut err = std::io::stderr().lock();
    let r = &request.review;
    let _ = ewrite!(
        err,
        "\n┌ {} wants to run {} ({})",
        field(&request.caller),
        field(&request.tool),
        field(&request.title)
    );
    // What will happen, in words, first — as the window shows it.
    let plain = &request.plain;
    for what in &plain.what {
        let _ = ewrite!(err, "│ {}", field(&what.text));
    }
    if let Some(place) = &plain.place {
        let _ = ewrite!(err, "│ {}", field(&place.text));
    }
    let undo = match plain.undo {
        Undo::NothingChanges => "nothing is changed",
        Undo::Undoable => "you can undo this with `cowork changes rollback`",
        Undo::ChangeableLater => "Cowork does not undo this; you can change or remove it later",
        Undo::CannotUndo => "Cowork cannot undo this once it is done",
    };
    let _ = ewrite!(err, "│ {undo}");
    if let Some(reason) = &plain.reason {
        let _ = ewrite!(err, "│ the assistant says why: \"{}\"", field(reason));
    }
    let _ = ewrite!(
        err,
        "│ arguments: {}",
        serde_json::to_string_pretty(&request.args)
            .unwrap_or_default()
            .replace('\n', "\n│   ")
    );
    for effect in &request.effects {
        let _ = ewrite!(err, "│ effect: {}", field(&effect.to_string()));
    }
    let _ = ewrite!(err, "│ risk {}/10:", r.score);
    for reason in &r.reasons {
        let _ = ewrite!(err, "│   {:+} {}", reason.points, field(&reason.text));
    }
    let _ = ewrite!(err, "│ why asked: {}", field(&r.why));
    if !request.grants.is_empty() {
        let rules: Vec<String> = request
            .grants
            .iter()
            .map(|g| field(g).into_owned())
            .collect();
        let _ = ewrite!(
            err,
            "│ [c]onversation or [a]lways allows from then on: {}",
            rules.join(", ")
        );
    }
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
        tokio::task::spawn_blocking(move || prompt(&request))
            .await
            .unwrap_or(ApprovalChoice::Deny)
    }

    async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        let request = request.clone();
        tokio::task::spawn_blocking(move || fill_in(&request))
            .await
            .unwrap_or(ElicitationAnswer::Decline)
    }

    /// Made only when a person is at the terminal (or stdin answers by request).
    fn can_ask(&self) -> bool {
        true
    }
}

/// An MCP server's form, field by field. Anything but an explicit "y" declines; a value that
/// does not parse as its type declines too (never guessed).
fn fill_in(request: &ElicitationRequest) -> ElicitationAnswer {
    let mut err = std::io::stderr();
    let read = || {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .ok()
            .filter(|n| *n > 0)
            .map(|_| line.trim().to_string())
    };
    let _ = ewrite!(
        err,
        "┌ {} asks: {}",
        field(&request.from),
        field(&request.message)
    );
    let _ = write!(err, "└ answer? [y]es / [n]o (decline) / [c]ancel > ");
    let _ = err.flush();
    match read().as_deref().map(str::to_lowercase).as_deref() {
        Some("y" | "yes") => {}
        Some("c" | "cancel") => return ElicitationAnswer::Cancel,
        _ => return ElicitationAnswer::Decline,
    }
    let mut content = serde_json::Map::new();
    let empty = serde_json::Map::new();
    let properties = request.schema["properties"].as_object().unwrap_or(&empty);
    for (key, property) in properties {
        let kind = property["type"].as_str().unwrap_or("string");
        let title = property["title"]
            .as_str()
            .or(property["description"].as_str())
            .unwrap_or(key);
        let choices = property["enum"]
            .as_array()
            .or(property["items"]["enum"].as_array())
            .map(|list| {
                let names: Vec<String> = list
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(|n| field(n).into_owned())
                    .collect();
                let several = if kind == "array" {
                    ", comma-separated"
                } else {
                    ""
                };
                format!(": {}{several}", names.join(" / "))
            })
            .unwrap_or_default();
        let _ = write!(err, "  {} ({}{choices}) > ", field(title), field(kind));
        let _ = err.flush();
        let Some(text) = read() else {
            return ElicitationAnswer::Decline;
        };
        if text.is_empty() {
            continue;
        }
        let value = match kind {
            "number" | "integer" => match text.parse::<f64>() {
                Ok(n) => serde_json::json!(n),
                Err(_) => return ElicitationAnswer::Decline,
            },
            "boolean" => match text.to_lowercase().as_str() {
                "y" | "yes" | "true" => serde_json::json!(true),
                "n" | "no" | "false" => serde_json::json!(false),
                _ => return ElicitationAnswer::Decline,
            },
            "array" => serde_json::json!(
                text.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
            ),
            _ => serde_json::json!(text),
        };
        content.insert(key.clone(), value);
    }
    ElicitationAnswer::Accept {
        content: serde_json::Value::Object(content),
    }
}
