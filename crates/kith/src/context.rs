//! [`Ctx`]: what the engine's modules need from a memory, borrowed for one
//! call: the store, the extraction provider, the identity rules, the work
//! lease and the pack's directory.
//!
//! The facade ([`crate::Memory`]) hands a `Ctx` to each module function,
//! so no module names `Memory` and none imports the facade back (the shape
//! of rust-analyzer's `ide::Analysis` over its database). This file imports
//! nothing of the engine, so it can be part of no import circle.

use std::path::Path;
use std::time::Duration;

use kith_embed::Embedder;
use kith_extract::Provider;
use kith_identity::IdentityOptions;
use kith_store::Store;

/// A memory's parts, borrowed for one call.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The store every read and write goes to.
    pub store: &'a dyn Store,
    /// The extraction provider `ingest` and `process` call.
    pub provider: &'a dyn Provider,
    /// The identity rules in force.
    pub identity: IdentityOptions,
    /// How long a process holds a work item before another may take it.
    pub lease: Duration,
    /// The pack's directory, when the memory is a pack.
    pub pack_dir: Option<&'a Path>,
    /// The embedder as configured, its model not yet checked against the
    /// store's vectors (the facade checks that once, for stages that
    /// embed).
    pub embedder: Option<&'a dyn Embedder>,
}
