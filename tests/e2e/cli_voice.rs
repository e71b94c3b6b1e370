//! The microphone and the speaker, through the real stack: cpal opens ALSA devices that are
//! files (a fake microphone playing espeak-ng's sentences, a speaker writing to disk), `listen`
//! and `speak` run as `cowork voice …` processes, through the gate.

use cowork_tests::speech::{FakeAudio, wer, words};
use serde_json::json;
use std::path::Path;

/// Twenty sentences a person might say to an assistant, spoken into the microphone in real time,
/// four to a recording (the pause between sentences is shorter than the quiet that ends one):
/// `listen` opens the device, hears the speech start and end, and whisper writes it down. The
/// first recording is asked (the microphone is a risk the person grants); "always" answers it
/// for the rest.
#[test]
fn listen_hears_what_is_said_into_the_microphone() {
    let audio = FakeAudio::new(env!("CARGO_BIN_EXE_cowork"));
    let sentences = [
        "schedule a meeting with Alice tomorrow morning",
        "remind me to call the dentist on Friday",
        "what is the weather like in Shanghai this weekend",
        "add milk and bread to my shopping list",
        "send an email to Bob about the quarterly report",
        "read me my unread messages",
        "move the design review to next Tuesday afternoon",
        "create a new note called travel plans",
        "how long will it take to drive to the airport",
        "find the contract I signed last month",
        "turn off notifications until lunch",
        "what did I write about the garden project",
        "book a table for four people on Saturday evening",
        "summarize the document on my desktop",
        "cancel my appointment with the doctor",
        "play some quiet music while I work",
        "tell me the latest news about electric cars",
        "what time is my flight to London",
        "mark the report task as done",
        "write down that the printer needs new paper",
    ];
    audio.settings(json!({}));
    let (mut said, mut heard, mut from_files) = (Vec::new(), Vec::new(), Vec::new());
    for (i, group) in sentences.chunks(4).enumerate() {
        let sentence = group.join(". ");
        let wav = audio.speech(&sentence);
        let answers = (i == 0).then_some("always\n");
        let (out, text) = audio.listen_to(&wav, answers, None);
        assert_eq!(out["ok"], true, "{sentence}: {text}");
        assert_eq!(out["score"], 5, "{text}");
        if i == 0 {
            assert_eq!(
                out["decision"], "ask",
                "the first recording is asked: {text}"
            );
        } else {
            assert_eq!(out["decision"], "allow", "{text}");
        }
        let structured = &out["output"]["structured"];
        assert_eq!(structured["stopped"]["reason"], "silence", "{structured}");
        // All the speech is kept, and little of the quiet around it: nothing clipped or lost.
        let kept = structured["speech_seconds"].as_f64().unwrap();
        let spoken = wav_seconds(&wav);
        assert!(
            kept >= spoken - 0.1 && kept <= spoken + 1.3,
            "{sentence:?}: {spoken:.2} s said, {kept:.2} s kept"
        );
        said.extend(words(&sentence));
        heard.extend(words(structured["text"].as_str().unwrap()));
        // The same sentence from its file, never through a device: what the model alone makes
        // of espeak-ng's voice.
        let dir = audio.path("");
        let (file, text) = audio.cowork(
            &[
                "--workspace",
                dir.to_str().unwrap(),
                "voice",
                "transcribe",
                "said.wav",
            ],
            None,
        );
        assert_eq!(file["ok"], true, "{text}");
        let from_file = file["output"]["structured"]["text"].as_str().unwrap();
        from_files.extend(words(from_file));
        eprintln!(
            "said {sentence:?}: heard {:?}, from the file {from_file:?}",
            structured["text"]
        );
    }
    let (through_capture, model_alone) = (wer(&said, &heard), wer(&said, &from_files));
    eprintln!(
        "word error rate {through_capture:.3} through the microphone, {model_alone:.3} from files"
    );
    // tiny.en on espeak-ng's voice is fragile: the same file shifted by 8 ms turns "shopping
    // list" into "sharpened list" (measured), so the microphone's rate varies around the files'
    // (0.12 vs 0.09 measured, on audio that lines up with the file sample for sample). Capture
    // damage (clipped words, lost blocks) is checked above by the kept speech's length; this
    // bound catches a broken pipeline (a wrong rate or channel mix reads as gibberish, > 0.5).
    assert!(model_alone <= 0.2, "the model itself: {model_alone:.3}");
    assert!(
        through_capture <= 0.3,
        "through the microphone: {through_capture:.3}"
    );
}

/// Quiet: no speech heard, said plainly, nothing made up.
#[test]
fn listen_to_silence_hears_nothing() {
    let audio = FakeAudio::new(env!("CARGO_BIN_EXE_cowork"));
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let (out, text) = audio.cowork(&["voice", "listen", "--seconds", "3"], None);
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(out["output"]["structured"]["text"], "", "{text}");
    assert_eq!(
        out["output"]["structured"]["stopped"]["reason"],
        "no_speech"
    );
    assert_eq!(out["output"]["content"][0]["text"], "No speech heard.");
}

/// No microphone, or not the one the settings name: the error says which setting to change.
#[test]
fn a_missing_microphone_names_the_setting() {
    let mut audio = FakeAudio::new(env!("CARGO_BIN_EXE_cowork"));
    audio.settings(json!({
        "permissions": {"allow": ["listen"]},
        "voice": {"inputDevice": "USB headset that is not here"}
    }));
    let (out, text) = audio.cowork(&["voice", "listen"], None);
    assert_eq!(out["ok"], false, "{text}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("USB headset that is not here"),
        "{message}"
    );
    assert!(message.contains("voice.inputDevice"), "{message}");

    // No sound card at all: the default device cannot open.
    audio.stop_pulse();
    std::fs::write(
        audio.path("home/.asoundrc"),
        "pcm.!default { type hw; card 7 }\n",
    )
    .unwrap();
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let (out, text) = audio.cowork(&["voice", "listen"], None);
    assert_eq!(out["ok"], false, "{text}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("voice.inputDevice"), "{message}");
}

/// The microphone is unplugged mid-sentence (its PulseAudio device removed): the recording ends
/// with what came before, transcribed, and says the device was lost.
#[test]
fn a_microphone_lost_mid_recording_keeps_what_it_heard() {
    let audio = FakeAudio::new(env!("CARGO_BIN_EXE_cowork"));
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let wav = audio.speech("please water the plants on the balcony and then feed the cat");
    let unplug = || assert!(audio.pactl(&["unload-module", "module-null-sink"]));
    let (out, text) = audio.listen_to(
        &wav,
        None,
        Some((std::time::Duration::from_millis(2200), &unplug)),
    );
    assert_eq!(out["ok"], true, "{text}");
    let structured = &out["output"]["structured"];
    assert_eq!(
        structured["stopped"]["reason"], "device_lost",
        "{structured}"
    );
    let heard = structured["text"].as_str().unwrap().to_lowercase();
    assert!(
        heard.contains("please"),
        "what came before is kept: {heard}"
    );
    assert!(!heard.contains("cat"), "nothing after: {heard}");
    let content = out["output"]["content"][0]["text"].as_str().unwrap();
    assert!(content.contains("microphone stopped"), "{content}");
}

/// `speak` plays through the speaker (here a file): English and Chinese, as long as the speech
/// is, and the text is never read as options.
#[test]
fn speak_plays_english_and_chinese_on_the_speaker() {
    let audio = FakeAudio::new(env!("CARGO_BIN_EXE_cowork"));
    audio.settings(json!({"voice": {"outputDevice": "speaker"}}));
    let (out, text) = audio.cowork(
        &[
            "voice",
            "say",
            "Your meeting with Alice starts in ten minutes.",
        ],
        None,
    );
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(
        out["decision"], "allow",
        "playing sound is low risk: {text}"
    );
    let spoken = out["output"]["structured"]["seconds"].as_f64().unwrap();
    let played = audio.speaker_seconds();
    assert!((1.5..6.0).contains(&played), "{played} s on the speaker");
    assert!(
        (spoken - played).abs() < 0.5,
        "said {spoken} s, played {played} s"
    );
    assert_eq!(out["output"]["structured"]["voice"], "en-us");

    std::fs::remove_file(audio.path("speaker.raw")).unwrap();
    let (out, text) = audio.cowork(&["voice", "say", "明天上午十点和王芳开会。"], None);
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(out["output"]["structured"]["voice"], "cmn");
    assert!(audio.speaker_seconds() > 1.0);

    // A text that looks like espeak-ng's options is spoken, not obeyed.
    let planted = audio.path("planted.wav");
    let hostile = format!("-w {} --stdout", planted.display());
    let (out, text) = audio.cowork(&["voice", "say", "--", &hostile], None);
    assert_eq!(out["ok"], true, "{text}");
    assert!(!planted.exists());
}

/// A WAV file's length, from its header.
fn wav_seconds(wav: &Path) -> f64 {
    let bytes = std::fs::read(wav).unwrap();
    let rate = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as f64;
    let block = u16::from_le_bytes(bytes[32..34].try_into().unwrap()) as f64;
    (bytes.len() - 44) as f64 / block / rate
}
