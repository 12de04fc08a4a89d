//! "Where does Chris work?" asks about Chris, who is no speaker: he is
//! someone the user talks about. A turn that does not name him can still
//! answer (the next turn's "he"), but the turn that does is where the
//! answer most often is, and the question's other words ("work") match
//! the user's own turns about their own job as well. For a question that
//! names a person of the graph (an entity typed `person`, named as people
//! say names: [`super::names`]) who is not a speaker it names, turns that
//! name them are multiplied by `1 + weights.person`
//! ([`boost_named_people`]) — the speaker boost's idea for the people
//! spoken about, at the size of the other answer-form boosts.
//!
//! Only the graph's people count: a name in the question that no
//! extraction typed a person (a game, a shop, a city) boosts nothing, so a
//! store()-only memory, which has no entities, is ranked as before.

use super::fusion::PathWeights;
use super::names::QueryWords;
use super::pool::Pool;
use super::speakers::NamedSpeaker;

/// Boosts every candidate that names one of `people` (person entities the
/// query names, [`super::graph::GraphFindings::named_people`]) by
/// `1 + weights.person`, leaving out anyone among the `speakers` the query
/// names (the speaker boost reads those). Does nothing when the weight
/// is 0.
pub fn boost_named_people(
    people: &[String],
    speakers: &[NamedSpeaker],
    weights: &PathWeights,
    pool: &mut Pool,
) {
    let people: Vec<&String> = people
        .iter()
        .filter(|p| !speakers.iter().any(|s| s.name.eq_ignore_ascii_case(p)))
        .collect();
    if weights.person <= 0.0 || people.is_empty() {
        return;
    }
    pool.boost_each("names_person", 1.0 + weights.person, |c| {
        let said = QueryWords::new(&c.hit.content);
        let (name, how) = people
            .iter()
            .find_map(|p| said.mentions(p, true).map(|m| (p, m)))?;
        Some(format!(
            "the query asks about {name}, not a speaker; this names them ({})",
            how.describe()
        ))
    });
}
