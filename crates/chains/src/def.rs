//! A chain file (TOML): its inputs, its steps — each a tool and its arguments, with templated
//! references to the inputs and earlier steps' results, a condition and what to do on error —
//! and its outputs. Parsed and checked whole before anything runs: a bad file is refused with
//! its line and field named.

use crate::template;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A checked chain.
#[derive(Clone, Debug)]
pub struct Chain {
    pub name: String,
    pub description: String,
    pub inputs: BTreeMap<String, Input>,
    pub steps: Vec<Step>,
    pub outputs: BTreeMap<String, String>,
    /// Where it came from (a file in the data dir or a toolpack).
    pub source: PathBuf,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(rename = "type", default)]
    pub kind: InputKind,
    #[serde(default)]
    pub description: String,
    pub default: Option<serde_json::Value>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    #[default]
    String,
    Number,
    Integer,
    Boolean,
    Array,
    Object,
}

impl InputKind {
    pub fn json_type(self) -> &'static str {
        match self {
            InputKind::String => "string",
            InputKind::Number => "number",
            InputKind::Integer => "integer",
            InputKind::Boolean => "boolean",
            InputKind::Array => "array",
            InputKind::Object => "object",
        }
    }

    fn accepts(self, value: &serde_json::Value) -> bool {
        match self {
            InputKind::String => value.is_string(),
            InputKind::Number => value.is_number(),
            InputKind::Integer => value.is_i64() || value.is_u64(),
            InputKind::Boolean => value.is_boolean(),
            InputKind::Array => value.is_array(),
            InputKind::Object => value.is_object(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Step {
    pub id: String,
    pub tool: String,
    /// Arguments; strings may hold `{{ … }}` templates.
    pub args: serde_json::Value,
    /// A condition (`steps.mail.result.count > 0`); the step is skipped when false.
    pub when: Option<String>,
    pub on_error: OnError,
    /// The line the step starts on, for messages.
    pub line: usize,
}

/// What a failed step does to the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// The chain fails (the default).
    Stop,
    /// The chain goes on; the step's result is `ok = false`.
    Skip,
    /// Tried again up to `times` more, waiting `backoff`, doubling each time; then it stops.
    Retry { times: u32, backoff: Duration },
}

impl OnError {
    /// `stop`, `skip`, `retry(3)` or `retry(3, 2s)` (the wait: `500ms`, `2s`, `1m`).
    pub fn parse(text: &str) -> Result<OnError, String> {
        let text = text.trim();
        match text {
            "stop" => return Ok(OnError::Stop),
            "skip" => return Ok(OnError::Skip),
            _ => {}
        }
        let inner = text
            .strip_prefix("retry(")
            .and_then(|t| t.strip_suffix(')'))
            .ok_or_else(|| format!("{text:?}: use stop, skip, retry(N) or retry(N, 2s)"))?;
        let mut parts = inner.split(',').map(str::trim);
        let times: u32 = parts
            .next()
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..=10).contains(n))
            .ok_or_else(|| format!("{text:?}: retry takes 1 to 10 tries, e.g. retry(3)"))?;
        let backoff = match parts.next() {
            None => Duration::from_secs(1),
            Some(wait) => parse_wait(wait).ok_or_else(|| {
                format!("{text:?}: the wait {wait:?} is not like 500ms, 2s or 1m")
            })?,
        };
        if parts.next().is_some() {
            return Err(format!("{text:?}: retry(N) or retry(N, wait)"));
        }
        Ok(OnError::Retry { times, backoff })
    }
}

fn parse_wait(text: &str) -> Option<Duration> {
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = number.parse().ok()?;
    let wait = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n * 60),
        _ => return None,
    };
    (wait <= Duration::from_secs(600)).then_some(wait)
}

/// A chain file that cannot be used, with where.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {field}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ChainFileError {
    pub file: PathBuf,
    pub line: Option<usize>,
    /// The field (`steps[2].tool`), or `file` for the whole.
    pub field: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChain {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    inputs: BTreeMap<String, Input>,
    #[serde(default)]
    steps: Vec<toml::Spanned<RawStep>>,
    #[serde(default)]
    outputs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    id: String,
    tool: String,
    args: Option<toml::Value>,
    when: Option<String>,
    #[serde(default, rename = "on_error", alias = "onError")]
    on_error: Option<String>,
}

const MAX_STEPS: usize = 50;

fn not_a_name(text: &str) -> String {
    format!("{text:?}: use lowercase letters, digits and `_`, starting with a letter")
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && text.len() <= 40
}

impl Chain {
    pub fn load(path: &Path) -> Result<Chain, ChainFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ChainFileError {
            file: path.to_path_buf(),
            line: None,
            field: "file".into(),
            message: e.to_string(),
        })?;
        Chain::parse(&text, path)
    }

    pub fn parse(text: &str, source: &Path) -> Result<Chain, ChainFileError> {
        let file = ChainText { text, source };
        let raw: RawChain = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| file.line_of(s.start));
            file.error(line, "file".into(), e.message().to_string())
        })?;
        file.check_name(&raw.name)?;
        file.check_inputs(&raw.inputs)?;
        if raw.steps.is_empty() || raw.steps.len() > MAX_STEPS {
            return Err(file.error(
                None,
                "steps".into(),
                format!("a chain has 1 to {MAX_STEPS} steps (`[[steps]]`)"),
            ));
        }
        let inputs: HashSet<&str> = raw.inputs.keys().map(String::as_str).collect();
        let mut earlier: HashSet<String> = HashSet::new();
        let mut steps = Vec::new();
        for (i, spanned) in raw.steps.iter().enumerate() {
            let scope = template::Scope {
                inputs: &inputs,
                steps: &earlier,
            };
            let step = file.check_step(i, spanned, &scope)?;
            earlier.insert(step.id.clone());
            steps.push(step);
        }
        let scope = template::Scope {
            inputs: &inputs,
            steps: &earlier,
        };
        file.check_outputs(&raw.outputs, &scope)?;
        Ok(Chain {
            name: raw.name,
            description: raw.description,
            inputs: raw.inputs,
            steps,
            outputs: raw.outputs,
            source: source.to_path_buf(),
        })
    }

    /// The inputs of one run: given ones checked by type, defaults filled in, missing ones named.
    pub fn bind_inputs(&self, given: &serde_json::Value) -> Result<serde_json::Value, String> {
        let empty = serde_json::Map::new();
        let given = match given {
            serde_json::Value::Null => &empty,
            serde_json::Value::Object(map) => map,
            _ => return Err("the inputs must be an object".into()),
        };
        if let Some(unknown) = given.keys().find(|k| !self.inputs.contains_key(*k)) {
            return Err(format!(
                "{:?} has no input {unknown:?} (it takes: {})",
                self.name,
                self.inputs.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        let mut bound = serde_json::Map::new();
        for (name, input) in &self.inputs {
            match given.get(name).or(input.default.as_ref()) {
                Some(value) if input.kind.accepts(value) => {
                    bound.insert(name.clone(), value.clone());
                }
                Some(_) => {
                    return Err(format!(
                        "input {name:?} must be a {}",
                        input.kind.json_type()
                    ));
                }
                None => return Err(format!("input {name:?} is missing")),
            }
        }
        Ok(serde_json::Value::Object(bound))
    }

    /// The JSON schema of its inputs (the chain as a tool).
    pub fn input_schema(&self) -> serde_json::Value {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (name, input) in &self.inputs {
            let mut property = serde_json::json!({"type": input.kind.json_type()});
            if !input.description.is_empty() {
                property["description"] = serde_json::json!(input.description);
            }
            if let Some(default) = &input.default {
                property["default"] = default.clone();
            } else {
                required.push(name.clone());
            }
            properties.insert(name.clone(), property);
        }
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    }
}

/// The text of a chain file being checked, and where it came from: its errors name the line.
struct ChainText<'a> {
    text: &'a str,
    source: &'a Path,
}

impl ChainText<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn error(&self, line: Option<usize>, field: String, message: String) -> ChainFileError {
        ChainFileError {
            file: self.source.to_path_buf(),
            line,
            field,
            message,
        }
    }

    fn check_name(&self, name: &str) -> Result<(), ChainFileError> {
        if is_name(name) {
            return Ok(());
        }
        Err(self.error(None, "name".into(), not_a_name(name)))
    }

    fn check_inputs(&self, inputs: &BTreeMap<String, Input>) -> Result<(), ChainFileError> {
        for (name, input) in inputs {
            if !is_name(name) {
                return Err(self.error(
                    None,
                    format!("inputs.{name}"),
                    "input names use lowercase letters, digits and `_`".into(),
                ));
            }
            if let Some(default) = &input.default
                && !input.kind.accepts(default)
            {
                return Err(self.error(
                    None,
                    format!("inputs.{name}.default"),
                    format!("is not a {}", input.kind.json_type()),
                ));
            }
        }
        Ok(())
    }

    /// Step `i`, checked against the inputs and the steps before it (`scope`).
    fn check_step(
        &self,
        i: usize,
        spanned: &toml::Spanned<RawStep>,
        scope: &template::Scope<'_>,
    ) -> Result<Step, ChainFileError> {
        let at = self.line_of(spanned.span().start);
        let line = Some(at);
        let step = spanned.get_ref();
        let fail =
            |name: &str, message: String| self.error(line, format!("steps[{i}].{name}"), message);
        if !is_name(&step.id) {
            return Err(fail("id", not_a_name(&step.id)));
        }
        if scope.steps.contains(&step.id) {
            return Err(fail(
                "id",
                format!("{:?} is used by an earlier step", step.id),
            ));
        }
        if step.tool.trim().is_empty() {
            return Err(fail("tool", "names no tool".into()));
        }
        let args = match &step.args {
            None => serde_json::json!({}),
            Some(toml::Value::Table(t)) => {
                serde_json::to_value(t).map_err(|e| fail("args", e.to_string()))?
            }
            Some(_) => {
                return Err(fail(
                    "args",
                    "must be a table, e.g. args = { path = \"notes.md\" }".into(),
                ));
            }
        };
        template::check_value(&args, scope).map_err(|e| fail("args", e))?;
        if let Some(when) = &step.when {
            template::check_expression(when, scope).map_err(|e| fail("when", e))?;
        }
        let on_error = match &step.on_error {
            None => OnError::Stop,
            Some(text) => OnError::parse(text).map_err(|e| fail("on_error", e))?,
        };
        Ok(Step {
            id: step.id.clone(),
            tool: step.tool.trim().to_string(),
            args,
            when: step.when.clone(),
            on_error,
            line: at,
        })
    }

    fn check_outputs(
        &self,
        outputs: &BTreeMap<String, String>,
        scope: &template::Scope<'_>,
    ) -> Result<(), ChainFileError> {
        for (name, expression) in outputs {
            template::check_value(&serde_json::json!(expression), scope)
                .map_err(|e| self.error(None, format!("outputs.{name}"), e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "tidy_notes"
description = "Read a note, file a task"

[inputs.path]
type = "string"
description = "the note"

[inputs.urgent]
type = "boolean"
default = false

[[steps]]
id = "read"
tool = "read_file"
args = { path = "{{ inputs.path }}" }

[[steps]]
id = "task"
tool = "create_task"
when = "steps.read.ok and inputs.urgent"
on_error = "retry(2, 10ms)"
args = { title = "Follow up: {{ inputs.path }}" }

[outputs]
note = "{{ steps.read.result }}"
"#;

    fn parse(text: &str) -> Result<Chain, ChainFileError> {
        Chain::parse(text, Path::new("chains/x.toml"))
    }

    #[test]
    fn a_good_file_parses_with_its_steps_and_error_modes() {
        let chain = parse(GOOD).unwrap();
        assert_eq!(chain.steps.len(), 2);
        assert_eq!(chain.steps[1].line, 18);
        assert_eq!(
            chain.steps[1].on_error,
            OnError::Retry {
                times: 2,
                backoff: Duration::from_millis(10)
            }
        );
        assert_eq!(
            chain.input_schema()["required"],
            serde_json::json!(["path"])
        );
        let bound = chain
            .bind_inputs(&serde_json::json!({"path": "a.md"}))
            .unwrap();
        assert_eq!(bound, serde_json::json!({"path": "a.md", "urgent": false}));
        assert!(
            chain
                .bind_inputs(&serde_json::json!({"path": 3}))
                .unwrap_err()
                .contains("must be a string")
        );
        assert!(
            chain
                .bind_inputs(&serde_json::json!({}))
                .unwrap_err()
                .contains("missing")
        );
    }

    #[test]
    fn bad_files_name_the_line_and_the_field() {
        let cases = [
            (
                GOOD.replace("tool = \"create_task\"", "tool = \"\""),
                "x.toml:18: steps[1].tool: names no tool",
            ),
            (
                GOOD.replace("id = \"task\"", "id = \"read\""),
                "x.toml:18: steps[1].id: \"read\" is used by an earlier step",
            ),
            (
                GOOD.replace("retry(2, 10ms)", "retry(99)"),
                "x.toml:18: steps[1].on_error",
            ),
            (
                GOOD.replace("steps.read.ok and", "steps.later.ok and"),
                "x.toml:18: steps[1].when: `steps.later` is not an earlier step",
            ),
            (
                GOOD.replace(
                    "{{ inputs.path }}\" }\n\n[[steps]]",
                    "{{ inputs.nope }}\" }\n\n[[steps]]",
                ),
                "x.toml:13: steps[0].args: `inputs.nope` is not an input",
            ),
            (
                GOOD.replace(
                    "{{ inputs.path }}\" }\n\n[[steps]]",
                    "{{ inputs.path }\" }\n\n[[steps]]",
                ),
                "x.toml:13: steps[0].args",
            ),
            (
                GOOD.replace(
                    "tool = \"read_file\"",
                    "tool = \"read_file\"\nrun = \"rm -rf /\"",
                ),
                "x.toml:16: file: unknown field `run`",
            ),
            (
                GOOD.replace("name = \"tidy_notes\"", "name = \"Tidy Notes\""),
                "x.toml: name:",
            ),
        ];
        for (text, want) in cases {
            let err = parse(&text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("chains/{want}")) || err.contains(want),
                "want {want:?}, got {err:?}"
            );
        }
    }
}
