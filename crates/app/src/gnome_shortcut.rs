//! Quick ask on a key where the desktop keeps the keys: a Wayland session lets no app grab a
//! global shortcut, but GNOME runs any command bound in its own custom shortcuts. This adds (or
//! updates) one there — Cowork's, under its own path — through `gsettings`, GNOME's own tool for
//! its settings, which writes wherever the session keeps them (dconf). Done only when the person
//! presses the button in Settings → Desktop; nothing else of theirs is changed.

use std::path::Path;
use std::process::Command;

const MEDIA_KEYS: &str = "org.gnome.settings-daemon.plugins.media-keys";
const CUSTOM: &str = "org.gnome.settings-daemon.plugins.media-keys.custom-keybinding";
/// Cowork's own entry among the person's custom shortcuts.
const COWORK_PATH: &str =
    "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/cowork-quick-ask/";

#[derive(Debug, thiserror::Error)]
pub enum GnomeShortcutError {
    #[error("“{0}” is not a shortcut GNOME can bind (e.g. Ctrl+Alt+Space)")]
    BadShortcut(String),
    #[error(
        "GNOME's shortcut settings are not here (`gsettings` {0}) — bind the command in your desktop's keyboard settings instead"
    )]
    NoGnome(String),
}

/// Runs `gsettings`, with extra variables (tests point it at a private settings file).
#[derive(Default)]
pub struct Gsettings {
    pub env: Vec<(String, String)>,
}

impl Gsettings {
    fn run(&self, args: &[&str]) -> Result<String, GnomeShortcutError> {
        let output = Command::new("gsettings")
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| GnomeShortcutError::NoGnome(e.to_string()))?;
        if !output.status.success() {
            let why = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(GnomeShortcutError::NoGnome(why));
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Binds `shortcut` (Cowork's form, `Ctrl+Alt+Space`) to `program --quick-ask` in GNOME's
    /// custom shortcuts; the person's other shortcuts stay as they are. Says what it did.
    pub fn bind_quick_ask(
        &self,
        shortcut: &str,
        program: &Path,
    ) -> Result<String, GnomeShortcutError> {
        let binding = gnome_accelerator(shortcut)
            .ok_or_else(|| GnomeShortcutError::BadShortcut(shortcut.to_owned()))?;
        let listed = self.run(&["get", MEDIA_KEYS, "custom-keybindings"])?;
        let mut paths = string_list(&listed);
        if !paths.iter().any(|p| p == COWORK_PATH) {
            paths.push(COWORK_PATH.to_owned());
        }
        let schema = format!("{CUSTOM}:{COWORK_PATH}");
        let command = format!("'{}' --quick-ask", program.display());
        for (key, value) in [
            ("name", "Cowork quick ask".to_owned()),
            ("command", command),
            ("binding", binding.clone()),
        ] {
            self.run(&["set", &schema, key, &gvariant_string(&value)])?;
        }
        let list = paths.iter().map(|p| gvariant_string(p)).collect::<Vec<_>>();
        self.run(&[
            "set",
            MEDIA_KEYS,
            "custom-keybindings",
            &format!("[{}]", list.join(", ")),
        ])?;
        Ok(format!(
            "{shortcut} opens quick ask (GNOME custom shortcut {binding})"
        ))
    }
}

/// `Ctrl+Alt+Space` → `<Control><Alt>space`, GNOME's accelerator form.
pub fn gnome_accelerator(shortcut: &str) -> Option<String> {
    let parts: Vec<&str> = shortcut.split('+').map(str::trim).collect();
    let (key, modifiers) = parts.split_last()?;
    let mut out = String::new();
    for modifier in modifiers {
        out.push_str(match modifier.to_ascii_lowercase().as_str() {
            "ctrl" | "control" | "commandorcontrol" | "cmdorctrl" => "<Control>",
            "alt" | "option" => "<Alt>",
            "shift" => "<Shift>",
            "super" | "meta" | "cmd" | "command" => "<Super>",
            _ => return None,
        });
    }
    let key = match key.to_ascii_lowercase().as_str() {
        "" => return None,
        "space" => "space".to_owned(),
        k if k.len() == 1 && k.chars().all(|c| c.is_ascii_alphanumeric()) => k.to_owned(),
        k if k.starts_with('f') && k[1..].parse::<u8>().is_ok_and(|n| (1..=24).contains(&n)) => {
            key.to_ascii_uppercase()
        }
        _ => return None,
    };
    (!modifiers.is_empty()).then(|| out + &key)
}

/// A GVariant string literal (single quotes; backslash and quote escaped).
fn gvariant_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The strings of a GVariant `as` as gsettings prints it (`@as []`, `['/a/', '/b/']`). Paths of
/// custom shortcuts hold no quotes or commas, which is all this must read.
fn string_list(printed: &str) -> Vec<String> {
    let inner = printed.trim_start_matches("@as").trim();
    let inner = inner.trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .map(|s| s.trim().trim_matches('\'').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cowork_shortcuts_become_gnome_accelerators_and_others_are_refused() {
        assert_eq!(
            gnome_accelerator("Ctrl+Alt+Space").as_deref(),
            Some("<Control><Alt>space")
        );
        assert_eq!(
            gnome_accelerator("Super+Shift+K").as_deref(),
            Some("<Super><Shift>k")
        );
        assert_eq!(gnome_accelerator("Alt+F2").as_deref(), Some("<Alt>F2"));
        for bad in ["Space", "Ctrl+", "Hyper+K", "Ctrl+Alt+'", "", "Ctrl+F99"] {
            assert_eq!(gnome_accelerator(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_listed_shortcuts_are_read_as_gsettings_prints_them() {
        assert!(string_list("@as []").is_empty());
        assert_eq!(string_list("['/a/', '/b/']"), vec!["/a/", "/b/"]);
        assert_eq!(gvariant_string("it's"), "'it\\'s'");
    }
}
