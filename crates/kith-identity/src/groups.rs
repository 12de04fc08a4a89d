//! Owner group links: whom a user turn's "we" speaks for.
//!
//! A claim a user turn states about we, us or our keeps its event-local
//! subject, and is linked to the people it speaks for: always the owner (we
//! includes the speaker), and the other members only on evidence — when the
//! session's user turns by the same speaker, up to and including the claim's
//! turn, name exactly one group with the owner ("My partner Jordan and I",
//! "Jordan, Sam and I", "me and Jordan").
//!
//! This module reads the text; the engine resolves names to stored person
//! entities (full name, or the rest after a weekday, month or title).
//!
//! Bounds: only the first [`MAX_WORDS`] words and marks of a turn are read,
//! and a list of more than [`MAX_MEMBERS`] members names no group. A member
//! without a name ("my wife and I") makes the group unnamed: the claim is
//! linked to the owner only. "and I" counts only after members that start a
//! clause, so "I got the offer from Brightpath and I accepted it" names no
//! group. Names count as written with a capital letter.
//!
//! Under `kith_ingest_v3`: sentence openers before a group ("Later Jordan
//! and I…", "Then…", "Tonight…", "Finally…", "On Monday…", "Yesterday…")
//! neither hide it nor make one — the members still start a clause, an
//! opener is never part of a member's name, a weekday before a name is
//! dropped ("On Friday Jordan and I" is Jordan's group), and a weekday alone
//! is no member; and the links are all or
//! nothing ([`link_members`]): if any named member has no single person
//! entity, the claim is linked to the owner only.

use crate::policy::Policy;

/// Words and marks of a turn read at most.
pub const MAX_WORDS: usize = 4096;
/// Members a group may have at most.
pub const MAX_MEMBERS: usize = 16;
/// Session events read at most (the engine's bound).
pub const MAX_SESSION_EVENTS: usize = 500;

/// One group a turn names with its author: each member's name, or `None`
/// for a member without one ("my wife").
pub type Group = Vec<Option<String>>;

/// Words that name a relation before a member ("my partner Jordan").
const RELATIONS: &[&str] = &[
    "partner",
    "wife",
    "husband",
    "boyfriend",
    "girlfriend",
    "friend",
    "sister",
    "brother",
    "mother",
    "father",
    "mum",
    "mom",
    "dad",
    "son",
    "daughter",
    "colleague",
    "boss",
    "cousin",
    "aunt",
    "uncle",
    "roommate",
    "flatmate",
    "neighbour",
    "neighbor",
    "fiance",
    "fiancee",
];

/// Words that may precede a name and are not part of it.
pub const NAME_PREFIXES: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "coach",
    "dr",
    "mr",
    "mrs",
    "ms",
    "miss",
    "prof",
    "professor",
    "uncle",
    "aunt",
    "auntie",
    "grandma",
    "grandpa",
];

/// Capitalised words that start sentences and name nobody.
const NOT_NAMES: &[&str] = &[
    "yesterday",
    "today",
    "tomorrow",
    "tonight",
    "then",
    "so",
    "later",
    "last",
    "next",
    "this",
    "that",
    "well",
    "also",
    "anyway",
    "finally",
    "sometimes",
    "yes",
    "no",
    "oh",
    "hi",
    "hey",
    "and",
    "but",
    "the",
    "we",
    "our",
    "after",
    "before",
    "when",
    "while",
    "since",
];

/// Words that open a sentence or a time phrase before a group, lower case
/// (`kith_ingest_v3`): never part of a member's name, and a member list
/// after them still starts its clause ("Later Jordan and I", "On Monday
/// Jordan and I", "Later that evening Jordan and I").
pub const OPENERS: &[&str] = &[
    "yesterday",
    "today",
    "tomorrow",
    "tonight",
    "then",
    "so",
    "later",
    "last",
    "next",
    "this",
    "that",
    "well",
    "also",
    "anyway",
    "finally",
    "eventually",
    "afterwards",
    "afterward",
    "recently",
    "earlier",
    "now",
    "once",
    "first",
    "sometimes",
    "usually",
    "often",
    "on",
    "at",
    "in",
    "morning",
    "afternoon",
    "evening",
    "night",
    "week",
    "weekend",
    "month",
    "year",
    "ago",
    "oh",
    "hi",
    "hey",
    "and",
    "but",
    "after",
    "before",
    "when",
    "while",
    "since",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Weekdays: a member named only by weekdays ("Friday and I") is no member.
const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// A token of text: a word (letters, digits, apostrophes, hyphens) or a mark.
#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Mark(char),
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let in_word = c.is_alphanumeric() || c == '\'' || c == '\u{2019}' || c == '-';
        match (in_word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Token::Word(&text[s..i]));
                start = None;
            }
            _ => {}
        }
        if !in_word && !c.is_whitespace() {
            out.push(Token::Mark(c));
        }
        if out.len() >= MAX_WORDS {
            return out;
        }
    }
    if let Some(s) = start {
        out.push(Token::Word(&text[s..]));
    }
    out.truncate(MAX_WORDS);
    out
}

fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

fn lower(word: &str) -> String {
    word.to_lowercase()
}

/// Reads one member backwards from `end` (exclusive): a capitalised name
/// (one or more words), optionally after "my RELATION"; or an unnamed
/// "my RELATION". Returns the member and the index where it starts.
fn member_before(t: &[Token<'_>], end: usize, policy: Policy) -> Option<(Option<String>, usize)> {
    let mut i = end;
    let mut name: Vec<&str> = Vec::new();
    while i > 0 {
        match t[i - 1] {
            Token::Word(w) if is_name_word(t, i - 1, w, policy) => {
                name.push(w);
                i -= 1;
            }
            _ => break,
        }
    }
    name.reverse();
    if policy.has_v3_rules() && !name.is_empty() {
        // A weekday before a name is when, not who: "On Friday Jordan and
        // I" names the same group as "Jordan and I". "Friday and I" names
        // nobody.
        let days = name
            .iter()
            .take_while(|w| WEEKDAYS.contains(&lower(w).as_str()))
            .count();
        if days == name.len() {
            return None;
        }
        name.drain(..days);
    }
    // "my partner Jordan" / "my wife": a relation word after "my".
    let relation_at = |k: usize| {
        k >= 2
            && matches!(t[k - 1], Token::Word(w) if RELATIONS.contains(&lower(w).as_str()))
            && matches!(t[k - 2], Token::Word(w) if lower(w) == "my")
    };
    if relation_at(i) {
        let start = i - 2;
        let name = (!name.is_empty()).then(|| name.join(" "));
        return Some((name, start));
    }
    if name.is_empty() {
        return None;
    }
    Some((Some(name.join(" ")), i))
}

/// Whether the word `w` at `k` may be part of a member's name: capitalised,
/// not I or my, not a sentence word, and (under `kith_ingest_v3`) not an
/// opener.
fn is_name_word(t: &[Token<'_>], k: usize, w: &str, policy: Policy) -> bool {
    let opener = policy.has_v3_rules() && is_opener_before_name(t, k);
    is_capitalised(w)
        && !matches!(lower(w).as_str(), "i" | "my")
        && !NOT_NAMES.contains(&lower(w).as_str())
        && !opener
}

/// Whether the word at `k` is an opener that ends a name read backwards:
/// an [`OPENERS`] word other than a weekday (weekdays are read, then
/// dropped from the front of the name by [`member_before`]).
fn is_opener_before_name(t: &[Token<'_>], k: usize) -> bool {
    matches!(t[k], Token::Word(w) if OPENERS.contains(&lower(w).as_str())
        && !WEEKDAYS.contains(&lower(w).as_str()))
}

/// True when a member list starting at `start` starts a clause: the text's
/// start, after a mark, or after a sentence-joining word; under
/// `kith_ingest_v3`, also after any run of [`OPENERS`] that itself starts
/// a clause.
fn starts_clause(t: &[Token<'_>], start: usize, policy: Policy) -> bool {
    if policy.has_v3_rules() {
        let mut k = start;
        while k > 0 {
            match t[k - 1] {
                Token::Word(w) if OPENERS.contains(&lower(w).as_str()) => k -= 1,
                Token::Word(_) => return false,
                Token::Mark(_) => return true,
            }
        }
        return true;
    }
    match start.checked_sub(1).map(|k| &t[k]) {
        None => true,
        Some(Token::Mark(_)) => true,
        Some(Token::Word(w)) => matches!(
            lower(w).as_str(),
            "so" | "then" | "but" | "yesterday" | "today"
        ),
    }
}

/// The groups `text` names with its author, under the current policy.
pub fn groups_named(text: &str) -> Vec<Group> {
    groups_named_under(text, Policy::CURRENT)
}

/// The groups `text` names with its author, under `policy`'s reading.
pub fn groups_named_under(text: &str, policy: Policy) -> Vec<Group> {
    let t = tokens(text);
    let mut groups = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        // "<members> and I"
        if matches!(tok, Token::Word(w) if *w == "I")
            && i >= 1
            && matches!(t[i - 1], Token::Word(w) if lower(w) == "and")
        {
            let mut members = Vec::new();
            let mut end = i - 1;
            let mut start = end;
            while let Some((member, s)) = member_before(&t, end, policy) {
                members.push(member);
                start = s;
                // Another member before a comma ("Jordan, Sam and I").
                if s >= 1 && matches!(t[s - 1], Token::Mark(',')) {
                    end = s - 1;
                } else {
                    break;
                }
            }
            if !members.is_empty()
                && starts_clause(&t, start, policy)
                && members.len() <= MAX_MEMBERS
            {
                members.reverse();
                groups.push(members);
            }
        }
        // "me and <member>"
        if matches!(tok, Token::Word(w) if lower(w) == "me")
            && matches!(t.get(i + 1), Some(Token::Word(w)) if lower(w) == "and")
        {
            let mut j = i + 2;
            let mut name = Vec::new();
            let unnamed = matches!(t.get(j), Some(Token::Word(w)) if lower(w) == "my")
                && matches!(t.get(j + 1), Some(Token::Word(w)) if RELATIONS.contains(&lower(w).as_str()));
            if unnamed {
                j += 2;
            }
            while let Some(Token::Word(w)) = t.get(j) {
                if !is_capitalised(w) {
                    break;
                }
                name.push(*w);
                j += 1;
            }
            if !name.is_empty() {
                groups.push(vec![Some(name.join(" "))]);
            } else if unnamed {
                groups.push(vec![None]);
            }
        }
    }
    groups
}

/// The decision for a we-claim's other members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Members {
    /// Exactly one group, every member named: link each, recording the turn
    /// (its index in the input) that named the group last.
    Named(Vec<(String, usize)>),
    /// No group, several groups, or a member without a name: the owner only.
    OwnerOnly,
}

/// Reads the session's turns (oldest first, the claim's turn last) and
/// decides whom "we" includes besides the owner, under the current policy.
pub fn group_members(turns: &[&str]) -> Members {
    group_members_under(turns, Policy::CURRENT)
}

/// [`group_members`] under `policy`'s reading.
pub fn group_members_under(turns: &[&str], policy: Policy) -> Members {
    let mut distinct: Vec<(Vec<String>, Group, usize)> = Vec::new();
    for (index, text) in turns.iter().enumerate() {
        for group in groups_named_under(text, policy) {
            let mut key: Vec<String> = group
                .iter()
                .map(|m| m.as_deref().map_or("?".to_string(), lower))
                .collect();
            key.sort();
            match distinct.iter_mut().find(|(k, _, _)| *k == key) {
                Some(entry) => entry.2 = index,
                None => distinct.push((key, group, index)),
            }
        }
    }
    match distinct.as_slice() {
        [(_, group, index)] if group.iter().all(Option::is_some) => Members::Named(
            group
                .iter()
                .flatten()
                .map(|name| (name.clone(), *index))
                .collect(),
        ),
        _ => Members::OwnerOnly,
    }
}

/// The names a member is looked up by, in order: the full name, then the
/// rest after a weekday, month or title ("Sunday Jordan", then "Jordan").
pub fn lookup_names(name: &str) -> Vec<&str> {
    let mut names = vec![name.trim()];
    names.extend(without_prefix(name));
    names
}

/// Which members a we-claim is linked to, given what the engine found for
/// each named member (in order; `None`: no single person entity has the
/// name). Under `kith_ingest_v3` all or nothing: one member without an
/// entity links nobody but the owner (spec ¶6). `kith_ingest_v2` linked
/// the members it found.
pub fn link_members<T>(found: Vec<Option<T>>, policy: Policy) -> Vec<T> {
    if policy.has_v3_rules() && found.iter().any(Option::is_none) {
        return Vec::new();
    }
    found.into_iter().flatten().collect()
}

/// The name to look a member up by after a weekday, month or title
/// ("Sunday Jordan" → "Jordan"), if the name starts with one.
pub fn without_prefix(name: &str) -> Option<&str> {
    let (first, rest) = name.split_once(' ')?;
    NAME_PREFIXES
        .contains(&first.trim_end_matches('.').to_lowercase().as_str())
        .then_some(rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(members: &[Option<&str>]) -> Group {
        members.iter().map(|m| m.map(String::from)).collect()
    }

    fn names(text: &str) -> Vec<Group> {
        groups_named(text)
    }

    #[test]
    fn groups_in_text() {
        assert_eq!(
            names("Jordan and I went hiking."),
            vec![g(&[Some("Jordan")])]
        );
        assert_eq!(
            names("My partner Jordan and I cooked."),
            vec![g(&[Some("Jordan")])]
        );
        assert_eq!(
            names("Jordan, Sam and I went out."),
            vec![g(&[Some("Jordan"), Some("Sam")])]
        );
        assert_eq!(names("It was me and Jordan."), vec![g(&[Some("Jordan")])]);
        assert_eq!(
            names("Yesterday, Jordan Lee and I met."),
            vec![g(&[Some("Jordan Lee")])]
        );
        assert_eq!(names("my wife and I moved."), vec![g(&[None])]);
        // "and I" after a member that does not start a clause names nobody.
        assert!(names("I got the offer from Brightpath and I accepted it.").is_empty());
        assert!(names("We went camping.").is_empty());
        // More than 16 members is no group.
        let many: Vec<String> = (0..17).map(|i| format!("Name{i}")).collect();
        assert!(names(&format!("{} and I left.", many.join(", "))).is_empty());
    }

    #[test]
    fn one_group_in_the_session_names_the_members() {
        let turns = ["Jordan and I went hiking.", "We decided to sell the car."];
        assert_eq!(
            group_members(&turns),
            Members::Named(vec![("Jordan".into(), 0)])
        );
        // The same group named again: the latest turn is recorded.
        let turns = [
            "Jordan and I hiked.",
            "me and Jordan cooked.",
            "We liked it.",
        ];
        assert_eq!(
            group_members(&turns),
            Members::Named(vec![("Jordan".into(), 1)])
        );
        // Two different groups, an unnamed member, or none: the owner only.
        assert_eq!(
            group_members(&["Jordan and I hiked.", "Sam and I cooked.", "We won."]),
            Members::OwnerOnly
        );
        assert_eq!(
            group_members(&["my wife and I hiked.", "We won."]),
            Members::OwnerOnly
        );
        assert_eq!(group_members(&["We won."]), Members::OwnerOnly);
    }

    #[test]
    fn only_the_first_words_of_a_turn_are_read() {
        let filler = "word ".repeat(MAX_WORDS);
        assert!(names(&format!("{filler}. Jordan and I left.")).is_empty());
        let near = "word ".repeat(MAX_WORDS - 10);
        assert_eq!(
            names(&format!("{near}. Jordan and I left.")),
            vec![g(&[Some("Jordan")])]
        );
    }

    /// Issue 13 item 4: openers neither hide a group nor make one.
    #[test]
    fn sentence_openers_before_a_group() {
        for text in [
            "Later Jordan and I went hiking.",
            "Then Jordan and I went hiking.",
            "Tonight Jordan and I are cooking.",
            "Finally Jordan and I agreed.",
            "Yesterday Jordan and I met.",
            "On Monday Jordan and I met.",
            "Later that evening Jordan and I talked.",
            "We ate, then Jordan and I left.",
        ] {
            let got = groups_named(text);
            assert_eq!(got.len(), 1, "{text}: {got:?}");
            let name = got[0][0].clone().unwrap();
            assert_eq!(lookup_names(&name).last(), Some(&"Jordan"), "{text}");
        }
        // A weekday before a name is when, not who; alone it is no member.
        assert_eq!(
            names("Sunday Jordan and I met."),
            vec![g(&[Some("Jordan")])]
        );
        assert_eq!(
            groups_named_under("Sunday Jordan and I met.", Policy::V2),
            vec![g(&[Some("Sunday Jordan")])]
        );
        assert_eq!(
            group_members(&[
                "Jordan and I hiked.",
                "On Friday Jordan and I cooked.",
                "We won."
            ]),
            Members::Named(vec![("Jordan".into(), 1)])
        );
        // kith_ingest_v2 made a second group of it: the owner only.
        assert_eq!(
            group_members_under(
                &[
                    "Jordan and I hiked.",
                    "On Friday Jordan and I cooked.",
                    "We won."
                ],
                Policy::V2
            ),
            Members::OwnerOnly
        );
        assert!(names("Friday and I are not friends.").is_empty());
        assert!(names("Finally I left.").is_empty());
        assert!(names("I told Jordan on Monday and I left.").is_empty());
        assert!(names("I went with Jordan and I had tea.").is_empty());
        // kith_ingest_v2 read "Later Jordan and I" as no group.
        assert!(groups_named_under("Later Jordan and I went hiking.", Policy::V2).is_empty());
    }

    #[test]
    fn links_are_all_or_nothing() {
        assert_eq!(link_members(vec![Some(1), Some(2)], Policy::V3), vec![1, 2]);
        assert!(link_members(vec![Some(1), None], Policy::V3).is_empty());
        assert_eq!(link_members(vec![Some(1), None], Policy::V2), vec![1]);
        assert!(link_members::<u8>(vec![], Policy::V3).is_empty());
    }

    #[test]
    fn prefixes() {
        assert_eq!(without_prefix("Sunday Jordan"), Some("Jordan"));
        assert_eq!(without_prefix("Coach Taylor"), Some("Taylor"));
        assert_eq!(without_prefix("Jordan Lee"), None);
    }
}
