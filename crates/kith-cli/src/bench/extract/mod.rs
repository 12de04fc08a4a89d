//! `kith bench extract`: what extraction gives the identity rules, measured
//! against LoCoMo's `observation` annotations (issue 14).
//!
//! Each conversation is imported exactly as `kith bench recall` imports it
//! ([`crate::bench::locomo`]: every turn its speaker's `user` turn, session dates
//! as event times) into a fresh pack, ingested with the configured provider
//! (the heuristic, or the OpenAI-compatible endpoint `KITH_LLM_BASE_URL`
//! names, as every other command configures it), and its active entities
//! and claims are scored by [`score`]. Ingest time (admission, extraction,
//! grounding, planning, commit) gives messages per second; reading the
//! memory back and scoring are not timed.

pub mod score;

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use kith::{EventQuery, IngestOptions, Memory, NodeQuery, NodeType, OwnerId, WorkStatus};
use serde::Serialize;
use serde_json::Value;

use crate::bench::locomo::{Conversation, LocomoError, LocomoFile, Observation};
use crate::retrieve::bar;
use score::{Counts, Figures};

/// Messages per ingest call: big enough to amortise admission, small
/// enough for the progress bar to move.
const BATCH: usize = 100;

/// How to run.
pub struct ExtractOptions<'a> {
    /// The LoCoMo file.
    pub data: &'a Path,
    /// Only these conversations (`sample_id`s); empty: all.
    pub conversations: &'a [String],
    /// The identity options (`KITH_ENABLE_*` and `--identity`).
    pub identity: kith::identity::IdentityOptions,
    /// The global `--database-url`, which this benchmark does not use.
    pub database_url: Option<&'a str>,
    /// Where to write every claim and observation with its verdict.
    pub detail: Option<&'a Path>,
}

/// One conversation's (or a pool's) figures.
#[derive(Debug, Serialize)]
struct Report {
    conversation: String,
    turns: usize,
    /// Messages whose extraction did not complete.
    failed: usize,
    /// Seconds spent ingesting.
    seconds: f64,
    messages_per_second: f64,
    #[serde(flatten)]
    figures: Figures,
    counts: Counts,
    /// Per speaker, the entities named exactly like them (per conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    speaker_nodes: Option<std::collections::BTreeMap<String, usize>>,
    /// The entity surfaces counted as junk (per conversation).
    #[serde(skip_serializing_if = "Option::is_none")]
    junk_entities: Option<Vec<String>>,
    /// The first extraction error, when any failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    first_error: Option<String>,
}

/// Runs the benchmark and prints its figures (`json`: one JSON object).
pub fn run(o: ExtractOptions<'_>, json: bool) -> Result<()> {
    if o.database_url.is_some() {
        bail!(
            "kith bench extract builds a temporary SQLite pack per conversation; \
             --database-url is not supported here (unset it or KITH_DATABASE_URL)"
        );
    }
    let file = LocomoFile::load(o.data)?;
    let chosen = choose(&file, o.conversations)?;
    // Read every annotation before ingesting anything, so a malformed file
    // fails at once rather than after minutes of extraction.
    let mut work = Vec::new();
    for conv in chosen {
        let observations = conv.observations().map_err(|what| LocomoError::Shape {
            path: file.path.clone(),
            what,
        })?;
        work.push((conv, observations));
    }

    let tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
    let total_turns: usize = work.iter().map(|(c, _)| c.turns.len()).sum();
    let progress = bar(total_turns as u64, "messages");
    let mut reports = Vec::new();
    let mut provider = String::new();
    let mut detail = match o.detail {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => None,
    };
    for (ci, (conv, observations)) in work.iter().enumerate() {
        let memory = Memory::init(&tmp.path().join(format!("conv{ci}.kith")))?;
        let memory = crate::cmd::configure(memory)?.with_identity(o.identity);
        provider = format!(
            "{} ({})",
            memory.provider().name(),
            memory.provider().model()
        );
        let owner = format!("conv{ci}");
        let (report, scored) = conversation(&memory, &owner, conv, observations, &progress)?;
        if let Some(out) = detail.as_mut() {
            write_detail(out, conv, &scored).context("cannot write the --detail file")?;
        }
        progress.suspend(|| {
            eprintln!(
                "{}: {} messages in {:.1} s ({:.0}/s){}",
                report.conversation,
                report.turns,
                report.seconds,
                report.messages_per_second,
                if report.failed > 0 {
                    format!(", {} failed", report.failed)
                } else {
                    String::new()
                }
            )
        });
        reports.push(report);
    }
    progress.finish_and_clear();
    if let Some(mut out) = detail {
        std::io::Write::flush(&mut out).context("cannot write the --detail file")?;
    }
    let overall = pool(&reports);
    if json {
        return crate::render::json(&serde_json::json!({
            "data": o.data.display().to_string(),
            "provider": provider,
            "conversations": reports,
            "overall": overall,
        }));
    }
    print_table(&provider, &reports, &overall);
    Ok(())
}

/// The conversations `ids` names, in file order (all when empty).
fn choose<'f>(file: &'f LocomoFile, ids: &[String]) -> Result<Vec<&'f Conversation>> {
    if ids.is_empty() {
        return Ok(file.conversations.iter().collect());
    }
    for id in ids {
        if !file.conversations.iter().any(|c| &c.sample_id == id) {
            let known: Vec<&str> = file
                .conversations
                .iter()
                .map(|c| c.sample_id.as_str())
                .collect();
            bail!(
                "--conversations: {} has no conversation {id:?} (it has {})",
                file.path.display(),
                known.join(", ")
            );
        }
    }
    Ok(file
        .conversations
        .iter()
        .filter(|c| ids.contains(&c.sample_id))
        .collect())
}

/// Ingests one conversation and scores what its memory holds.
fn conversation(
    memory: &Memory,
    owner: &str,
    conv: &Conversation,
    observations: &[Observation],
    progress: &indicatif::ProgressBar,
) -> Result<(Report, Scored)> {
    let inputs = conv.inputs(owner);
    let turns = inputs.len();
    let mut failed = 0;
    let mut first_error = None;
    let started = Instant::now();
    for chunk in inputs.chunks(BATCH) {
        for receipt in memory.ingest_batch(chunk.to_vec(), IngestOptions::default())? {
            if receipt.status != WorkStatus::Complete {
                failed += 1;
                if first_error.is_none() {
                    first_error = Some(
                        receipt
                            .error
                            .unwrap_or_else(|| receipt.status.as_str().to_string()),
                    );
                }
            }
        }
        progress.inc(chunk.len() as u64);
    }
    let seconds = started.elapsed().as_secs_f64();

    let input = read_back(memory, owner, conv, observations)?;
    let scored = score::score(&input);
    let report = Report {
        conversation: conv.sample_id.clone(),
        turns,
        failed,
        seconds,
        messages_per_second: turns as f64 / seconds.max(1e-9),
        figures: scored.counts.figures(),
        counts: scored.counts.clone(),
        speaker_nodes: Some(scored.speaker_nodes.clone()),
        junk_entities: Some(scored.junk.clone()),
        first_error,
    };
    Ok((
        report,
        Scored {
            input,
            score: scored,
        },
    ))
}

/// What one conversation's memory held and how it scored.
struct Scored {
    input: score::Conversation,
    score: score::Score,
}

/// One JSON line per claim and per observation, with its verdict and the
/// text of its turns.
fn write_detail(out: &mut impl std::io::Write, conv: &Conversation, s: &Scored) -> Result<()> {
    let text_of = |ids: &[String]| -> Vec<String> {
        ids.iter()
            .filter_map(|id| s.input.turns.iter().find(|t| &t.id == id))
            .map(|t| format!("{} ({}): {}", t.id, t.speaker, t.text))
            .collect()
    };
    for (claim, matched) in s.input.claims.iter().zip(&s.score.claim_matches) {
        let bound: Vec<&str> = claim
            .bound_to
            .iter()
            .filter_map(|i| s.input.entities.get(*i))
            .map(|e| e.name.as_str())
            .collect();
        let line = serde_json::json!({
            "conversation": conv.sample_id,
            "kind": "claim",
            "matched": matched,
            "bound_to": bound,
            "predicate": claim.predicate,
            "object": claim.object,
            "turns": text_of(&claim.turns),
        });
        writeln!(out, "{line}")?;
    }
    for (o, (covered, matched)) in s.input.observations.iter().zip(&s.score.observation_hits) {
        let line = serde_json::json!({
            "conversation": conv.sample_id,
            "kind": "observation",
            "covered": covered,
            "matched": matched,
            "speaker": o.speaker,
            "text": o.text,
            "turns": text_of(&o.turns),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The scoring input: the conversation's turns and observations, and the
/// memory's active entities and claims with their bindings.
fn read_back(
    memory: &Memory,
    owner: &str,
    conv: &Conversation,
    observations: &[Observation],
) -> Result<score::Conversation> {
    let owner_id = OwnerId::new(owner)?;
    let dia_of: HashMap<uuid::Uuid, String> = memory
        .events(&EventQuery {
            owner: Some(owner_id.clone()),
            ..EventQuery::default()
        })?
        .into_iter()
        .map(|e| (e.event.id, e.event.source_id.as_str().to_string()))
        .collect();

    let entity_nodes: Vec<kith::Node> = memory
        .nodes(&NodeQuery {
            owner: Some(owner_id.clone()),
            node_types: vec![NodeType::Entity],
            ..NodeQuery::default()
        })?
        .into_iter()
        .map(|n| n.node)
        .filter(|n| n.lifecycle.is_active())
        .collect();
    let claim_nodes: Vec<kith::Node> = memory
        .nodes(&NodeQuery {
            owner: Some(owner_id.clone()),
            metadata_key: Some("extraction_kind".into()),
            ..NodeQuery::default()
        })?
        .into_iter()
        .map(|n| n.node)
        .filter(|n| n.lifecycle.is_active() && n.node_type != NodeType::Entity)
        .collect();

    let text = |n: &kith::Node, key: &str| -> String {
        n.metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut claims: Vec<score::ClaimView> = claim_nodes
        .iter()
        .map(|n| score::ClaimView {
            predicate: text(n, "predicate"),
            object: text(n, "object"),
            turns: n
                .evidence_refs
                .iter()
                .filter_map(|e| dia_of.get(e).cloned())
                .collect(),
            bound_to: Vec::new(),
        })
        .collect();
    let claim_index: HashMap<uuid::Uuid, usize> = claim_nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();
    for (ei, entity) in entity_nodes.iter().enumerate() {
        for (claim, _basis) in memory.entity_claims(&owner_id, entity.id)? {
            if let Some(ci) = claim_index.get(&claim.id) {
                claims[*ci].bound_to.push(ei);
            }
        }
    }
    Ok(score::Conversation {
        speakers: conv.speakers.to_vec(),
        turns: conv
            .turns
            .iter()
            .map(|t| score::TurnView {
                id: t.dia_id.clone(),
                speaker: t.speaker.clone(),
                text: t.text.clone(),
            })
            .collect(),
        observations: observations
            .iter()
            .map(|o| score::ObservationView {
                speaker: o.speaker.clone(),
                text: o.text.clone(),
                turns: o.turns.clone(),
            })
            .collect(),
        entities: entity_nodes
            .iter()
            .map(|n| score::EntityView {
                name: n.content.clone(),
                entity_type: text(n, "entity_type"),
            })
            .collect(),
        claims,
    })
}

/// The pooled figures of several conversations.
fn pool(reports: &[Report]) -> Report {
    let mut counts = Counts::default();
    let (mut turns, mut failed, mut seconds) = (0, 0, 0.0);
    for r in reports {
        counts.add(&r.counts);
        turns += r.turns;
        failed += r.failed;
        seconds += r.seconds;
    }
    Report {
        conversation: "overall".into(),
        turns,
        failed,
        seconds,
        messages_per_second: turns as f64 / f64::max(seconds, 1e-9),
        figures: counts.figures(),
        counts,
        speaker_nodes: None,
        junk_entities: None,
        first_error: reports.iter().find_map(|r| r.first_error.clone()),
    }
}

fn print_table(provider: &str, reports: &[Report], overall: &Report) {
    println!("Extraction against LoCoMo observations; provider {provider}");
    println!(
        "{:<12} {:>6} {:>5} {:>8} {:>8} {:>6} {:>9} {:>6} {:>9} {:>8} {:>6} {:>8}  speaker nodes",
        "conversation",
        "turns",
        "obs",
        "coverage",
        "matched",
        "claims",
        "claim-p",
        "bound",
        "binding-p",
        "entities",
        "junk",
        "msg/s"
    );
    let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
    for r in reports.iter().chain(std::iter::once(overall)) {
        let c = &r.counts;
        let speakers = match &r.speaker_nodes {
            Some(nodes) => nodes
                .iter()
                .map(|(s, n)| format!("{s} {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            None => format!(
                "{} of {} speakers with one",
                c.speakers_with_one_node, c.speakers
            ),
        };
        println!(
            "{:<12} {:>6} {:>5} {:>8} {:>8} {:>6} {:>9} {:>6} {:>9} {:>8} {:>6} {:>8.0}  {speakers}",
            r.conversation,
            r.turns,
            c.observations,
            f(r.figures.coverage),
            f(r.figures.matched_coverage),
            c.claims,
            f(r.figures.claim_precision),
            c.bound_claims,
            f(r.figures.binding_precision),
            c.entities,
            f(r.figures.junk_share),
            r.messages_per_second,
        );
    }
    if overall.failed > 0 {
        println!(
            "{} message(s) failed extraction; first error: {}",
            overall.failed,
            overall.first_error.as_deref().unwrap_or("?")
        );
    }
}
