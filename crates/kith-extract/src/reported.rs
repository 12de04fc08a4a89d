//! Reported speech: claims that stand in someone else's words.
//!
//! "Dev says Ana loves sushi." is the author's report of what Dev says. It
//! is evidence that Ana loves sushi, not the author's own statement of it,
//! and it must not read as Ana's word either. A claim is *reported* when
//! its subject stands in the reported words of its sentence and its other
//! end is not written outside them:
//!
//! - after a reporting word and the person who reports (`Dev said (that)
//!   …`, `My sister told me …`, `She thinks …`, `I heard …`): the words
//!   from there to the end of the clause, or the quotation that follows;
//! - inside a quotation a reporting word attributes (`"…," Dev said`);
//! - beside `according to X` (before it, or after its comma).
//!
//! The author's own words are theirs: a first-person reporter (`I told Dev
//! that …`, `I said …`) reports the author, except `I heard`, which is
//! hearsay from nobody named. A report about the reporter (`Ana said she
//! …` with subject Ana) is first-hand. A claim whose other end stands in
//! the author's own words (`My boss Karen said "I'm quitting".` → `I
//! has_boss Karen`) is the author's. This is a conservative English rule,
//! like grounding's qualifiers: it reads words, not syntax.

use std::ops::Range;

use crate::grounding::{
    self, normalize_quote_mark, normalize_quote_marks, personal_family, sentence_spans,
};
use crate::quotes;

/// Words that report what someone said or wrote, lower case, whole words
/// ("told me" is covered by "told"). Verbs that more often describe the
/// author's own doings ("I write code", "I text my mum") are left out in
/// their plain form. The identity rules read the same list to tell quoted
/// or relayed first persons from the author's.
pub const REPORTING_VERBS: &[&str] = &[
    "say",
    "says",
    "said",
    "writes",
    "wrote",
    "texts",
    "texted",
    "tells",
    "told",
    "emailed",
    "messaged",
    "replied",
    "tweeted",
    "quoted",
    "claimed",
    "insisted",
    "according",
];

/// Words besides [`REPORTING_VERBS`] that pass on what someone else holds
/// true (hearsay and belief). They report only here: the identity rules
/// leave them out, since "I heard a noise" quotes nobody.
const HEARSAY_VERBS: &[&str] = &[
    "heard",
    "hears",
    "mentioned",
    "mentions",
    "claims",
    "insists",
    "thinks",
    "reckons",
    "believes",
    "swears",
    "swore",
    "announced",
];

/// Verbs whose hearer may follow them before the reported words (`told me
/// that …`, `texted Ana: …`).
const TO_SOMEONE: &[&str] = &[
    "tells",
    "told",
    "texts",
    "texted",
    "emailed",
    "messaged",
    "wrote",
    "writes",
    "replied",
    "mentioned",
    "swore",
];

/// Words between a reporter and the verb that keep the frame (`Dev always
/// says …`).
const ADVERBS: &[&str] = &[
    "always",
    "once",
    "just",
    "also",
    "literally",
    "even",
    "apparently",
    "actually",
    "then",
    "already",
    "never",
    "still",
    "really",
];

/// Words right after a reporting verb that make it say a thing, not
/// report words (`You mentioned it earlier`, `said goodbye`).
const OBJECT_WORDS: &[&str] = &[
    "it",
    "this",
    "so",
    "something",
    "anything",
    "nothing",
    "everything",
    "goodbye",
    "hello",
    "hi",
    "yes",
    "no",
    "thanks",
    "sorry",
];

/// Reporting verbs that usually name a thing (`you mentioned the
/// trellis`): they report words only after `that`, a colon or a quotation.
const NAMES_A_THING: &[&str] = &["mentioned", "mentions"];

/// Words that never report, capitalised or not: `That said, …`, `which
/// says`, `it says`.
const FUNCTION_WORDS: &[&str] = &[
    "that", "this", "these", "those", "it", "which", "what", "who", "there", "here", "as",
];

fn is_function_word(w: &Word<'_>) -> bool {
    FUNCTION_WORDS.contains(&w.lower.as_str())
}

/// Words before a common noun that make it a reporter (`my sister`, `the
/// doctor`, `Dev's mum`).
const DETERMINERS: &[&str] = &["my", "our", "his", "her", "their", "your", "the", "a", "an"];

/// Third-person and second-person pronouns that can report.
const PRONOUNS: &[&str] = &["he", "she", "they", "you"];

/// Which quotation marks open a quotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marks {
    /// Double marks, and single ones that open a quote (`Dev says 'I love
    /// sushi'.`): [`quotes::quoted_spans`], as the identity rules read
    /// quotes (policy `kith_ingest_v9` and later).
    All,
    /// Double marks only (`kith_ingest_v8`).
    DoubleOnly,
}

impl Marks {
    fn spans(self, sentence: &str) -> Vec<Range<usize>> {
        match self {
            Marks::All => quotes::quoted_spans(sentence),
            Marks::DoubleOnly => quotes::double_quoted_spans(sentence),
        }
    }
}

/// A claim that stands in someone else's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Who reports it, as written (`Dev`, `my sister`, `she`); `None` for
    /// hearsay from nobody named (`I heard …`).
    pub by: Option<String>,
}

/// Whether the claim `subject` – `object`, quoted as `quote` from
/// `sentence`, stands in someone else's reported words (see the module
/// documentation). Every place the quote occurs must be reported: a
/// message that also says it in the author's own words (`Dev says Sam
/// loves sushi. Sam loves sushi.`) asserts it. Quotation marks of every
/// style read alike (the reporter is given with straight ones); `marks`
/// says which open a quotation.
pub fn reported(
    sentence: &str,
    quote: &str,
    (subject, object): (&str, &str),
    marks: Marks,
) -> Option<Report> {
    let sentence = normalize_quote_marks(sentence);
    let quote = normalize_quote_marks(quote.trim());
    let words = Word::split(&sentence);
    let quotes = marks.spans(&sentence);
    let mut places: Vec<Range<usize>> = Vec::new();
    if !quote.is_empty() {
        places.extend(
            sentence
                .match_indices(quote.as_str())
                .map(|(at, q)| at..at + q.len()),
        );
    }
    if places.is_empty() {
        places.push(0..sentence.len());
    }
    let frames = frames(&sentence, &words, &quotes);
    let mut by = None;
    for place in &places {
        let frame = frames
            .iter()
            .find(|f| f.overlaps(place) && f.covers(&sentence, subject, object))?;
        by.get_or_insert_with(|| frame.by.clone());
    }
    by.map(|by| Report { by })
}

/// The named person whose direct speech holds the singular first person
/// of `sentence`: `Dev says "I love sushi".`, `"I hate the winters,"
/// Arjun told me.`, `Dev says: I'm allergic to peanuts.` → `Dev`. Every
/// first person of the sentence must stand in direct speech that a frame
/// gives to that one person, or be its hearer (`told me`). `None` when no
/// first person is quoted, when one belongs to no frame (the author's own
/// `I` beside the quote: which one a claim means, the words do not say), to
/// a pronoun (`she said`), to a description (`my sister`, `Mom`) or to more
/// than one person: whoever that "I" is, no name says so.
pub fn direct_speaker(sentence: &str) -> Option<String> {
    let sentence = normalize_quote_marks(sentence);
    let words = Word::split(&sentence);
    let quotes = Marks::All.spans(&sentence);
    let frames = frames(&sentence, &words, &quotes);
    let mut speaker: Option<String> = None;
    for (i, word) in words.iter().enumerate() {
        if !first_person(word.lower.split('\'').next().unwrap_or("")) {
            continue;
        }
        let hearer = i > 0 && TO_SOMEONE.contains(&words[i - 1].lower.as_str());
        let frame = frames
            .iter()
            .find(|f| f.direct && f.said.contains(&word.at.start));
        let by = match frame {
            Some(frame) => frame.by.as_deref().filter(|by| names_a_person(by))?,
            None if hearer => continue,
            None => return None,
        };
        match &speaker {
            Some(known) if known != by => return None,
            _ => speaker = Some(by.to_string()),
        }
    }
    speaker
}

/// Whether a name as written — a reporter, a chat line's label — is a
/// person's name: capitalised words, none of them a personal reference
/// (`She`, `Them`), a determiner, a function word or a relation word, and
/// name-like (`Dev`, `Ms Okafor`; not `My sister`, `Mom`, `Vegan`).
pub fn names_a_person(name: &str) -> bool {
    let words = Word::split(name);
    !words.is_empty()
        && words.iter().all(|w| {
            w.is_capitalised()
                && !w.is_first_person()
                && personal_family(&w.lower).is_none()
                && !DETERMINERS.contains(&w.lower.as_str())
                && !is_function_word(w)
                && !crate::heuristic::RELATION_ROLES.contains(&w.lower.as_str())
        })
        && crate::lexicon::is_name_like(name)
}

/// One reporting frame: who reports and the byte range of what they say.
#[derive(Debug)]
struct Frame {
    by: Option<String>,
    said: Range<usize>,
    /// Direct speech (quoted, or after a colon): its first person is the
    /// reporter's, not the author's.
    direct: bool,
}

impl Frame {
    /// Whether the reported words overlap `place`.
    fn overlaps(&self, place: &Range<usize>) -> bool {
        self.said.start < place.end && place.start < self.said.end
    }

    /// Whether the claim stands in this frame's reported words.
    fn covers(&self, sentence: &str, subject: &str, object: &str) -> bool {
        let said = &sentence[self.said.clone()];
        if !mentions(said, subject) {
            return false;
        }
        // "I heard …": the author's own "I" is the one who heard (`I heard
        // there's a trail near where I live` → `I heard …` is the author's).
        if self.by.is_none() && is_first_person_name(subject) {
            return false;
        }
        if let Some(by) = &self.by {
            // A report about the reporter is first-hand: the reporter named
            // as the subject, or the reporter's own "I" in direct speech
            // (`Jordan wrote: 'I hate sushi'`). Indirect speech keeps the
            // author's "I" (`My boss said I was late`).
            if self.direct && is_first_person_name(subject) {
                return false;
            }
            let (by, subject) = (folded_words(by), folded_words(subject));
            if contains_run(&by, &subject) || contains_run(&subject, &by) {
                return false;
            }
        }
        // The other end, when the sentence writes it, must be reported too.
        let outside = format!(
            "{} {}",
            &sentence[..self.said.start],
            &sentence[self.said.end..]
        );
        mentions(said, object) || !mentions(&outside, object)
    }
}

/// A word of the sentence and where it stands.
#[derive(Debug)]
struct Word<'a> {
    text: &'a str,
    lower: String,
    at: Range<usize>,
}

impl<'a> Word<'a> {
    /// Runs of letters and digits, with apostrophes between letters kept
    /// (`Dev's`, `I'm`).
    fn split(sentence: &'a str) -> Vec<Word<'a>> {
        let mut out = Vec::new();
        let mut start = None;
        let chars: Vec<(usize, char)> = sentence.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let inner_apostrophe = normalize_quote_mark(c) == '\''
                && start.is_some()
                && chars.get(k + 1).is_some_and(|&(_, n)| n.is_alphanumeric());
            if c.is_alphanumeric() || inner_apostrophe {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                out.push(Word::new(sentence, s..i));
            }
        }
        if let Some(s) = start {
            out.push(Word::new(sentence, s..sentence.len()));
        }
        out
    }

    fn new(sentence: &'a str, at: Range<usize>) -> Word<'a> {
        let text = &sentence[at.clone()];
        Word {
            text,
            lower: text.to_lowercase(),
            at,
        }
    }

    fn is_capitalised(&self) -> bool {
        self.text.chars().next().is_some_and(char::is_uppercase)
    }

    fn is_first_person(&self) -> bool {
        let base = self.lower.split('\'').next().unwrap_or("");
        personal_family(base).is_some_and(|family| family.contains(&"i") || family.contains(&"we"))
    }
}

/// Every reporting frame of the sentence, in order.
fn frames(sentence: &str, words: &[Word<'_>], quotes: &[Range<usize>]) -> Vec<Frame> {
    let quoted = |w: &Word<'_>| quotes.iter().any(|q| q.contains(&w.at.start));
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if quoted(word) {
            continue;
        }
        if word.lower == "according" && words.get(i + 1).is_some_and(|w| w.lower == "to") {
            out.extend(according_to(sentence, words, i));
        } else if REPORTING_VERBS.contains(&word.lower.as_str())
            || HEARSAY_VERBS.contains(&word.lower.as_str())
        {
            out.extend(verb_frame(sentence, words, quotes, i));
        }
    }
    out
}

/// `According to X, …` or `…, according to X.`
fn according_to(sentence: &str, words: &[Word<'_>], i: usize) -> Option<Frame> {
    // Only a person's name reports: "according to the package
    // instructions", "according to their needs" report nobody.
    let name = run(sentence, &words[i + 2..], |w| {
        w.is_capitalised() && !DETERMINERS.contains(&w.lower.as_str()) && !is_function_word(w)
    });
    let last = name.last()?;
    let by = sentence[name[0].at.start..last.at.end].to_string();
    let after_name = &sentence[last.at.end..];
    let said = if words[i].at.start == first_word_start(words) {
        // The reported words follow the name and its comma.
        let comma = after_name.find(',')?;
        last.at.end + comma + 1..clause_end(sentence, last.at.end + comma + 1)
    } else {
        // `…, according to Ana.`: the clause before its comma.
        let before = sentence[..words[i].at.start].trim_end();
        let end = before.strip_suffix(',')?.len();
        clause_start(sentence, end)..end
    };
    Some(Frame {
        by: Some(by),
        said,
        direct: false,
    })
}

fn first_word_start(words: &[Word<'_>]) -> usize {
    words.first().map_or(0, |w| w.at.start)
}

/// `Dev said (that) …`, `My sister told me "…"`, `"…," Dev said`, `"…,"
/// said Dev`, `I heard …`.
fn verb_frame(
    sentence: &str,
    words: &[Word<'_>],
    quotes: &[Range<usize>],
    i: usize,
) -> Option<Frame> {
    let verb = &words[i];
    let hearsay = matches!(verb.lower.as_str(), "heard" | "hears");
    let mut k = i + 1;
    // Where the frame starts: its reporter, or the verb (`said Dev`).
    let mut frame_start = verb.at.start;
    let by = match reporter_before(sentence, words, i) {
        Some((Reporter::FirstPerson, _)) if hearsay => None,
        // The author's own report is the author's word.
        Some((Reporter::FirstPerson, _)) => return None,
        Some((Reporter::Named(name), start)) => {
            frame_start = start;
            Some(name)
        }
        None => {
            let (name, len) = reporter_after(sentence, words, i)?;
            k += len;
            Some(name)
        }
    };
    if TO_SOMEONE.contains(&verb.lower.as_str()) {
        k += hearer_len(sentence, words[k - 1].at.end, &words[k.min(words.len())..]);
    }
    // The end of the verb and its hearer: a colon or a quotation mark
    // right after it opens direct speech.
    let framed = words[k - 1].at.end;
    let opening = sentence[framed..]
        .char_indices()
        .find(|&(_, c)| !c.is_whitespace() && !matches!(c, ':' | ','))
        .map(|(at, _)| framed + at);
    if let Some(q) = opening.and_then(|at| quotes.iter().find(|q| q.start == at + 1)) {
        return Some(Frame {
            by,
            said: q.clone(),
            direct: true,
        });
    }
    let that = words.get(k).is_some_and(|w| w.lower == "that");
    if that {
        k += 1;
    }
    let rest_start = words.get(k).map_or(sentence.len(), |w| w.at.start);
    let gap = &sentence[framed..rest_start];
    let direct = gap.contains(':');
    // Words follow the verb as what was said unless a comma or a stop
    // comes first ("the bands you mentioned, and I …"), or the verb takes
    // a thing ("You mentioned it", "said goodbye") or a conjunction
    // follows ("the code you wrote and then I …"); "mentioned" takes
    // what was said only after "that" or a colon ("you mentioned the
    // trellis" names a thing).
    let says_something = !gap.contains([',', '.', ';', '!', '?'])
        && words.get(k).is_some_and(|w| {
            !OBJECT_WORDS.contains(&w.lower.as_str()) && !NEW_CLAUSE.contains(&w.lower.as_str())
        })
        && (that || direct || !NAMES_A_THING.contains(&verb.lower.as_str()));
    if says_something {
        let said = rest_start..clause_end(sentence, rest_start);
        return Some(Frame { by, said, direct });
    }
    // Nothing said after the verb: the quotation right before the frame
    // (`"…," Dev said.`, `"…," said Dev.`).
    let before = quotes.iter().rev().find(|q| q.end <= frame_start)?;
    let between = &sentence[before.end..frame_start];
    if between.chars().any(char::is_alphanumeric) {
        return None;
    }
    Some(Frame {
        by,
        said: before.clone(),
        direct: true,
    })
}

/// Who reports, read backwards from the verb at `i`.
enum Reporter {
    FirstPerson,
    Named(String),
}

/// The reporter before the verb at `i`, and where its words start.
fn reporter_before(sentence: &str, words: &[Word<'_>], i: usize) -> Option<(Reporter, usize)> {
    let mut j = i.checked_sub(1)?;
    while ADVERBS.contains(&words[j].lower.as_str()) {
        j = j.checked_sub(1)?;
    }
    // Only spaces and adverbs between the reporter and the verb (no comma,
    // no quotation mark).
    let between = &sentence[words[j].at.end..words[i].at.start];
    if !between
        .chars()
        .all(|c| c.is_whitespace() || c.is_alphanumeric())
    {
        return None;
    }
    let w = &words[j];
    if is_function_word(w) {
        return None;
    }
    if w.is_first_person() {
        return Some((Reporter::FirstPerson, w.at.start));
    }
    if PRONOUNS.contains(&w.lower.as_str()) {
        return Some((Reporter::Named(w.text.to_string()), w.at.start));
    }
    if w.is_capitalised() {
        // A run of capitalised words (`Dev Patel`), or a sentence opener
        // that is one of the determiners (`My`).
        let mut first = j;
        while first > 0
            && words[first - 1].is_capitalised()
            && !words[first - 1].is_first_person()
            && joins(&sentence[words[first - 1].at.end..words[first].at.start])
        {
            first -= 1;
        }
        let start = words[first].at.start;
        return Some((
            Reporter::Named(sentence[start..w.at.end].to_string()),
            start,
        ));
    }
    // A common noun after a determiner or a possessive: `my sister`,
    // `Dev's mum`.
    let det = &words[j.checked_sub(1)?];
    let possessive = det.lower.ends_with("'s") || det.lower.ends_with("\u{2019}s");
    if DETERMINERS.contains(&det.lower.as_str()) || possessive {
        let name = sentence[det.at.start..w.at.end].to_string();
        return Some((Reporter::Named(name), det.at.start));
    }
    None
}

/// `…," said Dev.`: a capitalised name right after the verb that ends the
/// sentence, and how many words it has.
fn reporter_after(sentence: &str, words: &[Word<'_>], i: usize) -> Option<(String, usize)> {
    let name = run(sentence, &words[i + 1..], Word::is_capitalised);
    let last = name.last()?;
    if words.len() != i + 1 + name.len() {
        return None;
    }
    let text = sentence[name[0].at.start..last.at.end].to_string();
    Some((text, name.len()))
}

/// The first words of `words` that pass `keep`, separated by nothing but
/// whitespace (a comma or a quotation mark ends the run), at most three.
fn run<'w, 'a>(
    sentence: &str,
    words: &'w [Word<'a>],
    keep: impl Fn(&Word<'a>) -> bool,
) -> Vec<&'w Word<'a>> {
    let mut out: Vec<&Word<'a>> = Vec::new();
    for w in words.iter().take(3) {
        let joined = out
            .last()
            .is_none_or(|prev| joins(&sentence[prev.at.end..w.at.start]));
        if !joined || !keep(w) {
            break;
        }
        out.push(w);
    }
    out
}

/// Whether the text between two words keeps them in one name: spaces, or
/// one hyphen (`Maya-Okafor`).
fn joins(gap: &str) -> bool {
    gap.chars().all(char::is_whitespace) || gap == "-"
}

/// How many words name the hearer after a verb like "told" that ends at
/// `after`: a pronoun, or a run of capitalised words, right after the verb
/// (`wrote: Tom …` has none).
fn hearer_len(sentence: &str, after: usize, rest: &[Word<'_>]) -> usize {
    let next = rest
        .first()
        .filter(|w| sentence[after..w.at.start].trim().is_empty());
    match next {
        Some(w)
            if matches!(
                w.lower.as_str(),
                "me" | "us" | "him" | "her" | "them" | "you" | "everyone"
            ) =>
        {
            1
        }
        Some(w) if w.is_capitalised() && !w.is_first_person() => run(sentence, rest, |w| {
            w.is_capitalised() && !w.is_first_person()
        })
        .len(),
        _ => 0,
    }
}

/// The end of the clause that starts at `start`: the next `;`, dash, a
/// comma before a new clause (a conjunction, or the author's own "I":
/// `Dev said X, but I …`, `…, I built it`) or the end of its sentence (a
/// claim's evidence may be a whole message, when its quote occurs in it
/// more than once).
fn clause_end(sentence: &str, start: usize) -> usize {
    let sentence_end = sentence_spans(sentence)
        .into_iter()
        .find(|s| s.end > start)
        .map_or(sentence.len(), |s| s.end);
    let text = &sentence[start..sentence_end];
    let mut end = text.find([';', '\u{2014}']).unwrap_or(text.len());
    for (at, _) in text.match_indices(',') {
        if at >= end {
            break;
        }
        let next = Word::split(&text[at + 1..]).into_iter().next();
        if next.is_some_and(|w| NEW_CLAUSE.contains(&w.lower.as_str()) || w.is_first_person()) {
            end = at;
            break;
        }
    }
    start + end
}

/// Where the clause that ends at `end` starts: after the last `;`, dash or
/// sentence end before it.
fn clause_start(sentence: &str, end: usize) -> usize {
    let sentence_start = sentence_spans(sentence)
        .into_iter()
        .rev()
        .find(|s| s.start < end)
        .map_or(0, |s| s.start);
    sentence[sentence_start..end]
        .rfind([';', '\u{2014}'])
        .map_or(sentence_start, |at| sentence_start + at + 1)
}

/// Words that open a new clause after a comma.
const NEW_CLAUSE: &[&str] = &[
    "and", "but", "so", "yet", "or", "while", "although", "though", "because", "since", "which",
];

/// Lower-case words, apostrophes and what follows them left out
/// (`I'm` → `i`, `Ana's` → `ana`).
fn folded_words(text: &str) -> Vec<String> {
    Word::split(text)
        .into_iter()
        .map(|w| w.lower.split('\'').next().unwrap_or("").to_string())
        .collect()
}

/// Whether `needle` is a run of `hay`'s words (an empty needle is not).
fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Whether `word` (lower case) is a first-person singular form (I, me, my…).
fn first_person(word: &str) -> bool {
    personal_family(word).is_some_and(|f| f.contains(&"i"))
}

/// Whether a claim end is the first-person singular (`I`, `me`, `my`…).
fn is_first_person_name(name: &str) -> bool {
    matches!(folded_words(name).as_slice(), [one] if first_person(one))
}

/// Whether `text` mentions the claim end `name`, as grounding's mention
/// check reads it (step 2): a personal reference by any word of its
/// family, anything else whole-word and case-insensitive.
fn mentions(text: &str, name: &str) -> bool {
    match personal_family(name) {
        Some(family) => family.iter().any(|w| grounding::mentions(text, w)),
        None => grounding::mentions(text, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(sentence: &str, subject: &str, object: &str) -> Option<Option<String>> {
        reported(sentence, sentence, (subject, object), Marks::All).map(|r| r.by)
    }

    #[test]
    fn someone_elses_words_are_reported() {
        for (sentence, subject, object, who) in [
            ("Dev says \"Ana loves sushi\".", "Ana", "sushi", Some("Dev")),
            (
                "Dev said that Ana loves sushi.",
                "Ana",
                "sushi",
                Some("Dev"),
            ),
            ("Dev said Ana loves sushi.", "Ana", "sushi", Some("Dev")),
            (
                "Dev Patel always says Ana works at Figma.",
                "Ana",
                "Figma",
                Some("Dev Patel"),
            ),
            (
                "Maya-Okafor says Jordan loves sushi.",
                "Jordan",
                "sushi",
                Some("Maya-Okafor"),
            ),
            (
                "My sister told me Tom moved to Leeds.",
                "Tom",
                "Leeds",
                Some("My sister"),
            ),
            (
                "Dev's mum thinks Ana is vegan.",
                "Ana",
                "vegan",
                Some("Dev's mum"),
            ),
            (
                "She told me that Tom quit his job.",
                "Tom",
                "his job",
                Some("She"),
            ),
            (
                "According to Ana, Dev works at Google.",
                "Dev",
                "Google",
                Some("Ana"),
            ),
            (
                "Dev works at Google, according to Ana.",
                "Dev",
                "Google",
                Some("Ana"),
            ),
            (
                "\u{201C}Tom got the job,\u{201D} Dev said.",
                "Tom",
                "the job",
                Some("Dev"),
            ),
            (
                "\"Tom got the job,\" said Dev.",
                "Tom",
                "the job",
                Some("Dev"),
            ),
            (
                "My sister said \"Tom quit his job\" yesterday.",
                "Tom",
                "his job",
                Some("My sister"),
            ),
            (
                "Jordan wrote: Tom hates sushi.",
                "Tom",
                "sushi",
                Some("Jordan"),
            ),
            ("Dev told me \"Ana left Acme\".", "Ana", "Acme", Some("Dev")),
            (
                "Dev texted Ana: Tom is moving to Oslo.",
                "Tom",
                "Oslo",
                Some("Dev"),
            ),
            ("My boss said I was late.", "I", "late", Some("My boss")),
            ("I heard that Ana moved to Berlin.", "Ana", "Berlin", None),
            (
                "I've heard that David Lynch likes recurring motifs.",
                "David Lynch",
                "recurring motifs",
                None,
            ),
            (
                "You mentioned that Ana moved to Oslo.",
                "Ana",
                "Oslo",
                Some("You"),
            ),
            (
                "Dev said Ana left Acme, but Tom stayed.",
                "Ana",
                "Acme",
                Some("Dev"),
            ),
            (
                "\u{201C}We only had a professional relationship with Sentinel,\u{201D} he said.",
                "We",
                "Sentinel",
                Some("he"),
            ),
        ] {
            assert_eq!(
                by(sentence, subject, object),
                Some(who.map(str::to_string)),
                "{sentence}"
            );
        }
    }

    #[test]
    fn the_authors_own_words_are_not_reported() {
        for (sentence, subject, object) in [
            // No reporting at all.
            ("Ana loves sushi.", "Ana", "sushi"),
            ("I work at Figma.", "I", "Figma"),
            // The author reports themselves.
            ("I told Dev that I love sushi.", "I", "sushi"),
            ("I told Dev that Ana loves sushi.", "Ana", "sushi"),
            ("I said Tom was right.", "Tom", "right"),
            // A report about the reporter is first-hand.
            ("Ana said she loves sushi.", "Ana", "sushi"),
            ("Ana told me she moved to Lisbon.", "Ana", "Lisbon"),
            // The author who heard is the author.
            ("I heard there's a nice trail just north of where I live.", "I", "a nice trail"),
            // Direct speech: its "I" is the reporter's, first-hand.
            ("My sister said \"I quit my job\" yesterday.", "I", "my job"),
            ("Jordan wrote: 'I hate sushi'.", "I", "sushi"),
            ("Jordan texted me: I love cilantro.", "I", "cilantro"),
            ("\"I got the job,\" Dev said.", "I", "the job"),
            // The claim stands outside the reported words.
            ("My boss Karen said \"I'm quitting\".", "I", "Karen"),
            ("Ana loves sushi; Dev said so.", "Ana", "sushi"),
            // A message quoted twice is the claim's evidence whole: the
            // report ends with its sentence.
            (
                "Sam says Jordan loves sushi. I love sushi. I love sushi.",
                "I",
                "sushi",
            ),
            // "said" in a relative clause reports nobody named here.
            ("I saw a sign that said Ana was here.", "Ana", "here"),
            ("I'll send the code you wrote and then I will create the pipeline.", "I", "the pipeline"),
            // A new clause after the report is the author's.
            ("Dev said Ana left Acme, but Tom stayed.", "Tom", "stayed"),
            // Real sentences from LongMemEval's user turns.
            ("That said, as recruiters, I do believe we possess the power.", "I", "the power"),
            ("I'll check out the bands you mentioned, and I'm interested in a seisi\u{fa}n.", "I", "a seisi\u{fa}n"),
            ("I get 6 hours of sleep, which is not enough according to the American Heart Association.", "I", "6 hours of sleep"),
            ("I'll cook them according to the package instructions.", "I", "them"),
            ("You mentioned it earlier, and I'm curious about its features.", "I", "its features"),
            ("The scene where Tony Stark says goodbye to his daughter was sad, and we were all emotional.", "we", "emotional"),
            ("You mentioned using a shutter speed of 20 seconds, but I've seen longer exposures.", "I", "longer exposures"),
            ("I'm glad you mentioned the trellis, I built it using wooden stakes.", "I", "it"),
            ("I have a rare watch worth $5,000, according to the appraiser.", "I", "a rare watch"),
            // A reporting word inside the quotation is part of it.
            ("\"Dev said hi\" is what Ana wrote.", "Ana", "hi"),
        ] {
            assert_eq!(by(sentence, subject, object), None, "{sentence}");
        }
    }

    #[test]
    fn a_quoted_first_person_is_its_named_speakers() {
        for (sentence, speaker) in [
            ("Dev says \"I love sushi\".", "Dev"),
            ("Arjun told me \"I hate the winters\" last week.", "Arjun"),
            (
                "\u{201c}I hate the winters,\u{201d} Arjun told me.",
                "Arjun",
            ),
            ("\"I'm moving to Oslo,\" said Dev Patel.", "Dev Patel"),
            ("Dev says: I'm allergic to peanuts.", "Dev"),
            ("Yeah, Ana texted me \"my flight is late\".", "Ana"),
            // Single marks open quotes too.
            ("Dev says 'I love sushi'.", "Dev"),
            ("'I love hiking,' Ana said.", "Ana"),
        ] {
            assert_eq!(
                direct_speaker(sentence).as_deref(),
                Some(speaker),
                "{sentence}"
            );
        }
    }

    #[test]
    fn single_marks_quote_from_kith_ingest_v9() {
        let under = |marks, sentence: &str, subject: &str| {
            reported(sentence, sentence, (subject, "sushi"), marks).map(|r| r.by)
        };
        // The reporter's own I in direct speech is first-hand; read as
        // indirect speech (double marks only) it was reported.
        let single = "Dev says 'I love sushi'.";
        assert_eq!(under(Marks::All, single, "I"), None);
        assert_eq!(
            under(Marks::DoubleOnly, single, "I"),
            Some(Some("Dev".to_string()))
        );
        // Someone else in the quote is reported either way.
        let ana = "Dev says 'Ana loves sushi'.";
        for marks in [Marks::All, Marks::DoubleOnly] {
            assert_eq!(under(marks, ana, "Ana"), Some(Some("Dev".to_string())));
        }
        assert_eq!(
            under(Marks::All, "'Ana loves sushi,' Dev said.", "Ana"),
            Some(Some("Dev".to_string()))
        );
    }

    #[test]
    fn a_quoted_first_person_without_a_named_speaker_is_nobodys() {
        for sentence in [
            // No quotation, no frame: the author's.
            "I love sushi.",
            "Dev said I was late.",
            // The author's own first person beside the quote: which one a
            // claim means, the words do not say.
            "My boss Jordan said \"I hate sushi\".",
            "Jordan: I love sushi Jordan wrote: 'I hate sushi'.",
            "Dev says \"I love sushi\" and I agree.",
            // A pronoun, a description or a relation word reports.
            "She said \"I'm done\".",
            "My sister told me \"I'm pregnant\".",
            "Mom says \"I need more sleep\".",
            // A quotation no frame attributes.
            "\"I quit\" is all it said.",
            "The sign read \"I am closed\".",
            // Two speakers.
            "Dev said \"I'm in\" and Ana said \"I'm out\".",
            // The author reports their own words.
            "I told Dev \"I'm leaving\".",
        ] {
            assert_eq!(direct_speaker(sentence), None, "{sentence}");
        }
    }

    #[test]
    fn every_place_the_quote_stands_must_be_reported() {
        let message = "Maya says Sam loves sushi. Sam loves sushi.";
        assert_eq!(
            reported(message, "Sam loves sushi.", ("Sam", "sushi"), Marks::All),
            None
        );
        let twice = "Maya says Sam loves sushi. Dev says Sam loves sushi.";
        assert_eq!(
            reported(twice, "Sam loves sushi.", ("Sam", "sushi"), Marks::All).map(|r| r.by),
            Some(Some("Maya".into()))
        );
        // A model that quotes only the reported words.
        let relayed = "Dev says: Ana is allergic to peanuts.";
        assert_eq!(
            reported(
                relayed,
                "Ana is allergic to peanuts.",
                ("Ana", "peanuts"),
                Marks::All
            )
            .map(|r| r.by),
            Some(Some("Dev".into()))
        );
        // A quote outside the reported words.
        let after = "Ana loves sushi; Dev says Ana loves tea.";
        assert_eq!(
            reported(after, "Ana loves sushi", ("Ana", "sushi"), Marks::All),
            None
        );
    }

    #[test]
    fn curly_and_straight_marks_read_alike() {
        let straight = by("Dev said \"Ana loves sushi\".", "Ana", "sushi");
        let curly = by("Dev said \u{201C}Ana loves sushi\u{201D}.", "Ana", "sushi");
        assert_eq!(straight, curly);
        assert_eq!(straight, Some(Some("Dev".into())));
    }
}
