//! The manifest's own checks, and fetching from a loopback mirror that cuts, corrupts and
//! ignores ranges as real servers and networks do.

use super::*;
use std::collections::HashSet;
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn the_manifest_names_every_asset_once_with_checkable_sources() {
    let assets = manifest();
    assert!(assets.len() >= 5, "{assets:?}");
    let mut ids = HashSet::new();
    let mut dirs = HashSet::new();
    for asset in assets {
        assert!(ids.insert(&asset.id), "two assets named {}", asset.id);
        assert!(dirs.insert(&asset.dir), "two assets in {}", asset.dir);
        assert!(
            !asset.downloads.is_empty() && !asset.files.is_empty(),
            "{}",
            asset.id
        );
        for zh in [&asset.title_zh, &asset.purpose_zh] {
            let chinese = zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
            assert!(chinese, "{}: said in Chinese too: {zh}", asset.id);
        }
        let main_dir = format!("{}/", asset.main);
        assert!(
            asset
                .files
                .iter()
                .any(|f| f.path == asset.main || f.path.starts_with(&main_dir)),
            "{}: main {} is none of its files and holds none",
            asset.id,
            asset.main
        );
        for d in &asset.downloads {
            assert!(d.url.starts_with("https://"), "{}", d.url);
            assert!(d.size > 0);
            assert!(
                d.sha256.len() == 64 && d.sha256.bytes().all(|b| b.is_ascii_hexdigit()),
                "{}",
                d.url
            );
            if let Some(path) = &d.only_for {
                assert!(
                    asset
                        .files
                        .iter()
                        .any(|f| &f.path == path && f.system.is_some()),
                    "{}",
                    d.url
                );
            }
        }
        for f in &asset.files {
            let is_folder = matches!(f.from, Recipe::Folder { .. });
            assert_eq!(
                f.sha256.is_none(),
                is_folder,
                "{}: only folders go unsummed",
                f.path
            );
            assert!(!f.path.contains(".."), "{}", f.path);
        }
    }
}

/// A loopback HTTP/1.1 server for one archive, misbehaving as told, recording each Range asked.
#[derive(Clone, Copy, Debug)]
enum Mischief {
    None,
    /// The first answer stops halfway (a cut connection).
    CutFirst,
    /// The first answer has the right size and the wrong bytes.
    CorruptFirst,
    /// Every answer has the wrong bytes.
    AlwaysCorrupt,
    /// The first answer stops halfway; the server then ignores ranges (answers 200 in full).
    CutThenNoRanges,
}

struct Mirror {
    url: String,
    ranges: Arc<Mutex<Vec<Option<String>>>>,
}

async fn mirror(name: &'static str, bytes: Vec<u8>, mischief: Mischief) -> Mirror {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    tokio::spawn(async move {
        for n in 0..20 {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = vec![0u8; 4096];
            let len = socket.read(&mut request).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&request[..len]).into_owned();
            let path_ok = request.starts_with(&format!("GET /{name} "));
            let range = request.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("range: bytes=")
                    .map(|r| r.trim_end_matches('-').to_owned())
            });
            seen.lock().unwrap().push(range.clone());
            if !path_ok {
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let honour_range = !matches!(mischief, Mischief::CutThenNoRanges);
            let start = range
                .and_then(|r| r.parse::<usize>().ok())
                .filter(|_| honour_range)
                .unwrap_or(0);
            let mut body = bytes[start..].to_vec();
            let corrupt = matches!(mischief, Mischief::AlwaysCorrupt)
                || (n == 0 && matches!(mischief, Mischief::CorruptFirst));
            if corrupt {
                body.iter_mut().for_each(|b| *b ^= 0x5a);
            }
            let status = if start > 0 {
                "206 Partial Content"
            } else {
                "200 OK"
            };
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let cut = n == 0 && matches!(mischief, Mischief::CutFirst | Mischief::CutThenNoRanges);
            let send = if cut {
                &body[..body.len() / 2]
            } else {
                &body[..]
            };
            let _ = socket.write_all(send).await;
            let _ = socket.shutdown().await;
        }
    });
    Mirror { url, ranges }
}

/// A zip archive holding `model.bin` (3 MB of varied bytes), as an asset whose one file is it.
fn test_asset() -> (Asset, Vec<u8>, Vec<u8>) {
    let model: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut zip_bytes = Vec::new();
    {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(&mut zip_bytes));
        writer
            .start_file(
                "pkg/model.bin",
                zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Stored),
            )
            .unwrap();
        writer.write_all(&model).unwrap();
        writer.finish().unwrap();
    }
    let sum = |b: &[u8]| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(b))
    };
    let asset = Asset {
        id: "test-model".into(),
        title: "A test model".into(),
        purpose: "tests fetching".into(),
        title_zh: "测试模型".into(),
        purpose_zh: "测试下载".into(),
        capability: "vault_model".into(),
        dir: "cowork/models/test".into(),
        main: "model.bin".into(),
        optional: false,
        license: "test".into(),
        downloads: vec![Download {
            url: "https://example.invalid/files/test-1.0.whl".into(),
            size: zip_bytes.len() as u64,
            sha256: sum(&zip_bytes),
            only_for: None,
        }],
        files: vec![AssetFile {
            path: "model.bin".into(),
            size: Some(model.len() as u64),
            sha256: Some(sum(&model)),
            from: Recipe::Member {
                member: "pkg/model.bin".into(),
                executable: false,
            },
            system: None,
        }],
    };
    (asset, zip_bytes, model)
}

type Seen = Arc<Mutex<Vec<FetchStep>>>;

fn recorder() -> (Seen, impl Fn(FetchProgress)) {
    let seen: Seen = Default::default();
    let sink = seen.clone();
    (seen, move |p: FetchProgress| {
        sink.lock().unwrap().push(p.step)
    })
}

async fn fetch_through(
    mischief: Mischief,
) -> (
    Result<(), AssetError>,
    tempfile::TempDir,
    Mirror,
    Vec<u8>,
    Seen,
) {
    let (asset, zip_bytes, model) = test_asset();
    let server = mirror("test-1.0.whl", zip_bytes, mischief).await;
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(cache.path().to_owned(), Some(server.url.clone()));
    let (seen, progress) = recorder();
    let result = fetcher.fetch(&asset, &progress).await;
    (result, cache, server, model, seen)
}

fn made(cache: &Path) -> Option<Vec<u8>> {
    std::fs::read(cache.join("cowork/models/test/model.bin")).ok()
}

#[tokio::test]
async fn an_asset_comes_from_the_mirror_checked_with_progress_and_its_archive_is_removed() {
    let (result, cache, server, model, seen) = fetch_through(Mischief::None).await;
    result.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));
    assert_eq!(*server.ranges.lock().unwrap(), vec![None]);
    let downloads: Vec<u64> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| match s {
            FetchStep::Downloading { done, .. } => Some(*done),
            _ => None,
        })
        .collect();
    assert!(
        downloads.len() >= 2 && downloads.windows(2).all(|w| w[0] < w[1]),
        "{downloads:?}"
    );
    assert!(matches!(seen.lock().unwrap().last(), Some(FetchStep::Done)));
    let left: Vec<_> = std::fs::read_dir(cache.path().join("cowork/downloads"))
        .unwrap()
        .collect();
    assert!(
        left.is_empty(),
        "archives are removed once the files are made: {left:?}"
    );
    // Present now: a second fetch downloads nothing.
    let (asset, ..) = test_asset();
    assert!(asset.is_present(cache.path()));
}

#[tokio::test]
async fn a_cut_download_resumes_where_it_stopped() {
    let (result, cache, server, model, seen) = fetch_through(Mischief::CutFirst).await;
    result.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));
    let ranges = server.ranges.lock().unwrap().clone();
    assert_eq!(ranges.len(), 2, "{ranges:?}");
    let resumed_at: u64 = ranges[1]
        .as_deref()
        .expect("the second request asks for the rest")
        .parse()
        .unwrap();
    assert!(resumed_at > 0, "{ranges:?}");
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|s| matches!(s, FetchStep::Retrying { .. }))
    );
}

#[tokio::test]
async fn a_server_that_ignores_the_range_still_gives_a_correct_file() {
    let (result, cache, _server, model, _) = fetch_through(Mischief::CutThenNoRanges).await;
    result.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));
}

#[tokio::test]
async fn a_corrupt_download_is_refused_and_fetched_again() {
    let (result, cache, server, model, _) = fetch_through(Mischief::CorruptFirst).await;
    result.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));
    assert_eq!(
        *server.ranges.lock().unwrap(),
        vec![None, None],
        "the retry starts over"
    );
}

#[tokio::test]
async fn a_download_that_is_always_wrong_is_never_used() {
    let (result, cache, server, _, _) = fetch_through(Mischief::AlwaysCorrupt).await;
    assert!(
        matches!(result, Err(AssetError::Corrupt { .. })),
        "{result:?}"
    );
    assert_eq!(server.ranges.lock().unwrap().len(), 3, "three tries");
    assert_eq!(made(cache.path()), None);
    let left: Vec<_> = std::fs::read_dir(cache.path().join("cowork/downloads"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing wrong is kept: {left:?}");
}

#[tokio::test]
async fn a_mirror_without_the_file_says_so_at_once() {
    let (asset, ..) = test_asset();
    let server = mirror("other-name.whl", vec![1, 2, 3], Mischief::None).await;
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(cache.path().to_owned(), Some(server.url.clone()));
    let result = fetcher.fetch(&asset, &|_| {}).await;
    assert!(
        matches!(result, Err(AssetError::Http { status: 404, .. })),
        "{result:?}"
    );
    assert_eq!(
        server.ranges.lock().unwrap().len(),
        1,
        "a missing file is not retried"
    );
}

#[tokio::test]
async fn a_folder_mirror_and_a_file_the_person_has_both_serve_without_a_network() {
    let (asset, zip_bytes, model) = test_asset();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("test-1.0.whl"), &zip_bytes).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(
        cache.path().to_owned(),
        Some(folder.path().display().to_string()),
    );
    fetcher.fetch(&asset, &|_| {}).await.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));

    // A file the person downloaded themselves, under any name: known by its sha256.
    let cache = tempfile::tempdir().unwrap();
    let own = folder.path().join("whatever I called it.zip");
    std::fs::write(&own, &zip_bytes).unwrap();
    let offline = Fetcher::new(cache.path().to_owned(), Some("http://127.0.0.1:9".into()));
    let name = offline
        .add_local_of(&own, std::slice::from_ref(&asset))
        .await
        .unwrap();
    assert_eq!(name, "test-1.0.whl");
    offline.fetch(&asset, &|_| {}).await.unwrap();
    assert_eq!(made(cache.path()).as_deref(), Some(&model[..]));

    let stranger = folder.path().join("stranger.bin");
    std::fs::write(&stranger, b"not in any manifest").unwrap();
    let refused = offline
        .add_local_of(&stranger, std::slice::from_ref(&asset))
        .await;
    assert!(
        matches!(refused, Err(AssetError::NotInManifest(_))),
        "{refused:?}"
    );
}

#[test]
fn a_file_the_system_provides_needs_no_download() {
    let driver = find("playwright-driver").unwrap();
    let node_download = driver
        .downloads
        .iter()
        .find(|d| d.only_for.as_deref() == Some("node"))
        .unwrap();
    let needed = driver.needed_downloads();
    let system_node = driver
        .files
        .iter()
        .find(|f| f.path == "node")
        .unwrap()
        .system_program();
    assert_eq!(
        needed.iter().any(|d| d.url == node_download.url),
        system_node.is_none(),
        "node is downloaded exactly when this computer has no Node 20+ ({system_node:?})"
    );
}
