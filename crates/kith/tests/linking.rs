//! Entity linking (spec 004) end to end: every refusal and default, the
//! "Cafe Milano" example, slug safety, identity entities kept apart or
//! reused under admission, idempotence, the organizer job, the journal
//! record, and retrieval reaching one memory through another via a minted
//! entity.

mod common;

use kith::organize::link_job::{ItemStatus, LinkRequest};
use kith::organize::linking::{
    self, DropReason, EntityExtractor, EntityMention, LinkParams, HEURISTIC_CONFIDENCE,
};
use kith::retrieve::fusion::PathKind;
use kith::{
    EdgeType, EventInput, Job, JournalQuery, Lifecycle, Memory, Node, NodeQuery, NodeType,
    OperationKind, OrganizeRequest, OwnerId, ScopeId,
};
use kith_core::{EpistemicType, SourceType};
use kith_store::TxMode;
use serde_json::json;
use uuid::Uuid;

fn owner() -> OwnerId {
    OwnerId::new("o").unwrap()
}

fn personal() -> ScopeId {
    ScopeId::personal()
}

/// Stores `texts` as user messages of owner `o` and returns their memory
/// (note) nodes.
fn remember(m: &Memory, texts: &[&str]) -> Vec<Node> {
    texts
        .iter()
        .map(|t| {
            let r = m
                .store(EventInput {
                    owner_id: Some("o".into()),
                    session_id: Some("s1".into()),
                    ..EventInput::new("user", t)
                })
                .unwrap();
            m.node(&owner(), kith_core::ids::note_node_id(r.event_id))
                .unwrap()
        })
        .collect()
}

fn lowered() -> LinkParams {
    LinkParams {
        confidence_threshold: HEURISTIC_CONFIDENCE,
        ..LinkParams::default()
    }
}

fn pass(m: &Memory, params: LinkParams) -> kith::LinkReport {
    let mut req = LinkRequest::new(owner(), personal());
    req.params = params;
    m.link_entities(&req).unwrap()
}

const MILANO: &[&str] = &["We met at Cafe Milano.", "Cafe Milano again, same table."];

#[test]
fn the_defaults_are_spec_004s() {
    let p = LinkParams::default();
    assert_eq!(p.min_mention_count, 2);
    assert_eq!(p.confidence_threshold, 0.5);
    assert_eq!(p.max_records, 200);
    assert_eq!(HEURISTIC_CONFIDENCE, 0.4);
    assert_eq!(linking::LINK_WEIGHT, 0.5);
}

#[test]
fn with_the_defaults_the_heuristic_mints_nothing() {
    let (_t, _d, m) = common::pack();
    remember(&m, MILANO);
    let before = common::snapshot(&m, "o");
    let r = pass(&m, LinkParams::default());
    assert!(r.entities.is_empty() && r.links.is_empty() && r.mentions.is_empty());
    assert_eq!(r.records_read, 2);
    // One threshold refusal per mention, in spec 004's words.
    assert_eq!(r.dropped.len(), 2);
    for d in &r.dropped {
        assert_eq!(d.surface, "Cafe Milano");
        assert_eq!(d.reason, DropReason::BelowThreshold);
        assert_eq!(d.detail, "confidence 0.4 is below the 0.5 threshold");
    }
    assert_eq!(r.op_id, None);
    assert_eq!(common::snapshot(&m, "o"), before, "nothing was written");
}

#[test]
fn cafe_milano_two_memories_one_entity_when_the_threshold_is_lowered() {
    let (_t, _d, m) = common::pack();
    let memories = remember(&m, MILANO);
    let r = pass(&m, lowered());
    assert!(r.dropped.is_empty(), "{:?}", r.dropped);
    assert_eq!(r.entities.len(), 1);
    let e = &r.entities[0];
    assert_eq!(
        (e.name.as_str(), e.slug.as_str(), e.mentions),
        ("Cafe Milano", "cafe-milano", 2)
    );
    assert_eq!(e.status, ItemStatus::New);
    // The link spec 004 describes: each memory MENTIONS the entity.
    assert_eq!(r.mentions.len(), 2);
    for (edge, memory) in r.mentions.iter().zip(&memories) {
        assert_eq!((edge.subject, edge.object), (memory.id, e.id));
        assert_eq!((edge.relationship.as_str(), edge.weight), ("MENTIONS", 0.5));
    }
    assert!(
        r.links.is_empty(),
        "one entity: no entity–entity co-mention"
    );

    // The entity is a semantic memory of the scope.
    let node = m.node(&owner(), e.id).unwrap();
    assert_eq!(node.node_type, NodeType::Entity);
    assert_eq!(node.content, "Cafe Milano");
    assert_eq!(node.scope, personal());
    assert_eq!(node.lifecycle, Lifecycle::Tentative);
    assert_eq!(node.epistemic_type, EpistemicType::Inferred);
    assert_eq!(node.source_type, SourceType::SystemInferred);
    assert_eq!(node.evidence_refs.len(), 2);
    assert_eq!(node.metadata.as_ref().unwrap()["entity_type"], "other");
    assert_eq!(
        e.id,
        linking::linked_entity_id(&owner(), &personal(), "cafe-milano")
    );
    let edges = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(e.id)
        .unwrap();
    assert_eq!(
        edges
            .iter()
            .filter(|x| x.edge_type == EdgeType::Mentions)
            .count(),
        2
    );

    // One journal record, sealed like the organizer's.
    let ops = m
        .journal(
            &owner(),
            &JournalQuery {
                kind: Some(OperationKind::EntitiesLinked),
                ..JournalQuery::default()
            },
        )
        .unwrap();
    assert_eq!(ops.len(), 1);
    assert_eq!(Some(ops[0].id), r.op_id);
    let record = &ops[0].payload["record"];
    assert_eq!(
        ops[0].payload["sha256"].as_str().unwrap(),
        kith_core::canon::checksum(record)
    );
    assert_eq!(record["minted"].as_array().unwrap().len(), 1);
    assert_eq!(record["published_edges"].as_array().unwrap().len(), 2);
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn two_entities_named_together_are_linked_once() {
    let (_t, _d, m) = common::pack();
    remember(
        &m,
        &[
            "Dana booked Cafe Milano.",
            "Cafe Milano was full, Dana said.",
            "Dana called.",
        ],
    );
    let r = pass(&m, lowered());
    let names: Vec<&str> = r.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["Cafe Milano", "Dana"]);
    assert_eq!(r.links.len(), 1, "one link per pair, however often");
    let l = &r.links[0];
    assert_eq!(
        (l.subject_text.as_str(), l.object_name.as_str()),
        ("Cafe Milano", "Dana")
    );
    assert_eq!((l.relationship.as_str(), l.weight), ("MENTIONS", 0.5));
    assert_eq!(r.mentions.len(), 5);
}

#[test]
fn a_single_mention_is_below_the_floor() {
    let (_t, _d, m) = common::pack();
    remember(
        &m,
        &[
            "We met at Cafe Milano.",
            "Cafe Milano again.",
            "Lisbon was warm.",
        ],
    );
    let r = pass(&m, lowered());
    assert_eq!(r.entities.len(), 1);
    let floor: Vec<_> = r
        .dropped
        .iter()
        .filter(|d| d.reason == DropReason::BelowMentionFloor)
        .collect();
    assert_eq!(floor.len(), 1);
    assert_eq!(floor[0].surface, "Lisbon");
    assert_eq!(floor[0].detail, "mentioned 1 time(s), below the 2 floor");

    // A higher floor refuses Cafe Milano too.
    let (_t2, _d2, m2) = common::pack();
    remember(&m2, MILANO);
    let r = pass(
        &m2,
        LinkParams {
            min_mention_count: 3,
            ..lowered()
        },
    );
    assert!(r.entities.is_empty());
    assert_eq!(
        r.dropped[0].detail,
        "mentioned 2 time(s), below the 3 floor"
    );
}

#[test]
fn over_the_read_budget_the_whole_pass_is_refused() {
    let (_t, _d, m) = common::pack();
    remember(&m, &["Cafe Milano.", "Cafe Milano!", "Cafe Milano?"]);
    let before = common::snapshot(&m, "o");
    let r = pass(
        &m,
        LinkParams {
            max_records: 2,
            ..lowered()
        },
    );
    assert!(r.over_budget());
    assert_eq!(r.dropped.len(), 1);
    assert_eq!(r.dropped[0].surface, "");
    assert_eq!(
        r.dropped[0].detail,
        "3 memories exceed the 2-memory read budget for one linking pass"
    );
    // The message counts every memory, not the budget plus the one read to
    // know it is over (issue 13 item 16).
    let r = pass(
        &m,
        LinkParams {
            max_records: 1,
            ..lowered()
        },
    );
    assert_eq!(
        r.dropped[0].detail,
        "3 memories exceed the 1-memory read budget for one linking pass"
    );
    assert!(r.entities.is_empty() && r.mentions.is_empty());
    assert_eq!(r.records_read, 0, "nothing is extracted");
    assert_eq!(common::snapshot(&m, "o"), before);
    // At the budget exactly, the pass runs.
    let r = pass(
        &m,
        LinkParams {
            max_records: 3,
            ..lowered()
        },
    );
    assert_eq!(r.entities.len(), 1);
}

/// An extractor with fixed mentions per text, for exact control.
struct Fixed(Vec<(&'static str, Vec<EntityMention>)>);

impl EntityExtractor for Fixed {
    fn extract(&self, text: &str) -> Vec<EntityMention> {
        self.0
            .iter()
            .find(|(t, _)| *t == text)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }
}

fn mention(surface: &str, confidence: f64) -> EntityMention {
    EntityMention {
        surface: surface.into(),
        kind: "other".into(),
        confidence,
    }
}

#[test]
fn the_threshold_judges_each_mention() {
    let records_texts = ["one", "two", "three"];
    let (_t, _d, m) = common::pack();
    let records = remember(&m, &records_texts);
    let x = Fixed(vec![
        ("one", vec![mention("Aster", 0.9), mention("Brio", 0.3)]),
        ("two", vec![mention("Aster", 0.9), mention("Brio", 0.9)]),
        ("three", vec![mention("Brio", f64::NAN)]),
    ]);
    let r = linking::link_entities(
        &records,
        &owner(),
        &personal(),
        Some(&x),
        &LinkParams::default(),
    );
    let minted: Vec<&str> = r.entities.iter().map(|n| n.content.as_str()).collect();
    assert_eq!(minted, vec!["Aster"]);
    let reasons: Vec<(&str, DropReason)> = r
        .dropped
        .iter()
        .map(|d| (d.surface.as_str(), d.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            ("Brio", DropReason::BelowThreshold),
            ("Brio", DropReason::BelowThreshold),
            ("Brio", DropReason::BelowMentionFloor),
        ]
    );
}

#[test]
fn slugs_are_safe_for_delimiters_accents_and_collisions() {
    let (_t, _d, m) = common::pack();
    remember(&m, &["a", "b", "c", "d"]);
    let both = vec![
        mention("Cafe Milano/Berlin", 0.9),
        mention("Cafe Milano Berlin", 0.9),
        mention("Café Zürich", 0.9),
        mention("東京", 0.9),
    ];
    let x = Fixed(vec![("a", both.clone()), ("b", both)]);
    let mut req = LinkRequest::new(owner(), personal());
    req.params = LinkParams::default();
    let r = m.link_entities_with(&req, Some(&x)).unwrap();
    assert_eq!(r.entities.len(), 4);
    let slug = |name: &str| {
        r.entities
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.slug.clone())
            .unwrap()
    };
    assert_eq!(slug("Cafe Milano Berlin"), "cafe-milano-berlin");
    assert!(slug("Cafe Milano/Berlin").starts_with("cafe-milano-berlin-"));
    assert_eq!(slug("Café Zürich"), "cafe-zurich");
    assert!(slug("東京").starts_with("entity-"));
    let mut ids: Vec<Uuid> = r.entities.iter().map(|e| e.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "colliding slugs are told apart");
    for e in &r.entities {
        assert!(e
            .slug
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
        // The stored node keeps the surface as written.
        assert_eq!(m.node(&owner(), e.id).unwrap().content, e.name);
    }
    // A later pass keeps every slug with its surface.
    remember(&m, &["e"]);
    let r2 = m.link_entities_with(&req, Some(&x)).unwrap();
    assert_eq!(r2.written, 0);
    for e in &r2.entities {
        assert_eq!(e.slug, slug(&e.name));
    }
}

#[test]
fn linking_twice_changes_nothing_the_second_time() {
    let (_t, _d, m) = common::pack();
    remember(
        &m,
        &[
            "Dana booked Cafe Milano.",
            "Cafe Milano was full, Dana said.",
        ],
    );
    let first = pass(&m, lowered());
    assert!(first.written > 0 && first.op_id.is_some());
    let after_first = common::snapshot(&m, "o");
    let second = pass(&m, lowered());
    assert_eq!(second.written, 0);
    assert_eq!(second.op_id, None);
    assert!(second
        .entities
        .iter()
        .map(|e| e.status)
        .chain(second.links.iter().map(|l| l.status))
        .chain(second.mentions.iter().map(|l| l.status))
        .all(|s| s == ItemStatus::Existing));
    assert_eq!(common::snapshot(&m, "o"), after_first);
    let ids = |r: &kith::LinkReport| r.entities.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(&first), ids(&second));

    // A new memory adds only its own mention, in a new record.
    remember(&m, &["Back at Cafe Milano."]);
    let third = pass(&m, lowered());
    assert_eq!(third.written, 1);
    assert!(third.op_id.is_some() && third.op_id != first.op_id);
}

#[test]
fn a_dry_run_reports_and_writes_nothing() {
    let (_t, _d, m) = common::pack();
    remember(&m, MILANO);
    let before = common::snapshot(&m, "o");
    let mut req = LinkRequest::new(owner(), personal());
    req.params = lowered();
    req.dry_run = true;
    let r = m.link_entities(&req).unwrap();
    assert_eq!(r.entities.len(), 1);
    assert_eq!(r.entities[0].status, ItemStatus::WouldWrite);
    assert_eq!((r.written, r.op_id), (0, None));
    assert_eq!(common::snapshot(&m, "o"), before);
}

/// An identity entity as ingestion writes it.
fn identity_entity(m: &Memory, evidence: Uuid, name: &str, entity_type: &str) -> Node {
    let n = Node {
        id: Uuid::new_v4(),
        owner_id: owner(),
        scope: personal(),
        session_id: None,
        node_type: NodeType::Entity,
        content: name.into(),
        metadata: Some(json!({"entity_type": entity_type})),
        confidence: 0.6,
        lifecycle: Lifecycle::Tentative,
        epistemic_type: EpistemicType::Asserted,
        source_type: SourceType::UserStated,
        valid_from: kith::Timestamp::now(),
        valid_to: None,
        event_time: None,
        superseded_by: None,
        evidence_refs: vec![evidence],
        created_at: kith::Timestamp::now(),
        updated_at: kith::Timestamp::now(),
    };
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.insert_node(&n).unwrap();
    tx.commit().unwrap();
    n
}

#[test]
fn identity_entities_are_reused_only_when_names_and_types_agree() {
    // Same name, a different type: kept apart, a linked entity is minted.
    let (_t, _d, m) = common::pack();
    let mem = remember(&m, MILANO);
    let place = identity_entity(&m, mem[0].evidence_refs[0], "Cafe Milano", "place");
    let r = pass(&m, lowered());
    assert_eq!(r.kept_apart.len(), 1);
    assert_eq!(r.kept_apart[0].entity, place.id);
    assert_eq!(r.kept_apart[0].reason, "different_entity_type");
    assert!(!r.entities[0].reused);
    assert_ne!(r.entities[0].id, place.id);
    assert_eq!(m.node(&owner(), place.id).unwrap(), place, "untouched");

    // Name (a case variant) and type agree: the identity entity takes the
    // links and nothing is minted.
    let (_t2, _d2, m2) = common::pack();
    let mem = remember(&m2, MILANO);
    let other = identity_entity(&m2, mem[0].evidence_refs[0], "cafe milano", "other");
    let r = pass(&m2, lowered());
    assert!(r.kept_apart.is_empty());
    assert_eq!(r.entities.len(), 1);
    assert!(r.entities[0].reused);
    assert_eq!(r.entities[0].id, other.id);
    assert!(r.mentions.iter().all(|e| e.object == other.id));
    let linked = m2
        .nodes(&NodeQuery {
            owner: Some(owner()),
            metadata_key: Some("linked_by".into()),
            ..NodeQuery::default()
        })
        .unwrap();
    assert!(linked.is_empty(), "nothing minted");
    assert_eq!(m2.node(&owner(), other.id).unwrap(), other, "untouched");
}

#[test]
fn the_organizer_runs_link_entities_per_scope() {
    let (_t, _d, m) = common::pack();
    remember(&m, MILANO);
    // `kith organize --jobs link_entities` with the defaults: nothing.
    let r = m.organize(&owner(), &[Job::LinkEntities], 0).unwrap();
    assert_eq!(r.jobs[0].job, Job::LinkEntities);
    assert_eq!(r.jobs[0].candidates, 2);
    assert!(r.jobs[0].linking[0].entities.is_empty());
    assert_eq!(r.jobs[0].linking[0].dropped.len(), 2);

    let mut req = OrganizeRequest::new(owner(), vec![Job::LinkEntities]);
    req.link_params = lowered();
    let r = m.organize_with(&req).unwrap();
    assert_eq!(r.jobs[0].linking.len(), 1);
    assert_eq!(r.jobs[0].linking[0].entities.len(), 1);
    assert!(r.jobs[0].linking[0].op_id.is_some());
    assert_eq!("link_entities".parse::<Job>().unwrap(), Job::LinkEntities);
}

#[test]
fn retrieval_reaches_one_memory_through_another_via_a_minted_entity() {
    let (_t, _d, m) = common::pack();
    let mem = remember(
        &m,
        &[
            "We met at Cafe Milano for the first time.",
            "Cafe Milano again: the tiramisu was the best yet.",
            "The weather was grey all week.",
        ],
    );
    // Only the graph path, so a memory found here was reached through the
    // entity, not by its words.
    let mut req = common::graph_only("o", "Was the tiramisu good at Cafe Milano?");
    req.limit = 20;
    let found = |m: &Memory| -> Vec<Uuid> {
        m.retrieve(&req)
            .unwrap()
            .results
            .iter()
            .map(|i| i.node_id)
            .collect()
    };
    assert!(found(&m).is_empty(), "no entity, no graph path");

    // With the defaults nothing is minted, so nothing changes.
    pass(&m, LinkParams::default());
    assert!(found(&m).is_empty());

    pass(&m, lowered());
    let r = m.retrieve(&req).unwrap();
    let got: Vec<Uuid> = r.results.iter().map(|i| i.node_id).collect();
    assert!(
        got.contains(&mem[0].id) && got.contains(&mem[1].id),
        "{got:?}"
    );
    assert!(!got.contains(&mem[2].id));
    let tiramisu = r.results.iter().find(|i| i.node_id == mem[1].id).unwrap();
    assert!(tiramisu.trace.has(PathKind::Graph));
    // The memory sharing more of the question's words ranks first.
    assert_eq!(r.results[0].node_id, mem[1].id);
}

/// Counts are per memory: a surface an extractor repeats inside one memory
/// counts once toward the floor (and gets one mention edge).
#[test]
fn a_surface_repeated_in_one_memory_counts_once() {
    let (_t, _d, m) = common::pack();
    let records = remember(&m, &["one", "two"]);
    let x = Fixed(vec![
        ("one", vec![mention("Aster", 0.9), mention("Aster", 0.9)]),
        ("two", vec![mention("Brio", 0.9)]),
    ]);
    let r = linking::link_entities(
        &records,
        &owner(),
        &personal(),
        Some(&x),
        &LinkParams::default(),
    );
    assert!(r.entities.is_empty() && r.mentions.is_empty());
    let floor: Vec<(&str, &str)> = r
        .dropped
        .iter()
        .map(|d| (d.surface.as_str(), d.detail.as_str()))
        .collect();
    assert_eq!(
        floor,
        vec![
            ("Aster", "mentioned 1 time(s), below the 2 floor"),
            ("Brio", "mentioned 1 time(s), below the 2 floor"),
        ]
    );
    // With a floor of one, Aster gets exactly one mention edge.
    let r = linking::link_entities(
        &records,
        &owner(),
        &personal(),
        Some(&x),
        &LinkParams {
            min_mention_count: 1,
            ..LinkParams::default()
        },
    );
    let aster = r.entities.iter().find(|e| e.content == "Aster").unwrap();
    assert_eq!(
        r.mentions
            .iter()
            .filter(|e| e.target_id == aster.id)
            .count(),
        1
    );
    assert_eq!(aster.metadata.as_ref().unwrap()["mention_count"], 1);
}
