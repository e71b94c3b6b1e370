//! Toolpacks as the shells see them: install (stage → the person reviews → commit), enable,
//! disable, update, remove, reload — each keeps the gateway, and so the registry, in step.
//! Sensitive `user_config` values go to the OS keyring (`toolpack/<name>/<key>`).

use crate::App;
use cowork_mcp::{McpGateway, PackError, Record, ServerState, ServerStatus, Staged};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a path waits for toolpack servers: just past a server's own start limit (30 s), so
/// a server that never answers has failed (and is remembered as broken) when the wait ends.
pub const TOOLPACK_SETTLE: Duration = Duration::from_secs(31);

/// Starts the enabled toolpacks' servers for every path that calls tools — the window,
/// `cowork chat`, schedules, chains, `mcp serve` — once per process: a shell may start them
/// up front, and otherwise the scheduler's tool finder does when a call names a tool that is
/// not there yet, or an agent's turn is about to offer tools. One function for all, so no path
/// finds a pack's tool missing because nothing started its server.
pub(crate) struct PacksStarter {
    packs: cowork_mcp::Toolpacks,
    gateway: Arc<McpGateway>,
    credentials: Arc<crate::signin::AccountCredentials>,
    /// Held while the servers are being added, so a call that asks meanwhile waits for them
    /// instead of finding them missing.
    started: std::sync::Mutex<bool>,
}

impl PacksStarter {
    pub(crate) fn new(
        packs: cowork_mcp::Toolpacks,
        gateway: Arc<McpGateway>,
        credentials: Arc<crate::signin::AccountCredentials>,
    ) -> Arc<PacksStarter> {
        Arc::new(PacksStarter {
            packs,
            gateway,
            credentials,
            started: std::sync::Mutex::new(false),
        })
    }

    /// Every enabled pack's server, started (again, where one runs).
    pub(crate) fn start_all(&self) -> Result<Vec<Started>, PackError> {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        *started = true;
        self.start_enabled()
    }

    /// [`PacksStarter::start_all`] the first time; nothing after.
    pub(crate) fn start_once(&self) -> Result<Vec<Started>, PackError> {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        if *started {
            return Ok(vec![]);
        }
        *started = true;
        self.start_enabled()
    }

    /// Whether the servers were started (waits while they are being started).
    fn started(&self) -> bool {
        *self.started.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn start_enabled(&self) -> Result<Vec<Started>, PackError> {
        let mut out = Vec::new();
        for (name, record) in self.packs.list()? {
            if record.enabled {
                out.push(Started {
                    error: self.start(&name).err().map(|e| e.to_string()),
                    name,
                });
            }
        }
        Ok(out)
    }

    pub(crate) fn start(&self, name: &str) -> Result<(), PackError> {
        let secret = |key: &str| {
            crate::secrets::get(&secret_account(name, key))
                .ok()
                .flatten()
        };
        let (spec, manifest) = self
            .packs
            .launch(name, &secret, &|server| self.oauth_store(server))?;
        let meta = manifest.cowork().map_err(PackError::Invalid)?;
        self.gateway.add_server(spec, meta);
        Ok(())
    }

    pub(crate) fn oauth_store(&self, server: &str) -> cowork_mcp::auth::OauthStore {
        cowork_mcp::auth::OauthStore::new(self.credentials.secrets(), server)
    }

    /// See [`App::toolpacks_settled_healthy`].
    async fn settled_healthy(&self, limit: Duration) -> (Vec<ServerStatus>, Vec<(String, String)>) {
        let records = self.packs.list().unwrap_or_default();
        let skipped: Vec<(String, String)> = records
            .iter()
            .filter(|(_, r)| r.enabled)
            .filter_map(|(name, r)| Some((name.clone(), r.last_start_error.clone()?)))
            .collect();
        let healthy: Vec<String> = self
            .gateway
            .statuses()
            .into_iter()
            .map(|s| s.name)
            .filter(|server| {
                !skipped
                    .iter()
                    .any(|(name, _)| cowork_mcp::manifest::server_name(name) == *server)
            })
            .collect();
        (
            self.gateway.wait_settled_for(Some(&healthy), limit).await,
            skipped,
        )
    }

    /// Started once, then the servers a call of `name` may need waited for (None: every one
    /// that came up last time, as before a model is offered tools).
    async fn ready_for(&self, registry: &cowork_core::Registry, name: Option<&str>) {
        if let Err(e) = self.start_once() {
            tracing::warn!("toolpacks: {e}");
        }
        match name {
            Some(name) => {
                let known = registry
                    .get(name)
                    .is_some_and(|t| t.layer != cowork_core::Layer::Mcp);
                let needed = self.gateway.servers_needed(name, known);
                self.gateway
                    .wait_settled_for(needed.as_deref(), TOOLPACK_SETTLE)
                    .await;
            }
            None => {
                self.settled_healthy(TOOLPACK_SETTLE).await;
            }
        }
    }

    /// Whether a server a call of `name` may need is still coming up.
    fn still_starting(&self, name: Option<&str>) -> bool {
        let needed = name.and_then(|n| self.gateway.servers_needed(n, false));
        self.gateway.statuses().iter().any(|s| {
            needed.as_ref().is_none_or(|n| n.contains(&s.name))
                && matches!(
                    s.state,
                    ServerState::Configured | ServerState::Starting | ServerState::Restarting
                )
        })
    }

    /// The scheduler's tool finder. Nothing to wait for when the tool is there (every call asks,
    /// so this is a lookup); nor, once the packs were started, for a turn (it offers what runs)
    /// or a name no server is still coming up to serve (it fails at once, not after a wait).
    /// A known builtin does not start the packs (a pack that overrides one is found by the
    /// paths that start packs up front: the window, `cowork chat`, `tools`, `mcp serve`).
    pub(crate) fn finder(
        self: &Arc<Self>,
        registry: std::sync::Weak<cowork_core::Registry>,
    ) -> cowork_core::ToolFinder {
        let starter = self.clone();
        Arc::new(move |name| {
            let registry = registry.upgrade()?;
            // The lookup first: it answers nearly every call without taking the lock.
            let there = match name {
                Some(name) => {
                    registry.has(name)
                        || starter.started()
                            && !(name.starts_with("mcp__") && starter.still_starting(Some(name)))
                }
                None => starter.started(),
            };
            if there {
                return None;
            }
            let (starter, name) = (starter.clone(), name.map(String::from));
            Some(Box::pin(async move {
                starter.ready_for(&registry, name.as_deref()).await
            }))
        })
    }
}

fn secret_account(pack: &str, key: &str) -> String {
    format!("toolpack/{pack}/{key}")
}

/// The person's values for a pack's settings, checked and typed by its manifest; sensitive
/// ones go to the keyring (where the launch reads them), the rest are returned for
/// toolpacks.json — on install and on every later `configure` alike.
fn store_config(
    manifest: &cowork_mcp::Manifest,
    values: BTreeMap<String, Value>,
) -> Result<BTreeMap<String, Value>, PackError> {
    let values = manifest.check_config(values).map_err(PackError::Invalid)?;
    let mut plain = BTreeMap::new();
    for (key, value) in values {
        if manifest.user_config[&key].sensitive {
            let text = value
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| value.to_string());
            crate::secrets::set(&secret_account(&manifest.name, &key), &text)
                .map_err(PackError::Invalid)?;
        } else {
            plain.insert(key, value);
        }
    }
    Ok(plain)
}

/// What fetching an installed pack's source again found ([`App::check_toolpack_update`]).
pub enum UpdateCheck {
    /// The source gives the same pinned content and the installed copy is intact.
    UpToDate,
    /// Something to review and install: a new version, changed permissions, or a repair.
    Changed {
        staged: Box<Staged>,
        /// The installed copy was changed on disk: installing the source again repairs it.
        repair: bool,
        source: String,
    },
}

/// A resource's server said it changed (`resources/updated`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResourceUpdated {
    pub server: String,
    pub uri: String,
}

/// One of a pack's settings as the window edits it: the current value of a plain one (what
/// was configured, else the default), and only whether a secret one is set.
#[derive(Clone, Debug, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolpackSetting {
    pub key: String,
    pub title: String,
    pub description: String,
    pub required: bool,
    pub sensitive: bool,
    pub value: Option<String>,
    pub set: bool,
}

/// One pack's start result, for `toolpack reload` and the UI.
#[derive(Clone, Debug, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Started {
    pub name: String,
    pub error: Option<String>,
}

impl App {
    /// Starts every enabled toolpack's server once in this process (needs a tokio runtime); a
    /// later call starts nothing. A pack that cannot start (tampered, misconfigured) is reported
    /// and skipped; the others run.
    pub fn start_toolpacks(&self) -> Result<Vec<Started>, PackError> {
        self.packs_starter.start_once()
    }

    fn start_toolpack(&self, name: &str) -> Result<(), PackError> {
        self.packs_starter.start(name)
    }

    fn oauth_store(&self, server: &str) -> cowork_mcp::auth::OauthStore {
        self.packs_starter.oauth_store(server)
    }

    /// The address and sign-in store of a pack's remote server; a local pack has none. `name`
    /// is the pack's, or its server's (as statuses and tool names spell it).
    fn remote(&self, name: &str) -> Result<(String, cowork_mcp::auth::OauthStore), String> {
        let packs = self.toolpacks.list().map_err(|e| e.to_string())?;
        let name = match packs.contains_key(name) {
            true => name.to_string(),
            false => packs
                .keys()
                .find(|pack| self.server_of(pack) == name)
                .cloned()
                .unwrap_or_else(|| name.to_string()),
        };
        let name = name.as_str();
        let (spec, _) = self
            .toolpacks
            .launch(name, &|_| None, &|server| self.oauth_store(server))
            .map_err(|e| e.to_string())?;
        match spec.transport {
            cowork_mcp::Transport::Http {
                url,
                oauth: Some(store),
                ..
            } => Ok((url, store)),
            _ => Err(format!(
                "toolpack {name} runs on this computer: there is nothing to sign in to"
            )),
        }
    }

    /// Starts signing in to a pack's remote server (the MCP authorization spec): the address
    /// the person's browser opens.
    pub async fn begin_toolpack_sign_in(
        &self,
        name: &str,
    ) -> Result<cowork_mcp::auth::SignIn, String> {
        let (url, store) = self.remote(name)?;
        cowork_mcp::auth::begin_sign_in(&url, &store).await
    }

    /// Waits for the browser to come back; the tokens go to the keyring and the pack's server
    /// starts again with them.
    pub async fn finish_toolpack_sign_in(
        &self,
        name: &str,
        sign_in: cowork_mcp::auth::SignIn,
    ) -> Result<(), String> {
        cowork_mcp::auth::finish_sign_in(sign_in, crate::SIGN_IN_TIMEOUT).await?;
        self.restart_toolpack(name, true).map_err(|e| e.to_string())
    }

    /// Forgets a pack's sign-in (the server stops until the person signs in again).
    pub fn sign_out_toolpack(&self, name: &str) -> Result<bool, String> {
        let (_, store) = self.remote(name)?;
        let forgotten = store.forget()?;
        self.restart_toolpack(name, true)
            .map_err(|e| e.to_string())?;
        Ok(forgotten)
    }

    /// Stops every server and starts the enabled ones again from disk.
    pub fn reload_toolpacks(&self) -> Result<Vec<Started>, PackError> {
        for status in self.gateway.statuses() {
            self.gateway.remove_server(&status.name);
        }
        self.packs_starter.start_all()
    }

    /// Waits until every server has started or given up (the CLI does before a call).
    pub async fn toolpacks_settled(&self, limit: Duration) -> Vec<ServerStatus> {
        self.gateway.wait_settled(limit).await
    }

    /// Waits only for the servers a call of `name` may need (see
    /// [`cowork_mcp::McpGateway::servers_needed`]): a builtin is never delayed by a slow pack.
    pub async fn toolpacks_settled_for(&self, name: &str, limit: Duration) -> Vec<ServerStatus> {
        let known = self
            .scheduler
            .registry()
            .get(name)
            .is_some_and(|t| t.layer != cowork_core::Layer::Mcp);
        let needed = self.gateway.servers_needed(name, known);
        self.gateway
            .wait_settled_for(needed.as_deref(), limit)
            .await
    }

    /// Whether an installed pack is exactly what was installed (its source pin and every
    /// installed file, dependencies included).
    pub fn verify_toolpack(&self, name: &str) -> Result<(), PackError> {
        self.toolpacks.verify(name)
    }

    pub fn mcp_servers(&self) -> Vec<ServerStatus> {
        self.gateway.statuses()
    }

    pub fn toolpack_records(&self) -> Result<BTreeMap<String, Record>, PackError> {
        self.save_toolpack_usage()?;
        self.toolpacks.list()
    }

    /// Writes each pack's `lastUsed` from its server (done on listing and when the app closes,
    /// not per call: a call must not rewrite toolpacks.json).
    pub fn save_toolpack_usage(&self) -> Result<(), PackError> {
        let statuses = self.gateway.statuses();
        // Health: up, or down with its reason. A first start still under way (a command that
        // did not wait for it) says nothing either way.
        let health: BTreeMap<String, Option<String>> = statuses
            .iter()
            .filter_map(|s| match (s.state, &s.last_error) {
                (ServerState::Running, _) => Some((s.name.clone(), None)),
                (
                    ServerState::Failed | ServerState::Restarting | ServerState::Starting,
                    Some(error),
                ) => Some((s.name.clone(), Some(error.clone()))),
                _ => None,
            })
            .collect();
        if !health.is_empty() {
            self.toolpacks.record_health(&health)?;
        }
        let used: BTreeMap<String, std::time::SystemTime> = statuses
            .into_iter()
            .filter_map(|s| Some((s.name, s.last_used?)))
            .collect();
        if used.is_empty() {
            Ok(())
        } else {
            self.toolpacks.record_usage(&used)
        }
    }

    /// Waits for the servers that came up last time; one known to be broken is started in the
    /// background but not waited for (a broken pack must not stall every listing). Returns the
    /// statuses waited for and the packs skipped, with why they failed last time.
    pub async fn toolpacks_settled_healthy(
        &self,
        limit: Duration,
    ) -> (Vec<ServerStatus>, Vec<(String, String)>) {
        self.packs_starter.settled_healthy(limit).await
    }

    /// One page of the MCP Registry's catalog (its cached answer when offline, marked so).
    /// Installing an entry is `stage_toolpack("registry:<name>")`.
    pub async fn search_catalog(
        &self,
        query: &str,
        cursor: Option<&str>,
    ) -> Result<cowork_mcp::catalog::CatalogPage, PackError> {
        self.toolpacks.catalog().search(query, cursor).await
    }

    /// Fetches and unpacks; nothing runs until [`App::install_toolpack`].
    pub async fn stage_toolpack(
        &self,
        source: &str,
        expected_sha256: Option<&str>,
    ) -> Result<Staged, PackError> {
        self.toolpacks.stage(source, expected_sha256).await
    }

    /// The person accepted the review: install, store sensitive values in the keyring, start.
    pub fn install_toolpack(
        &self,
        staged: Staged,
        config: BTreeMap<String, Value>,
        install_deps: bool,
    ) -> Result<Record, PackError> {
        let name = staged.manifest.name.clone();
        let plain = store_config(&staged.manifest, config)?;
        let record = self.toolpacks.commit(staged, plain, install_deps)?;
        self.restart_toolpack(&name, record.enabled)?;
        Ok(record)
    }

    /// Fetches a pack's source again and says whether there is anything to install: new content
    /// or permissions, or — when the installed copy was changed on disk — the same source as a
    /// repair (what the tamper error's advice leads to). Nothing is installed; a `Changed` goes
    /// through the usual review and [`App::install_toolpack`].
    pub async fn check_toolpack_update(&self, name: &str) -> Result<UpdateCheck, PackError> {
        let records = self.toolpacks.list()?;
        let record = records
            .get(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        let staged = self.stage_toolpack(&record.source, None).await?;
        let repair = self.verify_toolpack(name).is_err();
        if !repair && staged.review.changes.is_empty() && staged.review.sha256 == record.sha256 {
            self.discard_toolpack(staged);
            return Ok(UpdateCheck::UpToDate);
        }
        Ok(UpdateCheck::Changed {
            staged: Box::new(staged),
            repair,
            source: record.source.clone(),
        })
    }

    pub fn discard_toolpack(&self, staged: Staged) {
        self.toolpacks.discard(staged);
    }

    pub fn set_toolpack_enabled(&self, name: &str, enabled: bool) -> Result<Record, PackError> {
        let record = self.toolpacks.set_enabled(name, enabled)?;
        self.restart_toolpack(name, enabled)?;
        Ok(record)
    }

    /// The person turns a pack's sandbox on or off; its server restarts either way.
    pub fn set_toolpack_sandbox(&self, name: &str, on: bool) -> Result<Record, PackError> {
        let record = self.toolpacks.set_sandbox(name, on)?;
        self.restart_toolpack(name, record.enabled)?;
        Ok(record)
    }

    /// The pack's settings with their current values (secrets never leave the keyring).
    pub fn toolpack_settings(&self, name: &str) -> Result<Vec<ToolpackSetting>, PackError> {
        let record = self
            .toolpacks
            .list()?
            .remove(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        let manifest = cowork_mcp::Manifest::load(&self.toolpacks.dir_of(name))?;
        let text = |v: &Value| {
            v.as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string())
        };
        Ok(manifest
            .user_config
            .iter()
            .map(|(key, field)| {
                let value = match field.sensitive {
                    true => None,
                    false => record.config.get(key).or(field.default.as_ref()).map(text),
                };
                let set = match field.sensitive {
                    true => {
                        crate::secrets::get(&secret_account(name, key)).is_ok_and(|v| v.is_some())
                    }
                    false => record.config.contains_key(key),
                };
                ToolpackSetting {
                    key: key.clone(),
                    title: field.title.clone(),
                    description: field.description.clone(),
                    required: field.required,
                    sensitive: field.sensitive,
                    value,
                    set,
                }
            })
            .collect())
    }

    pub fn configure_toolpack(
        &self,
        name: &str,
        values: BTreeMap<String, Value>,
    ) -> Result<Record, PackError> {
        let manifest = cowork_mcp::Manifest::load(&self.toolpacks.dir_of(name))?;
        let plain = store_config(&manifest, values)?;
        let record = self.toolpacks.configure(name, plain)?;
        if record.enabled {
            self.restart_toolpack(name, true)?;
        }
        Ok(record)
    }

    /// Asks `server` to say when `uri` changes (a resource the person attached): what it says
    /// arrives on [`App::resource_updates`]. False when the server offers no subscriptions.
    pub async fn watch_resource(&self, server: &str, uri: &str) -> Result<bool, String> {
        self.gateway
            .subscribe(server, uri)
            .await
            .map_err(|e| e.to_string())
    }

    /// Resources a server said changed, of those [`App::watch_resource`] asked about.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<ResourceUpdated> {
        self.resource_updates.subscribe()
    }

    pub fn remove_toolpack(&self, name: &str) -> Result<(), PackError> {
        self.gateway.remove_server(&self.server_of(name));
        if let Ok(manifest) = cowork_mcp::Manifest::load(&self.toolpacks.dir_of(name)) {
            for key in manifest.user_config.keys() {
                let _ = crate::secrets::delete(&secret_account(name, key));
            }
        }
        // A remote server's sign-in goes with it.
        let _ = self.oauth_store(&self.server_of(name)).forget();
        self.forget_grants_of(&self.server_of(name));
        self.toolpacks.remove(name)
    }

    /// The person's "for this toolpack" answers to its server's sampling asks, and "for this
    /// view" answers to its view's calls, go with the pack, so another pack installed later
    /// under the same name does not inherit them.
    fn forget_grants_of(&self, server: &str) {
        let policy = self.scheduler.policy();
        let sampling = cowork_core::Caller::mcp_server(server);
        let view = crate::mcp_apps::conversation_of(server);
        for grant in policy.grants().unwrap_or_default() {
            let conversation = grant.conversation.as_deref();
            if (conversation == Some(sampling.as_str()) || conversation == Some(view.as_str()))
                && let Err(e) = policy.remove_rule(&grant.rule, conversation)
            {
                tracing::warn!("forgetting {server}'s grant {}: {e}", grant.rule);
            }
        }
    }

    /// Stops the pack's server (if any) and, when `start`, starts it again from disk.
    fn restart_toolpack(&self, name: &str, start: bool) -> Result<(), PackError> {
        self.gateway.remove_server(&self.server_of(name));
        if start {
            self.start_toolpack(name)
        } else {
            Ok(())
        }
    }

    fn server_of(&self, name: &str) -> String {
        cowork_mcp::Manifest::load(&self.toolpacks.dir_of(name))
            .map(|m| m.server_name())
            .unwrap_or_else(|_| cowork_mcp::manifest::server_name(name))
    }
}
