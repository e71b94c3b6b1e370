//! Tool profiles: least privilege the person names and chooses per conversation, persona,
//! schedule or sub-agent. A profile only narrows — which tools are offered, which effect kinds
//! a call may have, the widest mode — and both the agent (what it offers the model) and the
//! review (what it lets run) hold to it.

use super::Mode;
use cowork_contract::{Effect, EffectKind, ToolSpec};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolProfile {
    pub name: String,
    /// Only these tools are offered and may run. None: any tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Only calls whose every effect is of these kinds may run, and only tools that declare
    /// no other kind are offered. None: any kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<EffectKind>>,
    /// The widest mode its calls run in (a plan-mode profile only reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

impl ToolProfile {
    /// The profile that lets every tool run: what no choice means.
    pub fn any(name: &str) -> ToolProfile {
        ToolProfile {
            name: name.to_string(),
            ..ToolProfile::default()
        }
    }

    /// Whether the model is offered this tool: named by the profile, and declaring no effect
    /// kind outside it.
    pub fn offers(&self, spec: &ToolSpec) -> bool {
        self.names(&spec.name)
            && spec
                .effects
                .iter()
                .all(|kind| self.effects.as_ref().is_none_or(|k| k.contains(kind)))
    }

    fn names(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool))
    }

    /// Why this call is outside the profile, if it is: the tool is not in it, or one of the
    /// call's own effects (computed from its arguments) is of a kind it leaves out.
    pub fn refuses(&self, tool: &str, effects: &[Effect]) -> Option<String> {
        if !self.names(tool) {
            return Some(format!("{tool} is not in the tool profile «{}»", self.name));
        }
        let allowed = self.effects.as_ref()?;
        effects
            .iter()
            .map(Effect::kind)
            .find(|kind| !allowed.contains(kind))
            .map(|kind| {
                format!(
                    "{tool} has an effect of kind {}, which the tool profile «{}» does not allow",
                    kind.as_str(),
                    self.name
                )
            })
    }

    /// This profile held inside `outer`: what both allow, the narrower mode. The name stays
    /// this profile's, so the person reads the one they chose for the narrower part.
    pub fn within(&self, outer: &ToolProfile) -> ToolProfile {
        fn both<T: PartialEq + Clone>(a: &Option<Vec<T>>, b: &Option<Vec<T>>) -> Option<Vec<T>> {
            match (a, b) {
                (None, None) => None,
                (Some(x), None) | (None, Some(x)) => Some(x.clone()),
                (Some(x), Some(y)) => Some(x.iter().filter(|v| y.contains(v)).cloned().collect()),
            }
        }
        ToolProfile {
            name: self.name.clone(),
            tools: both(&self.tools, &outer.tools),
            effects: both(&self.effects, &outer.effects),
            mode: match (self.mode, outer.mode) {
                (Some(a), Some(b)) => Some(a.narrower(b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// The same profile without `tool` (a sub-agent is never offered the tool that makes
    /// sub-agents). `all` names every tool there is, for a profile that named none.
    pub fn without(&self, tool: &str, all: impl IntoIterator<Item = String>) -> ToolProfile {
        let tools = match &self.tools {
            Some(tools) => tools.clone(),
            None => all.into_iter().collect(),
        };
        ToolProfile {
            tools: Some(tools.into_iter().filter(|t| t != tool).collect()),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kinds() -> impl Strategy<Value = Option<Vec<EffectKind>>> {
        proptest::option::of(proptest::sample::subsequence(
            EffectKind::ALL.to_vec(),
            0..EffectKind::ALL.len(),
        ))
    }

    fn tools() -> impl Strategy<Value = Option<Vec<String>>> {
        proptest::option::of(proptest::collection::vec("[a-e]", 0..5))
    }

    fn modes() -> impl Strategy<Value = Option<Mode>> {
        proptest::option::of(proptest::sample::select(vec![
            Mode::Plan,
            Mode::Normal,
            Mode::AcceptEdits,
        ]))
    }

    fn profiles() -> impl Strategy<Value = ToolProfile> {
        (tools(), kinds(), modes()).prop_map(|(tools, effects, mode)| ToolProfile {
            name: "p".into(),
            tools,
            effects,
            mode,
        })
    }

    fn spec(name: &str, effects: Vec<EffectKind>) -> ToolSpec {
        let meta = cowork_contract::ToolMeta::new(name, name, "").effects(&effects);
        ToolSpec::from_meta(meta, serde_json::json!({"type": "object"}))
    }

    proptest! {
        /// Narrowing never widens: what the inner-in-outer profile offers, each of the two
        /// offers, and its mode lets through no more than either's.
        #[test]
        fn a_profile_within_another_offers_only_what_both_offer(
            inner in profiles(), outer in profiles(), name in "[a-f]",
            declared in proptest::sample::subsequence(EffectKind::ALL.to_vec(), 0..4),
        ) {
            let both = inner.within(&outer);
            let spec = spec(&name, declared);
            if both.offers(&spec) {
                prop_assert!(inner.offers(&spec) && outer.offers(&spec));
            }
            for mode in [inner.mode, outer.mode].into_iter().flatten() {
                prop_assert!(both.mode.unwrap().latitude() <= mode.latitude());
            }
            let effect = Effect::VaultWrite;
            if both.refuses(&name, std::slice::from_ref(&effect)).is_none() {
                prop_assert!(inner.refuses(&name, std::slice::from_ref(&effect)).is_none());
                prop_assert!(outer.refuses(&name, std::slice::from_ref(&effect)).is_none());
            }
            let without = both.without("a", ["a", "b", "c"].map(String::from));
            prop_assert!(!without.names("a"));
        }
    }

    #[test]
    fn a_call_is_refused_by_the_kind_of_its_own_effects() {
        let reads = ToolProfile {
            name: "reader".into(),
            effects: Some(vec![EffectKind::FsRead, EffectKind::FsWrite]),
            ..ToolProfile::default()
        };
        let delete = Effect::FsDelete {
            path: "/w/x".into(),
        };
        let why = reads.refuses("edit_file", &[delete]).unwrap();
        assert!(
            why.contains("fs.delete") && why.contains("«reader»"),
            "{why}"
        );
        assert!(
            reads
                .refuses("edit_file", &[Effect::FsRead { path: "/w".into() }])
                .is_none()
        );
        assert!(!reads.offers(&spec("rm", vec![EffectKind::FsDelete])));
        assert!(reads.offers(&spec("cat", vec![EffectKind::FsRead])));
    }
}
