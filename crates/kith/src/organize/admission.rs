//! Admission: which pairs of nodes the organizer may merge or alias-link.
//! The rules are pure functions in [`kith_identity::admission`] (one
//! definition, shared with nothing else); this module re-exports them
//! where the organizer has always named them.

pub use kith_identity::admission::*;
