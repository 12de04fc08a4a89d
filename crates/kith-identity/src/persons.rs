//! Which names in a turn are (or could be) people, and whether a turn
//! speaks for somebody other than its author.
//!
//! - [`could_be_person`]: an extracted entity that might name a person —
//!   typed `person`, or typed nothing a person cannot be (`other`, blank, an
//!   unknown type), unless its name is only what one *is* ("Brazilian",
//!   "Tired"; [`kith_extract::lexicon`]).
//! - [`reports_speech`]: the turn quotes or reports someone ("Jordan wrote:
//!   'I hate sushi'", "Jordan texted me: I love cilantro"): a quotation mark
//!   or a reporting verb.
//! - [`names_somebody`]: either of the above. Under `kith_ingest_v3` a turn
//!   that names somebody never carries the owner's name; under
//!   `kith_ingest_v2` only a listed `person` counted, which let the
//!   heuristic's untyped names and quoted first person through.
//! - [`quotes_first_person`], [`reports_first_person`]: a claim's sentence
//!   gives its I to someone else, in quotation marks (`kith_ingest_v5`) or
//!   after a reporting word and a colon (`kith_ingest_v6`);
//!   [`authors_first_person`]: a claim of such a sentence that is still the
//!   author's own, its first person and its other endpoint outside the
//!   relayed words (`kith_ingest_v7`); [`first_person_is_someone_elses`]
//!   applies the three under a policy.
//! - [`person_types`]: one person, one node. A listed name typed `other` (or
//!   nothing) that is the turn's speaker or a person the owner's scope
//!   already has is typed `person`, so it reuses that person's entity
//!   instead of becoming a second one.
//! - [`person_node`]: one person, one node in the other order (under
//!   `kith_ingest_v4`). A name first stored untyped ("I like Jordan." under
//!   the heuristic) that later turns out to be a person (Jordan speaks, or a
//!   model types the name `person`) keeps its node: the person adopts it
//!   instead of getting a second one. Namesakes of real different types
//!   (a place, an organization) stay apart.

use kith_extract::grounding::{normalize_quote_mark, personal_family};
use kith_extract::lexicon;
use kith_extract::quotes::quoted_spans;
use kith_extract::ExtractedEntity;

use crate::policy::Policy;

/// Entity types a person can never have. Anything else — `person`,
/// `other`, blank, a type not listed here — could be a person.
pub const NOT_PERSON_TYPES: &[&str] = &[
    "organization",
    "organisation",
    "company",
    "place",
    "location",
    "city",
    "country",
    "region",
    "technology",
    "tool",
    "product",
    "software",
    "language",
    "programming_language",
    "concept",
    "event",
    "date",
    "time",
    "number",
    "quantity",
    "chemical",
    "element",
    "food",
    "drink",
    "animal",
    "pet",
    "team",
    "project",
];

/// Words that report what someone said or wrote (one list, shared with
/// grounding's reported-speech rule).
pub use kith_extract::reported::REPORTING_VERBS;

/// Whether `entity` might name a person (see the module documentation).
pub fn could_be_person(entity: &ExtractedEntity) -> bool {
    let ty = entity
        .entity_type
        .trim()
        .to_lowercase()
        .replace([' ', '-'], "_");
    !NOT_PERSON_TYPES.contains(&ty.as_str()) && lexicon::is_name_like(&entity.name)
}

/// Whether `content` quotes or reports speech: a double quotation mark (any
/// style), a single quotation mark that opens a quote (after a space, a
/// colon or the start, before a letter — so "I'm" and "Jordan's" are not
/// quotes), or a [`REPORTING_VERBS`] word.
pub fn reports_speech(content: &str) -> bool {
    let chars: Vec<char> = content.chars().map(normalize_quote_mark).collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '"' {
            return true;
        }
        if *c == '\'' {
            let opens = i == 0
                || chars[i - 1].is_whitespace()
                || matches!(chars[i - 1], ':' | '(' | '[' | '-' | '\u{2014}');
            if opens && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric()) {
                return true;
            }
        }
    }
    words(content).any(|w| REPORTING_VERBS.contains(&w.as_str()))
}

/// Whether `sentence` has a first-person word (I, me, my, mine, myself)
/// inside quotation marks: a double quotation mark of any style opens and
/// closes a quote; a single one opens a quote as in [`reports_speech`]
/// (after a space, a colon or the start, before a letter) and closes at the
/// next single mark not followed by a letter ("I'm" inside stays inside).
/// `Caroline said, "I painted a lake sunrise."` quotes a first person;
/// `I read "Becoming Nicole".` does not.
pub fn quotes_first_person(sentence: &str) -> bool {
    quoted_spans(sentence)
        .into_iter()
        .any(|span| words(&sentence[span]).any(|w| is_first_person(&w)))
}

/// Words besides [`REPORTING_VERBS`] that introduce someone's words before
/// a colon in chat ("Mom goes: …", "Sam asked: …").
const QUOTATIVES: &[&str] = &["asks", "asked", "goes"];

/// Capitalised words that label a line without naming its speaker
/// ("Update: I got the job!"), lower case: such a line is the author's.
const NOT_SPEAKER_LABELS: &[&str] = &[
    "update",
    "note",
    "ps",
    "p.s",
    "edit",
    "btw",
    "fyi",
    "spoiler",
    "reminder",
    "summary",
    "question",
    "answer",
    "q",
    "a",
    "tldr",
    "tl;dr",
    "warning",
    "important",
    "news",
    "status",
    "result",
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "lol",
    "omg",
    "fun",
    "fact",
    "me",
    "i",
    "myself",
    "also",
    "anyway",
    "so",
    "ok",
    "okay",
    "well",
    "honestly",
    "confession",
    "big",
    "good",
    "bad",
    "breaking",
    "quick",
    "random",
    "final",
    "new",
    "latest",
    "small",
    "thought",
    "thoughts",
    "idea",
    "plan",
    "goal",
    "goals",
    "tip",
    "problem",
    "issue",
    "context",
    "story",
    "day",
    "week",
    "weekend",
    "morning",
    "evening",
];

/// Whether `sentence` gives someone else's words in the first person
/// after a colon, without quotation marks:
///
/// - **reported**: a reporting word ([`REPORTING_VERBS`] but "according",
///   or [`QUOTATIVES`]) among the three words before the colon and no `I`
///   among them (`I told Dev: I'm leaving.` is the author quoting
///   themselves): `Dev says: I'm allergic to peanuts.`, `Jordan texted me:
///   I love cilantro.`;
/// - **a transcript line**: the line starts with one to three capitalised
///   words and the colon (`Dev: I hate sushi`, pasted from a chat), unless
///   they label the line rather than name a speaker ([`NOT_SPEAKER_LABELS`]:
///   `Update: I got the job!`, `Me: I'm in`);
///
/// and a first-person word (I, me, my, mine, myself) after the colon.
pub fn reports_first_person(sentence: &str) -> bool {
    reporting_colons(sentence).any(|at| words(&sentence[at + 1..]).any(|w| is_first_person(&w)))
}

/// The byte offsets of the colons in `sentence` that introduce someone
/// else's words: after a reporting word (not with an `I` among the three
/// words before it) or after a speaker's label, as [`reports_first_person`]
/// describes.
fn reporting_colons(sentence: &str) -> impl Iterator<Item = usize> + '_ {
    sentence.match_indices(':').map(|(at, _)| at).filter(|&at| {
        let before: Vec<String> = words(&sentence[..at]).collect();
        let lead = &before[before.len().saturating_sub(3)..];
        let reported = lead.iter().any(|w| {
            (REPORTING_VERBS.contains(&w.as_str()) && w != "according")
                || QUOTATIVES.contains(&w.as_str())
        }) && !lead.iter().any(|w| before_apostrophe(w) == "i");
        reported || is_speaker_label(&sentence[..at])
    })
}

/// Whether a claim of `sentence` whose other endpoint is `other` is in the
/// author's own first person although the sentence also relays someone
/// else's (`kith_ingest_v7`): a first-person word stands outside every
/// quote and before any reporting colon, and so does `other` (as whole
/// words, any case), which is nowhere in the relayed words. In `My boss
/// Karen said "I am quitting in June".` the claim `I has_boss Karen` is the
/// author's and `I quitting_in June` is Karen's; an `other` that is itself a
/// first person, or that the sentence does not write, tells nothing.
pub fn authors_first_person(sentence: &str, other: &str) -> bool {
    let other: Vec<String> = words(other).collect();
    if other.is_empty() || other.iter().all(|w| is_first_person(w)) {
        return false;
    }
    let own_end = reporting_colons(sentence).next().unwrap_or(sentence.len());
    let mut own = Vec::new();
    let mut relayed = vec![&sentence[own_end..]];
    let mut from = 0;
    for span in quoted_spans(sentence) {
        if span.start >= own_end {
            break;
        }
        own.push(&sentence[from..span.start]);
        relayed.push(&sentence[span.start..span.end.min(own_end)]);
        from = span.end;
    }
    if from < own_end {
        own.push(&sentence[from..own_end]);
    }
    let writes = |parts: &[&str]| parts.iter().any(|p| writes_words(p, &other));
    own.iter().any(|p| words(p).any(|w| is_first_person(&w))) && writes(&own) && !writes(&relayed)
}

/// Whether `text` has the words `phrase` in a row, any case; the last may
/// carry a possessive (`Ana's` writes `Ana`).
fn writes_words(text: &str, phrase: &[String]) -> bool {
    let ws: Vec<String> = words(text).collect();
    ws.windows(phrase.len()).any(|window| {
        window.iter().zip(phrase).enumerate().all(|(k, (w, p))| {
            w == p || (k + 1 == phrase.len() && before_apostrophe(w) == p.as_str())
        })
    })
}

/// Whether, under `policy`, the first person of a claim of `sentence`
/// whose other endpoint is `other` is someone else's: quoted
/// ([`quotes_first_person`], `kith_ingest_v5`) or reported after a colon
/// ([`reports_first_person`], `kith_ingest_v6`), unless the claim stands in
/// the author's own words ([`authors_first_person`], `kith_ingest_v7`).
pub fn first_person_is_someone_elses(sentence: &str, other: &str, policy: Policy) -> bool {
    let relayed = (policy.has_v5_rules() && quotes_first_person(sentence))
        || (policy.has_v6_rules() && reports_first_person(sentence));
    relayed && !(policy.has_v7_rules() && authors_first_person(sentence, other))
}

/// Whether `word` is the singular first person: I, me, my, mine, myself
/// (grounding's family, [`personal_family`]), any case; `I'm` and `I've`
/// count as I.
fn is_first_person(word: &str) -> bool {
    personal_family(before_apostrophe(word)).is_some_and(|family| family.contains(&"i"))
}

/// `word` up to its first apostrophe (`i'm` → `i`), as [`words`] keeps it.
fn before_apostrophe(word: &str) -> &str {
    word.split('\'').next().unwrap_or(word)
}

/// Whether the text before a colon (`before` ends where the colon is) ends
/// in a speaker's label: one to three capitalised words from the start of
/// its line or sentence (`I love sushi. Jordan: Hi, I'm Jordan.`), not all
/// of them [`NOT_SPEAKER_LABELS`].
fn is_speaker_label(before: &str) -> bool {
    speaker_label(before).is_some()
}

/// The speaker's label that `before` (the text before a colon) ends in, as
/// [`is_speaker_label`] reads it.
fn speaker_label(before: &str) -> Option<&str> {
    let start = before
        .char_indices()
        .rev()
        .filter(|&(i, c)| {
            c == '\n'
                || (matches!(c, '.' | '!' | '?')
                    && before[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_some_and(char::is_whitespace))
        })
        .map(|(i, c)| i + c.len_utf8())
        .next()
        .unwrap_or(0);
    let label: Vec<&str> = before[start..].split_whitespace().collect();
    let is_label = (1..=3).contains(&label.len())
        && label
            .iter()
            .all(|w| w.chars().next().is_some_and(char::is_uppercase))
        && !label.iter().all(|w| {
            let w = w.trim_end_matches('.').to_lowercase();
            NOT_SPEAKER_LABELS.contains(&w.as_str())
        });
    is_label.then(|| before[start..].trim())
}

/// The named person a sentence gives its relayed first person to
/// (`kith_ingest_v9`): the one a reporting word gives a quotation or a
/// colon's words to ([`kith_extract::reported::direct_speaker`]: `Dev says
/// "I love sushi".`), else the speaker a transcript line is labelled with
/// ([`transcript_speaker`]: `Dev: I hate sushi`). `None`: no name says
/// whose that "I" is, and it stays local.
pub fn relayed_speaker(sentence: &str) -> Option<String> {
    kith_extract::reported::direct_speaker(sentence).or_else(|| transcript_speaker(sentence))
}

/// The speaker of a line pasted from a chat (`Dev: I hate sushi` → `Dev`):
/// the sentence's first colon ends a speaker's label that is a name (not
/// `Mom:` or `My sister:`), and the one first person of the sentence stands
/// after it, outside any quotation (that one is somebody else's again).
/// One only: a pasted line the author's own words follow without a stop
/// (`Jordan: I love sushi I love cilantro.`) reads as one sentence, and
/// which "I" is whose, the words do not say.
pub fn transcript_speaker(sentence: &str) -> Option<String> {
    let at = sentence.find(':')?;
    let label = speaker_label(&sentence[..at])?;
    let (before, after) = (&sentence[..at], &sentence[at + 1..]);
    let first_persons = |text: &str| words(text).filter(|w| is_first_person(w)).count();
    (kith_extract::reported::names_a_person(label)
        && first_persons(after) == 1
        && first_persons(before) == 0
        && !quotes_first_person(after))
    .then(|| label.to_string())
}

/// Whether the turn names anyone besides its author: a listed entity that
/// [`could_be_person`] (under `kith_ingest_v3`; only `person` before), or
/// speech it relays ([`relays_speech`]).
pub fn names_somebody(content: &str, entities: &[ExtractedEntity], policy: Policy) -> bool {
    if !policy.has_v3_rules() {
        return entities
            .iter()
            .any(|e| e.entity_type.trim().eq_ignore_ascii_case("person"));
    }
    entities.iter().any(could_be_person) || relays_speech(content, policy)
}

/// Whether the turn relays someone's words under `policy`: quoted or
/// reported speech ([`reports_speech`], `kith_ingest_v3`), or a first
/// person after a reporting word or a speaker's label and a colon
/// ([`reports_first_person`], `kith_ingest_v6`: `Alex: Hi, I'm Alex
/// Rivera.` pasted from a chat introduces Alex, not the owner).
pub fn relays_speech(content: &str, policy: Policy) -> bool {
    (policy.has_v3_rules() && reports_speech(content))
        || (policy.has_v6_rules() && reports_first_person(content))
}

/// The entities with every name typed `other` or blank that is the
/// speaker's or in `known_persons` (the names of person entities the
/// owner's scope already has) typed `person`. Case-insensitive after
/// trimming. Other types are never changed: a model that typed a name
/// `organization` meant it.
pub fn person_types(
    entities: &[ExtractedEntity],
    speaker: Option<&str>,
    known_persons: &[String],
) -> Vec<ExtractedEntity> {
    let key = |s: &str| s.trim().to_lowercase();
    let speaker = speaker.map(key).filter(|s| !s.is_empty());
    entities
        .iter()
        .map(|e| {
            let ty = e.entity_type.trim();
            let untyped = ty.is_empty() || ty.eq_ignore_ascii_case("other");
            let name = key(&e.name);
            let is_person = speaker.as_deref() == Some(name.as_str())
                || known_persons.iter().any(|k| key(k) == name);
            if untyped && is_person && !name.is_empty() {
                ExtractedEntity {
                    entity_type: "person".into(),
                    ..e.clone()
                }
            } else {
                e.clone()
            }
        })
        .collect()
}

pub use crate::kinds::{StoredName, TypedNode, UNTYPED};

/// Which of `stored` (the active entities of one name in the owner's
/// scope) a person of that name is: [`crate::kinds::typed_node`] for type
/// `person`. A person entity first; under `kith_ingest_v4` then an untyped
/// node already adopted, then an untyped node to adopt. Before
/// `kith_ingest_v4` an untyped node was never a person's, which left a name
/// first stored untyped as two nodes.
pub fn person_node(stored: &[StoredName], policy: Policy) -> TypedNode {
    crate::kinds::typed_node(stored, "person", policy)
}

/// Lower-case words, quote marks normalised, apostrophes kept inside.
pub(crate) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || normalize_quote_mark(c) == '\''))
        .map(|w| {
            w.chars()
                .map(normalize_quote_mark)
                .collect::<String>()
                .trim_matches('\'')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(name: &str, ty: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: ty.into(),
            description: None,
        }
    }

    #[test]
    fn a_chat_line_gives_its_first_person_to_its_label() {
        for (sentence, speaker) in [
            ("Dev: I hate sushi", Some("Dev")),
            ("Maya Okafor: my flight is late.", Some("Maya Okafor")),
            ("Jordan: Hi, I'm Jordan.", Some("Jordan")),
            // A label that names nobody, or no label.
            ("Mom: I'm home", None),
            ("Update: I got the job!", None),
            ("Me: I'm in", None),
            ("I told Dev: I work at Figma now.", None),
            // The author's own I beside it (found by the property: a pasted
            // line the author's words follow without a stop).
            ("Jordan: I love sushi I love cilantro.", None),
            // A quotation in the line is someone else's again.
            ("Dev: Ana said \"I quit\"", None),
        ] {
            assert_eq!(
                transcript_speaker(sentence).as_deref(),
                speaker,
                "{sentence}"
            );
        }
        // A reporting word first, the label second.
        assert_eq!(
            relayed_speaker("Dev says \"I love sushi\".").as_deref(),
            Some("Dev")
        );
    }

    #[test]
    fn a_quoted_first_person_is_told_from_the_speakers() {
        for quoted in [
            "Caroline said, \"I painted a lake sunrise.\"",
            "She told me \u{201C}my kids love it\u{201D} yesterday.",
            "Jordan wrote: 'I hate sushi'.",
            "He said \"I'm done\"",
        ] {
            assert!(quotes_first_person(quoted), "{quoted}");
        }
        for own in [
            "I read \"Becoming Nicole\" last year.",
            "I'm done, it's Jordan's turn.",
            "I love 'Dune'.",
            "My sister said it was fine.",
        ] {
            assert!(!quotes_first_person(own), "{own}");
        }
    }

    #[test]
    fn a_first_person_after_a_reporting_word_or_a_speakers_label_is_told_from_the_speakers() {
        for reported in [
            "Dev says: I'm allergic to peanuts.",
            "Jordan texted me: I love cilantro.",
            "My mom told me: my back hurts again.",
            "Sam asked: can I borrow your bike?",
            "Then she goes: I quit!",
            "Dev: I hate sushi",
            "Here's what Dev sent me:\nDev: and I quit my job lol",
            "Ana Silva: my flight is late.",
            "I love sushi. Jordan: Hi, I'm Jordan.",
        ] {
            assert!(reports_first_person(reported), "{reported}");
        }
        for own in [
            "I told Dev: I'm leaving.",
            "Dev says I'm lazy.",
            "According to Sam: I am the worst cook.",
            "At 10:30 I went home.",
            "Things I like: my bike.",
            "Dev said: no more sushi.",
            "Update: I got the job!",
            "Big News: I left Northwind.",
            "P.S.: I miss you.",
            "Me: I'm in.",
            "PS: I love you all.",
            "Dev: see you at 8.",
            "The plan for today: I cook, you clean.",
        ] {
            assert!(!reports_first_person(own), "{own}");
        }
    }

    #[test]
    fn the_authors_own_first_person_beside_relayed_words_is_told_apart() {
        for (sentence, other) in [
            (
                "My boss Karen said \"I am quitting in June\" during standup.",
                "Karen",
            ),
            ("\u{201C}I hate sushi,\u{201D} my sister Ana said.", "Ana"),
            ("My brother Tom texted me: I got the job at Google.", "Tom"),
            ("My friend Dev says: I love Lisbon.", "Dev"),
            (
                "My sister Ana Silva wrote 'I miss Paris' on my card.",
                "Ana Silva",
            ),
            ("My boss Karen's note said \"I quit\".", "Karen"),
        ] {
            assert!(
                authors_first_person(sentence, other),
                "{sentence} / {other}"
            );
        }
        for (sentence, other) in [
            // The other endpoint is in the relayed words.
            (
                "My boss Karen said \"I am quitting in June\" during standup.",
                "June",
            ),
            ("\u{201C}I hate sushi,\u{201D} my sister Ana said.", "sushi"),
            (
                "My brother Tom texted me: I got the job at Google.",
                "Google",
            ),
            ("My sister Ana wrote \"I miss Paris\" on my card.", "Paris"),
            // In both: nothing tells whose it is.
            ("Karen told me \"I hate Karen's boss\".", "Karen"),
            // No first person of the author's.
            ("Karen said \"I love Paris\" to Dev.", "Dev"),
            ("Dev: I hate sushi", "Dev"),
            // The other endpoint is a first person, or not written.
            ("My boss said \"I love myself\".", "myself"),
            ("My boss said \"I quit\".", "Stripe"),
            ("My boss said \"I quit\".", ""),
        ] {
            assert!(
                !authors_first_person(sentence, other),
                "{sentence} / {other}"
            );
        }
    }

    #[test]
    fn quotes_and_reported_speech() {
        for text in [
            "Jordan wrote: 'I hate sushi'.",
            "Jordan texted me: I love cilantro.",
            "She told me I should rest.",
            "\u{201C}I quit,\u{201D} he announced.",
            "My boss said I was late.",
            "'I love it' was the reply.",
            "According to Sam I snore.",
        ] {
            assert!(reports_speech(text), "{text}");
        }
        for text in [
            "I'm tired.",
            "Jordan's bike is red.",
            "I work at Northwind Analytics.",
            "I prefer trains to flights.",
            "The Joneses' house is big.",
            "I don't like rock'n'roll.",
        ] {
            assert!(!reports_speech(text), "{text}");
        }
    }

    #[test]
    fn who_could_be_a_person() {
        assert!(could_be_person(&entity("Jordan", "other")));
        assert!(could_be_person(&entity("Jordan", "person")));
        assert!(could_be_person(&entity("Jordan", "")));
        assert!(could_be_person(&entity("Jordan", "Mystery Type")));
        assert!(!could_be_person(&entity("Northwind", "organization")));
        assert!(!could_be_person(&entity("Lisbon", "place")));
        assert!(!could_be_person(&entity("Brazilian", "other")));
        assert!(!could_be_person(&entity("Tired", "person")));
    }

    #[test]
    fn naming_somebody_by_policy() {
        let jordan = [entity("Jordan", "other")];
        let org = [entity("Northwind Analytics", "organization")];
        let text = "Jordan wrote: 'I hate sushi'.";
        assert!(names_somebody(text, &jordan, Policy::V3));
        assert!(names_somebody(
            "Jordan texted me: I love cilantro.",
            &[],
            Policy::V3
        ));
        assert!(!names_somebody(
            "I work at Northwind Analytics.",
            &org,
            Policy::V3
        ));
        assert!(!names_somebody(
            "I'm Vegan.",
            &[entity("Vegan", "other")],
            Policy::V3
        ));
        // kith_ingest_v2 counted listed persons only.
        assert!(!names_somebody(text, &jordan, Policy::V2));
        assert!(names_somebody(
            text,
            &[entity("Jordan", "person")],
            Policy::V2
        ));
    }

    #[test]
    fn known_people_are_typed_person() {
        let listed = [
            entity("Maya Okafor", "other"),
            entity(" jordan ", ""),
            entity("Northwind", "organization"),
            entity("Sam", "other"),
        ];
        let typed = person_types(
            &listed,
            Some("Maya Okafor"),
            &["Jordan".to_string(), "Northwind".to_string()],
        );
        let types: Vec<&str> = typed.iter().map(|e| e.entity_type.as_str()).collect();
        assert_eq!(types, ["person", "person", "organization", "other"]);
        // Names are kept as written.
        assert_eq!(typed[1].name, " jordan ");
        assert_eq!(person_types(&listed, None, &[]), listed.to_vec());
    }

    #[test]
    fn a_person_adopts_the_untyped_node_of_their_name() {
        let stored = |pairs: &[(&str, &str)]| -> Vec<StoredName> {
            pairs
                .iter()
                .map(|(id_type, entity_type)| StoredName {
                    id_type: id_type.to_string(),
                    entity_type: entity_type.to_string(),
                })
                .collect()
        };
        use TypedNode::*;
        /// (id type, metadata type) of each stored node.
        type Stored<'a> = &'a [(&'a str, &'a str)];
        // (stored, under v4, under v3)
        let table: &[(Stored, TypedNode, TypedNode)] = &[
            (&[], New, New),
            (&[("person", "person")], Existing(0), Existing(0)),
            (&[("other", "other")], Adopt(0), New),
            (&[("", "")], Adopt(0), New),
            // Adopted earlier: it is theirs now.
            (&[("other", "person")], Existing(0), New),
            (&[("", ""), ("other", "person")], Existing(1), New),
            // A person entity wins over an untyped one.
            (
                &[("other", "other"), ("person", "person")],
                Existing(1),
                Existing(1),
            ),
            // Namesakes of real different types stay apart.
            (&[("place", "place")], New, New),
            (&[("organization", "organization")], New, New),
            (
                &[("organization", "organization"), ("other", "other")],
                Adopt(1),
                New,
            ),
        ];
        for (have, v4, v3) in table {
            assert_eq!(person_node(&stored(have), Policy::V4), *v4, "{have:?}");
            assert_eq!(person_node(&stored(have), Policy::V3), *v3, "{have:?}");
        }
    }
}
