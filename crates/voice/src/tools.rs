//! Voice tools: `transcribe`, `listen`, `speak`.

use crate::Voice;
use crate::mic::{Endpoints, Stopped};
use crate::speaker::Spoken;
use crate::speech::{Segment, Transcript};
use cowork_contract::{
    CallPlan, Effect, EffectEnv, Tool, ToolContext, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct Transcribe(pub Arc<Voice>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscribeInput {
    /// The audio file (WAV, FLAC, Ogg Vorbis or MP3): relative to the workspace, absolute, or `~/…`.
    pub path: String,
}

#[tool(name = "transcribe", title = "Transcribe audio", category = "voice", aliases = ["speech_to_text"],
       effects = [FsRead], read_only, idempotent, timeout = std::time::Duration::from_secs(600),
       description = "Turn speech in an audio file into text, offline: the words, their language and timed segments.")]
impl Tool for Transcribe {
    type Input = TranscribeInput;
    type Output = Transcript;
    type Plan = PathBuf;

    fn plan(&self, input: &Self::Input, env: &EffectEnv) -> Result<CallPlan<PathBuf>, ToolError> {
        if input.path.trim().is_empty() {
            return Err(ToolError::invalid("`path` is empty: give an audio file"));
        }
        let path = env.resolve_path(&input.path);
        let effect = Effect::FsRead {
            path: path.display().to_string(),
        };
        Ok(CallPlan::with(vec![effect], path))
    }

    async fn call(
        &self,
        _: &Self::Input,
        path: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Transcript> {
        // The file read is the reviewed one: a symlink swapped in since review is refused.
        ctx.env.recheck(path)?;
        let (speech, path) = (self.0.speech(), path.clone());
        let language = self.0.settings().language;
        tokio::task::spawn_blocking(move || {
            let samples = crate::audio::load(&path).map_err(ToolError::invalid)?;
            speech
                .transcribe_in(&samples, language.as_deref())
                .map_err(ToolError::failed)
        })
        .await
        .map_err(|e| ToolError::failed(format!("transcription stopped: {e}")))?
    }

    fn to_text(&self, out: &Transcript) -> String {
        if out.text.is_empty() {
            "No speech heard in the file.".into()
        } else {
            out.text.clone()
        }
    }
}

/// A blocking job that sees the call's cancellation as a flag it can poll.
async fn blocking<T: Send + 'static>(
    ctx: &ToolContext,
    job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, ToolError> {
    let flag = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (flag, cancel) = (flag.clone(), ctx.cancel.clone());
        tokio::spawn(async move {
            cancel.cancelled().await;
            flag.store(true, Ordering::SeqCst);
        })
    };
    let result = tokio::task::spawn_blocking(move || job(&flag)).await;
    watcher.abort();
    result.map_err(|e| ToolError::failed(format!("stopped: {e}")))
}

pub struct Listen(pub Arc<Voice>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListenInput {
    /// The longest recording, in seconds (1–300; 60 when unset). It ends sooner when the person
    /// stops or goes quiet.
    #[serde(default)]
    #[schemars(range(min = 1, max = 300))]
    pub seconds: Option<u32>,
}

/// What `listen` heard.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Heard {
    pub text: String,
    pub language: String,
    pub segments: Vec<Segment>,
    /// Seconds of speech kept (quiet before and after trimmed).
    pub speech_seconds: f32,
    /// Why the recording ended.
    pub stopped: Stopped,
}

#[tool(name = "listen", title = "Listen", category = "voice", aliases = ["dictate", "record_voice"],
       effects = [AudioCapture], timeout = std::time::Duration::from_secs(330),
       description = "Record from the microphone until the person stops or goes quiet, and give back what they said, offline. The window shows while the microphone is open.")]
impl Tool for Listen {
    type Input = ListenInput;
    type Output = Heard;

    async fn call(&self, input: &Self::Input, _: &(), ctx: &ToolContext) -> ToolResult<Heard> {
        // The schema bounds it (1–300): the gate refuses other values before review.
        let max = Duration::from_secs(input.seconds.unwrap_or(60).into());
        let voice = self.0.clone();
        blocking(ctx, move |cancel| {
            let settings = voice.settings();
            let speech = voice.speech();
            let language = settings.language.as_deref();
            let partial =
                |samples: &[f32]| speech.transcribe_in(samples, language).ok().map(|t| t.text);
            let limits = Endpoints {
                max,
                ..Endpoints::default()
            };
            let recording = voice
                .microphone()
                .record(settings.input_device.as_deref(), limits, cancel, &partial)
                .map_err(|e| match e {
                    crate::MicError::AlreadyListening => ToolError::failed(e.to_string()),
                    _ => ToolError::not_configured("a microphone", e.to_string()),
                })?;
            let speech_seconds = recording.samples.len() as f32 / crate::audio::WHISPER_RATE as f32;
            let transcript = if recording.samples.is_empty() {
                Transcript {
                    text: String::new(),
                    language: language.unwrap_or("en").to_string(),
                    segments: vec![],
                }
            } else {
                speech
                    .transcribe_in(&recording.samples, language)
                    .map_err(ToolError::failed)?
            };
            Ok(Heard {
                text: transcript.text,
                language: transcript.language,
                segments: transcript.segments,
                speech_seconds,
                stopped: recording.stopped,
            })
        })
        .await?
    }

    fn to_text(&self, out: &Heard) -> String {
        let text = if out.text.is_empty() {
            "No speech heard.".to_string()
        } else {
            out.text.clone()
        };
        match &out.stopped {
            Stopped::DeviceLost(why) => format!(
                "{text}\n(The microphone stopped mid-recording: {why}. This is what came before.)"
            ),
            _ => text,
        }
    }
}

pub struct Speak(pub Arc<Voice>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeakInput {
    /// What to say (English or Chinese; at most 10,000 characters).
    #[schemars(length(min = 1, max = 10000))]
    pub text: String,
    /// An espeak-ng voice such as `en-us` or `cmn`; chosen from the text when unset.
    #[serde(default)]
    pub voice: Option<String>,
}

#[tool(name = "speak", title = "Speak", category = "voice", aliases = ["say", "text_to_speech"],
       effects = [AudioPlay], timeout = std::time::Duration::from_secs(900),
       description = "Say a text aloud on the speaker (English or Chinese), offline. The person can stop it.")]
impl Tool for Speak {
    type Input = SpeakInput;
    type Output = Spoken;

    async fn call(&self, input: &Self::Input, _: &(), ctx: &ToolContext) -> ToolResult<Spoken> {
        let text = input.text.trim().to_string();
        if text.is_empty() {
            return Err(ToolError::invalid("`text` is empty: give something to say"));
        }
        let (voice, choice) = (self.0.clone(), input.voice.clone());
        blocking(ctx, move |cancel| {
            let settings = voice.settings();
            let chosen = choice.or(settings.voice);
            voice
                .speaker()
                .say(
                    &text,
                    chosen.as_deref(),
                    settings.output_device.as_deref(),
                    cancel,
                )
                .map_err(|e| match e {
                    crate::SpeakError::BadVoice(_) => ToolError::invalid(e.to_string()),
                    _ => ToolError::not_configured("speech output", e.to_string()),
                })
        })
        .await?
    }

    fn to_text(&self, out: &Spoken) -> String {
        if out.stopped {
            format!("Stopped after {:.1} s.", out.seconds)
        } else {
            format!("Said ({:.1} s).", out.seconds)
        }
    }
}
