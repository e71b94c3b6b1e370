//! Every stdio MCP server runs inside bubblewrap, so what a toolpack declares is enforced rather
//! than believed: the server sees the system's programs and libraries, its own folder
//! (read-only: it is pinned), a private data folder (its HOME, writable), a fresh /tmp — and
//! nothing else of the machine: not the person's home, not Cowork's data, no desktop bus or
//! keyring socket, no network. A manifest asks for more under `_meta["app.cowork"].sandbox`
//! (folders to read or change, the network); the install review shows it, and what is granted
//! is what calls are scored by: a tool that declares narrower effects than its sandbox allows
//! gets the sandbox's reach added to every call ([`Sandbox::reach`]).
//!
//! A server that cannot be confined (the person turned its sandbox off, bubblewrap cannot run
//! here, or it is reached over HTTP) is said to be so in the review, and every call asks.

use crate::manifest::{SandboxRequest, Vars, substitute_args};
use cowork_contract::confine::{self, SYSTEM};
use cowork_contract::{Effect, EffectKind};
use std::path::{Path, PathBuf};

/// Why a server runs without a sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unconfined {
    /// The person turned it off for this pack (`cowork toolpack sandbox NAME off`).
    TurnedOff,
    /// bubblewrap is missing, or cannot create its namespaces on this machine.
    NoBubblewrap,
    /// Reached over HTTP: Cowork does not start it, so it cannot confine it.
    Remote,
}

impl Unconfined {
    pub fn why(self) -> &'static str {
        match self {
            Unconfined::TurnedOff => "you turned its sandbox off",
            Unconfined::NoBubblewrap => {
                "bubblewrap cannot run here: install it (apt install bubblewrap) and allow user namespaces"
            }
            Unconfined::Remote => "it is a server reached over HTTP, which Cowork does not start",
        }
    }
}

/// What a confined server may reach, resolved to real paths.
#[derive(Clone, Debug, PartialEq)]
pub struct Confinement {
    /// The pack's folder: read-only (it is pinned), and the working folder.
    pub code: PathBuf,
    /// The pack's private folder: writable, its HOME.
    pub data: PathBuf,
    /// The program's own installation when it lives outside the system folders (a pyenv or
    /// nvm interpreter a virtualenv points at): read-only.
    pub program: Option<PathBuf>,
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub network: bool,
    /// The person's home folder: covered, so only what is granted of it shows.
    pub home: Option<PathBuf>,
    /// Hidden even inside a granted folder: Cowork's data folder.
    pub hidden: Vec<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Sandbox {
    Confined(Confinement),
    Unconfined(Unconfined),
}

impl Sandbox {
    /// What the server may do beyond its own folders, as effects: added to a call of any tool
    /// whose declarations do not already admit that kind of effect.
    pub fn reach(&self, server: &str) -> Vec<Effect> {
        match self {
            Sandbox::Unconfined(why) => vec![Effect::McpUnconfined {
                server: server.to_string(),
                why: why.why().to_string(),
            }],
            Sandbox::Confined(c) => {
                let path = |p: &PathBuf| p.display().to_string();
                // Granted reads are not added: without the network a server can only hand
                // what it read back into the conversation, where the person sees it and taint
                // guards every later send; with the network, that reach is added below.
                let mut out: Vec<Effect> = c
                    .write
                    .iter()
                    .map(|p| Effect::FsWrite { path: path(p) })
                    .collect();
                if c.network {
                    out.push(Effect::NetFetch {
                        origin: confine::ANY_NETWORK.into(),
                    });
                }
                out
            }
        }
    }
}

/// Whether a tool declaring `declared` kinds already admits `reach` (then its declared effects,
/// filled from the call's arguments, are what the call is judged by).
pub fn admits(declared: &[EffectKind], reach: &Effect) -> bool {
    match reach.kind() {
        EffectKind::FsWrite => declared
            .iter()
            .any(|k| matches!(k, EffectKind::FsWrite | EffectKind::FsDelete)),
        EffectKind::NetFetch => declared.contains(&EffectKind::NetFetch),
        _ => false,
    }
}

/// The review's lines for a manifest's request, before anything is configured.
pub fn describe_request(request: &SandboxRequest, unconfined: Option<Unconfined>) -> Vec<String> {
    if let Some(why) = unconfined {
        return vec![format!(
            "NOT sandboxed: {} — nothing limits what it does, so every call asks (risk 8)",
            why.why()
        )];
    }
    let mut out = vec![
        "sandboxed: its own folder (read-only), a private data folder, nothing else of your files, no local sockets"
            .to_string(),
    ];
    let explain = |p: &String| {
        if p.contains("${user_config.") {
            format!("{p} (the folders you configure)")
        } else {
            p.clone()
        }
    };
    out.extend(
        request
            .read
            .iter()
            .map(|p| format!("can read: {}", explain(p))),
    );
    out.extend(
        request
            .write
            .iter()
            .map(|p| format!("can read and change: {}", explain(p))),
    );
    out.push(if request.network {
        format!(
            "network: yes — {} (a sandbox cannot limit it to some)",
            confine::ANY_NETWORK
        )
    } else {
        "network: none".into()
    });
    out
}

impl Confinement {
    /// Resolves a manifest's request for one launch. Granted paths must be absolute after
    /// substitution; ones that do not exist are left out (bubblewrap cannot bind them).
    pub fn resolve(
        request: &SandboxRequest,
        vars: &Vars,
        command: &str,
        cowork_root: &Path,
    ) -> Result<Confinement, String> {
        let paths = |list: &[String]| -> Result<Vec<PathBuf>, String> {
            let mut out = Vec::new();
            for p in substitute_args(list, vars)? {
                let path = PathBuf::from(&p);
                if !path.is_absolute() {
                    return Err(format!(
                        "sandbox path {p:?} is not absolute (write ${{HOME}}/…, ${{__dirname}}/… or ${{user_config.…}})"
                    ));
                }
                if let Ok(real) = path.canonicalize() {
                    out.push(real);
                }
            }
            Ok(out)
        };
        let read = paths(&request.read)?;
        let write = paths(&request.write)?;
        Ok(Confinement {
            code: vars.dirname.to_path_buf(),
            data: vars.data_dir.to_path_buf(),
            program: program_home(command, vars.dirname, vars.home),
            read,
            write,
            network: request.network,
            home: vars.home.map(Path::to_path_buf),
            // Cowork's own data folder stays hidden even where a grant contains it, so no grant
            // lets a server rewrite the policy that judges it. Credentials need no list here:
            // the home folder is covered, and inside any grant they are hidden by what they are.
            hidden: vec![cowork_root.to_path_buf()],
        })
    }

    /// The one confinement every program Cowork starts runs in, for this server: its folder
    /// read-only (it is pinned), its private folder writable and its HOME, and the grants.
    pub fn jail(&self) -> confine::Confinement {
        let mut jail = confine::Confinement::new(&self.code).network(self.network);
        if let Some(home) = &self.home {
            jail = jail.home(home);
        }
        for path in self.read.iter().chain(&self.program) {
            jail = jail.read(path);
        }
        for path in &self.write {
            jail = jail.write(path);
        }
        for path in &self.hidden {
            jail = jail.hide(path);
        }
        jail.own(&self.code, false)
            .own(&self.data, true)
            .env("HOME", &self.data)
    }
}

/// The program a command names, as a real path: itself if it has a '/' (relative to `cwd`),
/// else the first match on PATH — as the kernel would find it outside the sandbox.
pub fn find_program(command: &str, cwd: &Path) -> Option<PathBuf> {
    let found = if command.contains('/') {
        Some(cwd.join(command))
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(command))
                .find(|p| p.is_file())
        })
    }?;
    found.canonicalize().ok().filter(|p| p.is_file())
}

/// Where the program lives, when outside the system folders and the pack: a virtualenv's
/// `python` points into pyenv, `node` may come from nvm. That installation (the folder above
/// its `bin/`) is shown read-only — unless it would be the home folder or a direct child of it
/// (`~/.local`, `~/.cargo` hold more than programs), when only the program file is.
fn program_home(command: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let real = find_program(command, cwd)?;
    let system = SYSTEM.iter().any(|d| real.starts_with(d));
    if system || real.starts_with(cwd) {
        return None;
    }
    let install = real
        .parent()
        .filter(|bin| bin.file_name().is_some_and(|n| n == "bin"))
        .and_then(Path::parent);
    let too_wide = |dir: &Path| {
        dir.parent().is_none()
            || home.is_some_and(|h| {
                h.starts_with(dir)
                    || dir
                        .strip_prefix(h)
                        .is_ok_and(|r| r.components().count() < 2)
            })
    };
    match install {
        Some(dir) if !too_wide(dir) => Some(dir.to_path_buf()),
        _ => Some(real),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_installation_is_shown_only_when_it_is_narrow() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let deep = home.join(".pyenv/versions/3.11/bin");
        let shallow = home.join(".local/bin");
        for d in [&deep, &shallow] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("python3"), "").unwrap();
        }
        let pack = home.join("pack");
        std::fs::create_dir_all(&pack).unwrap();
        let at = |p: &Path| program_home(&p.display().to_string(), &pack, Some(&home));
        assert_eq!(
            at(&deep.join("python3")),
            Some(home.join(".pyenv/versions/3.11"))
        );
        assert_eq!(
            at(&shallow.join("python3")),
            Some(shallow.join("python3")),
            "~/.local is not a program's own folder: the file alone"
        );
        assert_eq!(program_home("/usr/bin/env", &pack, Some(&home)), None);
    }

    #[test]
    fn reach_is_added_only_where_declarations_fall_short() {
        let reach = Sandbox::Confined(Confinement {
            code: "/p".into(),
            data: "/d".into(),
            program: None,
            read: vec!["/books".into()],
            write: vec!["/notes".into()],
            network: true,
            home: None,
            hidden: vec![],
        })
        .reach("n");
        assert_eq!(reach.len(), 2, "a granted write and the network");
        assert!(!admits(&[EffectKind::FsRead], &reach[0]));
        assert!(admits(&[EffectKind::FsWrite], &reach[0]));
        assert!(admits(&[EffectKind::NetFetch], &reach[1]));
        let unconfined = Sandbox::Unconfined(Unconfined::TurnedOff).reach("n");
        assert!(!admits(
            &[EffectKind::FsWrite, EffectKind::NetFetch],
            &unconfined[0]
        ));
    }
}
