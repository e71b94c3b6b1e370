//! The vault's embedding model, chosen by its settings (`cowork_vault::VaultSettings`): loaded
//! here and handed to the vault family.

use cowork_vault::{E5, Embedder, HttpEmbedder, Vault};
use std::sync::Arc;

pub use cowork_vault::{EmbedderSettings, VaultSettings};

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
