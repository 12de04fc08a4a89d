//! `kith bench recall`: evidence recall on LoCoMo and LongMemEval, by the
//! protocols in `shared/bench/README.md` (restated in BENCHMARKS.md).
//!
//! - LoCoMo: one pack per conversation; every turn stored as its speaker's
//!   turn (session date as event time; an image's caption appended as
//!   `[image: …]`); questions of categories 1–4; evidence ids normalised
//!   (`D:?(\d+):(\d+)` → `D{a}:{b}`, ids naming no turn dropped, questions
//!   left without evidence skipped); recall@k = share of a question's
//!   evidence turns in the top k, at k = 5, 10, 25, 50.
//! - LongMemEval: one owner per question in one pack; user turns only, id
//!   `<session>_<turn index>`; gold turns are user turns with `has_answer`,
//!   gold sessions `answer_session_ids`; abstention questions and questions
//!   with no gold user turn skipped; each question is asked at its
//!   `question_date` (the request's `asked_at`: its relative dates, "a
//!   month ago", are read against it). recall_any@k, recall_all@k and nDCG@k
//!   (binary gains) at k = 5, 10, at turn and session level (a session ranks
//!   at its best turn).
//!
//! Retrieval runs exactly as `retrieve` does (no receipt), taking the
//! results' source events in rank order. Embeddings of identical texts are
//! computed once (LongMemEval haystacks share sessions).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use kith::embedding::EmbeddingSpec;
use kith::{Embedder, EventInput, IngestOptions, Memory, RetrievePaths, RetrieveRequest};
use serde::Serialize;
use serde_json::Value;

use crate::bench::locomo::{evidence_ids, Conversation, LocomoFile};
use crate::bench::split::{locomo_half, longmemeval_half, runs, Split};
use crate::retrieve::bar;
use kith_core::percentile::percentile;

/// How to run.
pub struct RecallOptions<'a> {
    /// `locomo` or `longmemeval`.
    pub dataset: &'a str,
    /// The data file.
    pub data: &'a Path,
    /// The embedding model (`none` for lexical and graph only).
    pub embeddings: &'a str,
    /// Paths turned off.
    pub paths: RetrievePaths,
    /// Only the first N questions (0: all).
    pub questions: usize,
    /// Extract entities and claims (heuristic) while storing.
    pub extract: bool,
    /// Fusion weights.
    pub weights: kith::retrieve::fusion::PathWeights,
    /// A file keeping embeddings between runs.
    pub embedding_cache: Option<&'a Path>,
    /// Append questions with evidence outside the top 10 (LoCoMo, each
    /// gold turn with its rank) or the top 5 (LongMemEval) here.
    pub misses: Option<&'a Path>,
    /// Run on PostgreSQL: each haystack in a fresh database made (and
    /// dropped) through this URL, whose role needs CREATEDB.
    pub database_url: Option<&'a str>,
    /// Only one half of the file (`bench_split`); `None`: all of it.
    pub split: Option<Split>,
}

/// Embeds each distinct text once (and, once `bypass` is set, passes every
/// call straight to the model, so timed queries pay for their embedding).
pub struct CachedEmbedder {
    pub inner: Arc<dyn Embedder>,
    pub cache: Mutex<HashMap<String, Vec<f32>>>,
    pub bypass: std::sync::atomic::AtomicBool,
    /// Texts the model embedded (cache misses and bypassed calls).
    pub embedded: std::sync::atomic::AtomicUsize,
}

impl Embedder for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, kith::embed::EmbedError> {
        if self.bypass.load(std::sync::atomic::Ordering::Relaxed) {
            return self.inner.embed(texts);
        }
        let missing: Vec<&str> = {
            let cache = self.cache.lock().expect("cache lock");
            let mut seen = HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !cache.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        if !missing.is_empty() {
            let vectors = self.inner.embed(&missing)?;
            self.embedded
                .fetch_add(missing.len(), std::sync::atomic::Ordering::Relaxed);
            let mut cache = self.cache.lock().expect("cache lock");
            for (t, v) in missing.iter().zip(vectors) {
                cache.insert((*t).to_string(), v);
            }
        }
        let cache = self.cache.lock().expect("cache lock");
        Ok(texts.iter().map(|t| cache[*t].clone()).collect())
    }
}

impl CachedEmbedder {
    /// Wraps the model `spec` names (`None` for `none`), filled from
    /// `cache_file` when given.
    pub fn open(spec: &str, cache_file: Option<&Path>) -> Result<Option<Arc<CachedEmbedder>>> {
        let Some(inner) = EmbeddingSpec::parse(spec)?.load()? else {
            return Ok(None);
        };
        let cached = Arc::new(CachedEmbedder {
            inner,
            cache: Mutex::new(HashMap::new()),
            bypass: Default::default(),
            embedded: Default::default(),
        });
        if let Some(path) = cache_file {
            cached.load(path)?;
        }
        Ok(Some(cached))
    }

    /// Reads a cache file: per entry a u32 text length, the UTF-8 text, then
    /// `dimension` little-endian f32s. The file starts with the model id
    /// line; another model's file is ignored.
    pub fn load(&self, path: &Path) -> Result<()> {
        let Ok(bytes) = std::fs::read(path) else {
            return Ok(());
        };
        let header = format!("{}\n", self.model_id());
        let Some(mut rest) = bytes.strip_prefix(header.as_bytes()) else {
            return Ok(());
        };
        let dim = self.dimension();
        let mut cache = self.cache.lock().expect("cache lock");
        while rest.len() >= 4 {
            let n = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            if rest.len() < 4 + n + 4 * dim {
                break;
            }
            let text = String::from_utf8_lossy(&rest[4..4 + n]).into_owned();
            let v: Vec<f32> = rest[4 + n..4 + n + 4 * dim]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            cache.insert(text, v);
            rest = &rest[4 + n + 4 * dim..];
        }
        Ok(())
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let cache = self.cache.lock().expect("cache lock");
        let mut out = format!("{}\n", self.model_id()).into_bytes();
        for (text, v) in cache.iter() {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// The memory of one haystack: a pack, or with `--database-url` a fresh
/// PostgreSQL database that is dropped with it.
struct Haystack {
    memory: Option<Memory>,
    database: Option<(String, String)>,
}

impl Haystack {
    /// After loading: on PostgreSQL, the statistics autovacuum would soon
    /// gather (lexical search weighs words by them).
    fn settle(&self) -> Result<()> {
        if let Some((url, name)) = &self.database {
            kith::database::analyze_database(url, name)?;
        }
        Ok(())
    }
}

impl std::ops::Deref for Haystack {
    type Target = Memory;

    fn deref(&self) -> &Memory {
        self.memory.as_ref().expect("present until dropped")
    }
}

impl Drop for Haystack {
    fn drop(&mut self) {
        // Close the memory's connections before the database goes.
        self.memory.take();
        if let Some((url, name)) = &self.database {
            if let Err(e) = kith::database::drop_database(url, name) {
                eprintln!("warning: could not drop database {name}: {e}");
            }
        }
    }
}

/// A memory for one haystack, in `dir` or (with a URL) in the database
/// `kith_bench_recall_{name}` made through it.
fn new_memory(
    dir: &Path,
    name: &str,
    embedder: &Option<Arc<dyn Embedder>>,
    database_url: Option<&str>,
) -> Result<Haystack> {
    let (memory, database) = match database_url {
        Some(url) => {
            let db_name = format!("kith_bench_recall_{name}");
            let db = kith::database::create_database(url, &db_name, true)?;
            let memory = Memory::init_database(&db, embedder.clone())?;
            (memory, Some((url.to_string(), db_name)))
        }
        None => {
            let memory = match embedder {
                Some(e) => Memory::init_with_embedder(dir, e.clone())?,
                None => Memory::init(dir)?,
            };
            (memory, None)
        }
    };
    Ok(Haystack {
        memory: Some(memory),
        database,
    })
}

fn store_all(memory: &Memory, inputs: Vec<EventInput>, extract: bool) -> Result<()> {
    for chunk in inputs.chunks(500) {
        if extract {
            memory.ingest_batch(chunk.to_vec(), IngestOptions::default())?;
        } else {
            memory.store_batch(chunk.to_vec())?;
        }
    }
    Ok(())
}

/// Source ids of the results, in rank order.
fn ranked_sources(
    memory: &Memory,
    owner: &str,
    query: &str,
    asked_at: Option<kith_core::Timestamp>,
    o: &RecallOptions<'_>,
    k: usize,
) -> Result<Vec<String>> {
    let mut req = RetrieveRequest::new(owner, query)?;
    req.asked_at = asked_at;
    req.weights = o.weights;
    let paths = o.paths;
    req.limit = k;
    req.record = false;
    req.paths = paths;
    req.token_budget = 64;
    let r = memory.retrieve(&req)?;
    let owner_id = kith::OwnerId::new(owner)?;
    let mut out = Vec::new();
    for item in &r.results {
        let e = memory.event(&owner_id, item.provenance.event_id)?;
        out.push(e.event.source_id.as_str().to_string());
    }
    Ok(out)
}

#[derive(Default, Serialize, Clone)]
struct Sums {
    questions: usize,
    recall: [f64; 4],
}

impl Sums {
    /// Counts one question: the share of `gold` in each top k of `ranked`.
    fn add(&mut self, ranked: &[String], gold: &HashSet<String>) {
        self.questions += 1;
        for (i, k) in LOCOMO_K.iter().enumerate() {
            let found = ranked
                .iter()
                .take(*k)
                .filter(|id| gold.contains(*id))
                .count();
            self.recall[i] += found as f64 / gold.len() as f64;
        }
    }
}

/// Whether `question` names one of the conversation's speakers (first name,
/// whole word) who said none of its evidence turns: a speaker trap.
fn names_other_speaker(question: &str, conv: &Conversation, gold: &HashSet<String>) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .collect();
    conv.speakers.iter().any(|speaker| {
        let first = speaker
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_lowercase();
        !first.is_empty()
            && words.contains(&first)
            && !conv
                .turns
                .iter()
                .any(|t| gold.contains(&t.dia_id) && &t.speaker == speaker)
    })
}

/// ` (tune half)` and the like, for headings.
fn half_label(split: Option<Split>) -> String {
    split.map(|s| format!(" ({s} half)")).unwrap_or_default()
}

const LOCOMO_K: [usize; 4] = [5, 10, 25, 50];

/// Runs the benchmark and prints its figures.
pub fn run(o: &RecallOptions<'_>, json: bool) -> Result<()> {
    let cached = CachedEmbedder::open(o.embeddings, o.embedding_cache)?;
    let embedder = cached.clone().map(|c| c as Arc<dyn Embedder>);
    let result = match o.dataset {
        "locomo" => locomo(o, embedder, json),
        "longmemeval" => longmemeval(o, embedder, json),
        other => bail!("--dataset {other:?}: expected locomo or longmemeval"),
    };
    if let (Some(c), Some(path)) = (&cached, o.embedding_cache) {
        c.save(path)?;
    }
    result
}

fn locomo(o: &RecallOptions<'_>, embedder: Option<Arc<dyn Embedder>>, json: bool) -> Result<()> {
    let file = LocomoFile::load(o.data)?;
    let tmp = tempfile::tempdir()?;
    let started = Instant::now();
    let mut per_cat: HashMap<u64, Sums> = HashMap::new();
    let mut asked = 0usize;
    let chosen: Vec<(usize, &Conversation)> = file
        .conversations
        .iter()
        .enumerate()
        .filter(|(_, c)| runs(o.split, locomo_half(&c.sample_id)))
        .collect();
    if chosen.is_empty() {
        bail!(
            "no conversation of {} is in the {} half",
            o.data.display(),
            o.split.map(|s| s.to_string()).unwrap_or_default()
        );
    }
    let total_q: usize = chosen
        .iter()
        .map(|(_, c)| c.raw["qa"].as_array().map(|q| q.len()).unwrap_or(0))
        .sum();
    let progress = bar(total_q as u64, "questions");
    let mut turns_stored = 0usize;
    let mut retrieve_ms = Vec::new();
    let mut traps = Sums::default();
    let mut wrong_speaker = Sums::default();
    for (ci, conv) in chosen {
        let owner = format!("conv{ci}");
        let inputs = conv.inputs(&owner);
        let turn_ids: HashSet<String> = conv.turns.iter().map(|t| t.dia_id.clone()).collect();
        let texts: HashMap<String, String> = conv
            .turns
            .iter()
            .map(|t| (t.dia_id.clone(), format!("{}: {}", t.speaker, t.text)))
            .collect();
        turns_stored += inputs.len();
        let memory = new_memory(&tmp.path().join(&owner), &owner, &embedder, o.database_url)?;
        store_all(&memory, inputs, o.extract)?;
        memory.settle()?;
        for qa in conv.raw["qa"].as_array().into_iter().flatten() {
            progress.inc(1);
            let cat = qa["category"].as_u64().unwrap_or(0);
            if !(1..=5).contains(&cat) || (o.questions > 0 && asked >= o.questions) {
                continue;
            }
            let gold: HashSet<String> = evidence_ids(&qa["evidence"])
                .into_iter()
                .filter(|id| turn_ids.contains(id))
                .collect();
            if gold.is_empty() {
                continue;
            }
            let q = qa["question"].as_str().unwrap_or("");
            let t = Instant::now();
            let ranked = ranked_sources(&memory, &owner, q, None, o, 50)?;
            retrieve_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            asked += 1;
            if let Some(out) = o.misses {
                // Any gold turn outside the ten: partial misses teach as
                // much as whole ones (a list question with one of five found).
                let rank_of = |g: &String| ranked.iter().position(|id| id == g);
                if gold.iter().any(|g| rank_of(g).is_none_or(|r| r >= 10)) {
                    let text_of = |id: &str| texts.get(id).cloned().unwrap_or_default();
                    let mut line = format!("Q [{cat}] {q}\n");
                    for g in &gold {
                        let rank = rank_of(g).map_or("-".to_string(), |r| (r + 1).to_string());
                        line.push_str(&format!("   gold {g} (rank {rank}): {}\n", text_of(g)));
                    }
                    for id in ranked.iter().take(3) {
                        line.push_str(&format!("   got  {id}: {}\n", text_of(id)));
                    }
                    let ten: Vec<&str> = ranked.iter().take(10).map(String::as_str).collect();
                    line.push_str(&format!("   top10 {}\n", ten.join(" ")));
                    append_miss(out, &line)?;
                }
            }
            // Category 5 (adversarial: the question's premise is false,
            // often by naming the wrong speaker) is kept apart from 1–4; its
            // evidence is the turn that shows what really happened.
            let mut sums: Vec<&mut Sums> = Vec::new();
            if cat == 5 {
                if names_other_speaker(q, conv, &gold) {
                    sums.push(&mut wrong_speaker);
                }
                sums.push(&mut traps);
            } else {
                sums.push(per_cat.entry(cat).or_default());
            }
            for s in sums {
                s.add(&ranked, &gold);
            }
        }
    }
    progress.finish_and_clear();
    let rows = locomo_rows(per_cat, traps, wrong_speaker);
    report_locomo(o, &rows, turns_stored, retrieve_ms, started, json)
}

/// LoCoMo's rows: categories 1–4, their total, then the adversarial ones.
fn locomo_rows(
    per_cat: HashMap<u64, Sums>,
    traps: Sums,
    wrong_speaker: Sums,
) -> Vec<(String, Sums)> {
    let mut all = Sums::default();
    let mut rows = Vec::new();
    let names = ["", "multi-hop", "temporal", "open-domain", "single-hop"];
    let mut cats: Vec<_> = per_cat.into_iter().collect();
    cats.sort_by_key(|(c, _)| *c);
    for (cat, s) in &cats {
        all.questions += s.questions;
        for i in 0..4 {
            all.recall[i] += s.recall[i];
        }
        rows.push((format!("{cat} {}", names[*cat as usize]), s.clone()));
    }
    rows.push(("all (1-4)".into(), all));
    rows.push(("5 adversarial".into(), traps));
    rows.push(("5 other speaker".into(), wrong_speaker));
    rows
}

/// Prints LoCoMo's figures (as JSON with `json`).
fn report_locomo(
    o: &RecallOptions<'_>,
    rows: &[(String, Sums)],
    turns_stored: usize,
    mut retrieve_ms: Vec<f64>,
    started: Instant,
    json: bool,
) -> Result<()> {
    retrieve_ms.sort_by(f64::total_cmp);
    let pct = |p: f64| percentile(&retrieve_ms, p);
    if json {
        let out: Vec<Value> = rows
            .iter()
            .map(|(name, s)| {
                serde_json::json!({
                    "category": name, "questions": s.questions,
                    "recall@5": s.recall[0] / s.questions.max(1) as f64,
                    "recall@10": s.recall[1] / s.questions.max(1) as f64,
                    "recall@25": s.recall[2] / s.questions.max(1) as f64,
                    "recall@50": s.recall[3] / s.questions.max(1) as f64,
                })
            })
            .collect();
        return crate::render::json(&serde_json::json!({
            "dataset": "locomo", "split": o.split.map(|s| s.to_string()),
            "turns": turns_stored, "rows": out,
            "retrieve_p50_ms": pct(0.5), "retrieve_p95_ms": pct(0.95),
            "seconds": started.elapsed().as_secs_f64(),
        }));
    }
    println!(
        "LoCoMo turn-level evidence recall{} ({} turns, {:.0} s)",
        half_label(o.split),
        turns_stored,
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<16} {:>5} {:>8} {:>8} {:>8} {:>8}",
        "category", "n", "R@5", "R@10", "R@25", "R@50"
    );
    for (name, s) in rows {
        let n = s.questions.max(1) as f64;
        println!(
            "{:<16} {:>5} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            name,
            s.questions,
            s.recall[0] / n,
            s.recall[1] / n,
            s.recall[2] / n,
            s.recall[3] / n
        );
    }
    println!("retrieve p50 {:.1} ms, p95 {:.1} ms", pct(0.5), pct(0.95));
    Ok(())
}

/// Appends `line` to the misses file `out`.
fn append_miss(out: &Path, line: &str) -> Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .with_context(|| format!("cannot write {}", out.display()))
}

/// The first 200 characters of a text, on one line.
fn clip(text: Option<&String>) -> String {
    let t: String = text
        .map(|t| t.chars().take(200).collect())
        .unwrap_or_default();
    t.replace('\n', " ")
}

/// LongMemEval's "2023/05/20 (Sat) 02:21" as RFC 3339 (UTC).
fn lme_time(text: &str) -> Option<String> {
    let mut parts = text.split_whitespace();
    let date = parts.next()?;
    let _day = parts.next();
    let clock = parts.next().unwrap_or("00:00");
    let d: Vec<&str> = date.split('/').collect();
    let [y, m, dd] = d.as_slice() else {
        return None;
    };
    Some(format!("{y}-{m}-{dd}T{clock}:00Z"))
}

#[derive(Default, Clone)]
struct LmeSums {
    questions: usize,
    // [turn|session][k=5|10][any, all, ndcg]
    v: [[[f64; 3]; 2]; 2],
}

impl LmeSums {
    /// Counts one question: `ranked` turns (`session_turn` ids) against
    /// the gold turns, and the sessions they rank against the gold ones.
    fn add(
        &mut self,
        ranked: &[String],
        gold_turns: &HashSet<String>,
        gold_sessions: &HashSet<String>,
    ) {
        let session_of = |id: &str| {
            id.rsplit_once('_')
                .map(|(s, _)| s.to_string())
                .unwrap_or_default()
        };
        let mut sessions_ranked: Vec<String> = Vec::new();
        for id in ranked {
            let s = session_of(id);
            if !sessions_ranked.contains(&s) {
                sessions_ranked.push(s);
            }
        }
        self.questions += 1;
        for (level, (list, gold)) in [
            (ranked.to_vec(), gold_turns),
            (sessions_ranked, gold_sessions),
        ]
        .into_iter()
        .enumerate()
        {
            for (ki, k) in [5usize, 10].iter().enumerate() {
                let top: Vec<bool> = list.iter().take(*k).map(|id| gold.contains(id)).collect();
                let found = top.iter().filter(|g| **g).count();
                self.v[level][ki][0] += f64::from(u8::from(found > 0));
                self.v[level][ki][1] += f64::from(u8::from(found == gold.len()));
                self.v[level][ki][2] += ndcg(&top, gold.len(), *k);
            }
        }
    }
}

fn ndcg(ranked: &[bool], gold: usize, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, g)| **g)
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..gold.min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    if ideal == 0.0 {
        0.0
    } else {
        dcg / ideal
    }
}

fn longmemeval(
    o: &RecallOptions<'_>,
    embedder: Option<Arc<dyn Embedder>>,
    json: bool,
) -> Result<()> {
    let data = load_longmemeval(o.data)?;
    let questions = data
        .as_array()
        .context("LongMemEval data is a list of questions")?;
    let tmp = tempfile::tempdir()?;
    let memory = new_memory(&tmp.path().join("lme"), "lme", &embedder, o.database_url)?;
    let started = Instant::now();
    let progress = bar(questions.len() as u64, "questions");
    let mut per_type: HashMap<String, LmeSums> = HashMap::new();
    let mut asked = 0usize;
    let mut retrieve_ms = Vec::new();
    for q in questions {
        progress.inc(1);
        let qid = q["question_id"].as_str().unwrap_or("");
        if qid.ends_with("_abs")
            || !runs(o.split, longmemeval_half(qid))
            || (o.questions > 0 && asked >= o.questions)
        {
            continue;
        }
        let owner = format!(
            "q{asked}-{}",
            qid.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .take(40)
                .collect::<String>()
        );
        let haystack = lme_haystack(q, &owner, o.misses.is_some())?;
        if haystack.gold_turns.is_empty() {
            continue;
        }
        let gold_sessions: HashSet<String> = q["answer_session_ids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect();
        store_all(&memory, haystack.inputs, o.extract)?;
        memory.settle()?;
        let t = Instant::now();
        // Asked when the dataset says it was ("a month ago" is a month
        // before that), not as of the haystack's newest session.
        let asked_at = q["question_date"]
            .as_str()
            .and_then(lme_time)
            .and_then(|t| kith_core::Timestamp::parse("question_date", &t).ok());
        let question = q["question"].as_str().unwrap_or("");
        let ranked = ranked_sources(&memory, &owner, question, asked_at, o, 50)?;
        retrieve_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        asked += 1;
        if let Some(out) = o.misses {
            if let Some(line) = lme_miss(q, &haystack.gold_turns, &ranked, &haystack.texts) {
                append_miss(out, &line)?;
            }
        }
        let s = per_type
            .entry(q["question_type"].as_str().unwrap_or("?").to_string())
            .or_default();
        s.add(&ranked, &haystack.gold_turns, &gold_sessions);
    }
    progress.finish_and_clear();
    report_longmemeval(o, per_type, retrieve_ms, started, json)
}

/// LongMemEval's data: JSON, gzipped when the file ends in `.gz`.
fn load_longmemeval(path: &Path) -> Result<Value> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        serde_json::from_reader(std::io::BufReader::new(flate2::read::GzDecoder::new(file)))
    } else {
        serde_json::from_reader(std::io::BufReader::new(file))
    }
    .with_context(|| format!("{} is not LongMemEval JSON", path.display()))
}

/// One LongMemEval question's haystack, as `owner`'s messages.
struct LmeHaystack {
    /// The user turns to store.
    inputs: Vec<EventInput>,
    /// The turns that hold the answer (`session_turn` ids).
    gold_turns: HashSet<String>,
    /// Each stored turn's text, when misses are written.
    texts: HashMap<String, String>,
}

/// The user turns of question `q`'s haystack sessions, each with its
/// session and date; `keep_texts` keeps their texts for the misses file.
fn lme_haystack(q: &Value, owner: &str, keep_texts: bool) -> Result<LmeHaystack> {
    let sids = q["haystack_session_ids"]
        .as_array()
        .context("haystack_session_ids")?;
    let dates = q["haystack_dates"].as_array().context("haystack_dates")?;
    let sessions = q["haystack_sessions"]
        .as_array()
        .context("haystack_sessions")?;
    let mut haystack = LmeHaystack {
        inputs: Vec::new(),
        gold_turns: HashSet::new(),
        texts: HashMap::new(),
    };
    for ((sid, date), turns) in sids.iter().zip(dates).zip(sessions) {
        let sid = sid.as_str().unwrap_or("");
        let when = date.as_str().and_then(lme_time);
        for (ti, t) in turns.as_array().into_iter().flatten().enumerate() {
            if t["role"].as_str() != Some("user") {
                continue;
            }
            let id = format!("{sid}_{ti}");
            if t["has_answer"].as_bool() == Some(true) {
                haystack.gold_turns.insert(id.clone());
            }
            let content = t["content"].as_str().unwrap_or("");
            if content.trim().is_empty() {
                continue;
            }
            let content: String = content.chars().take(60_000).collect();
            if keep_texts {
                haystack.texts.insert(id.clone(), content.clone());
            }
            haystack.inputs.push(EventInput {
                owner_id: Some(owner.to_string()),
                session_id: Some(sid.to_string()),
                event_time: when.clone(),
                source_id: Some(id),
                ..EventInput::new("user", &content)
            });
        }
    }
    Ok(haystack)
}

/// The misses-file entry of question `q`: `None` when every gold turn is
/// in the top 5.
fn lme_miss(
    q: &Value,
    gold_turns: &HashSet<String>,
    ranked: &[String],
    texts: &HashMap<String, String>,
) -> Option<String> {
    let top: Vec<&String> = ranked.iter().take(5).collect();
    if gold_turns.iter().all(|g| top.contains(&g)) {
        return None;
    }
    let mut line = format!(
        "Q [{}] {}\n",
        q["question_type"].as_str().unwrap_or("?"),
        q["question"].as_str().unwrap_or("")
    );
    for g in gold_turns {
        let mark = if top.contains(&g) { "+" } else { "-" };
        line.push_str(&format!("   gold{mark} {g}: {}\n", clip(texts.get(g))));
    }
    for id in &top {
        line.push_str(&format!("   got   {id}: {}\n", clip(texts.get(*id))));
    }
    Some(line)
}

/// Prints LongMemEval's figures per question type and in all (as JSON
/// with `json`).
fn report_longmemeval(
    o: &RecallOptions<'_>,
    per_type: HashMap<String, LmeSums>,
    mut retrieve_ms: Vec<f64>,
    started: Instant,
    json: bool,
) -> Result<()> {
    let mut rows: Vec<(String, LmeSums)> = per_type.into_iter().collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let mut all = LmeSums::default();
    for (_, s) in &rows {
        all.questions += s.questions;
        for l in 0..2 {
            for k in 0..2 {
                for m in 0..3 {
                    all.v[l][k][m] += s.v[l][k][m];
                }
            }
        }
    }
    rows.push(("all".into(), all));
    retrieve_ms.sort_by(f64::total_cmp);
    let pct = |p: f64| percentile(&retrieve_ms, p);
    if json {
        let out: Vec<Value> = rows.iter().map(|(name, s)| {
            let n = s.questions.max(1) as f64;
            let f = |l: usize, k: usize, m: usize| s.v[l][k][m] / n;
            serde_json::json!({
                "question_type": name, "questions": s.questions,
                "turn": {"recall_any@5": f(0,0,0), "recall_all@5": f(0,0,1), "ndcg@5": f(0,0,2),
                         "recall_any@10": f(0,1,0), "recall_all@10": f(0,1,1), "ndcg@10": f(0,1,2)},
                "session": {"recall_any@5": f(1,0,0), "recall_all@5": f(1,0,1), "ndcg@5": f(1,0,2),
                            "recall_any@10": f(1,1,0), "recall_all@10": f(1,1,1), "ndcg@10": f(1,1,2)},
            })
        }).collect();
        return crate::render::json(&serde_json::json!({
            "dataset": "longmemeval", "split": o.split.map(|s| s.to_string()), "rows": out,
            "retrieve_p50_ms": pct(0.5), "retrieve_p95_ms": pct(0.95),
            "seconds": started.elapsed().as_secs_f64(),
        }));
    }
    println!(
        "LongMemEval_S retrieval{} ({:.0} s)",
        half_label(o.split),
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<26} {:>4} | turn: {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} | session: {:>6} {:>6} {:>6} {:>6}",
        "question type", "n", "any@5", "all@5", "ndcg5", "any@10", "all@10", "ndcg10", "any@5", "all@5", "all@10", "ndcg10"
    );
    for (name, s) in &rows {
        let n = s.questions.max(1) as f64;
        let f = |l: usize, k: usize, m: usize| s.v[l][k][m] / n;
        println!(
            "{:<26} {:>4} |       {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} |          {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            name, s.questions, f(0,0,0), f(0,0,1), f(0,0,2), f(0,1,0), f(0,1,1), f(0,1,2), f(1,0,0), f(1,0,1), f(1,1,1), f(1,1,2)
        );
    }
    println!("retrieve p50 {:.1} ms, p95 {:.1} ms", pct(0.5), pct(0.95));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longmemeval_times_parse() {
        assert_eq!(
            lme_time("2023/05/20 (Sat) 02:21").as_deref(),
            Some("2023-05-20T02:21:00Z")
        );
    }

    #[test]
    fn ndcg_of_perfect_and_missing_rankings() {
        assert!((ndcg(&[true, true, false], 2, 5) - 1.0).abs() < 1e-12);
        assert_eq!(ndcg(&[false, false], 1, 5), 0.0);
        assert!(ndcg(&[false, true], 1, 5) < 1.0);
    }
}
