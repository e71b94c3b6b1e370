//! The voice family: speech in and out, offline. `transcribe` (an audio file → text, whisper.cpp),
//! `listen` (the microphone → text: cpal, a voice activity detector, whisper.cpp) and `speak`
//! (text → the speaker: espeak-ng, English and Mandarin).

mod audio;
mod mic;
mod speaker;
mod speech;
mod tools;

pub use audio::load as load_audio;
pub use mic::{
    Endpointer, Endpoints, MicError, MicState, Microphone, Stopped, input_devices, output_devices,
};
pub use speaker::{SpeakError, Speaker, Spoken, voice_for};
pub use speech::{Segment, Speech, Transcript, default_model, model_setup};
pub use tools::Heard;

use cowork_contract::{DynTool, ToolProvider};
use cowork_store::settings::Section;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// `voice` in settings.json: the person's choices, read at every use (Settings → Voice applies
/// at once).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct VoiceSettings {
    /// A ggml Whisper model file the person provides (a multilingual one hears Chinese too);
    /// Whisper tiny.en from setup when unset.
    pub model: Option<PathBuf>,
    /// The microphone by name (`cowork voice devices`); the system default when unset.
    pub input_device: Option<String>,
    /// The speaker by name; the system default when unset.
    pub output_device: Option<String>,
    /// The spoken language (ISO 639-1, e.g. `zh`); detected when unset and the model is
    /// multilingual.
    pub language: Option<String>,
    /// The espeak-ng voice for replies read aloud; chosen from the text when unset (`cmn` for
    /// Chinese, `en-us` otherwise).
    pub voice: Option<String>,
    /// Send what was heard at once instead of leaving it in the input for review.
    pub auto_send: bool,
    /// Read the assistant's replies aloud.
    pub read_aloud: bool,
}

impl Section for VoiceSettings {
    const KEY: &'static str = "voice";
}

impl VoiceSettings {
    /// The model file to use: the person's, else the one setup installs.
    pub fn model_path(&self) -> PathBuf {
        self.model
            .clone()
            .or_else(default_model)
            .unwrap_or_else(|| PathBuf::from("ggml-tiny.en.bin"))
    }
}

/// The family's shared parts: one microphone, one speaker, the speech model (loaded when first
/// needed), and where the person's settings are.
pub struct Voice {
    settings_path: Option<PathBuf>,
    speech: Mutex<Arc<Speech>>,
    mic: Microphone,
    speaker: Speaker,
}

impl Voice {
    /// The family reading its settings from `settings_path` (defaults when None).
    pub fn new(settings_path: Option<PathBuf>) -> Arc<Self> {
        let model = read_settings(settings_path.as_deref()).model_path();
        Arc::new(Voice {
            settings_path,
            speech: Mutex::new(Arc::new(Speech::new(model))),
            mic: Microphone::default(),
            speaker: Speaker::default(),
        })
    }

    /// The settings now; a broken section is logged and read as the defaults.
    pub fn settings(&self) -> VoiceSettings {
        read_settings(self.settings_path.as_deref())
    }

    /// The speech model of the current settings (a changed `voice.model` takes effect here; the
    /// old one is dropped with its memory).
    pub fn speech(&self) -> Arc<Speech> {
        let model = self.settings().model_path();
        let mut speech = self.speech.lock().unwrap();
        if speech.model() != model {
            *speech = Arc::new(Speech::new(model));
        }
        speech.clone()
    }

    pub fn microphone(&self) -> &Microphone {
        &self.mic
    }

    pub fn speaker(&self) -> &Speaker {
        &self.speaker
    }

    /// Stops whatever is speaking or listening (Esc in the window).
    pub fn stop(&self) -> bool {
        let speaking = self.speaker.stop();
        self.mic.stop() || speaking
    }
}

fn read_settings(path: Option<&Path>) -> VoiceSettings {
    let Some(path) = path else {
        return VoiceSettings::default();
    };
    VoiceSettings::load_or_default(path)
}

#[derive(Clone)]
pub struct VoiceTools {
    voice: Arc<Voice>,
}

impl VoiceTools {
    pub fn new(voice: Arc<Voice>) -> Self {
        VoiceTools { voice }
    }
}

impl ToolProvider for VoiceTools {
    fn name(&self) -> &str {
        "voice"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.voice_tools()
    }
}
