//! Pseudo-relevance feedback: the candidates ranked again by a query built
//! from the best hit, for evidence that shares few words with the question.
//!
//! "What did I make in my pottery class?" finds "I signed up for a pottery
//! class at the Riverside studio"; the turn that answers, "The Riverside
//! studio kiln fired my first glazed bowl today!", says neither "make",
//! "pottery" nor "class", and the vector path found it only far down. What
//! the best hit is *about* says which of the other candidates to trust.
//! After the lexical, vector, dated and graph paths have filled the pool,
//! the [`FEEDBACK_DOCS`] best candidates (fused, before any boost) give a
//! feedback query (RM3, Lavrenko & Croft; Abdul-Jaleel et al.): the
//! question's BM25 words plus the [`FEEDBACK_TERMS`] words that weigh most
//! in those hits — each word's share of a hit's length, summed over the
//! hits, times its rarity among the candidates (`ln(1 + n / df)`, as
//! [`super::premise`] reads rarity), so a hit's specific words count and
//! the words every candidate says do not. The question's own words stay in
//! the query, which keeps it anchored to the question.
//!
//! That query ranks **the candidates already found** (BM25 with the pool's
//! own statistics, [`rank_in_pool`]), and the ranking joins fusion as the
//! `feedback` path, weighted by `weights.feedback`, a small share beside
//! the question's own paths; the trace names the words. **On by default**
//! (weight 0.25; `--weights feedback=0` turns it off): it lifts LoCoMo's
//! categories 1–4 on both halves. It was off while it pushed Maya's new job
//! out of the demo's top 10 for "Where does Maya work now?", a turn then
//! found on the graph path alone (`current.rs` now brings it in).
//! It costs no store query: the same query sent to the store (which could
//! also reach turns no path found) gained as much on LoCoMo's tune half but
//! cost about 10 ms a retrieve at 100k memories, a third of the p95 bar
//! (BENCHMARKS.md, 2026-12-02, feedback). The best hit itself stays in the
//! ranking (it tops it, as it should): left out, its look-alikes gained on
//! it and took its place.
//!
//! Measured and not kept (BENCHMARKS.md): the 3 or 5 best hits as seeds
//! (more drift than evidence on short turns), 5 added words instead of 10,
//! the added words without the question's, and Rocchio's vector half (the
//! question's embedding moved to the hits' centroid: no gain on the tune
//! half for a second vector scan).

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::fusion::PathKind;
use super::graph::stem;
use super::paths::words;
use super::pool::{path, Pool};
use super::RetrieveRequest;

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
/// BM25's term-frequency saturation and length normalisation (the usual
/// values, as FTS5's).
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// Ranks the candidates of `pool` by the feedback query and records the
/// ranking as their `feedback` path (see the module doc). `lexical_text` is
/// the text BM25 searched for the question. Does nothing when the weight
/// is 0, the lexical path is off or the best hit has no word to add.
pub fn rerank(req: &RetrieveRequest, lexical_text: &str, pool: &mut Pool) {
    if req.weights.feedback <= 0.0 || !req.paths.lexical {
        return;
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
        return;
    }
    let via = format!(
        "the question's words and those of its best hit{}: {}",
        if seeds == 1 { "" } else { "s" },
        terms.join(", ")
    );
    let mut query = kith_store::words::query_words(lexical_text);
    query.extend(terms);
    for (i, (id, score)) in rank_in_pool(&query, pool).into_iter().enumerate() {
        if let Some(c) = pool.by_id.get_mut(&id) {
            let rank = path(PathKind::Feedback, i, Some(score), Some(via.clone()));
            c.trace.add_path(rank);
        }
    }
}

/// The candidates of `pool` that carry a word of `query`, best first, with
/// their BM25 score under the pool's own statistics (words lightly stemmed
/// on both sides; ties in first-found order).
pub fn rank_in_pool(query: &[String], pool: &Pool) -> Vec<(Uuid, f64)> {
    // Sorted, not a set: a sum of floats depends on its order, and a
    // set's order changes from one process to the next (two runs gave two
    // rankings when scores nearly tied).
    let mut q: Vec<String> = query.iter().map(|w| stem(w)).collect();
    q.sort();
    q.dedup();
    let docs: Vec<(Uuid, usize, Vec<String>)> = pool
        .by_id
        .values()
        .map(|c| {
            let ws = words(&c.hit.content).iter().map(|w| stem(w)).collect();
            (c.hit.node_id, c.order, ws)
        })
        .collect();
    let n = docs.len().max(1) as f64;
    let avg = (docs.iter().map(|d| d.2.len()).sum::<usize>() as f64 / n).max(1.0);
    let idf: HashMap<&String, f64> = q
        .iter()
        .map(|t| {
            let df = docs.iter().filter(|d| d.2.contains(t)).count() as f64;
            (t, ((n - df + 0.5) / (df + 0.5) + 1.0).ln())
        })
        .collect();
    let mut scored: Vec<(Uuid, usize, f64)> = docs
        .iter()
        .filter_map(|(id, order, ws)| {
            let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * ws.len() as f64 / avg);
            let score: f64 = q
                .iter()
                .map(|t| {
                    let tf = ws.iter().filter(|w| *w == t).count() as f64;
                    idf[t] * tf * (BM25_K1 + 1.0) / (tf + norm)
                })
                .sum();
            (score > 0.0).then_some((*id, *order, score))
        })
        .collect();
    scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(id, _, s)| (id, s)).collect()
}

/// The [`FEEDBACK_TERMS`] words that weigh most in `best` (the best hits'
/// texts): a word's share of each hit's length, summed, times its rarity
/// among `all` (every candidate's text, the best hits' among them;
/// `premise::rarity`, the premise check's measure). Left out: the question's words
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
    let rarity = super::premise::rarity(&order, &all_words);
    let mut scored: Vec<(usize, f64)> = order
        .iter()
        .enumerate()
        .map(|(i, w)| (i, weight[w] * rarity[w]))
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
