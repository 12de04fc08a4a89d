//! kith's identity rules, as pure functions: data in, decisions out.
//!
//! - [`options`]: each rule's switch, its default and its environment
//!   variable.
//! - [`first_person`]: who a message's singular first person ("I", "me",
//!   "my") is — the caller's speaker, a self-introduction, or the declared
//!   first-person owner — or nobody, in which case it stays local to its
//!   event.
//! - [`aliases`]: which two entity names may be one entity, which pairs
//!   must agree on provenance, and whether an undone merge may happen
//!   again (the organizer's rules).
//! - [`admission`]: which pairs of nodes the organizer may merge or
//!   alias-link (owner, scope, types, provenance, metadata), and which node
//!   of a pair is kept.
//! - [`references`]: which surfaces are personal references ("I", "we",
//!   "they") rather than names.
//! - [`claims`]: when a new claim repeats an existing one (merge) and when it
//!   replaces one (supersedence).
//! - [`correction`]: which links move when a caller corrects who some
//!   claims are about (rebind a claim, split a wrongly merged identity).
//! - [`persons`]: which names could be people, whether a turn quotes or
//!   reports speech, typing a known person's name `person`, and which
//!   stored node a person of a name is (one person, one node).
//! - [`groups`]: whom a user turn's "we" speaks for.
//! - [`policy`]: the named rule versions saved records are prepared under.
//!
//! Architecture invariant: nothing here reads the store or the clock. The
//! engine gathers the facts a rule needs and applies its decision.
// Module docs name private items for maintainers: `cargo doc
// --document-private-items` links them, a public build shows their names.
#![allow(rustdoc::private_intra_doc_links)]

pub mod admission;
pub mod aliases;
pub mod claim_edits;
pub mod claims;
pub mod correction;
pub mod first_person;
pub mod groups;
pub mod kinds;
pub mod linking;
pub mod merge;
pub mod options;
pub mod persons;
pub mod policy;
pub mod references;

pub use first_person::{Basis, FirstPerson, FirstPersonInput};
pub use options::IdentityOptions;
pub use policy::{Policy, UnknownPolicy};
