//! Secrets never reach an audit row, an event or a log line: arguments are redacted by the
//! tool's declared `secret_args`, by secret-looking key names, and by well-known token shapes.

use serde_json::Value;

pub const REDACTED: &str = "[redacted]";

const SECRET_KEY_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "authorization",
    "credential",
    "credentials",
    "privatekey",
    "cookie",
];

fn is_secret_key(key: &str, declared: &[String]) -> bool {
    if declared.iter().any(|d| d == key) {
        return true;
    }
    let normalized: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    SECRET_KEY_SUFFIXES.iter().any(|s| normalized.ends_with(s))
}

/// A well-known token shape (`sk-…`, `ghp_…`, `AKIA…`, a JWT). A list, because issuers give
/// their tokens fixed prefixes precisely so that scanners can find them; what it misses (a
/// bare password) is caught by what read it (`placeholders`), not by its shape.
pub fn looks_like_secret(value: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "sk_live_",
        "rk_live_",
        "sk-",
        "ghp_",
        "gho_",
        "ghs_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "glpat-",
        "AKIA",
        "AIza",
    ];
    let jwt = value.starts_with("eyJ") && value.matches('.').count() == 2;
    value.len() >= 16
        && !value.contains(' ')
        && (jwt || PREFIXES.iter().any(|p| value.starts_with(p)))
}

pub fn redact(value: &Value, declared: &[String]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k, declared) && !v.is_null() {
                        Value::String(REDACTED.into())
                    } else {
                        redact(v, declared)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| redact(v, declared)).collect()),
        Value::String(s) if looks_like_secret(s) => Value::String(REDACTED.into()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_declared_named_and_shaped_secrets_only() {
        let args = json!({"user": "bob", "password": "hunter2", "api_key": "x", "max_tokens": 5,
            "nested": [{"accessToken": "abc"}], "note": "sk-ant-REDACTME1234567890", "pin": "1234"});
        let out = redact(&args, &["pin".to_string()]);
        assert_eq!(out["user"], "bob");
        assert_eq!(out["max_tokens"], 5);
        for (path, v) in [
            ("/password", &out["password"]),
            ("/api_key", &out["api_key"]),
            ("/pin", &out["pin"]),
            ("/note", &out["note"]),
            ("/nested/0/accessToken", &out["nested"][0]["accessToken"]),
        ] {
            assert_eq!(v, REDACTED, "{path}");
        }
        assert!(!out.to_string().contains("hunter2"));
    }
}
