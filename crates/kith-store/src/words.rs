//! How every backend reads a query's words: the same tokenising, stopwords
//! and common-word pruning, so the backends agree on what a query means.

use crate::StoreError;

/// Words that carry no meaning for matching.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
    "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "that", "the",
    "their", "them", "then", "there", "they", "this", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
    // Question and filler words: frequent in questions and conversation,
    // they match a large share of turns and say nothing about the answer.
    "am", "any", "being", "both", "each", "here", "him", "himself", "herself", "itself", "myself",
    "ours", "same", "should", "some", "such", "these", "those", "too", "very", "yours", "yourself",
    "yes", "yeah", "oh", "hey", "hi", "okay", "ok", "really", "just", "also", "many", "much",
    "total", "number",
];

/// What follows an apostrophe in a possessive or a contraction of "is" /
/// "has" ("what's", "Maya's", "dog's"). The index splits "Maya's" into
/// "maya" and "s" like any other word, so a question's "s" matched every
/// turn with an "it's" in it ("What's my dog's name?" ranked "It's windy…
/// I'm allergic to cats" first). The other tails ("'m", "'ve", "'re",
/// "'ll", "'d", "'t") say as little, but left out they cost LongMemEval
/// two questions on the tune half, where a question's "I've" matched its
/// evidence's "I've" (BENCHMARKS.md, session 21): kept until a better
/// first-person signal replaces them.
const CONTRACTED: &[&str] = &["s"];

/// Verbs of saying, left out a word or two before "about": "What did I say about
/// Duolingo?", "What did Jon tell Gina about…" ask about Duolingo, and every
/// turn is something somebody said; searched, "say" matched "Tomas says
/// it's windy". Left out too where one ends the question ("What did my
/// doctor say?", "…tell me?"): searched, "say" matched "Mum keeps saying…"
/// above "My doctor said…" — the stemmer joins "says" and "saying" to
/// "say" but never "said", so the word only rewarded someone else's
/// present tense.
const SAYING: &[&str] = &[
    "say",
    "says",
    "said",
    "saying",
    "tell",
    "tells",
    "told",
    "telling",
    "mention",
    "mentions",
    "mentioned",
    "mentioning",
    "talk",
    "talks",
    "talked",
    "talking",
    "speak",
    "speaks",
    "spoke",
    "speaking",
];

/// What may follow a verb of saying that ends a question: who it was said
/// to ("What did my doctor tell me?", "What did Sami say to me?").
const HEARERS: &[&str] = &["me", "you", "us", "him", "her", "them", "to"];

/// Verbs whose past forms no stemmer joins to them, each with those forms,
/// lower case: "What did I buy?" asks with the plain form, and the answer
/// says "I bought". A question's plain form is searched with its past
/// forms too; a past form is searched as it is ("saw" may be a tool).
/// Left out: verbs whose forms name other things ("fall"/"fell",
/// "lead"/"led", "find"/"found" a company), and the commonest verbs (go,
/// get, make, take, say, see, come, give, know, think, tell, feel, hear,
/// keep, leave, run, sit, stand, hold, do), whose past forms are in most
/// turns: with them, LoCoMo's tune half lost 0.010 R@10 and LongMemEval's
/// a question (BENCHMARKS.md, session 24).
const PAST_FORMS: &[(&str, &[&str])] = &[
    ("begin", &["began", "begun"]),
    ("break", &["broke", "broken"]),
    ("bring", &["brought"]),
    ("build", &["built"]),
    ("buy", &["bought"]),
    ("catch", &["caught"]),
    ("choose", &["chose", "chosen"]),
    ("drink", &["drank", "drunk"]),
    ("drive", &["drove", "driven"]),
    ("eat", &["ate", "eaten"]),
    ("fly", &["flew", "flown"]),
    ("forget", &["forgot", "forgotten"]),
    ("grow", &["grew", "grown"]),
    ("lend", &["lent"]),
    ("lose", &["lost"]),
    ("meet", &["met"]),
    ("pay", &["paid"]),
    ("ride", &["rode", "ridden"]),
    ("sell", &["sold"]),
    ("send", &["sent"]),
    ("sing", &["sang", "sung"]),
    ("sleep", &["slept"]),
    ("speak", &["spoke", "spoken"]),
    ("spend", &["spent"]),
    ("swim", &["swam", "swum"]),
    ("teach", &["taught"]),
    ("throw", &["threw", "thrown"]),
    ("wear", &["wore", "worn"]),
    ("win", &["won"]),
    ("write", &["wrote", "written"]),
];

/// The words of free text a search looks for: runs of Unicode letters and
/// digits, lower-cased, without stopwords, repeats, the tails of
/// possessives, a verb of saying before "about" or "name" after "my", in
/// order; a verb's plain form is followed by its irregular past forms
/// ([`PAST_FORMS`]: "buy", "bought"). Every backend
/// tokenises queries with this.
pub fn query_words(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    let mut terms: Vec<String> = Vec::new();
    for (i, (word, after_apostrophe)) in tokens.iter().enumerate() {
        let contracted = *after_apostrophe && CONTRACTED.contains(&word.as_str());
        // "say about", "tell Gina about", "told me about".
        let rest = &tokens[i + 1..];
        let saying = SAYING.contains(&word.as_str())
            && (rest.iter().take(2).any(|(next, _)| next == "about")
                || rest
                    .iter()
                    .all(|(next, _)| HEARERS.contains(&next.as_str())));
        // "What's my name?": the answer ("Hi, I'm Maya") never says the
        // word, and every turn that names a pet or a colleague ("a puppy
        // named Biscuit") does.
        let own_name = word == "name"
            && i > 0
            && tokens[i - 1].0 == "my"
            && rest.first().is_none_or(|(next, _)| next != "is");
        if contracted
            || saying
            || own_name
            || STOPWORDS.contains(&word.as_str())
            || terms.contains(word)
        {
            continue;
        }
        terms.push(word.clone());
        if let Some((_, past)) = PAST_FORMS.iter().find(|(plain, _)| plain == word) {
            for form in past.iter().map(|f| f.to_string()) {
                if !terms.contains(&form) {
                    terms.push(form);
                }
            }
        }
    }
    terms
}

/// The runs of letters and digits of `text`, lower-cased, each with
/// whether an apostrophe comes right before it.
fn tokens(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut after_apostrophe = false;
    let mut word = String::new();
    // One character past the end flushes the last word.
    for c in text.chars().map(Some).chain([None]) {
        if let Some(c) = c.filter(|c| c.is_alphanumeric()) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push((word.to_lowercase(), after_apostrophe));
            word.clear();
        }
        after_apostrophe = matches!(c, Some('\'' | '\u{2019}'));
    }
    out
}

/// Below this many indexed rows every word of a query is searched.
pub(crate) const PRUNE_FROM_ROWS: i64 = 20_000;
/// A word found in at least this share of the indexed rows is left out of a
/// query that has rarer words.
/// 6% was chosen by measuring both LongMemEval recall (unchanged at 0.750
/// turn all@5; 5% lost a question) and 100k-memory latency (BENCHMARKS.md).
pub const COMMON_SHARE: f64 = 0.06;

/// Leaves out of a query the words that occur in a large share of a big
/// store (`rows`: the number of indexed rows, or a bound on it), when it
/// has rarer ones. `count_up_to(word, cap)` counts the rows holding a word,
/// stopping at `cap`. Ranking BM25 costs time in proportion to
/// the matches, and such a word matches tens of thousands of rows while its
/// IDF adds little to the ranking the rare words already make. Counting
/// stops at the threshold, so the check costs at most that many postings a
/// word.
pub(crate) fn without_common_words(
    terms: Vec<String>,
    rows: i64,
    share: f64,
    mut count_up_to: impl FnMut(&str, i64) -> Result<i64, StoreError>,
) -> Result<Vec<String>, StoreError> {
    if terms.len() < 2 || rows < PRUNE_FROM_ROWS {
        return Ok(terms);
    }
    let cap = (rows as f64 * share) as i64;
    let mut rare = Vec::new();
    for t in &terms {
        if count_up_to(t, cap)? < cap {
            rare.push(t.clone());
        }
    }
    Ok(if rare.is_empty() { terms } else { rare })
}

#[cfg(test)]
mod tests {
    use super::query_words;

    #[test]
    fn a_contractions_tail_is_not_a_word_to_look_for() {
        assert_eq!(query_words("What's my dog's name?"), ["dog", "name"]);
        assert_eq!(
            query_words("Is Maya’s cooking Dev's?"),
            ["maya", "cooking", "dev"]
        );
        // Only the possessive's tail: the other contractions keep theirs.
        assert_eq!(query_words("Why don't I like it's?"), ["don", "t", "like"]);
    }

    #[test]
    fn a_single_letter_of_its_own_is_still_a_word() {
        // Only what follows an apostrophe is a contraction's tail.
        assert_eq!(
            query_words("Do I take vitamin D or a plan B?"),
            ["take", "vitamin", "d", "plan", "b"]
        );
        assert_eq!(query_words("s t m"), ["s", "t", "m"]);
    }

    #[test]
    fn a_verb_of_saying_before_about_is_not_searched() {
        assert_eq!(query_words("What did I say about Duolingo?"), ["duolingo"]);
        assert_eq!(
            query_words("What did Jon tell Gina about the studio?"),
            ["jon", "gina", "studio"]
        );
        assert_eq!(
            query_words("What has Maya mentioned about Lisbon?"),
            ["maya", "lisbon"]
        );
        // Ending the question, or before who it was said to.
        assert_eq!(query_words("What did my doctor say?"), ["doctor"]);
        assert_eq!(query_words("What did Sami say to me?"), ["sami"]);
        assert_eq!(query_words("What did my doctor tell you"), ["doctor"]);
        // Elsewhere what was said is the question.
        assert_eq!(query_words("Who told me the news?"), ["told", "news"]);
        assert_eq!(
            query_words("Who did John have to say goodbye to?"),
            ["john", "say", "goodbye"]
        );
        // Three words away is too far to tell.
        assert_eq!(
            query_words("Tell me more about it, said Jo"),
            ["tell", "more", "said", "jo"]
        );
    }

    #[test]
    fn a_plain_verb_is_searched_with_its_irregular_past_forms() {
        assert_eq!(
            query_words("How much did I sell my car for?"),
            ["sell", "sold", "car"]
        );
        assert_eq!(
            query_words("What did I eat in Rome?"),
            ["eat", "ate", "eaten", "rome"]
        );
        // A past form is searched as it is.
        assert_eq!(
            query_words("What did I buy? I bought it"),
            ["buy", "bought"]
        );
        assert_eq!(query_words("Who sold it?"), ["sold"]);
        // The commonest verbs are not expanded: their past forms are in
        // most turns.
        assert_eq!(query_words("Where did I go?"), ["go"]);
    }

    #[test]
    fn the_askers_own_name_is_not_searched_as_a_word() {
        assert_eq!(query_words("What's my name?"), Vec::<String>::new());
        assert_eq!(query_words("Do you remember my name"), ["remember"]);
        // Anyone else's name is searched.
        assert_eq!(query_words("What's my cat's name?"), ["cat", "name"]);
        assert_eq!(query_words("What is her name?"), ["name"]);
        assert_eq!(query_words("my name is Sam"), ["name", "sam"]);
    }

    #[test]
    fn stopwords_and_repeats_are_left_out_in_order() {
        assert_eq!(query_words("The cat, the CAT and the hat"), ["cat", "hat"]);
        assert_eq!(query_words("  "), Vec::<String>::new());
    }
}
