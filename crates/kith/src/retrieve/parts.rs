//! The `parts` path: a question that compares two things ("Which happened
//! first, the road trip to the coast or the arrival of the new prime
//! lens?", "How many days passed between my visit to MoMA and the
//! 'Ancient Civilizations' exhibit?", "How many days before I bought the
//! iPhone did I attend the Holiday Market?", "Who graduated first among
//! Emma, Rachel and Alex?") needs the evidence of each in the
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
/// days … between A and B", the alternatives of "which … first, A or
/// B?" (the clause after the last comma, or the whole question without
/// one; the question must ask about order, [`ORDER_WORDS`]: "Can you
/// suggest a red or a white?" asks for a suggestion, not a comparison of
/// what was said), the two events of a question that measures the time
/// from one to the other ([`two_events`]), or the items an order question
/// lists ([`listed`]). `None` when it compares nothing, or when a side has
/// no word to search for.
pub fn compared_parts(question: &str) -> Option<Vec<String>> {
    let q = question.trim().trim_end_matches(['?', '.', '!']).trim();
    // ASCII lower case keeps every byte offset of `q` (the words looked
    // for are ASCII; full lower case can change a text's length: "İ").
    let lower = q.to_ascii_lowercase();
    let asks_how = lower.starts_with("how");
    let about_order = ORDER_WORDS.iter().any(|w| find_word(&lower, w).is_some());
    let between = find_word(&lower, "between").filter(|_| asks_how);
    let parts: Vec<&str> = if let Some(at) = between {
        let rest = &q[at + "between".len()..];
        split_word(rest, "and")
    } else if let Some(parts) = two_events(q, &lower) {
        parts
    } else if let Some(parts) =
        listed(q, &lower).filter(|_| about_order || find_word(&lower, "order").is_some())
    {
        parts
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

/// Units of time a "how many … " question measures in.
const TIME_UNITS: &[&str] = &[
    "minutes", "hours", "days", "weeks", "months", "years", "nights", "times",
];
/// Words that join the two events of a time measured from one to the
/// other: "How many days before my party did I order the gift?"
const CONNECTIVES: &[&str] = &["before", "after", "since", "when"];
/// Auxiliaries that start the second event when the first follows the
/// connective at once ("… before my party *did* I order the gift").
const AUXILIARIES: &[&str] = &["did", "do", "does", "was", "were", "had", "have", "has"];
/// The words of the question's head, left off the first event: "How many
/// weeks had passed since…", "How long had I been a member…", "How many
/// days did it take for me to find…".
const HEAD_WORDS: &[&str] = &[
    "how", "many", "much", "long", "time", "minutes", "hours", "days", "weeks", "months", "years",
    "nights", "had", "have", "has", "did", "do", "does", "was", "were", "been", "passed", "gone",
    "it", "take", "took", "for", "me", "to", "i",
];

/// The two events of a question that measures the time between them —
/// "How many days before I bought the iPhone did I attend the market?",
/// "How many weeks had passed since I recovered when I went jogging?",
/// "How long had I been a member of the club when I attended the
/// meetup?": it asks "how long" or "how many" of a unit of time
/// ([`TIME_UNITS`]), and a connective ([`CONNECTIVES`]) joins the events.
/// What comes before the first connective, without the question's head
/// ([`HEAD_WORDS`]), is one event; when nothing is left, the first event
/// follows the connective and ends at the next connective or auxiliary
/// ([`AUXILIARIES`]). `lower` is `q` in ASCII lower case (the same byte
/// offsets).
fn two_events<'q>(q: &'q str, lower: &str) -> Option<Vec<&'q str>> {
    let mut words = lower.split_whitespace();
    let measures_time = match (words.next(), words.next(), words.next()) {
        (Some("how"), Some("long"), _) => true,
        (Some("how"), Some("many" | "much"), Some(unit)) => {
            TIME_UNITS.contains(&unit) || unit == "time"
        }
        _ => false,
    };
    if !measures_time {
        return None;
    }
    let (at, word) = first_of(lower, CONNECTIVES)?;
    // "How many years older am I than when I graduated?" compares an age
    // with one event.
    if find_word(&lower[..at], "than").is_some() {
        return None;
    }
    let first = without_head(&q[..at]);
    let rest_from = at + word.len();
    let events = if !first.is_empty() {
        vec![first, &q[rest_from..]]
    } else {
        let rest_lower = &lower[rest_from..];
        let (cut, word) =
            first_of(rest_lower, CONNECTIVES).or_else(|| first_of(rest_lower, AUXILIARIES))?;
        let rest = &q[rest_from..];
        vec![&rest[..cut], &rest[cut + word.len()..]]
    };
    // An event of one word ("… after I bought it") names nothing of its
    // own: searched alone, it finds every turn that says the word.
    events
        .iter()
        .all(|e| kith_store::words::query_words(e).len() >= 2)
        .then_some(events)
}

/// The earliest whole word of `words` in `lower` ([`find_word`]), with its
/// offset.
fn first_of<'w>(lower: &str, words: &[&'w str]) -> Option<(usize, &'w str)> {
    words
        .iter()
        .filter_map(|w| find_word(lower, w).map(|i| (i, *w)))
        .min_by_key(|(i, _)| *i)
}

/// `text` without its leading [`HEAD_WORDS`].
fn without_head(text: &str) -> &str {
    let mut rest = text.trim_start();
    while let Some(word) = rest.split_whitespace().next() {
        if !HEAD_WORDS.contains(&word.to_lowercase().as_str()) {
            break;
        }
        rest = rest[word.len()..].trim_start();
    }
    rest.trim()
}

/// The items an order question lists: "Who graduated first, second and
/// third among Emma, Rachel and Alex?" (after "among"), "Which three
/// events happened in order: the day I…, the day I…, and the day I…?"
/// (after a colon, cut at commas). `None` when it lists nothing. `lower`
/// is `q` in ASCII lower case (the same byte offsets).
fn listed<'q>(q: &'q str, lower: &str) -> Option<Vec<&'q str>> {
    if let Some(at) = find_word(lower, "among") {
        let rest = &q[at + "among".len()..];
        let mut items: Vec<&str> = Vec::new();
        for piece in rest.split(',') {
            items.extend(split_word(piece, "and"));
        }
        return Some(items);
    }
    let (_, rest) = q.split_once(':')?;
    Some(
        rest.split(',')
            .map(|p| {
                let p = p.trim_start();
                p.strip_prefix("and ").unwrap_or(p)
            })
            .collect(),
    )
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
    let lower = text.to_ascii_lowercase();
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

    fn parts(q: &str) -> Option<Vec<&'static str>> {
        compared_parts(q).map(|p| {
            p.into_iter()
                .map(|s| &*Box::leak(s.into_boxed_str()))
                .collect()
        })
    }

    #[test]
    fn a_time_measured_from_one_event_to_another_is_cut_into_the_events() {
        assert_eq!(
            parts(
                "How many days before I bought the iPhone 13 Pro did I attend the Holiday Market?"
            ),
            Some(vec![
                "I bought the iPhone 13 Pro",
                "I attend the Holiday Market"
            ])
        );
        assert_eq!(
            parts("How many weeks had passed since I recovered from the flu when I went on my 10th jog outdoors?"),
            Some(vec!["I recovered from the flu", "I went on my 10th jog outdoors"])
        );
        assert_eq!(
            parts(
                "How long had I been a member of 'Book Lovers Unite' when I attended the meetup?"
            ),
            Some(vec![
                "a member of 'Book Lovers Unite'",
                "I attended the meetup"
            ])
        );
        assert_eq!(
            parts("How many days did it take for me to find a house I loved after starting to work with Rachel?"),
            Some(vec!["find a house I loved", "starting to work with Rachel"])
        );
        // A count of things, not of time; a time with one event.
        assert_eq!(
            parts("How many properties did I view before making an offer on the townhouse?"),
            None
        );
        assert_eq!(
            parts("How many weeks ago did I attend the sale at Nordstrom?"),
            None
        );
        assert_eq!(parts("How long have I been learning piano?"), None);
        // An age compared with one event; an event that names nothing.
        assert_eq!(
            parts("How many years older am I than when I graduated from college?"),
            None
        );
        assert_eq!(
            parts("How many days did it take for my iPad case to arrive after I bought it?"),
            None
        );
    }

    #[test]
    fn the_items_an_order_question_lists_are_its_parts() {
        assert_eq!(
            parts("Who graduated first, second and third among Emma, Rachel and Alex?"),
            Some(vec!["Emma", "Rachel", "Alex"])
        );
        assert_eq!(
            parts("Which three events happened in order from first to last: the day I helped my friend paint the nursery, the day I picked out a stroller, and the day I baked a cake?"),
            Some(vec![
                "the day I helped my friend paint the nursery",
                "the day I picked out a stroller",
                "the day I baked a cake"
            ])
        );
        // A list with no question of order; a colon that lists nothing.
        assert_eq!(
            parts("Which friends did I meet among Emma, Rachel and Alex?"),
            None
        );
        assert_eq!(parts("Note: what did I order first?"), None);
    }

    proptest::proptest! {
        /// Any question, in any script, is cut without a panic, into parts
        /// that are pieces of it.
        #[test]
        fn any_question_is_cut_into_pieces_of_itself(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "how", "many", "days", "long", "before", "after", "when", "since", "did",
                    "I", "İstanbul", "Straße", "ǅ", "among", "and", "or", "first", "order",
                    "between", ":", ",", "the", "trip", "lens", "Emma", "than", "é",
                ]),
                0..14,
            )
        ) {
            let q = words.join(" ");
            if let Some(parts) = compared_parts(&q) {
                proptest::prop_assert!((2..=MAX_PARTS).contains(&parts.len()));
                for p in parts {
                    proptest::prop_assert!(q.contains(&p), "{p:?} not in {q:?}");
                }
            }
        }
    }
}
