//! Effects of an MCP tool call, from the toolpack's declarations and the call's arguments.
//!
//! Declarations are templates (`{"kind": "fs.write", "path": "{path}"}`); this fills them in.
//! Anything that cannot be filled in exactly — an argument missing, an unknown kind, a value
//! of the wrong shape — becomes the unknown `mcp.call` effect, which scores high and asks:
//! a toolpack can only make its calls look *more* risky by declaring badly, never less.

use crate::manifest::EffectTemplate;
use cowork_contract::{Effect, EffectEnv, EffectKind};
use serde_json::{Map, Value};

/// The concrete effects of one call. `None` declarations mean the tool declared nothing.
pub fn effects_of(
    server: &str,
    tool: &str,
    declared: Option<&[EffectTemplate]>,
    args: &Value,
    env: &EffectEnv,
) -> Vec<Effect> {
    let unknown = |unfilled: Option<String>| {
        vec![Effect::McpCall {
            server: server.to_string(),
            tool: tool.to_string(),
            unfilled,
        }]
    };
    let Some(templates) = declared else {
        return unknown(None);
    };
    let mut out = Vec::new();
    for template in templates {
        match fill(template, args, env) {
            Ok(effects) => out.extend(effects),
            Err(field) => return unknown(Some(shown_field(&field))),
        }
    }
    out.dedup();
    out
}

/// Effect fields that hold a list of people: filled with the whole argument, and a missing or
/// null argument is nobody (`[]`), a single string one person.
const LIST_FIELDS: &[&str] = &["recipients", "attendees"];

/// A field's name as the person is shown it: the pack wrote it, so printable and short.
fn shown_field(field: &str) -> String {
    cowork_contract::text::printable_short(field, 40)
}

/// One template → one effect per element of the array argument it names (if any); the field
/// that could not be filled, when one cannot (`kind` when the effect is not one Cowork knows).
fn fill(template: &EffectTemplate, args: &Value, env: &EffectEnv) -> Result<Vec<Effect>, String> {
    // The first field naming an array argument drives the expansion; list-valued effect fields
    // (recipients) take the whole list instead.
    let spread = template
        .iter()
        .filter(|(field, _)| !LIST_FIELDS.contains(&field.as_str()))
        .filter_map(|(_, v)| v.as_str().and_then(placeholder))
        .find(|name| args.get(name).is_some_and(Value::is_array));
    let rows: Vec<Option<&Value>> = match spread.and_then(|name| args[name].as_array()) {
        Some(elements) => elements.iter().map(Some).collect(),
        None => vec![None],
    };
    let mut out = Vec::new();
    for element in rows {
        let mut object = Map::new();
        for (field, value) in template {
            let filled = match value.as_str() {
                Some(text) if field != "kind" => {
                    fill_text(field, text, args, spread, element, env).ok_or(field.clone())?
                }
                _ => value.clone(),
            };
            object.insert(field.clone(), filled);
        }
        let effect: Effect = serde_json::from_value(Value::Object(object.clone()))
            .map_err(|e| unfit(&e, &object))?;
        // Cowork's verdicts on a pack are never the pack's to declare (it could name another
        // server, or pass itself off as merely unknown).
        if matches!(
            effect.kind(),
            EffectKind::McpCall | EffectKind::McpUnconfined | EffectKind::ModelSample
        ) {
            return Err("kind".into());
        }
        out.push(effect);
    }
    Ok(out)
}

/// The field a filled effect does not fit: the one serde names as missing or unknown, the one
/// holding a value serde refused, else the kind.
fn unfit(error: &serde_json::Error, object: &Map<String, Value>) -> String {
    let text = error.to_string();
    let quoted = text.split('`').nth(1).unwrap_or_default();
    if text.starts_with("missing field") || text.starts_with("unknown field") {
        return quoted.to_string();
    }
    object
        .iter()
        .find(|(field, value)| *field != "kind" && value.as_str() == Some(quoted))
        .map_or_else(|| "kind".to_string(), |(field, _)| field.clone())
}

/// `"{path}"` → `Some("path")`: a field that is exactly one placeholder.
fn placeholder(text: &str) -> Option<&str> {
    text.strip_prefix('{')?
        .strip_suffix('}')
        .filter(|n| !n.contains(['{', '}']))
}

fn fill_text(
    field: &str,
    text: &str,
    args: &Value,
    spread: Option<&str>,
    element: Option<&Value>,
    env: &EffectEnv,
) -> Option<Value> {
    let lookup = |name: &str| -> Option<Value> {
        if Some(name) == spread {
            element.cloned()
        } else {
            args.get(name).cloned()
        }
    };
    // A whole-field placeholder keeps the argument's JSON shape (recipients stay a list).
    let value = if let Some(name) = placeholder(text) {
        match (lookup(name), LIST_FIELDS.contains(&field)) {
            (None | Some(Value::Null), true) => Value::Array(vec![]),
            (Some(Value::String(one)), true) => Value::Array(vec![Value::String(one)]),
            // An amount stays as written: text, so no rounding.
            (Some(Value::Number(n)), false) if field == "amount" => Value::String(n.to_string()),
            (value, _) => value?,
        }
    } else {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}')? + start;
            match lookup(&rest[start + 1..end])? {
                Value::String(s) => out.push_str(&s),
                Value::Number(n) => out.push_str(&n.to_string()),
                _ => return None,
            }
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        Value::String(out)
    };
    // An origin is judged as the browser and the web tools see it (`example.com` is
    // `https://example.com`), so a rule naming the site matches it.
    if field == "origin" {
        let raw = value.as_str()?;
        let address = if raw.contains("://") {
            raw.to_string()
        } else {
            format!("https://{raw}")
        };
        let (_, origin) = cowork_contract::address::web_origin(&address).ok()?;
        return Some(Value::String(origin));
    }
    // Paths are judged where they really point (symlinks, `..`, `~`), like builtin tools.
    if field == "path" {
        let path = value.as_str()?;
        return Some(Value::String(env.resolve_path(path).display().to_string()));
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn templates(v: Value) -> Vec<EffectTemplate> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn templates_fill_from_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let env = EffectEnv {
            workspace_roots: vec![ws.clone()],
            home: Some(ws.clone()),
            ..Default::default()
        };
        let read = templates(json!([{"kind": "fs.read", "path": "{paths}"}]));
        let got = effects_of(
            "fs",
            "read_multiple_files",
            Some(&read),
            &json!({"paths": ["a.txt", "sub/../b.txt"]}),
            &env,
        );
        assert_eq!(
            got,
            [
                Effect::FsRead {
                    path: ws.join("a.txt").display().to_string()
                },
                Effect::FsRead {
                    path: ws.join("b.txt").display().to_string()
                },
            ]
        );
        let mv = templates(
            json!([{"kind": "fs.delete", "path": "{source}"}, {"kind": "fs.write", "path": "{destination}"}]),
        );
        let got = effects_of(
            "fs",
            "move_file",
            Some(&mv),
            &json!({"source": "x", "destination": "/etc/y"}),
            &env,
        );
        assert_eq!(
            got,
            [
                Effect::FsDelete {
                    path: ws.join("x").display().to_string()
                },
                Effect::FsWrite {
                    path: "/etc/y".into()
                }
            ]
        );
        let fetch = templates(json!([{"kind": "net.fetch", "origin": "https://{host}"}]));
        assert_eq!(
            effects_of(
                "w",
                "get",
                Some(&fetch),
                &json!({"host": "example.com"}),
                &env
            ),
            [Effect::NetFetch {
                origin: "https://example.com".into()
            }]
        );
        let mail =
            templates(json!([{"kind": "mail.send", "account": "work", "recipients": "{to}"}]));
        assert_eq!(
            effects_of(
                "m",
                "send",
                Some(&mail),
                &json!({"to": ["a@x.com", "b@y.com"]}),
                &env
            ),
            [Effect::MailSend {
                account: "work".into(),
                recipients: vec!["a@x.com".into(), "b@y.com".into()]
            }],
            "a list-valued field takes the whole list"
        );
        assert!(
            effects_of("t", "now", Some(&[]), &json!({}), &env).is_empty(),
            "declared: no effects"
        );
    }

    #[test]
    fn anything_inexact_is_unknown_and_names_the_field_it_could_not_fill() {
        let env = EffectEnv::default();
        let unknown = |unfilled: Option<&str>| {
            vec![Effect::McpCall {
                server: "s".into(),
                tool: "t".into(),
                unfilled: unfilled.map(String::from),
            }]
        };
        let write = templates(json!([{"kind": "fs.write", "path": "{path}"}]));
        assert_eq!(
            effects_of("s", "t", None, &json!({}), &env),
            unknown(None),
            "undeclared"
        );
        assert_eq!(
            effects_of("s", "t", Some(&write), &json!({}), &env),
            unknown(Some("path")),
            "missing argument"
        );
        assert_eq!(
            effects_of("s", "t", Some(&write), &json!({"path": {"x": 1}}), &env),
            unknown(Some("path")),
            "wrong shape"
        );
        let bogus = templates(json!([{"kind": "fs.teleport", "path": "{path}"}]));
        assert_eq!(
            effects_of("s", "t", Some(&bogus), &json!({"path": "/x"}), &env),
            unknown(Some("kind")),
            "unknown kind"
        );
        // A pack cannot declare Cowork's verdicts: not another server's unknown call, nor text
        // of its own as the reason.
        let verdict = templates(
            json!([{"kind": "mcp.call", "server": "bank", "tool": "x", "unfilled": "{note}"}]),
        );
        assert_eq!(
            effects_of("s", "t", Some(&verdict), &json!({"note": "all fine"}), &env),
            unknown(Some("kind")),
            "a verdict declared"
        );
        let sensitive = templates(
            json!([{"kind": "sensitive.read", "category": "{category}", "subject": "{item}"}]),
        );
        assert_eq!(
            effects_of(
                "s",
                "t",
                Some(&sensitive),
                &json!({"category": "gossip", "item": "a"}),
                &env
            ),
            unknown(Some("category")),
            "a category outside the taxonomy"
        );
        assert_eq!(
            effects_of(
                "s",
                "t",
                Some(&sensitive),
                &json!({"category": "health", "item": "a"}),
                &env
            ),
            [Effect::SensitiveRead {
                category: cowork_contract::Sensitive::Health,
                subject: "a".into()
            }]
        );
        let long = "\u{202e}x".repeat(30);
        let weird = templates(json!([{"kind": "fs.write", long.clone(): "{path}"}]));
        let Effect::McpCall { unfilled, .. } =
            &effects_of("s", "t", Some(&weird), &json!({"path": "/x"}), &env)[0]
        else {
            panic!("unknown");
        };
        let shown = unfilled.as_deref().unwrap();
        assert!(
            shown.chars().count() <= 41 && !shown.contains('\u{202e}'),
            "{shown:?}"
        );
    }

    #[test]
    fn people_amounts_and_sites_fill_as_a_toolpack_author_means_them() {
        let env = EffectEnv::default();
        let share =
            templates(json!([{"kind": "data.share", "service": "drive", "recipients": "{email}"}]));
        assert_eq!(
            effects_of(
                "d",
                "share",
                Some(&share),
                &json!({"email": "a@x.com"}),
                &env
            ),
            [Effect::DataShare {
                service: "drive".into(),
                recipients: vec!["a@x.com".into()]
            }],
            "one address is a list of one"
        );
        let mail = templates(json!([
            {"kind": "mail.send", "account": "me", "recipients": "{to}"},
            {"kind": "mail.send", "account": "me", "recipients": "{cc}"}
        ]));
        let sent = effects_of("m", "send", Some(&mail), &json!({"to": ["b@y.com"]}), &env);
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_eq!(
            sent[1],
            Effect::MailSend {
                account: "me".into(),
                recipients: vec![]
            },
            "no cc is nobody, not unknown"
        );
        let pay = templates(json!([{"kind": "money.pay", "payee": "{to}", "amount": "{amount}"}]));
        assert_eq!(
            effects_of(
                "b",
                "pay",
                Some(&pay),
                &json!({"to": "US13", "amount": 0.01}),
                &env
            ),
            [Effect::MoneyPay {
                payee: "US13".into(),
                amount: Some("0.01".into())
            }]
        );
        assert_eq!(
            effects_of("b", "pay", Some(&pay), &json!({"amount": 5000}), &env),
            [Effect::McpCall {
                server: "b".into(),
                tool: "pay".into(),
                unfilled: Some("payee".into())
            }],
            "a payment with no payee is unknown"
        );
        let fetch = templates(json!([{"kind": "net.fetch", "origin": "{url}"}]));
        assert_eq!(
            effects_of(
                "w",
                "get",
                Some(&fetch),
                &json!({"url": "www.example.com/a?b"}),
                &env
            ),
            [Effect::NetFetch {
                origin: "https://www.example.com".into()
            }],
            "a bare host is a web address"
        );
    }
}
