//! What was said since: for a question that asks about now ("How do I
//! learn Dutch now?"), the newest turn in which the best match's speaker
//! names the same thing again joins the candidates just above it.
//!
//! Current facts first (`current.rs`) follows claims that supersede one
//! another, and a memory built with the offline extractor often has none:
//! "Update: I switched from Duolingo to a weekly evening class" is kept as
//! a fact, not as a claim that replaces "I started learning Dutch on
//! Duolingo". That later turn shares no word with the question, so no path
//! ranks it near the top, yet it is what a question about now wants. What
//! ties the two is what the best match names ("Duolingo"): a turn of the
//! same speaker, said after it, that names it again is said later about
//! the same thing.
//!
//! Names are the words written with a capital inside a sentence, read as
//! the expansion's hops read them ([`super::expand::names_in`]): the
//! things people, places, products and organisations are called, which a
//! later turn repeats when it speaks of them again; common words ("class",
//! "morning") would bring in every later turn, and months and days
//! ("March", "Monday") name a time, not a thing. The speaker's own name is
//! left out (every turn of theirs is theirs). A name the question uses is
//! followed only to a turn that says something changed ([`says_change`]:
//! "Sami changed his mind, he's staying in Leeds instead", "…so he is on
//! day shifts now"): the lexical path already searches it, and followed to
//! any turn it brought in whatever was said of it last ("Does Arjun still
//! work nights?" ranked "I'm vegetarian but Arjun eats everything" first). Only
//! the newest such turn joins — what was said last of it, not every
//! mention since, and never one of the best match's own session, which
//! goes on with what it said rather than saying what changed — with the
//! best match's fused score on the `current` path
//! (`weights.current`), before the session prior and the speaker boost, so
//! it ranks beside or above it; the trace names what it names again.
//!
//! One store read, only for questions with a present cue, taken with the
//! neighbour path's (no round trip of its own on a server): the best match
//! is fixed before the neighbours and hops, which add only what they
//! inherit, and [`super::fusion::Trace::own_match`] leaves that out.

use std::collections::HashSet;

use kith_core::Timestamp;
use kith_store::{LexicalHit, LexicalQuery, Tx};
use uuid::Uuid;

use super::current::has_present_cue;
use super::expand;
use super::fusion::PathKind;
use super::paths::words;
use super::pool::{path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// Later turns brought in at most: the newest. With two, the older of
/// them was as often a passing mention ("…but Arjun eats everything") as
/// news.
pub const LATER_TURNS: usize = 1;
/// How many hits of the names the store read returns, newest kept.
const NAME_HITS: usize = 30;

/// What to look for, fixed once the question's own paths have ranked the
/// pool: the best match, and the store read for what names it again.
pub(super) struct Later {
    best: Uuid,
    score: f64,
    said: Timestamp,
    session: Option<kith_core::SessionId>,
    speaker: String,
    names: Vec<String>,
    /// Names of the best match that the question uses too: followed only
    /// to a turn that says something changed ([`says_change`]).
    asked: Vec<String>,
    /// The read, taken ahead with the neighbours' when they run.
    pub query: LexicalQuery,
}

/// For a question with a present cue, what to look for after the pool's
/// best match (None: no cue, or a best match without a time, a speaker or
/// a name).
pub(super) fn plan(req: &RetrieveRequest, pool: &mut Pool) -> Option<Later> {
    if !has_present_cue(&req.query) {
        return None;
    }
    // Every fused score brought up to date with the paths so far.
    pool.ranked(&req.weights);
    let best = pool.best_match(&req.weights)?;
    let said = best.hit.event_time?;
    let speaker = best.hit.speaker.clone()?;
    let names = names_in(&best.hit.content, &speaker, &req.query);
    let asked = asked_names_in(&best.hit.content, &speaker, &req.query);
    if names.is_empty() && asked.is_empty() {
        return None;
    }
    let mut filters = req.filters.clone();
    filters.time_from = Some(filters.time_from.map_or(said, |from| from.max(said)));
    Some(Later {
        best: best.hit.node_id,
        score: best.trace.rrf,
        said,
        session: best.hit.session_id.clone(),
        query: LexicalQuery {
            owner: req.owner.clone(),
            text: names
                .iter()
                .chain(&asked)
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            filters,
            limit: NAME_HITS,
            common_share: None,
        },
        speaker,
        names,
        asked,
    })
}

/// Brings in the [`LATER_TURNS`] newest turns of the best match's speaker,
/// said after it, that name what it names (see the module docs), from
/// `read` when it was taken ahead, else read now.
pub(super) fn bring_in(
    tx: &mut dyn Tx,
    later: &Later,
    read: Option<Vec<LexicalHit>>,
    pool: &mut Pool,
) -> Result<(), Error> {
    let hits = match read {
        Some(hits) => hits,
        None => tx.search_lexical(&later.query)?,
    };
    // Each later turn of the speaker's, with the names it says again.
    let mut found: Vec<(LexicalHit, Vec<&str>)> = hits
        .into_iter()
        .filter(|h| h.node_id != later.best && h.speaker.as_deref() == Some(later.speaker.as_str()))
        .filter(|h| h.event_time.is_some_and(|t| t > later.said))
        // Said in the same sitting, a turn goes on with what the best
        // match said rather than saying what changed since ("…my buddy
        // Chris in Oakland now." then "Chris works at a bike shop…"); the
        // neighbour path reads those.
        .filter(|h| later.session.is_none() || h.session_id != later.session)
        .map(|h| {
            let mut again = names_again(&h.content, &later.names);
            if says_change(&h.content) {
                again.extend(names_again(&h.content, &later.asked));
            }
            (h, again)
        })
        .filter(|(_, again)| !again.is_empty())
        .collect();
    found.sort_by_key(|(h, _)| std::cmp::Reverse(h.event_time));
    for (i, (hit, again)) in found.into_iter().take(LATER_TURNS).enumerate() {
        let via = format!(
            "said after node {}, naming {} again",
            later.best,
            again.join(", ")
        );
        pool.add(
            hit,
            path(PathKind::Current, i, Some(later.score), Some(via)),
        );
    }
    Ok(())
}

/// The words of the names `text` mentions ([`expand::names_in`]: runs of
/// capitalised words inside a sentence, no month or weekday), without the
/// words of `speaker`'s name or of `question`, first seen first.
fn names_in(text: &str, speaker: &str, question: &str) -> Vec<String> {
    let known: HashSet<String> = words(speaker).into_iter().chain(words(question)).collect();
    let mut out: Vec<String> = Vec::new();
    for name in expand::names_in(text) {
        for word in name.split_whitespace() {
            let lower = word.to_lowercase();
            if !known.contains(&lower) && !out.iter().any(|w| w.to_lowercase() == lower) {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// The names the question uses (words written with a capital after its
/// first word) that `text` writes the same way, but not the words of
/// `speaker`'s name: "Sami" of "My brother Sami is moving to Toronto" for
/// "Is Sami still moving to Toronto?". Unlike [`names_in`] this takes a
/// sentence's first word too ("…taxes. Sami says I should hire someone."):
/// the question's capital says it is a name.
fn asked_names_in(text: &str, speaker: &str, question: &str) -> Vec<String> {
    let own: HashSet<String> = words(speaker).into_iter().collect();
    let split = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let capitalised = |w: &String| w.chars().next().is_some_and(char::is_uppercase);
    let asked: Vec<String> = split(question)
        .into_iter()
        .skip(1)
        // "I" is written with a capital and names nobody.
        .filter(|w| capitalised(w) && w.chars().count() > 1 && !own.contains(&w.to_lowercase()))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for word in split(text) {
        if asked.contains(&word) && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// Words that say something changed: "Sami changed his mind, he's staying
/// in Leeds instead", "…so he is on day shifts now", "Update: …", "no
/// longer", "not anymore".
const CHANGE_CUES: &[&str] = &[
    "changed", "instead", "anymore", "longer", "update", "switched", "quit", "stopped", "left",
    "moved", "now",
];

/// Whether `text` says something changed ([`CHANGE_CUES`]). A name the
/// question uses is followed only to such a turn: its last mention need
/// not answer ("Does Arjun still work nights?" is not answered by "…but
/// Arjun eats everything"), while "Arjun got promoted…, so he is on day
/// shifts now" does.
fn says_change(text: &str) -> bool {
    words(text)
        .iter()
        .any(|w| CHANGE_CUES.contains(&w.as_str()))
}

/// The `names` that `text` uses again ([`expand::mentions_name`]: as whole
/// words, ignoring case).
fn names_again<'a>(text: &str, names: &'a [String]) -> Vec<&'a str> {
    names
        .iter()
        .filter(|n| expand::mentions_name(text, n))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capitalised_words_inside_a_sentence() {
        let names = |text: &str, speaker: &str| names_in(text, speaker, "Now?");
        assert_eq!(
            names(
                "I started learning Dutch on Duolingo, every morning.",
                "Lena"
            ),
            ["Dutch", "Duolingo"]
        );
        // A sentence's first word, "I", and the speaker are not names.
        assert_eq!(
            names(
                "Yesterday I met Lena at Figma. Great day with Jo!",
                "Lena Berg"
            ),
            ["Figma"]
        );
        assert!(names("Honestly it was fine. Nothing new.", "Lena").is_empty());
        // Months and days name a time, not a thing.
        assert_eq!(
            names(
                "I ran Manchester in April, and on Monday I start with Lisbon.",
                "Sam"
            ),
            ["Manchester", "Lisbon"]
        );
    }

    #[test]
    fn what_the_question_names_is_not_followed() {
        let text = "My husband Arjun is a nurse at Seton.";
        assert_eq!(
            names_in(text, "Priya", "What does my husband do now?"),
            ["Arjun", "Seton"]
        );
        assert_eq!(
            names_in(text, "Priya", "Does Arjun still work nights?"),
            ["Seton"]
        );
    }

    #[test]
    fn a_name_the_question_uses_is_asked_not_followed_at_large() {
        let text = "My brother Sami is moving to Toronto in June.";
        assert_eq!(
            asked_names_in(text, "Noor", "Is Sami still moving to Toronto?"),
            ["Sami", "Toronto"]
        );
        assert!(asked_names_in(text, "Sami Haddad", "Is Sami still there?").is_empty());
        // A sentence's first word, when the question writes it as a name.
        assert_eq!(
            asked_names_in(
                "Ugh, taxes. Sami says hire someone.",
                "Noor",
                "Where does Sami live now?"
            ),
            ["Sami"]
        );
        assert!(
            asked_names_in("Ugh, taxes. Sami says hi.", "Noor", "where does sami live").is_empty()
        );
        assert!(asked_names_in("I said I would.", "Noor", "What do I say now?").is_empty());
        assert!(says_change(
            "Sami changed his mind, he's staying in Leeds instead."
        ));
        assert!(says_change("So he is on day shifts now."));
        assert!(!says_change("I'm vegetarian but Arjun eats everything."));
    }

    #[test]
    fn a_name_said_again_is_found_whatever_its_case() {
        let names = vec!["Duolingo".to_string(), "Figma".to_string()];
        assert_eq!(names_again("I quit duolingo!", &names), ["Duolingo"]);
        assert!(names_again("I quit the app.", &names).is_empty());
    }
}
