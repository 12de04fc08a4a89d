//! Every identity write is journaled (issue 13 item 10): the owner group
//! links, the merges of repeated we-claims and an owner entity made for them
//! are written after the plan, outside it, and each pass that writes any of
//! them leaves one checksummed `GROUP_LINKED` record holding exactly what it
//! wrote. Through the default heuristic extractor and through recorded LLM
//! replies.

mod common;

use std::collections::BTreeSet;

use kith::{EdgeType, EventInput, IngestOptions, Memory, NodeQuery, NodeType, OwnerId};
use kith_extract::replay::ReplayServer;
use serde_json::{json, Value};
use uuid::Uuid;

fn we_love_hiking() -> Value {
    json!({"entities": [], "relationships": [], "facts": [{
        "subject": "We", "predicate": "love", "object": "hiking", "polarity": "positive",
        "evidence_quote": "We love hiking.", "fact_type": "preference",
        "epistemic_type": "asserted", "temporal_intent": null, "replaces_object": null,
        "condition": null, "confidence": 0.9}]})
}

/// The default heuristic extractor, or (`recorded`) recorded replies.
fn memory(recorded: bool) -> (tempfile::TempDir, Memory, Option<ReplayServer>) {
    let (tmp, _dir, m) = common::pack();
    if !recorded {
        return (tmp, m, None);
    }
    let (m, server) = common::with_recorded_replies(m, vec![("We love hiking", we_love_hiking())]);
    (tmp, m, Some(server))
}

fn say(m: &Memory, text: &str, source: &str) {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: Some("Maya".into()),
                session_id: Some("s1".into()),
                source_id: Some(source.into()),
                ..EventInput::new("user", text)
            },
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        r.status,
        kith::WorkStatus::Complete,
        "{text}: {:?}",
        r.error
    );
}

fn owner() -> OwnerId {
    OwnerId::new("owner").unwrap()
}

/// Every edge whose metadata says `basis: group_member`, by id.
fn group_edges(m: &Memory) -> BTreeSet<Uuid> {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let nodes = tx
        .list_nodes(&NodeQuery {
            owner: Some(owner()),
            ..NodeQuery::default()
        })
        .unwrap();
    let mut out = BTreeSet::new();
    for n in nodes {
        for e in tx.edges_of(n.node.id).unwrap() {
            if e.metadata
                .as_ref()
                .is_some_and(|md| md["basis"] == "group_member")
            {
                out.insert(e.id);
            }
        }
    }
    out
}

fn group_records(m: &Memory) -> Vec<Value> {
    m.journal(
        &owner(),
        &kith::JournalQuery {
            kind: Some(kith::OperationKind::GroupLinked),
            ..kith::JournalQuery::default()
        },
    )
    .unwrap()
    .into_iter()
    .map(|op| {
        assert_eq!(op.checksum, op.compute_checksum());
        op.payload
    })
    .collect()
}

#[test]
fn group_links_merges_and_the_owner_entity_are_journaled() {
    for recorded in [false, true] {
        let (_tmp, m, _server) = memory(recorded);
        // Maya has no entity yet: the group pass makes it, and says so.
        say(&m, "We love hiking.", "a");
        let records = group_records(&m);
        assert_eq!(records.len(), 1, "recorded={recorded}: {records:#?}");
        let made = &records[0]["owner_entity_created"];
        assert_eq!(made["content"], "Maya", "recorded={recorded}: {made}");
        let maya = m
            .nodes(&NodeQuery {
                owner: Some(owner()),
                node_types: vec![NodeType::Entity],
                ..NodeQuery::default()
            })
            .unwrap()
            .into_iter()
            .find(|n| n.node.content == "Maya")
            .expect("Maya's entity");
        assert_eq!(made["id"], maya.node.id.to_string());

        // The same we-claim again in the session merges into the new copy.
        say(&m, "We love hiking.", "b");
        let records = group_records(&m);
        assert_eq!(records.len(), 2, "recorded={recorded}");
        let merged = records[1]["merged"].as_array().unwrap();
        assert_eq!(merged.len(), 1, "recorded={recorded}: {merged:?}");
        assert_eq!(
            merged[0]["retired"]["lifecycle"], "tentative",
            "the claim as it was"
        );
        let retired: Uuid = merged[0]["retired"]["id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(!m.node(&owner(), retired).unwrap().lifecycle.is_active());

        // Every group edge in the store is in exactly one record.
        let mut journaled = BTreeSet::new();
        for r in &records {
            for e in r["edges"].as_array().unwrap() {
                let id: Uuid = e["id"].as_str().unwrap().parse().unwrap();
                assert!(journaled.insert(id), "edge {id} journaled twice");
            }
        }
        assert_eq!(group_edges(&m), journaled, "recorded={recorded}");
        let supersedes = records[1]["edges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["edge_type"] == EdgeType::Supersedes.as_str())
            .count();
        assert_eq!(supersedes, 1);

        // A reingest that writes nothing new journals nothing new.
        m.reingest_session(&owner(), &kith::SessionId::new("s1").unwrap())
            .unwrap();
        assert_eq!(group_records(&m).len(), 2, "recorded={recorded}");
        assert!(m.doctor().unwrap().healthy());
    }
}

/// Owner and member lookups cover every generation (issue 13 item 16): when
/// the first node of a name was retired, the group pass finds the name's
/// live node (the one new mentions use), not nothing.
#[test]
fn group_lookups_find_the_live_generation() {
    for recorded in [false, true] {
        let (_tmp, m, _server) = memory(recorded);
        say(&m, "We love hiking.", "a");
        let first = m
            .nodes(&NodeQuery {
                owner: Some(owner()),
                node_types: vec![NodeType::Entity],
                ..NodeQuery::default()
            })
            .unwrap()
            .into_iter()
            .find(|n| n.node.content == "Maya")
            .unwrap()
            .node;
        // Retire generation 0 (as a merge into another node would).
        {
            let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
            let mut retired = first.clone();
            retired.lifecycle = kith::Lifecycle::Archived;
            tx.update_node(&retired).unwrap();
            tx.commit().unwrap();
        }
        // A new session: the we-claim must link to Maya's live node.
        let r = m
            .ingest(
                EventInput {
                    owner_id: Some("owner".into()),
                    speaker: Some("Maya".into()),
                    session_id: Some("s2".into()),
                    source_id: Some("c".into()),
                    ..EventInput::new("user", "We love hiking.")
                },
                IngestOptions::default(),
            )
            .unwrap();
        assert_eq!(r.status, kith::WorkStatus::Complete);
        let live: Vec<_> = m
            .nodes(&NodeQuery {
                owner: Some(owner()),
                node_types: vec![NodeType::Entity],
                ..NodeQuery::default()
            })
            .unwrap()
            .into_iter()
            .filter(|n| n.node.content == "Maya" && n.node.lifecycle.is_active())
            .collect();
        assert_eq!(live.len(), 1, "recorded={recorded}");
        assert_ne!(live[0].node.id, first.id);
        let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
        let speaker_links = tx
            .edges_of(live[0].node.id)
            .unwrap()
            .into_iter()
            .filter(|e| {
                e.metadata
                    .as_ref()
                    .is_some_and(|md| md["basis"] == "group_member" && md["role"] == "speaker")
            })
            .count();
        assert_eq!(speaker_links, 1, "recorded={recorded}");
    }
}
