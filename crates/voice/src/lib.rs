//! The voice family: speech in and out. Today `transcribe` (an audio file → text, offline,
//! whisper.cpp); the microphone (`listen`) and speech (`speak`) come next (issue 21).

mod audio;
mod speech;
mod tools;

pub use speech::{MODEL_SETUP, Segment, Speech, Transcript, default_model};

use cowork_contract::{DynTool, ToolProvider, typed};
use std::path::PathBuf;
use std::sync::Arc;

/// `voice` in settings.json.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VoiceSettings {
    /// A ggml Whisper model file the person provides (a multilingual one hears Chinese too);
    /// Whisper tiny.en from setup when unset.
    pub model: Option<PathBuf>,
}

pub struct VoiceTools {
    speech: Arc<Speech>,
}

impl VoiceTools {
    /// The family, with the speech model at `model` (loaded when first needed).
    pub fn new(model: PathBuf) -> Self {
        VoiceTools {
            speech: Arc::new(Speech::new(model)),
        }
    }

    pub fn speech(&self) -> &Arc<Speech> {
        &self.speech
    }
}

impl ToolProvider for VoiceTools {
    fn name(&self) -> &str {
        "voice"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        vec![typed(tools::Transcribe(self.speech.clone()))]
    }
}
