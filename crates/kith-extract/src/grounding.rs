//! Grounding: which extracted claims the message actually supports.
//!
//! Pure functions: the message text and a parsed [`Extraction`] in, a
//! [`Grounded`] extraction out, with every dropped claim and its reason.
//! (Implementation in progress: types are fixed, see `ground`.)

use serde::{Deserialize, Serialize};

use crate::schema::{ExtractedEntity, ExtractedFact, ExtractedRelationship, Extraction};

/// How a claim endpoint (subject, object, relationship end) resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndpointRef {
    /// A listed entity: its index in [`Grounded::entities`].
    Entity {
        /// Index into `entities`.
        index: usize,
    },
    /// A personal reference (I, me, we, they, …): local to its event until
    /// the identity rules bind it.
    Personal {
        /// The word as the claim wrote it.
        surface: String,
    },
    /// A plain value, not an entity (an object like "green tea").
    Value,
}

/// Where in the message a claim's evidence stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Byte offset of the matched quote in the message.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
    /// The message text of the quote, exactly as the message has it (quote
    /// marks as in the message).
    pub quote: String,
    /// The whole sentence(s) the quote stands in.
    pub sentence: String,
}

/// A fact that survived grounding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundedFact {
    /// The fact as extracted (epistemic type possibly adjusted by the
    /// conditional / hypothetical rules).
    pub fact: ExtractedFact,
    /// Its evidence in the message.
    pub evidence: Evidence,
    /// What the subject is.
    pub subject: EndpointRef,
    /// What the object is.
    pub object: EndpointRef,
}

/// A relationship that survived grounding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroundedRelationship {
    /// The relationship as extracted.
    pub relationship: ExtractedRelationship,
    /// Its evidence in the message.
    pub evidence: Evidence,
    /// The source end.
    pub source: EndpointRef,
    /// The target end.
    pub target: EndpointRef,
}

/// Which list a dropped claim came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// `facts[i]`.
    Fact,
    /// `relationships[i]`.
    Relationship,
}

/// Why a claim was dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DropReason {
    /// The evidence quote is not in the message (even with quote marks
    /// normalised).
    QuoteNotFound {
        /// The quote as given.
        quote: String,
    },
    /// An endpoint is not mentioned (whole word, case-insensitive) in the
    /// quoted sentence(s).
    NotMentioned {
        /// Which field (`subject`, `object`, `source_entity`, `target_entity`).
        field: String,
        /// Its text.
        text: String,
    },
    /// A named endpoint names no listed entity (of the given type).
    UnknownEntity {
        /// Which field.
        field: String,
        /// The name.
        name: String,
    },
    /// A named endpoint matches several listed entities.
    AmbiguousEntity {
        /// Which field.
        field: String,
        /// The name.
        name: String,
    },
}

/// A claim grounding refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// Which list.
    pub kind: ClaimKind,
    /// Its index in that list of the extraction.
    pub index: usize,
    /// Why.
    pub reason: DropReason,
}

/// An extraction after grounding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grounded {
    /// Entities as listed (deduplicated by trimmed, case-insensitive name and type).
    pub entities: Vec<ExtractedEntity>,
    /// Facts that survived, in extraction order.
    pub facts: Vec<GroundedFact>,
    /// Relationships that survived, in extraction order.
    pub relationships: Vec<GroundedRelationship>,
    /// What was dropped, in extraction order.
    pub dropped: Vec<Dropped>,
}

/// Grounds `extraction` against the message `content`.
pub fn ground(content: &str, extraction: &Extraction) -> Grounded {
    let _ = (content, extraction);
    Grounded::default()
}
