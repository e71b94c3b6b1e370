//! What a path is, judged by one predicate that every reader, writer and sandbox uses: a file
//! that holds credentials, one that configures a program, or an ordinary file.
//!
//! Configuration is classified by what it is, not looked up in a list of tools: any name that
//! starts with a dot is configuration (`.git`, `.vscode`, `.envrc`, `.bash_aliases`, a
//! `.cursor/mcp.json` nobody had heard of yet), plus a few non-dot files that make programs run
//! code ([`NAMED_CONFIGURATION`]). Credentials are files named as keys and token stores are
//! named; that list is unavoidable (a key file is recognised by its conventional name or by its
//! content, see [`holds_private_key`]), and everything of a home folder that the person did not
//! grant is out of reach by containment instead (`confine`).

use crate::EffectEnv;
use std::path::{Component, Path, PathBuf};

/// What a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathClass {
    /// Holds keys, tokens or passwords (or may: a home folder's own dot entries), with what.
    Credential(&'static str),
    /// Configures a program that runs code or grants permissions: writing it always asks.
    Configuration(&'static str),
    Ordinary,
}

/// Whole file names of key and token stores. A list because key files are recognised by the
/// names their programs give them; [`holds_private_key`] catches a key under any other name.
const CREDENTIAL_NAMES: &[&str] = &[
    ".env",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".my.cnf",
    "credentials",
    "credentials.toml",
    "credentials.json",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    ".htpasswd",
    "secrets.yml",
    "secrets.yaml",
];
const CREDENTIAL_SUFFIXES: &[&str] = &[
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".kdbx",
    ".gpg",
    ".asc",
    ".ovpn",
];
/// Folders whose whole content is keys, logins or another program's private state, wherever
/// they are (a home folder's `.ssh` and a granted folder's copy alike).
const CREDENTIAL_FOLDERS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".gcloud",
    "keyrings",
    ".mozilla",
    "google-chrome",
    "chromium",
];

/// Non-dot files that make a program run code (every dot name is configuration already).
/// A list because these programs chose ordinary-looking names; what it misses is still an
/// ordinary workspace file, journaled and undoable, never a path out of the sandbox.
pub const NAMED_CONFIGURATION: &[(&str, &str)] = &[
    ("jenkinsfile", "CI"),
    ("azure-pipelines.yml", "CI"),
    ("bitbucket-pipelines.yml", "CI"),
    ("lefthook.yml", "git hooks"),
    ("lefthook.yaml", "git hooks"),
    ("lefthook-local.yml", "git hooks"),
    ("bunfig.toml", "bun"),
    ("pip.conf", "pip"),
    ("pip.ini", "pip"),
    ("autostart", "programs started at login"),
];

fn eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether one name is a credential file or folder.
pub fn is_credential_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CREDENTIAL_NAMES.iter().any(|n| eq(n, name))
        || lower.starts_with(".env.")
        || CREDENTIAL_SUFFIXES.iter().any(|s| lower.ends_with(s))
        || CREDENTIAL_FOLDERS.iter().any(|d| eq(d, name))
}

/// What one name configures, if it configures anything: every dot name does.
pub fn configures(name: &str) -> Option<&'static str> {
    if name.starts_with('.') && name != "." && name != ".." {
        return Some(what_dot_configures(name));
    }
    NAMED_CONFIGURATION
        .iter()
        .find(|(n, _)| eq(n, name))
        .map(|(_, what)| *what)
}

/// A better word for the modal than "a program" where the name says which: the classification
/// itself never depends on this.
fn what_dot_configures(name: &str) -> &'static str {
    const KNOWN: &[(&str, &str)] = &[
        (".cowork", "Cowork's permissions"),
        (".git", "git (hooks and config run programs)"),
        (
            ".gitattributes",
            "git (filters and diff drivers run programs)",
        ),
        (".gitmodules", "git"),
        (".github", "CI"),
        (".vscode", "the editor (tasks and settings run programs)"),
        (".claude", "another assistant's permissions"),
        (".envrc", "the shell (direnv runs it on cd)"),
    ];
    KNOWN
        .iter()
        .find(|(n, _)| eq(n, name))
        .map_or("a program (its settings can run code)", |(_, what)| what)
}

/// What a path is, judged on its components below `base` (the workspace root or the home
/// folder it lies in): a workspace that itself lives under a dot folder does not make every
/// file in it configuration. `base` = None judges every component.
pub fn classify(path: &Path, base: Option<&Path>) -> PathClass {
    let relative = base.and_then(|b| path.strip_prefix(b).ok()).unwrap_or(path);
    let names: Vec<&str> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    // Credentials first: `.npmrc` is both, and its tokens matter more than its settings.
    if names.iter().any(|n| is_credential_name(n)) {
        return PathClass::Credential("credentials");
    }
    match names.iter().find_map(|n| configures(n)) {
        Some(what) => PathClass::Configuration(what),
        None => PathClass::Ordinary,
    }
}

/// What a resolved path is for this session's tools: judged below the workspace root it lies in
/// (or the home folder), and every dot entry of the home folder that no workspace root lies in
/// or below counts as credentials — a workspace that is the home folder itself does not grant
/// `~/.config/gh` or `~/.bashrc`; only a workspace opened inside one does.
pub fn classify_for(path: &Path, env: &EffectEnv) -> PathClass {
    Classifier::new(env).classify(path)
}

/// [`classify_for`] with the home folder and the workspace roots resolved once, for a tool that
/// judges every file of a tree.
pub struct Classifier {
    home: Option<PathBuf>,
    roots: Vec<PathBuf>,
}

impl Classifier {
    pub fn new(env: &EffectEnv) -> Self {
        Classifier {
            home: env.home.as_deref().and_then(|h| h.canonicalize().ok()),
            roots: env.canonical_roots(),
        }
    }

    pub fn classify(&self, path: &Path) -> PathClass {
        if self.home_entry_not_granted(path) {
            return PathClass::Credential(
                "your home folder's own settings and logins (no workspace includes them)",
            );
        }
        let root = self.roots.iter().find(|r| path.starts_with(r));
        let home = self.home.as_ref().filter(|h| path.starts_with(h));
        classify(path, root.or(home).map(PathBuf::as_path))
    }

    fn home_entry_not_granted(&self, path: &Path) -> bool {
        let Some(home) = &self.home else { return false };
        let Ok(below) = path.strip_prefix(home) else {
            return false;
        };
        let Some(Component::Normal(first)) = below.components().next() else {
            return false;
        };
        if !first.to_string_lossy().starts_with('.') {
            return false;
        }
        let entry = home.join(first);
        !self.roots.iter().any(|r| r.starts_with(&entry))
    }
}

/// Whether a file's first bytes are a private key (PEM or OpenSSH), whatever it is called.
pub fn holds_private_key(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    text.lines().take(8).any(|l| {
        let l = l.trim();
        l.starts_with("-----BEGIN") && l.contains("PRIVATE KEY")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_names_are_configuration_whatever_the_program() {
        for p in [
            "/ws/.devcontainer.json",
            "/ws/.cursor/mcp.json",
            "/ws/.husky/pre-commit",
            "/h/.bash_aliases",
            "/ws/.GIT/config",
            "/ws/lefthook.yml",
            "/ws/Jenkinsfile",
            "/ws/sub/.vscode/tasks.json",
        ] {
            assert!(
                matches!(classify(Path::new(p), None), PathClass::Configuration(_)),
                "{p}"
            );
        }
        for p in [
            "/ws/src/main.rs",
            "/ws/README.md",
            "/ws/id_rsa.pub",
            "/ws/x.env.md",
        ] {
            assert_eq!(classify(Path::new(p), None), PathClass::Ordinary, "{p}");
        }
    }

    #[test]
    fn a_workspace_under_a_dot_folder_is_judged_below_its_root() {
        let base = Path::new("/h/.local/src/proj");
        assert_eq!(
            classify(Path::new("/h/.local/src/proj/main.rs"), Some(base)),
            PathClass::Ordinary
        );
        assert!(matches!(
            classify(Path::new("/h/.local/src/proj/.git/config"), Some(base)),
            PathClass::Configuration(_)
        ));
    }

    #[test]
    fn keys_are_credentials_by_name_or_by_content() {
        for p in [
            "/ws/.env",
            "/ws/.env.local",
            "/h/.ssh/config",
            "/ws/a.KEY",
            "/ws/keyrings/x",
        ] {
            assert_eq!(
                classify(Path::new(p), None),
                PathClass::Credential("credentials"),
                "{p}"
            );
        }
        assert!(holds_private_key(
            b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"
        ));
        assert!(holds_private_key(b"\n-----BEGIN RSA PRIVATE KEY-----\n"));
        assert!(!holds_private_key(b"-----BEGIN CERTIFICATE-----\n"));
        assert!(!holds_private_key(b"ssh-ed25519 AAAA me@host\n"));
    }
}
