//! The clause reader: what people say about themselves in their own words.
//!
//! The pattern table ([`crate::heuristic::PATTERNS`]) reads a few kinds of
//! fact precisely (names, likes, work, residence, relations). Most of what
//! people tell each other is none of those: "I went to a support group
//! yesterday", "I'm swamped with the kids", "I painted that lake sunrise
//! last year", "my kids are so excited about summer break". The clause
//! reader gives one claim for each such first-person clause:
//!
//! - **subject** `I` or `we` (as written) where a clause starts (the start
//!   of the sentence, after a clause break, or after a conjunction or a
//!   time word, see [`OPENERS`]), or `my <noun>` followed by a verb (the
//!   subject is then `I` and the noun leads the predicate: "my kids are
//!   excited" is `I kids_are excited`);
//! - **verb group**: auxiliaries and adverbs, then the main verb; `not` or
//!   `never` makes the claim negative; `will`, `gonna` and `going to` make it
//!   a plan (`plans_to`, non-actual); `would`, `could`, `might`, `should`
//!   and `may` make it hypothetical, which gives nothing;
//! - **predicate**: the main verb as written, lower case, with the
//!   preposition that follows it (`went_to`, `painted`, `carving_out`);
//!   a form of *be* before no verb is `is` or `was` (a state: "I'm swamped
//!   with the kids" is `I is swamped with the kids`), *have* as the main
//!   verb is `has` or `had`;
//! - **object**: the rest of the clause, cut at the next clause break,
//!   conjunction or time phrase, at most [`MAX_WORDS`] words.
//!
//! It gives nothing for chatter: verbs of talking and thinking ("I think",
//! "I know", "I mean", "I guess"), objects about the listener ("I'm so
//! proud of you"), objects that refer elsewhere ("I love it"), and states
//! that are replies ("I'm glad", "I'm sure"). Questions never reach it.

use crate::heuristic::{ADVERBS, CLAUSE_STOPS, NO_VALUE, TIME_STOPS, VALUE_NOT_REFERENCE};
use crate::tokens::{word_at, Kind, Tok};

/// The longest object, in words: a clause is cut, not dropped, when longer.
pub const MAX_WORDS: usize = 8;

/// Words after which `I` or `we` starts a clause (besides a clause break or
/// the start of the sentence): conjunctions, replies and time words.
pub const OPENERS: &[&str] = &[
    "and",
    "but",
    "so",
    "because",
    "cause",
    "cos",
    "then",
    "also",
    "plus",
    "yeah",
    "yes",
    "yep",
    "well",
    "oh",
    "honestly",
    "actually",
    "now",
    "when",
    "after",
    "before",
    "since",
    "while",
    "though",
    "although",
    "until",
    "till",
    "once",
    "today",
    "yesterday",
    "tonight",
    "recently",
    "lately",
    "finally",
    "week",
    "weekend",
    "month",
    "year",
    "night",
    "morning",
    "ago",
    "too",
    "wow",
    "haha",
    "lol",
    "ok",
    "okay",
    "hey",
    "hi",
    "guess",
    "think",
    "know",
    "glad",
    "sure",
];

/// Auxiliary words of a verb group, besides forms of *be* and *have*.
const AUXILIARIES: &[&str] = &["do", "does", "did", "been", "got"];

/// Words that make a verb group a plan.
const FUTURE: &[&str] = &["will", "shall", "gonna"];

/// Words that make a verb group hypothetical: the clause gives nothing.
/// `can` among them: "so I can plan a route" is a purpose, "I can barely
/// run" an ability, neither a thing that happened.
const HYPOTHETICAL: &[&str] = &[
    "would", "could", "might", "should", "may", "must", "ought", "can",
];

/// Adverbs of the verb group beyond the pattern table's [`ADVERBS`].
const MORE_ADVERBS: &[&str] = &[
    "kinda",
    "sorta",
    "super",
    "pretty",
    "really",
    "lately",
    "def",
    "ever",
    "once",
    "first",
    "finally",
    "again",
    "sometimes",
    "often",
    "rarely",
    "barely",
    "hardly",
    "slowly",
    "almost",
    "nearly",
    "somehow",
    "personally",
    "luckily",
    "thankfully",
    "last",
];

/// Main verbs that are chatter, not facts about the speaker: talking,
/// thinking, agreeing; and dislikes and preferences, which only the
/// pattern table reads (their polarity and object need its care).
pub const CHATTER_VERBS: &[&str] = &[
    "think",
    "thought",
    "thinking",
    "guess",
    "know",
    "knew",
    "mean",
    "meant",
    "bet",
    "agree",
    "agreed",
    "wish",
    "wonder",
    "wondering",
    "wondered",
    "see",
    "understand",
    "appreciate",
    "imagine",
    "suppose",
    "reckon",
    "say",
    "said",
    "saying",
    "tell",
    "told",
    "thank",
    "hate",
    "hates",
    "prefer",
    "prefers",
    "dislike",
    "gotta",
    "get",
    "totally",
    "just",
    "can",
    "do",
    "did",
    "does",
    "let",
    "try",
    "last",
    "wait",
    "bet",
    "promise",
    "swear",
    "hear",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "being",
    "sure",
    "glad",
    "sorry",
    "here",
    "there",
    "off",
    "in",
    "on",
    "not",
    "totally",
    "wonder",
    "admire",
    "appreciated",
    "understood",
];

/// States that are replies, not facts: "I'm glad", "I'm sure", "I'm
/// here for you".
pub const CHATTER_STATES: &[&str] = &[
    "glad", "sure", "sorry", "here", "there", "in", "down", "good", "fine", "okay", "ok", "well",
    "afraid", "not", "all", "right", "with", "on", "off", "just",
];

/// Words that begin no verb: after them the clause has no main verb.
const NOT_A_VERB: &[&str] = &[
    "a", "an", "the", "my", "your", "his", "her", "our", "their", "this", "that", "these", "those",
    "to", "at", "in", "on", "of", "for", "from", "by", "with", "about", "and", "or", "but", "so",
    "too", "it", "you", "me", "him", "them", "us", "i", "we", "she", "he", "they", "'s", "as",
    "like", "if", "when", "what", "how", "why", "where", "who", "which", "than", "some", "any",
    "all", "no", "every", "lots", "lot", "much", "many", "more", "most", "one", "two", "three",
    "such", "own", "not", "there", "here",
];

/// Prepositions and particles that join their verb in the predicate
/// ("went to" → `went_to`).
const PARTICLES: &[&str] = &[
    "as", "to", "at", "in", "on", "with", "for", "from", "about", "into", "up", "out", "off",
    "back", "over", "through", "by", "around", "after", "down", "away",
];

/// Words that never lead an object (the value would be a dangling
/// relative clause or a reference).
const OBJECT_NOT_AFTER: &[&str] = &[
    "than", "like", "as", "if", "when", "what", "how", "why", "where", "who", "which", "whether",
];

/// Verbs whose plan is a reply ("I'll try", "I'll let you know").
const FUTURE_CHATTER: &[&str] = &[
    "try", "think", "guess", "wait", "bet", "mean", "know", "see", "say", "tell", "let", "get",
    "be", "keep",
];

/// What follows "I'm doing" in a reply about how one is.
const DOING_CHATTER: &[&str] = &[
    "well",
    "great",
    "good",
    "fine",
    "ok",
    "okay",
    "alright",
    "better",
    "best",
    "my",
    "pretty",
    "so",
    "amazing",
    "awesome",
    "it",
    "that",
    "this",
    "something",
    "what",
    "the",
    "too",
    "much",
    "a",
    "same",
];

/// Verbs that say what something does to the speaker ("Nature's beauty
/// reminds me to slow down", "Their love gives me strength").
pub const TO_ME_VERBS: &[&str] = &[
    "reminds",
    "reminded",
    "gives",
    "gave",
    "makes",
    "made",
    "helps",
    "helped",
    "keeps",
    "kept",
    "drives",
    "drove",
    "brings",
    "brought",
    "motivates",
    "motivated",
    "inspires",
    "inspired",
    "fills",
    "filled",
    "taught",
    "teaches",
    "showed",
    "shows",
    "calms",
    "relaxes",
    "encourages",
    "encouraged",
    "pushes",
    "pushed",
    "got",
    "remind",
    "give",
    "make",
    "help",
    "keep",
    "drive",
    "bring",
    "motivate",
    "inspire",
    "fill",
    "teach",
    "show",
    "calm",
    "relax",
    "encourage",
    "push",
];

/// Words that cannot end an object: the phrase goes on after them.
const DANGLING: &[&str] = &[
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "of", "to", "in", "on",
    "at", "for", "with", "from", "by", "about", "along", "into", "over", "through", "some", "this",
    "that", "and", "or", "but", "very", "so", "really", "just", "lately", "nowadays", "anyway",
    "though", "too", "now",
];

/// Words of the listener: a clause about them is not about the speaker.
const LISTENER: &[&str] = &["you", "your", "yours", "yourself", "ya", "u"];

/// One claim the clause reader read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clause {
    /// The subject token's index (the pattern table wins at the same index).
    pub subject_at: usize,
    /// The token after the subject: no other clause starts inside it.
    pub subject_end: usize,
    /// The subject as written (`I`, `We`), or `I` for a `my` clause.
    pub subject: String,
    /// The predicate (lower case, `_` between words).
    pub predicate: String,
    /// The object, verbatim from the sentence.
    pub object: String,
    /// Whether `not` or `never` denies it.
    pub negative: bool,
}

/// Every first-person clause of one sentence (already known to be no
/// question).
pub(crate) fn read(toks: &[Tok], sentence: &str) -> Vec<Clause> {
    let mut out = Vec::new();
    if let Some(c) = subjectless_clause(toks, sentence) {
        out.push(c);
    }
    for k in 0..toks.len() {
        // No clause starts inside another's subject ("Improving education
        // and infrastructure is interesting to me" is one clause).
        if !starts_clause(toks, k) || out.iter().any(|o: &Clause| k < o.subject_end) {
            continue;
        }
        let clause = match word_at(toks, k) {
            Some("i") | Some("we") if !toks[k].tail => subject_clause(toks, sentence, k),
            Some("my") => my_clause(toks, sentence, k)
                .or_else(|| to_me_clause(toks, sentence, k))
                .or_else(|| about_me_clause(toks, sentence, k)),
            Some(_) => {
                to_me_clause(toks, sentence, k).or_else(|| about_me_clause(toks, sentence, k))
            }
            None => None,
        };
        if let Some(c) = clause {
            if !out
                .iter()
                .any(|o: &Clause| o.predicate == c.predicate && o.object == c.object)
            {
                out.push(c);
            }
        }
    }
    out
}

/// A sentence that starts with a past-tense verb and speaks of the speaker
/// ("Lost my job as a banker yesterday", "Went to the gym with my
/// sister"): the subject `I` is understood, as people drop it in chat.
fn subjectless_clause(toks: &[Tok], sentence: &str) -> Option<Clause> {
    let mut first = toks.iter().position(|t| t.kind == Kind::Word)?;
    // "Been doing some promotion for my business".
    if toks[first].lower == "been" && word_at(toks, first + 1).is_some_and(|w| w.ends_with("ing")) {
        first += 1;
    }
    let verb = toks[first].lower.as_str();
    let past = (verb.ends_with("ed") && verb.len() > 4)
        || IRREGULAR_PAST.contains(&verb)
        || (first > 0 && verb.ends_with("ing"));
    if !past || CHATTER_VERBS.contains(&verb) {
        return None;
    }
    let speaks_of_self = toks
        .iter()
        .any(|t| t.kind == Kind::Word && matches!(t.lower.as_str(), "my" | "me" | "myself"));
    if !speaks_of_self {
        return None;
    }
    let g = VerbGroup {
        verb: Some(first),
        be: None,
        negative: false,
        future: false,
        next: first + 1,
    };
    let (predicate, from) = predicate_of(toks, sentence, &g)?;
    let object = object_at(toks, sentence, from)?;
    Some(Clause {
        subject_at: first,
        subject_end: first,
        subject: "I".into(),
        predicate,
        object,
        negative: false,
    })
}

/// Common irregular past-tense verbs.
const IRREGULAR_PAST: &[&str] = &[
    "went",
    "got",
    "took",
    "made",
    "had",
    "saw",
    "gave",
    "found",
    "met",
    "ran",
    "began",
    "broke",
    "bought",
    "brought",
    "came",
    "fell",
    "grew",
    "kept",
    "left",
    "lost",
    "paid",
    "put",
    "sent",
    "spent",
    "won",
    "wrote",
    "built",
    "taught",
    "caught",
    "drove",
    "ate",
    "flew",
    "sat",
    "stood",
    "held",
    "led",
    "became",
    "chose",
    "drew",
    "sang",
    "swam",
    "threw",
    "wore",
    "woke",
    "hit",
    "cut",
    "did",
    "read",
    "rode",
    "sold",
    "shot",
    "slept",
    "spoke",
    "stole",
    "struck",
    "swore",
    "tore",
    "understood",
    "baked",
    "dug",
    "fed",
    "forgot",
    "froze",
    "hid",
    "hung",
    "lit",
    "quit",
    "shook",
    "shut",
    "sank",
    "spun",
    "split",
    "spread",
    "stuck",
];

/// Whether token `k` starts a clause.
fn starts_clause(toks: &[Tok], k: usize) -> bool {
    let Some(before) = k.checked_sub(1).and_then(|b| toks.get(b)) else {
        return true;
    };
    match before.kind {
        Kind::Break | Kind::Symbol => true,
        // "Last Friday I went", "BTW I started": a name or a time before.
        Kind::Word => before.capital || OPENERS.contains(&before.lower.as_str()),
    }
}

/// The verb group after the subject, from token `at`.
struct VerbGroup {
    /// The main verb's token, or `None` for a state (a form of be before no
    /// verb); the object then starts at `next`.
    verb: Option<usize>,
    /// The form of be, when there was one (`is` or `was`).
    be: Option<&'static str>,
    negative: bool,
    future: bool,
    /// The first token after the group.
    next: usize,
}

fn verb_group(toks: &[Tok], mut at: usize) -> Option<VerbGroup> {
    let mut g = VerbGroup {
        verb: None,
        be: None,
        negative: false,
        future: false,
        next: at,
    };
    loop {
        let w = word_at(toks, at)?;
        if is_adverb(w) {
            at += 1;
        } else if w == "not" || w == "never" {
            g.negative = true;
            at += 1;
        } else if HYPOTHETICAL.contains(&w) {
            return None;
        } else if FUTURE.contains(&w) {
            g.future = true;
            at += 1;
        } else if w == "going" && word_at(toks, at + 1) == Some("to") && g.be.is_some() {
            g.future = true;
            at += 2;
        } else if w == "off" && g.be.is_some() && word_at(toks, at + 1) == Some("to") {
            // "I'm off to go swimming with the kids".
            g.future = true;
            at += 2;
        } else if matches!(w, "am" | "is" | "are") {
            g.be = Some("is");
            at += 1;
        } else if matches!(w, "was" | "were") {
            g.be = Some("was");
            at += 1;
        } else if matches!(w, "have" | "has" | "had") && is_participle_next(toks, at + 1) {
            at += 1;
        } else if AUXILIARIES.contains(&w) && is_verb_like(toks, at + 1) {
            if w == "been" {
                g.be.get_or_insert("was");
            }
            at += 1;
        } else {
            break;
        }
    }
    let w = word_at(toks, at)?;
    if NOT_A_VERB.contains(&w) || toks[at].capital || !w.chars().all(char::is_alphabetic) {
        // A state ("I'm a nurse", "I was in Paris") or nothing.
        g.be?;
        g.next = at;
        return Some(g);
    }
    if g.be.is_some() && !g.future && !w.ends_with("ing") {
        // "I'm swamped", "I was exhausted": a state, the word included.
        g.next = at;
        return Some(g);
    }
    g.verb = Some(at);
    g.next = at + 1;
    Some(g)
}

/// Whether the word at `at` (after adverbs) reads as a past participle or
/// `been`/`got`, so a preceding *have* is an auxiliary.
fn is_participle_next(toks: &[Tok], at: usize) -> bool {
    let at = past_adverbs(toks, at);
    word_at(toks, at).is_some_and(|w| {
        matches!(w, "been" | "got" | "gotten" | "not" | "never")
            || w.ends_with("ed")
            || IRREGULAR_PARTICIPLES.contains(&w)
    })
}

/// Whether the word at `at` (after adverbs) can continue a verb group.
fn is_verb_like(toks: &[Tok], mut at: usize) -> bool {
    while word_at(toks, at).is_some_and(|w| is_adverb(w) || w == "not" || w == "never") {
        at += 1;
    }
    word_at(toks, at).is_some_and(|w| !NOT_A_VERB.contains(&w) && !toks[at].capital)
}

/// Past participles without `-ed` that follow *have*.
const IRREGULAR_PARTICIPLES: &[&str] = &[
    "been", "done", "gone", "seen", "made", "had", "taken", "given", "found", "got", "gotten",
    "met", "bought", "brought", "built", "felt", "kept", "left", "lost", "read", "run", "said",
    "sent", "spent", "taught", "thought", "told", "won", "written", "begun", "become", "known",
    "grown", "drawn", "heard", "held", "come", "put", "set", "tried",
];

/// `I` or `we` at `k`, then a verb group and an object.
fn subject_clause(toks: &[Tok], sentence: &str, k: usize) -> Option<Clause> {
    let g = verb_group(toks, k + 1)?;
    let subject = sentence[toks[k].start..toks[k].end].to_string();
    let (predicate, from) = predicate_of(toks, sentence, &g)?;
    if g.verb.is_none() {
        // A one-word state is a reply ("I'm so happy!"), not a fact.
        word_at(toks, from + 1)?;
    }
    // A state towards the listener is still the speaker's ("I'm so proud
    // of you for spreading awareness").
    let object = object_with(toks, sentence, from, g.verb.is_none())?;
    Some(Clause {
        subject_at: k,
        subject_end: k + 1,
        subject,
        predicate,
        object,
        negative: g.negative,
    })
}

/// `my <noun> [<noun>]` at `k`, then a verb group: the noun leads the
/// predicate.
fn my_clause(toks: &[Tok], sentence: &str, k: usize) -> Option<Clause> {
    let mut nouns = Vec::new();
    let mut at = k + 1;
    while nouns.len() < 3 {
        let w = word_at(toks, at)?;
        if NOT_A_VERB.contains(&w) || toks[at].capital {
            return None;
        }
        nouns.push(w);
        at += 1;
        if is_verb_start(word_at(toks, at)) {
            break;
        }
    }
    if !is_verb_start(word_at(toks, at)) {
        return None;
    }
    let g = verb_group(toks, at)?;
    let (verb, from) = predicate_of(toks, sentence, &g)?;
    let object = object_at(toks, sentence, from)?;
    let verb = if g.verb.is_none() && g.be == Some("is") && nouns.last()?.ends_with('s') {
        "are".to_string()
    } else {
        verb
    };
    Some(Clause {
        subject_at: k,
        subject_end: at,
        subject: "I".into(),
        predicate: format!("{}_{verb}", nouns.join("_")),
        object,
        negative: g.negative,
    })
}

/// Whether token `k` surely starts a clause: the start, a clause break or
/// a conjunction before it.
fn strong_start(toks: &[Tok], k: usize) -> bool {
    let starts = match k.checked_sub(1).map(|b| &toks[b]) {
        None => true,
        Some(b) => {
            b.kind == Kind::Break
                || (b.kind == Kind::Symbol && matches!(b.lower.as_str(), "\"" | "'"))
                || matches!(b.lower.as_str(), "and" | "but" | "so" | "because")
        }
    };
    starts && !toks[k].tail
}

/// The subject phrase `k..v` of a clause about the speaker: plain words,
/// no pronoun, no conjunction, a content word.
fn subject_phrase(toks: &[Tok], sentence: &str, k: usize, v: usize) -> Option<String> {
    // No person but the one it speaks of ("send me the list and remind me"
    // is a request, not a thing that reminds).
    let plain = toks[k..v].iter().all(|t| match t.kind {
        Kind::Word => !SUBJECT_PHRASE_REFUSES.contains(&t.lower.as_str()),
        Kind::Symbol => matches!(t.lower.as_str(), "\"" | "'"),
        Kind::Break => false,
    });
    let content = toks[k..v].iter().any(|t| {
        t.kind == Kind::Word
            && !t.tail
            && t.lower.chars().count() > 2
            && !NO_VALUE.contains(&t.lower.as_str())
            && !VALUE_NOT_REFERENCE.contains(&t.lower.as_str())
    });
    // "and remind me": a phrase neither starts nor ends with a conjunction.
    let edges = [k, v - 1].map(|i| toks[i].lower.as_str());
    if !plain || !content || edges.iter().any(|w| CLAUSE_STOPS.contains(w)) {
        return None;
    }
    let first = (k..v).find(|&i| toks[i].kind == Kind::Word)?;
    let last = (k..v).rev().find(|&i| toks[i].kind == Kind::Word)?;
    Some(sentence[toks[first].start..toks[last].end].to_string())
}

/// Words a subject phrase never holds: people and clause words.
const SUBJECT_PHRASE_REFUSES: &[&str] = &[
    "i", "me", "we", "us", "you", "your", "they", "he", "she", "it", "there", "here", "what",
    "because", "but", "so", "if", "when", "than", "that", "please",
];

/// `<phrase> is my <noun>` ("Dance is my stress relief": `I stress_relief
/// Dance`) or `<phrase> is … to me` / `means … to me` ("Friendship means
/// a lot to me": `I means_a_lot_to_me Friendship`) at `k`: what the
/// speaker holds dear.
fn about_me_clause(toks: &[Tok], sentence: &str, k: usize) -> Option<Clause> {
    if !strong_start(toks, k) {
        return None;
    }
    let v = (k + 1..toks.len().min(k + 7)).find(|&v| {
        word_at(toks, v).is_some_and(|w| {
            matches!(
                w,
                "is" | "are"
                    | "was"
                    | "were"
                    | "means"
                    | "meant"
                    | "mean"
                    | "has"
                    | "had"
                    | "matters"
                    | "mattered"
                    | "speaks"
                    | "spoke"
                    | "appeals"
            )
        }) && !toks[v].tail
    })?;
    let object = subject_phrase(toks, sentence, k, v)?;
    let be = matches!(toks[v].lower.as_str(), "is" | "are" | "was" | "were");
    // The clause after the verb, adverbs skipped.
    let at = past_adverbs(toks, v + 1);
    let end = (at..=toks.len())
        .find(|&e| e == toks.len() || toks[e].kind == Kind::Break)
        .unwrap_or(toks.len());
    let words: Vec<&str> = toks[at..end]
        .iter()
        .filter(|t| t.kind == Kind::Word && !t.tail)
        .map(|t| t.lower.as_str())
        .collect();
    let predicate = if be && words.first() == Some(&"my") && (2..=4).contains(&words.len()) {
        // "… is my favorite", "… is my stress fix".
        let mut named = &words[1..];
        while let Some((last, rest)) = named.split_last() {
            if !DANGLING.contains(last) {
                break;
            }
            named = rest;
        }
        named.join("_")
    } else {
        let me = words
            .windows(2)
            .position(|w| matches!(w[0], "to" | "for") && w[1] == "me")?;
        let mut named: Vec<&str> = if be {
            Vec::new()
        } else {
            vec![toks[v].lower.as_str()]
        };
        named.extend(&words[..me + 2]);
        if named.len() > 7 || named.len() < 3 {
            return None;
        }
        named.join("_")
    };
    if predicate.is_empty() || !predicate.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some(Clause {
        subject_at: k,
        subject_end: v,
        subject: "I".into(),
        predicate,
        object,
        negative: false,
    })
}

/// `<phrase> <verb> me …` at `k`, the phrase at most five words: what
/// something does to the speaker. The subject is `I`, the predicate the
/// verb with `_me` ("reminds_me"), the object the phrase.
fn to_me_clause(toks: &[Tok], sentence: &str, k: usize) -> Option<Clause> {
    // Only where a clause surely starts: the phrase is the clause's subject.
    if !strong_start(toks, k) {
        return None;
    }
    let v = (k + 1..toks.len().min(k + 6)).find(|&v| {
        word_at(toks, v).is_some_and(|w| TO_ME_VERBS.contains(&w))
            && word_at(toks, v + 1) == Some("me")
    })?;
    let object = subject_phrase(toks, sentence, k, v)?;
    Some(Clause {
        subject_at: k,
        subject_end: v,
        subject: "I".into(),
        predicate: format!("{}_me", toks[v].lower),
        object,
        negative: false,
    })
}

/// Whether `word` starts a verb group after a `my` noun.
fn is_verb_start(word: Option<&str>) -> bool {
    word.is_some_and(|w| {
        matches!(
            w,
            "am" | "is" | "are" | "was" | "were" | "has" | "have" | "had" | "will" | "gonna" | "'s"
        ) || (w.ends_with("ed") && w.len() > 4)
            || IRREGULAR_PAST.contains(&w)
    })
}

/// The predicate of a verb group and the token its object starts at.
fn predicate_of(toks: &[Tok], sentence: &str, g: &VerbGroup) -> Option<(String, usize)> {
    let Some(v) = g.verb else {
        let be = g.be?;
        if g.future {
            return None;
        }
        // A reply, not a state: "I'm glad", "I'm sure", "I'm so happy for you".
        let first = first_word(toks, g.next)?;
        if CHATTER_STATES.contains(&first) {
            return None;
        }
        return Some((be.to_string(), g.next));
    };
    let verb = toks[v].lower.as_str();
    if matches!(verb, "agree" | "believe" | "think" | "feel" | "know")
        && word_at(toks, v + 1) == Some("that")
    {
        // "I agree that education is key": an opinion, in its words.
        object_at(toks, sentence, v + 2)?;
        return Some(("believes".into(), v + 2));
    }
    if verb == "thinking" && matches!(word_at(toks, v + 1), Some("about" | "of")) {
        // "I'm thinking about starting a project": considered, not done.
        object_at(toks, sentence, v + 2)?;
        return Some(("considering".into(), v + 2));
    }
    // "I'm doing well" is a reply; "I'm doing kickboxing" is not.
    if verb == "doing" && first_word(toks, v + 1).is_none_or(|w| DOING_CHATTER.contains(&w)) {
        return None;
    }
    if g.future && !FUTURE_CHATTER.contains(&verb) {
        // "I'm gonna paint the fence" → plans_to "paint the fence": the
        // object is the whole planned verb phrase, verbatim; "I'll keep it
        // up" plans nothing to remember.
        object_at(toks, sentence, v + 1)?;
        return Some(("plans_to".into(), v));
    }
    if CHATTER_VERBS.contains(&verb) {
        return None;
    }
    let mut next = v + 1;
    // One predicate for likes, as the pattern table writes it; "have" as
    // the main verb in the third person, as every predicate reads.
    let mut predicate = match verb {
        "like" | "likes" | "love" | "loves" | "enjoy" | "enjoys" | "adore" | "adores" => "likes",
        "have" | "has" => "has",
        other => other,
    }
    .to_string();
    if verb == "wanna" {
        return Some(("wants_to".into(), v + 1));
    }
    // Wishes and plans as the pattern table names them (it reads the
    // short ones; this reads those whose object is longer).
    if word_at(toks, next) == Some("to") {
        let named = match verb {
            "want" | "wants" | "wanted" | "wanna" => Some("wants_to"),
            "plan" | "plans" | "planning" | "planned" => Some("plans_to"),
            "hope" | "hopes" | "hoping" => Some("wants_to"),
            _ => None,
        };
        if let Some(named) = named {
            return Some((named.into(), next + 1));
        }
    }
    if let Some(p) = word_at(toks, next).filter(|p| PARTICLES.contains(p)) {
        // The particle joins only when an object follows it.
        if word_at(toks, next + 1).is_some() {
            predicate = format!("{predicate}_{p}");
            next += 1;
        }
    }
    if g.future {
        return None;
    }
    Some((predicate, next))
}

/// The first word at or after `at`, adverbs skipped.
fn first_word(toks: &[Tok], at: usize) -> Option<&str> {
    word_at(toks, past_adverbs(toks, at))
}

/// Whether `word` is an adverb a verb group may hold ([`ADVERBS`],
/// [`MORE_ADVERBS`]).
fn is_adverb(word: &str) -> bool {
    ADVERBS.contains(&word) || MORE_ADVERBS.contains(&word)
}

/// The first token at or after `at` that is no adverb.
fn past_adverbs(toks: &[Tok], mut at: usize) -> usize {
    while word_at(toks, at).is_some_and(is_adverb) {
        at += 1;
    }
    at
}

/// The object starting at token `at`: words up to the clause's end, cut at
/// [`MAX_WORDS`]; `None` when empty, a reference, about the listener, or
/// without a content word.
fn object_at(toks: &[Tok], sentence: &str, at: usize) -> Option<String> {
    object_with(toks, sentence, at, false)
}

/// [`object_at`], where `listener_ok` allows words of the listener (a
/// state: "I'm so proud of you for finishing").
fn object_with(toks: &[Tok], sentence: &str, at: usize, listener_ok: bool) -> Option<String> {
    let mut end = at;
    let mut words = 0;
    while let Some(t) = toks.get(end) {
        // A double quotation mark after the first word ends the clause: a
        // quote closes or opens there (`Karen said "I am quitting in June"
        // during standup` gives `June`, not `June" during standup`; the
        // tokenizer writes curly marks as straight ones).
        let stop = t.kind == Kind::Break
            || (end > at && t.kind == Kind::Symbol && t.lower == "\"")
            || (t.kind == Kind::Word
                && end > at
                && (CLAUSE_STOPS.contains(&t.lower.as_str())
                    || TIME_STOPS.contains(&t.lower.as_str())));
        if stop {
            break;
        }
        if t.kind == Kind::Word && !t.tail {
            words += 1;
            if words > MAX_WORDS {
                break;
            }
        }
        end += 1;
    }
    phrase(toks, sentence, at, end, listener_ok)
}

/// The phrase of tokens `at..end` as an object (see [`object_at`]).
fn phrase(
    toks: &[Tok],
    sentence: &str,
    at: usize,
    mut end: usize,
    listener_ok: bool,
) -> Option<String> {
    // Quote marks and symbols at the edges, and words that cannot end a
    // phrase where the length cut it ("a long run route along the").
    let mut first = at;
    while first < end && toks[first].kind != Kind::Word {
        first += 1;
    }
    while end > first
        && (toks[end - 1].kind != Kind::Word || DANGLING.contains(&toks[end - 1].lower.as_str()))
    {
        end -= 1;
    }
    if first == end {
        return None;
    }
    let span = &toks[first..end];
    let lead = span[0].lower.as_str();
    let word_count = span
        .iter()
        .filter(|t| t.kind == Kind::Word && !t.tail)
        .count();
    // "I love it", "I chose them": a reference alone says nothing; "I made
    // it in pottery class" still does.
    if (VALUE_NOT_REFERENCE.contains(&lead) && word_count < 3) || OBJECT_NOT_AFTER.contains(&lead) {
        return None;
    }
    // About the listener, not the speaker ("I made you a cake", "I love
    // your work"); a feeling towards them is the speaker's own state
    // ("I'm so proud of you"), which the caller allows.
    let about_listener = span
        .iter()
        .any(|t| t.kind == Kind::Word && LISTENER.contains(&t.lower.as_str()));
    if about_listener && !listener_ok {
        return None;
    }
    let content = span.iter().any(|t| {
        t.kind == Kind::Word
            && !t.tail
            && t.lower.chars().count() > 2
            && !NO_VALUE.contains(&t.lower.as_str())
            && !VALUE_NOT_REFERENCE.contains(&t.lower.as_str())
            && !CLAUSE_STOPS.contains(&t.lower.as_str())
    });
    if !content {
        return None;
    }
    Some(sentence[span[0].start..span[span.len() - 1].end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::tokenize;

    fn clauses(sentence: &str) -> Vec<(String, String, String, bool)> {
        read(&tokenize(sentence), sentence)
            .into_iter()
            .map(|c| (c.subject, c.predicate, c.object, c.negative))
            .collect()
    }

    fn one(sentence: &str) -> (String, String, String) {
        let got = clauses(sentence);
        assert_eq!(got.len(), 1, "{sentence}: {got:?}");
        let (s, p, o, _) = got.into_iter().next().unwrap();
        (s, p, o)
    }

    #[test]
    fn a_quotation_mark_ends_the_object() {
        for sentence in [
            "My boss Karen said \"I am quitting in June\" during standup.",
            "My boss Karen said \u{201C}I am quitting in June\u{201D} during standup.",
        ] {
            let got = clauses(sentence);
            let objects: Vec<&str> = got.iter().map(|c| c.2.as_str()).collect();
            assert!(
                objects.iter().all(|o| !o.contains(['"', '\u{201D}'])),
                "{sentence}: {got:?}"
            );
        }
    }

    #[test]
    fn what_people_did_and_made() {
        for (sentence, predicate, object) in [
            (
                "I went to a LGBTQ support group yesterday and it was so powerful.",
                "went_to",
                "a LGBTQ support group",
            ),
            (
                "Yeah, I painted that lake sunrise last year!",
                "painted",
                "that lake sunrise",
            ),
            (
                "I ran a charity race for mental health last Saturday",
                "ran",
                "a charity race for mental health",
            ),
            (
                "I'm carving out some me-time each day",
                "carving_out",
                "some me-time each day",
            ),
            (
                "I've been volunteering at the shelter",
                "volunteering_at",
                "the shelter",
            ),
        ] {
            assert_eq!(
                one(sentence),
                ("I".into(), predicate.into(), object.into()),
                "{sentence}"
            );
        }
    }

    #[test]
    fn states_plans_and_family() {
        assert_eq!(
            one("I'm swamped with the kids & work."),
            (
                "I".into(),
                "is".into(),
                "swamped with the kids & work".into()
            )
        );
        assert_eq!(
            one("I'm gonna paint the fence this weekend."),
            (
                "I".into(),
                "plans_to".into(),
                "paint the fence this weekend".into()
            )
        );
        assert_eq!(
            one("My kids are so excited about summer break!"),
            (
                "I".into(),
                "kids_are".into(),
                "excited about summer break".into()
            )
        );
        assert_eq!(
            one("We took the kids camping."),
            ("We".into(), "took".into(), "the kids camping".into())
        );
        assert_eq!(
            clauses("I haven't been to Paris."),
            vec![("I".into(), "been_to".into(), "Paris".into(), true)]
        );
    }

    #[test]
    fn a_feeling_towards_the_listener_is_the_speakers_state() {
        assert_eq!(
            one("I'm so proud of you for doing that."),
            ("I".into(), "is".into(), "proud of you for doing".into())
        );
        // What the speaker does to or for the listener is not about them.
        for sentence in [
            "I made you a cake.",
            "I love your work.",
            "I'm here for you.",
        ] {
            assert!(clauses(sentence).is_empty(), "{sentence}");
        }
    }

    #[test]
    fn requests_are_not_what_reminds_the_speaker() {
        for sentence in [
            "Yes please, send me the list and remind me at seven on Friday.",
            "Yes, and remind me a week before.",
        ] {
            assert!(
                clauses(sentence).is_empty(),
                "{sentence}: {:?}",
                clauses(sentence)
            );
        }
        assert_eq!(
            one("Their love gives me strength."),
            ("I".into(), "gives_me".into(), "Their love".into())
        );
    }

    #[test]
    fn chatter_gives_nothing() {
        for sentence in [
            "I think so.",
            "I know, right!",
            "I'm glad you liked it.",
            "I love it.",
            "I mean, it was fine.",
            "I would go to the beach.",
            "I could try painting.",
            "Thanks, I appreciate it!",
            "I'm here for you.",
            "the painting I made last week",
            "I bet you had fun.",
            "I'm so happy.",
        ] {
            assert!(
                clauses(sentence).is_empty(),
                "{sentence}: {:?}",
                clauses(sentence)
            );
        }
    }
}
