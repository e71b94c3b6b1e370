//! Templates in a chain's arguments, conditions and outputs, evaluated with minijinja against
//! `{ inputs, steps }` (each step: `ok`, `skipped`, `result`, `error`). A string that is one
//! `{{ expression }}` keeps the value's type (a list stays a list); a string with text around
//! its templates becomes text. Undefined names are errors, never empty strings.

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::OnceLock;

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env
    })
}

/// What a template may name where it stands: the inputs, and the steps before it.
pub struct Scope<'a> {
    pub inputs: &'a HashSet<&'a str>,
    pub steps: &'a HashSet<String>,
}

impl Scope<'_> {
    fn check_names(&self, names: HashSet<String>) -> Result<(), String> {
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        for name in names {
            let mut parts = name.split('.');
            match (parts.next(), parts.next()) {
                (Some("inputs"), Some(input)) if self.inputs.contains(input) => {}
                (Some("inputs"), Some(input)) => {
                    return Err(format!("`inputs.{input}` is not an input"));
                }
                (Some("steps"), Some(step)) if self.steps.contains(step) => {}
                (Some("steps"), Some(step)) => {
                    return Err(format!("`steps.{step}` is not an earlier step"));
                }
                (Some("inputs" | "steps"), None) => {}
                (Some(other), _) => {
                    return Err(format!(
                        "`{other}` is unknown: templates name `inputs.…` and `steps.<earlier step>.…`"
                    ));
                }
                (None, _) => {}
            }
        }
        Ok(())
    }
}

/// The expression of a string that is exactly one `{{ … }}`.
fn whole(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then_some(inner.trim())
}

pub fn check_expression(expression: &str, scope: &Scope<'_>) -> Result<(), String> {
    let compiled = env()
        .compile_expression(expression)
        .map_err(|e| format!("{expression:?}: {e}"))?;
    scope.check_names(compiled.undeclared_variables(true))
}

/// Checks every template in `value` (strings anywhere in it).
pub fn check_value(value: &Value, scope: &Scope<'_>) -> Result<(), String> {
    match value {
        Value::String(text) if text.contains("{{") || text.contains("{%") => {
            if let Some(expression) = whole(text) {
                return check_expression(expression, scope);
            }
            let template = env()
                .template_from_str(text)
                .map_err(|e| format!("{text:?}: {e}"))?;
            scope.check_names(template.undeclared_variables(true))
        }
        Value::Array(items) => items.iter().try_for_each(|v| check_value(v, scope)),
        Value::Object(map) => map.values().try_for_each(|v| check_value(v, scope)),
        _ => Ok(()),
    }
}

/// What templates see: the inputs and the steps so far. Kept as template values, so a step
/// adds its record once instead of the whole context being converted for every template.
pub struct Context {
    inputs: minijinja::Value,
    steps: std::collections::BTreeMap<String, minijinja::Value>,
}

impl Context {
    pub fn new(inputs: &Value) -> Context {
        Context {
            inputs: minijinja::Value::from_serialize(inputs),
            steps: Default::default(),
        }
    }

    pub fn add_step(&mut self, id: &str, record: &Value) {
        self.steps
            .insert(id.to_string(), minijinja::Value::from_serialize(record));
    }

    fn value(&self) -> minijinja::Value {
        minijinja::context! {
            inputs => self.inputs.clone(),
            steps => minijinja::Value::from(self.steps.clone()),
        }
    }
}

/// `value` with its templates filled in from `context`.
pub fn render(value: &Value, context: &Context) -> Result<Value, String> {
    if !has_templates(value) {
        return Ok(value.clone());
    }
    render_in(value, &context.value())
}

fn has_templates(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains("{{") || text.contains("{%"),
        Value::Array(items) => items.iter().any(has_templates),
        Value::Object(map) => map.values().any(has_templates),
        _ => false,
    }
}

fn render_in(value: &Value, context: &minijinja::Value) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) if text.contains("{{") || text.contains("{%") => {
            if let Some(expression) = whole(text) {
                let result = env()
                    .compile_expression(expression)
                    .and_then(|e| e.eval(context))
                    .map_err(|e| format!("{{{{ {expression} }}}}: {e}"))?;
                if result.is_undefined() {
                    return Err(format!("{{{{ {expression} }}}} is undefined"));
                }
                serde_json::to_value(&result).map_err(|e| e.to_string())?
            } else {
                Value::String(
                    env()
                        .render_str(text, context)
                        .map_err(|e| format!("{text:?}: {e}"))?,
                )
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_in(v, context))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_in(v, context)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// Whether a step's condition holds.
pub fn holds(expression: &str, context: &Context) -> Result<bool, String> {
    let result = env()
        .compile_expression(expression)
        .and_then(|e| e.eval(context.value()))
        .map_err(|e| format!("when {expression:?}: {e}"))?;
    if result.is_undefined() {
        return Err(format!("when {expression:?}: undefined"));
    }
    Ok(result.is_true())
}

/// Whether `value`'s templates name only the inputs (so it can be rendered before the run).
pub fn needs_only_inputs(value: &Value) -> bool {
    let mut names = Vec::new();
    collect(value, &mut names);
    names
        .iter()
        .all(|n| n == "inputs" || n.starts_with("inputs."))
}

fn collect(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::String(text) if text.contains("{{") || text.contains("{%") => {
            let found = match whole(text) {
                Some(expression) => env()
                    .compile_expression(expression)
                    .map(|e| e.undeclared_variables(true)),
                None => env()
                    .template_from_str(text)
                    .map(|t| t.undeclared_variables(true)),
            };
            match found {
                Ok(found) => names.extend(found),
                Err(_) => names.push("?".into()),
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, names)),
        Value::Object(map) => map.values().for_each(|v| collect(v, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_templates_keep_their_type_and_text_templates_become_text() {
        let mut context = Context::new(&json!({"n": 3}));
        context.add_step("list", &json!({"ok": true, "result": {"tasks": [1, 2]}}));
        let args = json!({
            "ids": "{{ steps.list.result.tasks }}",
            "title": "Found {{ steps.list.result.tasks | length }} tasks",
            "n": "{{ inputs.n + 1 }}",
            "plain": 7
        });
        assert_eq!(
            render(&args, &context).unwrap(),
            json!({"ids": [1, 2], "title": "Found 2 tasks", "n": 4, "plain": 7})
        );
        assert!(holds("steps.list.ok and inputs.n > 2", &context).unwrap());
        let missing = render(&json!("{{ steps.list.result.nope }}"), &context).unwrap_err();
        assert!(
            missing.contains("nope") || missing.contains("undefined"),
            "{missing}"
        );
        assert!(needs_only_inputs(&json!({"a": "{{ inputs.n }}", "b": 1})));
        assert!(!needs_only_inputs(&json!({"a": "{{ steps.list.result }}"})));
    }
}
