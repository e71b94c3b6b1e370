//! The deterministic risk score (1–10). Every point carries a reason the modal shows.
//!
//! The riskiest effect sets the base (the scale: local reads 1–2, workspace writes 3–4,
//! network egress 5, mail/exec/delete/outside the workspace 7–9, unknown MCP 8); modifiers add
//! points for the destructive annotation and for egress from a tainted conversation.

use super::protected::{Protection, classify};
use crate::plain::Words;
use cowork_contract::{Effect, EffectEnv, ToolSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Reason {
    pub points: i32,
    /// The phrase's name for the window's translations (`risk.…`) and the values it names.
    pub key: String,
    pub values: BTreeMap<String, String>,
    /// The reason in English.
    pub text: String,
}

impl Reason {
    fn new(points: i32, words: Words) -> Reason {
        Reason {
            points,
            key: words.key,
            values: words.values,
            text: words.text,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    pub score: u8,
    pub reasons: Vec<Reason>,
}

/// A phrase of the scale: `key` names it for the window's translations (`risk.…`).
fn said(key: &str, template: &str, values: &[(&str, String)]) -> Words {
    crate::plain::words(&format!("risk.{key}"), template, values)
}

fn effect_base(effect: &Effect, env: &EffectEnv, data_dir: Option<&Path>) -> (i32, Words) {
    let inside = |path: &str| env.is_inside_workspace(Path::new(path));
    match effect {
        Effect::FsRead { path } | Effect::FsWrite { path } | Effect::FsDelete { path } => {
            file_base(
                effect,
                path,
                classify(path, data_dir, env),
                inside(path),
                env,
            )
        }
        Effect::ProcessExec { workspace_code, .. } if !workspace_code.is_empty() => (
            8,
            said(
                "exec.workspace_code",
                "runs a program, and the workspace's own configuration makes it run code ({code})",
                &[("code", workspace_code.join(", "))],
            ),
        ),
        Effect::ProcessExec { .. } if !cowork_contract::confine::available() => (
            8,
            said(
                "exec.unconfined",
                "runs a program with all your rights: bubblewrap cannot confine it here (install it: apt install bubblewrap)",
                &[],
            ),
        ),
        Effect::ProcessExec { command, .. } => command_base(&super::shell::analyze(command)),
        Effect::NetFetch { origin } => fetch_base(origin),
        // Every other kind, routed by name so a new kind does not compile until it is scored.
        Effect::BrowserNavigate { .. }
        | Effect::BrowserAct { .. }
        | Effect::MailRead { .. }
        | Effect::MailSend { .. }
        | Effect::CalendarRead { .. }
        | Effect::CalendarWrite { .. }
        | Effect::VaultRead
        | Effect::VaultWrite
        | Effect::TasksRead
        | Effect::TasksWrite
        | Effect::NotesWrite
        | Effect::AudioCapture
        | Effect::AudioPlay
        | Effect::SecretsRead { .. }
        | Effect::SensitiveRead { .. }
        | Effect::SystemRead
        | Effect::UiAsk => other_base(effect),
        Effect::ServiceRead { .. }
        | Effect::ServiceWrite { .. }
        | Effect::ServiceDelete { .. }
        | Effect::MessageSend { .. }
        | Effect::DataShare { .. }
        | Effect::MoneyPay { .. } => service_base(effect),
        Effect::AccountChange { .. }
        | Effect::McpCall { .. }
        | Effect::McpUnconfined { .. }
        | Effect::ModelSample { .. } => pack_base(effect),
    }
}

/// A request's base: a site on the internet, or an address inside (loopback, private).
fn fetch_base(origin: &str) -> (i32, Words) {
    match cowork_contract::address::literal_host_kind(origin) {
        // Loopback, private, link-local, metadata: what a hostile page steers a fetch at
        // (SSRF). Denied by default; a rule the person writes for the origin allows it.
        Some(kind) if kind != cowork_contract::address::Kind::Public => (
            9,
            said(
                "net.inside",
                "sends a request to {what} ({origin})",
                &[
                    ("what", kind.describe().to_string()),
                    ("origin", origin.to_string()),
                ],
            ),
        ),
        _ => (
            5,
            said(
                "net.fetch",
                "sends a request to {origin}",
                &[("origin", origin.to_string())],
            ),
        ),
    }
}

/// A file effect's base: credentials and configuration first, then inside or outside.
fn file_base(
    effect: &Effect,
    path: &str,
    class: Option<Protection>,
    inside: bool,
    env: &EffectEnv,
) -> (i32, Words) {
    let p = || vec![("path", path.to_string())];
    let verb = match effect {
        Effect::FsRead { .. } => "reads",
        Effect::FsWrite { .. } => "writes",
        _ => "deletes",
    };
    let key = |what: &str| format!("fs.{verb}.{what}");
    match (effect, class) {
        (_, Some(Protection::Secret(_))) => (
            if verb == "reads" { 7 } else { 9 },
            said(
                &key("secret"),
                &format!("{verb} a file that holds credentials ({{path}})"),
                &p(),
            ),
        ),
        (Effect::FsRead { .. }, _) if inside => (
            1,
            said(&key("inside"), "reads a file inside the workspace", &[]),
        ),
        (Effect::FsRead { .. }, _) => match env.link_escape(Path::new(path)) {
            Some(why) => (
                4,
                said(
                    "fs.reads.outside_link",
                    "reads outside the workspace: {why}",
                    &[("why", why)],
                ),
            ),
            None => (
                4,
                said(
                    &key("outside"),
                    "reads outside the workspace ({path})",
                    &p(),
                ),
            ),
        },
        (_, Some(Protection::Configures(what))) => (
            8,
            said(
                &key("config"),
                &format!("{verb} a file that configures {{what}} ({{path}})"),
                &[("what", what.to_string()), ("path", path.to_string())],
            ),
        ),
        (Effect::FsWrite { .. }, _) if inside => (
            3,
            said(&key("inside"), "writes a file inside the workspace", &[]),
        ),
        (Effect::FsWrite { .. }, _) => (
            8,
            said(
                &key("outside"),
                "writes outside the workspace ({path})",
                &p(),
            ),
        ),
        (_, _) if inside => (
            6,
            said(&key("inside"), "deletes a file inside the workspace", &[]),
        ),
        (_, _) => (
            9,
            said(
                &key("outside"),
                "deletes outside the workspace ({path})",
                &p(),
            ),
        ),
    }
}

/// The bases of the effects on this computer and the person's own records.
fn other_base(effect: &Effect) -> (i32, Words) {
    use Effect::*;
    let list = |v: &[String]| v.join(", ");
    match effect {
        BrowserNavigate { origin } => (
            4,
            said(
                "browser.navigate",
                "opens {origin} in the browser",
                &[("origin", origin.clone())],
            ),
        ),
        BrowserAct { origin } => (
            5,
            said(
                "browser.act",
                "acts on a page of {origin}",
                &[("origin", origin.clone())],
            ),
        ),
        MailRead { .. } => (2, said("mail.read", "reads mail", &[])),
        MailSend { recipients, .. } => (
            7,
            said(
                "mail.send",
                "sends mail to {recipients}",
                &[("recipients", list(recipients))],
            ),
        ),
        CalendarRead { .. } => (1, said("calendar.read", "reads the calendar", &[])),
        CalendarWrite { attendees, .. } if attendees.is_empty() => {
            (3, said("calendar.write", "changes the calendar", &[]))
        }
        CalendarWrite { attendees, .. } => (
            5,
            said(
                "calendar.invite",
                "invites {recipients} to an event",
                &[("recipients", list(attendees))],
            ),
        ),
        VaultRead => (1, said("vault.read", "reads memory", &[])),
        VaultWrite => (2, said("vault.write", "writes memory", &[])),
        TasksRead => (1, said("tasks.read", "reads tasks", &[])),
        TasksWrite => (2, said("tasks.write", "changes tasks", &[])),
        NotesWrite => (2, said("notes.write", "writes a note", &[])),
        AudioCapture => (5, said("audio.capture", "records from the microphone", &[])),
        AudioPlay => (2, said("audio.play", "plays sound", &[])),
        SecretsRead { name } => (
            7,
            said(
                "secrets.read",
                "reads the secret {name}",
                &[("name", name.clone())],
            ),
        ),
        // As a stored secret: asked by default, whoever reads it, for it goes on to the model.
        SensitiveRead { category, subject } => {
            (7, crate::plain::sensitive_read(*category, subject, true))
        }
        SystemRead => (1, said("system.read", "reads system information", &[])),
        UiAsk => (1, said("ui.ask", "asks you a question", &[])),
        _ => unreachable!("routed by effect_base"),
    }
}

/// The bases of the effects on the person's accounts elsewhere, other people and packs.
fn service_base(effect: &Effect) -> (i32, Words) {
    use Effect::*;
    let list = |v: &[String]| v.join(", ");
    match effect {
        ServiceRead { service } => (
            2,
            said(
                "service.read",
                "reads your data at {service}",
                &[("service", service.clone())],
            ),
        ),
        ServiceWrite { service, what } => (
            4,
            said(
                "service.write",
                "changes {what} at {service}",
                &[("what", what.clone()), ("service", service.clone())],
            ),
        ),
        ServiceDelete { service, what } => (
            6,
            said(
                "service.delete",
                "deletes {what} at {service}",
                &[("what", what.clone()), ("service", service.clone())],
            ),
        ),
        // Reaching people and moving money score like mail (7): asked by default, and a tainted
        // conversation adds the egress point (8) — still asked, never silently denied.
        MessageSend {
            service,
            recipients,
        } => (
            7,
            said(
                "message.send",
                "sends a message to {recipients} at {service}",
                &[
                    ("recipients", list(recipients)),
                    ("service", service.clone()),
                ],
            ),
        ),
        DataShare {
            service,
            recipients,
        } => (
            7,
            said(
                "data.share",
                "gives {recipients} access at {service}",
                &[
                    ("recipients", list(recipients)),
                    ("service", service.clone()),
                ],
            ),
        ),
        MoneyPay {
            payee,
            amount: Some(amount),
        } => (
            7,
            said(
                "money.pay_amount",
                "pays {amount} to {payee}",
                &[("amount", amount.clone()), ("payee", payee.clone())],
            ),
        ),
        MoneyPay {
            payee,
            amount: None,
        } => (
            7,
            said("money.pay", "pays {payee}", &[("payee", payee.clone())]),
        ),
        _ => unreachable!("routed by effect_base"),
    }
}

/// The bases of an account change and of what a toolpack does not declare or confine.
fn pack_base(effect: &Effect) -> (i32, Words) {
    use Effect::*;
    match effect {
        AccountChange { service, what } => (
            8,
            said(
                "account.change",
                "changes your account at {service}: {what}",
                &[("service", service.clone()), ("what", what.clone())],
            ),
        ),
        McpCall {
            server,
            tool,
            unfilled: None,
        } => (
            8,
            said(
                "mcp.undeclared",
                "{server}/{tool} declares no effects: unknown",
                &[("server", server.clone()), ("tool", tool.clone())],
            ),
        ),
        McpCall {
            server,
            tool,
            unfilled: Some(field),
        } => (
            8,
            said(
                "mcp.unfilled",
                "{server}/{tool} declares its effects, but their field “{field}” cannot be filled from this call: unknown",
                &[
                    ("server", server.clone()),
                    ("tool", tool.clone()),
                    ("field", field.clone()),
                ],
            ),
        ),
        McpUnconfined { server, why } => (
            8,
            said(
                "mcp.unconfined",
                "{server} runs outside a sandbox ({why}): nothing limits what it does",
                &[("server", server.clone()), ("why", why.clone())],
            ),
        ),
        // Asks by default: the person's model (and its bill) works for a server's words, and
        // its answer leaves for that server.
        ModelSample { server, model } => (
            5,
            said(
                "model.sample",
                "{server} asks your model {model} a question and gets its answer",
                &[("server", server.clone()), ("model", model.clone())],
            ),
        ),
        _ => unreachable!("routed by effect_base"),
    }
}

/// A confined command's risk from what its syntax says it does (`shell::analyze`): one that
/// only reads scores as a look inside the workspace does; one that deletes, downloads code into
/// a shell or asks for administrator rights scores above any other program.
fn command_base(facts: &super::shell::CommandFacts) -> (i32, Words) {
    let programs = || vec![("programs", facts.programs.join(", "))];
    if !facts.understood {
        return (
            7,
            said(
                "exec.unread",
                "runs a command Cowork cannot fully read",
                &[],
            ),
        );
    }
    if facts.runs_piped_code {
        return (
            8,
            said(
                "exec.piped_code",
                "runs code it downloads or builds as it goes",
                &[],
            ),
        );
    }
    if !facts.privileged.is_empty() {
        let how = facts.privileged.join(", ");
        return (
            8,
            said(
                "exec.privileged",
                "asks for administrator rights ({how})",
                &[("how", how)],
            ),
        );
    }
    if !facts.deletes.is_empty() {
        let paths = vec![("paths", facts.deletes.join(", "))];
        return match facts.recursive {
            true => (
                8,
                said(
                    "exec.deletes_all",
                    "deletes {paths} and everything in them",
                    &paths,
                ),
            ),
            false => (8, said("exec.deletes", "deletes {paths}", &paths)),
        };
    }
    if !facts.network.is_empty() {
        let who = facts.network.join(", ");
        return (
            7,
            said(
                "exec.network",
                "runs {programs}, which reaches the network",
                &[("programs", who)],
            ),
        );
    }
    if facts.reads_only {
        return (
            4,
            said(
                "exec.reads",
                "runs {programs}, which only reads, confined to the workspace",
                &programs(),
            ),
        );
    }
    (
        7,
        said("exec.runs", "runs {programs} on this computer", &programs()),
    )
}

pub fn assess(
    spec: &ToolSpec,
    effects: &[Effect],
    env: &EffectEnv,
    tainted: bool,
    data_dir: Option<&Path>,
) -> Risk {
    let (base, words) = effects
        .iter()
        .map(|e| effect_base(e, env, data_dir))
        .max_by_key(|(points, _)| *points)
        .unwrap_or_else(|| (1, said("none", "no effects", &[])));
    let mut reasons = vec![Reason::new(base, words)];
    if spec.annotations.destructive && base < 10 {
        reasons.push(Reason::new(
            1,
            said("destructive", "the tool is marked destructive", &[]),
        ));
    }
    if tainted && effects.iter().any(Effect::is_steerable_harm) {
        reasons.push(Reason::new(1, said("tainted", "the conversation contains untrusted content and this call sends data out or changes your records", &[])));
    }
    let total: i32 = reasons.iter().map(|r| r.points).sum();
    if total > 10 {
        // Keep "every point has a reason" true after clamping.
        reasons.push(Reason::new(10 - total, said("capped", "capped at 10", &[])));
    }
    Risk {
        score: total.clamp(1, 10) as u8,
        reasons,
    }
}

/// What a call that puts in values kept from the model scores at least: as much as their
/// read did (see `sensitive.read`), so the person sees where a password or a card goes.
const CARRYING_FLOOR: i32 = 7;

/// Raises `risk` for a call carrying kept values, with the reason naming them.
pub fn carrying(risk: &mut Risk, carried: &[crate::placeholders::Kept]) {
    if carried.is_empty() {
        return;
    }
    let points = (CARRYING_FLOOR - risk.score as i32).max(0);
    risk.reasons
        .push(Reason::new(points, crate::plain::carried(carried)));
    risk.score = (risk.score as i32 + points).clamp(1, 10) as u8;
}

#[cfg(test)]
mod tests {
    use super::*;
    use cowork_contract::Annotations;
    use std::path::PathBuf;

    fn spec(destructive: bool) -> ToolSpec {
        let meta = cowork_contract::ToolMeta::new("t", "t", "").annotations(Annotations {
            destructive,
            ..Default::default()
        });
        ToolSpec::from_meta(meta, serde_json::json!({"type": "object"}))
    }

    #[test]
    fn scores_follow_the_scale_and_reasons_add_up() {
        let env = EffectEnv {
            workspace_roots: vec![PathBuf::from("/ws")],
            home: None,
            ..Default::default()
        };
        let score = |effects: &[Effect], destructive, tainted| {
            assess(&spec(destructive), effects, &env, tainted, None)
        };
        assert_eq!(score(&[Effect::TasksWrite], false, false).score, 2);
        assert_eq!(
            score(
                &[Effect::FsWrite {
                    path: "/ws/a".into()
                }],
                false,
                false
            )
            .score,
            3
        );
        assert_eq!(
            score(
                &[Effect::FsWrite {
                    path: "/etc/a".into()
                }],
                false,
                false
            )
            .score,
            8
        );
        assert_eq!(
            score(
                &[Effect::FsRead {
                    path: "/ws/.env".into()
                }],
                false,
                false
            )
            .score,
            7
        );
        assert_eq!(
            score(
                &[Effect::FsDelete {
                    path: "/etc/a".into()
                }],
                true,
                false
            )
            .score,
            10
        );
        let r = score(
            &[
                Effect::ProcessExec {
                    command: "ls".into(),
                    workspace_code: vec![],
                },
                Effect::FsDelete { path: "/x".into() },
            ],
            true,
            true,
        );
        assert_eq!(r.score, 10);
        assert_eq!(r.reasons.iter().map(|r| r.points).sum::<i32>(), 10);
        assert_eq!(score(&[], false, false).score, 1);
    }

    /// Every category of the taxonomy, whatever the subject a pack fills in, asks by default
    /// (4–8) and is never refused outright, tainted or not; its reason names the subject.
    #[test]
    fn a_sensitive_read_of_every_category_and_subject_asks() {
        use proptest::prelude::*;
        let env = EffectEnv::default();
        proptest!(|(category in proptest::sample::select(cowork_contract::Sensitive::ALL.to_vec()),
                    subject in "\\PC{0,40}", tainted in any::<bool>())| {
            let read = Effect::SensitiveRead { category, subject: subject.clone() };
            let assessed = assess(&spec(false), &[read], &env, tainted, None);
            prop_assert!((4..=8).contains(&assessed.score), "{category:?}: {}", assessed.score);
            let said = format!("{:?}", assessed);
            prop_assert!(said.contains(&format!("sensitive.{}", category.as_str())), "{said}");
        });
    }

    #[test]
    fn money_sharing_and_changes_steered_by_untrusted_content_ask_and_are_never_denied_outright() {
        let env = EffectEnv::default();
        let score =
            |effects: &[Effect], tainted| assess(&spec(false), effects, &env, tainted, None).score;
        let pay = Effect::MoneyPay {
            payee: "US133".into(),
            amount: Some("0.01".into()),
        };
        let share = Effect::DataShare {
            service: "drive".into(),
            recipients: vec!["m@evil.test".into()],
        };
        let entry = Effect::CalendarWrite {
            calendar: "personal".into(),
            attendees: vec![],
        };
        // Asked by default (4–8), never reaching the refusal at 9 because the data was tainted.
        assert_eq!(
            (
                score(std::slice::from_ref(&pay), false),
                score(&[pay], true)
            ),
            (7, 8)
        );
        assert_eq!(
            (
                score(std::slice::from_ref(&share), false),
                score(&[share], true)
            ),
            (7, 8)
        );
        // A private calendar entry runs by default, unless untrusted content is steering.
        assert_eq!(
            (
                score(std::slice::from_ref(&entry), false),
                score(&[entry], true)
            ),
            (3, 4)
        );
        let read = Effect::ServiceRead {
            service: "bank".into(),
        };
        assert!(read.is_read_only());
        assert_eq!(score(&[read], true), 2, "reading adds no taint point");
    }
}
