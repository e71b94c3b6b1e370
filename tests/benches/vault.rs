//! Vault figures (with their targets):
//! - ingest with embeddings: notes/s of a re-index of real files (parse, e5, FTS, commit), and
//!   the same without a model, to show what embedding costs;
//! - hybrid `search_vault` over 100k entries through the full gate: p50 and p95 (target p50 ≤
//!   30 ms with the query's embedding), with its parts measured alone: embedding the query,
//!   words only (FTS5 trigram BM25), meaning only (the int8 vector scan);
//! - index size per 1k notes, and the memory of the vector cache.
//!
//! The 100k corpus: the ingested notes are real; the rest are made by inserting rows with text
//! drawn from the same vocabulary and vectors near the real ones (embedding 100k notes would
//! take the machine most of an hour and measure nothing new).
//!
//!     cargo bench -p cowork-tests --bench vault   (VAULT_BENCH_ENTRIES=100000, VAULT_BENCH_INGEST=2000, BENCH_RUNS=50)

use cowork_core::{CallRequest, Caller, DenyApprover};
use cowork_tests::Harness;
use cowork_tests::bench::{env, ms, percentile};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A small deterministic generator (no rand dependency for a bench).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, from: &'a [String]) -> &'a str {
        &from[self.next() as usize % from.len()]
    }
}

fn vocabulary() -> Vec<String> {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../data/vault_relevance.json")).unwrap();
    let mut words: Vec<String> = Vec::new();
    for text in set["notes"].as_object().unwrap().values() {
        for w in text
            .as_str()
            .unwrap()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            // Chinese runs become two-character words.
            let chars: Vec<char> = w.chars().collect();
            if chars.iter().all(|c| (*c as u32) >= 0x4e00) {
                words.extend(chars.chunks(2).map(|c| c.iter().collect()));
            } else {
                words.push(w.to_lowercase());
            }
        }
    }
    words.sort();
    words.dedup();
    words
}

fn note(rng: &mut Lcg, words: &[String], i: usize) -> (String, String) {
    let title: Vec<&str> = (0..3).map(|_| rng.pick(words)).collect();
    let body: Vec<&str> = (0..24 + rng.next() as usize % 24)
        .map(|_| rng.pick(words))
        .collect();
    (format!("{} {i}", title.join(" ")), body.join(" "))
}

fn main() {
    let entries = env("VAULT_BENCH_ENTRIES", 100_000);
    let ingest = env("VAULT_BENCH_INGEST", 2_000).min(entries);
    let runs = env("BENCH_RUNS", 50).max(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let h = Harness::new(Arc::new(DenyApprover));
    let words = vocabulary();
    let mut rng = Lcg(7);

    // Ingest: real files, re-indexed with embeddings; then the same files without a model.
    let dir = h.vault.root().join("bench");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..ingest {
        let (title, body) = note(&mut rng, &words, i);
        std::fs::write(
            dir.join(format!("{i:06}.md")),
            format!("---\ntags: [bench]\n---\n# {title}\n\n{body}\n"),
        )
        .unwrap();
    }
    let t = Instant::now();
    let report = rt.block_on(h.vault.reindex()).unwrap();
    let with_model = t.elapsed();
    assert_eq!(report.indexed, ingest);
    let bare = Harness::new(Arc::new(DenyApprover));
    bare.vault.set_embedder(Err("bench: words only".into()));
    let bare_dir = bare.vault.root().join("bench");
    std::fs::create_dir_all(&bare_dir).unwrap();
    for item in std::fs::read_dir(&dir).unwrap() {
        let item = item.unwrap();
        std::fs::copy(item.path(), bare_dir.join(item.file_name())).unwrap();
    }
    let t = Instant::now();
    rt.block_on(bare.vault.reindex()).unwrap();
    let without_model = t.elapsed();
    println!(
        "ingest of {ingest} notes (~45 words each): {:.0} notes/s with e5 embeddings, {:.0} notes/s without a model ({:.2} ms of embedding per note)",
        ingest as f64 / with_model.as_secs_f64(),
        ingest as f64 / without_model.as_secs_f64(),
        (with_model.as_secs_f64() - without_model.as_secs_f64()) * 1e3 / ingest as f64
    );

    // Grow to `entries`: rows with generated text, vectors near the real ones.
    let db = h.store.connect().unwrap();
    let model: String = db
        .query_row("SELECT model FROM vault_vectors LIMIT 1", [], |r| r.get(0))
        .unwrap();
    let mut real: Vec<Vec<f32>> = Vec::new();
    {
        let mut stmt = db.prepare("SELECT vector FROM vault_vectors").unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).unwrap();
        for blob in rows {
            real.push(
                blob.unwrap()
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            );
        }
    }
    let size = |db: &rusqlite::Connection| -> i64 {
        db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        db.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let size_before = size(&db);
    let t = Instant::now();
    db.execute_batch("BEGIN").unwrap();
    for i in ingest..entries {
        let (title, body) = note(&mut rng, &words, i);
        let row: i64 = db
            .query_row(
                "INSERT INTO vault_entries (id, path, kind, scope, title, tags, body, created, updated, mtime_ns, size, hash)
                 VALUES (?1, ?2, 'note', 'global', ?3, '[\"bench\"]', ?4, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 0, 0, '') RETURNING row",
                rusqlite::params![format!("gen-{i}"), format!("generated/{i}.md"), title, body],
                |r| r.get(0),
            )
            .unwrap();
        // The CJK bigrams an upsert writes beside each entry (the trigram index has a trigger).
        db.execute(
            "INSERT INTO vault_grams (rowid, title, body) VALUES (?1, ?2, ?3)",
            rusqlite::params![
                row,
                cowork_vault::cjk_grams(&title),
                cowork_vault::cjk_grams(&format!("[\"bench\"] {body}"))
            ],
        )
        .unwrap();
        let base = &real[i % real.len()];
        let mut v: Vec<f32> = base
            .iter()
            .map(|x| x + ((rng.next() % 2001) as f32 / 1000.0 - 1.0) * 0.02)
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        db.execute(
            "INSERT INTO vault_vectors (row, model, vector) VALUES (?1, ?2, ?3)",
            rusqlite::params![row, model, blob],
        )
        .unwrap();
    }
    db.execute_batch("COMMIT").unwrap();
    let grown = entries - ingest;
    let size_after = size(&db);
    println!(
        "generated {grown} more entries in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let vector_bytes: i64 = db
        .query_row("SELECT sum(length(vector)) FROM vault_vectors", [], |r| {
            r.get(0)
        })
        .unwrap();
    println!(
        "index size: {:.2} MB per 1k notes in the store (text, FTS5 trigram and bigram indexes, f32 vectors; {:.2} MB of it vectors)",
        (size_after - size_before) as f64 / 1e6 / grown.max(1) as f64 * 1e3,
        vector_bytes as f64 / 1e6 / entries as f64 * 1e3
    );
    let t = Instant::now();
    h.vault.set_embedder(cowork_tests::e5());
    let stats = h.vault.stats().unwrap();
    println!(
        "vector cache: {} vectors, {:.1} MB in memory (int8; f32 would be {:.1} MB), loaded in {:.2} s",
        stats.cached_vectors,
        stats.cache_bytes as f64 / 1e6,
        stats.cached_vectors as f64 * 384.0 * 4.0 / 1e6,
        t.elapsed().as_secs_f64()
    );
    assert_eq!(stats.cached_vectors, entries);

    // Search: the relevance set's queries, round-robin.
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../data/vault_relevance.json")).unwrap();
    let queries: Vec<String> = set["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["q"].as_str().unwrap().to_string())
        .collect();
    let time = |mode: &str| -> Vec<Duration> {
        let mut times = Vec::new();
        for run in 0..=runs {
            let q = &queries[run % queries.len()];
            let t = Instant::now();
            let out = rt.block_on(h.scheduler.call(CallRequest::new(
                "search_vault",
                json!({"query": q, "k": 10, "mode": mode}),
                Caller::Cli,
                "bench",
            )));
            out.result.unwrap_or_else(|e| panic!("search_vault: {e}"));
            if run > 0 {
                times.push(t.elapsed());
            }
        }
        times
    };
    let mut embed = Vec::new();
    let e5 = cowork_tests::e5().unwrap();
    for run in 0..=runs {
        let t = Instant::now();
        e5.embed(
            &[queries[run % queries.len()].clone()],
            cowork_vault::Role::Query,
        )
        .unwrap();
        if run > 0 {
            embed.push(t.elapsed());
        }
    }
    let (mut hybrid, mut words_only, mut meaning_only) =
        (time("hybrid"), time("words"), time("meaning"));
    println!("search_vault over {entries} entries through the gate, k = 10, {runs} queries each:");
    println!(
        "  hybrid   p50 {:.1} ms, p95 {:.1} ms (target p50 ≤ 30 ms)",
        ms(percentile(&mut hybrid, 0.5)),
        ms(percentile(&mut hybrid, 0.95))
    );
    println!(
        "  words    p50 {:.1} ms (FTS5 BM25 over trigrams and CJK bigrams, or LIKE for single characters)",
        ms(percentile(&mut words_only, 0.5))
    );
    println!(
        "  meaning  p50 {:.1} ms (query embedding + int8 scan)",
        ms(percentile(&mut meaning_only, 0.5))
    );
    println!(
        "  query embedding alone p50 {:.1} ms (e5-small q4; runs while the word search runs)",
        ms(percentile(&mut embed, 0.5))
    );
}
