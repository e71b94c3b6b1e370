//! Files that are more than data: they hold credentials, or they configure a program that will
//! run code or decide permissions later (Cowork itself, git, the shell, package managers, CI,
//! editors). Writing one is how content would widen what tools may do — an allow rule planted in
//! `.cowork/settings.json`, a `core.fsmonitor` in `.git/config`, a line in `.bashrc` — so the
//! PolicyBridge asks for every such write, in every mode, whatever rule allows the tool.
//!
//! Matched on the resolved (canonical) path, by name and by folder, case-insensitively (a
//! case-insensitive filesystem opens `.GIT/config` as `.git/config`).

use std::path::{Component, Path};

/// Why a path is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Holds credentials or another program's secrets: reads are asked too.
    Secret(&'static str),
    /// Configures a program that runs code or grants permissions: writes and deletes always ask.
    Configures(&'static str),
}

impl Protection {
    pub fn what(self) -> &'static str {
        match self {
            Protection::Secret(what) | Protection::Configures(what) => what,
        }
    }
}

/// Whole file names.
const SECRET_NAMES: &[&str] = &[
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
const SECRET_SUFFIXES: &[&str] = &[
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
/// Folders whose whole content is another program's private state (logins, cookies), beyond
/// the credential folders every part of Cowork keeps out of reach
/// (`cowork_contract::credentials`), matched anywhere in a path by their last name.
const PRIVATE_DIRS: &[&str] = &["keyrings", ".mozilla", "google-chrome", "chromium"];

/// A folder name that holds credentials or private state: a credential folder of one name
/// (`.ssh`, `.aws`…; nested ones like `.config/gh` are too generic by their last name) or one
/// of [`PRIVATE_DIRS`].
fn secret_dir(folder: &str) -> bool {
    cowork_contract::credentials::HOME_FOLDERS
        .iter()
        .filter(|d| !d.contains('/'))
        .chain(PRIVATE_DIRS)
        .any(|d| eq(d, folder))
}

/// (file name, what it configures).
const CONFIG_NAMES: &[(&str, &str)] = &[
    (".gitmodules", "git"),
    (
        ".gitattributes",
        "git (filters and diff drivers run programs)",
    ),
    (".gitconfig", "git"),
    (".pre-commit-config.yaml", "git hooks"),
    (".bashrc", "the shell"),
    (".bash_profile", "the shell"),
    (".bash_login", "the shell"),
    (".bash_logout", "the shell"),
    (".profile", "the shell"),
    (".zshrc", "the shell"),
    (".zprofile", "the shell"),
    (".zshenv", "the shell"),
    (".zlogin", "the shell"),
    (".zlogout", "the shell"),
    (".cshrc", "the shell"),
    (".tcshrc", "the shell"),
    (".kshrc", "the shell"),
    (".inputrc", "the shell"),
    (".envrc", "the shell (direnv runs it on cd)"),
    (".xprofile", "the desktop session"),
    (".xinitrc", "the desktop session"),
    (".npmrc", "npm"),
    (".yarnrc", "yarn"),
    (".yarnrc.yml", "yarn"),
    (".pnpmfile.cjs", "pnpm"),
    ("bunfig.toml", "bun"),
    (".pypirc", "pip"),
    ("pip.conf", "pip"),
    ("pip.ini", "pip"),
    (".condarc", "conda"),
    (".gemrc", "gem"),
    (".gitlab-ci.yml", "CI"),
    (".travis.yml", "CI"),
    ("jenkinsfile", "CI"),
    ("azure-pipelines.yml", "CI"),
    ("bitbucket-pipelines.yml", "CI"),
    (".drone.yml", "CI"),
    (".woodpecker.yml", "CI"),
    (".mcp.json", "MCP servers another assistant starts"),
];

/// (folder, what the files inside configure). `.cowork` is ours: its settings carry rules.
const CONFIG_DIRS: &[(&str, &str)] = &[
    (".cowork", "Cowork's permissions"),
    (".git", "git (hooks and config run programs)"),
    (".circleci", "CI"),
    (".buildkite", "CI"),
    (".woodpecker", "CI"),
    (".devcontainer", "the dev container"),
    (".claude", "another assistant's permissions"),
    ("autostart", "programs started at login"),
];

/// Two-level folders: (parent, child, what).
const CONFIG_SUBDIRS: &[(&str, &str, &str)] = &[
    (".github", "workflows", "CI"),
    (".github", "actions", "CI"),
    (".cargo", "", "cargo"),
    (".m2", "", "maven"),
    (".config", "git", "git"),
    (".config", "fish", "the shell"),
    (".config", "systemd", "services started by systemd"),
    (".config", "cowork", "Cowork's permissions"),
    (
        ".vscode",
        "",
        "the editor (tasks and settings run programs)",
    ),
];

fn eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether `path` (resolved) is protected, and why. `data_dir` is Cowork's own data folder:
/// everything in it (settings, the database, the audit log) configures Cowork.
pub fn classify(path: &str, data_dir: Option<&Path>) -> Option<Protection> {
    let p = Path::new(path);
    if let Some(dir) = data_dir
        && p.starts_with(dir)
    {
        return Some(Protection::Configures(
            "Cowork's own settings and audit log",
        ));
    }
    let parts: Vec<&str> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let (&name, folders) = parts.split_last()?;
    let lower = name.to_ascii_lowercase();
    // Secrets first: `.npmrc` is both, and its tokens matter more than its settings.
    if SECRET_NAMES.iter().any(|n| eq(n, name))
        || lower.starts_with(".env.")
        || SECRET_SUFFIXES.iter().any(|s| lower.ends_with(s))
        || folders.iter().any(|f| secret_dir(f))
    {
        return Some(Protection::Secret("credentials"));
    }
    if let Some((_, what)) = CONFIG_NAMES.iter().find(|(n, _)| eq(n, name)) {
        return Some(Protection::Configures(what));
    }
    if let Some((_, what)) = folders
        .iter()
        .find_map(|f| CONFIG_DIRS.iter().find(|(d, _)| eq(d, f)))
    {
        return Some(Protection::Configures(what));
    }
    for window in parts.windows(2) {
        if let Some((_, _, what)) = CONFIG_SUBDIRS
            .iter()
            .find(|(a, b, _)| eq(a, window[0]) && (b.is_empty() || eq(b, window[1])))
        {
            return Some(Protection::Configures(what));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_configuration_are_told_apart() {
        let secret = |p: &str| matches!(classify(p, None), Some(Protection::Secret(_)));
        let config = |p: &str| matches!(classify(p, None), Some(Protection::Configures(_)));
        for p in [
            "/ws/.env",
            "/ws/.env.local",
            "/h/.ssh/id_rsa",
            "/ws/id_ed25519",
            "/ws/server.pem",
            "/ws/a.KEY",
            "/h/.netrc",
            "/ws/.npmrc",
            "/h/.pypirc",
            "/h/.git-credentials",
            "/h/.docker/config.json",
            "/h/.kube/config",
        ] {
            assert!(secret(p), "{p} holds credentials");
        }
        for p in [
            "/ws/.cowork/settings.json",
            "/ws/.git/config",
            "/ws/.git/hooks/pre-commit",
            "/ws/.GIT/config",
            "/ws/.gitmodules",
            "/ws/.gitattributes",
            "/h/.bashrc",
            "/h/.zshrc",
            "/h/.profile",
            "/ws/.envrc",
            "/ws/.github/workflows/ci.yml",
            "/ws/.gitlab-ci.yml",
            "/ws/.cargo/config.toml",
            "/h/.config/fish/config.fish",
            "/ws/.vscode/tasks.json",
            "/ws/Jenkinsfile",
            "/ws/.pre-commit-config.yaml",
            "/ws/.mcp.json",
        ] {
            assert!(config(p), "{p} configures a program");
        }
        for p in [
            "/ws/src/main.rs",
            "/ws/README.md",
            "/ws/.github/ISSUE_TEMPLATE.md",
            "/ws/environment.rs",
            "/ws/gitconfig.md",
            "/ws/id_rsa.pub",
        ] {
            assert_eq!(classify(p, None), None, "{p} is an ordinary file");
        }
        assert!(matches!(
            classify(
                "/data/cowork/settings.json",
                Some(Path::new("/data/cowork"))
            ),
            Some(Protection::Configures(_))
        ));
    }
}
