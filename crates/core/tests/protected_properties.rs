//! Properties of the protected paths, generated rather than listed: whatever a dot name is
//! called, however it is cased, however deep it sits or however a move reaches it, a write to
//! configuration and a read of credentials ask — in accept-edits, under an allow rule for the
//! tool. Ordinary files under the same rules do not ask.

use cowork_contract::{Effect, EffectEnv, EffectKind, ToolSpec};
use cowork_core::policy::{Action, Mode, PolicyBridge, ReviewRequest, RuleSource};
use cowork_store::{DataDir, Store};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

struct Scene {
    _tmp: tempfile::TempDir,
    policy: PolicyBridge,
    env: EffectEnv,
    ws: PathBuf,
    home: PathBuf,
}

fn scene(workspace_is_home: bool) -> Scene {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let home = base.join("home");
    let ws = if workspace_is_home {
        home.clone()
    } else {
        home.join("code/app")
    };
    std::fs::create_dir_all(&ws).unwrap();
    let store = Store::open(DataDir::at(base.join("data")), &[&cowork_core::SCHEMA]).unwrap();
    let policy = PolicyBridge::open(&store, std::slice::from_ref(&ws)).unwrap();
    for tool in ["write_file", "read_file", "move_file"] {
        policy
            .add_rule(Action::Allow, tool, RuleSource::User)
            .unwrap();
    }
    policy.set_mode(Mode::AcceptEdits, false).unwrap();
    let env = EffectEnv {
        workspace_roots: vec![ws.clone()],
        home: Some(home.clone()),
        ..Default::default()
    };
    Scene {
        _tmp: tmp,
        policy,
        env,
        ws,
        home,
    }
}

fn decide(s: &Scene, tool: &str, effects: &[Effect]) -> Action {
    let kinds: Vec<EffectKind> = effects.iter().map(Effect::kind).collect();
    let meta = cowork_contract::ToolMeta::new(tool, tool, "").effects(&kinds);
    let spec = ToolSpec::from_meta(meta, serde_json::json!({"type": "object"}));
    s.policy
        .review(&ReviewRequest {
            spec: &spec,
            args: &serde_json::json!({}),
            effects,
            conversation: "c",
            env: &s.env,
            profile: None,
            run_grants: &[],
            carried: &[],
        })
        .decision
}

fn write(p: &Path) -> Effect {
    Effect::FsWrite {
        path: p.display().to_string(),
    }
}

/// A name as an attacker would spell it: any case, any tail.
fn dot_name() -> impl Strategy<Value = String> {
    "\\.[a-zA-Z0-9_-]{1,12}(\\.[a-z]{1,4})?"
}

fn ordinary_name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_][a-zA-Z0-9_-]{0,10}\\.(rs|md|txt|ts)".prop_filter("not a named config file", |n| {
        cowork_contract::pathclass::configures(n).is_none()
            && !cowork_contract::pathclass::is_credential_name(n)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A write under any dot component, at any depth of the workspace, asks.
    #[test]
    fn any_dot_component_is_configuration(
        before in prop::collection::vec("[a-z]{1,6}", 0..3),
        dot in dot_name(),
        after in prop::collection::vec("[a-zA-Z0-9_.-]{1,8}", 0..3),
    ) {
        let s = scene(false);
        let mut path = s.ws.clone();
        path.extend(&before);
        path.push(&dot);
        path.extend(after.iter().filter(|p| *p != "." && *p != ".."));
        prop_assert_eq!(decide(&s, "write_file", &[write(&path)]), Action::Ask, "{}", path.display());
    }

    /// The same writes with ordinary names go through in accept-edits: the rule is not "ask
    /// everything".
    #[test]
    fn ordinary_files_are_edits(
        folders in prop::collection::vec("[a-z][a-z0-9_-]{0,6}", 0..3),
        name in ordinary_name(),
    ) {
        let s = scene(false);
        let mut path = s.ws.clone();
        path.extend(&folders);
        path.push(&name);
        prop_assert_eq!(decide(&s, "write_file", &[write(&path)]), Action::Allow, "{}", path.display());
    }

    /// With the home folder as the workspace, every dot entry of it (and what lies below) is
    /// the person's own settings and logins: reading it asks, whatever allows read_file.
    #[test]
    fn a_home_workspace_does_not_grant_its_dot_entries(
        dot in dot_name(),
        below in prop::collection::vec("[a-z]{1,8}", 0..3),
    ) {
        let s = scene(true);
        let mut path = s.home.join(&dot);
        path.extend(&below);
        let read = Effect::FsRead { path: path.display().to_string() };
        prop_assert_eq!(decide(&s, "read_file", &[read]), Action::Ask, "{}", path.display());
    }

    /// A folder moved into place under a dot name, or a dot folder moved away, asks.
    #[test]
    fn both_ends_of_a_move_are_judged(
        ordinary in "[a-z]{1,8}",
        dot in dot_name(),
        away in any::<bool>(),
    ) {
        let s = scene(false);
        let (from, to) = if away {
            (s.ws.join(&dot), s.ws.join(&ordinary))
        } else {
            (s.ws.join(&ordinary), s.ws.join(&dot))
        };
        let effects = [
            Effect::FsDelete { path: from.display().to_string() },
            write(&to),
        ];
        prop_assert_eq!(decide(&s, "move_file", &effects), Action::Ask);
    }
}
