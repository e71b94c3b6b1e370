//! Comparing what was said with what was heard.

/// Words (lower case, no punctuation; digits as written) — what the comparison reads.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate: edit distance over words / words said.
pub fn wer(said: &[String], heard: &[String]) -> f64 {
    let mut row: Vec<usize> = (0..=heard.len()).collect();
    for (i, s) in said.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, h) in heard.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(s != h)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[heard.len()] as f64 / said.len().max(1) as f64
}

/// Where setup put the Whisper model (`COWORK_WHISPER_DIR`, else under ~/.cache/cowork).
pub fn whisper_dir() -> std::path::PathBuf {
    cowork_voice::default_model()
        .and_then(|m| m.parent().map(std::path::Path::to_path_buf))
        .expect("HOME is set")
}
