//! Which model the chat talks to: the `agent` key of the user settings. API keys are never in
//! this file, a log line or the database: they live in the OS keyring (Secret Service on Linux),
//! or in an environment variable the settings name.

use cowork_agent::provider::{anthropic::Anthropic, openai::OpenAiCompatible};
use cowork_agent::{AgentConfig, Provider};
pub use cowork_agent::{Persona, Price};
pub use cowork_core::ToolProfile;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    /// Any OpenAI-compatible Chat Completions server (OpenAI, Ollama, DeepSeek, DashScope, LM Studio, llama.cpp).
    Openai,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AgentSettings {
    pub provider: ProviderKind,
    /// Anthropic: without `/v1`; OpenAI-compatible: with it (e.g. `http://127.0.0.1:11434/v1`).
    pub base_url: String,
    pub model: String,
    /// An environment variable holding the API key. Empty: the key is in the OS keyring (or
    /// there is none, as for Ollama).
    #[serde(default)]
    pub api_key_env: String,
    /// The tools every conversation is offered unless it runs under a profile (the older,
    /// simpler form of `profile`).
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// Named tool profiles (least privilege) a conversation, persona, schedule or sub-agent
    /// runs under.
    #[serde(default)]
    pub profiles: Vec<ToolProfile>,
    /// The profile a conversation runs under when it chooses none (over `allowedTools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// Recall memories from the vault before each turn (off unless turned on).
    #[serde(default)]
    pub recall: RecallSettings,
    /// The model sees images (attachments, screenshots). Off: each image becomes a note.
    #[serde(default = "yes")]
    pub vision: bool,
    /// The model's context window in tokens; older turns are compacted before it fills.
    #[serde(default = "default_context_window")]
    pub context_window: u32,
    /// Dollars per million tokens by model id, for the cost shown per turn.
    #[serde(default)]
    pub prices: std::collections::HashMap<String, Price>,
    /// Saved system prompts a conversation can use.
    #[serde(default)]
    pub personas: Vec<Persona>,
    /// The tools every request defines when tools are deferred; the rest are named and
    /// loaded through `tool_search` when needed.
    #[serde(default = "default_core_tools")]
    pub core_tools: Vec<String>,
    /// Show the model the values Cowork keeps from it (stored passwords, cards, keys) instead
    /// of placeholders. Honoured only for a model server on this computer (a loopback base
    /// URL): a remote provider always gets placeholders.
    #[serde(default)]
    pub local_model_sees_secrets: bool,
}

fn yes() -> bool {
    true
}

fn default_context_window() -> u32 {
    AgentConfig::default().context_window
}

/// A few cheap tools a person reaches for most, each definition small: with `tool_search`
/// they cost ~1.4k tokens, so an 8k-context local model keeps room to talk.
pub fn default_core_tools() -> Vec<String> {
    [
        "read_file",
        "web_search",
        "calendar_list",
        "list_tasks",
        "quick_note",
        "email_check",
    ]
    .map(String::from)
    .to_vec()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RecallSettings {
    pub enabled: bool,
    /// How many memories.
    #[serde(default = "default_recall_k")]
    pub k: usize,
}

impl Default for RecallSettings {
    fn default() -> Self {
        RecallSettings {
            enabled: false,
            k: default_recall_k(),
        }
    }
}

fn default_recall_k() -> usize {
    3
}

fn default_max_steps() -> u32 {
    AgentConfig::default().max_steps
}

impl AgentSettings {
    /// A provider with every other setting at its default.
    pub fn new(provider: ProviderKind, base_url: &str, model: &str, api_key_env: &str) -> Self {
        let value = serde_json::json!({
            "provider": provider,
            "baseUrl": base_url,
            "model": model,
            "apiKeyEnv": api_key_env,
        });
        serde_json::from_value(value).expect("every other field has a default")
    }

    pub fn load(settings_path: &Path) -> Result<Option<AgentSettings>, String> {
        let root = cowork_store::settings::read_json(settings_path)?;
        match root.get("agent") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(value) => serde_json::from_value(value.clone())
                .map(Some)
                .map_err(|e| {
                    format!(
                        "{}: `agent` is invalid ({e}) — fix it in Settings → Model",
                        settings_path.display()
                    )
                }),
        }
    }

    pub fn save(&self, settings_path: &Path) -> Result<(), String> {
        let value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        cowork_store::settings::update_json(settings_path, |root| {
            root.insert("agent".into(), value);
            Ok(())
        })
    }

    /// The keyring account that holds this provider's key.
    pub fn keyring_account(&self) -> String {
        format!(
            "agent/{}",
            serde_json::to_value(self.provider)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        )
    }

    /// The provider, with its key read now from the environment variable or the keyring.
    pub fn provider(&self) -> Result<Arc<dyn Provider>, String> {
        let key = if self.api_key_env.is_empty() {
            // No keyring (a bare session, a container) must not stop keyless local servers
            // such as Ollama; a provider that needs a key answers 401, whose error names the fix.
            crate::secrets::get(&self.keyring_account())
                .unwrap_or_else(|e| {
                    tracing::warn!("{e}");
                    None
                })
                .unwrap_or_default()
        } else {
            std::env::var(&self.api_key_env).map_err(|_| {
                format!("the API key is expected in the environment variable {} — set it before starting Cowork, or store the key in Settings → Model", self.api_key_env)
            })?
        };
        Ok(match self.provider {
            ProviderKind::Anthropic => Arc::new(Anthropic::new(&self.base_url, &key)),
            ProviderKind::Openai => Arc::new(OpenAiCompatible::new(
                "openai-compatible",
                &self.base_url,
                &key,
            )),
        })
    }

    /// The model server runs on this computer: its base URL names a loopback address.
    pub fn is_local(&self) -> bool {
        cowork_contract::address::literal_host_kind(&self.base_url)
            == Some(cowork_contract::address::Kind::Loopback)
    }

    /// The profile a conversation that chooses none runs under. A default named but not
    /// defined allows nothing (and says so in the log): a misspelling must not mean "anything".
    fn default_profile(&self) -> Option<ToolProfile> {
        if let Some(name) = &self.profile {
            return Some(
                self.profiles
                    .iter()
                    .find(|p| &p.name == name)
                    .cloned()
                    .unwrap_or_else(|| {
                        tracing::warn!("the default tool profile «{name}» is not defined: no tool is offered until it is (Settings → Profiles)");
                        ToolProfile {
                            name: name.clone(),
                            tools: Some(vec![]),
                            ..ToolProfile::default()
                        }
                    }),
            );
        }
        self.allowed_tools.as_ref().map(|tools| ToolProfile {
            name: "allowedTools".into(),
            tools: Some(tools.clone()),
            ..ToolProfile::default()
        })
    }

    pub fn agent_config(&self) -> AgentConfig {
        AgentConfig {
            model: self.model.clone(),
            max_steps: self.max_steps,
            profile: self.default_profile(),
            profiles: self.profiles.clone(),
            recall: self.recall.enabled.then_some(self.recall.k.clamp(1, 20)),
            vision: self.vision,
            context_window: self.context_window.max(1_024),
            prices: self.prices.clone(),
            personas: self.personas.clone(),
            core_tools: self.core_tools.clone(),
            keep_secrets_home: !(self.local_model_sees_secrets && self.is_local()),
            ..AgentConfig::default()
        }
    }
}

/// A model server found running on this computer, with the models it offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LocalServer {
    pub name: String,
    /// Its OpenAI-compatible address (what Settings → Model takes as the base URL).
    pub base_url: String,
    pub models: Vec<String>,
}

/// Where the local model servers people run listen by default. (A list: these are the
/// programs' own defaults, which is what a first run can know; any other address is typed.)
pub const LOCAL_SERVERS: &[(&str, &str)] = &[
    ("Ollama", "http://127.0.0.1:11434/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
    ("llama.cpp", "http://127.0.0.1:8080/v1"),
];

/// The local model servers that answer at `places` (name, base URL), asked all at once, each
/// given 400 ms: a first run should not wait on a port nobody listens on.
pub async fn detect_local_servers(places: &[(&str, &str)]) -> Vec<LocalServer> {
    let asks = places.iter().map(|(name, base)| async move {
        let provider = OpenAiCompatible::new(name, base, "");
        let models = tokio::time::timeout(Duration::from_millis(400), provider.models()).await;
        let models = models.ok()?.ok()?;
        Some(LocalServer {
            name: name.to_string(),
            base_url: base.to_string(),
            models,
        })
    });
    futures::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Whether `settings` reach a model server that answers, before they are saved: the models it
/// offers, or the error that says what to fix.
pub async fn check_provider(settings: &AgentSettings) -> Result<Vec<String>, String> {
    let provider = settings.provider()?;
    provider.models().await.map_err(|e| e.to_string())
}
