//! The deterministic risk score (1–10). Every point carries a reason the modal shows.
//!
//! The riskiest effect sets the base (DESIGN.md's scale: local reads 1–2, workspace writes 3–4,
//! network egress 5, mail/exec/delete/outside the workspace 7–9, unknown MCP 8); modifiers add
//! points for the destructive annotation and for egress from a tainted conversation.

use super::protected::{Protection, classify};
use cowork_contract::{Effect, EffectEnv, ToolSpec};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Reason {
    pub points: i32,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Risk {
    pub score: u8,
    pub reasons: Vec<Reason>,
}

fn effect_base(effect: &Effect, env: &EffectEnv, data_dir: Option<&Path>) -> (i32, String) {
    let inside = |path: &str| env.is_inside_workspace(Path::new(path));
    match effect {
        Effect::FsRead { path } | Effect::FsWrite { path } | Effect::FsDelete { path } => {
            let verb = match effect {
                Effect::FsRead { .. } => "reads",
                Effect::FsWrite { .. } => "writes",
                _ => "deletes",
            };
            match (effect, classify(path, data_dir, env)) {
                (Effect::FsRead { .. }, Some(Protection::Secret(_))) => {
                    (7, format!("reads a file that holds credentials ({path})"))
                }
                (Effect::FsRead { .. }, _) if inside(path) => {
                    (1, "reads a file inside the workspace".into())
                }
                (Effect::FsRead { .. }, _) => match env.link_escape(Path::new(path)) {
                    Some(why) => (4, format!("reads outside the workspace: {why}")),
                    None => (4, format!("reads outside the workspace ({path})")),
                },
                (_, Some(Protection::Secret(_))) => {
                    (9, format!("{verb} a file that holds credentials ({path})"))
                }
                (_, Some(Protection::Configures(what))) => {
                    (8, format!("{verb} a file that configures {what} ({path})"))
                }
                (Effect::FsWrite { .. }, _) if inside(path) => {
                    (3, "writes a file inside the workspace".into())
                }
                (Effect::FsWrite { .. }, _) => {
                    (8, format!("writes outside the workspace ({path})"))
                }
                (_, _) if inside(path) => (6, "deletes a file inside the workspace".into()),
                (_, _) => (9, format!("deletes outside the workspace ({path})")),
            }
        }
        Effect::ProcessExec { workspace_code, .. } if !workspace_code.is_empty() => (
            8,
            format!(
                "runs a program, and the workspace's own configuration makes it run code ({})",
                workspace_code.join(", ")
            ),
        ),
        Effect::ProcessExec { .. } if !cowork_contract::confine::available() => (
            8,
            "runs a program with all your rights: bubblewrap cannot confine it here (install it: apt install bubblewrap)".into(),
        ),
        Effect::ProcessExec { command, .. } => command_base(&super::shell::analyze(command)),
        Effect::NetFetch { origin } => match cowork_contract::address::literal_host_kind(origin) {
            // Loopback, private, link-local, metadata: what a hostile page steers a fetch at
            // (SSRF). Denied by default; a rule the person writes for the origin allows it.
            Some(kind) if kind != cowork_contract::address::Kind::Public => (
                9,
                format!("sends a request to {} ({origin})", kind.describe()),
            ),
            _ => (5, format!("sends a request to {origin}")),
        },
        Effect::BrowserNavigate { origin } => (4, format!("opens {origin} in the browser")),
        Effect::BrowserAct { origin } => (5, format!("acts on a page of {origin}")),
        Effect::MailRead { .. } => (2, "reads mail".into()),
        Effect::MailSend { recipients, .. } => {
            (7, format!("sends mail to {}", recipients.join(", ")))
        }
        Effect::CalendarRead { .. } => (1, "reads the calendar".into()),
        Effect::CalendarWrite { attendees, .. } if attendees.is_empty() => {
            (3, "changes the calendar".into())
        }
        Effect::CalendarWrite { attendees, .. } => {
            (5, format!("invites {} to an event", attendees.join(", ")))
        }
        Effect::VaultRead => (1, "reads memory".into()),
        Effect::VaultWrite => (2, "writes memory".into()),
        Effect::TasksRead => (1, "reads tasks".into()),
        Effect::TasksWrite => (2, "changes tasks".into()),
        Effect::NotesWrite => (2, "writes a note".into()),
        Effect::AudioCapture => (5, "records from the microphone".into()),
        Effect::AudioPlay => (2, "plays sound".into()),
        Effect::SecretsRead { name } => (7, format!("reads the secret {name}")),
        Effect::SystemRead => (1, "reads system information".into()),
        Effect::UiAsk => (1, "asks you a question".into()),
        Effect::ServiceRead { service } => (2, format!("reads your data at {service}")),
        Effect::ServiceWrite { service, what } => (4, format!("changes {what} at {service}")),
        Effect::ServiceDelete { service, what } => (6, format!("deletes {what} at {service}")),
        // Reaching people and moving money score like mail (7): asked by default, and a tainted
        // conversation adds the egress point (8) — still asked, never silently denied.
        Effect::MessageSend {
            service,
            recipients,
        } => (
            7,
            format!("sends a message to {} at {service}", recipients.join(", ")),
        ),
        Effect::DataShare {
            service,
            recipients,
        } => (
            7,
            format!("gives {} access at {service}", recipients.join(", ")),
        ),
        Effect::MoneyPay { payee, amount } => (
            7,
            match amount {
                Some(amount) => format!("pays {amount} to {payee}"),
                None => format!("pays {payee}"),
            },
        ),
        Effect::AccountChange { service, what } => {
            (8, format!("changes your account at {service}: {what}"))
        }
        Effect::McpCall { server, tool } => {
            (8, format!("{server}/{tool} declares no effects: unknown"))
        }
        Effect::McpUnconfined { server, why } => (
            8,
            format!("{server} runs outside a sandbox ({why}): nothing limits what it does"),
        ),
    }
}

/// A confined command's risk from what its syntax says it does (`shell::analyze`): one that
/// only reads scores as a look inside the workspace does; one that deletes, downloads code into
/// a shell or asks for administrator rights scores above any other program.
fn command_base(facts: &super::shell::CommandFacts) -> (i32, String) {
    let programs = facts.programs.join(", ");
    if !facts.understood {
        return (7, "runs a command Cowork cannot fully read".into());
    }
    if facts.runs_piped_code {
        return (8, "runs code it downloads or builds as it goes".into());
    }
    if !facts.privileged.is_empty() {
        let how = facts.privileged.join(", ");
        return (8, format!("asks for administrator rights ({how})"));
    }
    if !facts.deletes.is_empty() {
        let all = if facts.recursive {
            " and everything in them"
        } else {
            ""
        };
        return (8, format!("deletes {}{all}", facts.deletes.join(", ")));
    }
    if !facts.network.is_empty() {
        let who = facts.network.join(", ");
        return (7, format!("runs {who}, which reaches the network"));
    }
    if facts.reads_only {
        return (
            4,
            format!("runs {programs}, which only reads, confined to the workspace"),
        );
    }
    (7, format!("runs {programs} on this computer"))
}

pub fn assess(
    spec: &ToolSpec,
    effects: &[Effect],
    env: &EffectEnv,
    tainted: bool,
    data_dir: Option<&Path>,
) -> Risk {
    let (base, text) = effects
        .iter()
        .map(|e| effect_base(e, env, data_dir))
        .max_by_key(|(points, _)| *points)
        .unwrap_or((1, "no effects".into()));
    let mut reasons = vec![Reason { points: base, text }];
    if spec.annotations.destructive && base < 10 {
        reasons.push(Reason {
            points: 1,
            text: "the tool is marked destructive".into(),
        });
    }
    if tainted && effects.iter().any(Effect::is_steerable_harm) {
        reasons.push(Reason {
            points: 1,
            text: "the conversation contains untrusted content and this call sends data out or changes your records".into(),
        });
    }
    let total: i32 = reasons.iter().map(|r| r.points).sum();
    if total > 10 {
        // Keep "every point has a reason" true after clamping.
        reasons.push(Reason {
            points: 10 - total,
            text: "capped at 10".into(),
        });
    }
    Risk {
        score: total.clamp(1, 10) as u8,
        reasons,
    }
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
