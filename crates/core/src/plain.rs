//! An approval in words: what will happen, where, and whether it can be undone — built from the
//! call's effects (what the PolicyBridge reviewed), never from a tool's own description. Each
//! phrase carries a key and its values, so the window can say it in the person's language; the
//! English text is the fallback and what the terminal shows.

use crate::policy::shell::{CommandFacts, analyze};
use cowork_contract::{Effect, EffectEnv, ToolSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One phrase: `key` names its template (the window's translations), `values` fill it, `text`
/// is it in English.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Words {
    pub key: String,
    pub values: BTreeMap<String, String>,
    pub text: String,
}

/// Whether Cowork can take it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Undo {
    /// It only reads.
    NothingChanges,
    /// Cowork keeps the earlier version: File changes for files, calendar_undo for events.
    Undoable,
    /// It changes the person's own records (tasks, notes, memory, a calendar no one else is
    /// invited to): not undone by Cowork, but theirs to change or remove later.
    ChangeableLater,
    /// Once done, it stays done (a sent mail, a deleted file, a command's changes).
    CannotUndo,
}

/// What an approval says first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Plain {
    /// What will happen, one phrase per kind of effect: deletions and writes of files first,
    /// reads of files last.
    pub what: Vec<Words>,
    /// Where: the workspace folder, when it acts there (sites and people are in `what`).
    pub place: Option<Words>,
    pub undo: Undo,
    /// Why, in the assistant's own words (its `description` argument), when it gave one.
    pub reason: Option<String>,
}

/// A phrase from a key and an English template with `{name}` slots.
pub(crate) fn words(key: &str, template: &str, values: &[(&str, String)]) -> Words {
    let mut text = template.to_string();
    for (name, value) in values {
        text = text.replace(&format!("{{{name}}}"), value);
    }
    Words {
        key: key.into(),
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        text,
    }
}

/// A file phrase's key, English template, and the effects it names.
type FilePhrase = (&'static str, &'static str, fn(&Effect) -> bool);

/// The phrases of file effects, named together per kind in this order (deletions first, reads
/// last): one table for `describe` and `effect_words`.
const FILE_PHRASES: [FilePhrase; 3] = [
    ("fs.delete", "Delete {paths}", |e| {
        matches!(e, Effect::FsDelete { .. })
    }),
    ("fs.write", "Write {paths}", |e| {
        matches!(e, Effect::FsWrite { .. })
    }),
    ("fs.read", "Read {paths}", |e| {
        matches!(e, Effect::FsRead { .. })
    }),
];

/// The phrase naming `paths` for the kind of file effect `effect` is.
fn file_phrase(effect: &Effect, paths: &[String]) -> Words {
    let (key, template, _) = FILE_PHRASES
        .iter()
        .find(|(_, _, is)| is(effect))
        .unwrap_or(&FILE_PHRASES[2]);
    words(key, template, &[("paths", list(paths))])
}

/// Up to three items, then how many more.
fn list(items: &[String]) -> String {
    match items.len() {
        0..=3 => items.join(", "),
        n => format!("{} and {} more", items[..3].join(", "), n - 3),
    }
}

/// A path as the person knows it: relative to the workspace root it lies in (`./build`).
fn shown(path: &str, env: &EffectEnv) -> String {
    env.workspace_roots
        .iter()
        .find_map(|r| Path::new(path).strip_prefix(r).ok())
        .map_or_else(|| path.to_string(), |rel| format!("./{}", rel.display()))
}

/// The phrase for a command, from what its syntax says it does.
fn command_words(facts: &CommandFacts) -> Words {
    let programs = list(&facts.programs);
    if !facts.understood {
        return words(
            "exec.unknown",
            "Run a command Cowork cannot fully read",
            &[],
        );
    }
    if facts.runs_piped_code {
        let p = ("programs", programs);
        return words(
            "exec.piped",
            "Run code it downloads or builds as it goes ({programs})",
            &[p],
        );
    }
    if !facts.deletes.is_empty() {
        let paths = ("paths", list(&facts.deletes));
        return match facts.recursive {
            true => words(
                "exec.delete_all",
                "Delete {paths} and everything in them",
                &[paths],
            ),
            false => words("exec.delete", "Delete {paths}", &[paths]),
        };
    }
    let p = ("programs", programs);
    if !facts.privileged.is_empty() {
        return words(
            "exec.admin",
            "Run {programs} with administrator rights",
            &[p],
        );
    }
    if !facts.network.is_empty() {
        return words(
            "exec.network",
            "Run {programs}, which reaches the internet",
            &[p],
        );
    }
    if facts.reads_only {
        return words(
            "exec.read",
            "Look at files with {programs} (nothing is changed)",
            &[p],
        );
    }
    words("exec.run", "Run {programs}", &[p])
}

/// The phrase for one effect (paths already shown as the person knows them).
fn effect_words(effect: &Effect, env: &EffectEnv) -> Words {
    use Effect::*;
    match effect {
        FsRead { path } | FsWrite { path } | FsDelete { path } => {
            file_phrase(effect, &[shown(path, env)])
        }
        ProcessExec { command, .. } => command_words(&analyze(command)),
        NetFetch { origin } => words(
            "net.fetch",
            "Contact {origin}",
            &[("origin", origin.clone())],
        ),
        BrowserNavigate { origin } => words(
            "browser.navigate",
            "Open {origin} in the browser",
            &[("origin", origin.clone())],
        ),
        BrowserAct { origin } => words(
            "browser.act",
            "Click or type on {origin}",
            &[("origin", origin.clone())],
        ),
        MailRead { account } => words(
            "mail.read",
            "Read mail in {account}",
            &[("account", account.clone())],
        ),
        MailSend {
            account,
            recipients,
        } => words(
            "mail.send",
            "Send an email from {account} to {recipients}",
            &[
                ("account", account.clone()),
                ("recipients", list(recipients)),
            ],
        ),
        CalendarRead { calendar } => words(
            "calendar.read",
            "Read the calendar “{calendar}”",
            &[("calendar", calendar.clone())],
        ),
        CalendarWrite {
            calendar,
            attendees,
        } if attendees.is_empty() => words(
            "calendar.write",
            "Change the calendar “{calendar}”",
            &[("calendar", calendar.clone())],
        ),
        CalendarWrite {
            calendar,
            attendees,
        } => words(
            "calendar.invite",
            "Change the calendar “{calendar}” and invite {recipients}",
            &[
                ("calendar", calendar.clone()),
                ("recipients", list(attendees)),
            ],
        ),
        other => other_words(other),
    }
}

/// The phrases of the effects that name a service, a person or nothing.
fn other_words(effect: &Effect) -> Words {
    use Effect::*;
    let s = |v: &String| v.clone();
    match effect {
        VaultRead => words("vault.read", "Read your memory", &[]),
        VaultWrite => words("vault.write", "Change your memory", &[]),
        TasksRead => words("tasks.read", "Read your tasks", &[]),
        TasksWrite => words("tasks.write", "Change your tasks", &[]),
        NotesWrite => words("notes.write", "Write a note", &[]),
        AudioCapture => words("audio.capture", "Listen through the microphone", &[]),
        AudioPlay => words("audio.play", "Play sound", &[]),
        SecretsRead { name } => words(
            "secrets.read",
            "Use the stored secret {name}",
            &[("name", s(name))],
        ),
        SensitiveRead { category, subject } => sensitive_read(*category, subject, false),
        SystemRead => words("system.read", "Read information about this computer", &[]),
        UiAsk => words("ui.ask", "Ask you a question", &[]),
        ServiceRead { service } => words(
            "service.read",
            "Read your data at {service}",
            &[("service", s(service))],
        ),
        ServiceWrite { service, what } => words(
            "service.write",
            "Change {what} at {service}",
            &[("what", s(what)), ("service", s(service))],
        ),
        ServiceDelete { service, what } => words(
            "service.delete",
            "Delete {what} at {service}",
            &[("what", s(what)), ("service", s(service))],
        ),
        MessageSend {
            service,
            recipients,
        }
        | DataShare {
            service,
            recipients,
        } => {
            let (key, template) = match effect {
                MessageSend { .. } => (
                    "message.send",
                    "Send a message on {service} to {recipients}",
                ),
                _ => ("data.share", "Share with {recipients} on {service}"),
            };
            words(
                key,
                template,
                &[("service", s(service)), ("recipients", list(recipients))],
            )
        }
        MoneyPay { payee, amount } => words(
            "money.pay",
            "Pay {amount} to {payee}",
            &[
                ("amount", amount.clone().unwrap_or_default()),
                ("payee", s(payee)),
            ],
        ),
        AccountChange { service, what } => words(
            "account.change",
            "Change {what} of your {service} account",
            &[("what", s(what)), ("service", s(service))],
        ),
        other => pack_words(other),
    }
}

/// A call putting in values kept from the model (placeholders): what the first one a read
/// returned is (else that it is a key or token), and every placeholder the model wrote
/// instead of a value.
pub(crate) fn carried(kept: &[crate::placeholders::Kept]) -> Words {
    use cowork_contract::Sensitive::*;
    let first = kept.iter().find(|k| k.tool.is_some()).unwrap_or(&kept[0]);
    let placeholder = kept
        .iter()
        .map(|k| k.placeholder())
        .collect::<Vec<_>>()
        .join(", ");
    let (key, text) = match (first.tool.is_some(), first.category) {
        (false, _) => (
            "risk.carries.shaped",
            "it puts in a key or token from this conversation, which the model saw only as {placeholder}",
        ),
        (true, Payment) => (
            "risk.carries.payment",
            "it puts in payment details ({subject}), which the model saw only as {placeholder}",
        ),
        (true, GovernmentId) => (
            "risk.carries.government_id",
            "it puts in a government ID ({subject}), which the model saw only as {placeholder}",
        ),
        (true, _) => (
            "risk.carries.secrets",
            "it puts in a stored secret ({subject}), which the model saw only as {placeholder}",
        ),
    };
    let subject =
        cowork_contract::text::printable_short(first.subject.as_deref().unwrap_or(""), 80);
    words(
        key,
        text,
        &[("subject", subject), ("placeholder", placeholder)],
    )
}

/// A read of private data, said by its kind: as the action the person approves, or (`reason`)
/// as the review's reason. One table for both, so no category is said in one and not the other.
pub(crate) fn sensitive_read(
    category: cowork_contract::Sensitive,
    subject: &str,
    reason: bool,
) -> Words {
    use cowork_contract::Sensitive::*;
    let (key, action, why) = match category {
        Secrets => (
            "sensitive.secrets",
            "Read the stored secret {subject}",
            "reads a stored secret: {subject}",
        ),
        Payment => (
            "sensitive.payment",
            "Read payment details: {subject}",
            "reads payment details: {subject}",
        ),
        Health => (
            "sensitive.health",
            "Read health records: {subject}",
            "reads health records: {subject}",
        ),
        GovernmentId => (
            "sensitive.government_id",
            "Read a government ID: {subject}",
            "reads a government ID: {subject}",
        ),
        PrivateMessages => (
            "sensitive.private_messages",
            "Read private messages: {subject}",
            "reads private messages: {subject}",
        ),
    };
    // The pack names the item: shown printable and short.
    let subject = cowork_contract::text::printable_short(subject, 80);
    match reason {
        true => words(&format!("risk.{key}"), why, &[("subject", subject)]),
        false => words(key, action, &[("subject", subject)]),
    }
}

/// The phrases of Cowork's verdicts on a toolpack's server.
fn pack_words(effect: &Effect) -> Words {
    use Effect::*;
    let s = |v: &String| v.clone();
    match effect {
        McpCall {
            server,
            tool,
            unfilled: None,
        } => words(
            "mcp.call",
            "Use {tool} of the toolpack {server}, which does not say what it does",
            &[("tool", s(tool)), ("server", s(server))],
        ),
        McpCall {
            server,
            tool,
            unfilled: Some(field),
        } => words(
            "mcp.call.unfilled",
            "Use {tool} of the toolpack {server}, whose declared effects this call does not fill (“{field}”), so what it does is unknown",
            &[
                ("tool", s(tool)),
                ("server", s(server)),
                ("field", s(field)),
            ],
        ),
        McpUnconfined { server, why } => words(
            "mcp.unconfined",
            "Run the toolpack {server} outside the sandbox ({why})",
            &[("server", s(server)), ("why", s(why))],
        ),
        ModelSample { server, model } => words(
            "model.sample",
            "Let the toolpack {server} ask your model {model} a question and read its answer",
            &[("server", s(server)), ("model", s(model))],
        ),
        _ => words("other", "Act", &[]),
    }
}

/// Where it happens: the workspace folder, when the call acts there.
fn place(effects: &[Effect], env: &EffectEnv) -> Option<Words> {
    let local = effects.iter().any(|e| {
        matches!(e, Effect::ProcessExec { .. })
            || e.subjects()
                .iter()
                .any(|p| env.is_inside_workspace(Path::new(p)))
    });
    let root = env.workspace_roots.first().filter(|_| local)?;
    let name = root.file_name().map_or_else(
        || root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Some(words(
        "place.folder",
        "In the folder {folder} ({path})",
        &[("folder", name), ("path", root.display().to_string())],
    ))
}

fn undo(spec: &ToolSpec, effects: &[Effect]) -> Undo {
    if effects.iter().all(Effect::is_read_only) {
        return Undo::NothingChanges;
    }
    // What reaches people (an invitation mailed to attendees) is not taken back with the record.
    if spec.annotations.undoable && !effects.iter().any(Effect::is_egress) {
        return Undo::Undoable;
    }
    if let [Effect::ProcessExec { command, .. }] = effects
        && analyze(command).reads_only
    {
        return Undo::NothingChanges;
    }
    let own_record = |e: &Effect| {
        e.is_read_only()
            || matches!(
                e,
                Effect::TasksWrite | Effect::NotesWrite | Effect::VaultWrite
            )
            || matches!(e, Effect::CalendarWrite { attendees, .. } if attendees.is_empty())
    };
    if effects.iter().all(own_record) {
        return Undo::ChangeableLater;
    }
    Undo::CannotUndo
}

/// The approval's first lines for a call.
pub fn describe(
    spec: &ToolSpec,
    effects: &[Effect],
    args: &serde_json::Value,
    env: &EffectEnv,
) -> Plain {
    // Files are named together per kind: deletions and writes first, reads last.
    let file_phrases = |table: &[FilePhrase]| -> Vec<Words> {
        table
            .iter()
            .filter_map(|(key, template, is)| {
                let paths = fs_paths(effects, env, *is);
                (!paths.is_empty()).then(|| words(key, template, &[("paths", list(&paths))]))
            })
            .collect()
    };
    let mut what = file_phrases(&FILE_PHRASES[..2]);
    for effect in effects.iter().filter(|e| !is_file_effect(e)) {
        let phrase = effect_words(effect, env);
        if !what.contains(&phrase) {
            what.push(phrase);
        }
    }
    what.extend(file_phrases(&FILE_PHRASES[2..]));
    Plain {
        what,
        place: place(effects, env),
        undo: undo(spec, effects),
        reason: args
            .get("description")
            .and_then(|d| d.as_str())
            .map(|d| d.chars().take(300).collect()),
    }
}

fn is_file_effect(effect: &Effect) -> bool {
    FILE_PHRASES.iter().any(|(_, _, is)| is(effect))
}

/// The paths of the file effects `pick` selects, as the person knows them.
fn fs_paths(effects: &[Effect], env: &EffectEnv, pick: fn(&Effect) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for effect in effects.iter().filter(|e| pick(e)) {
        for path in effect.subjects() {
            let path = shown(path, env);
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_contract::{Annotations, ToolMeta};
    use std::path::PathBuf;

    fn spec(undoable: bool) -> ToolSpec {
        let meta = ToolMeta::new("t", "t", "").annotations(Annotations {
            undoable,
            ..Annotations::default()
        });
        ToolSpec::from_meta(meta, serde_json::json!({"type": "object"}))
    }

    fn env() -> EffectEnv {
        EffectEnv {
            workspace_roots: vec![PathBuf::from("/home/u/ws-main")],
            ..Default::default()
        }
    }

    fn exec(command: &str) -> Effect {
        Effect::ProcessExec {
            command: command.into(),
            workspace_code: vec![],
        }
    }

    #[test]
    fn says_what_where_and_whether_it_can_be_undone() {
        let args = serde_json::json!({"description": "Clean the build output"});
        let rm = describe(
            &spec(false),
            &[exec(
                "rm -rf ./build ./node_modules/.cache && git clean -fdx",
            )],
            &args,
            &env(),
        );
        assert_eq!(
            rm.what[0].text,
            "Delete ./build, ./node_modules/.cache, untracked files and everything in them"
        );
        assert_eq!(
            rm.place.unwrap().text,
            "In the folder ws-main (/home/u/ws-main)"
        );
        assert_eq!(rm.undo, Undo::CannotUndo);
        assert_eq!(rm.reason.as_deref(), Some("Clean the build output"));

        let ls = describe(
            &spec(false),
            &[exec("ls -la")],
            &serde_json::json!({}),
            &env(),
        );
        assert_eq!(
            ls.what[0].text,
            "Look at files with ls (nothing is changed)"
        );
        assert_eq!(ls.undo, Undo::NothingChanges);

        let write = Effect::FsWrite {
            path: "/home/u/ws-main/src/a.rs".into(),
        };
        let edit = describe(&spec(true), &[write], &serde_json::json!({}), &env());
        assert_eq!(edit.what[0].text, "Write ./src/a.rs");
        assert_eq!(edit.undo, Undo::Undoable);

        let mail = Effect::MailSend {
            account: "me@home.example".into(),
            recipients: vec!["a@x.example".into(), "b@x.example".into()],
        };
        let sent = describe(&spec(false), &[mail], &serde_json::json!({}), &env());
        assert_eq!(
            sent.what[0].text,
            "Send an email from me@home.example to a@x.example, b@x.example"
        );
        assert_eq!(sent.what[0].key, "mail.send");
        assert!(sent.place.is_none());
        assert_eq!(sent.undo, Undo::CannotUndo);

        // A calendar change is kept in its history; once it invites people, the mail is not.
        let event = |attendees: &[&str]| Effect::CalendarWrite {
            calendar: "local".into(),
            attendees: attendees.iter().map(|a| a.to_string()).collect(),
        };
        let args = serde_json::json!({});
        let private = describe(&spec(true), &[event(&[])], &args, &env());
        assert_eq!(private.undo, Undo::Undoable);
        let invite = describe(&spec(true), &[event(&["a@x.example"])], &args, &env());
        assert_eq!(invite.undo, Undo::CannotUndo);
    }
}
