//! Audio files → 16 kHz mono f32, what Whisper reads. Decoding is symphonia's (WAV, FLAC, Ogg
//! Vorbis, MP3); resampling is rubato's.

use rubato::{FftFixedIn, Resampler};
use std::path::Path;
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::DecoderOptions;
use symphonia::core::errors::Error as Decode;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

pub const WHISPER_RATE: u32 = 16_000;

/// The file's audio, mixed to mono and resampled to 16 kHz. The error says what was wrong in
/// words a person can act on.
pub fn load(path: &Path) -> Result<Vec<f32>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stream = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(ext);
    }
    let unreadable = |e: Decode| {
        format!(
            "{}: not audio this can read ({e}) — give a WAV, FLAC, Ogg Vorbis or MP3 file",
            path.display()
        )
    };
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            stream,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(unreadable)?;
    let mut format = probed.format;
    let track = format
        .default_track()
        .ok_or_else(|| format!("{}: the file has no audio track", path.display()))?;
    let track_id = track.id;
    let rate = track
        .codec_params
        .sample_rate
        .ok_or_else(|| format!("{}: the audio has no sample rate", path.display()))?;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(unreadable)?;
    let mut mono = Vec::new();
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(Decode::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(Decode::ResetRequired) => break,
            Err(e) => return Err(unreadable(e)),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet is skipped, as players do; the rest is still speech.
            Err(Decode::DecodeError(_)) => continue,
            Err(e) => return Err(unreadable(e)),
        };
        let channels = decoded.spec().channels.count().max(1);
        let mut samples = SampleBuffer::<f32>::new(decoded.capacity() as u64, *decoded.spec());
        samples.copy_interleaved_ref(decoded);
        mono.extend(
            samples
                .samples()
                .chunks(channels)
                .map(|frame| frame.iter().sum::<f32>() / channels as f32),
        );
    }
    if mono.is_empty() {
        return Err(format!("{}: the file holds no audio", path.display()));
    }
    resample(&mono, rate)
}

/// `samples` at `rate` → 16 kHz.
pub fn resample(samples: &[f32], rate: u32) -> Result<Vec<f32>, String> {
    if rate == WHISPER_RATE {
        return Ok(samples.to_vec());
    }
    const CHUNK: usize = 1024;
    let mut resampler = FftFixedIn::<f32>::new(rate as usize, WHISPER_RATE as usize, CHUNK, 2, 1)
        .map_err(|e| format!("resampling from {rate} Hz: {e}"))?;
    let mut out = Vec::with_capacity(samples.len() * WHISPER_RATE as usize / rate as usize + CHUNK);
    let mut chunks = samples.chunks_exact(CHUNK);
    for chunk in chunks.by_ref() {
        let frames = resampler
            .process(&[chunk], None)
            .map_err(|e| format!("resampling: {e}"))?;
        out.extend_from_slice(&frames[0]);
    }
    let rest = chunks.remainder();
    let frames = resampler
        .process_partial(Some(&[rest]), None)
        .map_err(|e| format!("resampling: {e}"))?;
    out.extend_from_slice(&frames[0]);
    Ok(out)
}
