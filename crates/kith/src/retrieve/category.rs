//! The `category` path: for a question that names a category ("What
//! European countries has Maria been to?", "What martial arts has John
//! done?"), the turns that name one of its members ("We spent a week in
//! Spain", "I started taekwondo"), which share no word with the question
//! and which a small sentence embedding does not bring close either.
//!
//! The categories and members come from a small built-in lexicon of
//! general facts ([`super::lexicon`]). The members go to BM25 in **one
//! store query** (only for a question that names a category; any other
//! question costs nothing), and a hit is kept where a member occurs as
//! whole words (BM25 stems and splits "kung fu"). The kept hits join
//! fusion in BM25 order, rarer members first, weighted by
//! `weights.category`; the trace says which category and which member:
//! `category "European countries": spain`. When the question names a
//! speaker, their hits come first on the path ("What activities has
//! Melanie done?": everyone names activities, hers are asked for).

use kith_core::NodeType;
use kith_store::{LexicalHit, LexicalQuery, Tx};

use super::fusion::PathKind;
use super::lexicon::{categories_named, mentions_member};
use super::paths::words;
use super::pool::{path, Pool};
use super::speakers::NamedSpeaker;
use super::RetrieveRequest;
use crate::error::Error;

/// How many hits the path ranks at most: as many as the places a list
/// question's answer can take in the results, and more.
pub const CATEGORY_HITS: usize = 20;
/// How many hits the store is asked for: some carry a member's word but
/// not the member ("Spanish" for "Spain" is stemmed apart, but "new" of
/// "New York" is not).
const ASKED: usize = 3 * CATEGORY_HITS;

/// Adds the turns naming a member of a category the question names (see
/// the module's documentation). Does nothing when the weight is 0 or the
/// question names no category. Members that are a speaker's name in the
/// pool ("Georgia") are left out: greetings name them everywhere.
pub fn candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    named: &[NamedSpeaker],
    pool: &mut Pool,
) -> Result<(), Error> {
    if req.weights.category <= 0.0 || !req.paths.lexical {
        return Ok(());
    }
    let asked = categories_named(&req.query);
    if asked.is_empty() {
        return Ok(());
    }
    let speakers = pool.speaker_words();
    // (category label, member), in the lexicon's order, once each.
    let mut members: Vec<(&str, &str)> = Vec::new();
    for c in &asked {
        for m in c.members() {
            if !words(m).iter().all(|w| speakers.contains(w))
                && !members.iter().any(|(_, seen)| *seen == m)
            {
                members.push((c.label, m));
            }
        }
    }
    let text = search_words(members.iter().map(|(_, m)| *m));
    let mut hits = search(tx, req, &text)?;
    // "What activities has Melanie done?": her turns naming a member come
    // first, in BM25 order, then everyone else's (a broad kind is named by
    // both speakers all the time, and the other's would fill the path).
    let by_named = |h: &LexicalHit| {
        h.speaker
            .as_deref()
            .is_some_and(|s| named.iter().any(|n| n.name == s))
    };
    hits.sort_by_key(|h| !by_named(h));
    let wants_entities = req.filters.node_types.contains(&NodeType::Entity);
    let mut rank = 0;
    for h in hits {
        if rank == CATEGORY_HITS {
            break;
        }
        if h.node_type == NodeType::Entity && !wants_entities {
            continue;
        }
        let Some((label, member)) = members.iter().find(|(_, m)| mentions_member(&h.content, m))
        else {
            continue;
        };
        let via = format!("category \"{label}\": {member}");
        let score = Some(h.score);
        pool.add(h, path(PathKind::Category, rank, score, Some(via)));
        rank += 1;
    }
    Ok(())
}

/// In a big store (20,000 rows and more), a member's word found in at
/// least this share of the rows is not searched: the query holds dozens
/// of members, each a way to match, and the common ones ("reading",
/// "party") cost the most postings while saying least. A sixth of the
/// store's default share for one question's words
/// ([`kith_store::words::COMMON_SHARE`]); not tuned (no benchmark
/// conversation is that big).
pub const MEMBER_COMMON_SHARE: f64 = 0.01;

/// Words of multi-word members too common to search for: they add long
/// posting lists to the query ("new" of "New York", "south" of "South
/// Korea") and the member's other word finds the same turns.
const GENERIC_WORDS: &[&str] = &[
    "new", "south", "north", "east", "west", "united", "great", "the", "city", "coast", "republic",
    "island", "islands", "lake", "lakes", "san", "los", "las", "de", "el", "saint", "gulf", "sri",
    "costa", "arab",
];

/// The words BM25 is asked for: each member's words but the generic ones
/// (all of them when every word is generic), once each. Hits are checked
/// against the whole member afterwards.
fn search_words<'m>(members: impl Iterator<Item = &'m str>) -> String {
    let mut out: Vec<String> = Vec::new();
    for m in members {
        let ws = words(m);
        // Words of two letters or fewer ("s" of "women's") match far more
        // than the member.
        let specific: Vec<&String> = ws
            .iter()
            .filter(|w| w.chars().count() > 2 && !GENERIC_WORDS.contains(&w.as_str()))
            .collect();
        let chosen = if specific.is_empty() {
            ws.iter().collect()
        } else {
            specific
        };
        for w in chosen {
            if !out.contains(w) {
                out.push(w.clone());
            }
        }
    }
    out.join(" ")
}

/// The path's one store read: BM25 over the members, under the request's
/// owner and filters.
fn search(tx: &mut dyn Tx, req: &RetrieveRequest, text: &str) -> Result<Vec<LexicalHit>, Error> {
    Ok(tx.search_lexical(&LexicalQuery {
        common_share: Some(MEMBER_COMMON_SHARE),
        owner: req.owner.clone(),
        text: text.to_string(),
        filters: req.filters.clone(),
        limit: ASKED,
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_words_of_a_member_are_not_searched() {
        assert_eq!(
            search_words(["new york", "new zealand", "spain", "the south", "york"].into_iter()),
            "york zealand spain the south"
        );
        assert_eq!(
            search_words(["women's rights", "tai chi"].into_iter()),
            "women rights tai chi"
        );
    }
}
