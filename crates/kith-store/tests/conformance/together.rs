//! `Tx::read_together`: reads handed over together (one statement on
//! PostgreSQL) answer exactly what each read's own method answers, on
//! every backend, whatever else they travel with.

use kith_core::{EdgeType, Event, EventInput, Lifecycle, Node, NodeType};
use kith_store::{Answer, LexicalQuery, NodeQuery, Read, SearchFilters, Store};
use serde_json::json;
use uuid::Uuid;

use crate::fixtures::*;
use crate::store_test;

/// `answer` with the parts its method does not order (nodes read by id,
/// the nodes at edges' ends, listed nodes' events) sorted.
fn ordered(answer: Answer) -> Answer {
    let by_id = |mut v: Vec<Node>| {
        v.sort_by_key(|n| n.id);
        v
    };
    match answer {
        Answer::Nodes(n) => Answer::Nodes(by_id(n)),
        Answer::HitsWithEdges(h, (e, ends), mut turns) => {
            turns.sort_by_key(|e| e.seq);
            Answer::HitsWithEdges(h, (e, by_id(ends)), turns)
        }
        Answer::NodesWithEvidence(n, mut e) => {
            e.sort_by_key(|e| e.seq);
            Answer::NodesWithEvidence(n, e)
        }
        other => other,
    }
}

/// A turn of `owner` in `session`.
fn said(owner: &str, source: &str, session: &str, content: &str) -> Event {
    event(EventInput {
        session_id: Some(session.to_string()),
        ..input(owner, source, content)
    })
}

fn reads_together_answer_as_their_methods(store: &dyn Store) {
    let alice: Vec<Event> = (0..5)
        .map(|i| {
            let s = if i < 3 { "s1" } else { "s2" };
            let mut e = said(
                "alice",
                &format!("a{i}"),
                s,
                &format!("turn {i} about Porto"),
            );
            e.metadata = Some(json!({"i": i}));
            e
        })
        .collect();
    let bob = said("bob", "b0", "s1", "bob in Porto too");
    let ana = derived(&alice[0], NodeType::Entity, Lifecycle::Stable, "Ana");
    let porto = derived(&alice[1], NodeType::Entity, Lifecycle::Stable, "Porto");
    let claim = Node {
        metadata: Some(json!({"predicate": "lives_in"})),
        ..derived(
            &alice[2],
            NodeType::Fact,
            Lifecycle::Tentative,
            "Ana lives in Porto",
        )
    };
    let bob_ana = derived(&bob, NodeType::Entity, Lifecycle::Stable, "Ana");
    let mut closed = edge(&ana, &claim, EdgeType::HasFact);
    closed.valid_to = Some(ts("2025-02-01T00:00:00Z"));
    let mut notes = Vec::new();
    write(store, |tx| {
        for e in alice.iter().chain([&bob]) {
            notes.push(put(tx, e).1);
        }
        for n in [&ana, &porto, &claim, &bob_ana] {
            tx.insert_node(n).unwrap();
        }
        for e in [
            edge(&ana, &porto, EdgeType::RelatesTo),
            edge(&ana, &claim, EdgeType::HasFact),
            closed,
            edge(&porto, &porto, EdgeType::RelatesTo),
            edge(&claim, &notes[3], EdgeType::DerivedFrom),
            edge(&bob_ana, &ana, EdgeType::RelatesTo),
        ] {
            tx.insert_edge(&e).unwrap();
        }
    });
    let who = owner("alice");
    let entities = |text: &str| LexicalQuery {
        common_share: None,
        filters: SearchFilters {
            node_types: vec![NodeType::Entity],
            ..SearchFilters::default()
        },
        ..lexical("alice", text)
    };
    let missing = Uuid::new_v4();
    let long: String = (0..80).map(|i| format!("word{i} ")).collect::<String>() + "Porto";
    let all = vec![
        Read::Search(lexical("alice", "turn about Porto")),
        Read::SearchNodes(entities("Ana Porto")),
        Read::SearchNodesWithEdges(entities("Ana Porto")),
        Read::SearchNodesWithEdges(lexical("alice", "Ana lives")),
        Read::EdgesOf(who.clone(), vec![ana.id, porto.id, claim.id, missing]),
        Read::SessionEvents(who.clone(), vec![session("s2"), session("s1")], 2),
        Read::SessionEvents(who.clone(), vec![session("s1"), session("none")], 0),
        Read::NodesWithEvidence(NodeQuery {
            owner: Some(who.clone()),
            node_types: vec![NodeType::Note],
            newest_first: true,
            limit: 3,
            ..NodeQuery::default()
        }),
        Read::NodesWithEvidence(NodeQuery {
            owner: Some(who.clone()),
            ..NodeQuery::default()
        }),
        Read::OwnedNodes(
            who.clone(),
            vec![claim.id, notes[0].id, bob_ana.id, missing],
        ),
        // Answered without a statement, or by statements of their own.
        Read::Search(lexical("alice", "")),
        Read::Search(lexical("alice", &long)),
        Read::SearchNodes(LexicalQuery {
            common_share: None,
            owner: owner("carol"),
            ..entities("Ana")
        }),
        Read::EdgesOf(who.clone(), Vec::new()),
        Read::SessionEvents(who.clone(), Vec::new(), 5),
        Read::OwnedNodes(who.clone(), Vec::new()),
        Read::NodesWithEvidence(NodeQuery {
            node_types: vec![NodeType::Entity],
            ..NodeQuery::default()
        }),
    ];
    read(store, |tx| {
        let alone: Vec<Answer> = all
            .iter()
            .map(|r| ordered(kith_store::together::read_one(tx, r).unwrap()))
            .collect();
        // Something was found where something was there to find.
        assert!(matches!(&alone[0], Answer::Hits(h) if h.len() >= 5));
        assert!(matches!(&alone[2], Answer::HitsWithEdges(h, (e, ends), _)
            if h.len() == 2 && e[&ana.id].len() == 3 && !ends.is_empty()));
        // The ends' first turns come with them: Ana's, Porto's and the
        // claim's (alice's turns 0–2), and no other owner's.
        if let Answer::HitsWithEdges(_, (_, ends), turns) = &alone[2] {
            let mut firsts = kith_store::together::first_evidence(ends);
            firsts.retain(|id| alice.iter().any(|e| e.id == *id));
            let mut got: Vec<Uuid> = turns.iter().map(|t| t.event.id).collect();
            got.sort();
            assert_eq!(got, firsts);
            assert_eq!(got.len(), 3, "{got:?}");
        }
        assert!(matches!(&alone[5], Answer::Events(e) if e.len() == 4));
        assert!(matches!(&alone[11], Answer::Hits(h) if !h.is_empty()));
        // All together, each alone, and in pairs (each with the next).
        let together: Vec<Answer> = tx
            .read_together(&all)
            .unwrap()
            .into_iter()
            .map(ordered)
            .collect();
        assert_eq!(together, alone);
        for (i, r) in all.iter().enumerate() {
            let one = tx.read_together(std::slice::from_ref(r)).unwrap();
            assert_eq!(ordered(one.into_iter().next().unwrap()), alone[i], "{r:?}");
            let next = &all[(i + 1) % all.len()];
            let two: Vec<Answer> = tx
                .read_together(&[r.clone(), next.clone()])
                .unwrap()
                .into_iter()
                .map(ordered)
                .collect();
            assert_eq!(two[0], alone[i], "{r:?} with {next:?}");
            assert_eq!(two[1], alone[(i + 1) % all.len()], "{next:?} after {r:?}");
        }
        assert!(tx.read_together(&[]).unwrap().is_empty());
    });
}
store_test!(reads_together_answer_as_their_methods);
