//! Speech: `cowork voice …`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum VoiceCmd {
    /// Speech in an audio file → text, offline (transcribe, reviewed and audited).
    Transcribe {
        /// WAV, FLAC, Ogg Vorbis or MP3.
        file: String,
    },
}

pub(crate) async fn voice(
    app: &App,
    cmd: VoiceCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    match cmd {
        VoiceCmd::Transcribe { file } => {
            let args = serde_json::json!({ "path": file });
            call_and_print(app.scheduler(), "transcribe", args, conversation, json).await
        }
    }
}
