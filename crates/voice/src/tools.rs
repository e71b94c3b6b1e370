//! Voice tools: `transcribe`.

use crate::speech::{Speech, Transcript};
use cowork_contract::{
    CallPlan, Effect, EffectEnv, Tool, ToolContext, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Arc;

pub struct Transcribe(pub Arc<Speech>);

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
        let (speech, path) = (self.0.clone(), path.clone());
        tokio::task::spawn_blocking(move || {
            let samples = crate::audio::load(&path).map_err(ToolError::invalid)?;
            speech.transcribe(&samples).map_err(ToolError::failed)
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
