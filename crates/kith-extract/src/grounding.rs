//! Grounding: which extracted claims the message actually supports.
//!
//! Pure functions: the message text and a parsed [`Extraction`] in, a
//! [`Grounded`] extraction out, with every dropped claim and its reason.
//! Nothing here fails: a claim the message does not support is dropped and
//! recorded in [`Grounded::dropped`]; its grounded siblings stay.
//!
//! For each claim, in this order (the first failing check is the reason):
//!
//! 1. **Quote** ([`locate_quote`]): the trimmed `evidence_quote` must occur
//!    verbatim in the message once quote marks are normalised on both sides
//!    ([`normalize_quote_mark`]). [`Evidence`] points at the exact bytes of
//!    the message. One occurrence: `sentence` is the sentence(s) the quote
//!    overlaps ([`sentence_spans`]); several: `sentence` is the whole message.
//! 2. **Mentions** ([`mentions`]): subject and object (or both relationship
//!    ends) must each occur, whole word and case-insensitive, in `sentence`.
//!    A personal reference is mentioned when any word of its family
//!    ([`PERSONAL_FAMILIES`]) is.
//! 3. **Resolution**: a personal reference ([`PERSONAL_REFERENCES`]) becomes
//!    [`EndpointRef::Personal`] unless the claim types it as one of
//!    [`NAMED_REFERENCE_TYPES`]; a name must match exactly one listed entity
//!    (type-filtered when the claim gives a type); an untyped object that
//!    names no entity is a [`EndpointRef::Value`].
//! 4. **Qualifiers** ([`qualifier`]): a conditional marker in `sentence`
//!    makes a fact `conditional` (with its verbatim condition); a
//!    hypothetical marker makes it `hypothetical`.
//! 5. **Attempts and intentions** ([`intention_marker`]): when the claim's
//!    object is written after an attempt or intention marker ("I'm trying
//!    to quit coffee", "I plan to move", "I want to learn Go"), the
//!    predicate must say so ([`is_non_actual_predicate`]: `trying_to`,
//!    `plans_to`, `wants_to`, …); a claim that states it as done ("quit
//!    coffee") is dropped ([`DropReason::IntentionAsFact`]).
//! 6. **Reported speech** ([`crate::reported`]): a plain (asserted or
//!    observed) claim that stands in someone else's reported words ("Dev
//!    says Ana loves sushi", "According to Ana, …", "I heard …") becomes
//!    `unverified`, and [`GroundedFact::reported_by`] names who reported it.
//!
//! Before these checks, a claim identical to an earlier one is dropped,
//! each list is capped, and entities whose names fail a speaker name's
//! rules are left out; the engine then keeps only the entities the message
//! mentions or a grounded claim names ([`crate::bounds::keep_grounded_entities`]).
//!
//! `docs/extraction.md` states the same rules with examples.

use std::ops::Range;

use kith_core::EpistemicType;
use serde::{Deserialize, Serialize};

use crate::bounds;
use crate::schema::{ExtractedEntity, ExtractedFact, ExtractedRelationship, Extraction};

/// How a claim endpoint (subject, object, relationship end) resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndpointRef {
    /// A listed entity: its index in [`Grounded::entities`].
    Entity {
        /// Index into `entities`.
        index: usize,
    },
    /// A personal reference (I, me, we, they, …): local to its event until
    /// the identity rules bind it.
    Personal {
        /// The word as the claim wrote it.
        surface: String,
    },
    /// A plain value, not an entity (an object like "green tea").
    Value,
}

/// Where in the message a claim's evidence stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Byte offset of the matched quote in the message.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
    /// The message text of the quote, exactly as the message has it (quote
    /// marks as in the message).
    pub quote: String,
    /// The whole sentence(s) the quote stands in.
    pub sentence: String,
}

/// A fact that survived grounding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundedFact {
    /// The fact as extracted (epistemic type possibly adjusted by the
    /// conditional / hypothetical rules).
    pub fact: ExtractedFact,
    /// Its evidence in the message.
    pub evidence: Evidence,
    /// What the subject is.
    pub subject: EndpointRef,
    /// What the object is.
    pub object: EndpointRef,
    /// When the claim stands in someone else's reported words (step 6):
    /// who reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_by: Option<Reported>,
}

/// Who reported a claim that stands in someone else's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    /// The reporter as written (`Dev`, `my sister`); `None` for hearsay
    /// from nobody named (`I heard …`).
    pub by: Option<String>,
}

/// A relationship that survived grounding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundedRelationship {
    /// The relationship as extracted.
    pub relationship: ExtractedRelationship,
    /// Its evidence in the message.
    pub evidence: Evidence,
    /// The source end.
    pub source: EndpointRef,
    /// The target end.
    pub target: EndpointRef,
    /// Who reported it, as for a fact ([`GroundedFact::reported_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_by: Option<Reported>,
}

/// Which list a dropped claim came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// `facts[i]`.
    Fact,
    /// `relationships[i]`.
    Relationship,
}

/// Why a claim was dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DropReason {
    /// The evidence quote is not in the message (even with quote marks
    /// normalised).
    QuoteNotFound {
        /// The quote as given.
        quote: String,
    },
    /// An endpoint is not mentioned (whole word, case-insensitive) in the
    /// quoted sentence(s).
    NotMentioned {
        /// Which field (`subject`, `object`, `source_entity`, `target_entity`).
        field: String,
        /// Its text.
        text: String,
    },
    /// A named endpoint names no listed entity (of the given type).
    UnknownEntity {
        /// Which field.
        field: String,
        /// The name.
        name: String,
    },
    /// A named endpoint matches several listed entities.
    AmbiguousEntity {
        /// Which field.
        field: String,
        /// The name.
        name: String,
    },
    /// The sentence states an attempt or an intention ("trying to", "plan
    /// to", "want to") about the claim's object, and the predicate states
    /// it as done.
    IntentionAsFact {
        /// The predicate as given.
        predicate: String,
        /// The marker, as written in the sentence.
        marker: String,
    },
    /// Identical, field for field, to an earlier claim of the same list
    /// (`crate::bounds`).
    Duplicate {
        /// The index of the first copy.
        of: usize,
    },
    /// Past the most distinct claims one list of a message may hold
    /// (`crate::bounds::MAX_CLAIMS_PER_LIST`).
    OverLimit {
        /// The limit.
        limit: usize,
    },
}

/// A claim grounding refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// Which list.
    pub kind: ClaimKind,
    /// Its index in that list of the extraction.
    pub index: usize,
    /// Why.
    pub reason: DropReason,
}

/// An extraction after grounding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grounded {
    /// Entities as listed (deduplicated by trimmed, case-insensitive name and type).
    pub entities: Vec<ExtractedEntity>,
    /// Facts that survived, in extraction order.
    pub facts: Vec<GroundedFact>,
    /// Relationships that survived, in extraction order.
    pub relationships: Vec<GroundedRelationship>,
    /// What was dropped, in extraction order.
    pub dropped: Vec<Dropped>,
    /// Listed entities left out: an invalid name, not mentioned in the
    /// message and named by no grounded claim, or past the cap
    /// (`crate::bounds`).
    #[serde(default)]
    pub entities_dropped: usize,
}

/// The English personal references (reference notes §4.2): an endpoint that
/// is one of these words (trimmed, case-insensitive) is a personal reference,
/// local to its message, unless the claim types it as one of
/// [`NAMED_REFERENCE_TYPES`].
pub const PERSONAL_REFERENCES: &[&str] = &[
    "i",
    "me",
    "myself",
    "my",
    "mine",
    "we",
    "us",
    "ourselves",
    "our",
    "ours",
    "you",
    "yourself",
    "yourselves",
    "your",
    "yours",
    "he",
    "him",
    "himself",
    "his",
    "she",
    "her",
    "herself",
    "hers",
    "they",
    "them",
    "themselves",
    "their",
    "theirs",
    "it",
    "itself",
];

/// The families of personal references: a personal endpoint is mentioned
/// in its evidence when any word of its family is (so subject `I` is
/// supported by "My name is Sam" and by "Call me Sam"). `its` counts as a
/// mention of `it`/`itself` although it is not itself a personal reference.
pub const PERSONAL_FAMILIES: &[&[&str]] = &[
    &["i", "me", "my", "mine", "myself"],
    &["we", "us", "our", "ours", "ourselves"],
    &["you", "your", "yours", "yourself", "yourselves"],
    &["he", "him", "his", "himself"],
    &["she", "her", "hers", "herself"],
    &["they", "them", "their", "theirs", "themselves"],
    &["it", "its", "itself"],
];

/// Entity types that keep a personal-reference word a named entity
/// (`US`/country, `IT`/technology, `I`/chemical). Compared after trimming,
/// lower-casing and turning spaces and hyphens into `_`.
pub const NAMED_REFERENCE_TYPES: &[&str] = &[
    "country",
    "place",
    "location",
    "technology",
    "concept",
    "product",
    "tool",
    "language",
    "programming_language",
    "chemical",
    "element",
    "number",
];

/// Markers that make a fact conditional (whole words, case-insensitive;
/// the words of a phrase may be separated by any whitespace).
pub const CONDITIONAL_MARKERS: &[&str] = &["if", "unless", "provided that", "as long as"];

/// Markers that make a fact hypothetical (whole words, case-insensitive),
/// except `May` written with a capital inside a sentence (the month).
pub const HYPOTHETICAL_MARKERS: &[&str] = &["might", "may", "could", "maybe"];

/// The plain form of a quote mark: curly, low-9, reversed, prime, modifier
/// and full-width single marks and single guillemets become `'`; their
/// double counterparts and double guillemets become `"`. Every other
/// character is returned unchanged. Each mark maps to one character, so
/// normalised text maps back to the original character by character.
pub fn normalize_quote_mark(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}'
        | '\u{02BC}' | '\u{FF07}' | '\u{2039}' | '\u{203A}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}'
        | '\u{FF02}' | '\u{00AB}' | '\u{00BB}' => '"',
        c => c,
    }
}

/// `text` with every quote mark normalised ([`normalize_quote_mark`]).
pub fn normalize_quote_marks(text: &str) -> String {
    text.chars().map(normalize_quote_mark).collect()
}

/// The sentences of `text` as byte ranges, trimmed of surrounding
/// whitespace, in order; empty sentences are left out.
///
/// A sentence ends at a newline, or after a run of `.`, `!` or `?` (with any
/// closing quote marks or brackets right after it) that is followed by
/// whitespace or the end of the text. So "3.5", "e.g.x" and "a.b" do not
/// split. Nor does the stop of a title before a name ("Dr. Patel's
/// clinic", "at St. David's"), or of a short form before a word in lower
/// case ("on Telegraph Ave. and he's…"): see [`crate::lexicon::TITLES_WITH_STOP`]
/// and [`crate::lexicon::SHORT_FORMS`].
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut spans = Vec::new();
    let mut segment = 0;
    let mut k = 0;
    while k < chars.len() {
        let (i, c) = chars[k];
        if c == '\n' {
            push_trimmed(text, segment..i, &mut spans);
            segment = i + 1;
            k += 1;
            continue;
        }
        if matches!(c, '.' | '!' | '?') {
            let mut j = k + 1;
            while j < chars.len()
                && (matches!(chars[j].1, '.' | '!' | '?') || is_closer(chars[j].1))
            {
                j += 1;
            }
            let end = chars.get(j).map_or(text.len(), |&(b, _)| b);
            let single_stop = c == '.' && j == k + 1;
            if chars.get(j).is_none_or(|&(_, next)| next.is_whitespace())
                && (!single_stop || abbreviation_ends_sentence(&chars, k))
            {
                push_trimmed(text, segment..end, &mut spans);
                segment = end;
            }
            k = j;
            continue;
        }
        k += 1;
    }
    push_trimmed(text, segment..text.len(), &mut spans);
    spans
}

/// Whether the full stop at `chars[stop]`, followed by whitespace, ends a
/// sentence given the word it closes: a title's stop ends none (a name
/// follows: [`crate::lexicon::TITLES_WITH_STOP`]), a short form's only
/// before a capitalised word ([`crate::lexicon::SHORT_FORMS`]), any other
/// word's always. "St" or "Mt" after a capitalised word is "Street" or
/// "Mount" ("Main St."), a short form; elsewhere ("at St. David's",
/// "Leaving St. Mary's", where the capital only opens the sentence) a
/// title.
fn abbreviation_ends_sentence(chars: &[(usize, char)], stop: usize) -> bool {
    use crate::lexicon::{SHORT_FORMS, TITLES_WITH_STOP};
    let word_start = chars[..stop]
        .iter()
        .rposition(|&(_, c)| !(c.is_alphanumeric() || c == '.'))
        .map_or(0, |p| p + 1);
    let word: String = chars[word_start..stop]
        .iter()
        .map(|&(_, c)| c)
        .collect::<String>()
        .to_lowercase();
    let next = chars[stop + 1..]
        .iter()
        .map(|&(_, c)| c)
        .find(|c| !c.is_whitespace());
    let Some(next) = next else {
        return true;
    };
    // "Main St." names a street; "Leaving St. Mary's" opens its sentence
    // with a verb, and the saint follows: a capitalised word that starts
    // the sentence tells nothing.
    let after_capital = || {
        let before: Vec<usize> = chars[..word_start]
            .iter()
            .enumerate()
            .rev()
            .skip_while(|(_, (_, c))| c.is_whitespace())
            .take_while(|(_, (_, c))| c.is_alphanumeric())
            .map(|(k, _)| k)
            .collect();
        let Some(&first) = before.last() else {
            return false;
        };
        let opens_sentence = chars[..first]
            .iter()
            .rev()
            .find(|(_, c)| !c.is_whitespace())
            .is_none_or(|&(_, c)| matches!(c, '.' | '!' | '?' | ':' | '"' | '(') || c == '\n');
        chars[first].1.is_uppercase() && !opens_sentence
    };
    let title = TITLES_WITH_STOP.contains(&word.as_str())
        && !(matches!(word.as_str(), "st" | "mt") && after_capital());
    if title || matches!(word.as_str(), "vs" | "e.g" | "i.e") {
        return false;
    }
    if SHORT_FORMS.contains(&word.as_str()) || matches!(word.as_str(), "st" | "mt") {
        return next.is_uppercase();
    }
    true
}

fn is_closer(c: char) -> bool {
    matches!(normalize_quote_mark(c), '"' | '\'' | ')' | ']' | '}')
}

fn push_trimmed(text: &str, range: Range<usize>, spans: &mut Vec<Range<usize>>) {
    let piece = &text[range.clone()];
    let lead = piece.len() - piece.trim_start().len();
    let trimmed = piece.trim();
    if !trimmed.is_empty() {
        let start = range.start + lead;
        spans.push(start..start + trimmed.len());
    }
}

/// Where `quote` stands in `content` (see [`Evidence`]), or `None` when it
/// does not occur even with quote marks normalised. The quote is trimmed
/// first; a blank quote occurs nowhere.
pub fn locate_quote(content: &str, quote: &str) -> Option<Evidence> {
    Source::new(content).locate(quote)
}

/// Whether `needle` occurs in `text` as a whole word (or words),
/// case-insensitively: both are trimmed, quote marks normalised, lower-cased
/// and their whitespace runs collapsed to one space; an occurrence counts
/// when the characters around it are not letters or digits (checked only on
/// a side where the needle itself starts or ends with a letter or digit, so
/// "C++" and "3:41" can be mentioned). A blank needle is never mentioned.
pub fn mentions(text: &str, needle: &str) -> bool {
    let hay = mention_form(text);
    let needle = mention_form(needle);
    if needle.is_empty() {
        return false;
    }
    let check_before = needle.chars().next().is_some_and(is_word_char);
    let check_after = needle.chars().next_back().is_some_and(is_word_char);
    let mut from = 0;
    while let Some(pos) = hay[from..].find(&needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok =
            !check_before || !hay[..start].chars().next_back().is_some_and(is_word_char);
        let after_ok = !check_after || !hay[end..].chars().next().is_some_and(is_word_char);
        if before_ok && after_ok {
            return true;
        }
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

fn mention_form(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
            continue;
        }
        in_space = false;
        out.extend(normalize_quote_mark(c).to_lowercase());
    }
    out
}

/// The family of a personal reference (see [`PERSONAL_FAMILIES`]), or `None`
/// when `word` (trimmed, case-insensitive) is not in [`PERSONAL_REFERENCES`].
pub fn personal_family(word: &str) -> Option<&'static [&'static str]> {
    let folded = fold(word);
    if !PERSONAL_REFERENCES.contains(&folded.as_str()) {
        return None;
    }
    PERSONAL_FAMILIES
        .iter()
        .copied()
        .find(|family| family.contains(&folded.as_str()))
}

/// Whether `entity_type` keeps a personal-reference word a named entity
/// (see [`NAMED_REFERENCE_TYPES`]).
pub fn is_named_reference_type(entity_type: &str) -> bool {
    NAMED_REFERENCE_TYPES.contains(&fold_type(entity_type).as_str())
}

/// How a fact's evidence sentence qualifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Qualifier {
    /// A conditional marker: the clause from the marker to the next `,`,
    /// `;`, `:`, `!`, `?`, dash, bracket, newline, `.` before whitespace, or
    /// the end of the sentence, verbatim.
    Conditional {
        /// The condition clause ("as long as it's not too late").
        clause: String,
    },
    /// A hypothetical marker and no conditional one.
    Hypothetical,
}

/// The qualifier of `sentence`: the earliest conditional marker wins over
/// any hypothetical one (see [`CONDITIONAL_MARKERS`],
/// [`HYPOTHETICAL_MARKERS`]). Markers are whole words, so "iffy" and
/// "couldn't" are not markers. This is a conservative English rule: "I
/// wonder if …" also counts as conditional.
pub fn qualifier(sentence: &str) -> Option<Qualifier> {
    let earliest = CONDITIONAL_MARKERS
        .iter()
        .filter_map(|marker| find_phrase(sentence, marker, |_, _| true))
        .min();
    if let Some(start) = earliest {
        return Some(Qualifier::Conditional {
            clause: clause_from(sentence, start),
        });
    }
    let hypothetical = HYPOTHETICAL_MARKERS.iter().any(|marker| {
        find_phrase(sentence, marker, |text, at| {
            // "May" with a capital inside a sentence is the month.
            !(*marker == "may" && text[at..].starts_with("May") && !text[..at].trim().is_empty())
        })
        .is_some()
    });
    hypothetical.then_some(Qualifier::Hypothetical)
}

/// The byte offset of the first whole-word, ASCII-case-insensitive
/// occurrence of `phrase` (words separated by any whitespace) in `text`
/// that `accept` allows.
fn find_phrase(text: &str, phrase: &str, accept: impl Fn(&str, usize) -> bool) -> Option<usize> {
    let words: Vec<&str> = phrase.split_whitespace().collect();
    let first = words.first()?;
    let bytes = text.as_bytes();
    (0..text.len()).find(|&at| {
        text.is_char_boundary(at)
            && bytes.len() >= at + first.len()
            && !text[..at].chars().next_back().is_some_and(is_word_char)
            && match_words(text, at, &words)
                .is_some_and(|end| !text[end..].chars().next().is_some_and(is_word_char))
            && accept(text, at)
    })
}

fn match_words(text: &str, mut at: usize, words: &[&str]) -> Option<usize> {
    for (n, word) in words.iter().enumerate() {
        if n > 0 {
            let rest = &text[at..];
            let skipped = rest.len() - rest.trim_start().len();
            if skipped == 0 {
                return None;
            }
            at += skipped;
        }
        let candidate = text.as_bytes().get(at..at + word.len())?;
        if !candidate.eq_ignore_ascii_case(word.as_bytes()) {
            return None;
        }
        at += word.len();
    }
    Some(at)
}

fn clause_from(sentence: &str, start: usize) -> String {
    let rest = &sentence[start..];
    let mut chars = rest.char_indices().peekable();
    let mut end = rest.len();
    let mut before = ' ';
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let stop = match c {
            _ if crate::tokens::within_number(before, c, next) => false,
            ',' | ';' | ':' | '!' | '?' | '\n' | '(' | ')' | '\u{2014}' | '\u{2013}' => true,
            '.' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        before = c;
        if stop {
            end = i;
            break;
        }
    }
    rest[..end].trim_end().to_string()
}

/// Grounds `extraction` against the message `content` (see the module
/// documentation for the rules and their order).
pub fn ground(content: &str, extraction: &Extraction) -> Grounded {
    ground_with(content, extraction, &GroundingOptions::default())
}

/// Options of grounding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroundingOptions {
    /// Speaker grounding (`KITH_ENABLE_SPEAKER_GROUNDING`, off by default):
    /// when set to the turn's speaker, the speaker's own first-person forms
    /// (I, me, my, mine, myself) count as mentions of the speaker's name, so
    /// a claim written about "Dana" from "I moved to Lisbon" said by Dana is
    /// grounded.
    pub speaker: Option<String>,
    /// Whether attempts and intentions need a non-actual predicate.
    pub intentions: IntentionRule,
    /// Whether reported speech is read (step 6).
    pub reports: ReportRule,
}

/// Whether grounding reads reported speech (step 6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReportRule {
    /// A plain claim in someone else's reported words is `unverified`
    /// and names its reporter; quotations open at double marks and at
    /// single ones (policy `kith_ingest_v9` and later).
    #[default]
    Unverified,
    /// The same, with quotations only in double marks (`kith_ingest_v8`).
    UnverifiedDoubleMarks,
    /// Not read: the rules of extractions saved before `kith_ingest_v8`.
    Unchecked,
}

/// Whether grounding checks attempts and intentions (step 5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IntentionRule {
    /// A claim about what follows an attempt or intention marker needs a
    /// non-actual predicate (policy `kith_ingest_v3` and later).
    #[default]
    NeedsNonActualPredicate,
    /// Not checked: the rules of extractions saved before `kith_ingest_v3`.
    Unchecked,
}

/// [`ground`] with options.
pub fn ground_with(content: &str, extraction: &Extraction, options: &GroundingOptions) -> Grounded {
    let source = Source::new(content);
    let (entities, invalid) = bounds::valid_entities(dedup_entities(&extraction.entities));
    let mut out = Grounded {
        entities,
        entities_dropped: invalid,
        ..Grounded::default()
    };
    let mut gate = bounds::ClaimGate::default();
    for (index, fact) in extraction.facts.iter().enumerate() {
        let grounded = gate
            .admit(index, fact)
            .and_then(|()| ground_fact(&source, &out.entities, fact, options));
        match grounded {
            Ok(grounded) => out.facts.push(grounded),
            Err(reason) => out.dropped.push(Dropped {
                kind: ClaimKind::Fact,
                index,
                reason,
            }),
        }
    }
    let mut gate = bounds::ClaimGate::default();
    for (index, relationship) in extraction.relationships.iter().enumerate() {
        let grounded = gate
            .admit(index, relationship)
            .and_then(|()| ground_relationship(&source, &out.entities, relationship, options));
        match grounded {
            Ok(grounded) => out.relationships.push(grounded),
            Err(reason) => out.dropped.push(Dropped {
                kind: ClaimKind::Relationship,
                index,
                reason,
            }),
        }
    }
    out
}

/// The listed entities without repeats: two entries are the same when their
/// trimmed, lower-cased names and their entity types (trimmed, lower-cased,
/// spaces and hyphens as `_`) are equal; the first entry is kept as listed.
pub fn dedup_entities(entities: &[ExtractedEntity]) -> Vec<ExtractedEntity> {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for entity in entities {
        let key = (fold(&entity.name), fold_type(&entity.entity_type));
        if !seen.contains(&key) {
            seen.push(key);
            out.push(entity.clone());
        }
    }
    out
}

fn ground_fact(
    source: &Source<'_>,
    entities: &[ExtractedEntity],
    fact: &ExtractedFact,
    options: &GroundingOptions,
) -> Result<GroundedFact, DropReason> {
    let speaker = options.speaker.as_deref();
    let evidence =
        source
            .locate(&fact.evidence_quote)
            .ok_or_else(|| DropReason::QuoteNotFound {
                quote: fact.evidence_quote.clone(),
            })?;
    let subject = Endpoint::read(
        "subject",
        &fact.subject,
        fact.subject_entity_type.as_deref(),
    );
    let object = Endpoint::read("object", &fact.object, fact.object_entity_type.as_deref());
    subject.check_mentioned(&evidence.sentence, speaker)?;
    object.check_mentioned(&evidence.sentence, speaker)?;
    let subject_ref = subject.resolve(entities, false)?;
    let object_ref = object.resolve(entities, true)?;
    check_intention(
        options.intentions,
        &evidence.sentence,
        &fact.predicate,
        &fact.object,
    )?;
    let mut fact = fact.clone();
    let reported_by = read_report(
        options.reports,
        (&evidence.sentence, &fact.evidence_quote),
        [&fact.subject, &fact.object],
        &mut fact.epistemic_type,
    );
    match qualifier(&evidence.sentence) {
        Some(Qualifier::Conditional { clause }) => {
            fact.epistemic_type = EpistemicType::Conditional;
            if fact
                .condition
                .as_deref()
                .is_none_or(|c| c.trim().is_empty())
            {
                fact.condition = Some(clause);
            }
        }
        Some(Qualifier::Hypothetical) if fact.epistemic_type != EpistemicType::Conditional => {
            fact.epistemic_type = EpistemicType::Hypothetical;
        }
        Some(Qualifier::Hypothetical) | None => {}
    }
    Ok(GroundedFact {
        fact,
        evidence,
        subject: subject_ref,
        object: object_ref,
        reported_by,
    })
}

/// Step 6: when `rule` reads reports and the claim `ends` (subject, object)
/// stands in someone else's words wherever its quote stands in its
/// evidence (`sentence`, `quote`), a plain `epistemic` type
/// becomes unverified and the reporter is returned. A hypothetical or
/// conditional claim keeps its type (it is no plain fact either way) but
/// still names its reporter.
fn read_report(
    rule: ReportRule,
    (sentence, quote): (&str, &str),
    ends: [&str; 2],
    epistemic: &mut EpistemicType,
) -> Option<Reported> {
    let marks = match rule {
        ReportRule::Unchecked => return None,
        ReportRule::Unverified => crate::reported::Marks::All,
        ReportRule::UnverifiedDoubleMarks => crate::reported::Marks::DoubleOnly,
    };
    let report = crate::reported::reported(sentence, quote, (ends[0], ends[1]), marks)?;
    if epistemic.is_plain_fact() {
        *epistemic = EpistemicType::Unverified;
    }
    Some(Reported { by: report.by })
}

fn ground_relationship(
    source: &Source<'_>,
    entities: &[ExtractedEntity],
    relationship: &ExtractedRelationship,
    options: &GroundingOptions,
) -> Result<GroundedRelationship, DropReason> {
    let speaker = options.speaker.as_deref();
    let evidence =
        source
            .locate(&relationship.evidence_quote)
            .ok_or_else(|| DropReason::QuoteNotFound {
                quote: relationship.evidence_quote.clone(),
            })?;
    let source_end = Endpoint::read("source_entity", &relationship.source_entity, None);
    let target_end = Endpoint::read("target_entity", &relationship.target_entity, None);
    source_end.check_mentioned(&evidence.sentence, speaker)?;
    target_end.check_mentioned(&evidence.sentence, speaker)?;
    let source_ref = source_end.resolve(entities, false)?;
    let target_ref = target_end.resolve(entities, false)?;
    check_intention(
        options.intentions,
        &evidence.sentence,
        &relationship.relationship_type,
        &relationship.target_entity,
    )?;
    let mut relationship = relationship.clone();
    // A relationship has no condition field: either marker makes it
    // hypothetical, unless the provider already said conditional.
    if qualifier(&evidence.sentence).is_some()
        && !matches!(
            relationship.epistemic_type,
            EpistemicType::Conditional | EpistemicType::Hypothetical
        )
    {
        relationship.epistemic_type = EpistemicType::Hypothetical;
    }
    let reported_by = read_report(
        options.reports,
        (&evidence.sentence, &relationship.evidence_quote),
        [&relationship.source_entity, &relationship.target_entity],
        &mut relationship.epistemic_type,
    );
    Ok(GroundedRelationship {
        relationship,
        evidence,
        source: source_ref,
        target: target_ref,
        reported_by,
    })
}

/// Attempt and intention markers, as lower-case word sequences that end in
/// "to" ("I'm trying to quit coffee", "I plan to move", "I want to learn
/// Go", "I'd like to visit Kyoto"). A past attempt ("I tried to") is not a
/// done fact either.
pub const INTENTION_MARKERS: &[&[&str]] = &[
    &["trying", "to"],
    &["try", "to"],
    &["tries", "to"],
    &["tried", "to"],
    &["attempting", "to"],
    &["attempt", "to"],
    &["attempted", "to"],
    &["plan", "to"],
    &["plans", "to"],
    &["planning", "to"],
    &["planned", "to"],
    &["intend", "to"],
    &["intends", "to"],
    &["intending", "to"],
    &["want", "to"],
    &["wants", "to"],
    &["wanted", "to"],
    &["hope", "to"],
    &["hopes", "to"],
    &["hoping", "to"],
    &["would", "like", "to"],
    &["'d", "like", "to"],
    &["would", "love", "to"],
    &["'d", "love", "to"],
];

/// Predicate words that keep a claim non-actual: an attempt, a plan, a
/// wish or a planned move. A predicate is non-actual when one of its words
/// (split at `_`, `-` and spaces, lower case) is listed.
pub const NON_ACTUAL_PREDICATE_WORDS: &[&str] = &[
    "try",
    "tries",
    "trying",
    "tried",
    "attempt",
    "attempts",
    "attempting",
    "attempted",
    "plan",
    "plans",
    "planning",
    "planned",
    "intend",
    "intends",
    "intending",
    "intention",
    "intent",
    "want",
    "wants",
    "wanting",
    "wanted",
    "hope",
    "hopes",
    "hoping",
    "wish",
    "wishes",
    "goal",
    "goals",
    "aim",
    "aims",
    "aspire",
    "aspires",
    "aspiration",
    "desire",
    "desires",
    "would",
    "considering",
    "moving",
    "relocating",
];

/// Whether `predicate` states an attempt or an intention (see
/// [`NON_ACTUAL_PREDICATE_WORDS`]).
pub fn is_non_actual_predicate(predicate: &str) -> bool {
    predicate
        .split(|c: char| c == '_' || c == '-' || c.is_whitespace())
        .map(str::to_lowercase)
        .any(|w| NON_ACTUAL_PREDICATE_WORDS.contains(&w.as_str()))
}

/// The first attempt or intention marker of `sentence` that `object` is
/// written after, in the same clause (up to the next `,` `;` `:` `.` `!`
/// `?`, bracket, dash or line break), whole word and case-insensitive; as
/// written, or `None` when there is none, so "I work at Northwind and want to learn Go" marks "Go"
/// and not "Northwind".
pub fn intention_marker(sentence: &str, object: &str) -> Option<String> {
    let words = marker_words(sentence);
    for (i, _) in words.iter().enumerate() {
        for marker in INTENTION_MARKERS {
            let fits = marker.iter().enumerate().all(|(k, m)| {
                words.get(i + k).is_some_and(|(w, _)| match *m {
                    // "I'd like to": the contraction's tail.
                    "'d" => w.ends_with("'d"),
                    m => w == m,
                })
            });
            if !fits {
                continue;
            }
            let start = words[i].1.start;
            let end = words[i + marker.len() - 1].1.end;
            // The object must be in the marker's own clause.
            let rest = &sentence[end..];
            let clause = rest
                .find([
                    ',', ';', ':', '.', '!', '?', '\n', '(', ')', '\u{2014}', '\u{2013}',
                ])
                .map_or(rest, |stop| &rest[..stop]);
            if mentions(clause, object) {
                return Some(sentence[start..end].to_string());
            }
        }
    }
    None
}

/// Lower-case words (apostrophes kept, quote marks normalised) with their
/// byte ranges in `sentence`.
fn marker_words(sentence: &str) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let is_word = |c: char| c.is_alphanumeric() || normalize_quote_mark(c) == '\'';
    for (i, c) in sentence.char_indices() {
        match (is_word(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((marker_word(&sentence[s..i]), s..i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((marker_word(&sentence[s..]), s..sentence.len()));
    }
    out
}

/// A word in lower case, quote marks normalised, without the quote marks
/// around it (an inner apostrophe stays: "i'd").
fn marker_word(word: &str) -> String {
    normalize_quote_marks(word)
        .trim_matches('\'')
        .to_lowercase()
}

fn check_intention(
    rule: IntentionRule,
    sentence: &str,
    predicate: &str,
    object: &str,
) -> Result<(), DropReason> {
    if rule == IntentionRule::Unchecked || is_non_actual_predicate(predicate) {
        return Ok(());
    }
    match intention_marker(sentence, object) {
        Some(marker) => Err(DropReason::IntentionAsFact {
            predicate: predicate.to_string(),
            marker,
        }),
        None => Ok(()),
    }
}

/// A claim endpoint as read, before resolution.
struct Endpoint<'a> {
    field: &'static str,
    /// The endpoint as the claim wrote it (for drop reasons).
    text: &'a str,
    kind: EndpointKind<'a>,
}

enum EndpointKind<'a> {
    Personal(&'static [&'static str]),
    Named { entity_type: Option<&'a str> },
}

impl<'a> Endpoint<'a> {
    fn read(field: &'static str, text: &'a str, entity_type: Option<&'a str>) -> Self {
        let entity_type = entity_type.map(str::trim).filter(|t| !t.is_empty());
        let kind = match personal_family(text) {
            Some(family) if !entity_type.is_some_and(is_named_reference_type) => {
                EndpointKind::Personal(family)
            }
            _ => EndpointKind::Named { entity_type },
        };
        Endpoint { field, text, kind }
    }

    fn check_mentioned(&self, sentence: &str, speaker: Option<&str>) -> Result<(), DropReason> {
        let mentioned = match self.kind {
            EndpointKind::Personal(family) => family.iter().any(|word| mentions(sentence, word)),
            EndpointKind::Named { .. } => {
                mentions(sentence, self.text)
                    || speaker.is_some_and(|name| {
                        fold(name) == fold(self.text)
                            && ["i", "me", "my", "mine", "myself"]
                                .iter()
                                .any(|w| mentions(sentence, w))
                    })
            }
        };
        if mentioned {
            Ok(())
        } else {
            Err(DropReason::NotMentioned {
                field: self.field.to_string(),
                text: self.text.to_string(),
            })
        }
    }

    /// Resolves against the deduplicated entities. `allow_value`: an untyped
    /// name that matches no entity is a plain value (objects only).
    fn resolve(
        &self,
        entities: &[ExtractedEntity],
        allow_value: bool,
    ) -> Result<EndpointRef, DropReason> {
        let entity_type = match self.kind {
            EndpointKind::Personal(_) => {
                return Ok(EndpointRef::Personal {
                    surface: self.text.trim().to_string(),
                })
            }
            EndpointKind::Named { entity_type } => entity_type,
        };
        let name = fold(self.text);
        let wanted = entity_type.map(fold_type);
        let mut matches = entities.iter().enumerate().filter(|(_, e)| {
            fold(&e.name) == name
                && wanted
                    .as_ref()
                    .is_none_or(|t| fold_type(&e.entity_type) == *t)
        });
        match (matches.next(), matches.next()) {
            (Some((index, _)), None) => Ok(EndpointRef::Entity { index }),
            (Some(_), Some(_)) => Err(DropReason::AmbiguousEntity {
                field: self.field.to_string(),
                name: self.text.to_string(),
            }),
            (None, _) if allow_value && entity_type.is_none() => Ok(EndpointRef::Value),
            (None, _) => Err(DropReason::UnknownEntity {
                field: self.field.to_string(),
                name: self.text.to_string(),
            }),
        }
    }
}

/// Trimmed and lower-cased (Unicode lower case, kith's case fold).
fn fold(text: &str) -> String {
    text.trim().to_lowercase()
}

/// An entity type compared: trimmed, lower-cased, spaces and hyphens as `_`.
fn fold_type(entity_type: &str) -> String {
    fold(entity_type)
        .chars()
        .map(|c| if c == ' ' || c == '-' { '_' } else { c })
        .collect()
}

/// The message, with its quote-normalised text and sentences computed once.
struct Source<'a> {
    content: &'a str,
    /// `content` with quote marks normalised.
    normalized: String,
    /// For each byte of `normalized` (and one past its end), the byte offset
    /// in `content` of the character it came from.
    origin: Vec<usize>,
    sentences: Vec<Range<usize>>,
}

impl<'a> Source<'a> {
    fn new(content: &'a str) -> Self {
        let mut normalized = String::with_capacity(content.len());
        let mut origin = Vec::with_capacity(content.len() + 1);
        for (at, c) in content.char_indices() {
            let plain = normalize_quote_mark(c);
            origin.extend(std::iter::repeat_n(at, plain.len_utf8()));
            normalized.push(plain);
        }
        origin.push(content.len());
        Source {
            content,
            normalized,
            origin,
            sentences: sentence_spans(content),
        }
    }

    fn locate(&self, quote: &str) -> Option<Evidence> {
        let needle = normalize_quote_marks(quote.trim());
        if needle.is_empty() {
            return None;
        }
        let first = self.normalized.find(&needle)?;
        let next = first
            + self.normalized[first..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        let repeated = self.normalized[next..].contains(&needle);
        let start = self.origin[first];
        let end = self.origin[first + needle.len()];
        let sentence = if repeated {
            self.content.to_string()
        } else {
            self.sentences_over(start, end)
        };
        Some(Evidence {
            start,
            end,
            quote: self.content[start..end].to_string(),
            sentence,
        })
    }

    /// The text from the first to the last sentence that overlaps
    /// `start..end` (the whole message if none does, which cannot happen for
    /// a quote with a non-blank character).
    fn sentences_over(&self, start: usize, end: usize) -> String {
        let mut over = self
            .sentences
            .iter()
            .filter(|s| s.start < end && s.end > start);
        match over.next() {
            Some(first) => {
                let last_end = over.next_back().map_or(first.end, |s| s.end);
                self.content[first.start..last_end].to_string()
            }
            None => self.content.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FactType, Polarity};

    fn entity(name: &str, entity_type: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: entity_type.into(),
            description: None,
        }
    }

    fn fact(subject: &str, object: &str, quote: &str) -> ExtractedFact {
        ExtractedFact {
            subject: subject.into(),
            subject_entity_type: None,
            predicate: "p".into(),
            object: object.into(),
            object_entity_type: None,
            polarity: Polarity::Positive,
            evidence_quote: quote.into(),
            fact_type: FactType::Fact,
            epistemic_type: EpistemicType::Asserted,
            temporal_intent: None,
            replaces_object: None,
            condition: None,
            confidence: 0.9,
        }
    }

    fn typed(
        mut f: ExtractedFact,
        subject_type: Option<&str>,
        object_type: Option<&str>,
    ) -> ExtractedFact {
        f.subject_entity_type = subject_type.map(Into::into);
        f.object_entity_type = object_type.map(Into::into);
        f
    }

    fn relationship(source: &str, target: &str, quote: &str) -> ExtractedRelationship {
        ExtractedRelationship {
            source_entity: source.into(),
            target_entity: target.into(),
            relationship_type: "partner_of".into(),
            polarity: Polarity::Positive,
            evidence_quote: quote.into(),
            epistemic_type: EpistemicType::Unverified,
            confidence: 0.8,
        }
    }

    fn one_fact(content: &str, entities: Vec<ExtractedEntity>, f: ExtractedFact) -> Grounded {
        ground(
            content,
            &Extraction {
                entities,
                facts: vec![f],
                relationships: vec![],
            },
        )
    }

    fn not_mentioned(field: &str, text: &str) -> DropReason {
        DropReason::NotMentioned {
            field: field.into(),
            text: text.into(),
        }
    }

    fn unknown(field: &str, name: &str) -> DropReason {
        DropReason::UnknownEntity {
            field: field.into(),
            name: name.into(),
        }
    }

    fn ambiguous(field: &str, name: &str) -> DropReason {
        DropReason::AmbiguousEntity {
            field: field.into(),
            name: name.into(),
        }
    }

    #[test]
    fn sentences_split_on_terminators_and_newlines() {
        let cases: &[(&str, &[&str])] = &[
            ("One. Two! Three? Four", &["One.", "Two!", "Three?", "Four"]),
            ("  padded.   ", &["padded."]),
            ("Pi is 3.14 today. Yes", &["Pi is 3.14 today.", "Yes"]),
            ("Wait... what?! Ok", &["Wait...", "what?!", "Ok"]),
            (
                "He said \"go.\" Then left.",
                &["He said \"go.\"", "Then left."],
            ),
            (
                "He said \u{201C}go.\u{201D} Then",
                &["He said \u{201C}go.\u{201D}", "Then"],
            ),
            (
                "line one\nline two\r\n\nthree",
                &["line one", "line two", "three"],
            ),
            ("(aside.) After", &["(aside.)", "After"]),
            ("Dr. Lee", &["Dr. Lee"]),
            (
                "A job with Dr. Patel's clinic. She starts soon.",
                &["A job with Dr. Patel's clinic.", "She starts soon."],
            ),
            (
                "Soccer with Mr. Okoye's team. Ugh.",
                &["Soccer with Mr. Okoye's team.", "Ugh."],
            ),
            (
                "Nights at St. David's now.",
                &["Nights at St. David's now."],
            ),
            (
                "I live on Main St. It's loud.",
                &["I live on Main St.", "It's loud."],
            ),
            (
                "Big news. Leaving St. Mary's in May.",
                &["Big news.", "Leaving St. Mary's in May."],
            ),
            (
                "Visited St. Paul's. Loved it.",
                &["Visited St. Paul's.", "Loved it."],
            ),
            (
                "We met on Oak St. Mary was late.",
                &["We met on Oak St.", "Mary was late."],
            ),
            (
                "A shop on Telegraph Ave. and he fixes bikes.",
                &["A shop on Telegraph Ave. and he fixes bikes."],
            ),
            (
                "A shop on Oak Ave. It's new.",
                &["A shop on Oak Ave.", "It's new."],
            ),
            ("Fruit, e.g. Apples. Yes", &["Fruit, e.g. Apples.", "Yes"]),
            (
                "Lakers vs. Celtics tonight.",
                &["Lakers vs. Celtics tonight."],
            ),
            ("I asked the Dr.", &["I asked the Dr."]),
            ("My pets. Dogs mostly.", &["My pets.", "Dogs mostly."]),
            ("", &[]),
            (" \n \n", &[]),
        ];
        for (text, want) in cases {
            let got: Vec<&str> = sentence_spans(text).into_iter().map(|r| &text[r]).collect();
            assert_eq!(&got, want, "{text:?}");
        }
    }

    #[test]
    fn quotes_are_found_verbatim_with_normalised_quote_marks() {
        // (content, quote, Some((start, end, quote as in content, sentence)) | None)
        type Want<'a> = Option<(usize, usize, &'a str, &'a str)>;
        let content = "Hi. I\u{2019}m in, it\u{2019}s \u{201C}fine\u{201D}. Later!";
        let cases: &[(&str, &str, Want<'_>)] = &[
            (
                "I moved. Now.",
                "I moved.",
                Some((0, 8, "I moved.", "I moved.")),
            ),
            (
                "I moved. Now.",
                "  I moved.  ",
                Some((0, 8, "I moved.", "I moved.")),
            ),
            ("I moved. Now.", "i moved.", None),
            ("I moved. Now.", "I  moved.", None),
            ("I moved. Now.", "   ", None),
            // Curly marks in the message, straight in the quote: the span is
            // the message's bytes.
            (
                content,
                "I'm in, it's \"fine\".",
                Some((
                    4,
                    32,
                    "I\u{2019}m in, it\u{2019}s \u{201C}fine\u{201D}.",
                    "I\u{2019}m in, it\u{2019}s \u{201C}fine\u{201D}.",
                )),
            ),
            // Straight in the message, curly in the quote.
            (
                "Hi. It's ok.",
                "It\u{2019}s ok",
                Some((4, 11, "It's ok", "It's ok.")),
            ),
            // A quote across two sentences takes both.
            ("A b. C d. E f.", "b. C", Some((2, 6, "b. C", "A b. C d."))),
            // Repeated quote: the first span, the whole message as sentence.
            (
                "Yes. I said yes. Yes.",
                "Yes.",
                Some((0, 4, "Yes.", "Yes. I said yes. Yes.")),
            ),
            // Overlapping repeats count too.
            ("aaa", "aa", Some((0, 2, "aa", "aaa"))),
        ];
        for (content, quote, want) in cases {
            let got = locate_quote(content, quote);
            let want = want.map(|(start, end, q, sentence)| Evidence {
                start,
                end,
                quote: q.into(),
                sentence: sentence.into(),
            });
            assert_eq!(got, want, "{content:?} / {quote:?}");
            if let Some(e) = got {
                assert_eq!(&content[e.start..e.end], e.quote);
            }
        }
    }

    #[test]
    fn mentions_are_whole_word_and_case_insensitive() {
        let cases: &[(&str, &str, bool)] = &[
            ("I moved to Lisbon.", "lisbon", true),
            ("I moved to Lisbon.", "Lisbo", false),
            ("I moved to Lisbonia.", "Lisbon", false),
            ("Jordan's plate", "Jordan", true),
            ("Jordan\u{2019}s plate", "Jordan's", true),
            ("Northwind   Analytics", "northwind analytics", true),
            ("I'm in", "I", true),
            ("it's fine", "I", false),
            ("I use C++ daily", "C++", true),
            ("ran in 3:41 flat", "3:41", true),
            ("Príncipe Real", "PRÍNCIPE real", true),
            ("anything", "  ", false),
            ("green tea", "green tea", true),
            ("greener tea", "green tea", false),
        ];
        for (text, needle, want) in cases {
            assert_eq!(mentions(text, needle), *want, "{text:?} / {needle:?}");
        }
    }

    #[test]
    fn personal_references_and_their_families() {
        for word in PERSONAL_REFERENCES {
            assert!(personal_family(word).is_some(), "{word}");
        }
        let cases: &[(&str, Option<&str>)] = &[
            (" I ", Some("i")),
            ("ME", Some("i")),
            ("Ourselves", Some("we")),
            ("yours", Some("you")),
            ("him", Some("he")),
            ("hers", Some("she")),
            ("theirs", Some("they")),
            ("itself", Some("it")),
            ("its", None),
            ("Maya", None),
            ("one", None),
        ];
        for (word, family) in cases {
            assert_eq!(personal_family(word).map(|f| f[0]), *family, "{word}");
        }
        assert!(is_named_reference_type(" Programming Language "));
        assert!(is_named_reference_type("country"));
        assert!(!is_named_reference_type("person"));
    }

    #[test]
    fn qualifiers() {
        let cases: &[(&str, Option<Qualifier>)] = &[
            ("I'll come if it's sunny.", Some(cond("if it's sunny"))),
            (
                "If there's cilantro in every dish, Jordan will walk out.",
                Some(cond("If there's cilantro in every dish")),
            ),
            (
                "Count me in as long as it's not too late.",
                Some(cond("as long as it's not too late")),
            ),
            (
                "Count me in as  long\tas it's early; ok",
                Some(cond("as  long\tas it's early")),
            ),
            (
                "Fine, provided that Sam drives (he offered).",
                Some(cond("provided that Sam drives")),
            ),
            (
                "I won't go unless it's 3.5 km away.",
                Some(cond("unless it's 3.5 km away")),
            ),
            ("We might move to Porto.", Some(Qualifier::Hypothetical)),
            ("Maybe I'll switch to tea.", Some(Qualifier::Hypothetical)),
            ("May I ask?", Some(Qualifier::Hypothetical)),
            ("I could try it if you like.", Some(cond("if you like"))),
            ("I moved in May.", None),
            ("That's iffy, I couldn't say.", None),
            ("I moved to Lisbon.", None),
        ];
        for (sentence, want) in cases {
            assert_eq!(qualifier(sentence), *want, "{sentence:?}");
        }
    }

    fn cond(clause: &str) -> Qualifier {
        Qualifier::Conditional {
            clause: clause.into(),
        }
    }

    #[test]
    fn facts_take_qualifiers_from_their_sentence() {
        // (content, quote, epistemic in, condition in, epistemic out, condition out)
        type Case<'a> = (
            &'a str,
            EpistemicType,
            Option<&'a str>,
            EpistemicType,
            Option<&'a str>,
        );
        let cases: &[Case<'_>] = &[
            (
                "I eat out if it rains.",
                EpistemicType::Asserted,
                None,
                EpistemicType::Conditional,
                Some("if it rains"),
            ),
            (
                "I eat out if it rains.",
                EpistemicType::Asserted,
                Some("when wet"),
                EpistemicType::Conditional,
                Some("when wet"),
            ),
            (
                "I eat out if it rains.",
                EpistemicType::Asserted,
                Some(" "),
                EpistemicType::Conditional,
                Some("if it rains"),
            ),
            (
                "I might eat out.",
                EpistemicType::Asserted,
                None,
                EpistemicType::Hypothetical,
                None,
            ),
            (
                "I might eat out.",
                EpistemicType::Conditional,
                Some("x"),
                EpistemicType::Conditional,
                Some("x"),
            ),
            (
                "I eat out.",
                EpistemicType::Observed,
                None,
                EpistemicType::Observed,
                None,
            ),
        ];
        for (content, before, condition, after, condition_after) in cases {
            let mut f = fact("I", "out", content);
            f.epistemic_type = *before;
            f.condition = condition.map(Into::into);
            let g = one_fact(content, vec![], f);
            assert!(g.dropped.is_empty(), "{content}: {:?}", g.dropped);
            assert_eq!(g.facts[0].fact.epistemic_type, *after, "{content}");
            assert_eq!(
                g.facts[0].fact.condition.as_deref(),
                *condition_after,
                "{content}"
            );
        }
    }

    #[test]
    fn fact_endpoints_resolve_or_drop() {
        let entities = vec![
            entity("Maya", "person"),
            entity("Lisbon", "place"),
            entity("Jordan", "person"),
            entity("Jordan", "place"),
            entity("US", "country"),
            entity("IT", "technology"),
            entity("I", "chemical"),
        ];
        // (content, subject, subject type, object, object type, Ok((subject, object)) | Err(reason))
        type Want = Result<(EndpointRef, EndpointRef), DropReason>;
        type Case<'a> = (
            &'a str,
            &'a str,
            Option<&'a str>,
            &'a str,
            Option<&'a str>,
            Want,
        );
        let ent = |index: usize| EndpointRef::Entity { index };
        let personal = |s: &str| EndpointRef::Personal { surface: s.into() };
        let cases: Vec<Case<'_>> = vec![
            // Personal references, any family member mentioned.
            (
                "I moved to Lisbon.",
                "I",
                None,
                "Lisbon",
                None,
                Ok((personal("I"), ent(1))),
            ),
            (
                "My name is Sam.",
                " I ",
                None,
                "Sam",
                None,
                Ok((personal("I"), EndpointRef::Value)),
            ),
            (
                "Call me Sam.",
                "I",
                Some("person"),
                "Sam",
                None,
                Ok((personal("I"), EndpointRef::Value)),
            ),
            (
                "We're moving to Lisbon.",
                "us",
                None,
                "Lisbon",
                Some("place"),
                Ok((personal("us"), ent(1))),
            ),
            (
                "Their dog is Rex.",
                "they",
                None,
                "Rex",
                None,
                Ok((personal("they"), EndpointRef::Value)),
            ),
            (
                "It moved to Lisbon.",
                "I",
                None,
                "Lisbon",
                None,
                Err(not_mentioned("subject", "I")),
            ),
            (
                "Maya likes it.",
                "Maya",
                None,
                "it",
                None,
                Ok((ent(0), personal("it"))),
            ),
            // Exception types keep the word a named entity.
            (
                "The US sets tariffs.",
                "US",
                Some("country"),
                "tariffs",
                None,
                Ok((ent(4), EndpointRef::Value)),
            ),
            (
                "IT runs the servers.",
                "IT",
                Some("Technology"),
                "servers",
                None,
                Ok((ent(5), EndpointRef::Value)),
            ),
            (
                "I is iodine.",
                "I",
                Some("chemical"),
                "iodine",
                None,
                Ok((ent(6), EndpointRef::Value)),
            ),
            (
                "Tell us the tariffs.",
                "us",
                Some("country"),
                "tariffs",
                None,
                Ok((ent(4), EndpointRef::Value)),
            ),
            (
                "I is iodine.",
                "I",
                Some("element"),
                "iodine",
                None,
                Err(unknown("subject", "I")),
            ),
            // Named subjects: exactly one listed entity.
            (
                "maya moved to Lisbon.",
                " MAYA ",
                None,
                "Lisbon",
                None,
                Ok((ent(0), ent(1))),
            ),
            (
                "Maya moved to Lisbon.",
                "Maya",
                Some("place"),
                "Lisbon",
                None,
                Err(unknown("subject", "Maya")),
            ),
            (
                "Sam moved to Lisbon.",
                "Sam",
                None,
                "Lisbon",
                None,
                Err(unknown("subject", "Sam")),
            ),
            (
                "Jordan moved to Lisbon.",
                "Jordan",
                None,
                "Lisbon",
                None,
                Err(ambiguous("subject", "Jordan")),
            ),
            (
                "Jordan moved to Lisbon.",
                "Jordan",
                Some("person"),
                "Lisbon",
                None,
                Ok((ent(2), ent(1))),
            ),
            // Named objects.
            (
                "Maya met Jordan.",
                "Maya",
                None,
                "Jordan",
                None,
                Err(ambiguous("object", "Jordan")),
            ),
            (
                "Maya met Jordan.",
                "Maya",
                None,
                "Jordan",
                Some("person"),
                Ok((ent(0), ent(2))),
            ),
            (
                "Maya met Jordan.",
                "Maya",
                None,
                "Jordan",
                Some("organization"),
                Err(unknown("object", "Jordan")),
            ),
            (
                "Maya likes green tea.",
                "Maya",
                None,
                "green tea",
                None,
                Ok((ent(0), EndpointRef::Value)),
            ),
            (
                "Maya likes green tea.",
                "Maya",
                None,
                "green tea",
                Some(" "),
                Ok((ent(0), EndpointRef::Value)),
            ),
            (
                "Maya likes green tea.",
                "Maya",
                None,
                "green tea",
                Some("product"),
                Err(unknown("object", "green tea")),
            ),
            (
                "Maya likes green tea.",
                "Maya",
                None,
                "black tea",
                None,
                Err(not_mentioned("object", "black tea")),
            ),
            (
                "Maya likes green tea.",
                "Maya",
                None,
                "tea",
                None,
                Ok((ent(0), EndpointRef::Value)),
            ),
            // Mentions come before resolution.
            (
                "Maya likes green tea.",
                "Sam",
                None,
                "tea",
                None,
                Err(not_mentioned("subject", "Sam")),
            ),
        ];
        for (content, subject, subject_type, object, object_type, want) in cases {
            let f = typed(fact(subject, object, content), subject_type, object_type);
            let g = one_fact(content, entities.clone(), f);
            let got = match (g.facts.first(), g.dropped.first()) {
                (Some(f), None) => Ok((f.subject.clone(), f.object.clone())),
                (None, Some(d)) => {
                    assert_eq!((d.kind, d.index), (ClaimKind::Fact, 0));
                    Err(d.reason.clone())
                }
                other => panic!("{content}: {other:?}"),
            };
            assert_eq!(
                got, want,
                "{content:?} {subject:?}/{subject_type:?} {object:?}/{object_type:?}"
            );
        }
    }

    #[test]
    fn relationship_ends_must_be_entities_or_personal() {
        let entities = vec![
            entity("Jordan", "person"),
            entity("Maya", "person"),
            entity("Sam", "person"),
            entity("sam", "pet"),
        ];
        let ent = |index: usize| EndpointRef::Entity { index };
        let personal = |s: &str| EndpointRef::Personal { surface: s.into() };
        type Want = Result<(EndpointRef, EndpointRef), DropReason>;
        let cases: Vec<(&str, &str, &str, Want)> = vec![
            (
                "Jordan is my partner.",
                "Jordan",
                "I",
                Ok((ent(0), personal("I"))),
            ),
            (
                "Jordan and Maya are partners.",
                "Jordan",
                "maya",
                Ok((ent(0), ent(1))),
            ),
            (
                "Jordan and Priya are partners.",
                "Jordan",
                "Priya",
                Err(unknown("target_entity", "Priya")),
            ),
            (
                "Jordan and Sam are friends.",
                "Jordan",
                "Sam",
                Err(ambiguous("target_entity", "Sam")),
            ),
            (
                "Jordan is my partner.",
                "Maya",
                "Jordan",
                Err(not_mentioned("source_entity", "Maya")),
            ),
            (
                "Jordan is my partner.",
                "Jordan",
                "they",
                Err(not_mentioned("target_entity", "they")),
            ),
        ];
        for (content, source, target, want) in cases {
            let g = ground(
                content,
                &Extraction {
                    entities: entities.clone(),
                    facts: vec![],
                    relationships: vec![relationship(source, target, content)],
                },
            );
            let got = match (g.relationships.first(), g.dropped.first()) {
                (Some(r), None) => Ok((r.source.clone(), r.target.clone())),
                (None, Some(d)) => {
                    assert_eq!((d.kind, d.index), (ClaimKind::Relationship, 0));
                    Err(d.reason.clone())
                }
                other => panic!("{content}: {other:?}"),
            };
            assert_eq!(got, want, "{content:?} {source:?} -> {target:?}");
        }
    }

    #[test]
    fn relationships_under_a_marker_become_hypothetical() {
        let cases: &[(&str, EpistemicType, EpistemicType)] = &[
            (
                "Jordan might be my partner.",
                EpistemicType::Unverified,
                EpistemicType::Hypothetical,
            ),
            (
                "Jordan is my partner if asked.",
                EpistemicType::Asserted,
                EpistemicType::Hypothetical,
            ),
            (
                "Jordan is my partner if asked.",
                EpistemicType::Conditional,
                EpistemicType::Conditional,
            ),
            (
                "Jordan is my partner.",
                EpistemicType::Asserted,
                EpistemicType::Asserted,
            ),
        ];
        for (content, before, after) in cases {
            let mut r = relationship("Jordan", "I", content);
            r.epistemic_type = *before;
            let g = ground(
                content,
                &Extraction {
                    entities: vec![entity("Jordan", "person")],
                    facts: vec![],
                    relationships: vec![r],
                },
            );
            assert_eq!(
                g.relationships[0].relationship.epistemic_type, *after,
                "{content}"
            );
        }
    }

    #[test]
    fn entities_are_deduplicated_first_spelling_kept() {
        let listed = vec![
            entity(" Lisbon ", "place"),
            entity("lisbon", "Place"),
            entity("LISBON", "city"),
            entity("Maya", "person"),
            entity("maya", "person"),
            entity("Open AI", "organization"),
            entity("open ai", "Organization"),
        ];
        let got = dedup_entities(&listed);
        let names: Vec<(&str, &str)> = got
            .iter()
            .map(|e| (e.name.as_str(), e.entity_type.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                (" Lisbon ", "place"),
                ("LISBON", "city"),
                ("Maya", "person"),
                ("Open AI", "organization")
            ]
        );
        // Indexes point into the deduplicated list.
        let g = one_fact(
            "Maya moved to Lisbon.",
            listed,
            typed(
                fact("maya", "lisbon", "Maya moved to Lisbon."),
                None,
                Some("place"),
            ),
        );
        assert_eq!(g.facts[0].subject, EndpointRef::Entity { index: 2 });
        assert_eq!(g.facts[0].object, EndpointRef::Entity { index: 0 });
    }

    #[test]
    fn dropped_claims_keep_their_index_and_siblings_stay() {
        let content = "I work at Northwind. Jordan is my partner.";
        let extraction = Extraction {
            entities: vec![
                entity("Northwind", "organization"),
                entity("Jordan", "person"),
            ],
            facts: vec![
                fact("I", "Northwind", "I work at Northwind."),
                fact("I", "Brightpath", "I work at Brightpath."),
                typed(
                    fact("I", "Northwind", "I work at Northwind."),
                    None,
                    Some("organization"),
                ),
                fact("I", "Jordan", "Jordan is my partner"),
            ],
            relationships: vec![
                relationship("Jordan", "I", "Jordan is my partner."),
                relationship("Jordan", "Sam", "Jordan is my partner."),
            ],
        };
        let g = ground(content, &extraction);
        assert_eq!(g.facts.len(), 3);
        assert_eq!(g.relationships.len(), 1);
        assert_eq!(
            g.dropped,
            vec![
                Dropped {
                    kind: ClaimKind::Fact,
                    index: 1,
                    reason: DropReason::QuoteNotFound {
                        quote: "I work at Brightpath.".into()
                    },
                },
                Dropped {
                    kind: ClaimKind::Relationship,
                    index: 1,
                    reason: not_mentioned("target_entity", "Sam"),
                },
            ]
        );
        let g2 = &g.facts[2];
        assert_eq!((g2.evidence.start, g2.evidence.end), (21, 41));
        assert_eq!(g2.evidence.sentence, "Jordan is my partner.");
    }

    #[test]
    fn grounded_output_round_trips_through_json() {
        let g = one_fact(
            "I\u{2019}m moving to Lisbon if the job works out.",
            vec![entity("Lisbon", "place")],
            typed(
                fact("I", "Lisbon", "I'm moving to Lisbon"),
                None,
                Some("place"),
            ),
        );
        let text = serde_json::to_string(&g).unwrap();
        let back: Grounded = serde_json::from_str(&text).unwrap();
        assert_eq!(back, g);
        assert_eq!(g.facts[0].evidence.quote, "I\u{2019}m moving to Lisbon");
        assert_eq!(
            g.facts[0].fact.condition.as_deref(),
            Some("if the job works out")
        );
    }
}

#[cfg(test)]
mod speaker_grounding_tests {
    use super::*;

    #[test]
    fn the_speakers_first_person_mentions_the_speaker() {
        let extraction = Extraction::parse(
            r#"{"entities": [{"name": "Dana", "entity_type": "person"}, {"name": "Lisbon", "entity_type": "place"}],
                "facts": [{"subject": "Dana", "subject_entity_type": "person", "predicate": "lives_in",
                           "object": "Lisbon", "polarity": "positive", "evidence_quote": "I moved to Lisbon.",
                           "fact_type": "fact", "epistemic_type": "asserted", "confidence": 0.9}]}"#,
        )
        .unwrap();
        let off = ground("I moved to Lisbon.", &extraction);
        assert_eq!(
            off.facts.len(),
            0,
            "off by default: Dana is not in the sentence"
        );
        let on = ground_with(
            "I moved to Lisbon.",
            &extraction,
            &GroundingOptions {
                speaker: Some("dana".into()),
                ..GroundingOptions::default()
            },
        );
        assert_eq!(on.facts.len(), 1);
        assert_eq!(on.facts[0].subject, EndpointRef::Entity { index: 0 });
        // Another speaker's name is not grounded by this turn's I.
        let other = ground_with(
            "I moved to Lisbon.",
            &extraction,
            &GroundingOptions {
                speaker: Some("Sam".into()),
                ..GroundingOptions::default()
            },
        );
        assert_eq!(other.facts.len(), 0);
    }

    fn said(predicate: &str, object: &str, quote: &str) -> ExtractedFact {
        ExtractedFact {
            subject: "I".into(),
            subject_entity_type: None,
            predicate: predicate.into(),
            object: object.into(),
            object_entity_type: None,
            polarity: crate::Polarity::Positive,
            evidence_quote: quote.into(),
            fact_type: crate::FactType::Fact,
            epistemic_type: EpistemicType::Asserted,
            temporal_intent: None,
            replaces_object: None,
            condition: None,
            confidence: 0.9,
        }
    }

    /// Spec ¶8, reference notes §3: try/plan/want clauses need a
    /// non-actual predicate.
    #[test]
    fn attempts_and_intentions_need_a_non_actual_predicate() {
        let cases: &[(&str, &str, &str, Option<&str>)] = &[
            (
                "I'm trying to quit coffee.",
                "quit",
                "coffee",
                Some("trying to"),
            ),
            (
                "I'm trying to quit coffee.",
                "trying_to_quit",
                "coffee",
                None,
            ),
            ("I plan to move.", "moves", "move", Some("plan to")),
            ("I plan to move.", "plans_to", "move", None),
            ("I want to learn Go.", "learns", "Go", Some("want to")),
            ("I want to learn Go.", "wants_to_learn", "Go", None),
            (
                "I\u{2019}d like to visit Kyoto.",
                "visited",
                "Kyoto",
                Some("I\u{2019}d like to"),
            ),
            (
                "I tried to fix the bike.",
                "fixed",
                "the bike",
                Some("tried to"),
            ),
            // The object before the marker is a plain fact.
            (
                "I work at Northwind and want to learn Go.",
                "works_at",
                "Northwind",
                None,
            ),
            (
                "I work at Northwind and want to learn Go.",
                "learns",
                "Go",
                Some("want to"),
            ),
            // "like to" without "would" is a preference, not an intention.
            ("I like to run.", "likes", "run", None),
        ];
        for (sentence, predicate, object, dropped) in cases {
            let extraction = Extraction {
                entities: vec![],
                facts: vec![said(predicate, object, sentence)],
                relationships: vec![],
            };
            let got = ground(sentence, &extraction);
            match dropped {
                Some(marker) => {
                    assert!(got.facts.is_empty(), "{sentence} / {predicate}");
                    assert_eq!(
                        got.dropped[0].reason,
                        DropReason::IntentionAsFact {
                            predicate: predicate.to_string(),
                            marker: marker.to_string(),
                        },
                        "{sentence}"
                    );
                    // The rules of extractions saved before kith_ingest_v3.
                    let old = ground_with(
                        sentence,
                        &extraction,
                        &GroundingOptions {
                            intentions: IntentionRule::Unchecked,
                            ..GroundingOptions::default()
                        },
                    );
                    assert_eq!(old.facts.len(), 1, "{sentence}");
                }
                None => assert_eq!(got.facts.len(), 1, "{sentence} / {predicate}: {got:?}"),
            }
        }
        // Relationships too: the target is the object.
        let sentence = "I want to work at Google.";
        let relationship = |kind: &str| ExtractedRelationship {
            source_entity: "I".into(),
            target_entity: "Google".into(),
            relationship_type: kind.into(),
            polarity: crate::Polarity::Positive,
            evidence_quote: sentence.into(),
            epistemic_type: EpistemicType::Asserted,
            confidence: 0.9,
        };
        let extraction = Extraction {
            entities: vec![ExtractedEntity {
                name: "Google".into(),
                entity_type: "organization".into(),
                description: None,
            }],
            facts: vec![],
            relationships: vec![relationship("works_at"), relationship("wants_to_work_at")],
        };
        let got = ground(sentence, &extraction);
        assert_eq!(got.relationships.len(), 1);
        assert_eq!(
            got.relationships[0].relationship.relationship_type,
            "wants_to_work_at"
        );
        assert!(matches!(
            got.dropped[0].reason,
            DropReason::IntentionAsFact { .. }
        ));
    }
}
