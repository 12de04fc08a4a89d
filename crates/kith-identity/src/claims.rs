//! When a new claim repeats an existing one, and when it replaces one.
//!
//! Both compare claims of the same subject entity, owner and scope (the
//! caller gathers those). Matching is case-insensitive with whitespace
//! collapsed; predicates also read spaces and hyphens as `_`.
//!
//! - **Repeat** (merge): same node type, same epistemic type (observed or
//!   asserted only), same source type, same predicate, same object, same
//!   polarity, and neither carries a condition.
//! - **Replacement** (supersedence), for a new claim marked as an update:
//!   the old claim is positive, observed or asserted, of the same node type
//!   and source type, and of the same predicate class (`works_at` ≡
//!   `employed_by` ≡ `employed_at` ≡ `joined`; `lives_in` ≡ `resides_in` ≡
//!   `located_in` ≡ `moved_to`; `role` ≡ `position` ≡ `title`; `uses` ≡
//!   `switched_to`). A negative update replaces the claim whose object
//!   matches its own object; a positive update needs `replaces_object` and
//!   replaces the claim whose object matches it. Objects match when equal, or
//!   when the shorter is a 1–3-word whole-word phrase (words of 3+ letters)
//!   inside a longer object of at most 4 words. An older claim never replaces
//!   a newer one, and conditional claims are never involved.

use kith_core::{EpistemicType, NodeType, SourceType};

/// The parts of a claim the rules compare.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimView<'a> {
    /// Fact, preference, decision.
    pub node_type: NodeType,
    /// How it is known.
    pub epistemic: EpistemicType,
    /// Where it came from.
    pub source_type: SourceType,
    /// The predicate as written.
    pub predicate: &'a str,
    /// The object as written.
    pub object: &'a str,
    /// True when positive.
    pub positive: bool,
    /// True when it carries a condition.
    pub conditional: bool,
    /// Effective time in ms (event time, else ingestion).
    pub valid_from_ms: i64,
}

/// One definition, shared with the stores' `subject_claims`.
pub use kith_core::text::{normalize_predicate, normalize_text};

/// Predicates that mean the same thing for supersedence; the first names
/// the class.
const CLASSES: &[&[&str]] = &[
    &[
        "works_at",
        "employed_by",
        "employed_at",
        "joined",
        "works_for",
    ],
    &["lives_in", "resides_in", "located_in", "moved_to"],
    &["role", "position", "title"],
    &["uses", "switched_to"],
];

/// The predicate's class for supersedence.
pub fn predicate_class(predicate: &str) -> String {
    let p = normalize_predicate(predicate);
    CLASSES
        .iter()
        .find(|class| class.contains(&p.as_str()))
        .map_or(p, |class| class[0].to_string())
}

/// Every normalised predicate a claim with `predicate` can repeat or
/// replace: itself and the members of its class.
pub fn related_predicates(predicate: &str) -> Vec<String> {
    let p = normalize_predicate(predicate);
    match CLASSES.iter().find(|class| class.contains(&p.as_str())) {
        Some(class) => class.iter().map(|m| m.to_string()).collect(),
        None => vec![p],
    }
}

/// Only a plain fact (observed or asserted) repeats or supersedes another:
/// the same set of types that reads as a fact where claims are listed.
fn stable(e: EpistemicType) -> bool {
    e.is_plain_fact()
}

/// True when `new` says again what `old` says.
pub fn is_repeat(new: &ClaimView<'_>, old: &ClaimView<'_>) -> bool {
    stable(new.epistemic)
        && new.epistemic == old.epistemic
        && new.node_type == old.node_type
        && new.source_type == old.source_type
        && !new.conditional
        && !old.conditional
        && new.positive == old.positive
        && normalize_predicate(new.predicate) == normalize_predicate(old.predicate)
        && normalize_text(new.object) == normalize_text(old.object)
}

/// True when `new`, an update replacing `replaces_object` (if any), retires `old`.
pub fn replaces(new: &ClaimView<'_>, replaces_object: Option<&str>, old: &ClaimView<'_>) -> bool {
    if !old.positive
        || !stable(old.epistemic)
        || new.conditional
        || old.conditional
        || new.node_type != old.node_type
        || new.source_type != old.source_type
        || old.valid_from_ms > new.valid_from_ms
        || predicate_class(new.predicate) != predicate_class(old.predicate)
    {
        return false;
    }
    let target = if new.positive {
        match replaces_object {
            Some(r) if !r.trim().is_empty() => r,
            _ => return false,
        }
    } else {
        new.object
    };
    objects_match(target, old.object)
}

/// Equal, or the shorter a short whole-word phrase inside a short longer one.
pub fn objects_match(a: &str, b: &str) -> bool {
    let (a, b) = (normalize_text(a), normalize_text(b));
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let short_words: Vec<&str> = short.split(' ').collect();
    let long_words: Vec<&str> = long.split(' ').collect();
    let alphabetic = |w: &&str| w.chars().all(char::is_alphabetic);
    (1..=3).contains(&short_words.len())
        && short_words.iter().all(|w| w.chars().count() >= 3)
        && long_words.len() <= 4
        && long_words.iter().all(alphabetic)
        && long_words
            .windows(short_words.len())
            .any(|w| w == short_words.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim<'a>(predicate: &'a str, object: &'a str, positive: bool, t: i64) -> ClaimView<'a> {
        ClaimView {
            node_type: NodeType::Fact,
            epistemic: EpistemicType::Asserted,
            source_type: SourceType::UserStated,
            predicate,
            object,
            positive,
            conditional: false,
            valid_from_ms: t,
        }
    }

    #[test]
    fn repeats() {
        assert!(is_repeat(
            &claim("prefers", "Python", true, 2),
            &claim("Prefers", " python ", true, 1)
        ));
        assert!(!is_repeat(
            &claim("prefers", "Python", false, 2),
            &claim("prefers", "Python", true, 1)
        ));
        assert!(!is_repeat(
            &claim("prefers", "Rust", true, 2),
            &claim("prefers", "Python", true, 1)
        ));
        let mut hypothetical = claim("prefers", "Python", true, 2);
        hypothetical.epistemic = EpistemicType::Hypothetical;
        assert!(!is_repeat(
            &hypothetical,
            &claim("prefers", "Python", true, 1)
        ));
        let mut conditional = claim("prefers", "Python", true, 2);
        conditional.conditional = true;
        assert!(!is_repeat(
            &conditional,
            &claim("prefers", "Python", true, 1)
        ));
    }

    #[test]
    fn replacements() {
        let old = claim("works_at", "Northwind", true, 1);
        // "I left Northwind": a negative update of the same class.
        assert!(replaces(
            &claim("employed_by", "Northwind", false, 2),
            None,
            &old
        ));
        // A positive update needs replaces_object.
        assert!(!replaces(
            &claim("works_at", "Brightpath", true, 2),
            None,
            &old
        ));
        assert!(replaces(
            &claim("works_at", "Brightpath", true, 2),
            Some("Northwind"),
            &old
        ));
        // Other class, other object, older, conditional: nothing.
        assert!(!replaces(
            &claim("lives_in", "Northwind", false, 2),
            None,
            &old
        ));
        assert!(!replaces(
            &claim("works_at", "Southwind", false, 2),
            None,
            &old
        ));
        assert!(!replaces(
            &claim("works_at", "Northwind", false, 0),
            None,
            &old
        ));
        let mut c = claim("works_at", "Northwind", false, 2);
        c.conditional = true;
        assert!(!replaces(&c, None, &old));
    }

    #[test]
    fn predicate_classes() {
        assert_eq!(predicate_class("Employed by"), "works_at");
        assert_eq!(predicate_class("moved-to"), "lives_in");
        assert_eq!(predicate_class("likes"), "likes");
        assert!(related_predicates("joined").contains(&"works_for".to_string()));
        assert_eq!(related_predicates("Likes"), vec!["likes".to_string()]);
    }

    #[test]
    fn object_phrases() {
        assert!(objects_match("Northwind", "Northwind Analytics"));
        assert!(objects_match("green tea", "tea green green tea"));
        assert!(
            !objects_match("NW", "NW Analytics"),
            "words of 3+ letters only"
        );
        assert!(
            !objects_match("Northwind", "the big Northwind Analytics office"),
            "long object over 4 words"
        );
        assert!(!objects_match("wind", "Northwind"), "whole words only");
    }
}
