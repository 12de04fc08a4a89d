//! `kith bench latency`: store() throughput and retrieve() latency at pack
//! sizes of 10k and 100k memories, with the query's embedding included.
//!
//! Text is generated English: people, activities, places, times, feelings
//! and details combined by a seeded generator, so that no two messages are
//! equal and queries ask about things that were said. Each size gets a fresh
//! pack with the chosen embedder. The first `single` messages go through
//! one `store()` call each (one durable transaction, embedding included);
//! the rest through `store_batch` of 500. Then `queries` retrievals run as
//! an agent would call them (budget 1,024 tokens, receipt journaled), after
//! 20 warm-up calls; corpus embeddings may come from `--embedding-cache`, the
//! queries' never do.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use kith::{Embedder, EventInput, Memory, RetrieveRequest};
use serde::Serialize;

use crate::bench::recall::CachedEmbedder;
use crate::retrieve::bar;
use kith_core::percentile::percentile;

const PEOPLE: &[&str] = &[
    "Maya", "Jordan", "Sam", "Priya", "Tomás", "Aiko", "Lena", "Omar", "Grace", "Felix", "Nadia",
    "Kwame", "Sofia", "Hugo", "Mei", "Ravi", "Clara", "Diego", "Ines", "Yusuf",
];
const ACTIVITIES: &[&str] = &[
    "went hiking",
    "started a pottery class",
    "adopted a rescue dog",
    "ran a half marathon",
    "painted a sunset",
    "baked sourdough bread",
    "visited my grandmother",
    "moved apartments",
    "signed up for a cooking course",
    "fixed the old bicycle",
    "planted tomatoes",
    "joined a book club",
    "learned to play the violin",
    "went to a jazz concert",
    "finished the quarterly report",
    "interviewed for a new job",
    "volunteered at the shelter",
    "booked flights",
    "tried rock climbing",
    "organised a birthday party",
    "started therapy",
    "wrote a short story",
    "bought a second-hand camera",
    "went camping by the lake",
    "took the kids to the museum",
    "renovated the kitchen",
    "practised yoga",
    "watched the meteor shower",
    "cooked a vegetarian curry",
    "repaired the roof",
];
const PLACES: &[&str] = &[
    "in Lisbon",
    "near the river",
    "at the community centre",
    "in the mountains",
    "downtown",
    "at my parents' house",
    "in Berlin",
    "at the beach",
    "in the old town",
    "at work",
    "in Osaka",
    "by the harbour",
    "in the park",
    "at the library",
    "in Manchester",
];
const TIMES: &[&str] = &[
    "last weekend",
    "yesterday",
    "on Monday",
    "last month",
    "this morning",
    "two weeks ago",
    "on Friday night",
    "over the holidays",
    "last summer",
    "earlier today",
];
const FEELINGS: &[&str] = &[
    "and it was wonderful",
    "and I'm still tired",
    "which felt like a fresh start",
    "and honestly it was harder than I expected",
    "and I want to do it again soon",
    "which made me really proud",
    "and it rained the whole time",
    "with a few friends",
    "and I learned a lot",
    "and it cost more than I planned",
];
const DETAILS: &[&str] = &[
    "The best part was the food.",
    "I took a lot of photos.",
    "My knee hurts a bit now.",
    "Next time I'll bring a map.",
    "We met a couple who knew my sister.",
    "I think it changed how I see things.",
    "It reminded me of my childhood.",
    "I'm planning to write about it.",
    "Everyone was so welcoming.",
    "",
];

/// A seeded generator of English-like turns and questions about them
/// (also `kith bench owners`').
pub(crate) struct Gen(pub(crate) u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[(self.next() % list.len() as u64) as usize]
    }

    /// Message `i` (the index keeps every message distinct).
    pub(crate) fn message(&mut self, i: usize) -> (String, String) {
        let who = self.pick(PEOPLE).to_string();
        let text = format!(
            "{} I {} {} {} {} {} (note {i})",
            self.pick(&["So,", "Guess what:", "Quick update:", "Honestly,", "Well,"]),
            self.pick(ACTIVITIES),
            self.pick(PLACES),
            self.pick(TIMES),
            self.pick(FEELINGS),
            self.pick(DETAILS),
        );
        (who, text)
    }

    /// A question about what the messages say.
    pub(crate) fn question(&mut self) -> String {
        let person = self.pick(PEOPLE);
        let activity = self.pick(ACTIVITIES);
        match self.next() % 3 {
            0 => format!("When did {person} say they {activity}?"),
            1 => format!("Who {activity} {}?", self.pick(PLACES)),
            _ => format!("What happened after {person} {activity}?"),
        }
    }
}

/// One statement's share of the timed retrieves, as SQLite timed it.
#[derive(Debug, Serialize)]
struct ProfiledStatement {
    /// Mean runs per retrieve.
    runs_per_retrieve: f64,
    /// Mean ms per retrieve (statements FTS5 runs inside another are
    /// listed too, and also counted in that one's time).
    ms_per_retrieve: f64,
    /// The statement, whitespace folded.
    sql: String,
}

/// Figures for one size.
#[derive(Debug, Serialize)]
struct Figures {
    backend: String,
    memories: usize,
    embedding_model: String,
    single_calls: usize,
    store_single_per_sec: f64,
    store_batched_per_sec: f64,
    /// Memories whose vector the model computed during the store phase (the
    /// rest came from `--embedding-cache`, so the store figures leave out
    /// their embedding).
    embedded_live: usize,
    queries: usize,
    retrieve_p50_ms: f64,
    retrieve_p95_ms: f64,
    retrieve_p99_ms: f64,
    mean_embed_ms: f64,
    mean_search_ms: f64,
    mean_pack_ms: f64,
    mean_record_ms: f64,
    /// The first retrieve after the store phase: it loads the owner's
    /// vectors into memory and starts the index's build (ms).
    first_retrieve_ms: f64,
    /// From the end of the first retrieve until the index built in the
    /// background was ready (ms; 0 when none was built). The timed
    /// retrieves start after it.
    index_ready_ms: f64,
    /// Resident memory after the timed retrieves, and its peak (MiB).
    rss_mib: f64,
    peak_rss_mib: f64,
    /// The retrieving thread's time on a CPU per timed retrieve (ms; from
    /// /proc/thread-self/schedstat, 0 where missing): p50, p95 and mean,
    /// and its mean time runnable but waiting for a CPU. On a shared
    /// machine the wall time is this plus the queueing; threads a retrieve
    /// starts (the halves of a BM25 ranking) are not counted in it.
    /// A digest (FNV-1a) of every timed retrieve's ranked node ids and
    /// context: equal digests, equal answers (for before/after runs).
    results_digest: String,
    on_cpu_p50_ms: f64,
    on_cpu_p95_ms: f64,
    on_cpu_mean_ms: f64,
    queued_mean_ms: f64,
    /// Mean share of the exact scan's top 10 found by the vector path
    /// (with `--recall`), the queries measured, and whether an index
    /// answered.
    recall_at_10: Option<f64>,
    recall_queries: usize,
    indexed: bool,
    /// Mean ms of the vector path and of the exact scan on those queries.
    recall_search_ms: f64,
    recall_exact_ms: f64,
    /// The costliest statements of the timed retrieves (`--sql-profile`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sql_profile: Vec<ProfiledStatement>,
    /// Retrieves run at once in the concurrent phase (1: none ran).
    concurrency: usize,
    /// Retrieves a second in the concurrent phase.
    concurrent_per_sec: f64,
    concurrent_p50_ms: f64,
    concurrent_p95_ms: f64,
}

/// Options.
pub struct LatencyOptions<'a> {
    /// Pack sizes.
    pub sizes: &'a [usize],
    /// Single store() calls per size.
    pub single: usize,
    /// Retrievals per size.
    pub queries: usize,
    /// The embedding model.
    pub embeddings: &'a str,
    /// Where packs go (default: a temporary directory).
    pub dir: Option<&'a Path>,
    /// A file keeping corpus embeddings between runs.
    pub embedding_cache: Option<&'a Path>,
    /// A PostgreSQL server to measure beside SQLite: each size runs in a
    /// fresh database `kith_bench_latency_N` made through this URL (its
    /// role needs CREATEDB) and dropped afterwards.
    pub database_url: Option<&'a str>,
    /// Measure only PostgreSQL (needs `database_url`).
    pub postgres_only: bool,
    /// Leave packs and databases in place afterwards.
    pub keep: bool,
    /// Retrieves in flight at once in a second, concurrent phase (1: no
    /// such phase).
    pub concurrency: usize,
    /// Corpus vectors past this many messages are derived from the first
    /// ones' (see [`super::derived`]); 0: every message is embedded.
    pub derived_vectors: usize,
    /// Reuse a pack left by an earlier run with `--keep` (same `--dir` and
    /// size) instead of storing the corpus again.
    pub reuse: bool,
    /// Queries whose vector-path top 10 is compared with the exact scan's
    /// (0: none).
    pub recall_queries: usize,
    /// Statements whose SQLite time the output lists, the costliest first
    /// (0: none; the timed retrieves are profiled).
    pub sql_profile: usize,
}

/// Runs the benchmark.
pub fn run(o: &LatencyOptions<'_>, json: bool) -> Result<()> {
    let cached = CachedEmbedder::open(o.embeddings, o.embedding_cache)?;
    // Removed at the end unless kept.
    let _tmp: Option<tempfile::TempDir>;
    let root: PathBuf = match o.dir {
        Some(d) => d.to_path_buf(),
        None => {
            let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
            if o.keep {
                _tmp = None;
                dir.keep()
            } else {
                let path = dir.path().to_path_buf();
                _tmp = Some(dir);
                path
            }
        }
    };
    let mut all = Vec::new();
    let backends: &[Option<&str>] = match (o.database_url, o.postgres_only) {
        (Some(url), true) => &[Some(url)],
        (Some(url), false) => &[None, Some(url)],
        (None, true) => {
            anyhow::bail!("--postgres-only needs --database-url (or KITH_DATABASE_URL)")
        }
        (None, false) => &[None],
    };
    for (&n, &url) in o
        .sizes
        .iter()
        .flat_map(|n| backends.iter().map(move |b| (n, b)))
    {
        let f = run_size(
            &root.join(format!("latency-{n}.kith")),
            url,
            n,
            o,
            cached.clone(),
        )?;
        if let (Some(c), Some(path)) = (&cached, o.embedding_cache) {
            c.save(path)?;
        }
        if !json {
            println!(
                "{:>8} {:>7} memories ({}): store {:.0}/s single, {:.0}/s batched ({} vectors computed live); retrieve p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms (mean: embed {:.2}, search {:.2}, pack {:.2}, receipt {:.2})",
                f.backend, f.memories, f.embedding_model, f.store_single_per_sec, f.store_batched_per_sec, f.embedded_live,
                f.retrieve_p50_ms, f.retrieve_p95_ms, f.retrieve_p99_ms,
                f.mean_embed_ms, f.mean_search_ms, f.mean_pack_ms, f.mean_record_ms
            );
            println!(
                "{:>8} {:>7} memories: first retrieve {:.0} ms (loads the vectors); index ready {:.0} ms later (built in the background); RSS {:.0} MiB (peak {:.0} MiB)",
                f.backend, f.memories, f.first_retrieve_ms, f.index_ready_ms, f.rss_mib, f.peak_rss_mib
            );
            if let Some(r) = f.recall_at_10 {
                println!(
                    "{:>8} {:>7} memories: vector path recall@10 vs the exact scan {:.4} on {} queries ({}; {:.2} ms vs exact {:.2} ms)",
                    f.backend, f.memories, r, f.recall_queries,
                    if f.indexed { "IVF index" } else { "exact scan" },
                    f.recall_search_ms, f.recall_exact_ms
                );
            }
            println!(
                "{:>8} {:>7} memories: results digest {} (the timed retrieves' ranked ids and contexts)",
                f.backend, f.memories, f.results_digest
            );
            if f.on_cpu_mean_ms > 0.0 {
                println!(
                    "{:>8} {:>7} memories: retrieving thread on a CPU p50 {:.2} ms, p95 {:.2} ms, mean {:.2} ms; waiting for a CPU mean {:.2} ms",
                    f.backend, f.memories, f.on_cpu_p50_ms, f.on_cpu_p95_ms, f.on_cpu_mean_ms, f.queued_mean_ms
                );
            }
            if !f.sql_profile.is_empty() {
                println!("  SQL per retrieve (SQLite's profile: ms, runs, statement):");
                for p in &f.sql_profile {
                    let sql: String = p.sql.chars().take(160).collect();
                    println!(
                        "  {:>8.3} ms {:>6.2}x  {sql}",
                        p.ms_per_retrieve, p.runs_per_retrieve
                    );
                }
            }
            if f.concurrency > 1 {
                println!(
                    "{:>8} {:>7} memories, {} retrieves at once: {:.1} retrieves/s, p50 {:.2} ms, p95 {:.2} ms",
                    f.backend, f.memories, f.concurrency, f.concurrent_per_sec,
                    f.concurrent_p50_ms, f.concurrent_p95_ms
                );
            }
        }
        all.push(f);
    }
    if json {
        crate::render::json(&all)?;
    }
    Ok(())
}

fn run_size(
    dir: &Path,
    database_url: Option<&str>,
    n: usize,
    o: &LatencyOptions<'_>,
    cached: Option<Arc<CachedEmbedder>>,
) -> Result<Figures> {
    let embedder = size_embedder(cached.clone(), o.derived_vectors, n);
    let scratch = format!("kith_bench_latency_{n}");
    let memory = open_memory(dir, database_url, &scratch, o.reuse, embedder)?;
    let reused = o.reuse && database_url.is_none() && memory.stats(None)?.events >= n as u64;
    let embedded_before = cached
        .as_ref()
        .map_or(0, |c| c.embedded.load(Ordering::Relaxed));
    if let Some(c) = &cached {
        c.bypass.store(false, Ordering::Relaxed);
    }
    let mut gen = Gen(0x2545_F491_4F6C_DD1D ^ n as u64);
    let single = if reused { 0 } else { o.single.min(n) };
    let (single_secs, batched_secs) = store_messages(&memory, &mut gen, n, single, reused)?;
    if let Some(url) = database_url {
        // What autovacuum does within a minute of a bulk load: statistics,
        // which lexical search reads word frequencies from. The timed
        // queries measure that steady state.
        kith::database::analyze_database(url, &scratch)?;
    }
    if let Some(c) = &cached {
        c.bypass.store(true, Ordering::Relaxed);
    }
    let log = memory
        .store_backend()
        .statement_log()
        .filter(|_| o.sql_profile > 0);
    let (mut times, stages, first_retrieve_ms, index_ready_ms, mut cpu, digest) =
        timed_retrieves(&memory, &mut gen, o.queries, log)?;
    let queued_mean_ms = cpu.iter().map(|c| c.1).sum::<f64>() / o.queries.max(1) as f64;
    let mut on_cpu: Vec<f64> = cpu.drain(..).map(|c| c.0).collect();
    let on_cpu_mean_ms = on_cpu.iter().sum::<f64>() / o.queries.max(1) as f64;
    on_cpu.sort_by(f64::total_cmp);
    let sql_profile = profiled(log, o.sql_profile, o.queries);
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| percentile(&times, p);
    let recall = if o.recall_queries > 0 {
        let questions: Vec<String> = (0..o.recall_queries).map(|_| gen.question()).collect();
        vector_recall(&memory, &questions)?
    } else {
        None
    };
    let concurrent = if o.concurrency > 1 {
        let questions: Vec<String> = (0..o.queries).map(|_| gen.question()).collect();
        Some(concurrent_retrieves(&memory, &questions, o.concurrency)?)
    } else {
        None
    };
    let qn = o.queries.max(1) as f64;
    let backend = memory.store_backend().backend_name().to_string();
    let embedding_model = memory
        .embedder()
        .map(|e| e.model_id().to_string())
        .unwrap_or_else(|| "none".into());
    if let Some(url) = database_url {
        drop(memory);
        if o.keep {
            eprintln!("kept database {scratch}");
        } else {
            kith::database::drop_database(url, &scratch)?;
        }
    } else if o.keep {
        eprintln!("kept pack {}", dir.display());
    }
    Ok(Figures {
        backend,
        memories: n,
        embedding_model,
        single_calls: single,
        store_single_per_sec: single as f64 / single_secs.max(1e-9),
        store_batched_per_sec: (n - single) as f64 / batched_secs.max(1e-9),
        embedded_live: cached
            .as_ref()
            .map_or(n, |c| c.embedded.load(Ordering::Relaxed) - embedded_before),
        queries: o.queries,
        retrieve_p50_ms: pct(0.50),
        retrieve_p95_ms: pct(0.95),
        retrieve_p99_ms: pct(0.99),
        mean_embed_ms: stages[0] / qn,
        mean_search_ms: stages[1] / qn,
        mean_pack_ms: stages[2] / qn,
        mean_record_ms: stages[3] / qn,
        first_retrieve_ms,
        index_ready_ms,
        rss_mib: rss_mib("VmRSS"),
        peak_rss_mib: rss_mib("VmHWM"),
        results_digest: format!("{digest:016x}"),
        on_cpu_p50_ms: percentile(&on_cpu, 0.50),
        on_cpu_p95_ms: percentile(&on_cpu, 0.95),
        on_cpu_mean_ms,
        queued_mean_ms,
        recall_at_10: recall.as_ref().map(|r| r.recall),
        recall_queries: recall.as_ref().map_or(0, |r| r.queries),
        indexed: recall.as_ref().is_some_and(|r| r.indexed),
        recall_search_ms: recall.as_ref().map_or(0.0, |r| r.search_ms),
        recall_exact_ms: recall.as_ref().map_or(0.0, |r| r.exact_ms),
        sql_profile,
        concurrency: o.concurrency.max(1),
        concurrent_per_sec: concurrent.as_ref().map_or(0.0, |c| c.0),
        concurrent_p50_ms: concurrent.as_ref().map_or(0.0, |c| percentile(&c.1, 0.50)),
        concurrent_p95_ms: concurrent.as_ref().map_or(0.0, |c| percentile(&c.1, 0.95)),
    })
}

/// The embedder for a pack of `n`: the cached one, behind derived vectors
/// from `derived_vectors` base ones when that is more than zero and under `n`.
fn size_embedder(
    cached: Option<Arc<CachedEmbedder>>,
    derived_vectors: usize,
    n: usize,
) -> Option<Arc<dyn Embedder>> {
    let embedder = cached.map(|c| c as Arc<dyn Embedder>);
    match (embedder, derived_vectors) {
        (Some(e), base) if base > 0 && base < n => {
            Some(Arc::new(super::derived::DerivedEmbedder::new(e, base)) as Arc<dyn Embedder>)
        }
        (e, _) => e,
    }
}

/// The generated message `i` as a store request.
fn message_input(gen: &mut Gen, i: usize) -> EventInput {
    let (who, text) = gen.message(i);
    EventInput {
        owner_id: Some("bench".into()),
        session_id: Some(format!("s{}", i / 20)),
        speaker: Some(who),
        source_id: Some(format!("m{i}")),
        ..EventInput::new("user", &text)
    }
}

/// Stores the `n` generated messages, the first `single` one call at a
/// time and the rest in batches of 500; returns the seconds each part took.
fn store_messages(
    memory: &Memory,
    gen: &mut Gen,
    n: usize,
    single: usize,
    reused: bool,
) -> Result<(f64, f64)> {
    let progress = bar(n as u64, &format!("memories stored ({n})"));
    let started = Instant::now();
    for i in 0..single {
        memory.store(message_input(gen, i))?;
        progress.inc(1);
    }
    let single_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut i = single;
    if reused {
        // The corpus is in the pack: only advance the generator, so the
        // questions are the ones a fresh run asks.
        for j in 0..n {
            let _ = message_input(gen, j);
        }
        i = n;
    }
    while i < n {
        let end = (i + 500).min(n);
        let batch: Vec<EventInput> = (i..end).map(|j| message_input(gen, j)).collect();
        memory.store_batch(batch)?;
        progress.inc((end - i) as u64);
        i = end;
    }
    let batched_secs = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    Ok((single_secs, batched_secs))
}

/// The memory a size runs on: a fresh scratch database `scratch` with
/// `database_url`, else the pack at `dir` (kept when `reuse` and there,
/// else made anew).
fn open_memory(
    dir: &Path,
    database_url: Option<&str>,
    scratch: &str,
    reuse: bool,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Memory> {
    Ok(match database_url {
        Some(url) => {
            let db = kith::database::create_database(url, scratch, true)?;
            // Steady state: the first warm-up query copies the owner's
            // vectors (a long-running process does that in the background).
            let options =
                kith::database::PgOptions::from_env_or(kith::database::VectorCacheMode::Eager)?;
            Memory::init_database_with(&db, embedder, options)?
        }
        None if reuse && dir.exists() => match embedder {
            Some(e) => Memory::open(dir)?.with_embedder(e),
            None => Memory::open(dir)?,
        },
        None => {
            let _ = std::fs::remove_dir_all(dir);
            match embedder {
                Some(e) => Memory::init_with_embedder(dir, e)?,
                None => Memory::init(dir)?,
            }
        }
    })
}

/// Times `queries` retrieves after 20 warm-up ones: each time (ms, in
/// order), the summed stage times (embed, search, pack, record), the
/// first warm-up's time and how long the vector index then took to be
/// ready (it builds in the background), and each timed retrieve's
/// [`thread_times`] (empty where unknown). `profile`, when given, times
/// the SQL of the timed ones. Last, a digest of their answers (ranked
/// node ids and packed context).
#[allow(clippy::type_complexity)]
fn timed_retrieves(
    memory: &Memory,
    gen: &mut Gen,
    queries: usize,
    profile: Option<&kith::StatementLog>,
) -> Result<(Vec<f64>, [f64; 4], f64, f64, Vec<(f64, f64)>, u64)> {
    let mut times = Vec::with_capacity(queries);
    let mut stages = [0f64; 4];
    let mut first_retrieve_ms = 0.0;
    let mut index_ready_ms = 0.0;
    let mut cpu = Vec::with_capacity(queries);
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    for q in 0..(queries + 20) {
        if q == 20 {
            if let Some(log) = profile {
                log.start_profiling();
            }
        }
        let req = RetrieveRequest::new("bench", &gen.question())?;
        let before = thread_times();
        let started = Instant::now();
        let r = memory.retrieve(&req)?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if let (true, Some(a), Some(b)) = (q >= 20, before, thread_times()) {
            cpu.push((b.0 - a.0, b.1 - a.1));
        }
        if q == 0 {
            first_retrieve_ms = ms;
            index_ready_ms = wait_for_index(memory)?;
        }
        if q >= 20 {
            for item in &r.results {
                digest = fnv1a(digest, item.node_id.as_bytes());
            }
            digest = fnv1a(digest, r.context.as_bytes());
            times.push(ms);
            stages[0] += r.timings.embed_ms;
            stages[1] += r.timings.search_ms;
            stages[2] += r.timings.pack_ms;
            stages[3] += r.timings.record_ms;
        }
    }
    Ok((
        times,
        stages,
        first_retrieve_ms,
        index_ready_ms,
        cpu,
        digest,
    ))
}

/// FNV-1a over `bytes`, from `hash`.
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// This thread's time on a CPU and its time runnable but waiting for one
/// so far (ms), from /proc/thread-self/schedstat; `None` where missing.
fn thread_times() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().ok());
    let ran = fields.next()??;
    let waited = fields.next()??;
    Some((ran / 1e6, waited / 1e6))
}

/// The `top` costliest statements `log` profiled over `queries`
/// retrieves (none without a log).
fn profiled(
    log: Option<&kith::StatementLog>,
    top: usize,
    queries: usize,
) -> Vec<ProfiledStatement> {
    let Some(log) = log else {
        return Vec::new();
    };
    let n = queries.max(1) as f64;
    log.take_profile()
        .into_iter()
        .take(top)
        .map(|t| ProfiledStatement {
            runs_per_retrieve: t.runs as f64 / n,
            ms_per_retrieve: t.total.as_secs_f64() * 1000.0 / n,
            sql: t.sql.split_whitespace().collect::<Vec<_>>().join(" "),
        })
        .collect()
}

/// This process's resident memory (`VmRSS`) or its peak (`VmHWM`), MiB;
/// 0 where /proc is missing.
pub(super) fn rss_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Waits until no vector index is being built in the background for the
/// bench owner (polling the store's probe); returns the ms waited.
fn wait_for_index(memory: &Memory) -> Result<f64> {
    let Some(embedder) = memory.embedder() else {
        return Ok(0.0);
    };
    let vector = embedder
        .embed(&["How are you?"])?
        .into_iter()
        .next()
        .unwrap_or_default();
    let q = kith::VectorQuery {
        owner: kith::OwnerId::new("bench")?,
        model: embedder.model_id().to_string(),
        vector,
        filters: kith::SearchFilters::default(),
        limit: 10,
    };
    let started = Instant::now();
    while memory
        .store_backend()
        .vector_probe(&q, 10)?
        .is_some_and(|p| p.building)
    {
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// What `--recall` measured.
struct Recall {
    recall: f64,
    queries: usize,
    indexed: bool,
    search_ms: f64,
    exact_ms: f64,
}

/// The vector path's top 10 against the exact scan's, on held-out questions
/// embedded live (never corpus texts).
fn vector_recall(memory: &Memory, questions: &[String]) -> Result<Option<Recall>> {
    let Some(embedder) = memory.embedder() else {
        return Ok(None);
    };
    let texts: Vec<&str> = questions.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&texts)?;
    let (mut found, mut asked, mut search_ms, mut exact_ms) = (0usize, 0usize, 0.0, 0.0);
    let mut indexed = false;
    for vector in vectors {
        let q = kith::VectorQuery {
            owner: kith::OwnerId::new("bench")?,
            model: embedder.model_id().to_string(),
            vector,
            filters: kith::SearchFilters::default(),
            limit: 10,
        };
        let Some(p) = memory.store_backend().vector_probe(&q, 10)? else {
            return Ok(None);
        };
        indexed |= p.indexed;
        found += p.searched.iter().filter(|id| p.exact.contains(id)).count();
        asked += p.exact.len();
        search_ms += p.searched_ms;
        exact_ms += p.exact_ms;
    }
    let n = questions.len().max(1) as f64;
    Ok(Some(Recall {
        recall: found as f64 / asked.max(1) as f64,
        queries: questions.len(),
        indexed,
        search_ms: search_ms / n,
        exact_ms: exact_ms / n,
    }))
}

/// Runs `questions` with `threads` retrieves in flight at once, as a server
/// answering several agents would; returns retrieves a second and each
/// retrieve's time in ms, sorted.
fn concurrent_retrieves(
    memory: &Memory,
    questions: &[String],
    threads: usize,
) -> Result<(f64, Vec<f64>)> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let per_thread: Vec<Result<Vec<f64>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<Vec<f64>> {
                    let mut times = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(question) = questions.get(i) else {
                            return Ok(times);
                        };
                        let req = RetrieveRequest::new("bench", question)?;
                        let t = Instant::now();
                        memory.retrieve(&req)?;
                        times.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a retrieve thread does not panic"))
            .collect()
    });
    let secs = started.elapsed().as_secs_f64();
    let mut times = Vec::with_capacity(questions.len());
    for t in per_thread {
        times.extend(t?);
    }
    times.sort_by(f64::total_cmp);
    Ok((times.len() as f64 / secs.max(1e-9), times))
}
