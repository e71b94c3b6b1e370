//! Speech: `cowork voice …`.

use super::*;

#[derive(Subcommand)]
pub(crate) enum VoiceCmd {
    /// The microphones and speakers this machine has (names for Settings → Voice).
    Devices,
    /// Record from the microphone until you stop talking → text (listen, reviewed and audited).
    Listen {
        /// The longest recording, in seconds (1–300).
        #[arg(long)]
        seconds: Option<u32>,
    },
    /// Speech in an audio file → text, offline (transcribe, reviewed and audited).
    Transcribe {
        /// WAV, FLAC, Ogg Vorbis or MP3.
        file: String,
    },
    /// Say a text aloud (speak, reviewed and audited); Ctrl-C stops it.
    Say {
        /// English or Chinese.
        text: String,
        /// An espeak-ng voice (en-us, cmn, …); chosen from the text when unset.
        #[arg(long)]
        voice: Option<String>,
    },
}

pub(crate) async fn voice(
    app: &App,
    cmd: VoiceCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let (tool, args) = match cmd {
        VoiceCmd::Devices => {
            let (inputs, outputs) = (
                cowork_app::voice_input_devices(),
                cowork_app::voice_output_devices(),
            );
            if json {
                say!(
                    "{}",
                    serde_json::json!({ "inputs": inputs, "outputs": outputs })
                );
            } else {
                for (kind, names) in [("microphones", inputs), ("speakers", outputs)] {
                    say!("{kind}:");
                    if names.is_empty() {
                        say!("  (none)");
                    }
                    for (i, name) in names.iter().enumerate() {
                        let default = if i == 0 { "  (default)" } else { "" };
                        say!("  {name}{default}");
                    }
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
        VoiceCmd::Listen { seconds } => ("listen", serde_json::json!({ "seconds": seconds })),
        VoiceCmd::Transcribe { file } => ("transcribe", serde_json::json!({ "path": file })),
        VoiceCmd::Say { text, voice } => {
            ("speak", serde_json::json!({ "text": text, "voice": voice }))
        }
    };
    call_and_print(app.scheduler(), tool, args, conversation, json).await
}
