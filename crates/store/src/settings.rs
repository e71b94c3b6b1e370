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

/// A family's section of the file (`key`), as the family's own settings type: absent means its
/// defaults. A section that does not fit the type is an error that names the key and the file.
pub fn section<T: serde::de::DeserializeOwned + Default>(
    path: &Path,
    key: &str,
) -> Result<T, String> {
    match read_json(path)?.get(key) {
        None | Some(serde_json::Value::Null) => Ok(T::default()),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| {
            format!(
                "{}: `{key}` is invalid ({e}) — fix it or remove it",
                path.display()
            )
        }),
    }
}

/// Writes a family's section `key` (the counterpart of [`section`]), keeping every other key.
pub fn save_section<T: serde::Serialize>(path: &Path, key: &str, value: &T) -> Result<(), String> {
    let value = serde_json::to_value(value).map_err(|e| e.to_string())?;
    update_json(path, |root| {
        root.insert(key.to_string(), value);
        Ok(())
    })
}

/// A section of settings.json with its owner's type: the key is declared once, beside the type,
/// and every reader and writer goes through it (no component looks keys up in raw JSON).
pub trait Section: serde::de::DeserializeOwned + Default {
    /// Its key at the top level of settings.json.
    const KEY: &'static str;

    /// The section (its defaults when absent); an error names the key and the file.
    fn load(settings: &Path) -> Result<Self, String> {
        section(settings, Self::KEY)
    }

    /// The section, or its defaults when it does not parse — reported, because a typo in
    /// settings.json must not keep the app from starting.
    fn load_or_default(settings: &Path) -> Self {
        Self::load(settings).unwrap_or_else(|e| {
            tracing::warn!("{e}; using the defaults");
            Self::default()
        })
    }

    /// Writes the section, keeping every other key.
    fn save(&self, settings: &Path) -> Result<(), String>
    where
        Self: serde::Serialize,
    {
        save_section(settings, Self::KEY, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    struct Family {
        undo_seconds: Option<f64>,
        hosts: Vec<String>,
    }

    #[test]
    fn a_section_is_typed_defaults_when_absent_and_names_its_key_when_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert_eq!(section::<Family>(&path, "mail").unwrap(), Family::default());
        std::fs::write(&path, r#"{"mail": {"undoSeconds": 5, "hosts": ["a"]}}"#).unwrap();
        let read = section::<Family>(&path, "mail").unwrap();
        assert_eq!(
            (read.undo_seconds, read.hosts),
            (Some(5.0), vec!["a".to_string()])
        );
        std::fs::write(&path, r#"{"mail": {"undoSeconds": "soon"}}"#).unwrap();
        let err = section::<Family>(&path, "mail").unwrap_err();
        assert!(err.contains("`mail` is invalid"), "{err}");
    }
}
