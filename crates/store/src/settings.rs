//! The user's settings file (`settings.json`): several components own one key each
//! (`permissions`, `policy`, `agent`…). Reads tolerate a missing file; writes are
//! read-modify-write of one key, atomic (temp file + fsync + rename), keeping every other key.

use std::path::Path;

/// The whole file as JSON (`{}` when it does not exist).
pub fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: {e} — fix the file (or move it away) and try again",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Changes the top-level object in place and writes it back atomically.
pub fn update_json(
    path: &Path,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) -> Result<(), String>,
) -> Result<(), String> {
    let mut root = read_json(path)?;
    let Some(obj) = root.as_object_mut() else {
        return Err(format!(
            "{}: the top level must be a JSON object",
            path.display()
        ));
    };
    edit(obj)?;
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    crate::write_private(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}
