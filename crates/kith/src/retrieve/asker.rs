//! Whose words a question to the assistant asks for.
//!
//! "What did I say about my knee?" asks for the user's own turns, yet the
//! assistant's reply that repeats them ("Sorry to hear about your knee…")
//! shares as many of the question's words and often matches better.
//! "What did you suggest for my knee?" asks for the assistant's turn. For a
//! question in the first person the user's turns (role `user`) are
//! multiplied by `1 + weights.role`
//! ([`ASKED_ROLE_BOOST`](super::fusion::ASKED_ROLE_BOOST) by default); for
//! one that asks what the assistant said ("did you", "you recommended",
//! "your advice"), the assistant's are. Only when the candidates hold turns of both the user
//! and the assistant: a conversation between people (every turn `user` or
//! `participant`) is left as it is, and so is a question in the third
//! person ("What did Sam say…", the speaker boost's case). A user's turn
//! that says the question's words only of someone else ("My girlfriend
//! Lena works days…" for "Where do I work?") is not boosted.

use kith_core::Role;
use kith_extract::lexicon::SUBJECT_ADVERBS;

use super::fusion::PathWeights;
use super::graph::stem;
use super::paths::words;
use super::pool::Pool;

/// Words that put a question in the user's voice.
const FIRST_PERSON: &[&str] = &["i", "me", "my", "mine", "myself"];

/// A word the assistant's words are asked for with, after "you" ("you
/// said", "you suggested") or "your" ("your advice"); matched as a prefix.
const ASSISTANT_SAID: &[&str] = &[
    "said",
    "suggest",
    "recommend",
    "told",
    "mention",
    "advi",
    "propos",
    "tip",
    "idea",
    "gave",
];

/// Which role's turns `query` asks for, when it speaks to the assistant.
pub fn asked_role(query: &str) -> Option<Role> {
    let w = words(query);
    let said_by_you = w.windows(2).any(|p| {
        (p[0] == "did" && p[1] == "you")
            || (matches!(p[0].as_str(), "you" | "your")
                && ASSISTANT_SAID.iter().any(|s| p[1].starts_with(s)))
    });
    if said_by_you {
        Some(Role::Assistant)
    } else if w.iter().any(|x| FIRST_PERSON.contains(&x.as_str())) {
        Some(Role::User)
    } else {
        None
    }
}

/// Multiplies the turns in the role `query` asks for by `1 +
/// weights.role`, when the pool holds the user's turns and the
/// assistant's.
pub fn boost_asked_role(query: &str, weights: &PathWeights, pool: &mut Pool) {
    if weights.role <= 0.0 {
        return;
    }
    let Some(asked) = asked_role(query) else {
        return;
    };
    let has = |role: Role| pool.by_id.values().any(|c| c.hit.role == Some(role));
    if !(has(Role::User) && has(Role::Assistant)) {
        return;
    }
    let reason = match asked {
        Role::Assistant => "the question asks what the assistant said, and the assistant said this",
        _ => "the question asks in the first person, and the user said this",
    };
    // "Where do I work?" asks what the user does; "My girlfriend Lena
    // works days…" is the user's turn, but its "works" is Lena's.
    let own: Vec<String> = if asked == Role::User && words(query).iter().any(|w| w == "i") {
        kith_store::words::query_words(query)
            .iter()
            .map(|w| stem(w))
            .collect()
    } else {
        Vec::new()
    };
    pool.boost_each("asked_role", 1.0 + weights.role, |c| {
        (c.hit.role == Some(asked) && !said_only_of_another(&c.hit.content, &own))
            .then(|| reason.to_string())
    });
}

/// Words that open a sentence capitalised without naming anyone.
const OPENERS: &[&str] = &[
    "the", "my", "our", "your", "his", "her", "their", "then", "and", "but", "so", "i", "we", "it",
    "this", "that", "a", "an",
];

/// Whether `turn` says the words of `asked` (stems) only of someone else:
/// it says at least one, and each right after a name or "he", "she",
/// "they" in its clause ("My girlfriend Lena works days" says "work" of
/// Lena; "bike to work" and "I work nights" say it of nobody else).
fn said_only_of_another(turn: &str, asked: &[String]) -> bool {
    if asked.is_empty() {
        return false;
    }
    let mut said = false;
    for clause in turn.split(['.', '!', '?', ';', ':', ',', '\n']) {
        let mut before: Option<(&str, bool)> = None;
        for (k, word) in clause
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .enumerate()
        {
            let lower = word.to_lowercase();
            if asked.contains(&stem(&lower)) {
                said = true;
                let by_another = before.is_some_and(|(b, first)| {
                    let b_lower = b.to_lowercase();
                    matches!(b_lower.as_str(), "he" | "she" | "they")
                        || (b.chars().next().is_some_and(char::is_uppercase)
                            && b_lower != "i"
                            && !(first && OPENERS.contains(&b_lower.as_str())))
                });
                if !by_another {
                    return false;
                }
            }
            if !SUBJECT_ADVERBS.contains(&lower.as_str()) {
                before = Some((word, k == 0));
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_in_the_first_person_asks_for_the_users_turns() {
        for q in [
            "What did I say about my knee?",
            "How is my knee?",
            "Can you remind me what I told you about Kofi?",
            "Where do I work now?",
            "What's the name of my niece?",
        ] {
            assert_eq!(asked_role(q), Some(Role::User), "{q}");
        }
    }

    #[test]
    fn a_question_about_what_the_assistant_said_asks_for_its_turns() {
        for q in [
            "What did you suggest for my knee?",
            "Which hotel did you recommend?",
            "What was your advice about the flights?",
            "Remind me of the recipe you suggested",
            "What were your tips for my interview?",
        ] {
            assert_eq!(asked_role(q), Some(Role::Assistant), "{q}");
        }
    }

    #[test]
    fn a_turn_saying_the_asked_words_only_of_someone_else_is_not_the_askers() {
        let asked = vec!["work".to_string()];
        for (turn, others) in [
            ("My girlfriend Lena works days at a law firm.", true),
            ("Lena still works there.", true),
            ("She works nights, he works days.", true),
            ("I work nights.", false),
            ("Lena said I should bike to work.", false),
            ("Lena works days and I work nights.", false),
            ("Work is crazy this week.", false),
            ("The work is hard.", false),
            ("Nothing about it here.", false),
        ] {
            assert_eq!(said_only_of_another(turn, &asked), others, "{turn}");
        }
        assert!(!said_only_of_another("Lena works days.", &[]));
    }

    #[test]
    fn a_question_in_the_third_person_asks_for_nobody_in_particular() {
        for q in [
            "What did Sam say about his knee?",
            "Where does Ana live?",
            "Can you find when Kofi moved to Accra?",
            "Why did Mateo stay home?",
        ] {
            assert_eq!(asked_role(q), None, "{q}");
        }
    }
}
