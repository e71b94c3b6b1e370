//! Tools through which the model turns to the person: `ask_user` (Claude Code's
//! `AskUserQuestion`), `confirm`, `request_input`, and the plan mode it can drive
//! (`enter_plan_mode`, `exit_plan_mode`). Builtins of the core because they speak through the
//! scheduler's approver (the window's modal, the terminal) and the policy's plan state.
//!
//! Nothing is ever answered on the person's behalf: when nobody can answer (a headless run, a
//! question left unanswered past the ask timeout) the call suspends — the task waits as a
//! "waiting for you" entry, resumed by the person — and the model is told it is waiting.

use crate::approver::{ElicitationAnswer, ElicitationRequest};
use crate::scheduler::{PersonAnswer, Scheduler};
use cowork_contract::{SuspendRequest, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A question waits this long for a person before its task times out (the person can extend it).
const WAIT_FOR_PERSON: Duration = Duration::from_secs(7 * 86_400);

/// The provider of the person tools: it holds the scheduler weakly (the scheduler's registry
/// holds the tools).
#[derive(Clone)]
struct PersonTools {
    scheduler: Weak<Scheduler>,
}

/// Registers the person tools on `scheduler`'s registry.
pub fn register(scheduler: &Arc<Scheduler>) {
    let tools = PersonTools {
        scheduler: Arc::downgrade(scheduler),
    };
    let registry = scheduler.registry();
    for tool in tools.person_tools() {
        registry.register(crate::Layer::Builtin, tool);
    }
}

impl PersonTools {
    fn scheduler(&self) -> Result<Arc<Scheduler>, ToolError> {
        self.scheduler
            .upgrade()
            .ok_or_else(|| ToolError::failed("Cowork is shutting down"))
    }

    /// Puts a form before the person; `Ok(None)` when they declined or cancelled. When nobody can
    /// answer, the call suspends (the returned error says so).
    /// `waiting` names what waits, for the task list when nobody answers.
    async fn ask(
        &self,
        ctx: &ToolContext,
        waiting: String,
        message: String,
        schema: Value,
    ) -> Result<Option<serde_json::Map<String, Value>>, ToolError> {
        let scheduler = self.scheduler()?;
        let request = ElicitationRequest {
            id: ctx.call_id.clone(),
            from: "the assistant".into(),
            message: message.clone(),
            schema,
        };
        let answer = tokio::select! {
            answer = scheduler.ask_person(request) => answer,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        match answer {
            PersonAnswer::Answered(ElicitationAnswer::Accept { content }) => {
                Ok(Some(content.as_object().cloned().unwrap_or_default()))
            }
            PersonAnswer::Answered(_) => Ok(None),
            PersonAnswer::Nobody => Err(ctx.suspend(SuspendRequest {
                reason: waiting,
                resume_when: Value::Null,
                timeout: WAIT_FOR_PERSON,
            })),
        }
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(119).collect::<String>())
    } else {
        line.to_string()
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserInput {
    /// One to four questions, asked together.
    pub questions: Vec<Question>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Question {
    /// The full question.
    pub question: String,
    /// A short label for it (a few words).
    pub header: Option<String>,
    /// The choices (2–8); none: the person answers in their own words.
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// The person may pick several options.
    #[serde(default)]
    pub multi_select: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    pub label: String,
    /// What choosing it means.
    pub description: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AskUserOutput {
    /// False when the person chose not to answer: do not assume an answer.
    pub answered: bool,
    pub answers: Vec<Answer>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    pub question: String,
    /// The options picked.
    pub selected: Vec<String>,
    /// Their own words, if they wrote any.
    pub text: Option<String>,
}

const MAX_QUESTIONS: usize = 4;
const MAX_OPTIONS: usize = 8;

fn question_form(questions: &[Question]) -> Result<Value, ToolError> {
    if questions.is_empty() || questions.len() > MAX_QUESTIONS {
        return Err(ToolError::invalid(format!(
            "`questions`: ask 1 to {MAX_QUESTIONS} questions at a time (got {})",
            questions.len()
        )));
    }
    let mut properties = serde_json::Map::new();
    for (i, q) in questions.iter().enumerate() {
        if q.question.trim().is_empty() {
            return Err(ToolError::invalid(format!(
                "`questions[{i}].question` is empty"
            )));
        }
        if q.options.len() > MAX_OPTIONS {
            return Err(ToolError::invalid(format!(
                "`questions[{i}].options`: at most {MAX_OPTIONS} choices"
            )));
        }
        let title = match &q.header {
            Some(h) if !h.trim().is_empty() => format!("{} — {}", h.trim(), q.question.trim()),
            _ => q.question.trim().to_string(),
        };
        let labels: Vec<&str> = q.options.iter().map(|o| o.label.as_str()).collect();
        let described: Vec<String> = q
            .options
            .iter()
            .filter_map(|o| Some(format!("{}: {}", o.label, o.description.as_deref()?)))
            .collect();
        let description = (!described.is_empty()).then(|| described.join("; "));
        if labels.is_empty() {
            properties.insert(
                format!("q{i}"),
                json!({"type": "string", "title": title, "description": description}),
            );
            continue;
        }
        let choice = if q.multi_select {
            json!({"type": "array", "items": {"type": "string", "enum": labels}, "title": title, "description": description})
        } else {
            json!({"type": "string", "enum": labels, "title": title, "description": description})
        };
        properties.insert(format!("q{i}"), choice);
        // Like Claude Code's "Other": the person is never boxed into the model's choices.
        properties.insert(
            format!("q{i}_other"),
            json!({"type": "string", "title": "Other (your own words)"}),
        );
    }
    Ok(json!({"type": "object", "properties": properties}))
}

/// Text the person wrote, trimmed; `None` when there is none.
fn words(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// The person's answer to question `i` of a form `question_form` made: the options picked (only
/// real ones, one unless several may be), and their own words.
fn read_answer(i: usize, q: &Question, content: &serde_json::Map<String, Value>) -> Answer {
    let picked = content.get(&format!("q{i}"));
    let labels: Vec<&str> = q.options.iter().map(|o| o.label.as_str()).collect();
    let is_option = |s: &&str| labels.contains(s);
    let mut selected: Vec<String> = match picked {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .filter(is_option)
            .map(String::from)
            .collect(),
        Some(Value::String(s)) if is_option(&s.as_str()) => vec![s.clone()],
        _ => Vec::new(),
    };
    if !q.multi_select {
        selected.truncate(1);
    }
    let text = if labels.is_empty() {
        words(picked)
    } else {
        words(content.get(&format!("q{i}_other")))
    };
    Answer {
        question: q.question.clone(),
        selected,
        text,
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmInput {
    /// What the person is asked to confirm, in one or two sentences.
    pub message: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ConfirmOutput {
    /// Only an explicit yes is true.
    pub confirmed: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestInputInput {
    /// Why the values are needed.
    pub prompt: String,
    /// The values wanted (1–10).
    pub fields: Vec<Field>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// A key for the value (letters, digits, `_`).
    pub name: String,
    /// What the person sees.
    pub label: Option<String>,
    #[serde(default)]
    pub kind: FieldKind,
    #[serde(default)]
    pub required: bool,
}

#[derive(Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    #[default]
    Text,
    Number,
    Boolean,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RequestInputOutput {
    /// False when the person chose not to give them.
    pub provided: bool,
    pub values: serde_json::Map<String, Value>,
}

/// Secrets never pass through the chat (they would sit in its history and the model's context):
/// the person stores them in the keyring, where the tools that need them read them.
fn looks_secret(name: &str) -> bool {
    let name = name.to_lowercase();
    let words = [
        "password",
        "passwd",
        "passphrase",
        "passcode",
        "secret",
        "token",
        "pin",
        "otp",
        "cvv",
        "apikey",
    ];
    ["password", "secret", "api_key", "apikey"]
        .iter()
        .any(|s| name.contains(s))
        || name
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| words.contains(&word))
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanModeOutput {
    pub planning: bool,
    pub note: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitPlanModeInput {
    /// The plan, in Markdown: the steps, what each changes, and what could go wrong.
    pub plan: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ExitPlanModeOutput {
    /// The person approved: the conversation is under their own mode again.
    pub approved: bool,
    /// Their notes or changes to the plan (follow them).
    pub notes: Option<String>,
    pub note: String,
}

#[tools(list = person_tools)]
impl PersonTools {
    #[tool(name = "ask_user", title = "Ask you", category = "system", aliases = ["AskUserQuestion"],
           read_only, timeout = WAIT_FOR_PERSON,
           description = "Ask the person 1–4 questions, each with choices (single or multiple) or free text, when their preference decides what to do. Never guess an answer instead. Nobody there: the task waits for them.")]
    async fn ask_user(&self, input: &AskUserInput, ctx: &ToolContext) -> ToolResult<AskUserOutput> {
        let schema = question_form(&input.questions)?;
        let message = input
            .questions
            .iter()
            .map(|q| q.question.trim())
            .collect::<Vec<_>>()
            .join("\n");
        let waiting = format!("A question for you: {}", first_line(&message));
        let Some(content) = self.ask(ctx, waiting, message, schema).await? else {
            return Ok(AskUserOutput {
                answered: false,
                answers: Vec::new(),
            });
        };
        let answers = input
            .questions
            .iter()
            .enumerate()
            .map(|(i, q)| read_answer(i, q, &content))
            .collect();
        Ok(AskUserOutput {
            answered: true,
            answers,
        })
    }

    #[tool(name = "confirm", title = "Confirm with you", category = "system", read_only,
           timeout = WAIT_FOR_PERSON,
           description = "Ask the person a yes/no question before going on (e.g. \"Book the 9:40 train?\"). Only an explicit yes confirms. This is not an approval: risky tools are still reviewed on their own.")]
    async fn confirm(&self, input: &ConfirmInput, ctx: &ToolContext) -> ToolResult<ConfirmOutput> {
        if input.message.trim().is_empty() {
            return Err(ToolError::invalid("`message` is empty"));
        }
        let schema = json!({"type": "object", "properties": {}});
        let message = input.message.trim().to_string();
        let waiting = format!("A yes/no question for you: {}", first_line(&message));
        let answer = self.ask(ctx, waiting, message, schema).await?;
        Ok(ConfirmOutput {
            confirmed: answer.is_some(),
        })
    }

    #[tool(name = "request_input", title = "Ask you for values", category = "system", read_only,
           timeout = WAIT_FOR_PERSON,
           description = "Ask the person for a few values (text, numbers, yes/no) in one form. Never for passwords, keys or codes: those go into Settings (the keyring), not the chat.")]
    async fn request_input(
        &self,
        input: &RequestInputInput,
        ctx: &ToolContext,
    ) -> ToolResult<RequestInputOutput> {
        if input.fields.is_empty() || input.fields.len() > 10 {
            return Err(ToolError::invalid("`fields`: ask for 1 to 10 values"));
        }
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (i, field) in input.fields.iter().enumerate() {
            let name = field.name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(ToolError::invalid(format!(
                    "`fields[{i}].name` {name:?}: use letters, digits and `_`"
                )));
            }
            let label = field.label.as_deref().unwrap_or(name);
            if looks_secret(name) || looks_secret(label) {
                return Err(ToolError::invalid(format!(
                    "`fields[{i}]` asks for a secret ({name:?}): secrets never go through the chat — ask the person to store it in Settings → Accounts (the keyring)"
                )));
            }
            let kind = match field.kind {
                FieldKind::Text => "string",
                FieldKind::Number => "number",
                FieldKind::Boolean => "boolean",
            };
            properties.insert(name.to_string(), json!({"type": kind, "title": label}));
            if field.required {
                required.push(name.to_string());
            }
        }
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let message = input.prompt.trim().to_string();
        let waiting = format!("A form for you: {}", first_line(&message));
        let answer = self.ask(ctx, waiting, message, schema).await?;
        Ok(match answer {
            Some(values) => {
                // Only the fields asked for, each of its type: the answer is data, nothing more.
                let values = values
                    .into_iter()
                    .filter(|(k, v)| {
                        properties.get(k).is_some_and(|p| match p["type"].as_str() {
                            Some("number") => v.is_number(),
                            Some("boolean") => v.is_boolean(),
                            _ => v.is_string(),
                        })
                    })
                    .collect();
                RequestInputOutput {
                    provided: true,
                    values,
                }
            }
            None => RequestInputOutput {
                provided: false,
                values: Default::default(),
            },
        })
    }

    #[tool(name = "enter_plan_mode", title = "Plan first", category = "system",
           aliases = ["EnterPlanMode"], read_only, idempotent,
           description = "Switch this conversation to plan mode before a multi-step or risky task: only read-only tools run until you present the plan with exit_plan_mode and the person approves it.")]
    async fn enter_plan_mode(&self, _: &NoInput, ctx: &ToolContext) -> ToolResult<PlanModeOutput> {
        let scheduler = self.scheduler()?;
        scheduler
            .policy()
            .enter_plan(&ctx.conversation_id)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(PlanModeOutput {
            planning: true,
            note: "Plan mode: read-only tools only. Investigate, then present the plan with exit_plan_mode.".into(),
        })
    }

    #[tool(name = "exit_plan_mode", title = "Present the plan", category = "system",
           aliases = ["ExitPlanMode"], read_only, timeout = WAIT_FOR_PERSON,
           description = "Show the person your plan (Markdown) to approve, change or reject. Approved: plan mode ends and you carry it out (each risky step is still reviewed). Otherwise you stay in plan mode and revise.")]
    async fn exit_plan_mode(
        &self,
        input: &ExitPlanModeInput,
        ctx: &ToolContext,
    ) -> ToolResult<ExitPlanModeOutput> {
        let plan = input.plan.trim();
        if plan.is_empty() {
            return Err(ToolError::invalid("`plan` is empty: write the steps"));
        }
        let scheduler = self.scheduler()?;
        let schema = json!({
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "revise"], "title": "Your decision"},
                "notes": {"type": "string", "title": "Notes or changes (optional)"}
            },
            "required": ["decision"]
        });
        let waiting = format!("A plan to approve: {}", first_line(plan));
        let message = format!("The assistant's plan:\n\n{plan}");
        let answer = self.ask(ctx, waiting, message, schema).await?;
        let notes = words(answer.as_ref().and_then(|a| a.get("notes")));
        let approved = answer
            .as_ref()
            .and_then(|a| a.get("decision"))
            .and_then(Value::as_str)
            == Some("approve");
        if !approved {
            return Ok(ExitPlanModeOutput {
                approved,
                notes,
                note: "Not approved: still in plan mode. Revise the plan (follow the notes) or ask what they want.".into(),
            });
        }
        let policy = scheduler.policy();
        policy
            .leave_plan(&ctx.conversation_id)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let note = if policy.person_mode() == crate::Mode::Plan {
            "Approved, but the person's own mode is plan: only read-only tools run until they change it."
        } else {
            "Approved: carry it out. Each risky step is still reviewed."
        };
        Ok(ExitPlanModeOutput {
            approved,
            notes,
            note: note.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_form_offers_the_choices_and_the_persons_own_words() {
        let questions: Vec<Question> = serde_json::from_value(json!([
            {"question": "Which train?", "header": "Train", "options": [{"label": "9:40", "description": "direct"}, {"label": "10:10"}]},
            {"question": "Which meals?", "options": [{"label": "breakfast"}, {"label": "dinner"}], "multiSelect": true},
            {"question": "Anything else?"}
        ]))
        .unwrap();
        let form = question_form(&questions).unwrap();
        let p = &form["properties"];
        assert_eq!(p["q0"]["enum"], json!(["9:40", "10:10"]));
        assert_eq!(p["q0"]["title"], "Train — Which train?");
        assert_eq!(p["q0"]["description"], "9:40: direct");
        assert_eq!(p["q1"]["type"], "array");
        assert_eq!(p["q1"]["items"]["enum"], json!(["breakfast", "dinner"]));
        assert_eq!(p["q1_other"]["type"], "string");
        assert_eq!(p["q2"]["type"], "string");
        assert!(p.get("q2_other").is_none());
        assert!(question_form(&[]).is_err());
    }

    #[test]
    fn secrets_are_never_asked_for_in_a_form() {
        for name in [
            "password",
            "API_KEY",
            "github_token",
            "bank_pin",
            "otp_code",
            "Your PIN",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["city", "nights", "email", "shipping_address", "opinion"] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
