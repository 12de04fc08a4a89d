//! "Who is Kofi?" asks how someone stands to the people in the
//! conversation, and the turn that says so is the answer: "My friend Kofi
//! is helping me find leads", "Ana and her husband Mateo live in Lisbon",
//! "her name is Lucia", "everyone calls her Pris", "Kofi is my
//! neighbour", "Hi! I'm Priya". Any later turn that names them ("Kofi
//! said we won a big contract") matches the question as well, and is
//! often the vector path's first hit. For a question that asks who a name
//! is, and nothing more, turns that introduce the name are multiplied by
//! `1 + weights.who` ([`boost_introductions`]) — the same idea as the
//! boost for turns that state a time when the question asks when.

use kith_core::Role;
use kith_extract::heuristic::RELATION_ROLES;

use super::fusion::PathWeights;
use super::pool::Pool;

/// Words that make a relation word or a description someone's ("my
/// friend", "is her sister", "is a designer").
const DETERMINERS: &[&str] = &["my", "his", "her", "our", "their", "your", "a", "an", "the"];

/// Whom `query` asks about when it asks only who they are ("Who is Kofi?",
/// "who's Ms Okafor", "Who was Anthony?"): the name's words, as written.
/// `None` for any other question, including one that asks who did
/// something ("Who is Melanie a fan of?").
pub fn asked_who(query: &str) -> Option<Vec<String>> {
    let q = query.trim().trim_end_matches(['?', '.', '!', ' ']);
    let lower = q.to_lowercase();
    let rest = ["who is ", "who's ", "who was ", "who’s "]
        .iter()
        .find_map(|p| lower.starts_with(p).then(|| q.get(p.len()..)).flatten())?;
    let name: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    let capitalised = |w: &String| w.chars().next().is_some_and(char::is_uppercase);
    (!name.is_empty() && name.len() <= 3 && name.iter().all(capitalised)).then_some(name)
}

/// Words of `text` with their case, split at anything but letters, digits
/// and hyphens ("I'm" → "I", "m").
fn cased_words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The words before `name` in `text` that introduce it ("friend Kofi",
/// "name is Lucia", "calls her Pris", "I'm Priya"), or the words after
/// it ("Kofi is my…", "Kofi, a designer"), when any do.
pub fn introduction(text: &str, name: &[String]) -> Option<String> {
    let w = cased_words(text);
    let lower = |i: usize| w.get(i).map(|x| x.to_lowercase()).unwrap_or_default();
    let n = name.len();
    let appositive = appositive(text, name);
    (0..w.len().saturating_sub(n - 1))
        .filter(|&i| w[i..i + n].iter().zip(name).all(|(a, b)| *a == b.as_str()))
        .find_map(|i| {
            let before = |k: usize| if i >= k { lower(i - k) } else { String::new() };
            let after = |k: usize| lower(i + n - 1 + k);
            let introduced = RELATION_ROLES.contains(&before(1).as_str())
                || matches!(before(1).as_str(), "named" | "called")
                || (before(2) == "name" && before(1) == "is")
                || (matches!(before(2).as_str(), "call" | "calls" | "called")
                    && matches!(before(1).as_str(), "her" | "him" | "them" | "me"))
                || (before(2) == "i" && matches!(before(1).as_str(), "m" | "am"))
                || (matches!(after(1).as_str(), "is" | "was" | "s")
                    && DETERMINERS.contains(&after(2).as_str()))
                || appositive;
            introduced.then(|| {
                let from = i.saturating_sub(2);
                w[from..(i + n + 2).min(w.len())].join(" ")
            })
        })
}

/// "Kofi, my friend from school": the name, a comma, a determiner.
fn appositive(text: &str, name: &[String]) -> bool {
    let name = name.join(" ");
    DETERMINERS
        .iter()
        .any(|d| text.contains(&format!("{name}, {d} ")))
}

/// For a question that asks who someone is ([`asked_who`]): boosts every
/// candidate that introduces them by `1 + weights.who`, the reason quoting
/// the words. Does nothing when the weight is 0.
pub fn boost_introductions(query: &str, weights: &PathWeights, pool: &mut Pool) {
    if weights.who <= 0.0 {
        return;
    }
    let Some(name) = asked_who(query) else {
        if asks_own_name(query) {
            boost_own_introductions(weights, pool);
        }
        return;
    };
    pool.boost_each("introduces", 1.0 + weights.who, |c| {
        let words = introduction(&c.hit.content, &name)?;
        Some(format!(
            "the query asks who {} is; this says \"{words}\"",
            name.join(" ")
        ))
    });
}

/// Whether `query` asks the asker's own name ("What's my name?", "Do you
/// remember my name?", "Who am I?"), not anyone else's ("What's my cat's
/// name?" names the cat).
pub fn asks_own_name(query: &str) -> bool {
    let lower = query.to_lowercase().replace('\u{2019}', "'");
    let lower = lower.trim_end_matches(['?', '.', '!', ' ']);
    (lower.contains("my name") && !lower.contains("my name is")) || lower == "who am i"
}

/// For a question that asks the asker's own name ([`asks_own_name`]):
/// boosts every user turn that introduces its own speaker, or without a
/// speaker its author ("Hi! I'm Priya", "my name is…", "call me…"), by
/// `1 + weights.who`. The words
/// that matched the question ("name") are as often someone else's: "Her
/// name is Mochi", the cat, ranked first for Priya's "What's my name?".
fn boost_own_introductions(weights: &PathWeights, pool: &mut Pool) {
    pool.boost_each("introduces", 1.0 + weights.who, |c| {
        if c.hit.role != Some(Role::User) {
            return None;
        }
        let first = match c.hit.speaker.as_deref() {
            Some(speaker) => speaker.split_whitespace().next()?.to_string(),
            // Most callers give no speaker: the name is the one the turn
            // gives its author ("Hi, I'm Maya.").
            None => self_introduced(&c.hit.content)?,
        };
        let words = introduction(&c.hit.content, &[first])?;
        Some(format!(
            "the query asks the asker's name; this says \"{words}\""
        ))
    });
}

/// The name a turn introduces its author by: the first word of the first
/// name after "I'm", "I am", "my name is" or "call me" that could be a
/// name (the identity rules' reading,
/// [`kith_identity::first_person::introduced_names`]): "Hi, I'm Maya.";
/// not "I'm Brazilian", nor the cat's "Her name is Mochi".
fn self_introduced(text: &str) -> Option<String> {
    kith_identity::first_person::introduced_names(text)
        .iter()
        .filter_map(|name| name.split_whitespace().next())
        .find(|first| *first != "I" && kith_extract::lexicon::is_name_like(first))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_question_about_the_askers_own_name_asks_it() {
        for q in [
            "What's my name?",
            "Do you remember my name",
            "who am I?",
            "What is my name?",
        ] {
            assert!(asks_own_name(q), "{q}");
        }
        for q in [
            "What's my cat's name?",
            "My name is Sam.",
            "Who is Sam?",
            "What's her name?",
        ] {
            assert!(!asks_own_name(q), "{q}");
        }
    }

    #[test]
    fn a_turn_introduces_its_author_by_the_name_after_im() {
        for (text, name) in [
            ("Hi, I'm Maya. I work at a bookstore.", Some("Maya")),
            ("hello! my name is Tomás", Some("Tomás")),
            ("Just call me Bea.", Some("Bea")),
            ("I am Jordan, nice to meet you", Some("Jordan")),
            ("I'm Brazilian.", None),
            ("I'm so tired.", None),
            ("Her name is Mochi.", None),
            ("I'm Tired.", None),
        ] {
            assert_eq!(self_introduced(text).as_deref(), name, "{text}");
        }
    }

    fn name(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn only_a_question_that_asks_who_a_name_is_counts() {
        assert_eq!(asked_who("Who is Kofi?"), Some(name("Kofi")));
        assert_eq!(asked_who("who's Ms Okafor"), Some(name("Ms Okafor")));
        assert_eq!(asked_who("Who was Anthony?"), Some(name("Anthony")));
        for q in [
            "Who is Melanie a fan of in terms of modern music?",
            "Who is helping me find clients?",
            "Where is Kofi?",
            "Who is?",
        ] {
            assert_eq!(asked_who(q), None, "{q}");
        }
    }

    #[test]
    fn relations_names_and_descriptions_introduce() {
        for (text, who) in [
            ("Not yet. My friend Kofi is helping me find leads.", "Kofi"),
            ("Ana and her husband Mateo live in Lisbon.", "Mateo"),
            (
                "My sister Ana just had a baby girl, her name is Lucia.",
                "Lucia",
            ),
            (
                "My manager Priscilla is great, everyone calls her Pris.",
                "Pris",
            ),
            ("Hi! I'm Priya, I teach chemistry.", "Priya"),
            ("Kofi is my neighbour from the old flat.", "Kofi"),
            ("Kofi, a designer from Accra, called.", "Kofi"),
            ("We adopted a puppy named Biscuit.", "Biscuit"),
        ] {
            assert!(introduction(text, &name(who)).is_some(), "{text}");
        }
    }

    #[test]
    fn a_turn_that_only_names_them_does_not_introduce() {
        for (text, who) in [
            (
                "Kofi said \"we won a big contract\" so he is buying lunch.",
                "Kofi",
            ),
            ("Ana is visiting me in September with Lucia.", "Ana"),
            ("Lucia loves fish picture books.", "Lucia"),
            ("Thanks, Kofi!", "Kofi"),
            ("My friend Kofi is here.", "Ana"),
        ] {
            assert_eq!(introduction(text, &name(who)), None, "{text}");
        }
    }
}
