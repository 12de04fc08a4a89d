//! [`Ingest`]: what the ingest stage works with, borrowed from a memory for
//! one call: its [`Ctx`] and its embedder ([`Vectors`]). The stage's steps
//! (`mod.rs`, `reingest.rs`) are methods of this struct.

use std::time::Duration;

use kith_core::event::ValidEvent;
use kith_core::OwnerId;
use kith_extract::Provider;
use kith_identity::IdentityOptions;
use kith_store::{EventQuery, Store, StoredEvent};
use uuid::Uuid;

use crate::context::Ctx;
use crate::embedding::NoteVectors;
use crate::error::Error;
use crate::vectors::Vectors;

/// The ingest stage over one memory's parts.
pub(crate) struct Ingest<'a> {
    /// The store, provider, rules and lease.
    pub ctx: Ctx<'a>,
    /// Embeds notes as they are admitted.
    pub vectors: &'a dyn Vectors,
}

impl Ingest<'_> {
    pub(super) fn store_backend(&self) -> &dyn Store {
        self.ctx.store
    }

    pub(super) fn provider(&self) -> &dyn Provider {
        self.ctx.provider
    }

    pub(super) fn identity_options(&self) -> IdentityOptions {
        self.ctx.identity
    }

    pub(super) fn lease(&self) -> Duration {
        self.ctx.lease
    }

    pub(super) fn embed_events(&self, valid: &[ValidEvent]) -> Result<Option<NoteVectors>, Error> {
        self.vectors.embed_notes(valid)
    }

    pub(super) fn notes_committed(&self) {
        self.vectors.notes_committed()
    }

    pub(super) fn event(&self, owner: &OwnerId, id: Uuid) -> Result<StoredEvent, Error> {
        crate::reads::event(&self.ctx, owner, id)
    }

    pub(super) fn events(&self, query: &EventQuery) -> Result<Vec<StoredEvent>, Error> {
        crate::reads::events(&self.ctx, query)
    }
}

/// How long a process holds a work item before another may take it
/// over: `set` when given, else the provider's worst case (extraction and
/// pronoun repair, each with every timeout and retry) plus
/// [`super::LEASE_MARGIN`], and never less than [`super::DEFAULT_LEASE`].
/// A lease shorter than an extraction let a second `kith process` call the
/// LLM again for a live item.
pub(crate) fn lease(set: Option<Duration>, provider: &dyn Provider) -> Duration {
    if let Some(lease) = set {
        return lease;
    }
    match provider.worst_case() {
        Some(one_call) => one_call
            .saturating_mul(2)
            .saturating_add(super::LEASE_MARGIN)
            .max(super::DEFAULT_LEASE),
        None => super::DEFAULT_LEASE,
    }
}
