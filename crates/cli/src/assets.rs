//! What Cowork downloads after install: `cowork assets …`. Answers before the app opens (like
//! the doctor): a fresh install fetches its models before anything else works.

use super::*;
use cowork_app::assets::{AssetStatus, FetchProgress, FetchStep};
use std::io::Write as _;

#[derive(Subcommand)]
pub(crate) enum AssetsCmd {
    /// What Cowork can download, what is here, and what each costs.
    List,
    /// Download assets and check them (with none named: every one Cowork uses by default that
    /// is missing). A cut download resumes; a wrong one is refused and fetched again.
    Fetch {
        /// Asset names (see `cowork assets list`).
        ids: Vec<String>,
        /// Every asset, the optional ones too.
        #[arg(long)]
        all: bool,
        /// Take the files from this mirror: a URL whose folder holds them under their own names,
        /// or a folder on this computer (default: Settings → This computer, else each source).
        #[arg(long, env = "COWORK_ASSET_MIRROR")]
        mirror: Option<String>,
        /// Keep the downloaded archives in the cache (to serve another computer as a mirror).
        #[arg(long)]
        keep_downloads: bool,
    },
    /// Use files you downloaded yourself (known by their sha256, whatever their names).
    Add { files: Vec<PathBuf> },
}

pub(crate) async fn assets(cli: &Cli, cmd: &AssetsCmd) -> Result<ExitCode, String> {
    let list = cowork_app::assets::list().map_err(|e| e.to_string())?;
    match cmd {
        AssetsCmd::List => print_list(&list, cli.json),
        AssetsCmd::Add { files } => {
            let fetcher = cowork_app::assets::fetcher(cli.home.clone(), None)?;
            for file in files {
                let name = fetcher.add_local(file).await.map_err(|e| e.to_string())?;
                say!("{}: taken as {name}", file.display());
            }
        }
        AssetsCmd::Fetch {
            ids,
            all,
            mirror,
            keep_downloads,
        } => {
            let wanted = chosen(&list, ids, *all)?;
            let fetcher = cowork_app::assets::fetcher(cli.home.clone(), mirror.clone())?
                .keep_downloads(*keep_downloads);
            match (wanted.is_empty(), *all) {
                (true, true) => say!("every asset is here"),
                (true, false) => say!(
                    "every asset Cowork uses by default is here (`cowork assets list` shows the optional ones)"
                ),
                (false, _) => {}
            }
            let line = ProgressLine::new();
            for id in wanted {
                let asset = cowork_app::assets::find(&id).expect("chosen from the manifest");
                let started = std::time::Instant::now();
                fetcher
                    .fetch(asset, &|p| line.show(&p))
                    .await
                    .map_err(|e| format!("{id}: {e}"))?;
                line.finish(&format!(
                    "{id}: ready ({:.1} s) — {}",
                    started.elapsed().as_secs_f64(),
                    asset.title
                ));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The assets to fetch: those named, else every missing one (optional ones with `--all`).
fn chosen(list: &[AssetStatus], ids: &[String], all: bool) -> Result<Vec<String>, String> {
    if let Some(unknown) = ids.iter().find(|id| !list.iter().any(|a| &a.id == *id)) {
        return Err(cowork_app::assets::AssetError::Unknown(unknown.clone()).to_string());
    }
    Ok(match ids.is_empty() {
        false => ids.to_vec(),
        true => list
            .iter()
            .filter(|a| !a.present && (all || !a.optional))
            .map(|a| a.id.clone())
            .collect(),
    })
}

fn megabytes(bytes: u64) -> String {
    format!("{} MB", bytes.div_ceil(1_000_000))
}

fn print_list(list: &[AssetStatus], json: bool) {
    if json {
        return print::print_json(&list);
    }
    for a in list {
        let state = match (a.present, a.optional) {
            (true, _) => "here".to_owned(),
            (false, optional) => format!(
                "download {}{}",
                megabytes(a.download_bytes),
                if optional { ", optional" } else { "" }
            ),
        };
        say!("{:18} {:24} {}", a.id, state, a.title);
        say!(
            "{:18} {}; {} on disk in {}",
            "",
            a.purpose,
            megabytes(a.disk_bytes),
            a.place
        );
    }
}

/// One line on stderr that a terminal rewrites in place; elsewhere (a log, CI) a line at each
/// tenth of a download.
struct ProgressLine {
    terminal: bool,
    last_tenth: std::sync::Mutex<Option<(String, u64)>>,
}

impl ProgressLine {
    fn new() -> Self {
        ProgressLine {
            terminal: std::io::stderr().is_terminal(),
            last_tenth: Default::default(),
        }
    }

    fn show(&self, progress: &FetchProgress) {
        let asset = &progress.asset;
        let text = match &progress.step {
            FetchStep::Downloading { file, done, total } => {
                let percent = done * 100 / (*total).max(1);
                if !self.terminal {
                    let tenth = (file.clone(), percent / 10);
                    let mut last = self.last_tenth.lock().expect("not poisoned");
                    if last.as_ref() == Some(&tenth) {
                        return;
                    }
                    *last = Some(tenth);
                }
                format!(
                    "{asset}: downloading {file} {percent:>3}% ({} of {})",
                    megabytes(*done),
                    megabytes(*total)
                )
            }
            FetchStep::Checking { file } => format!("{asset}: checking {file}"),
            FetchStep::Retrying { file, attempt, why } => {
                format!("{asset}: {file} failed (try {attempt}): {why}; trying again")
            }
            FetchStep::Making { file } => format!("{asset}: making {file}"),
            FetchStep::Done => return,
        };
        let text = cowork_contract::text::printable_text(&text);
        let mut err = std::io::stderr().lock();
        let _ = match self.terminal {
            true => write!(err, "\r\x1b[2K{text}"),
            false => writeln!(err, "{text}"),
        };
        let _ = err.flush();
    }

    fn finish(&self, text: &str) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
        say!("{text}");
    }
}
