//! The vault's settings (`vault` in settings.json): its folder and which embedding model makes
//! its vectors.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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

impl cowork_store::settings::Section for VaultSettings {
    const KEY: &'static str = "vault";
}
