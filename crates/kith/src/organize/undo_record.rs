//! The journal record an undo reverses, and what every undo does with it.
//!
//! Each undoable kind (a merge, an accepted alias, an identity correction,
//! a claim retraction or correction) writes its own inverse, but all share
//! one shape: read the record's fields (an unreadable one is a damaged
//! record, never the caller's fault), check that what it wrote is still
//! exactly as it left it (undoing on top of a later change would silently
//! discard that change: refused, nothing written), write the inverse, and
//! seal an `UNDO` record. [`Undoing`] reads and checks; [`Inverse`] is what
//! a kind hands back for [`super::undo`] to seal.

use kith_core::{Edge, Node, Operation};
use kith_store::Tx;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{snapshot, unseal, OrganizerError};
use crate::error::Error;

/// A journal record being undone: the operation and its verified record.
pub(crate) struct Undoing<'a> {
    /// The operation undone.
    pub op: &'a Operation,
    /// Its record, after checking the checksum and the seal.
    pub record: Value,
}

/// What undoing one record wrote, for its `UNDO` record.
#[derive(Default)]
pub(crate) struct Inverse {
    /// Nodes given their earlier values back (as now stored).
    pub restored: Vec<Node>,
    /// Edges removed.
    pub removed: Vec<Uuid>,
    /// The fields this kind adds to the `UNDO` record.
    pub detail: Map<String, Value>,
}

impl<'a> Undoing<'a> {
    /// Opens `op`'s record (refused as damaged when its seal is broken).
    pub fn new(op: &'a Operation) -> Result<Self, Error> {
        Ok(Undoing {
            op,
            record: unseal(op)?.clone(),
        })
    }

    /// The record is damaged: `reason` says how.
    pub fn damaged(&self, reason: impl Into<String>) -> Error {
        OrganizerError::DamagedRecord {
            op: self.op.id,
            reason: reason.into(),
        }
        .into()
    }

    /// The undo is refused: `reason` says which later change it would
    /// trample.
    pub fn refused(&self, reason: impl Into<String>) -> Error {
        OrganizerError::UndoRefused {
            op: self.op.id,
            reason: reason.into(),
        }
        .into()
    }

    /// The record's field `key`, typed; a missing or unreadable one is a
    /// damaged record ("no readable `key`").
    pub fn field<T: DeserializeOwned>(&self, key: &str) -> Result<T, Error> {
        self.field_named(key, key)
    }

    /// [`Undoing::field`], naming the field `what` when it is damaged.
    pub fn field_named<T: DeserializeOwned>(&self, key: &str, what: &str) -> Result<T, Error> {
        serde_json::from_value(self.record[key].clone())
            .map_err(|_| self.damaged(format!("no readable {what}")))
    }

    /// [`Undoing::field`] for a field older records do not have: its
    /// default when absent.
    pub fn optional_field<T: DeserializeOwned + Default>(&self, key: &str) -> Result<T, Error> {
        match self.record.get(key) {
            Some(_) => self.field(key),
            None => Ok(T::default()),
        }
    }

    /// Refuses unless every edge the record opened is still open.
    pub fn check_still_open(&self, tx: &mut dyn Tx, opened: &[Edge]) -> Result<(), Error> {
        for e in opened {
            if !tx.get_edge(e.id)?.is_some_and(|now| now.is_open()) {
                return Err(
                    self.refused(format!("link {} it made was closed or removed since", e.id))
                );
            }
        }
        Ok(())
    }

    /// Refuses unless every edge the record closed is still closed.
    pub fn check_still_closed(&self, tx: &mut dyn Tx, closed: &[Edge]) -> Result<(), Error> {
        for e in closed {
            if tx.get_edge(e.id)?.is_none_or(|now| now.is_open()) {
                return Err(self.refused(format!(
                    "link {} it closed was reopened or removed since",
                    e.id
                )));
            }
        }
        Ok(())
    }
}

/// True when `written` is stored exactly as the record wrote it.
pub(crate) fn stored_as_written(tx: &mut dyn Tx, written: &Node) -> Result<bool, Error> {
    Ok(match tx.get_node(written.id)? {
        Some(now) => snapshot(&now)? == snapshot(written)?,
        None => false,
    })
}

/// Writes `before` back over the node the record made `live`, keeping the
/// live confidence (JSON cannot carry every f64 exactly), and returns it
/// as written.
pub(crate) fn restore(tx: &mut dyn Tx, mut before: Node, live: &Node) -> Result<Node, Error> {
    before.confidence = live.confidence;
    tx.update_node(&before)?;
    Ok(before)
}
