//! The enums of the specification. Each has a stable lower-case (or, for edge
//! types, upper-case) text form used in storage, JSON and the CLI.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::validate::{ValidationError, ValidationErrorKind};

/// Declares a string-backed enum with `as_str`, `Display`, `FromStr`
/// (typed error), serde in the same text form, and `ALL`.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident, $field:literal { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The accepted text forms, for error messages.
            pub const EXPECTED: &'static str = concat!($($text, " "),+);

            /// The stable text form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses the text form; `field` names the input in the error.
            pub fn parse(field: &str, text: &str) -> Result<Self, ValidationError> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(ValidationError::new(
                        field,
                        ValidationErrorKind::UnknownValue {
                            value: text.to_string(),
                            expected: Self::EXPECTED.trim_end(),
                        },
                    )),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ValidationError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse($field, s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                Self::parse($field, &text).map_err(serde::de::Error::custom)
            }
        }
    };
}

text_enum!(
    /// Who produced an event.
    Role, "role" {
        /// The memory's owner.
        User = "user",
        /// Another human in the conversation.
        Participant = "participant",
        /// The AI assistant.
        Assistant = "assistant",
        /// A tool's output.
        Tool = "tool",
        /// A system message.
        System = "system",
    }
);

text_enum!(
    /// What a node is.
    NodeType, "node_type" {
        /// A person, organisation, place, thing.
        Entity = "entity",
        /// Something that happened.
        Event = "event",
        /// A claim about the world.
        Fact = "fact",
        /// A choice that was made.
        Decision = "decision",
        /// A like or dislike.
        Preference = "preference",
        /// Something to do.
        Task = "task",
        /// A summary of other memories.
        Summary = "summary",
        /// A stored message as is (the `store()` default).
        Note = "note",
        /// A standing instruction to the agent.
        Instruction = "instruction",
    }
);

text_enum!(
    /// What an edge says about its two nodes.
    EdgeType, "edge_type" {
        /// The source mentions the target.
        Mentions = "MENTIONS",
        /// An entity has a claim.
        HasFact = "HAS_FACT",
        /// A typed relationship (metadata says which).
        RelatesTo = "RELATES_TO",
        /// The source replaces the target.
        Supersedes = "SUPERSEDES",
        /// The source was derived from the target.
        DerivedFrom = "DERIVED_FROM",
        /// The source is part of the target.
        PartOf = "PART_OF",
        /// The two contradict each other.
        Contradicts = "CONTRADICTS",
        /// The source supports the target.
        Supports = "SUPPORTS",
    }
);

text_enum!(
    /// Where a node is in its life.
    Lifecycle, "lifecycle" {
        /// New, not yet confirmed.
        Tentative = "tentative",
        /// Confirmed.
        Stable = "stable",
        /// Replaced by a newer node.
        Superseded = "superseded",
        /// Contradicted, awaiting resolution.
        Contested = "contested",
        /// Lost a contradiction.
        Deprecated = "deprecated",
        /// Retired for good.
        Archived = "archived",
    }
);

impl Lifecycle {
    /// States that retrieval returns by default.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Tentative | Self::Stable | Self::Contested)
    }

    /// Whether the lifecycle may move from `self` to `next`
    /// (tentative→{stable, superseded, contested, archived};
    /// stable→{superseded, contested, archived}; contested→{stable, deprecated,
    /// archived}; superseded/deprecated→archived; archived is terminal).
    pub fn can_become(self, next: Lifecycle) -> bool {
        use Lifecycle::*;
        matches!(
            (self, next),
            (Tentative, Stable | Superseded | Contested | Archived)
                | (Stable, Superseded | Contested | Archived)
                | (Contested, Stable | Deprecated | Archived)
                | (Superseded | Deprecated, Archived)
        )
    }
}

text_enum!(
    /// How a claim is known.
    EpistemicType, "epistemic_type" {
        /// Seen directly.
        Observed = "observed",
        /// Stated.
        Asserted = "asserted",
        /// Concluded from other memories.
        Inferred = "inferred",
        /// Possible, not stated as true.
        Hypothetical = "hypothetical",
        /// True under a condition.
        Conditional = "conditional",
        /// Demoted after a contradiction.
        Deprecated = "deprecated",
        /// Not checked.
        Unverified = "unverified",
    }
);

impl EpistemicType {
    /// The retrieval weight of each epistemic type.
    pub fn weight(self) -> f64 {
        match self {
            Self::Observed => 1.0,
            Self::Asserted => 0.9,
            Self::Inferred => 0.7,
            Self::Hypothetical => 0.3,
            Self::Conditional | Self::Unverified => 0.5,
            Self::Deprecated => 0.1,
        }
    }

    /// Whether a claim of this type reads as a plain fact: seen or stated.
    /// Every other type (a condition, a possibility, an inference, an
    /// unchecked relationship, a demoted claim) is shown with its type
    /// wherever claims are listed, so it is not taken for a fact.
    pub fn is_plain_fact(self) -> bool {
        matches!(self, Self::Observed | Self::Asserted)
    }
}

text_enum!(
    /// Where a node's content came from.
    SourceType, "source_type" {
        /// A person said it.
        UserStated = "user_stated",
        /// A person showed it by doing it.
        UserDemonstrated = "user_demonstrated",
        /// The assistant or system concluded it.
        SystemInferred = "system_inferred",
        /// A document.
        ExternalDocument = "external_document",
        /// A tool's output.
        ToolOutput = "tool_output",
    }
);

impl SourceType {
    /// The source type of a stored message by its role: people state
    /// (user, participant), the assistant and system infer, tools output.
    pub fn for_role(role: Role) -> Self {
        match role {
            Role::User | Role::Participant => Self::UserStated,
            Role::Assistant | Role::System => Self::SystemInferred,
            Role::Tool => Self::ToolOutput,
        }
    }
}

/// Base confidence of a new node from its epistemic and source type
/// (the confidence matrix; 0.50 where the matrix has no entry).
pub fn base_confidence(epistemic: EpistemicType, source: SourceType) -> f64 {
    use EpistemicType as E;
    use SourceType as S;
    let row: [Option<f64>; 5] = match epistemic {
        E::Observed => [Some(0.90), Some(0.85), Some(0.70), Some(0.75), Some(0.80)],
        E::Asserted => [Some(0.80), Some(0.75), Some(0.60), Some(0.65), Some(0.70)],
        E::Inferred => [None, Some(0.60), Some(0.55), Some(0.50), Some(0.55)],
        E::Hypothetical => [Some(0.35), None, Some(0.25), Some(0.30), None],
        E::Unverified => [None, None, Some(0.20), Some(0.25), Some(0.30)],
        E::Conditional | E::Deprecated => [None; 5],
    };
    let column = match source {
        S::UserStated => 0,
        S::UserDemonstrated => 1,
        S::SystemInferred => 2,
        S::ExternalDocument => 3,
        S::ToolOutput => 4,
    };
    row[column].unwrap_or(0.50)
}

text_enum!(
    /// The kinds of journal records.
    OperationKind, "op_type" {
        /// An extraction was validated and saved.
        ExtractionValidated = "EXTRACTION_VALIDATED",
        /// A derivation plan was prepared.
        DerivationPrepared = "DERIVATION_PREPARED",
        /// A derivation plan was committed.
        DerivationCommitted = "DERIVATION_COMMITTED",
        /// A saved plan went stale before its commit; the next one replans.
        DerivationReplanRequested = "DERIVATION_REPLAN_REQUESTED",
        /// The organizer merged two nodes.
        OrganizerMerged = "ORGANIZER_MERGED",
        /// The organizer proposed an unverified alias link.
        AliasProposed = "ALIAS_PROPOSED",
        /// The owner accepted an alias proposal.
        AliasProposalAccepted = "ALIAS_PROPOSAL_ACCEPTED",
        /// The owner rejected an alias proposal.
        AliasProposalRejected = "ALIAS_PROPOSAL_REJECTED",
        /// The entity-linking pass minted entities and wrote MENTIONS links.
        EntitiesLinked = "ENTITIES_LINKED",
        /// Owner group links written after a derivation, outside its plan:
        /// the links, the repeated we-claims merged, and an owner entity
        /// made for them.
        GroupLinked = "GROUP_LINKED",
        /// A node replaced another.
        SupersedenceApplied = "SUPERSEDENCE_APPLIED",
        /// A node's lifecycle changed.
        LifecycleChanged = "LIFECYCLE_CHANGED",
        /// A merge or change was undone from its record.
        Undo = "UNDO",
        /// A caller corrected who claims are about (rebind or split), by
        /// naming the evidence.
        IdentityCorrected = "IDENTITY_CORRECTED",
        /// A retrieval's receipt: what was asked, found and packed, and why.
        RetrievalRecorded = "RETRIEVAL_RECORDED",
        /// Events were forgotten at their owner's request: which, how much
        /// was erased with them, by whom, when and why (never the content).
        Forgotten = "FORGOTTEN",
        /// The owner retracted a claim: it is no longer current.
        ClaimRetracted = "CLAIM_RETRACTED",
        /// The owner corrected a claim's value: a new claim supersedes it.
        ClaimCorrected = "CLAIM_CORRECTED",
    }
);

/// The epistemic type a stored node gets by its node type: summaries are
/// inferred, events and instructions observed, everything else asserted.
pub fn epistemic_for_node_type(node_type: NodeType) -> EpistemicType {
    match node_type {
        NodeType::Summary => EpistemicType::Inferred,
        NodeType::Event | NodeType::Instruction => EpistemicType::Observed,
        _ => EpistemicType::Asserted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_round_trip() {
        for r in Role::ALL {
            assert_eq!(Role::parse("role", r.as_str()).unwrap(), *r);
        }
        for t in EdgeType::ALL {
            assert_eq!(t.as_str().parse::<EdgeType>().unwrap(), *t);
        }
        assert_eq!(NodeType::ALL.len(), 9);
        assert_eq!(EdgeType::ALL.len(), 8);
    }

    #[test]
    fn unknown_values_name_the_choices() {
        let err = Role::parse("role", "robot").unwrap_err();
        assert_eq!(
            err.to_string(),
            "role is \"robot\"; expected one of user participant assistant tool system"
        );
        assert!(serde_json::from_str::<NodeType>("\"memo\"").is_err());
    }

    #[test]
    fn lifecycle_transitions() {
        use Lifecycle::*;
        assert!(Tentative.can_become(Stable));
        assert!(Contested.can_become(Deprecated));
        assert!(!Archived.can_become(Stable));
        assert!(!Superseded.can_become(Stable));
        assert!(!Stable.can_become(Tentative));
        assert!(Tentative.is_active() && !Superseded.is_active());
    }

    #[test]
    fn confidence_matrix() {
        assert_eq!(
            base_confidence(EpistemicType::Asserted, SourceType::UserStated),
            0.80
        );
        assert_eq!(
            base_confidence(EpistemicType::Observed, SourceType::ToolOutput),
            0.80
        );
        assert_eq!(
            base_confidence(EpistemicType::Inferred, SourceType::UserStated),
            0.50
        );
        assert_eq!(
            base_confidence(EpistemicType::Unverified, SourceType::SystemInferred),
            0.20
        );
    }
}
