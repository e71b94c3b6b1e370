//! Voice tools: `transcribe`, `listen`, `speak`.

use crate::VoiceTools;
use crate::mic::{Endpoints, Stopped};
use crate::speaker::Spoken;
use crate::speech::{Segment, Transcript};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscribeInput {
    /// The audio file (WAV, FLAC, Ogg Vorbis or MP3): relative to the workspace, absolute, or `~/…`.
    pub path: String,
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

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeakInput {
    /// What to say (English or Chinese; at most 10,000 characters).
    #[schemars(length(min = 1, max = 10000))]
    pub text: String,
    /// An espeak-ng voice such as `en-us` or `cmn`; chosen from the text when unset.
    pub voice: Option<String>,
}

fn transcribe_text(out: &Transcript) -> String {
    if out.text.is_empty() {
        "No speech heard in the file.".into()
    } else {
        out.text.clone()
    }
}

fn listen_text(out: &Heard) -> String {
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

fn speak_text(out: &Spoken) -> String {
    if out.stopped {
        format!("Stopped after {:.1} s.", out.seconds)
    } else {
        format!("Said ({:.1} s).", out.seconds)
    }
}

#[tools(list = voice_tools)]
impl VoiceTools {
    #[tool(name = "transcribe", title = "Transcribe audio", category = "voice", aliases = ["speech_to_text"],
           effects = [FsRead], read_only, idempotent, timeout = Duration::from_secs(600), plan = Self::plan_transcribe,
           text = transcribe_text, description = "Turn speech in an audio file into text, offline: the words, their language and timed segments.")]
    async fn transcribe(
        &self,
        _: &TranscribeInput,
        path: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Transcript> {
        // The file read is the reviewed one: a symlink swapped in since review is refused.
        ctx.env.recheck(path)?;
        let (speech, path) = (self.voice.speech(), path.clone());
        let language = self.voice.settings().language;
        tokio::task::spawn_blocking(move || {
            let samples = crate::audio::load(&path).map_err(ToolError::invalid)?;
            speech
                .transcribe_in(&samples, language.as_deref())
                .map_err(ToolError::failed)
        })
        .await
        .map_err(|e| ToolError::failed(format!("transcription stopped: {e}")))?
    }

    fn plan_transcribe(
        &self,
        input: &TranscribeInput,
        env: &EffectEnv,
    ) -> Result<CallPlan<PathBuf>, ToolError> {
        if input.path.trim().is_empty() {
            return Err(ToolError::invalid("`path` is empty: give an audio file"));
        }
        let path = env.resolve_path(&input.path);
        let effect = Effect::FsRead {
            path: path.display().to_string(),
        };
        Ok(CallPlan::with(vec![effect], path))
    }

    #[tool(name = "listen", title = "Listen", category = "voice", aliases = ["dictate", "record_voice"],
           effects = [AudioCapture], timeout = Duration::from_secs(330),
           description = "Record from the microphone until the person stops or goes quiet, and give back what they said, offline. The window shows while the microphone is open.",
           text = listen_text)]
    async fn listen(&self, input: &ListenInput, ctx: &ToolContext) -> ToolResult<Heard> {
        // The schema bounds it (1–300): the gate refuses other values before review.
        let max = Duration::from_secs(input.seconds.unwrap_or(60).into());
        let voice = self.voice.clone();
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

    #[tool(name = "speak", title = "Speak", category = "voice", aliases = ["say", "text_to_speech"],
           effects = [AudioPlay], timeout = Duration::from_secs(900),
           description = "Say a text aloud on the speaker (English or Chinese), offline. The person can stop it.",
           text = speak_text)]
    async fn speak(&self, input: &SpeakInput, ctx: &ToolContext) -> ToolResult<Spoken> {
        let text = input.text.trim().to_string();
        if text.is_empty() {
            return Err(ToolError::invalid("`text` is empty: give something to say"));
        }
        let (voice, choice) = (self.voice.clone(), input.voice.clone());
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
}
