//! The `parts` path: a question that compares two things ("Which happened
//! first, the road trip to the coast or the arrival of the new prime
//! lens?", "How many days passed between my visit to MoMA and the
//! 'Ancient Civilizations' exhibit?") needs the evidence of each in the
//! results. One BM25 query over the whole question ranks the turns of
//! whichever part has the rarer or more repeated words first, and a dozen
//! look-alikes of that part ("the coastal trip was amazing…") push the
//! other part's one turn out.
//!
//! Each part is searched on its own (one BM25 query a part, at most
//! [`MAX_PARTS`]; only for a question that compares: any other question
//! costs nothing), and the parts' hits join fusion interleaved — each
//! part's best, then each part's second… — so every part has a hit near
//! the top of this path. The trace names the part: `part "the road trip
//! to the coast"`.

use kith_core::NodeType;
use kith_store::{LexicalHit, LexicalQuery, Tx};

use super::fusion::PathKind;
use super::pool::{path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// Parts searched at most.
pub const MAX_PARTS: usize = 3;
/// Hits of each part that join the pool.
pub const PART_HITS: usize = 5;

/// Words that make "A or B" a comparison of two things said at different
/// times ("which came first", "which did I buy earlier").
const ORDER_WORDS: &[&str] = &[
    "first", "earlier", "earliest", "later", "latest", "last", "before", "after", "sooner",
    "older", "newer", "recently", "most",
];

/// The parts a question compares: the two sides of "how long / how many
/// days … between A and B", or the alternatives of "which … first, A or
/// B?" (the clause after the last comma, or the whole question without
/// one; the question must ask about order, [`ORDER_WORDS`]: "Can you
/// suggest a red or a white?" asks for a suggestion, not a comparison of
/// what was said). `None` when it compares nothing, or when a side has no
/// word to search for.
pub fn compared_parts(question: &str) -> Option<Vec<String>> {
    let q = question.trim().trim_end_matches(['?', '.', '!']).trim();
    let lower = q.to_lowercase();
    let asks_how = lower.starts_with("how");
    let about_order = ORDER_WORDS.iter().any(|w| find_word(&lower, w).is_some());
    let between = find_word(&lower, "between").filter(|_| asks_how);
    let parts: Vec<&str> = if let Some(at) = between {
        let rest = &q[at + "between".len()..];
        split_word(rest, "and")
    } else if about_order && find_word(&lower, "or").is_some() {
        let clause = q.rsplit_once(',').map_or(q, |(_, tail)| tail);
        split_word(clause, "or")
    } else {
        return None;
    };
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !kith_store::words::query_words(p).is_empty())
        .collect();
    (2..=MAX_PARTS).contains(&parts.len()).then_some(parts)
}

/// The byte offset of `word` in `lower` as a whole word.
fn find_word(lower: &str, word: &str) -> Option<usize> {
    lower.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// `text` cut at every whole-word `word` (any case).
fn split_word<'t>(text: &'t str, word: &str) -> Vec<&'t str> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = find_word(&lower[from..], word) {
        out.push(&text[from..from + at]);
        from += at + word.len();
    }
    out.push(&text[from..]);
    out
}

/// Adds each compared part's best BM25 hits to `pool`, interleaved (see
/// the module's documentation). Does nothing when the weight is 0, the
/// lexical path is off or the question compares nothing.
pub fn candidates(tx: &mut dyn Tx, req: &RetrieveRequest, pool: &mut Pool) -> Result<(), Error> {
    if req.weights.parts <= 0.0 || !req.paths.lexical {
        return Ok(());
    }
    let Some(parts) = compared_parts(&req.query) else {
        return Ok(());
    };
    let wants_entities = req.filters.node_types.contains(&NodeType::Entity);
    let mut found: Vec<Vec<LexicalHit>> = Vec::new();
    for part in &parts {
        let hits = search(tx, req, part)?;
        found.push(
            hits.into_iter()
                .filter(|h| wants_entities || h.node_type != NodeType::Entity)
                .take(PART_HITS)
                .collect(),
        );
    }
    let mut rank = 0;
    for i in 0..PART_HITS {
        for (part, hits) in parts.iter().zip(&found) {
            let Some(h) = hits.get(i) else { continue };
            let via = format!("part \"{part}\"");
            let score = Some(h.score);
            pool.add(h.clone(), path(PathKind::Parts, rank, score, Some(via)));
            rank += 1;
        }
    }
    Ok(())
}

/// One part's store read: BM25 over its words, under the request's owner
/// and filters.
fn search(tx: &mut dyn Tx, req: &RetrieveRequest, text: &str) -> Result<Vec<LexicalHit>, Error> {
    Ok(tx.search_lexical(&LexicalQuery {
        common_share: None,
        owner: req.owner.clone(),
        text: text.to_string(),
        filters: req.filters.clone(),
        limit: PART_HITS * 2,
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_are_cut_into_their_parts() {
        assert_eq!(
            compared_parts(
                "Which event happened first, the road trip to the coast or the arrival of the new prime lens?"
            ),
            Some(vec![
                "the road trip to the coast".to_string(),
                "the arrival of the new prime lens".to_string()
            ])
        );
        assert_eq!(
            compared_parts(
                "How many days passed between my visit to MoMA and the exhibit at the Met?"
            ),
            Some(vec![
                "my visit to MoMA".to_string(),
                "the exhibit at the Met".to_string()
            ])
        );
        // Nothing compared; "or" inside a word; a side with no word.
        assert_eq!(compared_parts("What did I buy for my mother?"), None);
        assert_eq!(compared_parts("Where is the orchestra playing?"), None);
        assert_eq!(compared_parts("Which came first, this or that?"), None);
        // Not about order: a request, not a comparison.
        assert_eq!(
            compared_parts("Can you suggest a red wine or a white wine for dinner?"),
            None
        );
        assert_eq!(
            compared_parts("What is the difference between cats and dogs?"),
            None
        );
    }
}
