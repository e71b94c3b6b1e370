//! The terminal's answer to an ask (shows what the modal shows, reads one line) and to an MCP
//! server's form (elicitation), field by field.

use cowork_contract::text::printable_field as field;
use cowork_core::plain::Undo;
use cowork_core::{
    ApprovalChoice, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest,
};
use std::io::{BufRead, Write};

pub struct TerminalApprover;

/// Nobody at a terminal: every ask is refused, and counted, so a command can say (and exit
/// saying) that something waited for an answer nobody could give.
pub struct Nobody;

static REFUSED_FOR_NOBODY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many asks were refused because nobody could answer.
pub(crate) fn refused_for_nobody() -> usize {
    REFUSED_FOR_NOBODY.load(std::sync::atomic::Ordering::Relaxed)
}

#[async_trait::async_trait]
impl Approver for Nobody {
    fn name(&self) -> &str {
        cowork_core::DenyApprover.name()
    }
    fn is_a_person(&self) -> bool {
        false
    }
    async fn decide(&self, _request: &ApprovalRequest) -> ApprovalChoice {
        REFUSED_FOR_NOBODY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ApprovalChoice::Deny
    }
}

/// Whether someone can answer a question: a person at the terminal, or piped input when
/// explicitly requested (scripts and tests, `COWORK_APPROVE_FROM_STDIN`).
pub(crate) fn person_at_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() || std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_some()
}

/// One line of standard input, as typed (its line end included).
pub(crate) fn read_line() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(line)
}

/// Asks a yes/no `question` on stderr; only "y" or "yes" (any case) is a yes.
pub(crate) fn ask_yes(question: &str) -> Result<bool, String> {
    eprint!("{question}");
    let line = read_line()?;
    Ok(matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

fn prompt(request: &ApprovalRequest) -> ApprovalChoice {
    let mut err = std::io::stderr().lock();
    describe(&mut err, request);
    offer_choices(&mut err, request);
    read_choice()
}

/// What the modal shows: who asks for what, in words, then the arguments, effects and risk.
fn describe(err: &mut impl Write, request: &ApprovalRequest) {
    let r = &request.review;
    let _ = ewrite!(
        err,
        "\n┌ {} wants to run {} ({})",
        field(&request.caller),
        field(&request.tool),
        field(&request.title)
    );
    // What will happen, in words, first — as the window shows it.
    describe_plain(err, &request.plain);
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
}

fn describe_plain(err: &mut impl Write, plain: &cowork_core::plain::Plain) {
    for what in &plain.what {
        let _ = ewrite!(err, "│ {}", field(&what.text));
    }
    if let Some(place) = &plain.place {
        let _ = ewrite!(err, "│ {}", field(&place.text));
    }
    let undo = match plain.undo {
        Undo::NothingChanges => "nothing is changed",
        Undo::Undoable => {
            "Cowork keeps the earlier version: `cowork changes rollback` (files) or `cowork calendar undo` (events) takes it back"
        }
        Undo::ChangeableLater => "Cowork does not undo this; you can change or remove it later",
        Undo::CannotUndo => "Cowork cannot undo this once it is done",
    };
    let _ = ewrite!(err, "│ {undo}");
    if let Some(reason) = &plain.reason {
        let _ = ewrite!(err, "│ the assistant says why: \"{}\"", field(reason));
    }
}

/// The rules a wider answer adds, then the answers to choose from.
fn offer_choices(err: &mut impl Write, request: &ApprovalRequest) {
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
}

fn read_choice() -> ApprovalChoice {
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
    let _ = ewrite!(
        err,
        "┌ {} asks: {}",
        field(&request.from),
        field(&request.message)
    );
    let _ = write!(err, "└ answer? [y]es / [n]o (decline) / [c]ancel > ");
    let _ = err.flush();
    match read_answer().as_deref().map(str::to_lowercase).as_deref() {
        Some("y" | "yes") => {}
        Some("c" | "cancel") => return ElicitationAnswer::Cancel,
        _ => return ElicitationAnswer::Decline,
    }
    match fill_fields(&request.schema) {
        Some(content) => ElicitationAnswer::Accept {
            content: serde_json::Value::Object(content),
        },
        None => ElicitationAnswer::Decline,
    }
}

/// One trimmed line of standard input; `None` at its end or on an error.
fn read_answer() -> Option<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .ok()
        .filter(|n| *n > 0)
        .map(|_| line.trim().to_string())
}

/// Asks each property of the form's schema in turn; an empty answer leaves it out. `None`: the
/// input ended, or an answer did not parse as its type.
fn fill_fields(schema: &serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut err = std::io::stderr();
    let mut content = serde_json::Map::new();
    let empty = serde_json::Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    for (key, property) in properties {
        let kind = property["type"].as_str().unwrap_or("string");
        let title = property["title"]
            .as_str()
            .or(property["description"].as_str())
            .unwrap_or(key);
        let choices = choices(kind, property);
        let _ = write!(err, "  {} ({}{choices}) > ", field(title), field(kind));
        let _ = err.flush();
        let text = read_answer()?;
        if text.is_empty() {
            continue;
        }
        content.insert(key.clone(), parse_value(kind, &text)?);
    }
    Some(content)
}

/// A field's allowed values, as the prompt lists them (empty when any value goes).
fn choices(kind: &str, property: &serde_json::Value) -> String {
    property["enum"]
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
        .unwrap_or_default()
}

/// An answer as its field's type; `None` when it does not parse (never guessed).
fn parse_value(kind: &str, text: &str) -> Option<serde_json::Value> {
    Some(match kind {
        "number" | "integer" => serde_json::json!(text.parse::<f64>().ok()?),
        "boolean" => match text.to_lowercase().as_str() {
            "y" | "yes" | "true" => serde_json::json!(true),
            "n" | "no" | "false" => serde_json::json!(false),
            _ => return None,
        },
        "array" => serde_json::json!(
            text.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
        ),
        _ => serde_json::json!(text),
    })
}
