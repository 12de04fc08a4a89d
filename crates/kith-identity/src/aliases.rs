//! Which two entity names may be one entity, and when a pair the owner
//! split again may be merged: the organizer's name and decision rules as
//! pure functions.
//!
//! The engine (`kith::organize`) reads the nodes and the journal, asks
//! these functions, and writes what they decide. Nothing here reads the
//! store or the clock.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Score of a known abbreviation (`JS` ↔ `JavaScript`).
pub const ABBREVIATION_SCORE: f64 = 0.95;
/// Score of a case variant or an equal normalised name.
pub const NAME_VARIANT_SCORE: f64 = 0.90;
/// Score of a one-word person name that is the first word of another
/// person's full name (`Jordan` ↔ `Jordan Lee`): enough to propose, never
/// enough to merge (two people can share a first name).
pub const GIVEN_NAME_SCORE: f64 = 0.85;
/// Score of a short form of a person's first name (`Mel` ↔ `Melanie`,
/// `Caro` ↔ `Caroline`): enough to propose, never enough to merge (a short
/// word may be a short form of anyone's name, or no name at all).
pub const SHORT_FORM_SCORE: f64 = 0.85;

/// An owner's decision on an alias proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The two entities are the same: publish a verified alias edge.
    Accept,
    /// They are not: publish nothing, never propose the pair again.
    Reject,
}

impl Decision {
    /// `accept` or `reject`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Decision::Accept => "accepted",
            Decision::Reject => "rejected",
        })
    }
}

/// How two entity names match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameMatch {
    /// One is a known abbreviation of the other, or both abbreviate the
    /// same name.
    Abbreviation,
    /// Equal once lower-cased.
    CaseVariant,
    /// Equal once lower-cased with everything but letters and digits
    /// removed (`CI/CD` and `CICD`).
    NormalisedName,
    /// Two person names, one a single word that is the first word of the
    /// other (`Jordan` and `Jordan Lee`). Evidence for a proposal only.
    GivenName,
    /// A one-word name that begins a person's first name (`Mel` and
    /// `Melanie`; [`is_short_form_of`]). Evidence for a proposal only.
    ShortForm,
}

impl NameMatch {
    /// The score this kind of name match carries.
    pub fn score(self) -> f64 {
        match self {
            NameMatch::Abbreviation => ABBREVIATION_SCORE,
            NameMatch::CaseVariant | NameMatch::NormalisedName => NAME_VARIANT_SCORE,
            NameMatch::GivenName => GIVEN_NAME_SCORE,
            NameMatch::ShortForm => SHORT_FORM_SCORE,
        }
    }

    /// Whether this kind of match may authorise a merge (at a score that
    /// reaches the threshold). A given name never does, whatever the
    /// threshold: "Jordan" may be another Jordan.
    pub fn may_merge(self) -> bool {
        !matches!(self, NameMatch::GivenName | NameMatch::ShortForm)
    }

    /// The stable text form (`abbreviation`, `case_variant`, …), the merge
    /// record's `basis`.
    pub fn as_str(self) -> &'static str {
        match self {
            NameMatch::Abbreviation => "abbreviation",
            NameMatch::CaseVariant => "case_variant",
            NameMatch::NormalisedName => "normalised_name",
            NameMatch::GivenName => "given_name",
            NameMatch::ShortForm => "short_form",
        }
    }
}

/// Known abbreviations: each short form and the one name it stands for
/// (normalised: lower case, single spaces). A short form may list several
/// spellings.
const ABBREVIATIONS: &[(&[&str], &str)] = &[
    (&["js", "ecmascript"], "javascript"),
    (&["ts"], "typescript"),
    (&["py"], "python"),
    (&["ml"], "machine learning"),
    (&["ai"], "artificial intelligence"),
    (&["nlp"], "natural language processing"),
    (&["api"], "application programming interface"),
    (&["ci"], "continuous integration"),
    (&["cd"], "continuous delivery"),
    (
        &["ci/cd", "cicd"],
        "continuous integration and continuous delivery",
    ),
    (&["db"], "database"),
    (&["postgres", "pg"], "postgresql"),
    (&["mongo"], "mongodb"),
    (&["k8s"], "kubernetes"),
    (&["aws"], "amazon web services"),
    (&["gcp"], "google cloud platform"),
    (&["azure"], "microsoft azure"),
    (&["os"], "operating system"),
    (&["ui"], "user interface"),
    (&["ux"], "user experience"),
    (&["rest"], "representational state transfer"),
    (&["gql"], "graphql"),
    (&["html"], "hypertext markup language"),
    (&["css"], "cascading style sheets"),
    (&["sql"], "structured query language"),
];

/// The entity name key: trimmed and lower-cased (the same key ingestion
/// uses for named-entity ids).
pub fn name_key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// Lower case with runs of whitespace as one space.
fn spaced(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Lower case, letters and digits only.
fn normalised(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The full name a known abbreviation (or the full name itself) stands for.
fn expansion(name: &str) -> Option<&'static str> {
    let s = spaced(name);
    ABBREVIATIONS
        .iter()
        .find(|(short, long)| short.contains(&s.as_str()) || *long == s)
        .map(|(_, long)| *long)
}

/// The key alias candidates are grouped by: the expansion of a known
/// abbreviation, else the normalised name.
pub fn alias_key(name: &str) -> String {
    match expansion(name) {
        Some(long) => normalised(long),
        None => normalised(name),
    }
}

/// The key person names are grouped by for given-name candidates: the
/// first word, normalised (`Jordan Lee` and `Jordan` share `jordan`).
pub fn given_name_key(name: &str) -> String {
    name.split_whitespace()
        .next()
        .map(normalised)
        .unwrap_or_default()
}

/// How two names match, if they do. `person` says both entities are
/// typed person (only then can a given name match).
pub fn name_match(a: &str, b: &str, person: bool) -> Option<NameMatch> {
    if name_key(a) == name_key(b) {
        return Some(NameMatch::CaseVariant);
    }
    if let (Some(x), Some(y)) = (expansion(a), expansion(b)) {
        if x == y {
            return Some(NameMatch::Abbreviation);
        }
    }
    let (x, y) = (normalised(a), normalised(b));
    if !x.is_empty() && x == y {
        return Some(NameMatch::NormalisedName);
    }
    if person && (is_given_name_of(a, b) || is_given_name_of(b, a)) {
        return Some(NameMatch::GivenName);
    }
    None
}

/// Whether `short` is one word and the first of `full`'s two or more
/// words (letters and digits compared, case ignored).
pub fn is_given_name_of(short: &str, full: &str) -> bool {
    let short_words: Vec<&str> = short.split_whitespace().collect();
    let full_words: Vec<&str> = full.split_whitespace().collect();
    short_words.len() == 1
        && full_words.len() >= 2
        && !normalised(short_words[0]).is_empty()
        && normalised(short_words[0]) == normalised(full_words[0])
}

/// Whether `short` is a short form of the first name of `full`: one word
/// of three or more letters, shorter than `full`'s first word and its
/// beginning (letters and digits compared, case ignored): `Mel` of
/// `Melanie`, `Caro` of `Caroline`, `Jo` of nobody (too short to tell).
pub fn is_short_form_of(short: &str, full: &str) -> bool {
    let short_words: Vec<&str> = short.split_whitespace().collect();
    let Some(first) = full.split_whitespace().next() else {
        return false;
    };
    let (s, f) = (normalised(short), normalised(first));
    short_words.len() == 1
        && s.chars().count() >= 3
        && s.chars().all(char::is_alphabetic)
        && f.chars().count() > s.chars().count()
        && f.starts_with(&s)
}

/// The key short forms meet their full names by: the first three letters
/// of the first word, normalised (`Mel` and `Melanie` share `mel`).
pub fn short_form_key(name: &str) -> String {
    name.split_whitespace()
        .next()
        .map(|w| normalised(w).chars().take(3).collect())
        .unwrap_or_default()
}

/// Which kind of pair admission is judging: the two kinds differ in what
/// provenance they require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    /// Two copies of one node: every field must agree, provenance too.
    Duplicate,
    /// Two names of one entity (a merge on name evidence, or a proposal).
    Alias,
}

/// Whether a pair of `kind` must agree on session and event time.
///
/// Duplicates must (spec ¶14: an exact copy is the same observation, and
/// two observations in different sessions are two episodes). Aliases need
/// not: an entity node's session and event time are those of its first
/// mention, so two names of one entity are almost always first mentioned
/// in different sessions; requiring equality refused exactly the aliases
/// name evidence supports ("JS" on Monday, "JavaScript" on Tuesday). A
/// semantic alias only ever proposes (an unverified edge; nothing
/// retires), so dropping the requirement for it writes nothing but a
/// reviewable link. Every other field (owner, scope, type, source,
/// epistemic type, validity end, retention, pinning, metadata with the
/// entity type) still has to agree for both kinds.
pub fn requires_same_provenance(kind: PairKind) -> bool {
    kind == PairKind::Duplicate
}

/// An undone merge of a pair, as its journal records it: the owner's
/// "not the same" decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoneMerge {
    /// The `UNDO` record.
    pub undo_op: Uuid,
    /// The two names when the pair was merged (the merge record's `before`
    /// values, in pair order).
    pub names: (String, String),
    /// The pair's live alias review when the undo was recorded (`None`:
    /// none, or a record older than this field).
    pub review_at_undo: Option<Uuid>,
}

/// The pair's live alias review now, if there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveReview {
    /// The review record.
    pub op: Uuid,
    /// Whether it accepted the pair as one entity.
    pub accepted: bool,
}

/// What the journal says about merging a pair again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeGate {
    /// Nothing stands in the way.
    Open,
    /// The owner undid a merge of this pair: not the same, until an
    /// explicit accept or new name evidence.
    Blocked {
        /// The undo that decided it.
        undo_op: Uuid,
    },
    /// A pair once undone may merge again, and why.
    Reopened {
        /// `accepted` (an accept recorded after the undo) or
        /// `new_name_evidence` (a name changed since).
        why: &'static str,
    },
}

/// Whether the pair may merge again, given its latest undone merge (if
/// any), its live review, and its names now (pair order).
///
/// An undo is a decision like a rejection: the organizer never merges the
/// pair again on the evidence it already had. Two things override it: an
/// accept recorded after the undo (a review other than the one live when
/// the undo was written), or a name that changed since the merge (new
/// name evidence, which admission then judges afresh).
pub fn merge_gate(
    undone: Option<&UndoneMerge>,
    review: Option<LiveReview>,
    names_now: (&str, &str),
) -> MergeGate {
    let Some(undone) = undone else {
        return MergeGate::Open;
    };
    if let Some(r) = review {
        if r.accepted && Some(r.op) != undone.review_at_undo {
            return MergeGate::Reopened { why: "accepted" };
        }
    }
    if name_key(names_now.0) != name_key(&undone.names.0)
        || name_key(names_now.1) != name_key(&undone.names.1)
    {
        return MergeGate::Reopened {
            why: "new_name_evidence",
        };
    }
    MergeGate::Blocked {
        undo_op: undone.undo_op,
    }
}

/// Who made an external assessment of an alias proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssessorKind {
    /// A person.
    Reviewer,
    /// A model (an LLM judging the pair).
    Model,
}

/// The assessor: its kind and an id (a reviewer's name, a model's id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assessor {
    /// A person or a model.
    pub kind: AssessorKind,
    /// Who: `maya`, `gpt-4o-mini-2024-07-18`, ….
    pub id: String,
}

/// An assessor's verdict on whether two entities are one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The same entity.
    Same,
    /// Two entities.
    Different,
    /// Cannot tell.
    Unsure,
}

/// A complete external assessment a version-2 alias proposal carries: who
/// judged, the verdict, and the reasons. It is evidence for the owner's
/// review, never a decision: the proposal stays unverified until reviewed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assessment {
    /// Who judged.
    pub assessor: Assessor,
    /// What they concluded.
    pub verdict: Verdict,
    /// Why, one reason per entry (at least one).
    pub reasons: Vec<String>,
}

/// Reasons an assessment may carry at most.
pub const MAX_REASONS: usize = 16;
/// Characters per reason (and per assessor id) at most.
pub const MAX_REASON_CHARS: usize = 2000;

/// Why an assessment is not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssessmentProblem {
    /// The assessor id is empty.
    NoAssessorId,
    /// No reasons were given.
    NoReasons,
    /// Reason `index` is empty.
    EmptyReason(usize),
    /// Too many reasons, or one too long (what, limit).
    TooLong(&'static str, usize),
}

impl std::fmt::Display for AssessmentProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssessmentProblem::NoAssessorId => f.write_str(
                "assessment.assessor.id is empty; name who judged (a reviewer or a model id)",
            ),
            AssessmentProblem::NoReasons => {
                f.write_str("assessment.reasons is empty; an assessment gives at least one reason")
            }
            AssessmentProblem::EmptyReason(i) => write!(f, "assessment.reasons[{i}] is empty"),
            AssessmentProblem::TooLong(what, limit) => {
                write!(f, "assessment {what} exceeds its limit of {limit}")
            }
        }
    }
}

impl Assessment {
    /// Checks the assessment is complete: an assessor id, one to
    /// [`MAX_REASONS`] non-empty reasons, nothing longer than
    /// [`MAX_REASON_CHARS`].
    pub fn check(&self) -> Result<(), AssessmentProblem> {
        if self.assessor.id.trim().is_empty() {
            return Err(AssessmentProblem::NoAssessorId);
        }
        if self.assessor.id.chars().count() > MAX_REASON_CHARS {
            return Err(AssessmentProblem::TooLong("assessor id", MAX_REASON_CHARS));
        }
        if self.reasons.is_empty() {
            return Err(AssessmentProblem::NoReasons);
        }
        if self.reasons.len() > MAX_REASONS {
            return Err(AssessmentProblem::TooLong("reason count", MAX_REASONS));
        }
        for (i, r) in self.reasons.iter().enumerate() {
            if r.trim().is_empty() {
                return Err(AssessmentProblem::EmptyReason(i));
            }
            if r.chars().count() > MAX_REASON_CHARS {
                return Err(AssessmentProblem::TooLong("reason", MAX_REASON_CHARS));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_by_abbreviation_case_normalised_form_and_given_name() {
        let table: &[(&str, &str, bool, Option<NameMatch>)] = &[
            ("JS", "JavaScript", false, Some(NameMatch::Abbreviation)),
            ("ECMAScript", "js", false, Some(NameMatch::Abbreviation)),
            ("pg", "PostgreSQL", false, Some(NameMatch::Abbreviation)),
            ("Aster ", "aster", false, Some(NameMatch::CaseVariant)),
            ("CI/CD", "CICD", false, Some(NameMatch::Abbreviation)),
            ("Open-AI", "OpenAI", false, Some(NameMatch::NormalisedName)),
            ("Jordan", "Jordan Lee", true, Some(NameMatch::GivenName)),
            ("Jordan Lee", "jordan", true, Some(NameMatch::GivenName)),
            // Not people: a first word is no evidence.
            ("Jordan", "Jordan Lee", false, None),
            ("Jordan Lee", "Jordan Smith", true, None),
            ("Lee", "Jordan Lee", true, None),
            ("SR-2023-052", "SR-2023-053", false, None),
            ("Amendment 16", "Amendment 17", false, None),
            ("Alice", "Alicia", true, None),
            ("JS", "TS", false, None),
            ("!!", "??", false, None),
        ];
        for (a, b, person, want) in table {
            assert_eq!(name_match(a, b, *person), *want, "{a:?} ~ {b:?}");
        }
        assert!(!NameMatch::GivenName.may_merge());
        assert!(NameMatch::Abbreviation.may_merge());
    }

    #[test]
    fn alias_keys_group_abbreviations_with_their_names() {
        assert_eq!(alias_key("K8s"), alias_key("Kubernetes"));
        assert_eq!(alias_key("Postgres"), alias_key("pg"));
        assert_ne!(alias_key("SR-2023-052"), alias_key("SR-2023-053"));
        assert_eq!(given_name_key("Jordan Lee"), given_name_key("jordan"));
    }

    #[test]
    fn an_assessment_needs_an_assessor_and_reasons() {
        let ok = Assessment {
            assessor: Assessor {
                kind: AssessorKind::Model,
                id: "judge-1".into(),
            },
            verdict: Verdict::Same,
            reasons: vec!["same employer and city".into()],
        };
        assert_eq!(ok.check(), Ok(()));
        let cases: &[(Assessment, AssessmentProblem)] = &[
            (
                Assessment {
                    assessor: Assessor {
                        kind: AssessorKind::Reviewer,
                        id: " ".into(),
                    },
                    ..ok.clone()
                },
                AssessmentProblem::NoAssessorId,
            ),
            (
                Assessment {
                    reasons: vec![],
                    ..ok.clone()
                },
                AssessmentProblem::NoReasons,
            ),
            (
                Assessment {
                    reasons: vec!["a".into(), "".into()],
                    ..ok.clone()
                },
                AssessmentProblem::EmptyReason(1),
            ),
        ];
        for (a, want) in cases {
            assert_eq!(a.check().as_ref(), Err(want));
        }
    }

    #[test]
    fn only_duplicates_require_the_same_session_and_event_time() {
        assert!(requires_same_provenance(PairKind::Duplicate));
        assert!(!requires_same_provenance(PairKind::Alias));
    }

    #[test]
    fn an_undo_blocks_until_a_later_accept_or_a_changed_name() {
        let undo = Uuid::from_u128(1);
        let old_review = Uuid::from_u128(2);
        let new_review = Uuid::from_u128(3);
        let undone = UndoneMerge {
            undo_op: undo,
            names: ("JS".into(), "JavaScript".into()),
            review_at_undo: Some(old_review),
        };
        let blocked = MergeGate::Blocked { undo_op: undo };
        let cases: &[(Option<LiveReview>, (&str, &str), MergeGate)] = &[
            (None, ("JS", "JavaScript"), blocked.clone()),
            // Case alone is not new evidence.
            (None, ("js", "javascript "), blocked.clone()),
            // The accept that was live before the undo does not count.
            (
                Some(LiveReview {
                    op: old_review,
                    accepted: true,
                }),
                ("JS", "JavaScript"),
                blocked.clone(),
            ),
            // A rejection never reopens.
            (
                Some(LiveReview {
                    op: new_review,
                    accepted: false,
                }),
                ("JS", "JavaScript"),
                blocked.clone(),
            ),
            (
                Some(LiveReview {
                    op: new_review,
                    accepted: true,
                }),
                ("JS", "JavaScript"),
                MergeGate::Reopened { why: "accepted" },
            ),
            (
                None,
                ("ECMAScript", "JavaScript"),
                MergeGate::Reopened {
                    why: "new_name_evidence",
                },
            ),
        ];
        for (review, names, want) in cases {
            assert_eq!(&merge_gate(Some(&undone), *review, *names), want);
        }
        assert_eq!(merge_gate(None, None, ("a", "b")), MergeGate::Open);
    }

    #[test]
    fn short_forms_of_a_first_name() {
        for (short, full) in [
            ("Mel", "Melanie"),
            ("Caro", "Caroline"),
            ("mel", "Melanie Smith"),
        ] {
            assert!(is_short_form_of(short, full), "{short} {full}");
            assert_eq!(short_form_key(short), short_form_key(full));
        }
        for (short, full) in [
            ("Jo", "Joanna"),
            ("Mell", "Melanie"),
            ("Melanie", "Melanie"),
            ("Mel Gibson", "Melanie"),
            ("M3l", "M3lanie"),
            ("Melanie", "Mel"),
        ] {
            assert!(!is_short_form_of(short, full), "{short} {full}");
        }
        assert_eq!(NameMatch::ShortForm.score(), SHORT_FORM_SCORE);
        assert!(!NameMatch::ShortForm.may_merge());
    }
}
