//! kith's model: the types every other crate speaks, and the pure rules that
//! need no I/O.
//!
//! - [`model`]: the enums the specification uses (roles, node and edge types,
//!   lifecycle, epistemic and source types, operation kinds).
//! - [`event`], [`node`], [`edge`], [`operation`]: the records kith keeps.
//! - [`ids`]: identifier newtypes and the UUIDv5 formulas behind every
//!   deterministic id.
//! - [`canon`]: canonical JSON and SHA-256 checksums.
//! - [`percentile`]: the one percentile rule benchmarks report with.
//! - [`rng`]: the one deterministic random generator of tests and benchmarks.
//! - [`text`]: the text keys claims are compared by (predicates).
//! - [`timestamp`]: RFC 3339 timestamps that always carry an offset.
//! - [`validate`]: typed validation errors and the limits they enforce.
//!
//! Architecture invariant: this crate knows nothing of SQL, HTTP or models.
//! Nothing here can fail because of the outside world; it only judges data.

pub mod canon;
pub mod edge;
pub mod event;
pub mod ids;
pub mod model;
pub mod node;
pub mod operation;
pub mod percentile;
pub mod rng;
pub mod text;
pub mod timestamp;
pub mod tombstone;
pub mod validate;

pub use edge::Edge;
pub use event::{Event, EventInput};
pub use ids::{OwnerId, ScopeId, SessionId, SourceId, Speaker};
pub use model::{EdgeType, EpistemicType, Lifecycle, NodeType, OperationKind, Role, SourceType};
pub use node::Node;
pub use operation::Operation;
pub use timestamp::Timestamp;
pub use tombstone::Tombstone;
pub use validate::{ValidationError, ValidationErrorKind};
