//! Pseudo-relevance feedback: a second BM25 query built from the best hit
//! of the first, for evidence that shares no word with the question.
//!
//! "What did I make in my pottery class?" finds "I signed up for a pottery
//! class at the Riverside studio"; the turn that answers, "The Riverside
//! studio kiln fired my first glazed bowl today!", says neither "make",
//! "pottery" nor "class". What the best hit is *about* says where to look
//! next. After the lexical, vector, dated and graph paths have filled the
//! pool, the [`FEEDBACK_DOCS`] best candidates (fused, before any boost)
//! give a second query (RM3, Lavrenko & Croft; Abdul-Jaleel et al.): the
//! question's BM25 words plus the [`FEEDBACK_TERMS`] words that weigh most
//! in those hits — each word's share of a hit's length, summed over the
//! hits, times its rarity among the candidates (`ln(1 + n / df)`, as
//! [`super::premise`] reads rarity), so a hit's specific words count and
//! the words every candidate says do not. The question's own words stay in
//! the query, which keeps it anchored to the question.
//!
//! Its hits join the pool as the `feedback` path, weighted by
//! `weights.feedback`, a small share beside the question's own paths; the
//! trace names the words. **Off by default** (weight 0; `--weights
//! feedback=0.25` turns it on): it lifts LoCoMo on both halves, but the
//! second query costs about 10 ms a retrieve at 100k memories, a third of
//! the p95 bar (BENCHMARKS.md). The best hit itself stays in that
//! ranking (it tops it, as it should): left out, its look-alikes gained on
//! it and took its place (BENCHMARKS.md, 2026-12-02, feedback).
//!
//! Measured and not kept (BENCHMARKS.md): the 3 or 5 best hits as seeds
//! (more drift than evidence on short turns) and Rocchio's vector half
//! (the question's embedding moved to the hits' centroid: no gain on the
//! tune half for a second vector scan).

use std::collections::{HashMap, HashSet};

use kith_core::NodeType;
use kith_store::{LexicalQuery, Tx};

use super::fusion::PathKind;
use super::paths::words;
use super::pool::{path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// How many of the best candidates seed the feedback query: the best one.
/// Conversational turns are short, and the second and third best are as
/// often near misses as evidence; with 3 or 5 seeds the tune half's
/// categories 1–4 gained less and its speaker traps lost (BENCHMARKS.md).
pub const FEEDBACK_DOCS: usize = 1;
/// How many of their words the feedback query adds.
pub const FEEDBACK_TERMS: usize = 10;
/// The shortest word the feedback adds: shorter ones are mostly fillers
/// ("lol", "wow", "got").
const MIN_TERM: usize = 4;

/// Adds the hits of the feedback query to `pool` (see the module doc).
/// `lexical_text` is the text BM25 searched for the question. Does nothing
/// when the weight is 0, the lexical path is off or no candidate has a word
/// to add.
pub fn candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    lexical_text: &str,
    pool_size: usize,
    pool: &mut Pool,
) -> Result<(), Error> {
    if req.weights.feedback <= 0.0 || !req.paths.lexical {
        return Ok(());
    }
    let ranked = pool.ranked(&req.weights);
    let best: Vec<&str> = ranked
        .iter()
        .take(FEEDBACK_DOCS)
        .map(|c| c.hit.content.as_str())
        .collect();
    let texts: Vec<&str> = ranked.iter().map(|c| c.hit.content.as_str()).collect();
    let speakers: HashSet<String> = ranked
        .iter()
        .filter_map(|c| c.hit.speaker.as_deref())
        .flat_map(words)
        .collect();
    let terms = expansion_terms(&req.query, &best, &texts, &speakers);
    let seeds = best.len();
    drop(ranked);
    if terms.is_empty() {
        return Ok(());
    }
    let hits = tx.search_lexical(&LexicalQuery {
        owner: req.owner.clone(),
        text: format!("{lexical_text} {}", terms.join(" ")),
        filters: req.filters.clone(),
        limit: pool_size,
    })?;
    let via = format!(
        "the question's words and those of its best hit{}: {}",
        if seeds == 1 { "" } else { "s" },
        terms.join(", ")
    );
    let wants_entities = req.filters.node_types.contains(&NodeType::Entity);
    let kept = hits
        .into_iter()
        .filter(|h| wants_entities || h.node_type != NodeType::Entity);
    for (i, h) in kept.enumerate() {
        let score = Some(h.score);
        pool.add(h, path(PathKind::Feedback, i, score, Some(via.clone())));
    }
    Ok(())
}

/// The [`FEEDBACK_TERMS`] words that weigh most in `best` (the best hits'
/// texts): a word's share of each hit's length, summed, times its rarity
/// among `all` (every candidate's text). Left out: the question's words
/// (already searched), stop words, words under [`MIN_TERM`] letters,
/// numbers and the speakers' names (greetings carry them everywhere).
/// Ties go to the word seen first, so the choice is stable.
pub fn expansion_terms(
    query: &str,
    best: &[&str],
    all: &[&str],
    speakers: &HashSet<String>,
) -> Vec<String> {
    let asked: HashSet<String> = words(query).into_iter().collect();
    let usable = |w: &str| {
        w.chars().count() >= MIN_TERM
            && !w.chars().all(|c| c.is_ascii_digit())
            && !asked.contains(w)
            && !speakers.contains(w)
            && !super::premise::is_stop_word(w)
            && !kith_store::words::query_words(w).is_empty()
    };
    // Each word's weight in the best hits, in first-seen order.
    let mut order: Vec<String> = Vec::new();
    let mut weight: HashMap<String, f64> = HashMap::new();
    for text in best {
        let ws = words(text);
        let len = ws.len().max(1) as f64;
        for w in ws.iter().filter(|w| usable(w)) {
            if !weight.contains_key(w) {
                order.push(w.clone());
            }
            *weight.entry(w.clone()).or_default() += 1.0 / len;
        }
    }
    let all_words: Vec<HashSet<String>> =
        all.iter().map(|t| words(t).into_iter().collect()).collect();
    let n = all_words.len().max(1) as f64;
    let mut scored: Vec<(usize, f64)> = order
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let df = all_words.iter().filter(|s| s.contains(w)).count().max(1) as f64;
            (i, weight[w] * (1.0 + n / df).ln())
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
        .into_iter()
        .take(FEEDBACK_TERMS)
        .map(|(i, _)| order[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_prefers_the_best_hits_specific_words() {
        let best = [
            "I signed up for a pottery class, the clay is so calming.",
            "Caroline, pottery is my new thing, I made a clay bowl.",
        ];
        let all = [
            best[0],
            best[1],
            "Thanks, that is so kind, the kids loved it.",
            "The kids and I went camping, so calming.",
            "Caroline, how are the kids?",
        ];
        let speakers: HashSet<String> = ["caroline".to_string()].into();
        let terms = expansion_terms("What does Melanie do to relax?", &best, &all, &speakers);
        let at = |w: &str| terms.iter().position(|t| t == w);
        assert_eq!(terms[0], "pottery");
        // In both best hits and nowhere else, above a word another
        // candidate says too.
        assert!(at("clay") < at("calming"), "{terms:?}");
        // Asked, a stop word, short or a name: never added.
        for w in ["relax", "the", "so", "thing", "made", "caroline"] {
            assert!(!terms.contains(&w.to_string()), "{w} in {terms:?}");
        }
        assert!(terms.len() <= FEEDBACK_TERMS);
    }
}
