//! Property tests of the identity rules (issue 13): random turns — with a
//! speaker or none, quotes, reported speech, introductions with demonyms
//! and adjectives, group sentences after openers — and the invariants the
//! pure rules must keep on every one of them.

use kith_core::Role;
use kith_extract::lexicon;
use kith_extract::ExtractedEntity;
use kith_identity::first_person::{bind_first_person, introduction};
use kith_identity::groups::{self, Members};
use kith_identity::persons;
use kith_identity::{Basis, FirstPerson, FirstPersonInput, IdentityOptions, Policy};
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "Jordan",
    "Sam",
    "Priya",
    "Alex Rivera",
    "Dana",
    "Joy",
    "Christian",
];

const FIRST_PERSON: &[&str] = &[
    "I hate sushi",
    "I love cilantro",
    "I work at Northwind",
    "I'm Alex",
    "my name is Dana",
    "I quit my job",
];

/// How a turn reports someone else's first person.
const REPORTS: &[&str] = &[
    "{name} wrote: '{said}'.",
    "{name} texted me: {said}.",
    "{name} told me {said}.",
    "\"{said},\" {name} said.",
    "\u{201C}{said}\u{201D}",
    "My sister said {said}.",
    "According to {name}, {said}.",
    "{name} emailed: {said}.",
];

const INTRODUCTIONS: &[&str] = &[
    "I'm {w}.",
    "I am {w}, by the way.",
    "Call me {w}.",
    "My name is {w}.",
];

const OPENERS: &[&str] = &[
    "",
    "Later ",
    "Then ",
    "Tonight ",
    "Finally ",
    "Yesterday ",
    "On Monday ",
    "Saturday ",
    "Later that evening ",
    "So ",
    "Yesterday, ",
    "Today ",
];

fn capitalise(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn entity(name: &str, ty: &str) -> ExtractedEntity {
    ExtractedEntity {
        name: name.into(),
        entity_type: ty.into(),
        description: None,
    }
}

fn what_one_is() -> impl Strategy<Value = String> {
    let all: Vec<&'static str> = lexicon::DEMONYMS
        .iter()
        .chain(lexicon::DIETS)
        .chain(lexicon::PREDICATIVES)
        .copied()
        .collect();
    prop::sample::select(all).prop_map(capitalise)
}

fn listed() -> impl Strategy<Value = Vec<ExtractedEntity>> {
    prop::collection::vec(
        (
            prop::sample::select(NAMES),
            prop::sample::select(&["person", "other", "", "organization"][..]),
        )
            .prop_map(|(n, t)| entity(n, t)),
        0..4,
    )
}

fn decide(
    content: &str,
    speaker: Option<&str>,
    entities: &[ExtractedEntity],
    owner_name: Option<&str>,
) -> FirstPerson {
    bind_first_person(&FirstPersonInput {
        role: Role::User,
        speaker,
        first_person_owner: false,
        content,
        entities,
        options: &IdentityOptions::default(),
        owner_name,
        policy: Policy::CURRENT,
    })
}

proptest! {
    /// A turn with a quotation mark or a reporting verb never carries the
    /// owner's name and never introduces anyone, whatever the extraction
    /// listed; with a speaker, the speaker (only) still binds.
    #[test]
    fn reported_first_person_is_never_the_owners(
        template in prop::sample::select(REPORTS),
        name in prop::sample::select(NAMES),
        said in prop::sample::select(FIRST_PERSON),
        entities in listed(),
        speaker in prop::option::of(prop::sample::select(NAMES)),
    ) {
        let content = template.replace("{name}", name).replace("{said}", said);
        prop_assert!(persons::reports_speech(&content), "{}", content);
        prop_assert!(persons::names_somebody(&content, &entities, Policy::CURRENT));
        prop_assert_eq!(introduction(&content, &entities, Policy::CURRENT), None);
        let got = decide(&content, speaker, &entities, Some("Maya Okafor"));
        match speaker {
            None => prop_assert_eq!(got, FirstPerson::Local, "{}", content),
            Some(s) => prop_assert_eq!(
                got,
                FirstPerson::Named { name: s.to_string(), basis: Basis::Speaker }
            ),
        }
    }

    /// A demonym, a diet or a mood never introduces, even listed as a
    /// person, and never counts as naming somebody.
    #[test]
    fn what_one_is_never_self_introduces(
        word in what_one_is(),
        template in prop::sample::select(INTRODUCTIONS),
        typed in prop::sample::select(&["person", "other"][..]),
    ) {
        let content = template.replace("{w}", &word);
        let listed = [entity(&word, typed)];
        prop_assert_eq!(introduction(&content, &listed, Policy::CURRENT), None);
        prop_assert!(!persons::could_be_person(&listed[0]));
        let got = decide(&content, None, &listed, Some("Maya Okafor"));
        // Nobody is named, so the owner's earlier name carries.
        prop_assert_eq!(
            got,
            FirstPerson::Named { name: "Maya Okafor".into(), basis: Basis::OwnerName }
        );
        prop_assert_eq!(decide(&content, None, &listed, None), FirstPerson::Local);
    }

    /// An opener before a group neither hides it nor joins it: the group is
    /// the members as named; an opener alone makes no group; and a session
    /// that names the group with and without openers names one group.
    #[test]
    fn openers_neither_hide_nor_make_groups(
        opener in prop::sample::select(OPENERS),
        other in prop::sample::select(OPENERS),
        names in prop::collection::vec(
            prop::sample::select(&["Jordan", "Sam", "Priya", "Dana"][..]),
            1..4,
        ),
    ) {
        let mut names = names;
        names.sort_unstable();
        names.dedup();
        let list = match names.as_slice() {
            [one] => one.to_string(),
            [init @ .., last] => format!("{}, {last}", init.join(", ")),
            [] => unreachable!("at least one name"),
        };
        let text = format!("{opener}{list} and I went hiking.");
        let want: Vec<Option<String>> = names.iter().map(|n| Some(n.to_string())).collect();
        prop_assert_eq!(groups::groups_named(&text), vec![want], "{}", text);
        let alone = format!("{other}and I went hiking.");
        prop_assert!(groups::groups_named(&alone).is_empty(), "{}", alone);
        let again = format!("{other}{list} and I cooked.");
        let session = [text.as_str(), again.as_str(), "We won."];
        match groups::group_members(&session) {
            Members::Named(members) => {
                let got: Vec<String> = members.into_iter().map(|(n, _)| n).collect();
                let want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                prop_assert_eq!(got, want);
            }
            Members::OwnerOnly => prop_assert!(false, "one group read as several: {:?}", session),
        }
    }

    /// Links are all or nothing: either every named member is linked, or
    /// none is.
    #[test]
    fn member_links_are_all_or_nothing(
        found in prop::collection::vec(prop::option::of(0u8..8), 0..6),
    ) {
        let linked = groups::link_members(found.clone(), Policy::CURRENT);
        if found.iter().all(Option::is_some) {
            prop_assert_eq!(linked.len(), found.len());
        } else {
            prop_assert!(linked.is_empty());
        }
    }

    /// Typing known people: only `other` or blank names change, only to
    /// `person`, only for the speaker or a known person; typing twice is
    /// typing once.
    #[test]
    fn person_typing_only_promotes_known_people(
        entities in listed(),
        speaker in prop::option::of(prop::sample::select(NAMES)),
        known in prop::collection::vec(prop::sample::select(NAMES).prop_map(String::from), 0..3),
    ) {
        let typed = persons::person_types(&entities, speaker, &known);
        prop_assert_eq!(typed.len(), entities.len());
        for (before, after) in entities.iter().zip(&typed) {
            prop_assert_eq!(&before.name, &after.name);
            if before.entity_type != after.entity_type {
                prop_assert!(before.entity_type.is_empty() || before.entity_type == "other");
                prop_assert_eq!(after.entity_type.as_str(), "person");
                let name = before.name.to_lowercase();
                prop_assert!(
                    speaker.is_some_and(|s| s.to_lowercase() == name)
                        || known.iter().any(|k| k.to_lowercase() == name)
                );
            }
        }
        prop_assert_eq!(persons::person_types(&typed, speaker, &known), typed);
    }
}
