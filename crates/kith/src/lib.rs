//! kith: long-term memory for LLM agents.
//!
//! [`Memory`] is the engine facade. It owns a [`Store`](kith_store::Store) and
//! speaks plain, serialisable data: an [`EventInput`] in, a [`StoreReceipt`]
//! out; a [`SearchRequest`] in, [`SearchHit`]s with provenance out.
//!
//! ```no_run
//! use kith::{EventInput, Memory, SearchRequest};
//! # fn main() -> Result<(), kith::Error> {
//! let memory = Memory::init(std::path::Path::new("my.kith"))?;
//! let receipt = memory.store(EventInput {
//!     owner_id: Some("alice".into()),
//!     session_id: Some("2025-03-04".into()),
//!     speaker: Some("Alice".into()),
//!     event_time: Some("2025-03-04T19:02:00+00:00".into()),
//!     ..EventInput::new("user", "I moved to Lisbon in September.")
//! })?;
//! let hits = memory.search(&SearchRequest::new("alice", "Where does Alice live?")?)?;
//! assert_eq!(hits[0].provenance.event_id, receipt.event_id);
//! # Ok(()) }
//! ```
//!
//! API boundary: everything a caller needs is re-exported here; the CLI and
//! the HTTP and MCP servers use nothing else.
// Module docs name private items for maintainers: `cargo doc
// --document-private-items` links them, a public build shows their names.
#![allow(rustdoc::private_intra_doc_links)]

pub mod claims;
mod context;
pub mod correct;
pub mod database;
mod doctor;
mod doctor_deep;
pub mod embedding;
mod error;
pub mod forget;
pub mod ingest;
mod jsonl;
mod memory;
pub mod neighbourhood;
pub mod organize;
mod overview;
mod pack;
mod reads;
pub mod retrieve;
mod retry;
mod search;
#[cfg(test)]
mod testing;
mod vectors;
mod write;

pub use claims::{ClaimEdit, ClaimEditReport, ClaimFact, ClaimHistory};
pub use correct::{Correction, CorrectionReport, CorrectionTarget};
pub use doctor::DoctorReport;
pub use embedding::RebuildReport;
pub use error::{Error, ErrorKind, PackError};
pub use forget::{ForgetReport, ForgetRequest, ForgetSelector, Verification};
pub use ingest::{
    DerivationSummary, IngestOptions, IngestReceipt, ProcessReport, ReingestOutcome, WorkReport,
};
pub use jsonl::{ForeignOwners, ImportOptions, ImportReport};
pub use kith_core::event::InputDefaults;
/// Tombstones of forgotten events and scrubbed journal records.
pub use kith_core::rng;
pub use kith_core::tombstone;
pub use kith_core::{
    Edge, EdgeType, EpistemicType, Event, EventInput, Lifecycle, Node, NodeType, Operation,
    OperationKind, OwnerId, Role, ScopeId, SessionId, SourceId, Timestamp, ValidationError,
};
pub use kith_embed::{self as embed, Embedder};
/// The extraction layer: schema, providers (heuristic, OpenAI-compatible, replay server), grounding.
pub use kith_extract as extract;
pub use kith_extract::{ExtractError, Provider};
/// The identity rules and their options.
pub use kith_identity as identity;
pub use kith_store::{EventQuery, NodeQuery, SearchFilters, Stats, StoredEvent, StoredNode};
pub use kith_store::{StatementLog, StatementTime, StoreError, StoreErrorKind};
pub use kith_store::{VectorProbe, VectorQuery};
pub use kith_store::{WorkItem, WorkStatus};
pub use memory::Memory;
pub use neighbourhood::{NodeView, PathReport, PathRequest, PathStep};
pub use organize::{
    AliasProposal, Decision, HeuristicEntityExtractor, Job, JournalQuery, LinkParams, LinkReport,
    LinkRequest, OrganizeReport, OrganizeRequest, OrganizerError, ProposalStatus, ReviewOutcome,
    UndoReport,
};
pub use organize::{Assessment, Assessor, ProposeAliasRequest, ProposeOutcome, Verdict};
pub use pack::{Manifest, PACK_FORMAT_VERSION};
pub use retrieve::{Retrieval, RetrievePaths, RetrieveRequest, RetrievedItem};
pub use retry::BUSY_ATTEMPTS;
pub use search::{Provenance, SearchHit, SearchRequest};
pub use write::StoreReceipt;
