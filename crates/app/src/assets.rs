//! What Cowork downloads after install (`cowork_assets`), with the person's choice of mirror:
//! one place for the CLI, the window and the doctor to ask what is missing and to fetch it.

use cowork_store::DataDir;
use cowork_store::settings::Section;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub use cowork_assets::{AssetError, AssetStatus, FetchProgress, FetchStep, find, statuses};

/// Settings → This computer: where downloads come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct AssetSettings {
    /// A URL whose folder holds the archives under their own names, or a folder on this
    /// computer; empty: each asset's own source.
    pub mirror: String,
}

impl Section for AssetSettings {
    const KEY: &'static str = "assets";
}

/// A fetcher into the person's cache, from `mirror` if given, else the one in the Settings of
/// the data in `home` (else where the app keeps it).
pub fn fetcher(
    home: Option<PathBuf>,
    mirror: Option<String>,
) -> Result<cowork_assets::Fetcher, String> {
    let cache = cowork_assets::cache_root().ok_or(AssetError::NoCache.to_string())?;
    let home = match home {
        Some(home) => DataDir::at(home),
        None => DataDir::locate().map_err(|e| e.to_string())?,
    };
    let mirror = match mirror {
        Some(mirror) => mirror,
        None => AssetSettings::load(&home.settings_path())?.mirror,
    };
    Ok(cowork_assets::Fetcher::new(cache, Some(mirror)))
}

/// Every asset's state in the person's cache.
pub fn list() -> Result<Vec<AssetStatus>, AssetError> {
    Ok(statuses(
        &cowork_assets::cache_root().ok_or(AssetError::NoCache)?,
    ))
}
