//! Conformance: vector searches running beside writers read one consistent
//! snapshot each, and every write is visible to the searches that start
//! after it is acknowledged (issue 22, goal 4).
//!
//! A model test driven by proptest: the main thread applies random writes
//! (a pair of vectors replaced in one transaction; a node forgotten) and
//! keeps the state after each commit, while searcher threads query the
//! same owner non-stop. Each search's hits must all belong to one state
//! that existed while it ran (no mix of before and after one transaction,
//! nothing forgotten before it started); a search after each commit must
//! return exactly the model's vectors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use kith_core::{Event, Node};
use kith_store::{SearchFilters, Store, Tx, TxMode, VectorQuery};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use uuid::Uuid;

use crate::fixtures::*;
use crate::vector_test;

const MODEL: &str = "test/snapshots-4";
const NODES: usize = 5;

#[derive(Debug, Clone)]
enum Op {
    /// Nodes `a` and `b` get version `v`'s vectors in one transaction
    /// (recreated first if forgotten).
    PutPair(usize, usize, u8),
    /// The node is deleted with its vector (forget).
    Forget(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..NODES, 0..NODES, 0u8..8).prop_map(|(a, b, v)| Op::PutPair(a, b, v)),
        1 => (0..NODES).prop_map(Op::Forget),
    ];
    proptest::collection::vec(op, 1..16)
}

/// The vector of `node` at `version`: distinct per pair, unit length.
fn vector_of(node: usize, version: u8) -> Vec<f32> {
    let v = [
        1.0 + node as f32,
        0.5 + version as f32,
        ((node * 7 + version as usize * 3) % 5) as f32 * 0.25,
        0.3,
    ];
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

const QUERY: [f32; 4] = [0.2, 0.9, -0.3, 0.25];

fn score(v: &[f32]) -> f32 {
    v.iter().zip(QUERY).map(|(a, b)| a * b).sum()
}

fn query(owner_id: &str) -> VectorQuery {
    VectorQuery {
        owner: owner(owner_id),
        model: MODEL.to_string(),
        vector: QUERY.to_vec(),
        filters: SearchFilters::default(),
        limit: NODES * 2,
    }
}

/// Node → version of the vectors committed.
type State = HashMap<usize, u8>;

/// The hits as (node index, score).
fn search(store: &dyn Store, owner_id: &str, ids: &[Uuid]) -> Vec<(usize, f32)> {
    read(store, |tx| {
        tx.search_vector(&query(owner_id)).expect("search_vector")
    })
    .into_iter()
    .map(|h| {
        let node = ids.iter().position(|id| *id == h.node_id);
        (
            node.expect("a hit is one of the owner's nodes"),
            h.score as f32,
        )
    })
    .collect()
}

/// True when every hit is its node's vector in `state`.
fn hits_fit(hits: &[(usize, f32)], state: &State) -> bool {
    hits.iter().all(|(node, s)| {
        state
            .get(node)
            .is_some_and(|v| (score(&vector_of(*node, *v)) - s).abs() < 1e-5)
    })
}

fn apply(tx: &mut dyn Tx, op: &Op, events: &[Event], nodes: &[Node], state: &State) {
    match *op {
        Op::PutPair(a, b, v) => {
            for n in [a, b] {
                if !state.contains_key(&n) && tx.get_node(nodes[n].id).unwrap().is_none() {
                    tx.insert_node(&note(&events[n]))
                        .expect("recreate the node");
                }
                tx.put_embedding(nodes[n].id, MODEL, &vector_of(n, v))
                    .expect("put_embedding");
            }
        }
        Op::Forget(n) => {
            tx.delete_nodes(&[nodes[n].id]).expect("delete_nodes");
        }
    }
}

vector_test!(concurrent_searches_see_one_snapshot_and_every_acknowledged_write);
fn concurrent_searches_see_one_snapshot_and_every_acknowledged_write(store: &dyn Store) {
    let mut runner = TestRunner::new(Config {
        cases: 6,
        failure_persistence: None,
        ..Config::default()
    });
    let case = AtomicUsize::new(0);
    let outcome = runner.run(&ops(), |ops| {
        let owner_id = format!("snap{}", case.fetch_add(1, Ordering::Relaxed));
        let events: Vec<Event> = (0..NODES)
            .map(|i| event(input(&owner_id, &format!("m{i}"), &format!("text {i}"))))
            .collect();
        let nodes: Vec<Node> = write(store, |tx| events.iter().map(|e| put(tx, e).1).collect());
        let ids: Vec<Uuid> = nodes.iter().map(|n| n.id).collect();
        // states[i]: after i writes. A state is recorded before its write
        // commits and `committed` raised after, so a search that reads
        // `committed` as i before and j after it ran saw one of states
        // i..=j+1.
        let states = Mutex::new(vec![State::new()]);
        let committed = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let torn: Mutex<Vec<String>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !stop.load(Ordering::Acquire) {
                        let start = committed.load(Ordering::Acquire);
                        let hits = search(store, &owner_id, &ids);
                        let end = committed.load(Ordering::Acquire);
                        let states = states.lock().unwrap();
                        let to = (end + 1).min(states.len() - 1);
                        if !states[start..=to].iter().any(|st| hits_fit(&hits, st)) {
                            torn.lock()
                                .unwrap()
                                .push(format!("hits {hits:?} match no state in {start}..={to}"));
                        }
                    }
                });
            }
            let mut state = State::new();
            let mut failure = None;
            for op in &ops {
                let before = state.clone();
                match *op {
                    Op::PutPair(a, b, v) => {
                        state.insert(a, v);
                        state.insert(b, v);
                    }
                    Op::Forget(n) => {
                        state.remove(&n);
                    }
                }
                states.lock().unwrap().push(state.clone());
                write(store, |tx| apply(tx, op, &events, &nodes, &before));
                committed.fetch_add(1, Ordering::AcqRel);
                // Acknowledged: a search from now on sees exactly this.
                let mut hits = search(store, &owner_id, &ids);
                hits.sort_by_key(|h| h.0);
                let mut want: Vec<usize> = state.keys().copied().collect();
                want.sort();
                let got: Vec<usize> = hits.iter().map(|h| h.0).collect();
                if got != want || !hits_fit(&hits, &state) {
                    failure = Some(format!("after {op:?}: hits {hits:?}, state {state:?}"));
                    break;
                }
            }
            stop.store(true, Ordering::Release);
            if let Some(f) = failure {
                torn.lock().unwrap().push(f);
            }
        });
        let torn = torn.into_inner().unwrap();
        prop_assert!(torn.is_empty(), "{}", torn.join("\n"));
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

vector_test!(a_search_in_an_older_transaction_never_drops_later_writes);
/// The interleaving the model test above found (one run in a few): a
/// search whose transaction began before a forget and a write reaches the
/// shared copy after both. It may not see them, but it must not take the
/// later write out of the copy: the searches after it must see it.
fn a_search_in_an_older_transaction_never_drops_later_writes(store: &dyn Store) {
    let owner_id = "older-tx";
    let events: Vec<Event> = (0..3)
        .map(|i| event(input(owner_id, &format!("m{i}"), &format!("text {i}"))))
        .collect();
    let nodes: Vec<Node> = write(store, |tx| events.iter().map(|e| put(tx, e).1).collect());
    let ids: Vec<Uuid> = nodes.iter().map(|n| n.id).collect();
    write(store, |tx| {
        for (n, id) in ids.iter().enumerate().take(2) {
            tx.put_embedding(*id, MODEL, &vector_of(n, 0))
                .expect("put_embedding");
        }
    });
    let found = |hits: Vec<(usize, f32)>| {
        let mut nodes: Vec<usize> = hits.into_iter().map(|h| h.0).collect();
        nodes.sort();
        nodes
    };
    assert_eq!(found(search(store, owner_id, &ids)), vec![0, 1]);
    // An older transaction: its snapshot is taken by its first search.
    let mut older = store.begin(TxMode::Read).expect("begin a read transaction");
    older
        .search_vector(&query(owner_id))
        .expect("search_vector");
    write(store, |tx| {
        tx.delete_nodes(&[ids[1]]).expect("delete_nodes");
    });
    write(store, |tx| {
        tx.put_embedding(ids[2], MODEL, &vector_of(2, 0))
            .expect("put_embedding");
    });
    assert_eq!(found(search(store, owner_id, &ids)), vec![0, 2]);
    // The older transaction searches again, then the newer ones.
    let seen = older
        .search_vector(&query(owner_id))
        .expect("search_vector");
    assert!(
        seen.iter().all(|h| h.node_id != ids[2]),
        "a write after it began"
    );
    drop(older);
    assert_eq!(found(search(store, owner_id, &ids)), vec![0, 2]);
}
