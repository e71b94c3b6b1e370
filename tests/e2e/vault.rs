//! The vault against real files, the real store and the real e5 model (installed by setup):
//! bilingual relevance of words, meaning and hybrid search; edits made in the folder (as in
//! Obsidian) picked up by the watcher; renames, deletes and unreadable files; the tools'
//! writes, trash and restore; a switch of embedding model that re-embeds without mixing spaces.

use cowork_core::DenyApprover;
use cowork_tests::Harness;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Polls `check` until it holds (bounded: the watcher settles in ~0.3 s).
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + cowork_tests::wait::patience();
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

async fn titles(h: &Harness, query: &str) -> Vec<String> {
    let found = h.ok("search_vault", json!({"query": query, "k": 5})).await;
    found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["title"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bilingual_relevance_of_words_meaning_and_hybrid() {
    let h = Harness::new(Arc::new(DenyApprover));
    let set: Value = serde_json::from_str(include_str!("../data/vault_relevance.json")).unwrap();
    let mut ids: HashMap<String, String> = HashMap::new();
    for (key, text) in set["notes"].as_object().unwrap() {
        let saved = h.ok("save_to_vault", json!({"content": text})).await;
        ids.insert(saved["id"].as_str().unwrap().to_string(), key.clone());
    }
    let queries = set["queries"].as_array().unwrap();
    let mut table = String::from(
        "| ranking | recall@1 | recall@5 | zh@5 | en@5 | mixed@5 | paraphrase@5 |\n|---|---|---|---|---|---|---|\n",
    );
    let mut recall5 = HashMap::new();
    let mut recall1 = HashMap::new();
    for mode in ["words", "meaning", "hybrid"] {
        let (mut at1, mut at5) = (0, 0);
        let mut by_kind: HashMap<&str, (u32, u32)> = HashMap::new();
        for q in queries {
            let found = h
                .ok(
                    "search_vault",
                    json!({"query": q["q"], "k": 5, "mode": mode}),
                )
                .await;
            let ranked: Vec<&str> = found["hits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|hit| ids[hit["id"].as_str().unwrap()].as_str())
                .collect();
            let want = q["relevant"].as_str().unwrap();
            at1 += (ranked.first() == Some(&want)) as u32;
            let hit5 = ranked.contains(&want) as u32;
            at5 += hit5;
            let slot = by_kind.entry(q["kind"].as_str().unwrap()).or_default();
            slot.0 += hit5;
            slot.1 += 1;
            if mode == "hybrid" && hit5 == 0 {
                eprintln!("hybrid misses {:?} (wanted {want}, got {ranked:?})", q["q"]);
            }
        }
        let n = queries.len() as f64;
        let k = |kind: &str| {
            by_kind
                .get(kind)
                .map_or("-".into(), |(hit, all)| format!("{hit}/{all}"))
        };
        table.push_str(&format!(
            "| {mode} | {:.2} | {:.2} | {} | {} | {} | {} |\n",
            at1 as f64 / n,
            at5 as f64 / n,
            k("zh"),
            k("en"),
            k("mixed"),
            k("paraphrase")
        ));
        recall1.insert(mode, at1 as f64 / n);
        recall5.insert(mode, at5 as f64 / n);
    }
    eprintln!("{} notes, {} queries\n{table}", ids.len(), queries.len());
    // A search ranks, it does not list: asked for every note, it returns those near the query.
    let mut returned = 0;
    for q in queries {
        let found = h
            .ok(
                "search_vault",
                json!({"query": q["q"], "k": ids.len(), "mode": "hybrid"}),
            )
            .await;
        returned += found["hits"].as_array().unwrap().len();
    }
    let mean = returned as f64 / queries.len() as f64;
    eprintln!(
        "hybrid, asked for all {} notes: {mean:.1} returned on average",
        ids.len()
    );
    assert!(
        mean < ids.len() as f64 / 2.0,
        "a search lists the vault: {mean:.1} of {}",
        ids.len()
    );
    // Fusion must not lose what either ranking finds, and must find nearly everything.
    assert!(recall5["hybrid"] >= 0.9, "{table}");
    assert!(
        recall5["hybrid"] >= recall5["words"] && recall5["hybrid"] + 0.05 >= recall5["meaning"],
        "{table}"
    );
    assert!(
        recall1["hybrid"] + 0.05 >= recall1["words"].max(recall1["meaning"]) - 0.1,
        "{table}"
    );
    // Chinese-only questions about English notes are answered by meaning alone.
    assert!(recall5["words"] < recall5["meaning"], "{table}");
    // The scenario, among 44 other notes: the English memory for a Chinese question.
    let top = titles(&h, "护照在哪里?").await;
    assert!(
        top.iter().take(3).any(|t| t.contains("passport")),
        "{top:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_made_in_the_folder_are_picked_up_and_bad_files_are_reported_not_fatal() {
    let h = Harness::new(Arc::new(DenyApprover));
    let root = h.vault.root().to_path_buf();
    // A note already there before the app starts (the watcher's first pass indexes it).
    std::fs::create_dir_all(root.join("Projects")).unwrap();
    std::fs::write(
        root.join("Projects/garden.md"),
        "# Garden\nPlant the tulip bulbs in November. #garden [[Seeds]]\n",
    )
    .unwrap();
    let watcher = tokio::spawn(cowork_vault::watch(h.vault.clone()));
    eventually("the existing note is indexed", async || {
        titles(&h, "tulip bulbs")
            .await
            .contains(&"Garden".to_string())
    })
    .await;

    // Written by another program, with Obsidian front matter we don't know.
    let obsidian =
        "---\ntitle: Bike\naliases: [Bicycle]\ntags: [errands]\n---\nThe bike lock code is 4711.\n";
    std::fs::write(root.join("Projects/bike.md"), obsidian).unwrap();
    eventually("a new file is indexed", async || {
        titles(&h, "bike lock code")
            .await
            .first()
            .map(String::as_str)
            == Some("Bike")
    })
    .await;
    let bike = h.vault.get("Projects/bike.md").unwrap().unwrap();
    assert_eq!(bike.tags, vec!["errands"]);
    assert_eq!(
        bike.id, "path:Projects/bike.md",
        "a file without an id is known by its path"
    );

    // Edited outside: the new words are found, the old ones no longer.
    std::fs::write(
        root.join("Projects/bike.md"),
        obsidian.replace("4711", "9042 since the new lock"),
    )
    .unwrap();
    eventually("the edit is indexed", async || {
        h.vault
            .get("Projects/bike.md")
            .unwrap()
            .unwrap()
            .body
            .contains("9042")
    })
    .await;
    let found = h
        .ok("search_vault", json!({"query": "4711", "mode": "words"}))
        .await;
    assert!(found["hits"].as_array().unwrap().is_empty(), "{found}");

    // An edit through the tool gives the file an id and keeps the unknown keys and the link.
    h.ok(
        "update_vault_entry",
        json!({"id": "Projects/garden.md", "append": "Water them once."}),
    )
    .await;
    let text = std::fs::read_to_string(root.join("Projects/garden.md")).unwrap();
    assert!(
        text.starts_with("---\nid: ")
            && text.contains("[[Seeds]]")
            && text.ends_with("Water them once.\n"),
        "{text}"
    );
    let garden_id = h.vault.get("Projects/garden.md").unwrap().unwrap().id;
    assert!(!garden_id.starts_with("path:"));

    // Renamed in the folder: same entry (same id), new path. A whole folder renamed too.
    std::fs::rename(
        root.join("Projects/garden.md"),
        root.join("Projects/Garden plan.md"),
    )
    .unwrap();
    eventually("the rename is reflected", async || {
        h.vault
            .get(&garden_id)
            .unwrap()
            .is_some_and(|e| e.path == "Projects/Garden plan.md")
    })
    .await;
    std::fs::rename(root.join("Projects"), root.join("Home")).unwrap();
    eventually("the folder rename is reflected", async || {
        h.vault
            .get(&garden_id)
            .unwrap()
            .is_some_and(|e| e.path == "Home/Garden plan.md")
    })
    .await;
    assert!(h.vault.get("Projects/bike.md").unwrap().is_none());
    assert!(h.vault.get("Home/bike.md").unwrap().is_some());

    // Deleted in the folder: gone from search.
    std::fs::remove_file(root.join("Home/bike.md")).unwrap();
    eventually("the delete is reflected", async || {
        h.vault.get("Home/bike.md").unwrap().is_none()
    })
    .await;
    assert!(!titles(&h, "bike lock").await.contains(&"Bike".to_string()));

    // Not UTF-8, and broken front matter: reported, skipped, everything else still works.
    std::fs::write(root.join("Home/latin1.md"), b"caf\xe9 au lait\n").unwrap();
    std::fs::write(
        root.join("Home/broken.md"),
        "---\ntitle: [unclosed\n---\nbody\n",
    )
    .unwrap();
    eventually("both problems are reported", async || {
        h.vault.stats().unwrap().problems.len() == 2
    })
    .await;
    let problems = h.vault.stats().unwrap().problems;
    assert!(
        problems
            .iter()
            .any(|(p, why)| p == "Home/latin1.md" && why.contains("UTF-8")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|(p, why)| p == "Home/broken.md" && why.contains("front matter")),
        "{problems:?}"
    );
    h.ok(
        "save_to_vault",
        json!({"content": "The vault still takes new memories.", "kind": "fact"}),
    )
    .await;
    // Fixed: the problem clears.
    std::fs::write(
        root.join("Home/broken.md"),
        "---\ntitle: Fixed\n---\nbody\n",
    )
    .unwrap();
    eventually("the fixed file is indexed", async || {
        h.vault.get("Home/broken.md").unwrap().is_some()
    })
    .await;
    assert_eq!(h.vault.stats().unwrap().problems.len(), 1);
    watcher.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_write_trash_restore_promote_and_filter() {
    let h = Harness::new(Arc::new(DenyApprover));
    let fact = h.ok("save_to_vault", json!({"content": "Alice prefers morning meetings.", "kind": "preference", "tags": ["#people"], "scope": "project:atlas"})).await;
    let note = h
        .ok(
            "save_to_vault",
            json!({"title": "Standup", "content": "Morning standup moved to 9:30."}),
        )
        .await;
    assert!(
        fact["path"].as_str().unwrap().starts_with("memories/")
            && note["path"].as_str().unwrap().starts_with("notes/")
    );
    // The audit knows every write; the source of each entry names its call.
    let entry = h.vault.get(fact["id"].as_str().unwrap()).unwrap().unwrap();
    assert_eq!(entry.source.tool.as_deref(), Some("save_to_vault"));
    assert_eq!(entry.source.conversation.as_deref(), Some("conv"));

    // Filters: kinds (memory = the four memory kinds), tags, scope, dates.
    let only = |v: &Value| {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["title"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let memories = h
        .ok(
            "search_vault",
            json!({"query": "morning", "kinds": ["memory"]}),
        )
        .await;
    assert_eq!(only(&memories), vec!["Alice prefers morning meetings."]);
    let tagged = h
        .ok(
            "search_vault",
            json!({"query": "morning", "tags": ["people"]}),
        )
        .await;
    assert_eq!(only(&tagged).len(), 1);
    let other_project = h
        .ok(
            "search_vault",
            json!({"query": "morning", "scope": "project:other"}),
        )
        .await;
    assert_eq!(
        only(&other_project),
        vec!["Standup"],
        "another project's memories stay out; global ones come"
    );
    let future = h
        .ok(
            "search_vault",
            json!({"query": "morning", "since": "2999-01-01"}),
        )
        .await;
    assert!(only(&future).is_empty());
    let bad = h
        .call("search_vault", json!({"query": "x", "kinds": ["recipe"]}))
        .await;
    assert!(
        bad.result
            .unwrap_err()
            .to_string()
            .contains("use note, memory")
    );
    // Highlights.
    let hit = &h
        .ok("search_vault", json!({"query": "standup moved"}))
        .await["hits"][0];
    assert!(
        hit["snippet"].as_str().unwrap().contains("**standup**"),
        "{hit}"
    );

    // Promote the project preference to a global decision.
    let promoted = h
        .ok(
            "promote_memory",
            json!({"id": fact["id"], "kind": "decision", "title": "Meetings go in the morning"}),
        )
        .await;
    let p = h
        .vault
        .get(promoted["id"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!((p.scope.as_str(), p.kind.as_str()), ("global", "decision"));
    assert_eq!(p.source.promoted_from.as_deref(), fact["id"].as_str());
    let elsewhere = h
        .ok(
            "search_vault",
            json!({"query": "morning meetings", "scope": "project:other", "kinds": ["decision"]}),
        )
        .await;
    assert_eq!(only(&elsewhere), vec!["Meetings go in the morning"]);

    // Delete goes to the trash, restore brings it back with the same id.
    let trashed = h.ok("delete_vault_entry", json!({"id": note["id"]})).await;
    assert!(
        trashed["trash_path"]
            .as_str()
            .unwrap()
            .starts_with(".trash/notes/")
    );
    assert!(
        h.vault
            .root()
            .join(trashed["trash_path"].as_str().unwrap())
            .is_file()
    );
    assert!(
        !only(&h.ok("search_vault", json!({"query": "standup"})).await)
            .contains(&"Standup".to_string())
    );
    let restored = h.ok("restore_vault_entry", json!({"id": note["id"]})).await;
    assert_eq!(restored["path"], note["path"]);
    assert!(
        only(&h.ok("search_vault", json!({"query": "standup"})).await)
            .contains(&"Standup".to_string())
    );
    let missing = h
        .call("delete_vault_entry", json!({"id": "no-such-id"}))
        .await;
    assert!(
        missing
            .result
            .unwrap_err()
            .to_string()
            .contains("search_vault gives the ids")
    );

    // A file rewritten with the same bytes (a sync client, a touch) is not indexed or embedded again.
    let path = h.vault.root().join(note["path"].as_str().unwrap());
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, std::fs::read(&path).unwrap()).unwrap();
    let report = h.vault.reindex().await.unwrap();
    assert_eq!(
        (report.indexed, report.embedded, report.unchanged),
        (0, 0, 3),
        "{report:?}"
    );
}

/// An OpenAI-compatible `/embeddings` endpoint on loopback: hashed bag-of-words vectors, a
/// stand-in for Ollama or a paid API (neither can run here). Counts the texts it embedded.
/// Holds the embedding server's answers while `hold` is set, until `release`: a test watching
/// progress (a watch channel keeps only the latest value) then sees the embedding phase before
/// it can end, however the threads are scheduled.
#[derive(Default)]
struct Gate {
    hold: std::sync::atomic::AtomicBool,
    release: tokio::sync::watch::Sender<bool>,
}

async fn embeddings_server() -> (String, Arc<std::sync::atomic::AtomicUsize>, Arc<Gate>) {
    use axum::{Json, Router, routing::post};
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let gate = Arc::new(Gate::default());
    let (seen, held) = (count.clone(), gate.clone());
    let app = Router::new().route(
        "/v1/embeddings",
        post(move |Json(body): Json<Value>| {
            let (seen, held) = (seen.clone(), held.clone());
            async move {
                if held.hold.load(std::sync::atomic::Ordering::SeqCst) {
                    let _ = held.release.subscribe().wait_for(|go| *go).await;
                }
                let inputs: Vec<String> = body["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_lowercase())
                    .collect();
                seen.fetch_add(inputs.len(), std::sync::atomic::Ordering::SeqCst);
                let data: Vec<Value> = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        let mut v = vec![0.01f32; 32];
                        for word in text
                            .split(|c: char| !c.is_alphanumeric())
                            .filter(|w| !w.is_empty())
                        {
                            v[word.bytes().fold(7usize, |h, b| {
                                h.wrapping_mul(31).wrapping_add(b as usize)
                            }) % 32] += 1.0;
                        }
                        json!({"index": i, "embedding": v})
                    })
                    .collect();
                Json(json!({"object": "list", "data": data}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, count, gate)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_models_re_embeds_in_the_background_and_never_mixes_spaces() {
    let h = Harness::new(Arc::new(DenyApprover));
    for text in [
        "The boiler service is due in May.",
        "Swap the winter tyres in October.",
        "Renew the library card.",
    ] {
        h.ok("save_to_vault", json!({"content": text})).await;
    }
    let e5_model = h.vault.stats().unwrap().model.unwrap();
    let (url, embedded, gate) = embeddings_server().await;
    let remote = tokio::task::spawn_blocking(move || {
        cowork_vault::HttpEmbedder::connect(&url, "bag-of-words", "")
    })
    .await
    .unwrap()
    .unwrap();
    let mut progress = h.vault.progress();
    let vault = h.vault.clone();
    tokio::task::spawn_blocking(move || vault.set_embedder(Ok(Arc::new(remote))))
        .await
        .unwrap();
    // Until re-embedded, the new model has no vectors: searches fall back to words, never to e5's vectors.
    let stats = h.vault.stats().unwrap();
    assert_eq!(stats.cached_vectors, 0, "{stats:?}");
    let before = h
        .ok(
            "search_vault",
            json!({"query": "winter tyres", "mode": "meaning"}),
        )
        .await;
    assert!(before["hits"].as_array().unwrap().is_empty(), "{before}");
    gate.hold.store(true, std::sync::atomic::Ordering::SeqCst);
    let released = gate.clone();
    let seen = tokio::spawn(async move {
        let mut max = 0;
        while progress.changed().await.is_ok() {
            let p = progress.borrow_and_update().clone();
            if p.phase == cowork_vault::Phase::Embedding {
                max = max.max(p.total);
                released.release.send_replace(true);
            }
            if p.phase == cowork_vault::Phase::Idle && max > 0 {
                break;
            }
        }
        max
    });
    let embedded_now =
        tokio::time::timeout(cowork_tests::wait::patience(), h.vault.embed_missing())
            .await
            .expect("the server answers once progress has shown the embedding phase");
    assert_eq!(embedded_now.unwrap(), 3);
    assert_eq!(
        tokio::time::timeout(cowork_tests::wait::patience(), seen)
            .await
            .unwrap()
            .unwrap(),
        3,
        "progress showed the total"
    );
    let stats = h.vault.stats().unwrap();
    assert_eq!(stats.cached_vectors, 3);
    assert_eq!(
        stats.vectors.len(),
        2,
        "both models' vectors are kept: {stats:?}"
    );
    assert!(stats.model.as_deref().unwrap().starts_with("bag-of-words@"));
    let after = h
        .ok(
            "search_vault",
            json!({"query": "winter tyres", "mode": "meaning", "k": 1}),
        )
        .await;
    assert_eq!(
        after["hits"][0]["title"],
        "Swap the winter tyres in October."
    );
    let texts_before = embedded.load(std::sync::atomic::Ordering::SeqCst);
    // Back to e5: its vectors are still there, nothing is embedded again.
    h.vault.set_embedder(cowork_tests::e5());
    assert_eq!(h.vault.stats().unwrap().model.unwrap(), e5_model);
    assert_eq!(h.vault.embed_missing().await.unwrap(), 0);
    assert_eq!(
        embedded.load(std::sync::atomic::Ordering::SeqCst),
        texts_before
    );
}
