//! Text from outside (a page, a mail, a manifest, a server, a model, a tool name in a rejected
//! call) printed where a person reads it: a terminal, a log file. Control characters would let it
//! move the cursor, erase or forge lines, or retitle the window; bidirectional overrides would
//! let it show text in another order than it is ("Trojan Source"). They are shown escaped.

use std::borrow::Cow;

fn needs_escape(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        // C0, DEL, C1 controls (ESC, CR, backspace, CSI…).
        c if c.is_control() => true,
        // Bidi embeddings, overrides and isolates; line and paragraph separators.
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}'
        | '\u{2028}'
        | '\u{2029}' => true,
        _ => false,
    }
}

fn escape(s: &str, keep_lines: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, keep_lines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c, keep_lines) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One field of a line (a name, a title, a table cell): every control character escaped,
/// newlines included, so it cannot start a line of its own.
pub fn printable_field(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// A short field written by someone else (a pack's field name, an item it names): printable,
/// on one line, and at most `max` characters, so it cannot crowd or spoof the line it is in.
pub fn printable_short(s: &str, max: usize) -> String {
    let field = printable_field(s);
    match field.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &field[..cut]),
        None => field.into_owned(),
    }
}

/// Free text of several lines (a tool's output, an error message): newlines and tabs kept,
/// every other control character escaped.
pub fn printable_text(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// Every string value in a JSON document made printable (a server's form: titles, descriptions,
/// choices). Object keys are left as they are: they are what the answer must be keyed by.
pub fn printable_json(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(printable_text(&s).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(printable_json).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, printable_json(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_moves_the_cursor_or_reorders_text() {
        assert_eq!(printable_field("read_file"), "read_file");
        assert_eq!(printable_field("x\u{1b}[2K\rOK"), "x\\u{1b}[2K\\rOK");
        assert_eq!(printable_field("a\nb"), "a\\nb");
        assert_eq!(printable_text("a\nb\u{7}"), "a\nb\\u{7}");
        assert_eq!(printable_text("abc\u{202E}fdp.exe"), "abc\\u{202e}fdp.exe");
        assert_eq!(printable_text("中文 ok"), "中文 ok");
        assert_eq!(
            printable_json(serde_json::json!({"a\u{1b}": ["x\u{202E}y", 1]})),
            serde_json::json!({"a\u{1b}": ["x\\u{202e}y", 1]}),
            "values escaped, keys kept"
        );
    }
}
