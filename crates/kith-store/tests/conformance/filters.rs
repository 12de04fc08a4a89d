//! Conformance: search filters mean what [`SearchFilters::admits`] says.
//!
//! The filter rules are written once in Rust (`kith-store/src/filters.rs`)
//! and again in each backend's SQL (`apply_filters`). A property test
//! generates notes (scopes, sessions of the node and of its event, roles,
//! types, lifecycles, event times, creation and update times, and nodes
//! without a source event) and filters, stores the notes, and checks that
//! the lexical and the vector search return exactly the nodes a naive
//! model — the Rust rule applied to the list — admits. Each case is a fresh
//! owner in the same store, shrunk by proptest on failure.

use kith_core::{Event, Lifecycle, Node, NodeType, Role, Timestamp};
use kith_store::{LexicalQuery, SearchFilters, Store, VectorQuery};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use uuid::Uuid;

use crate::fixtures::*;
use crate::vector_test;

const MODEL: &str = "test/filters-2";
const HOUR_MS: i64 = 3_600_000;
const SCOPES: &[&str] = &["personal", "work"];
const SESSIONS: &[&str] = &["s1", "s2"];
const TYPES: &[NodeType] = &[NodeType::Note, NodeType::Fact, NodeType::Entity];

/// One stored node, as generated.
#[derive(Debug, Clone)]
struct NoteSpec {
    scope: usize,
    event_session: Option<usize>,
    node_session: Option<usize>,
    assistant: bool,
    /// Hours after `NOW` the event says it happened (`None`: no event
    /// time, so its ingestion time, `NOW`, counts).
    event_hours: Option<i64>,
    node_type: NodeType,
    lifecycle: Lifecycle,
    created_hours: i64,
    /// Hours after its creation the node was last changed.
    updated_after: i64,
    /// Whether the node names its source event (else it has none).
    sourced: bool,
}

/// One filter, as generated: hours after `NOW` for the times.
#[derive(Debug, Clone)]
struct FilterSpec {
    scope: Option<usize>,
    session: Option<usize>,
    roles: Vec<bool>,
    node_types: Vec<NodeType>,
    lifecycles: Vec<Lifecycle>,
    time_from: Option<i64>,
    time_to: Option<i64>,
    as_of: Option<i64>,
}

fn hours(h: i64) -> Timestamp {
    Timestamp::from_unix_millis(ts(NOW).unix_millis() + h * HOUR_MS).expect("a time near NOW")
}

fn note_spec() -> impl Strategy<Value = NoteSpec> {
    (
        (
            0..SCOPES.len(),
            prop::option::of(0..SESSIONS.len()),
            prop::option::of(0..SESSIONS.len()),
            any::<bool>(),
            prop::option::of(-2i64..3),
        ),
        (
            prop::sample::select(TYPES.to_vec()),
            prop::sample::select(Lifecycle::ALL.to_vec()),
            -3i64..4,
            0i64..4,
            prop::bool::weighted(0.85),
        ),
    )
        .prop_map(
            |(
                (scope, event_session, node_session, assistant, event_hours),
                (node_type, lifecycle, created_hours, updated_after, sourced),
            )| NoteSpec {
                scope,
                event_session,
                node_session,
                assistant,
                event_hours,
                node_type,
                lifecycle,
                created_hours,
                updated_after,
                sourced,
            },
        )
}

/// Empty in three cases of four, else 1 to `most` of `all`.
fn list<T: Clone + std::fmt::Debug + 'static>(
    all: Vec<T>,
    most: usize,
) -> impl Strategy<Value = Vec<T>> {
    prop::option::weighted(0.25, prop::sample::subsequence(all, 1..=most))
        .prop_map(Option::unwrap_or_default)
}

fn filter_spec() -> impl Strategy<Value = FilterSpec> {
    // Each filter is set in about one case of four, so most cases admit
    // some notes and leave out others.
    (
        (
            prop::option::weighted(0.25, 0..SCOPES.len()),
            prop::option::weighted(0.25, 0..SESSIONS.len()),
            list(vec![false, true], 1),
            list(TYPES.to_vec(), 2),
        ),
        (
            list(Lifecycle::ALL.to_vec(), 3),
            prop::option::weighted(0.35, -2i64..3),
            prop::option::weighted(0.35, -2i64..4),
            prop::option::weighted(0.3, -3i64..7),
        ),
    )
        .prop_map(
            |((scope, session, roles, node_types), (lifecycles, time_from, time_to, as_of))| {
                FilterSpec {
                    scope,
                    session,
                    roles,
                    node_types,
                    lifecycles,
                    time_from,
                    time_to,
                    as_of,
                }
            },
        )
}

fn role_of(assistant: bool) -> Role {
    role(if assistant { "assistant" } else { "user" })
}

impl FilterSpec {
    fn filters(&self) -> SearchFilters {
        SearchFilters {
            scope: self.scope.map(|i| scope(SCOPES[i])),
            session: self.session.map(|i| session(SESSIONS[i])),
            roles: self.roles.iter().map(|a| role_of(*a)).collect(),
            node_types: self.node_types.clone(),
            lifecycles: self.lifecycles.clone(),
            time_from: self.time_from.map(hours),
            time_to: self.time_to.map(hours),
            as_of: self.as_of.map(hours),
        }
    }
}

/// The event and node `spec` describes, for `owner_id`'s `i`th note.
fn build(owner_id: &str, i: usize, spec: &NoteSpec) -> (Event, Node) {
    let e = event(kith_core::EventInput {
        scope: Some(SCOPES[spec.scope].to_string()),
        session_id: spec.event_session.map(|s| SESSIONS[s].to_string()),
        role: role_of(spec.assistant).as_str().to_string(),
        event_time: spec.event_hours.map(|h| hours(h).to_rfc3339()),
        ..input(owner_id, &format!("m{i}"), &format!("marmot number {i}"))
    });
    let mut n = derived(
        &e,
        spec.node_type,
        spec.lifecycle,
        &format!("marmot number {i}"),
    );
    n.session_id = spec.node_session.map(|s| session(SESSIONS[s]));
    n.created_at = hours(spec.created_hours);
    n.updated_at = hours(spec.created_hours + spec.updated_after);
    if !spec.sourced {
        n.evidence_refs.clear();
    }
    (e, n)
}

vector_test!(filtered_searches_admit_what_the_rule_admits);
fn filtered_searches_admit_what_the_rule_admits(store: &dyn Store) {
    let case = (prop::collection::vec(note_spec(), 2..12), filter_spec());
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case, |(notes, filter)| {
            let owner_id = format!("o{}", Uuid::new_v4().simple());
            let built: Vec<(Event, Node)> = notes
                .iter()
                .enumerate()
                .map(|(i, spec)| build(&owner_id, i, spec))
                .collect();
            write(store, |tx| {
                for (i, (e, n)) in built.iter().enumerate() {
                    tx.insert_event(e).unwrap();
                    tx.insert_node(n).unwrap();
                    // Unit vectors along either axis.
                    let v: [f32; 2] = if i % 2 == 0 { [1.0, 0.0] } else { [0.0, 1.0] };
                    tx.put_embedding(n.id, MODEL, &v).unwrap();
                }
            });
            let filters = filter.filters();
            // The model: the rule applied to the list.
            let want = sorted(
                built
                    .iter()
                    .filter(|(e, n)| {
                        let source = (!n.evidence_refs.is_empty()).then_some(e);
                        filters.admits(n, source)
                    })
                    .map(|(_, n)| n.id)
                    .collect(),
            );
            let lexical = read(store, |tx| {
                tx.search_lexical(&LexicalQuery {
                    common_share: None,
                    owner: owner(&owner_id),
                    text: "marmot".into(),
                    filters: filters.clone(),
                    limit: 0,
                })
            })
            .unwrap();
            prop_assert_eq!(sorted(hit_ids(&lexical)), want.clone(), "lexical search");
            let vector = read(store, |tx| {
                tx.search_vector(&VectorQuery {
                    owner: owner(&owner_id),
                    model: MODEL.into(),
                    vector: vec![0.6, 0.8],
                    filters: filters.clone(),
                    limit: 100,
                })
            })
            .unwrap();
            prop_assert_eq!(sorted(hit_ids(&vector)), want, "vector search");
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
