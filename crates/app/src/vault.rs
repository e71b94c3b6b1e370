//! The vault's settings (`vault` in settings.json): its folder and which embedding model makes
//! its vectors. The model itself is loaded here and handed to the vault family.

use cowork_vault::{E5, Embedder, HttpEmbedder, Vault};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum EmbedderSettings {
    /// multilingual-e5-small in-process (installed by setup); `dir` overrides where it is.
    E5 {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dir: Option<PathBuf>,
    },
    /// An OpenAI-compatible `/embeddings` endpoint (Ollama: `http://127.0.0.1:11434/v1`).
    #[serde(rename_all = "camelCase")]
    Openai {
        base_url: String,
        model: String,
        /// An environment variable holding the key; empty for keyless local servers.
        #[serde(default)]
        api_key_env: String,
    },
    /// Words only.
    None,
}

impl Default for EmbedderSettings {
    fn default() -> Self {
        EmbedderSettings::E5 { dir: None }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct VaultSettings {
    /// The vault folder; the data dir's `vault/` when empty.
    #[serde(default)]
    pub folder: Option<PathBuf>,
    #[serde(default)]
    pub embedder: EmbedderSettings,
}

impl VaultSettings {
    pub fn load(settings_path: &Path) -> Result<VaultSettings, String> {
        let root = cowork_store::settings::read_json(settings_path)?;
        match root.get("vault") {
            None | Some(serde_json::Value::Null) => Ok(VaultSettings::default()),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                format!(
                    "{}: `vault` is invalid ({e}) — fix it in Settings → Memory",
                    settings_path.display()
                )
            }),
        }
    }

    pub fn save(&self, settings_path: &Path) -> Result<(), String> {
        let value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        cowork_store::settings::update_json(settings_path, |root| {
            root.insert("vault".into(), value);
            Ok(())
        })
    }
}

/// The in-process model, if this settings choice is one: chosen now, loaded at its first
/// embedding (an empty vault never maps the model).
pub(crate) fn local_embedder(
    settings: &EmbedderSettings,
) -> Option<Result<Arc<dyn Embedder>, String>> {
    let dir = match settings {
        EmbedderSettings::E5 { dir: Some(dir) } => dir.clone(),
        EmbedderSettings::E5 { dir: None } => match cowork_vault::embed::default_e5_dir() {
            Some(dir) => dir,
            None => return Some(Err("no HOME to find the model in: set COWORK_E5_DIR".into())),
        },
        EmbedderSettings::Openai { .. } => return None,
        EmbedderSettings::None => return Some(Err("turned off in Settings → Memory".into())),
    };
    Some(E5::lazy(&dir).map(|e| Arc::new(e) as Arc<dyn Embedder>))
}

/// An endpoint model, connected (blocking: call it off the runtime).
pub(crate) fn remote_embedder(
    settings: &EmbedderSettings,
) -> Option<Result<Arc<dyn Embedder>, String>> {
    let EmbedderSettings::Openai {
        base_url,
        model,
        api_key_env,
    } = settings
    else {
        return None;
    };
    let key = if api_key_env.is_empty() {
        String::new()
    } else {
        std::env::var(api_key_env).unwrap_or_default()
    };
    Some(HttpEmbedder::connect(base_url, model, &key).map(|e| Arc::new(e) as Arc<dyn Embedder>))
}

/// Switches the vault to `settings`' model; vectors of the old model stay stored but unused,
/// and the new model's are made in the background (progress on `Vault::progress`).
pub(crate) async fn apply_embedder(vault: &Arc<Vault>, settings: &EmbedderSettings) {
    let (v, settings) = (vault.clone(), settings.clone());
    let switched = tokio::task::spawn_blocking(move || {
        let chosen = local_embedder(&settings)
            .or_else(|| remote_embedder(&settings))
            .unwrap_or_else(|| Err("no model".into()));
        v.set_embedder(chosen);
    })
    .await;
    if let Err(e) = switched {
        tracing::warn!("vault: switching models failed: {e}");
    }
    if let Err(e) = vault.embed_missing().await {
        tracing::warn!("vault: background embedding stopped: {e}");
    }
}
