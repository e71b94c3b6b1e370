//! A rule in words: what it covers, said by what its tool's specifier is matched against (the
//! effect table's subject column), so `run_command(sudo:*)` reads "Run a command: commands that
//! start with “sudo”" and `read_file(~/.ssh/**)` reads "Read a file: files in ~/.ssh". The
//! window shows this first and the rule's text beside it; the terminal's `rules list` too.

use super::ToolFacts;
use super::rules::Rule;
use crate::plain::{Words, words};
use cowork_contract::{EffectKind, Subject};

/// What `rule` covers, for a tool with `facts` (None: a pattern or a tool not installed now).
pub fn meaning(rule: &Rule, facts: Option<&ToolFacts>) -> Words {
    let name = Rule::tool_part(&rule.text).unwrap_or(&rule.text);
    if name.contains('*') {
        return pattern_meaning(name);
    }
    // The window says the tool by its own title in the person's language (a value named `tool_id`
    // is a tool's name); English falls back on the spec's title.
    let title = facts.map_or(name, |f| f.title.as_str());
    let tool = || ("tool_id", name.to_string());
    let Some(spec) = rule.specifier() else {
        return words(
            "rule.whole_tool",
            "{title}: every call",
            &[tool(), title_value(title)],
        );
    };
    let subject = facts.map_or(Subject::Nothing, |f| chief_subject(&f.kinds));
    let (key, template, slot, value) = subject_phrase(subject, spec);
    words(key, template, &[tool(), title_value(title), (slot, value)])
}

fn title_value(title: &str) -> (&'static str, String) {
    ("title", title.to_string())
}

/// A tool's specifier is read for its weightiest kind: a command before paths before people
/// before sites (the order in which `Rule::matches` would find something to refuse).
fn chief_subject(kinds: &[EffectKind]) -> Subject {
    const ORDER: [Subject; 4] = [
        Subject::Command,
        Subject::Path,
        Subject::People,
        Subject::Origin,
    ];
    let subjects: Vec<Subject> = kinds.iter().map(|k| k.class().subject).collect();
    ORDER
        .into_iter()
        .find(|s| subjects.contains(s))
        .or_else(|| subjects.into_iter().find(|s| *s != Subject::Nothing))
        .unwrap_or(Subject::Nothing)
}

type Phrase = (&'static str, &'static str, &'static str, String);

fn subject_phrase(subject: Subject, spec: &str) -> Phrase {
    match subject {
        Subject::Command => match spec.strip_suffix(":*") {
            Some(prefix) => (
                "rule.command_prefix",
                "{title}: commands that start with “{prefix}”",
                "prefix",
                prefix.trim().to_string(),
            ),
            None => (
                "rule.command",
                "{title}: the command “{command}”",
                "command",
                spec.to_string(),
            ),
        },
        Subject::Path => match spec.strip_suffix("/**") {
            Some(folder) if !folder.contains('*') => (
                "rule.files_in",
                "{title}: files in {folder}",
                "folder",
                folder.to_string(),
            ),
            _ => (
                "rule.files_matching",
                "{title}: files matching {pattern}",
                "pattern",
                spec.to_string(),
            ),
        },
        Subject::People => (
            "rule.people",
            "{title}: to {people}",
            "people",
            spec.to_string(),
        ),
        Subject::Origin => (
            "rule.sites",
            "{title}: on {site}",
            "site",
            spec.strip_prefix("domain:").unwrap_or(spec).to_string(),
        ),
        _ => (
            "rule.when",
            "{title}: when it names {value}",
            "value",
            spec.to_string(),
        ),
    }
}

/// `*`, `mcp__github__*`, `browser_*`: which tools, not what they do.
fn pattern_meaning(name: &str) -> Words {
    let literal = name.split('*').next().unwrap_or("");
    if literal.is_empty() {
        return words("rule.every_tool", "Every tool", &[]);
    }
    let server = literal
        .strip_prefix("mcp__")
        .and_then(|rest| rest.strip_suffix("__"))
        .filter(|server| !server.is_empty() && !server.contains("__"));
    match server {
        Some(server) => words(
            "rule.server_tools",
            "Every tool of the toolpack {server}",
            &[("server", server.to_string())],
        ),
        None => words(
            "rule.tools_named",
            "Every tool whose name starts with {prefix}",
            &[("prefix", literal.to_string())],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(kinds: &[EffectKind], title: &str) -> ToolFacts {
        ToolFacts {
            kinds: kinds.to_vec(),
            title: title.into(),
        }
    }

    fn said(rule: &str, facts: Option<&ToolFacts>) -> String {
        meaning(&Rule::parse(rule).unwrap(), facts).text
    }

    #[test]
    fn a_rule_reads_as_what_its_specifier_is_matched_against() {
        let run = facts(&[EffectKind::ProcessExec], "Run a command");
        let read = facts(&[EffectKind::FsRead], "Read a file");
        let mail = facts(&[EffectKind::MailSend], "Send mail");
        let open = facts(&[EffectKind::BrowserNavigate], "Open a page");
        let cases = [
            (
                "run_command(sudo:*)",
                Some(&run),
                "Run a command: commands that start with “sudo”",
            ),
            (
                "run_command(git status)",
                Some(&run),
                "Run a command: the command “git status”",
            ),
            ("run_command", Some(&run), "Run a command: every call"),
            (
                "read_file(~/.ssh/**)",
                Some(&read),
                "Read a file: files in ~/.ssh",
            ),
            (
                "read_file(**/*.env)",
                Some(&read),
                "Read a file: files matching **/*.env",
            ),
            (
                "send_mail(*@example.com)",
                Some(&mail),
                "Send mail: to *@example.com",
            ),
            (
                "browser_navigate(domain:shop.test)",
                Some(&open),
                "Open a page: on shop.test",
            ),
            ("mcp__github__*", None, "Every tool of the toolpack github"),
            (
                "browser_*",
                None,
                "Every tool whose name starts with browser_",
            ),
            ("*", None, "Every tool"),
            ("mcp__gh__make(x)", None, "mcp__gh__make: when it names x"),
        ];
        for (rule, facts, want) in cases {
            assert_eq!(said(rule, facts), want, "{rule}");
        }
    }

    #[test]
    fn the_tool_travels_as_its_name_for_the_window_to_translate() {
        let run = facts(&[EffectKind::ProcessExec], "Run a command");
        let words = meaning(&Rule::parse("run_command(sudo:*)").unwrap(), Some(&run));
        assert_eq!(words.key, "rule.command_prefix");
        assert_eq!(words.values["tool_id"], "run_command");
        assert_eq!(words.values["prefix"], "sudo");
    }
}
