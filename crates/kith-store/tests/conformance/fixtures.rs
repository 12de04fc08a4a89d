//! Builders and small helpers shared by the conformance tests.
//!
//! Everything here speaks only the `Store` trait and kith's model types, so it
//! works unchanged for every backend.

use kith_core::event::InputDefaults;
use kith_core::{
    Edge, EdgeType, Event, EventInput, Lifecycle, Node, NodeType, Operation, OperationKind,
    OwnerId, Role, ScopeId, SessionId, Timestamp,
};
use kith_store::{
    EventQuery, LexicalHit, LexicalQuery, NodeQuery, SearchFilters, Stats, Store, StoreError,
    StoreErrorKind, StoredEvent, Tx, TxMode,
};
use serde::Serialize;
use uuid::Uuid;

/// The ingestion time events get when their input names none.
pub const NOW: &str = "2025-01-01T00:00:00Z";

/// Parses an RFC 3339 timestamp (the test's own literal, so it must be valid).
pub fn ts(text: &str) -> Timestamp {
    Timestamp::parse("test", text).unwrap_or_else(|e| panic!("bad test timestamp {text}: {e}"))
}

pub fn owner(id: &str) -> OwnerId {
    OwnerId::new(id).expect("valid owner id")
}

pub fn scope(id: &str) -> ScopeId {
    ScopeId::new(id).expect("valid scope id")
}

pub fn session(id: &str) -> SessionId {
    SessionId::new(id).expect("valid session id")
}

fn defaults() -> InputDefaults {
    InputDefaults {
        owner_id: None,
        scope: ScopeId::personal(),
        now: ts(NOW),
    }
}

/// A `user` message from `owner` with caller message id `source`.
pub fn input(owner: &str, source: &str, content: &str) -> EventInput {
    EventInput {
        content: content.to_string(),
        role: "user".to_string(),
        owner_id: Some(owner.to_string()),
        source_id: Some(source.to_string()),
        ..EventInput::default()
    }
}

/// Validates `input` into an event (checksum and id computed by kith-core).
pub fn event(input: EventInput) -> Event {
    input.validate(&defaults()).expect("valid test input").event
}

/// The note node `store()` would write for `event`.
pub fn note(event: &Event) -> Node {
    Node::note_for(event, NodeType::Note)
}

/// A node of `node_type` and `lifecycle` derived from `event`, with its own
/// id (so several nodes can come from one event).
pub fn derived(event: &Event, node_type: NodeType, lifecycle: Lifecycle, content: &str) -> Node {
    Node {
        id: Uuid::new_v4(),
        node_type,
        lifecycle,
        content: content.to_string(),
        ..Node::note_for(event, node_type)
    }
}

/// An edge `from → to` owned by `from`'s owner.
pub fn edge(from: &Node, to: &Node, edge_type: EdgeType) -> Edge {
    Edge {
        id: Uuid::new_v4(),
        owner_id: from.owner_id.clone(),
        scope: from.scope.clone(),
        source_id: from.id,
        target_id: to.id,
        edge_type,
        confidence: 0.5,
        valid_from: ts(NOW),
        valid_to: None,
        provenance_event_id: None,
        metadata: None,
        created_at: ts(NOW),
    }
}

/// A journal record for `owner` with a checksum computed by kith-core.
pub fn operation(owner_id: &str, kind: OperationKind, payload: serde_json::Value) -> Operation {
    Operation::new(
        Uuid::new_v4(),
        kind,
        owner(owner_id),
        ScopeId::personal(),
        None,
        payload,
        ts(NOW),
    )
}

/// Runs `f` in a write transaction and commits it.
pub fn write<T>(store: &dyn Store, f: impl FnOnce(&mut dyn Tx) -> T) -> T {
    let mut tx = store
        .begin(TxMode::Write)
        .expect("begin a write transaction");
    let out = f(&mut *tx);
    tx.commit().expect("commit");
    out
}

/// The backend's integrity problems, checked in a write transaction that is
/// dropped afterwards (the check needs the write lock and changes nothing).
pub fn integrity(store: &dyn Store) -> Vec<String> {
    let mut tx = store
        .begin(TxMode::Write)
        .expect("begin a write transaction");
    tx.check_integrity().expect("check_integrity")
}

/// Runs `f` in a read transaction (dropped afterwards).
pub fn read<T>(store: &dyn Store, f: impl FnOnce(&mut dyn Tx) -> T) -> T {
    let mut tx = store.begin(TxMode::Read).expect("begin a read transaction");
    f(&mut *tx)
}

/// Appends `event` and its note node; returns the event's seq and the note.
pub fn put(tx: &mut dyn Tx, event: &Event) -> (i64, Node) {
    let seq = tx.insert_event(event).expect("insert_event");
    let node = note(event);
    tx.insert_node(&node).expect("insert_node");
    (seq, node)
}

/// A lexical query for `owner` with every filter off.
pub fn lexical(owner_id: &str, text: &str) -> LexicalQuery {
    LexicalQuery {
        common_share: None,
        owner: owner(owner_id),
        text: text.to_string(),
        filters: SearchFilters::default(),
        limit: 100,
    }
}

/// Runs a lexical query that must succeed.
pub fn search(tx: &mut dyn Tx, query: &LexicalQuery) -> Vec<LexicalHit> {
    tx.search_lexical(query)
        .unwrap_or_else(|e| panic!("search_lexical({:?}) failed: {e}", query.text))
}

/// The node ids of `hits`, in rank order.
pub fn hit_ids(hits: &[LexicalHit]) -> Vec<Uuid> {
    hits.iter().map(|h| h.node_id).collect()
}

/// `ids` sorted, for comparisons where the order is not part of the contract.
pub fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

/// Every event `query` matches (its `limit` is replaced by a large one).
pub fn list_events(tx: &mut dyn Tx, query: EventQuery) -> Vec<StoredEvent> {
    tx.list_events(&EventQuery {
        limit: 10_000,
        ..query
    })
    .expect("list_events")
}

/// The ids of every event `query` matches, in the order listed.
pub fn event_ids(tx: &mut dyn Tx, query: EventQuery) -> Vec<Uuid> {
    list_events(tx, query)
        .into_iter()
        .map(|s| s.event.id)
        .collect()
}

/// The ids of every node `query` matches, in the order listed.
pub fn node_ids(tx: &mut dyn Tx, query: NodeQuery) -> Vec<Uuid> {
    tx.list_nodes(&NodeQuery {
        limit: 10_000,
        ..query
    })
    .expect("list_nodes")
    .into_iter()
    .map(|n| n.node.id)
    .collect()
}

/// Asserts `result` failed with `kind` and returns the error.
#[track_caller]
pub fn expect_err<T: std::fmt::Debug>(
    result: Result<T, StoreError>,
    kind: StoreErrorKind,
) -> StoreError {
    match result {
        Ok(v) => panic!("expected a {kind:?} error, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "wrong error kind: {e}");
            assert!(!e.message().is_empty(), "error without a message");
            e
        }
    }
}

/// Asserts two values are equal both as Rust values and as JSON. The JSON
/// comparison matters for timestamps: `Timestamp` equality compares instants,
/// while its JSON form also carries the offset the value was written in.
#[track_caller]
pub fn assert_same<T: PartialEq + std::fmt::Debug + Serialize>(got: &T, want: &T) {
    assert_eq!(got, want);
    assert_eq!(
        serde_json::to_value(got).expect("serialise"),
        serde_json::to_value(want).expect("serialise"),
        "equal values with different JSON forms (offset lost?)"
    );
}

/// `stats.nodes_by_type` as a sorted list without zero counts, so backends
/// may order the list as they like and may or may not list empty types.
pub fn node_counts(stats: &Stats) -> Vec<(NodeType, u64)> {
    let mut counts: Vec<(NodeType, u64)> = stats
        .nodes_by_type
        .iter()
        .copied()
        .filter(|(_, n)| *n > 0)
        .collect();
    counts.sort();
    counts
}

/// A role as kith-core parses it.
pub fn role(text: &str) -> Role {
    Role::parse("role", text).expect("valid role")
}
