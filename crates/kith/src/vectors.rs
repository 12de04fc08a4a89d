//! [`Vectors`]: what the engine's stages ask of a memory's embedder.
//!
//! Embedding checks the store's model once per memory and keeps that state
//! on the facade, so stages that embed (admitting notes, the organizer's
//! entity vectors) receive this trait rather than the memory; the facade
//! implements it.

use kith_core::event::ValidEvent;
use kith_core::OwnerId;

use crate::embedding::NoteVectors;
use crate::error::Error;

/// The embedding a stage may ask for.
pub(crate) trait Vectors {
    /// Vectors for the notes of `valid` (in order), or `None` without an
    /// embedder.
    fn embed_notes(&self, valid: &[ValidEvent]) -> Result<Option<NoteVectors>, Error>;
    /// The embedding model's id after checking that the store holds no
    /// vectors of another model; `None` without an embedder.
    fn checked_model(&self) -> Result<Option<String>, Error>;
    /// Embeds up to `limit` of `owner`'s entities without a vector of the
    /// model, and returns how many.
    fn embed_entities(&self, owner: &OwnerId, limit: usize) -> Result<usize, Error>;
    /// Tells a background embedding worker, if any, that a commit added
    /// notes (whose vectors it is to make).
    fn notes_committed(&self);
}
