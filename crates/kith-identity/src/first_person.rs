//! Who a message's singular first person is.
//!
//! In order (the first that applies wins):
//! 1. `first_person_owner` on a user turn: the owner's deterministic
//!    `owner_reference` entity.
//! 2. A named `speaker` (with `speaker_references` on): the person entity of
//!    that name, the same node other mentions of the name use.
//! 3. A user turn without a speaker that introduces itself ("Hi, I am Alex
//!    Rivera", "I'm Alex", "My name is Alex Rivera", "Call me Alex"), when the
//!    extraction lists that name as a person (with `self_introductions` on).
//!    Possessives ("I am Jordan's partner"), unlisted names and two different
//!    introductions bind nothing. Under `kith_ingest_v3` the name must also
//!    be name-like (not "Brazilian", "Vegan", "Tired":
//!    [`kith_extract::lexicon::is_name_like`]), and a turn that quotes or
//!    reports speech introduces nobody.
//! 4. A user turn that names nobody ([`crate::persons::names_somebody`]: no
//!    name that could be a person, no quotation, no reported speech), with
//!    `owner_name_carry` on: the newest person entity a user turn created
//!    under the owner's name (the caller looks it up).
//! 5. Otherwise the first person stays local to its event.
//!
//! Plural, second- and third-person references are never bound here.

use kith_core::Role;
use kith_extract::ExtractedEntity;
use serde::{Deserialize, Serialize};

use crate::options::IdentityOptions;
use crate::persons;
use crate::policy::Policy;

/// Why a first person was bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The caller named the speaker.
    Speaker,
    /// The turn introduced itself.
    SelfIntroduction,
    /// The caller declared the turn's first person to be the owner.
    FirstPersonOwner,
    /// The owner's name, carried from an earlier user turn.
    OwnerName,
    /// The named person a quotation is given to (`Dev says "I love
    /// sushi".`; `kith_ingest_v9`).
    QuotedSpeaker,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstPerson {
    /// Bind to the person entity of this name.
    Named {
        /// The name, as the speaker or the extraction wrote it.
        name: String,
        /// Why.
        basis: Basis,
    },
    /// Bind to the owner's reference entity.
    OwnerReference,
    /// Keep the event-local reference.
    Local,
}

/// What the rule looks at.
#[derive(Debug, Clone, Copy)]
pub struct FirstPersonInput<'a> {
    /// The turn's role.
    pub role: Role,
    /// The caller's speaker.
    pub speaker: Option<&'a str>,
    /// The caller's first-person-owner declaration.
    pub first_person_owner: bool,
    /// The message text.
    pub content: &'a str,
    /// The entities the extraction listed.
    pub entities: &'a [ExtractedEntity],
    /// Which rules run.
    pub options: &'a IdentityOptions,
    /// The newest name a user turn of this owner and scope gave the owner.
    pub owner_name: Option<&'a str>,
    /// The policy whose rules apply.
    pub policy: Policy,
}

/// Decides who the turn's singular first person is.
pub fn bind_first_person(input: &FirstPersonInput<'_>) -> FirstPerson {
    if input.first_person_owner && input.role == Role::User {
        return FirstPerson::OwnerReference;
    }
    if let Some(speaker) = input.speaker.map(str::trim).filter(|s| !s.is_empty()) {
        // A named speaker wins over an introduction; with the rule off the
        // first person simply stays local.
        return if input.options.speaker_references {
            FirstPerson::Named {
                name: speaker.to_string(),
                basis: Basis::Speaker,
            }
        } else {
            FirstPerson::Local
        };
    }
    if input.options.self_introductions && input.role == Role::User {
        if let Some(name) = introduction(input.content, input.entities, input.policy) {
            return FirstPerson::Named {
                name,
                basis: Basis::SelfIntroduction,
            };
        }
    }
    let names_somebody = persons::names_somebody(input.content, input.entities, input.policy);
    if input.options.owner_name_carry
        && input.options.speaker_references
        && input.role == Role::User
        && !names_somebody
    {
        if let Some(name) = input.owner_name.map(str::trim).filter(|n| !n.is_empty()) {
            return FirstPerson::Named {
                name: name.to_string(),
                basis: Basis::OwnerName,
            };
        }
    }
    FirstPerson::Local
}

impl FirstPerson {
    /// Whether the person entity this binding creates carries the owner's
    /// name (`owner_name`): a user turn's own speaker or introduction.
    pub fn names_the_owner(&self, role: Role) -> bool {
        role == Role::User
            && matches!(
                self,
                FirstPerson::Named {
                    basis: Basis::Speaker | Basis::SelfIntroduction,
                    ..
                }
            )
    }
}

/// The self-introduction a turn makes under `policy`: under
/// `kith_ingest_v3`, never in a turn that relays someone's words
/// ([`persons::relays_speech`]), and only under a name-like name.
pub fn introduction(content: &str, entities: &[ExtractedEntity], policy: Policy) -> Option<String> {
    if persons::relays_speech(content, policy) {
        return None;
    }
    let name = self_introduced_name(content, entities)?;
    (!policy.has_v3_rules() || kith_extract::lexicon::is_name_like(&name)).then_some(name)
}

/// The short name a turn's named speaker introduces themselves by, under
/// `kith_ingest_v9`: "Hi, I'm Priya." from the speaker "Priya Natarajan"
/// gives `Priya`, whose listed entity in this turn is the speaker's own
/// node, not a second person. The name must be a run of the speaker's
/// words (a first name, a surname, both); any other name introduced while
/// a speaker is given (`I'm Jordan` from Priya) is left as it was.
pub fn speakers_short_name(
    first_person: &FirstPerson,
    content: &str,
    entities: &[ExtractedEntity],
    policy: Policy,
) -> Option<String> {
    let FirstPerson::Named {
        name: speaker,
        basis: Basis::Speaker,
    } = first_person
    else {
        return None;
    };
    if !policy.has_v9_rules() {
        return None;
    }
    let name = introduction(content, entities, policy)?;
    let words = |s: &str| -> Vec<String> { persons::words(s).collect() };
    let (short, full) = (words(&name), words(speaker));
    let part = short.len() < full.len() && full.windows(short.len()).any(|w| w == short);
    part.then_some(name)
}

/// Introduction markers, lower case; each must start a word.
const MARKERS: &[&str] = &["my name is ", "call me ", "i am ", "i'm ", "i\u{2019}m "];

/// The one person the message introduces itself as, if exactly one listed
/// person is introduced.
pub fn self_introduced_name(content: &str, entities: &[ExtractedEntity]) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    for name in introduced_names(content) {
        let listed = entities.iter().find(|e| {
            e.entity_type.trim().eq_ignore_ascii_case("person")
                && e.name.trim().to_lowercase() == name.to_lowercase()
        });
        if let Some(entity) = listed {
            let key = entity.name.trim().to_lowercase();
            if !found.iter().any(|f| f.to_lowercase() == key) {
                found.push(entity.name.trim().to_string());
            }
        }
    }
    match found.len() {
        1 => found.pop(),
        _ => None,
    }
}

/// Every name the message gives after an introduction marker that starts
/// a word ("Hi, I'm Maya", "my name is Alex Rivera", "call me Bea"): the
/// run of capitalised words right after it, possessives left out ("I am
/// Jordan's partner"), marker by marker. Whether a name is a person's is
/// the caller's to say: [`self_introduced_name`] asks the extraction, and
/// retrieval, which has none, whether it could be a name.
pub fn introduced_names(content: &str) -> Vec<String> {
    let lower = content.to_ascii_lowercase();
    let mut names = Vec::new();
    for marker in MARKERS {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(marker) {
            let at = from + pos;
            from = at + marker.len();
            let starts_word = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '\'');
            if starts_word {
                names.extend(capitalised_name(&content[at + marker.len()..]));
            }
        }
    }
    names
}

/// The run of capitalised words at the start of `text`, or `None` when
/// there is none or it is possessive ("Jordan's").
fn capitalised_name(text: &str) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    let mut rest = text;
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphabetic() || c == '-' || c == '\'' || c == '\u{2019}'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        if !word.chars().next().is_some_and(char::is_uppercase) {
            break;
        }
        if word.ends_with("'s") || word.ends_with("\u{2019}s") {
            return None;
        }
        words.push(word.trim_end_matches(['\'', '\u{2019}']));
        rest = &rest[end..];
        // Names continue across single spaces only.
        match rest.strip_prefix(' ') {
            Some(next) if next.chars().next().is_some_and(char::is_uppercase) => rest = next,
            _ => break,
        }
    }
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(name: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: "person".into(),
            description: None,
        }
    }

    #[test]
    fn a_speakers_short_name_is_a_run_of_their_name() {
        let named = |name: &str, basis| FirstPerson::Named {
            name: name.into(),
            basis,
        };
        let short = |fp: &FirstPerson, text: &str, listed: &str, policy| {
            speakers_short_name(fp, text, &[person(listed)], policy)
        };
        let priya = named("Priya Natarajan", Basis::Speaker);
        assert_eq!(
            short(&priya, "Hi, I'm Priya.", "Priya", Policy::V9).as_deref(),
            Some("Priya")
        );
        assert_eq!(
            short(&priya, "My name is Natarajan.", "Natarajan", Policy::V9).as_deref(),
            Some("Natarajan")
        );
        // Not part of the name, the whole name, before v9, no speaker.
        assert_eq!(short(&priya, "Hi, I'm Jordan.", "Jordan", Policy::V9), None);
        assert_eq!(short(&priya, "I'm Pri.", "Pri", Policy::V9), None);
        assert_eq!(
            short(
                &priya,
                "Hi, I'm Priya Natarajan.",
                "Priya Natarajan",
                Policy::V9
            ),
            None
        );
        assert_eq!(short(&priya, "Hi, I'm Priya.", "Priya", Policy::V8), None);
        let introduced = named("Priya Natarajan", Basis::SelfIntroduction);
        assert_eq!(
            short(&introduced, "Hi, I'm Priya.", "Priya", Policy::V9),
            None
        );
    }

    fn decide(
        role: Role,
        speaker: Option<&str>,
        fpo: bool,
        content: &str,
        entities: &[ExtractedEntity],
        options: IdentityOptions,
    ) -> FirstPerson {
        bind_first_person(&FirstPersonInput {
            role,
            speaker,
            first_person_owner: fpo,
            content,
            entities,
            options: &options,
            owner_name: None,
            policy: Policy::CURRENT,
        })
    }

    #[test]
    fn introductions() {
        let alex = [person("Alex Rivera")];
        for text in [
            "Hi, I am Alex Rivera and I like tea.",
            "My name is Alex Rivera.",
            "Call me Alex Rivera",
            "hello! I'm Alex Rivera",
        ] {
            assert_eq!(
                self_introduced_name(text, &alex).as_deref(),
                Some("Alex Rivera"),
                "{text}"
            );
        }
        assert_eq!(
            self_introduced_name("I'm Alex.", &[person("Alex")]).as_deref(),
            Some("Alex")
        );
        // Possessive, unlisted, not a person, two different people.
        assert_eq!(
            self_introduced_name("I am Jordan's partner.", &[person("Jordan")]),
            None
        );
        assert_eq!(
            self_introduced_name("I am Alex Rivera.", &[person("Sam")]),
            None
        );
        let place = ExtractedEntity {
            entity_type: "place".into(),
            ..person("Alex")
        };
        assert_eq!(self_introduced_name("I'm Alex.", &[place]), None);
        assert_eq!(
            self_introduced_name("I'm Alex. Call me Sam.", &[person("Alex"), person("Sam")]),
            None
        );
        // The same person introduced twice is still one introduction.
        assert_eq!(
            self_introduced_name("I'm Alex. Call me Alex.", &[person("Alex")]).as_deref(),
            Some("Alex")
        );
        // "I am tired" names nobody; "Sam" inside "Samira" is no marker.
        assert_eq!(self_introduced_name("I am tired.", &[person("Alex")]), None);
    }

    #[test]
    fn order_of_rules() {
        let on = IdentityOptions::default();
        let alex = [person("Alex")];
        // first_person_owner wins on a user turn...
        assert_eq!(
            decide(Role::User, None, true, "I'm Alex.", &alex, on),
            FirstPerson::OwnerReference
        );
        // ...a speaker wins over an introduction...
        assert_eq!(
            decide(Role::User, Some("Dana"), false, "I'm Alex.", &alex, on),
            FirstPerson::Named {
                name: "Dana".into(),
                basis: Basis::Speaker
            }
        );
        // ...an introduction binds a user turn only...
        assert_eq!(
            decide(Role::User, None, false, "I'm Alex.", &alex, on),
            FirstPerson::Named {
                name: "Alex".into(),
                basis: Basis::SelfIntroduction
            }
        );
        assert_eq!(
            decide(Role::Assistant, None, false, "I'm Alex.", &alex, on),
            FirstPerson::Local
        );
        // ...and each rule has its switch.
        let off = IdentityOptions {
            speaker_references: false,
            self_introductions: false,
            ..on
        };
        assert_eq!(
            decide(Role::User, Some("Dana"), false, "x", &[], off),
            FirstPerson::Local
        );
        assert_eq!(
            decide(Role::User, None, false, "I'm Alex.", &alex, off),
            FirstPerson::Local
        );
        // A participant's speaker binds too (only the owner rules are user-only).
        assert!(matches!(
            decide(Role::Participant, Some("Jordan"), false, "x", &[], on),
            FirstPerson::Named { .. }
        ));
    }
}

#[cfg(test)]
mod carry_tests {
    use super::*;

    fn carry(role: Role, entities: &[ExtractedEntity], options: IdentityOptions) -> FirstPerson {
        bind_first_person(&FirstPersonInput {
            role,
            speaker: None,
            first_person_owner: false,
            content: "I prefer trains to flights.",
            entities,
            options: &options,
            owner_name: Some("Maya Okafor"),
            policy: Policy::CURRENT,
        })
    }

    #[test]
    fn owner_name_carry() {
        let on = IdentityOptions::default();
        assert_eq!(
            carry(Role::User, &[], on),
            FirstPerson::Named {
                name: "Maya Okafor".into(),
                basis: Basis::OwnerName
            }
        );
        // Never for other roles; never when the turn names a person; each
        // switch (and speaker references, which it needs) turns it off.
        assert_eq!(carry(Role::Participant, &[], on), FirstPerson::Local);
        let jordan = [ExtractedEntity {
            name: "Jordan".into(),
            entity_type: "person".into(),
            description: None,
        }];
        assert_eq!(carry(Role::User, &jordan, on), FirstPerson::Local);
        for off in [
            IdentityOptions {
                owner_name_carry: false,
                ..on
            },
            IdentityOptions {
                speaker_references: false,
                ..on
            },
        ] {
            assert_eq!(carry(Role::User, &[], off), FirstPerson::Local);
        }
        assert!(FirstPerson::Named {
            name: "A".into(),
            basis: Basis::Speaker
        }
        .names_the_owner(Role::User));
        assert!(!FirstPerson::Named {
            name: "A".into(),
            basis: Basis::OwnerName
        }
        .names_the_owner(Role::User));
        assert!(!FirstPerson::Named {
            name: "A".into(),
            basis: Basis::Speaker
        }
        .names_the_owner(Role::Participant));
    }

    fn turn(content: &str, entities: &[ExtractedEntity], policy: Policy) -> FirstPerson {
        bind_first_person(&FirstPersonInput {
            role: Role::User,
            speaker: None,
            first_person_owner: false,
            content,
            entities,
            options: &IdentityOptions::default(),
            owner_name: Some("Maya Okafor"),
            policy,
        })
    }

    fn other(name: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: "other".into(),
            description: None,
        }
    }

    /// Issue 13 item 1: quoted or pasted first person is never the owner's.
    #[test]
    fn quotes_and_reported_speech_are_not_the_owner() {
        let maya = FirstPerson::Named {
            name: "Maya Okafor".into(),
            basis: Basis::OwnerName,
        };
        assert_eq!(turn("I prefer trains to flights.", &[], Policy::V3), maya);
        for (text, entities) in [
            ("Jordan wrote: 'I hate sushi'.", vec![other("Jordan")]),
            ("Jordan texted me: I love cilantro.", vec![other("Jordan")]),
            ("Jordan texted me: I love cilantro.", vec![]),
            ("\"I love cilantro.\"", vec![]),
        ] {
            assert_eq!(
                turn(text, &entities, Policy::V3),
                FirstPerson::Local,
                "{text}"
            );
        }
        // kith_ingest_v2 looked only for a listed person.
        assert_eq!(
            turn(
                "Jordan texted me: I love cilantro.",
                &[other("Jordan")],
                Policy::V2
            ),
            maya
        );
    }

    /// `kith_ingest_v6`: a line pasted from a chat relays its labelled
    /// speaker's words: it introduces nobody and carries no owner name.
    #[test]
    fn a_pasted_line_is_its_labelled_speakers() {
        let pasted = "Alex: Hi, I'm Alex Rivera.";
        let alex = [person("Alex Rivera")];
        assert_eq!(introduction(pasted, &alex, Policy::V6), None);
        assert_eq!(
            introduction(pasted, &alex, Policy::V5).as_deref(),
            Some("Alex Rivera")
        );
        assert_eq!(
            turn("Dev: I hate sushi", &[], Policy::V6),
            FirstPerson::Local
        );
        // Not every label names a speaker.
        assert_eq!(
            introduction(
                "Update: I'm Alex Rivera now, I changed my name.",
                &alex,
                Policy::V6
            )
            .as_deref(),
            Some("Alex Rivera")
        );
    }

    /// Issue 13 item 2: a demonym or adjective is not a name, even when an
    /// extraction lists it as a person.
    #[test]
    fn demonyms_and_adjectives_never_introduce() {
        for (text, word) in [
            ("I'm Brazilian, by the way.", "Brazilian"),
            ("I'm Vegan.", "Vegan"),
            ("I'm Tired.", "Tired"),
        ] {
            let listed = [person(word)];
            assert_eq!(introduction(text, &listed, Policy::V3), None, "{text}");
            assert_eq!(
                introduction(text, &listed, Policy::V2).as_deref(),
                Some(word),
                "{text}"
            );
            // Nor do they name anybody: the owner's name still carries.
            assert!(matches!(
                turn(text, &[other(word)], Policy::V3),
                FirstPerson::Named {
                    basis: Basis::OwnerName,
                    ..
                }
            ));
        }
        assert_eq!(
            introduction("I'm Alex.", &[person("Alex")], Policy::V3).as_deref(),
            Some("Alex")
        );
        // A quoted introduction is someone else's.
        assert_eq!(
            introduction("Jordan said: 'I'm Alex.'", &[person("Alex")], Policy::V3),
            None
        );
    }

    fn person(name: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: "person".into(),
            description: None,
        }
    }
}
