//! The figures of `kith bench extract`, as pure functions of plain data:
//! a conversation's turns and annotated observations on one side, the
//! entities and claims a memory derived from it on the other. No store, no
//! provider: every rule here is checked by the unit tests below.
//!
//! Definitions (issue 14; BENCHMARKS.md restates them):
//!
//! - **coverage**: share of observations (about speaker S, evidence turns
//!   T…) for which some claim grounded in one of T is bound to S's person
//!   entity (an entity named exactly S, typed `person`);
//! - **matched coverage**: the same, where that claim's predicate + object
//!   share at least one [content word](content_words) with the observation,
//!   S's name left out of both;
//! - **claim precision**: share of claims that match, in that way, some
//!   observation of one of their evidence turns about the person they are
//!   bound to (a lower bound: observations are not exhaustive);
//! - **binding precision**: share of claims bound to a person P whose every
//!   evidence turn was said by P or names P;
//! - **speaker nodes**: entities named exactly like each speaker;
//! - **junk entities**: share of named entities whose surface occurs in the
//!   conversation in lower case more often than capitalised away from a
//!   sentence start.
//!
//! Counts are kept, not ratios, so that halves and the overall figure are
//! pooled over observations and claims (micro averages), never averages of
//! per-conversation ratios.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

/// The entity type of a person.
pub const PERSON: &str = "person";

/// The entity type kith gives an unresolved personal reference ("I" of a
/// turn without speaker, "we"): a placeholder, not a name, so it is left
/// out of the junk figure.
pub const PERSONAL_REFERENCE: &str = "personal_reference";

/// A turn of the conversation.
#[derive(Debug, Clone)]
pub struct TurnView {
    /// Its id (`D1:3`).
    pub id: String,
    /// Who said it.
    pub speaker: String,
    /// What was stored.
    pub text: String,
}

/// An annotated observation.
#[derive(Debug, Clone)]
pub struct ObservationView {
    /// The person it is about.
    pub speaker: String,
    /// The annotator's sentence.
    pub text: String,
    /// Its evidence turn ids.
    pub turns: Vec<String>,
}

/// An active entity of the memory.
#[derive(Debug, Clone)]
pub struct EntityView {
    /// Its name (the node's content).
    pub name: String,
    /// Its `entity_type`.
    pub entity_type: String,
}

/// An active claim of the memory.
#[derive(Debug, Clone)]
pub struct ClaimView {
    /// Its predicate.
    pub predicate: String,
    /// Its object as extracted (a name or a value).
    pub object: String,
    /// The ids of every turn it is grounded in (a merged claim has several).
    pub turns: Vec<String>,
    /// Indexes into the entity list of the entities it is bound to (its
    /// open HAS_FACT edges).
    pub bound_to: Vec<usize>,
}

/// Everything scored for one conversation.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The speakers' names.
    pub speakers: Vec<String>,
    /// Every stored turn.
    pub turns: Vec<TurnView>,
    /// The observations.
    pub observations: Vec<ObservationView>,
    /// Active entities.
    pub entities: Vec<EntityView>,
    /// Active claims.
    pub claims: Vec<ClaimView>,
}

/// The counts behind the figures; add them to pool conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Observations scored.
    pub observations: usize,
    /// Observations covered.
    pub covered: usize,
    /// Observations covered by a claim sharing a content word.
    pub matched: usize,
    /// Active claims.
    pub claims: usize,
    /// Claims matching an observation.
    pub matching_claims: usize,
    /// Claims bound to a person.
    pub bound_claims: usize,
    /// Of those, claims whose every evidence turn was said by or names the
    /// person.
    pub well_bound_claims: usize,
    /// Active named entities (personal references left out).
    pub entities: usize,
    /// Of those, junk.
    pub junk_entities: usize,
    /// Speakers with exactly one entity named like them.
    pub speakers_with_one_node: usize,
    /// Speakers.
    pub speakers: usize,
}

impl Counts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Counts) {
        self.observations += other.observations;
        self.covered += other.covered;
        self.matched += other.matched;
        self.claims += other.claims;
        self.matching_claims += other.matching_claims;
        self.bound_claims += other.bound_claims;
        self.well_bound_claims += other.well_bound_claims;
        self.entities += other.entities;
        self.junk_entities += other.junk_entities;
        self.speakers_with_one_node += other.speakers_with_one_node;
        self.speakers += other.speakers;
    }

    /// The ratios.
    pub fn figures(&self) -> Figures {
        Figures {
            coverage: ratio(self.covered, self.observations),
            matched_coverage: ratio(self.matched, self.observations),
            claim_precision: ratio(self.matching_claims, self.claims),
            binding_precision: ratio(self.well_bound_claims, self.bound_claims),
            junk_share: ratio(self.junk_entities, self.entities),
        }
    }
}

/// The figures, each `None` when its denominator is zero (no claims means
/// no precision, not a precision of 0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    /// covered / observations.
    pub coverage: Option<f64>,
    /// matched / observations.
    pub matched_coverage: Option<f64>,
    /// matching claims / claims.
    pub claim_precision: Option<f64>,
    /// well-bound claims / claims bound to a person.
    pub binding_precision: Option<f64>,
    /// junk entities / named entities.
    pub junk_share: Option<f64>,
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// One conversation's score: the counts, how many entities bear each
/// speaker's name, and the junk surfaces (for a look at what they are).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// The counts.
    pub counts: Counts,
    /// Per speaker, the entities named exactly like them.
    pub speaker_nodes: BTreeMap<String, usize>,
    /// The surfaces counted as junk, in entity order.
    pub junk: Vec<String>,
    /// Per observation, in order: (covered, matched).
    pub observation_hits: Vec<(bool, bool)>,
    /// Per claim, in order: whether it matches an observation.
    pub claim_matches: Vec<bool>,
}

/// Scores one conversation.
pub fn score(c: &Conversation) -> Score {
    let turns: HashMap<&str, &TurnView> = c.turns.iter().map(|t| (t.id.as_str(), t)).collect();
    let persons_of = persons_of_speakers(c);
    let persons_named = |name: &str| persons_of.get(name).map_or(&[][..], Vec::as_slice);
    let mut counts = Counts {
        observations: c.observations.len(),
        claims: c.claims.len(),
        ..Counts::default()
    };

    // Content words of each observation, S's name left out; of each claim
    // per observation speaker (the name to leave out depends on whom the
    // claim is compared with).
    let obs_words: Vec<BTreeSet<String>> = c
        .observations
        .iter()
        .map(|o| content_words(&o.text, &o.speaker))
        .collect();
    let claim_words = |claim: &ClaimView, speaker: &str| {
        content_words(&format!("{} {}", claim.predicate, claim.object), speaker)
    };

    let mut observation_hits = Vec::with_capacity(c.observations.len());
    for (o, words) in c.observations.iter().zip(&obs_words) {
        let persons = persons_named(&o.speaker);
        let candidates = c.claims.iter().filter(|claim| {
            claim.bound_to.iter().any(|e| persons.contains(e))
                && claim.turns.iter().any(|t| o.turns.contains(t))
        });
        let mut covered = false;
        let mut matched = false;
        for claim in candidates {
            covered = true;
            if !claim_words(claim, &o.speaker).is_disjoint(words) {
                matched = true;
                break;
            }
        }
        counts.covered += usize::from(covered);
        counts.matched += usize::from(matched);
        observation_hits.push((covered, matched));
    }

    let mut claim_matches = Vec::with_capacity(c.claims.len());
    for claim in &c.claims {
        let matches = c.observations.iter().zip(&obs_words).any(|(o, words)| {
            claim.turns.iter().any(|t| o.turns.contains(t))
                && claim
                    .bound_to
                    .iter()
                    .any(|e| persons_named(&o.speaker).contains(e))
                && !claim_words(claim, &o.speaker).is_disjoint(words)
        });
        counts.matching_claims += usize::from(matches);
        claim_matches.push(matches);

        let persons: Vec<&EntityView> = claim
            .bound_to
            .iter()
            .filter_map(|i| c.entities.get(*i))
            .filter(|e| e.entity_type == PERSON)
            .collect();
        if persons.is_empty() {
            continue;
        }
        counts.bound_claims += 1;
        counts.well_bound_claims += usize::from(well_bound(claim, &persons, &turns));
    }

    let mut speaker_nodes = BTreeMap::new();
    for s in &c.speakers {
        let n = c.entities.iter().filter(|e| &e.name == s).count();
        speaker_nodes.insert(s.clone(), n);
    }
    counts.speakers = speaker_nodes.len();
    counts.speakers_with_one_node = speaker_nodes.values().filter(|n| **n == 1).count();

    let junk = junk_entities(c, &mut counts);
    Score {
        counts,
        speaker_nodes,
        junk,
        observation_hits,
        claim_matches,
    }
}

/// Each observed person's person entities (indexes), by name.
fn persons_of_speakers(c: &Conversation) -> HashMap<&str, Vec<usize>> {
    let mut persons_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for o in &c.observations {
        persons_of.entry(o.speaker.as_str()).or_insert_with(|| {
            c.entities
                .iter()
                .enumerate()
                .filter(|(_, e)| e.entity_type == PERSON && e.name == o.speaker)
                .map(|(i, _)| i)
                .collect()
        });
    }
    persons_of
}

/// Whether every person `claim` is bound to speaks or is named in every
/// turn the claim rests on.
fn well_bound(
    claim: &ClaimView,
    persons: &[&EntityView],
    turns: &HashMap<&str, &TurnView>,
) -> bool {
    // Every binding must be supported by every turn the claim rests
    // on: a merged claim is as good as its weakest evidence.
    persons.iter().all(|p| {
        !claim.turns.is_empty()
            && claim.turns.iter().all(|t| {
                turns.get(t.as_str()).is_some_and(|turn| {
                    turn.speaker == p.name
                        || kith::extract::grounding::mentions(&turn.text, &p.name)
                })
            })
    })
}

/// Counts the entities (personal references aside) and the junk among
/// them, words more often lower-case than capitalised mid-sentence in the
/// turns; returns the junk names.
fn junk_entities(c: &Conversation, counts: &mut Counts) -> Vec<String> {
    let texts: Vec<&str> = c.turns.iter().map(|t| t.text.as_str()).collect();
    let mut junk = Vec::new();
    for e in &c.entities {
        if e.entity_type == PERSONAL_REFERENCE {
            continue;
        }
        counts.entities += 1;
        let usage = surface_usage(&e.name, &texts);
        if usage.lower > usage.capitalised_mid_sentence {
            counts.junk_entities += 1;
            junk.push(e.name.clone());
        }
    }
    junk
}

/// How a surface is written across a conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SurfaceUsage {
    /// Occurrences written all in lower case.
    pub lower: usize,
    /// Occurrences starting with a capital, not at the start of a sentence.
    pub capitalised_mid_sentence: usize,
}

/// Counts the whole-word, case-insensitive occurrences of `surface` in
/// `texts` by how they are written. A capital at the start of a sentence
/// says nothing about a word (every sentence starts with one), so only
/// capitals away from it count as evidence of a name.
pub fn surface_usage(surface: &str, texts: &[&str]) -> SurfaceUsage {
    let needle: Vec<String> = words(surface).map(|(_, w)| w.to_lowercase()).collect();
    let mut usage = SurfaceUsage::default();
    if needle.is_empty() {
        return usage;
    }
    for text in texts {
        for span in kith::extract::grounding::sentence_spans(text) {
            let sentence = &text[span];
            let found: Vec<(usize, &str)> = words(sentence).collect();
            for start in 0..found.len() {
                let Some(window) = found.get(start..start + needle.len()) else {
                    break;
                };
                if !window
                    .iter()
                    .zip(&needle)
                    .all(|((_, w), n)| w.to_lowercase() == *n)
                {
                    continue;
                }
                let written: Vec<&str> = window.iter().map(|(_, w)| *w).collect();
                if written.iter().all(|w| *w == w.to_lowercase()) {
                    usage.lower += 1;
                } else if start > 0 && written[0].chars().next().is_some_and(char::is_uppercase) {
                    usage.capitalised_mid_sentence += 1;
                }
            }
        }
    }
    usage
}

/// The words of a text with their byte offsets: runs of letters and digits
/// (an apostrophe splits, so "Caroline's" gives "Caroline" and "s").
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// English function words, contraction pieces ("don" of "don't") and
/// pronouns: they say nothing about what an observation is about. The list
/// is the benchmark's own and fixed, so figures stay comparable when
/// retrieval's stopwords change.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "couldn",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "same",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The content words of `text`: lower-cased words (see [`words`]; a
/// predicate's `_` and `-` split too) of two or more characters, stemmed
/// ([`stem`]), without stopwords and without the words of `name` (the
/// person the text is about, whose name would otherwise match every
/// observation about them).
pub fn content_words(text: &str, name: &str) -> BTreeSet<String> {
    let name_words: BTreeSet<String> = words(name).map(|(_, w)| stem(&w.to_lowercase())).collect();
    words(text)
        .map(|(_, w)| w.to_lowercase())
        .filter(|w| w.chars().count() >= 2 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .filter(|w| !name_words.contains(w))
        .collect()
}

/// A deliberately simple English stemmer, so that "paints", "painted" and
/// "painting" meet, as do "loves" and "loving" or "studies" and "studied":
/// plural and third-person `s`, then `ing` or `ed` (undoubling "runn"),
/// then a final `i` read as `y` and a final `e` dropped. It conflates a
/// few unrelated words; both sides of every comparison go through it.
pub fn stem(word: &str) -> String {
    let mut s = word.to_string();
    let len = |s: &str| s.chars().count();
    if s.ends_with("ies") && len(&s) > 4 {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
        && len(&s) > 3
    {
        s.pop();
    }
    for suffix in ["ing", "ed"] {
        if s.ends_with(suffix) && len(&s) >= suffix.len() + 3 {
            s.truncate(s.len() - suffix.len());
            let b = s.as_bytes();
            let n = b.len();
            if n >= 2 && b[n - 1] == b[n - 2] && !b"aeioulsz".contains(&b[n - 1]) {
                s.pop();
            }
            break;
        }
    }
    if s.ends_with('i') && len(&s) > 2 {
        s.pop();
        s.push('y');
    }
    if s.ends_with('e') && len(&s) > 3 {
        s.pop();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str, speaker: &str, text: &str) -> TurnView {
        TurnView {
            id: id.into(),
            speaker: speaker.into(),
            text: text.into(),
        }
    }

    fn obs(speaker: &str, text: &str, turns: &[&str]) -> ObservationView {
        ObservationView {
            speaker: speaker.into(),
            text: text.into(),
            turns: turns.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn entity(name: &str, entity_type: &str) -> EntityView {
        EntityView {
            name: name.into(),
            entity_type: entity_type.into(),
        }
    }

    fn claim(predicate: &str, object: &str, turns: &[&str], bound_to: &[usize]) -> ClaimView {
        ClaimView {
            predicate: predicate.into(),
            object: object.into(),
            turns: turns.iter().map(|t| t.to_string()).collect(),
            bound_to: bound_to.to_vec(),
        }
    }

    /// Ana and Ben; entity 0 is Ana (person), 1 Ben (person).
    fn conversation(
        turns: Vec<TurnView>,
        observations: Vec<ObservationView>,
        mut extra: Vec<EntityView>,
        claims: Vec<ClaimView>,
    ) -> Conversation {
        let mut entities = vec![entity("Ana", PERSON), entity("Ben", PERSON)];
        entities.append(&mut extra);
        Conversation {
            speakers: vec!["Ana".into(), "Ben".into()],
            turns,
            observations,
            entities,
            claims,
        }
    }

    #[test]
    fn stemming_meets_inflections() {
        for (a, b) in [
            ("paints", "painting"),
            ("painted", "paint"),
            ("loves", "loving"),
            ("studies", "studied"),
            ("running", "runs"),
            ("classes", "class"),
            ("hikes", "hiking"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("paint"), stem("pain"));
        assert_eq!(stem("bus"), "bus");
    }

    #[test]
    fn content_words_drop_stopwords_short_words_and_the_name() {
        let w = content_words("Ana's kids love the beach, and Ana paints", "Ana");
        let expected: BTreeSet<String> = ["kid", "lov", "beach", "paint"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(w, expected);
        // Predicates split at `_`.
        assert!(content_words("has_sister", "Ana").contains("sister"));
        assert!(!content_words("has_sister", "Ana").contains("has"));
    }

    #[test]
    fn coverage_counts_a_merged_claims_later_evidence() {
        // The claim was first grounded in D1:1 and merged with its repeat in
        // D1:3: it covers an observation of D1:3 too. Reading only the first
        // evidence reference would leave that observation uncovered.
        let c = conversation(
            vec![
                turn("D1:1", "Ana", "I love painting."),
                turn("D1:2", "Ben", "Nice."),
                turn("D1:3", "Ana", "I still love painting!"),
            ],
            vec![
                obs("Ana", "Ana paints landscapes.", &["D1:3"]),
                obs("Ana", "Ana has two kids.", &["D1:2"]),
            ],
            vec![],
            vec![claim("likes", "painting", &["D1:1", "D1:3"], &[0])],
        );
        let s = score(&c);
        assert_eq!(s.counts.observations, 2);
        assert_eq!(s.counts.covered, 1);
        assert_eq!(s.counts.matched, 1);
        assert_eq!(s.counts.figures().coverage, Some(0.5));
    }

    #[test]
    fn coverage_needs_the_observed_person_not_the_speaker_of_the_turn() {
        // Ben's turn, Ben's claim, but the observation is about Ana: not
        // covered (a count by turn alone would say it is).
        let c = conversation(
            vec![turn("D1:1", "Ben", "Ana and I went hiking.")],
            vec![obs("Ana", "Ana went hiking with Ben.", &["D1:1"])],
            vec![],
            vec![claim("went", "hiking", &["D1:1"], &[1])],
        );
        let s = score(&c);
        assert_eq!((s.counts.covered, s.counts.matched), (0, 0));
        // Bound to Ana instead, it covers and matches.
        let mut c = c;
        c.claims[0].bound_to = vec![0];
        let s = score(&c);
        assert_eq!((s.counts.covered, s.counts.matched), (1, 1));
    }

    #[test]
    fn coverage_needs_a_person_entity_named_like_the_speaker() {
        // An `other` entity that happens to be called Ana is not Ana.
        let c = conversation(
            vec![turn("D1:1", "Ana", "I love painting.")],
            vec![obs("Ana", "Ana loves painting.", &["D1:1"])],
            vec![entity("Ana", "other")],
            vec![claim("likes", "painting", &["D1:1"], &[2])],
        );
        let s = score(&c);
        assert_eq!(s.counts.covered, 0);
        assert_eq!(s.counts.matching_claims, 0);
        // And a name counted twice is two speaker nodes.
        assert_eq!(s.speaker_nodes["Ana"], 2);
        assert_eq!(s.speaker_nodes["Ben"], 1);
        assert_eq!(s.counts.speakers_with_one_node, 1);
    }

    #[test]
    fn the_name_alone_is_no_match() {
        // "name Ana" shares only Ana's own name with the observation: covered
        // but not matched, and no matching claim.
        let c = conversation(
            vec![turn("D1:1", "Ana", "I'm Ana, by the way.")],
            vec![obs("Ana", "Ana introduced herself to Ben.", &["D1:1"])],
            vec![],
            vec![claim("name", "Ana", &["D1:1"], &[0])],
        );
        let s = score(&c);
        assert_eq!((s.counts.covered, s.counts.matched), (1, 0));
        assert_eq!(s.counts.matching_claims, 0);
        assert_eq!(s.counts.figures().claim_precision, Some(0.0));
    }

    #[test]
    fn claim_precision_counts_each_claim_once_and_unbound_claims_as_misses() {
        // Two observations match the first claim (counted once); the second
        // claim matches the words but is bound to nobody; the third is about
        // something no observation mentions.
        let c = conversation(
            vec![turn("D1:1", "Ana", "I adopted a puppy and I love dogs.")],
            vec![
                obs("Ana", "Ana adopted a puppy.", &["D1:1"]),
                obs("Ana", "Ana has a new puppy.", &["D1:1"]),
            ],
            vec![],
            vec![
                claim("adopted", "a puppy", &["D1:1"], &[0]),
                claim("adopted", "a puppy", &["D1:1"], &[]),
                claim("likes", "dogs", &["D1:1"], &[0]),
            ],
        );
        let s = score(&c);
        assert_eq!(s.counts.claims, 3);
        assert_eq!(s.counts.matching_claims, 1);
        assert!((s.counts.figures().claim_precision.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn binding_precision_checks_every_evidence_turn() {
        let c = conversation(
            vec![
                turn("D1:1", "Ana", "I love painting."),
                turn("D1:2", "Ben", "Ana's painting is lovely."),
                turn("D1:3", "Ben", "I love painting too."),
                turn("D1:4", "Ben", "Anabel paints."),
            ],
            vec![],
            vec![entity("Paris", "place")],
            vec![
                // Said by Ana: well bound.
                claim("likes", "painting", &["D1:1"], &[0]),
                // Said by Ben but names Ana: well bound.
                claim("paints", "well", &["D1:2"], &[0]),
                // Merged with Ben's own turn, still bound to Ana: one bad
                // turn spoils it (a first-evidence check would pass it).
                claim("likes", "painting", &["D1:1", "D1:3"], &[0]),
                // "Anabel" does not name Ana (whole words only).
                claim("paints", "x", &["D1:4"], &[0]),
                // Bound to a place: not a person binding, not counted.
                claim("has", "painting", &["D1:1"], &[2]),
            ],
        );
        let s = score(&c);
        assert_eq!(s.counts.bound_claims, 4);
        assert_eq!(s.counts.well_bound_claims, 2);
        assert_eq!(s.counts.figures().binding_precision, Some(0.5));
    }

    #[test]
    fn junk_is_judged_away_from_sentence_starts() {
        let texts = [
            "Absolutely! I absolutely agree. That is absolutely fine.",
            "Aww. Aww, that's sweet.",
            "I met Sam today. Sam said hi to sam and Sam.",
            "Pottery class? I love the Pottery class, the pottery class rocks.",
        ];
        // Capitalised only at sentence starts, lower case twice: junk.
        assert_eq!(
            surface_usage("Absolutely", &texts),
            SurfaceUsage {
                lower: 2,
                capitalised_mid_sentence: 0
            }
        );
        // Only ever at sentence starts, never lower case: 0 > 0 is false, not
        // junk by this rule (the definition needs lower-case evidence).
        assert_eq!(surface_usage("Aww", &texts), SurfaceUsage::default());
        // A name: capitalised mid-sentence twice (after "met", after "and"),
        // lower case once; the sentence-initial "Sam" counts for neither.
        assert_eq!(
            surface_usage("Sam", &texts),
            SurfaceUsage {
                lower: 1,
                capitalised_mid_sentence: 2
            }
        );
        // Multi-word surfaces match word by word.
        assert_eq!(
            surface_usage("Pottery Class", &texts),
            SurfaceUsage {
                lower: 1,
                capitalised_mid_sentence: 1
            }
        );
        // Whole words only: "Sam" is not in "Samuel" or "sesame".
        assert_eq!(
            surface_usage("Sam", &["Samuel and sesame."]),
            SurfaceUsage::default()
        );

        let c = conversation(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| turn(&format!("D1:{i}"), "Ana", t))
                .collect(),
            vec![],
            vec![
                entity("Absolutely", "other"),
                entity("Aww", "other"),
                entity("Sam", "person"),
                // A placeholder, not a name: left out entirely.
                entity("we", PERSONAL_REFERENCE),
            ],
            vec![],
        );
        let s = score(&c);
        // Ana, Ben, Absolutely, Aww, Sam.
        assert_eq!(s.counts.entities, 5);
        assert_eq!(s.counts.junk_entities, 1);
        assert_eq!(s.junk, ["Absolutely"]);
        assert_eq!(s.counts.figures().junk_share, Some(0.2));
    }

    #[test]
    fn figures_pool_counts_and_say_none_without_a_denominator() {
        let empty = score(&conversation(vec![], vec![], vec![], vec![]));
        let f = empty.counts.figures();
        assert_eq!(f.coverage, None);
        assert_eq!(f.claim_precision, None);
        assert_eq!(f.binding_precision, None);
        // Pooling: 1 of 1 plus 0 of 3 is 1 of 4, not the mean 0.5.
        let mut a = Counts {
            observations: 1,
            covered: 1,
            ..Counts::default()
        };
        a.add(&Counts {
            observations: 3,
            ..Counts::default()
        });
        assert_eq!(a.figures().coverage, Some(0.25));
    }
}
