//! Speech → text with whisper.cpp, in process and offline. The model is loaded at the first
//! transcription, not at start: a person who never speaks pays nothing for it.

use crate::audio::WHISPER_RATE;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;
use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

/// The speech models Cowork downloads (`cowork_assets`), best first: Whisper base hears Chinese
/// and 98 more languages; tiny.en only English, but it is faster and smaller.
const MODEL_ASSETS: [&str; 2] = ["whisper-base", "whisper-tiny-en"];

/// The model to use: in `COWORK_WHISPER_DIR` if set, else the best one downloaded (else where
/// the English one would be, for the error that says how to get it).
pub fn default_model() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("COWORK_WHISPER_DIR") {
        let dir = PathBuf::from(dir);
        let in_dir = ["ggml-base.bin", "ggml-tiny.en.bin"].map(|name| dir.join(name));
        return in_dir
            .iter()
            .find(|m| m.is_file())
            .or(in_dir.last())
            .cloned();
    }
    let downloaded = MODEL_ASSETS.map(cowork_assets::main_path);
    downloaded
        .iter()
        .flatten()
        .find(|m| m.is_file())
        .or(downloaded.last().and_then(Option::as_ref))
        .cloned()
}

/// How to get a speech model, for every error about it.
pub fn model_setup() -> String {
    format!(
        "{} (English), or `cowork assets fetch whisper-base` for Chinese and 98 more languages",
        cowork_assets::fetch_hint("whisper-tiny-en")
    )
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Segment {
    pub start_ms: i64,
    pub end_ms: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Transcript {
    pub text: String,
    /// The spoken language (ISO 639-1), as the model heard it.
    pub language: String,
    pub segments: Vec<Segment>,
}

/// How long the model stays in memory after its last use (it loads again in ~0.1 s).
pub const IDLE_UNLOAD: Duration = Duration::from_secs(300);

pub struct Speech {
    model: PathBuf,
    loaded: Arc<Mutex<Loaded>>,
    idle: Duration,
}

#[derive(Default)]
struct Loaded {
    context: Option<Arc<WhisperContext>>,
    /// Counts uses: an unload timer only acts when no use came after the one that armed it.
    uses: u64,
}

impl Speech {
    pub fn new(model: PathBuf) -> Self {
        Speech::with_idle(model, IDLE_UNLOAD)
    }

    /// `new`, unloading the model after `idle` without use.
    pub fn with_idle(model: PathBuf, idle: Duration) -> Self {
        Speech {
            model,
            loaded: Arc::default(),
            idle,
        }
    }

    pub fn model(&self) -> &Path {
        &self.model
    }

    /// Whether the model is in memory now.
    pub fn is_loaded(&self) -> bool {
        self.loaded.lock().unwrap().context.is_some()
    }

    /// Drops the model once `idle` passes with no further use.
    fn unload_when_idle(&self) {
        let uses = self.loaded.lock().unwrap().uses;
        let (loaded, idle) = (Arc::downgrade(&self.loaded), self.idle);
        std::thread::spawn(move || {
            std::thread::sleep(idle);
            let Some(loaded) = loaded.upgrade() else {
                return;
            };
            let mut loaded = loaded.lock().unwrap();
            if loaded.uses == uses {
                loaded.context = None;
            }
        });
    }

    fn context(&self) -> Result<Arc<WhisperContext>, String> {
        static LOGS: Once = Once::new();
        // whisper.cpp's own logging goes to tracing (the log file), not to the terminal.
        LOGS.call_once(whisper_rs::install_logging_hooks);
        let mut loaded = self.loaded.lock().unwrap();
        loaded.uses += 1;
        if let Some(context) = loaded.context.as_ref() {
            return Ok(context.clone());
        }
        if !self.model.is_file() {
            return Err(format!(
                "no speech model at {} — {}",
                self.model.display(),
                model_setup()
            ));
        }
        let context =
            WhisperContext::new_with_params(&self.model, WhisperContextParameters::default())
                .map_err(|e| {
                    format!(
                        "{}: not a Whisper model whisper.cpp can load ({e})",
                        self.model.display()
                    )
                })?;
        let context = Arc::new(context);
        loaded.context = Some(context.clone());
        Ok(context)
    }

    /// 16 kHz mono samples → text (blocking: call it off the async runtime).
    pub fn transcribe(&self, samples: &[f32]) -> Result<Transcript, String> {
        self.transcribe_in(samples, None)
    }

    /// `transcribe`, in `language` (ISO 639-1) when given; otherwise a multilingual model
    /// detects it and an English-only one hears English.
    pub fn transcribe_in(
        &self,
        samples: &[f32],
        language: Option<&str>,
    ) -> Result<Transcript, String> {
        let context = self.context()?;
        let transcript = self.run(&context, samples, language);
        drop(context);
        self.unload_when_idle();
        transcript
    }

    fn params(language: &str, audio_ctx: Option<i32>) -> FullParams<'_, '_> {
        let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
        // One thread: on two cores, two spin against each other and run 3–10× slower (measured).
        params.set_n_threads(1);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_special(false);
        params.set_print_timestamps(false);
        params.set_language(Some(language));
        if let Some(audio_ctx) = audio_ctx {
            params.set_audio_ctx(audio_ctx);
        }
        params
    }

    fn run(
        &self,
        context: &WhisperContext,
        samples: &[f32],
        language: Option<&str>,
    ) -> Result<Transcript, String> {
        let mut state = context
            .create_state()
            .map_err(|e| format!("whisper: {e}"))?;
        let language = match language {
            _ if !context.is_multilingual() => "en",
            Some(language) => language,
            None => "auto",
        };
        // A short clip needs only as much of the 30-s encoder window as it fills: ~5× faster.
        let seconds = samples.len() as f32 / WHISPER_RATE as f32;
        let audio_ctx = (seconds < 28.0).then(|| ((seconds * 50.0) as i32 + 64).min(1500));
        if let (Some(audio_ctx), "auto") = (audio_ctx, language) {
            // whisper.cpp detects the language before it applies `audio_ctx` (in
            // whisper_full_with_state), so detection encodes the whole 30-s window: 13 of the 15 s
            // that Whisper base took for a 3-s clip on one core (measured). A pass over a moment
            // of silence leaves the state's audio context set, and detection then encodes only
            // what the clip fills.
            let mut prime = Self::params("en", Some(audio_ctx));
            prime.set_max_tokens(1);
            prime.set_single_segment(true);
            prime.set_temperature_inc(0.0);
            state
                .full(prime, &vec![0.0; WHISPER_RATE as usize / 2])
                .map_err(|e| format!("whisper: {e}"))?;
        }
        let params = Self::params(language, audio_ctx);
        state
            .full(params, samples)
            .map_err(|e| format!("whisper: {e}"))?;
        let mut segments = Vec::new();
        for i in 0..state.full_n_segments() {
            let Some(segment) = state.get_segment(i) else {
                continue;
            };
            let text = segment
                .to_str_lossy()
                .map_err(|e| format!("whisper: {e}"))?
                .trim()
                .to_string();
            if text.is_empty() {
                continue;
            }
            // whisper.cpp counts in centiseconds.
            segments.push(Segment {
                start_ms: segment.start_timestamp() * 10,
                end_ms: segment.end_timestamp() * 10,
                text,
            });
        }
        let language = whisper_rs::get_lang_str(state.full_lang_id_from_state())
            .unwrap_or("en")
            .to_string();
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Transcript {
            text,
            language,
            segments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A person who never speaks pays nothing; one who spoke gets the memory back after a pause.
    #[test]
    fn the_model_loads_at_first_use_and_unloads_when_idle() {
        // The smallest model: whisper decodes silence the hard way (every temperature fallback),
        // and this is about loading, not hearing.
        let smallest = MODEL_ASSETS
            .last()
            .and_then(|id| cowork_assets::main_path(id));
        let tiny = smallest.filter(|m| m.is_file());
        let Some(model) = tiny.or_else(default_model).filter(|m| m.is_file()) else {
            panic!("no speech model — {}", model_setup());
        };
        // Wide margins: tests run side by side on a busy machine.
        let speech = Speech::with_idle(model, Duration::from_millis(1500));
        assert!(!speech.is_loaded());
        let silence = vec![0.0f32; WHISPER_RATE as usize];
        speech.transcribe(&silence).unwrap();
        assert!(speech.is_loaded());
        std::thread::sleep(Duration::from_millis(500));
        speech.transcribe(&silence).unwrap();
        std::thread::sleep(Duration::from_millis(700));
        assert!(speech.is_loaded(), "a use since keeps it");
        std::thread::sleep(Duration::from_millis(2000));
        assert!(!speech.is_loaded(), "unloaded after the idle time");
    }

    #[test]
    fn a_missing_model_says_how_to_get_one() {
        let speech = Speech::new(PathBuf::from("/nonexistent/ggml.bin"));
        let err = speech.transcribe(&[0.0; 1600]).unwrap_err();
        assert!(err.contains("cowork assets fetch"), "{err}");
    }
}
