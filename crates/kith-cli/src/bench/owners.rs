//! `kith bench owners`: many owners in one store. `owners` × `per_owner`
//! generated memories (each owner's imported with `store_batch` of 500, as
//! a bulk import per user would), then `queries` retrievals, each for an
//! owner drawn at random, on SQLite and on PostgreSQL side by side:
//! import throughput, retrieve p50/p95/p99 and queries per second (one
//! client, so 1,000 / mean ms).
//!
//! With `--hnsw` (PostgreSQL), pgvector's HNSW index is built after the
//! import (build time reported) and the same queries run again through
//! the opt-in HNSW path, beside the in-process copy, once per walk width
//! of `--ef-search`; the vector path alone is compared for recall@10,
//! HNSW's and the copy's, against pgvector's exact scan (the SQL path,
//! `KITH_PG_VECTOR_CACHE=off`): the copy is not exact past
//! 50,000 vectors an owner, where it searches its IVF index
//! (`KITH_VECTOR_INDEX=off` makes it exact).
//!
//! With `--also-eager` (PostgreSQL), the same queries run once more through
//! a fresh connection whose vector copies load before an owner's first
//! search (`KITH_PG_VECTOR_CACHE=eager`), after the import's own
//! connection (the server's default, `background`, unless the environment
//! says otherwise) is closed: one import, both vector paths. Each
//! measurement reports the process's peak RSS since it started (the peak is
//! reset first, where Linux allows it).
//!
//! `--keep` leaves the import in place (SQLite's pack at `--dir`, the
//! PostgreSQL database `kith_bench_owners`) and `--reuse` measures on it
//! without importing again, so two builds can be timed on one import
//! (statistics are not refreshed on reuse: both see the same word counts).
//!
//! Embeddings: one model for corpus and queries (vectors of two models are
//! never compared). At a million memories MiniLM would take hours on two
//! cores, so runs of that size use `--embeddings hashing-384` (a
//! deterministic hashing embedder of MiniLM's dimension: the same vector
//! sizes and scan costs, not its quality); the query's MiniLM embedding
//! time is in `kith bench latency`. Hashing vectors have no neighbourhoods,
//! which an ANN index depends on: for HNSW's recall, `--embeddings minilm
//! --derived-vectors N` embeds each owner's first N messages with MiniLM
//! and derives the rest from them ([`super::derived`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use kith::database::{PgOptions, VectorCacheMode};
use kith::embedding::EmbeddingSpec;
use kith::{EventInput, Memory, RetrieveRequest};
use serde::Serialize;

use super::latency::Gen;
use crate::retrieve::bar;

/// Options.
pub struct OwnersOptions<'a> {
    /// Owners.
    pub owners: usize,
    /// Memories per owner.
    pub per_owner: usize,
    /// Retrievals timed (after 20 warm-up calls).
    pub queries: usize,
    /// The embedding model (`hashing-384`, `minilm`, `none`, …).
    pub embeddings: &'a str,
    /// A PostgreSQL server: a fresh database `kith_bench_owners` is made
    /// through it (CREATEDB) and dropped afterwards.
    pub database_url: Option<&'a str>,
    /// PostgreSQL only.
    pub postgres_only: bool,
    /// Also measure pgvector's HNSW index (PostgreSQL).
    pub hnsw: bool,
    /// The HNSW walk widths measured (`hnsw.ef_search`); empty: the
    /// store's default.
    pub ef_search: Vec<u32>,
    /// Also measure PostgreSQL with `eager` vector copies (PostgreSQL).
    pub also_eager: bool,
    /// Embed each owner's first `derived_vectors` messages with the model
    /// and derive the rest's vectors from theirs ([`super::derived`]); 0:
    /// embed every message.
    pub derived_vectors: usize,
    /// Where SQLite's pack is made; `None`: a temporary directory.
    pub dir: Option<&'a Path>,
    /// Leave the import in place afterwards.
    pub keep: bool,
    /// Measure on the import a `keep` run left, without importing.
    pub reuse: bool,
}

/// Figures for one backend (and vector path).
#[derive(Debug, Serialize)]
struct Figures {
    backend: String,
    vector_path: String,
    /// PostgreSQL's vector copies (`background`, `eager`); SQLite: none.
    vector_cache: Option<String>,
    /// HNSW only: the walk's width.
    ef_search: Option<u32>,
    owners: usize,
    per_owner: usize,
    embedding_model: String,
    import_per_sec: f64,
    import_secs: f64,
    queries: usize,
    retrieve_p50_ms: f64,
    retrieve_p95_ms: f64,
    retrieve_p99_ms: f64,
    queries_per_sec: f64,
    mean_search_ms: f64,
    /// The process's peak resident memory during this measurement (since
    /// its start where the peak could be reset, else since the process
    /// started), MiB.
    peak_rss_mib: f64,
    /// With `--hnsw`: the index's build time (HNSW only) and the vector
    /// path's recall@10 against pgvector's exact scan.
    index_build_secs: Option<f64>,
    vector_recall_at_10: Option<f64>,
}

const DB: &str = "kith_bench_owners";
const SEED: u64 = 0x5EED_0000_0BE5;

/// Runs the benchmark.
pub fn run(o: &OwnersOptions<'_>, json: bool) -> Result<()> {
    let backends: &[Option<&str>] = match (o.database_url, o.postgres_only) {
        (Some(url), true) => &[Some(url)],
        (Some(url), false) => &[None, Some(url)],
        (None, true) => anyhow::bail!("--postgres-only needs --database-url"),
        (None, false) => &[None],
    };
    if o.hnsw && o.database_url.is_none() {
        anyhow::bail!("--hnsw needs --database-url (it is pgvector's index)");
    }
    if o.also_eager && o.database_url.is_none() {
        anyhow::bail!("--also-eager needs --database-url (it is PostgreSQL's vector copy)");
    }
    if (o.keep || o.reuse) && o.dir.is_none() && backends.contains(&None) {
        anyhow::bail!("--keep and --reuse need --dir for SQLite's pack (or --postgres-only)");
    }
    let mut all = Vec::new();
    for url in backends {
        let tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
        let pack = o.dir.unwrap_or(tmp.path()).join("owners.kith");
        let (memory, db, mode) = open(*url, &pack, o)?;
        let import = if o.reuse {
            check_reused(&memory, o)?;
            (0.0, 0.0)
        } else {
            let import = import(&memory, o)?;
            if let Some(url) = url {
                // The steady state autovacuum reaches a minute after a load.
                kith::database::analyze_database(url, DB)?;
            }
            import
        };
        let mut f = measure(&memory, o, import, "default", None)?;
        f.vector_cache = mode.map(mode_name);
        // The reference for recall: pgvector's exact scan, no copy.
        let exact = match (o.hnsw, &db) {
            (true, Some(db)) => Some(Memory::connect_with(
                db,
                PgOptions {
                    vector_cache: VectorCacheMode::Off,
                    ..PgOptions::default()
                },
            )?),
            _ => None,
        };
        if let Some(exact) = &exact {
            f.vector_recall_at_10 = Some(recall_at_10(exact, &memory, o)?);
        }
        print(&f, json);
        all.push(f);
        if let (Some(exact), Some(db)) = (&exact, &db) {
            let dim = memory.embedder().map_or(0, |e| e.dimension());
            let built = kith::database::create_hnsw_index(db, dim)?;
            let widths = if o.ef_search.is_empty() {
                vec![PgOptions::default().hnsw_ef_search]
            } else {
                o.ef_search.clone()
            };
            for ef_search in widths {
                let hnsw = Memory::connect_with(
                    db,
                    PgOptions {
                        hnsw: true,
                        hnsw_ef_search: ef_search,
                        ..PgOptions::default()
                    },
                )?;
                let recall = recall_at_10(exact, &hnsw, o)?;
                let mut f = measure(&hnsw, o, import, "pgvector hnsw", Some(recall))?;
                f.index_build_secs = Some(built.as_secs_f64());
                f.ef_search = Some(ef_search);
                print(&f, json);
                all.push(f);
            }
        }
        drop(exact);
        drop(memory);
        if let (true, Some(db)) = (o.also_eager, &db) {
            let eager = Memory::connect_with(
                db,
                PgOptions {
                    vector_cache: VectorCacheMode::Eager,
                    ..PgOptions::from_env()?
                },
            )?;
            let mut f = measure(&eager, o, import, "default", None)?;
            f.vector_cache = Some(mode_name(VectorCacheMode::Eager));
            print(&f, json);
            all.push(f);
        }
        match url {
            Some(url) if !o.keep => kith::database::drop_database(url, DB)?,
            _ => {}
        }
    }
    if json {
        crate::render::json(&all)?;
    }
    Ok(())
}

/// A vector cache mode's name, as `KITH_PG_VECTOR_CACHE` spells it.
fn mode_name(mode: VectorCacheMode) -> String {
    match mode {
        VectorCacheMode::Off => "off",
        VectorCacheMode::Background => "background",
        VectorCacheMode::Eager => "eager",
    }
    .to_string()
}

/// A fresh memory: a pack in `dir`, or the database `DB` on `url` (with
/// its vector cache mode).
fn open(
    url: Option<&str>,
    dir: &Path,
    o: &OwnersOptions<'_>,
) -> Result<(Memory, Option<String>, Option<VectorCacheMode>)> {
    let embedder = EmbeddingSpec::parse(o.embeddings)?.load()?;
    // Every owner's messages are numbered from 0: each owner's first
    // `derived_vectors` are embedded by the model (and join the basis).
    let embedder = match embedder {
        Some(e) if o.derived_vectors > 0 && o.derived_vectors < o.per_owner => Some(Arc::new(
            super::derived::DerivedEmbedder::new(e, o.derived_vectors),
        )
            as Arc<dyn kith::Embedder>),
        e => e,
    };
    Ok(match url {
        Some(url) if o.reuse => {
            let db = kith::database::database_url(url, DB);
            let options = PgOptions::from_env_or(VectorCacheMode::Background)?;
            let memory = Memory::connect_with(&db, options)?;
            let memory = match embedder {
                Some(e) => memory.with_embedder(e),
                None => memory,
            };
            (memory, Some(db), Some(options.vector_cache))
        }
        None if o.reuse => (
            match embedder {
                Some(e) => Memory::open(dir)?.with_embedder(e),
                None => Memory::open(dir)?,
            },
            None,
            None,
        ),
        Some(url) => {
            let db = kith::database::create_database(url, DB, true)?;
            // The server's default: an owner's first search is pgvector's
            // exact scan while its copy loads in the background. With many
            // owners most searches meet an owner not yet copied. A
            // `KITH_PG_VECTOR_CACHE` the user set wins (`eager`: the copy
            // before the first search, to tell the two apart).
            let options = PgOptions::from_env_or(VectorCacheMode::Background)?;
            (
                Memory::init_database_with(&db, embedder, options)?,
                Some(db),
                Some(options.vector_cache),
            )
        }
        None => (
            match embedder {
                Some(e) => Memory::init_with_embedder(dir, e)?,
                None => Memory::init(dir)?,
            },
            None,
            None,
        ),
    })
}

/// Refuses a reused import that does not hold what `o` would import.
fn check_reused(memory: &Memory, o: &OwnersOptions<'_>) -> Result<()> {
    let events = memory.stats(None)?.events;
    let want = (o.owners * o.per_owner) as u64;
    if events != want {
        anyhow::bail!(
            "--reuse: the kept import holds {events} memories, not {} owners × {} = {want}; \
             import it again with --keep",
            o.owners,
            o.per_owner
        );
    }
    Ok(())
}

/// Imports every owner's memories; returns (memories/s, seconds).
fn import(memory: &Memory, o: &OwnersOptions<'_>) -> Result<(f64, f64)> {
    let total = o.owners * o.per_owner;
    let progress = bar(total as u64, "memories imported");
    let mut gen = Gen(SEED);
    let started = Instant::now();
    for owner in 0..o.owners {
        let mut i = 0;
        while i < o.per_owner {
            let end = (i + 500).min(o.per_owner);
            let batch: Vec<EventInput> = (i..end)
                .map(|j| {
                    let (who, text) = gen.message(j);
                    EventInput {
                        owner_id: Some(format!("u{owner}")),
                        session_id: Some(format!("s{}", j / 20)),
                        speaker: Some(who),
                        source_id: Some(format!("m{j}")),
                        ..EventInput::new("user", &text)
                    }
                })
                .collect();
            memory.store_batch(batch)?;
            progress.inc((end - i) as u64);
            i = end;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    Ok((total as f64 / secs.max(1e-9), secs))
}

/// The `n`th timed question and its owner (the same sequence for every
/// backend and path).
fn questions(o: &OwnersOptions<'_>, n: usize) -> Vec<(String, String)> {
    let mut gen = Gen(SEED ^ 0xA5A5);
    let mut pick = kith::rng::Rng::new(SEED);
    (0..n)
        .map(|_| {
            let owner = format!("u{}", pick.below(o.owners.max(1)));
            (owner, gen.question())
        })
        .collect()
}

/// Times `queries` retrievals after 20 warm-up ones.
fn measure(
    memory: &Memory,
    o: &OwnersOptions<'_>,
    (import_per_sec, import_secs): (f64, f64),
    path: &str,
    recall: Option<f64>,
) -> Result<Figures> {
    reset_peak_rss();
    let mut times = Vec::with_capacity(o.queries);
    let mut search = 0.0;
    for (q, (owner, question)) in questions(o, o.queries + 20).into_iter().enumerate() {
        let req = RetrieveRequest::new(&owner, &question)?;
        let started = Instant::now();
        let r = memory.retrieve(&req)?;
        if q >= 20 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            search += r.timings.search_ms;
        }
    }
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| kith_core::percentile::percentile(&times, p);
    Ok(Figures {
        backend: memory.store_backend().backend_name().to_string(),
        vector_path: path.to_string(),
        vector_cache: None,
        ef_search: None,
        owners: o.owners,
        per_owner: o.per_owner,
        embedding_model: memory
            .embedder()
            .map_or_else(|| "none".into(), |e| e.model_id().to_string()),
        import_per_sec,
        import_secs,
        queries: o.queries,
        retrieve_p50_ms: pct(0.50),
        retrieve_p95_ms: pct(0.95),
        retrieve_p99_ms: pct(0.99),
        queries_per_sec: 1000.0 / mean.max(1e-9),
        mean_search_ms: search / o.queries.max(1) as f64,
        peak_rss_mib: super::latency::rss_mib("VmHWM"),
        index_build_secs: None,
        vector_recall_at_10: recall,
    })
}

/// Resets the process's peak resident memory (`VmHWM`) to its current
/// size, so the next reading is this measurement's peak (Linux ≥ 4.0;
/// elsewhere the reading stays the process's lifetime peak).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The vector path alone, top 10, through `approx` against `exact`: the
/// share of exact's nodes that `approx` finds, over 100 questions.
fn recall_at_10(exact: &Memory, approx: &Memory, o: &OwnersOptions<'_>) -> Result<f64> {
    let (mut found, mut wanted) = (0usize, 0usize);
    for (owner, question) in questions(o, 100) {
        let mut req = RetrieveRequest::new(&owner, &question)?;
        req.paths = kith::RetrievePaths {
            lexical: false,
            vector: true,
            graph: false,
            neighbours: false,
            recency: false,
            speaker_boost: false,
            dated: false,
        };
        req.limit = 10;
        req.record = false;
        let ids = |m: &Memory| -> Result<Vec<uuid::Uuid>> {
            Ok(m.retrieve(&req)?
                .results
                .iter()
                .map(|h| h.node_id)
                .collect())
        };
        let want = ids(exact)?;
        let got = ids(approx)?;
        wanted += want.len();
        found += want.iter().filter(|id| got.contains(id)).count();
    }
    Ok(found as f64 / wanted.max(1) as f64)
}

fn print(f: &Figures, json: bool) {
    if json {
        return;
    }
    let build = f
        .index_build_secs
        .map(|s| format!("; index built in {s:.1} s"))
        .unwrap_or_default();
    let recall = f
        .vector_recall_at_10
        .map(|r| format!("; vector recall@10 {r:.3} vs exact scan"))
        .unwrap_or_default();
    let path = match (&f.vector_cache, f.ef_search) {
        (_, Some(ef)) => format!("{}, ef_search {ef}", f.vector_path),
        (Some(mode), None) => format!("{}, {mode} copy", f.vector_path),
        (None, None) => f.vector_path.clone(),
    };
    let import = if f.import_secs > 0.0 {
        format!("{:.0}/s ({:.0} s)", f.import_per_sec, f.import_secs)
    } else {
        "reused".to_string()
    };
    println!(
        "{:>8} {} owners × {} ({}, {path}): import {import}; retrieve p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, {:.1} queries/s (mean search {:.2} ms); peak RSS {:.0} MiB{build}{recall}",
        f.backend, f.owners, f.per_owner, f.embedding_model,
        f.retrieve_p50_ms, f.retrieve_p95_ms, f.retrieve_p99_ms, f.queries_per_sec, f.mean_search_ms,
        f.peak_rss_mib
    );
}
