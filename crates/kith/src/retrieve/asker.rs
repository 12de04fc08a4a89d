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
//! person ("What did Sam say…", the speaker boost's case).

use kith_core::Role;

use super::fusion::PathWeights;
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
    pool.boost_each("asked_role", 1.0 + weights.role, |c| {
        (c.hit.role == Some(asked)).then(|| reason.to_string())
    });
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
