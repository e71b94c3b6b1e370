//! The families, one row each: what the composition root opens and registers. Adding a family
//! is adding a row here (and its crate to the app's dependencies); `App::open` loops over the
//! table, so the window, the CLI and the tests' harness all run the same wiring.

use crate::{AppError, VaultSettings, vault};
use cowork_contract::{Credentials, SecretSource, ToolProvider};
use cowork_store::settings::Section;
use cowork_store::{Schema, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One family: its name, its tables, its section of settings.json and how it opens.
pub(crate) struct Family {
    pub name: &'static str,
    /// Its tables, created and migrated when the store opens (None: it keeps none).
    pub schema: Option<&'static Schema>,
    /// Its section of settings.json (None: it reads none).
    pub settings: Option<SettingsSection>,
    /// Opens it: its tools for the registry; handles the app keeps go into `Opened`.
    pub open: Open,
}

type Open = fn(&Wiring, &mut Opened) -> Result<Arc<dyn ToolProvider>, AppError>;

/// A family's key in settings.json and a check that its section parses (a family opens with
/// its defaults when it does not; the doctor says so).
pub(crate) struct SettingsSection {
    pub key: &'static str,
    pub check: fn(&Path) -> Result<(), String>,
}

const fn section<T: Section>() -> Option<SettingsSection> {
    Some(SettingsSection {
        key: T::KEY,
        check: |path| T::load(path).map(drop),
    })
}

/// What every family may be opened with; the injectable parts come from `AppBuilder`.
pub(crate) struct Wiring<'a> {
    pub store: &'a Store,
    /// Keys (the OS keyring unless injected).
    pub secrets: Arc<dyn SecretSource>,
    /// Accounts' passwords and OAuth tokens, over `secrets`.
    pub credentials: Arc<dyn Credentials>,
    /// The vault's embedding model when injected; else the one its settings choose.
    pub embedder: Option<Result<Arc<dyn cowork_vault::Embedder>, String>>,
    /// The person's home folder (`~` in settings).
    pub person_home: Option<PathBuf>,
}

impl Wiring<'_> {
    fn settings_path(&self) -> PathBuf {
        self.store.dir().settings_path()
    }
}

/// The families' parts the app keeps beside the registry (its workers and panels use them).
#[derive(Default)]
pub(crate) struct Opened {
    pub mail: Option<Arc<cowork_mail::MailTools>>,
    pub vault: Option<(Arc<cowork_vault::Vault>, VaultSettings)>,
    pub browser: Option<Arc<cowork_browser::BrowserTools>>,
    pub voice: Option<Arc<cowork_voice::Voice>>,
}

/// Every family, in the order they register (the order of the model's tool list).
pub(crate) static FAMILIES: [Family; 8] = [
    Family {
        name: "personal",
        schema: Some(&cowork_personal::SCHEMA),
        settings: None,
        open: |w, _| Ok(Arc::new(cowork_personal::PersonalTools::new(w.store)?)),
    },
    Family {
        name: "files",
        schema: Some(&cowork_files::SCHEMA),
        settings: None,
        open: |w, _| Ok(Arc::new(cowork_files::FilesTools::new(w.store)?)),
    },
    Family {
        name: "calendar",
        schema: Some(&cowork_calendar::SCHEMA),
        settings: None,
        open: |w, _| {
            let tools = cowork_calendar::CalendarTools::new(w.store, w.credentials.clone())?;
            Ok(Arc::new(tools))
        },
    },
    Family {
        name: "mail",
        schema: Some(&cowork_mail::SCHEMA),
        settings: section::<cowork_mail::MailSettings>(),
        open: open_mail,
    },
    Family {
        name: "vault",
        schema: Some(&cowork_vault::SCHEMA),
        settings: section::<VaultSettings>(),
        open: open_vault,
    },
    Family {
        name: "browser",
        schema: None,
        settings: section::<cowork_browser::BrowserSettings>(),
        open: open_browser,
    },
    Family {
        name: "voice",
        schema: None,
        settings: section::<cowork_voice::VoiceSettings>(),
        open: open_voice,
    },
    Family {
        name: "web",
        schema: None,
        settings: section::<cowork_web::WebSettings>(),
        open: |w, _| {
            Ok(Arc::new(cowork_web::WebTools::new(
                w.store.dir().root().join("cache/web"),
                Some(w.settings_path()),
                w.secrets.clone(),
            )))
        },
    },
];

fn open_mail(w: &Wiring, opened: &mut Opened) -> Result<Arc<dyn ToolProvider>, AppError> {
    let settings = cowork_mail::MailSettings::load_or_default(&w.settings_path());
    let mail = Arc::new(cowork_mail::MailTools::new(
        w.store,
        w.credentials.clone(),
        settings.undo_delay(),
    )?);
    opened.mail = Some(mail.clone());
    Ok(mail)
}

fn open_vault(w: &Wiring, opened: &mut Opened) -> Result<Arc<dyn ToolProvider>, AppError> {
    let settings = VaultSettings::load_or_default(&w.settings_path());
    let folder = match settings.folder.as_deref().map(|f| f.to_string_lossy()) {
        // "~/Notes" in settings.json means the home folder's Notes.
        Some(f) if f.starts_with("~/") => w.person_home.clone().unwrap_or_default().join(&f[2..]),
        Some(f) => PathBuf::from(f.as_ref()),
        None => w.store.dir().vault_dir(),
    };
    let store_vault = cowork_vault::Vault::open(w.store, folder).map_err(AppError::Vault)?;
    match w.embedder.clone() {
        Some(injected) => store_vault.set_embedder(injected),
        None => {
            if let Some(local) = vault::local_embedder(&settings.embedder) {
                store_vault.set_embedder(local);
            }
        }
    }
    opened.vault = Some((store_vault.clone(), settings));
    Ok(Arc::new(cowork_vault::VaultTools::new(store_vault)))
}

fn open_browser(w: &Wiring, opened: &mut Opened) -> Result<Arc<dyn ToolProvider>, AppError> {
    let browser = Arc::new(cowork_browser::BrowserTools::new(
        cowork_browser::BrowserConfig::from_settings(
            w.store.dir().root().join("browser-profile"),
            cowork_browser::BrowserSettings::load_or_default(&w.settings_path()),
        ),
    ));
    opened.browser = Some(browser.clone());
    Ok(browser)
}

fn open_voice(w: &Wiring, opened: &mut Opened) -> Result<Arc<dyn ToolProvider>, AppError> {
    let voice = cowork_voice::Voice::new(Some(w.settings_path()));
    opened.voice = Some(voice.clone());
    Ok(Arc::new(cowork_voice::VoiceTools::new(voice)))
}

/// Each settings.json section that does not parse: its key and why (its family runs on its
/// defaults meanwhile).
pub(crate) fn unreadable_settings(settings: &Path) -> Vec<(&'static str, String)> {
    FAMILIES
        .iter()
        .filter_map(|f| f.settings.as_ref())
        .filter_map(|s| (s.check)(settings).err().map(|why| (s.key, why)))
        .collect()
}

/// Every owner's tables, in the order a fresh database creates them: the core's and the
/// agent's (conversations), then each family's from the table.
pub static SCHEMAS: std::sync::LazyLock<Vec<&'static Schema>> = std::sync::LazyLock::new(|| {
    [
        &cowork_core::SCHEMA,
        &cowork_agent::SCHEMA,
        &cowork_chains::SCHEMA,
    ]
    .into_iter()
    .chain(FAMILIES.iter().filter_map(|f| f.schema))
    .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_has_one_row_and_its_own_settings_key() {
        let mut names: Vec<_> = FAMILIES.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FAMILIES.len(), "a family named twice");
        let mut keys: Vec<_> = FAMILIES
            .iter()
            .filter_map(|f| f.settings.as_ref().map(|s| s.key))
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(
            keys.len(),
            FAMILIES.iter().filter(|f| f.settings.is_some()).count(),
            "two families claim one settings key"
        );
        let owners: Vec<_> = SCHEMAS.iter().map(|s| s.owner).collect();
        let mut unique = owners.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), owners.len(), "{owners:?}");
    }
}
