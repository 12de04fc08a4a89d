//! `kith bench ingest`: store() throughput and search latency at several
//! pack sizes, on synthetic conversation-like text.
//!
//! For each size N it builds a fresh pack: the first `single` messages go
//! through `store()` one call (one durable transaction) at a time, the rest
//! through `store_batch` in transactions of 1,000; then it times `queries`
//! searches.
//!
//! Text comes from `--data` (a LoCoMo JSON file: its turns, cycled to reach
//! N, and its questions as queries) or, without it, from a synthetic
//! generator: a Zipf-distributed made-up vocabulary whose 100 most frequent
//! words play the part of English function words — they fill the messages
//! but, as real stopwords are, are left out of queries.

pub mod derived;
pub mod embed;
pub mod extract;
pub mod http;
pub mod latency;
pub mod locomo;
pub mod owners;
pub mod recall;
pub mod split;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kith::{EventInput, IngestOptions, Memory, SearchRequest};
use serde::Serialize;

use crate::args::BenchCommand;
use kith_core::percentile::percentile;

/// Figures for one pack size.
#[derive(Debug, Serialize)]
struct IngestFigures {
    notes: usize,
    /// The embedding set-up (`--embeddings`).
    embeddings: String,
    extract: bool,
    single_calls: usize,
    single_per_sec: f64,
    batched_per_sec: f64,
    /// Every message stored and embedded, per second of the whole run
    /// (single and batched stores, then waiting for background vectors).
    embedded_per_sec: f64,
    /// The same per CPU-second of this process (all its threads): on a
    /// shared machine, wall-clock rates mostly measure the other processes.
    embedded_per_cpu_sec: f64,
    search_queries: usize,
    search_p50_ms: f64,
    search_p95_ms: f64,
    search_mean_hits: f64,
    pack_bytes: u64,
}

/// Runs a benchmark; `database_url` (the global `--database-url`) adds
/// PostgreSQL figures to `bench latency`; `identity` applies to the
/// benchmarks that extract.
pub fn run(
    which: &BenchCommand,
    database_url: Option<&str>,
    identity: kith::identity::IdentityOptions,
    json: bool,
) -> Result<()> {
    match which {
        BenchCommand::Extract {
            data,
            conversations,
            detail,
        } => crate::bench::extract::run(
            crate::bench::extract::ExtractOptions {
                data,
                conversations,
                identity,
                database_url,
                detail: detail.as_deref(),
            },
            json,
        ),
        which @ BenchCommand::Latency { .. } => latency(which, database_url, json),
        BenchCommand::Owners {
            owners,
            per_owner,
            queries,
            embeddings,
            postgres_only,
            hnsw,
            ef_search,
            also_eager,
            derived_vectors,
            dir,
            keep,
            reuse,
        } => owners::run(
            &owners::OwnersOptions {
                owners: *owners,
                per_owner: *per_owner,
                queries: *queries,
                embeddings,
                database_url,
                postgres_only: *postgres_only,
                hnsw: *hnsw,
                ef_search: ef_search.clone(),
                also_eager: *also_eager,
                derived_vectors: *derived_vectors,
                dir: dir.as_deref(),
                keep: *keep,
                reuse: *reuse,
            },
            json,
        ),
        BenchCommand::Http {
            requests,
            concurrency,
            notes,
            max_secs,
        } => crate::bench::http::run(
            &crate::bench::http::HttpOptions {
                requests: *requests,
                concurrency: *concurrency,
                notes: *notes,
                max_secs: *max_secs,
            },
            json,
        ),
        which @ BenchCommand::Recall { .. } => recall(which, database_url, json),
        BenchCommand::Ingest {
            notes,
            single,
            queries,
            dir,
            data,
            extract,
            embeddings,
        } => ingest(
            IngestBench {
                notes,
                single: *single,
                queries: *queries,
                dir: dir.as_deref(),
                data: data.as_deref(),
                extract: *extract,
                embeddings,
            },
            json,
        ),
    }
}

/// `kith bench latency`: its arguments as [`latency::LatencyOptions`], run.
fn latency(which: &BenchCommand, database_url: Option<&str>, json: bool) -> Result<()> {
    // `run` dispatches only this variant here; the enum's variants have no
    // types of their own to pass instead.
    let BenchCommand::Latency {
        notes,
        single,
        queries,
        embeddings,
        dir,
        embedding_cache,
        postgres_only,
        keep,
        concurrency,
        derived_vectors,
        reuse,
        recall,
        sql_profile,
    } = which
    else {
        unreachable!("bench::latency is called with BenchCommand::Latency only")
    };
    crate::bench::latency::run(
        &crate::bench::latency::LatencyOptions {
            sizes: notes,
            single: *single,
            queries: *queries,
            embeddings,
            dir: dir.as_deref(),
            embedding_cache: embedding_cache.as_deref(),
            database_url,
            postgres_only: *postgres_only,
            keep: *keep,
            concurrency: *concurrency,
            derived_vectors: *derived_vectors,
            reuse: *reuse,
            recall_queries: *recall,
            sql_profile: *sql_profile,
        },
        json,
    )
}

/// `kith bench recall`: its arguments (retrieval paths, weights) parsed
/// into [`recall::RecallOptions`], run.
fn recall(which: &BenchCommand, database_url: Option<&str>, json: bool) -> Result<()> {
    // `run` dispatches only this variant here; the enum's variants have no
    // types of their own to pass instead.
    let BenchCommand::Recall {
        dataset,
        data,
        embeddings,
        without,
        questions,
        extract,
        weights,
        embedding_cache,
        misses,
        split,
    } = which
    else {
        unreachable!("bench::recall is called with BenchCommand::Recall only")
    };
    let mut paths = kith::RetrievePaths::default();
    crate::retrieve::turn_off(&mut paths, without)?;
    crate::bench::recall::run(
        &crate::bench::recall::RecallOptions {
            dataset,
            data,
            embeddings,
            paths,
            questions: *questions,
            extract: *extract,
            weights: kith::retrieve::fusion::PathWeights::parse(weights)
                .map_err(|e| anyhow::anyhow!("--weights {e}"))?,
            embedding_cache: embedding_cache.as_deref(),
            misses: misses.as_deref(),
            database_url,
            split: *split,
        },
        json,
    )
}

/// What `kith bench ingest` was asked.
struct IngestBench<'a> {
    notes: &'a [usize],
    single: usize,
    queries: usize,
    dir: Option<&'a Path>,
    data: Option<&'a Path>,
    extract: bool,
    embeddings: &'a [String],
}

/// `kith bench ingest`: each size with each embedding variant, side by
/// side, in the order given.
fn ingest(o: IngestBench<'_>, json: bool) -> Result<()> {
    let IngestBench {
        notes,
        single,
        queries,
        dir,
        data,
        extract,
        embeddings,
    } = o;
    let corpus = match data {
        Some(path) => Some(Corpus::load(path)?),
        None => None,
    };
    let tmp;
    let root: PathBuf = match dir {
        Some(d) => d.to_path_buf(),
        None => {
            tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
            tmp.path().to_path_buf()
        }
    };
    let variants = embeddings
        .iter()
        .map(|e| embed::Variant::parse(e))
        .collect::<Result<Vec<_>>>()?;
    let mut all = Vec::new();
    for &n in notes {
        // Variants side by side at each size, in the order given.
        for variant in &variants {
            let mut source = match &corpus {
                Some(c) => Source::Corpus(c),
                None => Source::Synthetic(Box::new(TextGen::new(0x5eed ^ n as u64))),
            };
            let figures = run_size(
                &root.join(format!("bench-{n}.kith")),
                Workload {
                    n,
                    single,
                    queries,
                    extract,
                    variant,
                },
                &mut source,
            )?;
            if !json {
                print_row(&figures);
            }
            all.push(figures);
        }
    }
    if json {
        crate::render::json(&all)?;
    }
    Ok(())
}

fn print_row(f: &IngestFigures) {
    println!(
        "notes {:>7} [{}]: {} {:>7.0}/s single ({} calls), {:>7.0}/s batched, \
         {:>7.0}/s embedded ({:.0} per CPU-s); search p50 {:.2} ms p95 {:.2} ms ({} queries, {:.1} hits avg); \
         pack {:.1} MB",
        f.notes,
        f.embeddings,
        if f.extract { "ingest()" } else { "store() " },
        f.single_per_sec,
        f.single_calls,
        f.batched_per_sec,
        f.embedded_per_sec,
        f.embedded_per_cpu_sec,
        f.search_p50_ms,
        f.search_p95_ms,
        f.search_queries,
        f.search_mean_hits,
        f.pack_bytes as f64 / 1e6
    );
}

/// CPU seconds this process has used (user + system, every thread), from
/// `/proc/self/stat`; 0 where that does not exist.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // utime and stime are fields 14 and 15, in ticks of 1/100 s (Linux's
    // USER_HZ); the command name before them is in parentheses and may
    // hold spaces, so count from the closing one.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(user), Some(system)) => (user + system) / 100.0,
        _ => 0.0,
    }
}

/// What one pack size runs.
struct Workload<'a> {
    n: usize,
    single: usize,
    queries: usize,
    extract: bool,
    variant: &'a embed::Variant,
}

fn run_size(dir: &std::path::Path, w: Workload, text: &mut Source<'_>) -> Result<IngestFigures> {
    let Workload {
        n,
        single,
        queries,
        extract,
        variant,
    } = w;
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    let memory = match variant.load()? {
        Some(embedder) => Memory::init_with_embedder(dir, embedder)?,
        None => Memory::init(dir)?,
    };
    let mut memory = crate::cmd::configure(memory)?;
    if variant.background {
        memory = memory.with_background_embedding()?;
    }
    let (whole, cpu) = (Instant::now(), cpu_seconds());
    let bar = ProgressBar::new(n as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(format!("bench {n}"));
    let single = single.min(n);
    let started = Instant::now();
    for i in 0..single {
        if extract {
            memory.ingest(text.message(i), IngestOptions::default())?;
        } else {
            memory.store(text.message(i))?;
        }
        bar.inc(1);
    }
    let single_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut i = single;
    while i < n {
        let end = (i + 1000).min(n);
        let batch: Vec<EventInput> = (i..end).map(|k| text.message(k)).collect();
        if extract {
            memory.ingest_batch(batch, IngestOptions::default())?;
        } else {
            memory.store_batch(batch)?;
        }
        bar.inc((end - i) as u64);
        i = end;
    }
    let batched_secs = started.elapsed().as_secs_f64();
    memory.wait_for_embeddings()?;
    let whole_secs = whole.elapsed().as_secs_f64();
    let whole_cpu = cpu_seconds() - cpu;
    bar.finish_and_clear();

    let mut latencies = Vec::with_capacity(queries);
    let mut hits_total = 0usize;
    for q in 0..queries {
        let query = text.query(q);
        let started = Instant::now();
        let hits = memory.search(&SearchRequest::new("bench", &query)?)?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        hits_total += hits.len();
    }
    latencies.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| percentile(&latencies, p);
    let pack_bytes = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    Ok(IngestFigures {
        notes: n,
        embeddings: variant.label.clone(),
        extract,
        single_calls: single,
        single_per_sec: if single_secs > 0.0 {
            single as f64 / single_secs
        } else {
            0.0
        },
        batched_per_sec: if batched_secs > 0.0 {
            (n - single) as f64 / batched_secs
        } else {
            0.0
        },
        embedded_per_sec: n as f64 / whole_secs.max(1e-9),
        embedded_per_cpu_sec: if whole_cpu > 0.0 {
            n as f64 / whole_cpu
        } else {
            0.0
        },
        search_queries: queries,
        search_p50_ms: pct(0.50),
        search_p95_ms: pct(0.95),
        search_mean_hits: hits_total as f64 / queries.max(1) as f64,
        pack_bytes,
    })
}

/// Deterministic conversation-like text: a Zipf-distributed vocabulary of
/// made-up words plus a few names, so BM25 sees realistic term statistics.
struct TextGen {
    rng: kith::rng::Rng,
    words: Vec<String>,
    cumulative: Vec<f64>,
}

/// How many of the most frequent synthetic words act as function words.
const FUNCTION_WORDS: usize = 100;

const NAMES: &[&str] = &[
    "Maya", "Jordan", "Sam", "Priya", "Tomas", "Lena", "Kofi", "Ines",
];
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ra", "ten", "su", "vo", "del", "an", "pri", "go", "ne", "tor", "li", "sha",
    "mo", "ber", "ti", "qua", "zen",
];

impl TextGen {
    fn new(seed: u64) -> Self {
        let mut g = TextGen {
            rng: kith::rng::Rng::new(seed | 1),
            words: Vec::new(),
            cumulative: Vec::new(),
        };
        let mut total = 0.0;
        for rank in 0..5000 {
            let syllables = 2 + g.next() as usize % 3;
            let word: String = (0..syllables)
                .map(|_| SYLLABLES[g.next() as usize % SYLLABLES.len()])
                .collect();
            g.words.push(word);
            total += 1.0 / (rank as f64 + 1.0);
            g.cumulative.push(total);
        }
        g
    }

    /// kith's one deterministic generator (xorshift64*): the same
    /// sequence for the same seed, so every run builds the same corpus.
    fn next(&mut self) -> u64 {
        self.rng.next_u64()
    }

    fn word(&mut self) -> &str {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let x = (self.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let idx = self.cumulative.partition_point(|&c| c < x);
        &self.words[idx.min(self.words.len() - 1)]
    }

    fn message(&mut self, i: usize) -> EventInput {
        let len = 8 + self.next() as usize % 25;
        let mut words: Vec<String> = (0..len).map(|_| self.word().to_string()).collect();
        let name = NAMES[self.next() as usize % NAMES.len()];
        words.insert(self.next() as usize % words.len(), name.to_string());
        let role = if i.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        EventInput {
            owner_id: Some("bench".into()),
            session_id: Some(format!("s{}", i / 40)),
            speaker: (role == "user").then(|| "Maya".to_string()),
            source_id: Some(format!("bench-{i}")),
            event_time: Some(format!(
                "2025-01-{:02}T{:02}:{:02}:00Z",
                1 + (i / 1440) % 28,
                (i / 60) % 24,
                i % 60
            )),
            ..EventInput::new(role, &format!("{}.", words.join(" ")))
        }
    }

    fn query(&mut self) -> String {
        let n = 2 + self.next() as usize % 2;
        let mut words: Vec<String> = Vec::new();
        while words.len() < n {
            let w = self.word().to_string();
            // The most frequent words stand for function words.
            if self.words[..FUNCTION_WORDS].iter().all(|f| f != &w) {
                words.push(w);
            }
        }
        words.join(" ")
    }
}

/// Where benchmark text comes from.
enum Source<'a> {
    /// Real turns and questions.
    Corpus(&'a Corpus),
    /// Generated text.
    Synthetic(Box<TextGen>),
}

impl Source<'_> {
    fn message(&mut self, i: usize) -> EventInput {
        match self {
            Source::Corpus(c) => c.message(i),
            Source::Synthetic(g) => g.message(i),
        }
    }

    fn query(&mut self, i: usize) -> String {
        match self {
            Source::Corpus(c) => c.questions[i % c.questions.len()].clone(),
            Source::Synthetic(g) => g.query(),
        }
    }
}

/// LoCoMo turns and questions (benchmark data, read by path, never shipped).
struct Corpus {
    /// (session key, speaker, text)
    turns: Vec<(String, String, String)>,
    questions: Vec<String>,
}

impl Corpus {
    fn load(path: &std::path::Path) -> Result<Corpus> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let data: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let mut turns = Vec::new();
        let mut questions = Vec::new();
        for (ci, conv) in data.as_array().into_iter().flatten().enumerate() {
            let Some(sessions) = conv["conversation"].as_object() else {
                continue;
            };
            for (key, value) in sessions {
                let Some(list) = value.as_array() else {
                    continue;
                };
                if !key.starts_with("session_") {
                    continue;
                }
                for turn in list {
                    if let (Some(speaker), Some(text)) =
                        (turn["speaker"].as_str(), turn["text"].as_str())
                    {
                        if !text.trim().is_empty() {
                            turns.push((format!("c{ci}-{key}"), speaker.into(), text.into()));
                        }
                    }
                }
            }
            for qa in conv["qa"].as_array().into_iter().flatten() {
                if let Some(q) = qa["question"].as_str() {
                    questions.push(q.to_string());
                }
            }
        }
        if turns.is_empty() || questions.is_empty() {
            anyhow::bail!(
                "{} has no LoCoMo turns or questions (expected a list of {{conversation, qa}})",
                path.display()
            );
        }
        Ok(Corpus { turns, questions })
    }

    fn message(&self, i: usize) -> EventInput {
        let (session, speaker, text) = &self.turns[i % self.turns.len()];
        let copy = i / self.turns.len();
        EventInput {
            owner_id: Some("bench".into()),
            session_id: Some(format!("{session}-{copy}")),
            speaker: Some(speaker.clone()),
            source_id: Some(format!("bench-{i}")),
            ..EventInput::new("user", text)
        }
    }
}
