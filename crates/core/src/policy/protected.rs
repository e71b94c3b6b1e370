//! Files that are more than data: they hold credentials, or they configure a program that will
//! run code or decide permissions later (Cowork itself, git, the shell, package managers, CI,
//! editors). Writing one is how content would widen what tools may do — an allow rule planted in
//! `.cowork/settings.json`, a `core.fsmonitor` in `.git/config`, a line in `.bashrc` — so the
//! PolicyBridge asks for every such write, and every read of credentials, in every mode,
//! whatever rule allows the tool.
//!
//! Judged on the resolved (canonical) path by the one classifier every reader, writer and
//! sandbox uses (`cowork_contract::pathclass`): configuration is any dot name below the
//! workspace root (or the home folder), credentials are key and token files anywhere and every
//! dot entry of the home folder that no workspace includes.

use cowork_contract::EffectEnv;
use cowork_contract::pathclass::{self, PathClass};
use std::path::Path;

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

/// Whether `path` (resolved) is protected, and why. `data_dir` is Cowork's own data folder:
/// everything in it (settings, the database, the audit log) configures Cowork.
pub fn classify(path: &str, data_dir: Option<&Path>, env: &EffectEnv) -> Option<Protection> {
    let p = Path::new(path);
    if let Some(dir) = data_dir
        && p.starts_with(dir)
    {
        return Some(Protection::Configures(
            "Cowork's own settings and audit log",
        ));
    }
    match pathclass::classify_for(p, env) {
        PathClass::Credential(what) => Some(Protection::Secret(what)),
        PathClass::Configuration(what) => Some(Protection::Configures(what)),
        PathClass::Ordinary => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn env(roots: &[&Path], home: &Path) -> EffectEnv {
        EffectEnv {
            workspace_roots: roots.iter().map(|r| r.to_path_buf()).collect(),
            home: Some(home.to_path_buf()),
            ..Default::default()
        }
    }

    #[test]
    fn credentials_and_configuration_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (h, ws) = (base.join("h"), base.join("ws"));
        std::fs::create_dir_all(&h).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let e = env(&[&ws], &h);
        let at = |dir: &PathBuf, rel: &str| dir.join(rel).display().to_string();
        let secret = |p: &str| matches!(classify(p, None, &e), Some(Protection::Secret(_)));
        let config = |p: &str| matches!(classify(p, None, &e), Some(Protection::Configures(_)));
        for rel in [
            ".env",
            ".env.local",
            "id_ed25519",
            "server.pem",
            "a.KEY",
            ".npmrc",
            "x/.ssh/id",
        ] {
            assert!(secret(&at(&ws, rel)), "{rel} holds credentials");
        }
        for rel in [
            ".ssh/id_rsa",
            ".netrc",
            ".pypirc",
            ".git-credentials",
            ".docker/config.json",
            ".kube/config",
            ".config/gh/hosts.yml",
            ".bashrc",
        ] {
            assert!(secret(&at(&h, rel)), "~/{rel}: the home folder's own");
        }
        for rel in [
            ".cowork/settings.json",
            ".git/config",
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".gitmodules",
            ".gitattributes",
            ".envrc",
            ".github/workflows/ci.yml",
            ".github/ISSUE_TEMPLATE.md",
            ".gitlab-ci.yml",
            ".cargo/config.toml",
            ".vscode/tasks.json",
            "Jenkinsfile",
            ".pre-commit-config.yaml",
            ".mcp.json",
            ".devcontainer.json",
            ".cursor/mcp.json",
            "lefthook.yml",
            ".husky/pre-commit",
        ] {
            assert!(config(&at(&ws, rel)), "{rel} configures a program");
        }
        for rel in [
            "src/main.rs",
            "README.md",
            "environment.rs",
            "gitconfig.md",
            "id_rsa.pub",
        ] {
            assert_eq!(
                classify(&at(&ws, rel), None, &e),
                None,
                "{rel} is an ordinary file"
            );
        }
        let data = base.join("data/cowork");
        assert!(matches!(
            classify(&at(&data, "settings.json"), Some(&data), &e),
            Some(Protection::Configures(_))
        ));
    }

    #[test]
    fn a_workspace_grants_home_entries_only_one_by_one() {
        let tmp = tempfile::tempdir().unwrap();
        let h = tmp.path().canonicalize().unwrap();
        let home_ws = env(&[&h], &h);
        let file = |rel: &str| h.join(rel).display().to_string();
        assert!(matches!(
            classify(&file(".config/gh/hosts.yml"), None, &home_ws),
            Some(Protection::Secret(_))
        ));
        assert_eq!(classify(&file("notes.md"), None, &home_ws), None);
        let nvim = h.join(".config/nvim");
        std::fs::create_dir_all(&nvim).unwrap();
        let nvim_ws = env(&[&nvim], &h);
        assert_eq!(
            classify(&file(".config/nvim/init.lua"), None, &nvim_ws),
            None,
            "a workspace inside a dot folder is judged below its root"
        );
    }
}
