//! The organizer through `organize`: admission (reference notes §8 items
//! 12–16 and the adversarial near-duplicates), one-transaction merges under
//! fault injection (item 17), the alias inbox (item 18), undo, and the
//! journal. Nodes are written straight into the store so each test controls
//! every field admission reads.

mod common;
#[path = "common/faulty.rs"]
mod faulty;

use std::collections::BTreeMap;
use std::sync::Arc;

use kith::organize::{merge_op_id, CandidateHint, MergeKind};
use kith::{
    Decision, Edge, EdgeType, ErrorKind, EventInput, Job, JournalQuery, Lifecycle, Memory, Node,
    NodeType, OperationKind, OrganizeReport, OrganizeRequest, OwnerId, ProposalStatus, ScopeId,
    Timestamp,
};
use kith_core::{EpistemicType, SourceType};
use kith_store::{NodeQuery, OperationQuery, TxMode};
use serde_json::{json, Value};
use uuid::Uuid;

const BOTH: &[Job] = &[Job::Deduplicate, Job::AliasResolve];

fn owner(o: &str) -> OwnerId {
    OwnerId::new(o).unwrap()
}

fn ts(t: &str) -> Timestamp {
    Timestamp::parse("t", t).unwrap()
}

/// Stores a source message and returns its event id (evidence for nodes).
fn event(m: &Memory, o: &str, text: &str) -> Uuid {
    m.store(EventInput {
        owner_id: Some(o.into()),
        session_id: Some("s1".into()),
        event_time: Some("2025-03-01T10:00:00+00:00".into()),
        ..EventInput::new("user", text)
    })
    .unwrap()
    .event_id
}

/// A node of `o` with every admission field fixed.
fn node(o: &str, evidence: Uuid, node_type: NodeType, content: &str, metadata: Value) -> Node {
    Node {
        id: Uuid::new_v4(),
        owner_id: owner(o),
        scope: ScopeId::personal(),
        session_id: Some(kith::SessionId::new("s1").unwrap()),
        node_type,
        content: content.into(),
        metadata: Some(metadata),
        confidence: 0.5,
        lifecycle: Lifecycle::Tentative,
        epistemic_type: EpistemicType::Asserted,
        source_type: SourceType::UserStated,
        valid_from: ts("2025-03-01T10:00:00+00:00"),
        valid_to: None,
        event_time: Some(ts("2025-03-01T10:00:00+00:00")),
        superseded_by: None,
        evidence_refs: vec![evidence],
        created_at: ts("2025-03-01T10:00:01+00:00"),
        updated_at: ts("2025-03-01T10:00:01+00:00"),
    }
}

fn entity(o: &str, evidence: Uuid, name: &str, entity_type: &str) -> Node {
    node(
        o,
        evidence,
        NodeType::Entity,
        name,
        json!({"entity_type": entity_type}),
    )
}

fn claim(o: &str, evidence: Uuid, text: &str) -> Node {
    node(
        o,
        evidence,
        NodeType::Fact,
        text,
        json!({"subject": "Aurora", "predicate": "requires", "object": "approval"}),
    )
}

fn put(m: &Memory, nodes: &[&Node]) {
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    for n in nodes {
        tx.insert_node(n).unwrap();
    }
    tx.commit().unwrap();
}

fn link(m: &Memory, from: &Node, to: &Node, edge_type: EdgeType, evidence: Uuid) -> Edge {
    let e = link_value(from, to, edge_type, evidence);
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.insert_edge(&e).unwrap();
    tx.commit().unwrap();
    e
}

/// The edge [`link`] writes, with a validity end (merges must copy it).
fn link_value(from: &Node, to: &Node, edge_type: EdgeType, evidence: Uuid) -> Edge {
    Edge {
        id: Uuid::new_v4(),
        owner_id: from.owner_id.clone(),
        scope: from.scope.clone(),
        source_id: from.id,
        target_id: to.id,
        edge_type,
        confidence: 0.7,
        valid_from: ts("2025-03-01T10:00:00+00:00"),
        valid_to: Some(ts("2026-01-01T00:00:00+00:00")),
        provenance_event_id: Some(evidence),
        metadata: Some(json!({"w": 0.1, "why": "test"})),
        created_at: ts("2025-03-01T10:00:02+00:00"),
    }
}

/// [`link`] without a validity end: a link that is current.
fn open_link(m: &Memory, from: &Node, to: &Node, edge_type: EdgeType, evidence: Uuid) -> Edge {
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    let e = Edge {
        id: Uuid::new_v4(),
        valid_to: None,
        ..link_value(from, to, edge_type, evidence)
    };
    tx.insert_edge(&e).unwrap();
    tx.commit().unwrap();
    e
}

fn embed(m: &Memory, n: &Node, v: &[f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let v: Vec<f32> = v.iter().map(|x| x / norm).collect();
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.put_embedding(n.id, "test-model", &v).unwrap();
    tx.commit().unwrap();
}

fn get(m: &Memory, id: Uuid) -> Node {
    m.store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .get_node(id)
        .unwrap()
        .unwrap()
}

/// Every node, edge and journal record of an owner, keyed by id.
#[derive(Debug, Clone, PartialEq)]
struct Graph {
    nodes: BTreeMap<Uuid, Node>,
    edges: BTreeMap<Uuid, Edge>,
    ops: Vec<Uuid>,
}

fn graph(m: &Memory, o: &str) -> Graph {
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    let nodes: BTreeMap<Uuid, Node> = tx
        .list_nodes(&NodeQuery {
            owner: Some(owner(o)),
            limit: 10_000,
            ..NodeQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| (s.node.id, s.node))
        .collect();
    let mut edges = BTreeMap::new();
    for id in nodes.keys() {
        for e in tx.edges_of(*id).unwrap() {
            edges.insert(e.id, e);
        }
    }
    let ops = tx
        .list_operations(&OperationQuery {
            owner: owner(o),
            kind: None,
            target_id: None,
            limit: 0,
        })
        .unwrap()
        .into_iter()
        .map(|op| op.id)
        .collect();
    Graph { nodes, edges, ops }
}

fn organize(m: &Memory, o: &str, jobs: &[Job]) -> OrganizeReport {
    m.organize(&owner(o), jobs, 0).unwrap()
}

fn merges(r: &OrganizeReport) -> usize {
    r.jobs.iter().map(|j| j.merges.len()).sum()
}

fn proposals(r: &OrganizeReport) -> usize {
    r.jobs.iter().map(|j| j.proposals.len()).sum()
}

fn candidates(r: &OrganizeReport) -> usize {
    r.jobs.iter().map(|j| j.candidates).sum()
}

fn reasons(r: &OrganizeReport) -> Vec<String> {
    r.jobs
        .iter()
        .flat_map(|j| j.not_applied.iter().map(|n| n.reason.clone()))
        .collect()
}

fn hinted(m: &Memory, o: &str, a: Uuid, b: Uuid, score: Option<f64>) -> OrganizeReport {
    let mut req = OrganizeRequest::new(owner(o), BOTH.to_vec());
    for kind in [MergeKind::Duplicate, MergeKind::Alias] {
        req.hints.push(CandidateHint { a, b, kind, score });
    }
    m.organize_with(&req).unwrap()
}

// ---------------------------------------------------------------------------
// Admission (§8 items 12–16, adversarial near-duplicates)
// ---------------------------------------------------------------------------

/// §8 item 12: "Jordan" pairs that differ in one admission field only are
/// candidates, and none merges; nothing changes. (Session and event time
/// are checked for duplicates only: see
/// `name_evidence_aliases_cross_sessions_duplicates_do_not`.)
#[test]
fn item12_pairs_differing_in_one_field_never_merge() {
    let (_t, _d, m) = common::pack();
    type Change = fn(&mut Node);
    let variants: Vec<(&str, Change)> = vec![
        ("node_type", |n| n.node_type = NodeType::Fact),
        ("entity_type", |n| {
            n.metadata = Some(json!({"entity_type": "location"}))
        }),
        ("role", |n| n.source_type = SourceType::SystemInferred),
        ("epistemic", |n| n.epistemic_type = EpistemicType::Observed),
        ("valid_to", |n| {
            n.valid_to = Some(ts("2025-04-02T10:00:00+00:00"))
        }),
        ("metadata", |n| {
            n.metadata = Some(json!({"entity_type": "person", "description": "a friend"}))
        }),
        ("retention", |n| {
            n.metadata = Some(json!({"entity_type": "person", "ttl_days": 30}))
        }),
        ("pinning", |n| {
            n.metadata = Some(json!({"entity_type": "person", "pinned": true}))
        }),
        ("scope", |n| n.scope = ScopeId::new("work").unwrap()),
    ];
    for (i, (what, change)) in variants.iter().enumerate() {
        let o = format!("o{i}");
        let ev = event(&m, &o, "Jordan came by.");
        let base = entity(&o, ev, "Jordan", "person");
        let mut other = entity(&o, ev, "Jordan", "person");
        change(&mut other);
        put(&m, &[&base, &other]);
        let before = graph(&m, &o);
        let mut req = OrganizeRequest::new(owner(&o), BOTH.to_vec());
        req.hints.push(CandidateHint {
            a: base.id,
            b: other.id,
            kind: MergeKind::Alias,
            score: Some(0.99),
        });
        let r = m.organize_with(&req).unwrap();
        assert!(candidates(&r) >= 1, "{what}: {r:#?}");
        assert_eq!(merges(&r), 0, "{what}: {r:#?}");
        assert_eq!(proposals(&r), 0, "{what}: {r:#?}");
        assert_eq!(graph(&m, &o), before, "{what}: nothing changes");
    }
    // Non-entities also need the same validity start.
    let ev = event(&m, "vf", "Jordan moved.");
    let a = claim("vf", ev, "Jordan moved to Lisbon.");
    let b = Node {
        valid_from: ts("2025-03-01T11:00:00+00:00"),
        ..claim("vf", ev, "Jordan moved to Lisbon.")
    };
    put(&m, &[&a, &b]);
    let r = organize(&m, "vf", BOTH);
    assert_eq!(merges(&r), 0);
    assert!(
        reasons(&r).contains(&"different_valid_from".to_string()),
        "{r:#?}"
    );
    assert_eq!(
        r.jobs[0].merge_policy,
        "exact_content_provenance_validity_v1"
    );
}

/// §8 item 13: a negated claim with an identical vector is a candidate and
/// never merges: vector similarity only proposes.
#[test]
fn item13_negation_with_identical_vector_never_merges() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "Deploy policy.");
    let yes = claim("o", ev, "Aurora requires approval for deploys.");
    let no = claim("o", ev, "Aurora does not require approval for deploys.");
    put(&m, &[&yes, &no]);
    embed(&m, &yes, &[1.0, 0.0, 0.0]);
    embed(&m, &no, &[1.0, 0.0, 0.0]);
    let before = graph(&m, "o");
    let r = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(r.jobs[0].candidates, 1, "{r:#?}");
    assert_eq!(merges(&r), 0);
    assert_eq!(reasons(&r), vec!["different_content"]);
    assert_eq!(graph(&m, "o"), before);
}

/// §8 item 14: Jordan the person and jordan the country never alias, even
/// when a caller hands the pair in with a high score.
#[test]
fn item14_person_and_country_never_alias_even_when_forced() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "Jordan visited Jordan.");
    let person = entity("o", ev, "Jordan", "person");
    let country = entity("o", ev, "jordan", "country");
    put(&m, &[&person, &country]);
    embed(&m, &person, &[1.0, 0.1]);
    embed(&m, &country, &[1.0, 0.1]);
    let before = graph(&m, "o");
    let r = organize(&m, "o", BOTH);
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    let r = hinted(&m, "o", person.id, country.id, Some(0.999));
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    assert!(
        reasons(&r).iter().all(|x| x == "different_metadata"),
        "{r:#?}"
    );
    assert_eq!(graph(&m, "o"), before);
}

/// §8 item 15: Alice and Alicia with a semantic score of .999 get one
/// unverified RELATES_TO proposal; both stay tentative; a second pass adds
/// nothing.
#[test]
fn item15_semantic_score_alone_only_proposes() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "Alice and Alicia.");
    let alice = entity("o", ev, "Alice", "person");
    let alicia = entity("o", ev, "Alicia", "person");
    put(&m, &[&alice, &alicia]);
    embed(&m, &alice, &[1.0, 0.0447]);
    embed(&m, &alicia, &[1.0, 0.0]);
    let r = organize(&m, "o", BOTH);
    assert_eq!(merges(&r), 0, "{r:#?}");
    assert_eq!(proposals(&r), 1, "{r:#?}");
    let p = &r.jobs[1].proposals[0];
    assert!(p.score > 0.998);
    let edges: Vec<Edge> = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(alice.id)
        .unwrap();
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0].edge_type, EdgeType::RelatesTo);
    assert_eq!(
        edges[0].metadata.as_ref().unwrap()["identity_verified"],
        false
    );
    assert_eq!(edges[0].id, kith::organize::proposal_edge_id(p.op_id));
    assert_eq!(p.op_id, kith::organize::proposal_op_id(alicia.id, alice.id));
    for id in [alice.id, alicia.id] {
        assert_eq!(get(&m, id).lifecycle, Lifecycle::Tentative);
    }
    let again = organize(&m, "o", BOTH);
    assert_eq!(proposals(&again), 0);
    assert!(reasons(&again).contains(&"already_proposed".to_string()));
    let inbox = m.alias_proposals(&owner("o")).unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].status, ProposalStatus::Pending);
}

/// §8 item 16: two "I" person entities never merge nor alias, by name or
/// by hint; two events' "I" from ingest stay two.
#[test]
fn item16_personal_references_never_merge_or_alias() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "I said so.");
    let meta = json!({"entity_type": "person", "identity_status": "unresolved_reference"});
    let i1 = node("o", ev, NodeType::Entity, "I", meta.clone());
    let i2 = node("o", ev, NodeType::Entity, "I", meta);
    // A legacy pronoun entity without an identity status is one too.
    let i3 = entity("o", ev, "I", "person");
    let i4 = entity("o", ev, "i", "person");
    put(&m, &[&i1, &i2, &i3, &i4]);
    let before = graph(&m, "o");
    let r = organize(&m, "o", BOTH);
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    let r = hinted(&m, "o", i3.id, i4.id, Some(0.99));
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    assert!(reasons(&r).iter().all(|x| x == "personal_reference"));
    assert_eq!(graph(&m, "o"), before);

    // Through ingest: one "I" per event.
    for text in ["I prefer tea.", "I prefer tea."] {
        m.ingest(
            EventInput {
                owner_id: Some("p".into()),
                ..EventInput::new("user", text)
            },
            kith::IngestOptions::default(),
        )
        .unwrap();
    }
    let before = graph(&m, "p");
    let r = organize(&m, "p", BOTH);
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    assert_eq!(graph(&m, "p"), before);
}

/// Adversarial near-duplicates never merge: identifiers one digit apart,
/// amendments, Apple the company and apple the fruit, claims differing
/// only in case or validity start — even with identical vectors.
#[test]
fn adversarial_near_duplicates_never_merge() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "Notes.");
    let later = Node {
        valid_from: ts("2025-03-05T10:00:00+00:00"),
        ..claim("o", ev, "Aurora requires approval.")
    };
    let nodes = vec![
        entity("o", ev, "SR-2023-052", "document"),
        entity("o", ev, "SR-2023-053", "document"),
        entity("o", ev, "Amendment 16", "law"),
        entity("o", ev, "Amendment 17", "law"),
        entity("o", ev, "Apple", "organization"),
        entity("o", ev, "apple", "food"),
        entity("o", ev, "Jordan", "person"),
        entity("o", ev, "Jordan", "country"),
        claim("o", ev, "Aurora requires approval."),
        claim("o", ev, "Aurora requires Approval."),
        later,
    ];
    put(&m, &nodes.iter().collect::<Vec<_>>());
    for n in &nodes {
        embed(&m, n, &[1.0, 1.0, 1.0]);
    }
    let r = organize(&m, "o", BOTH);
    assert_eq!(merges(&r), 0, "{r:#?}");
    for n in &nodes {
        assert!(get(&m, n.id).lifecycle.is_active());
    }
    // Similar vectors may propose (never merge) entities of one type.
    for p in m.alias_proposals(&owner("o")).unwrap() {
        assert_eq!(p.status, ProposalStatus::Pending);
    }
}

// ---------------------------------------------------------------------------
// Merges
// ---------------------------------------------------------------------------

/// Two exact copies of a claim, each linked to an entity.
struct Copies {
    keep: Node,
    dup: Node,
    edges: Vec<Edge>,
    ev2: Uuid,
}

fn copies(m: &Memory, o: &str) -> Copies {
    let ev1 = event(m, o, "first telling");
    let ev2 = event(m, o, "second telling");
    let aurora = entity(o, ev1, "Aurora", "project");
    let ops = entity(o, ev1, "Ops", "team");
    let keep = Node {
        confidence: 0.8,
        ..claim(o, ev1, "Aurora requires approval.")
    };
    let dup = Node {
        confidence: 0.6,
        evidence_refs: vec![ev2],
        ..claim(o, ev1, "Aurora requires approval.")
    };
    put(m, &[&aurora, &ops, &keep, &dup]);
    let edges = vec![
        link(m, &aurora, &dup, EdgeType::HasFact, ev2),
        link(m, &dup, &ops, EdgeType::Mentions, ev2),
        // Between the two copies: collapses instead of becoming a loop.
        link(m, &keep, &dup, EdgeType::Supports, ev2),
    ];
    Copies {
        keep,
        dup,
        edges,
        ev2,
    }
}

/// `e` as a merge of `c` publishes it: moved from the retired copy to the
/// kept node, under its deterministic id, everything else kept.
fn moved_edge(c: &Copies, e: &Edge) -> Edge {
    let moved = |id: Uuid| if id == c.dup.id { c.keep.id } else { id };
    Edge {
        id: kith::organize::transfer_edge_id(e.id, c.dup.id, c.keep.id),
        source_id: moved(e.source_id),
        target_id: moved(e.target_id),
        ..e.clone()
    }
}

#[test]
fn exact_copies_merge_in_one_record_with_complete_values() {
    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let r = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(merges(&r), 1, "{r:#?}");
    let applied = &r.jobs[0].merges[0];
    assert_eq!(applied.keep_id, c.keep.id);
    assert_eq!(applied.retired_id, c.dup.id);
    assert_eq!(
        applied.op_id,
        merge_op_id(c.dup.id, c.keep.id, MergeKind::Duplicate, 0)
    );
    let keep = get(&m, c.keep.id);
    assert_eq!(keep.evidence_refs, vec![c.keep.evidence_refs[0], c.ev2]);
    assert_eq!(keep.lifecycle, Lifecycle::Tentative);
    let dup = get(&m, c.dup.id);
    assert_eq!(dup.lifecycle, Lifecycle::Superseded);
    assert_eq!(dup.superseded_by, Some(c.keep.id));

    // Copies keep validity, provenance, confidence, metadata, creation time.
    let g = graph(&m, "o");
    let copy_of = |e: &Edge| {
        g.edges
            .get(&kith::organize::transfer_edge_id(e.id, c.dup.id, c.keep.id))
            .cloned()
    };
    for e in &c.edges[..2] {
        let copy = copy_of(e).expect("copied");
        assert_eq!(copy, moved_edge(&c, e));
    }
    assert!(copy_of(&c.edges[2]).is_none(), "self-loop collapsed");
    let supersedes: Vec<&Edge> = g
        .edges
        .values()
        .filter(|e| e.edge_type == EdgeType::Supersedes)
        .collect();
    assert_eq!(supersedes.len(), 1);
    assert_eq!(
        (supersedes[0].source_id, supersedes[0].target_id),
        (c.keep.id, c.dup.id)
    );

    // The record: complete before/after values, original and published
    // edges, sealed with its SHA-256.
    let op = m
        .journal(
            &owner("o"),
            &JournalQuery {
                kind: Some(OperationKind::OrganizerMerged),
                ..JournalQuery::default()
            },
        )
        .unwrap()
        .remove(0);
    let rec = &op.payload["record"];
    assert_eq!(op.payload["sha256"], json!(kith_core::canon::checksum(rec)));
    assert_eq!(op.checksum, op.compute_checksum());
    assert_eq!(rec["before"]["retired"]["lifecycle"], "tentative");
    assert_eq!(rec["after"]["retired"]["lifecycle"], "superseded");
    assert_eq!(rec["original_edges"].as_array().unwrap().len(), 3);
    assert_eq!(rec["published_edges"].as_array().unwrap().len(), 3);
    assert_eq!(rec["policy"], "exact_content_provenance_validity_v1");
    assert!(m.doctor().unwrap().healthy());

    // --node finds the record by either node.
    for id in [c.keep.id, c.dup.id] {
        let found = m
            .journal(
                &owner("o"),
                &JournalQuery {
                    node: Some(id),
                    ..JournalQuery::default()
                },
            )
            .unwrap();
        assert!(found.iter().any(|o| o.id == op.id));
    }
    // Nothing more to do.
    let again = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(merges(&again), 0);
}

#[test]
fn known_abbreviation_merges_as_alias_keeping_the_longer_name() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "JS and JavaScript.");
    let js = entity("o", ev, "JS", "technology");
    let long = entity("o", ev, "JavaScript", "technology");
    let py = entity("o", ev, "Python", "technology");
    put(&m, &[&js, &long, &py]);
    let r = organize(&m, "o", BOTH);
    assert_eq!(r.jobs[1].merges.len(), 1, "{r:#?}");
    let applied = &r.jobs[1].merges[0];
    assert_eq!(applied.keep_id, long.id);
    assert_eq!(applied.basis, "abbreviation");
    assert_eq!(r.jobs[1].merge_policy, "alias_names_v2");
    assert_eq!(get(&m, js.id).superseded_by, Some(long.id));
    assert!(get(&m, py.id).lifecycle.is_active());
}

/// A memory on a SQLite store whose writes fail when `faults` says so.
fn faulty_memory() -> (tempfile::TempDir, Arc<faulty::Faults>, Memory) {
    let tmp = tempfile::tempdir().unwrap();
    let faults = Arc::new(faulty::Faults::default());
    let store = faulty::FaultyStore {
        inner: kith_store::sqlite::SqliteStore::open(
            &tmp.path().join("kith.sqlite"),
            kith_store::sqlite::OpenMode::CreateIfMissing,
        )
        .unwrap(),
        faults: faults.clone(),
    };
    (tmp, faults, Memory::with_store(Box::new(store)))
}

/// §8 item 17: an error at any write of a merge leaves nothing behind, and
/// the retry then succeeds with the same operation id; a repeated merge
/// (reversed, after the kept node was archived) returns that record and
/// reactivates nothing.
#[test]
fn item17_fault_at_every_step_leaves_no_partial_state() {
    let (_tmp, faults, m) = faulty_memory();
    let c = copies(&m, "o");
    let before = graph(&m, "o");
    let expected = merge_op_id(c.keep.id, c.dup.id, MergeKind::Duplicate, 0);
    let mut failures = 0;
    for n in 1.. {
        faults.arm(n);
        match m.organize(&owner("o"), &[Job::Deduplicate], 0) {
            Err(e) => {
                assert!(e.to_string().contains("injected fault"), "{e}");
                assert_eq!(graph(&m, "o"), before, "fault at write {n}");
                failures += 1;
            }
            Ok(r) => {
                assert_eq!(r.jobs[0].merges.len(), 1);
                assert_eq!(r.jobs[0].merges[0].op_id, expected);
                break;
            }
        }
        assert!(n < 50);
    }
    faults.arm(0);
    // update ×2, copies ×2, SUPERSEDES, record, commit.
    assert_eq!(failures, 7);
    let merged = graph(&m, "o");
    assert_eq!(merged.ops.len(), before.ops.len() + 1);

    // Archive the kept node, then ask for the merge reversed.
    let mut kept = get(&m, c.keep.id);
    kept.lifecycle = Lifecycle::Archived;
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.update_node(&kept).unwrap();
    tx.commit().unwrap();
    let archived = graph(&m, "o");
    let mut req = OrganizeRequest::new(owner("o"), vec![Job::Deduplicate]);
    req.hints.push(CandidateHint {
        a: c.dup.id,
        b: c.keep.id,
        kind: MergeKind::Duplicate,
        score: None,
    });
    let r = m.organize_with(&req).unwrap();
    assert_eq!(merges(&r), 0);
    let n = &r.jobs[0].not_applied[0];
    assert_eq!(
        (n.reason.as_str(), n.op_id),
        ("already_merged", Some(expected))
    );
    assert_eq!(graph(&m, "o"), archived, "nothing reactivated");
}

/// Non-finite numbers are refused before commit, not journaled as null.
#[test]
fn non_finite_confidence_is_refused_before_commit() {
    let (_tmp, faults, m) = faulty_memory();
    let c = copies(&m, "o");
    let before = graph(&m, "o");
    *faults.nan_node.lock().unwrap() = Some(c.dup.id);
    let err = m.organize(&owner("o"), &[Job::Deduplicate], 0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("not a finite number"), "{err}");
    *faults.nan_node.lock().unwrap() = None;
    assert_eq!(graph(&m, "o"), before);
}

// ---------------------------------------------------------------------------
// Undo
// ---------------------------------------------------------------------------

#[test]
fn undo_restores_the_graph_exactly_and_the_pair_stays_apart() {
    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let initial = graph(&m, "o");
    let first = organize(&m, "o", &[Job::Deduplicate]);
    let op1 = first.jobs[0].merges[0].op_id;

    let u = m.undo(&owner("o"), op1).unwrap();
    assert!(!u.replayed);
    assert_eq!(u.restored_nodes, vec![c.keep.id, c.dup.id]);
    assert_eq!(u.removed_edges.len(), 3);
    let undone = graph(&m, "o");
    assert_eq!(undone.nodes, initial.nodes, "nodes exactly as before");
    assert_eq!(undone.edges, initial.edges, "published edges removed");
    // Undo again: the first undo, nothing written.
    let again = m.undo(&owner("o"), op1).unwrap();
    assert!(again.replayed);
    assert_eq!(again.undo_op_id, u.undo_op_id);
    assert_eq!(graph(&m, "o"), undone);

    // The undo is the owner's "not the same": the pair is not merged again.
    let second = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(merges(&second), 0, "{second:#?}");
    let refusal = &second.jobs[0].not_applied[0];
    assert_eq!(refusal.reason, "undone_merge", "{second:#?}");
    assert_eq!(refusal.op_id, Some(u.undo_op_id));
    assert_eq!(graph(&m, "o").nodes, undone.nodes);
    let journal: Vec<OperationKind> = m
        .journal(&owner("o"), &JournalQuery::default())
        .unwrap()
        .into_iter()
        .map(|o| o.kind)
        .filter(|k| *k != OperationKind::RetrievalRecorded)
        .collect();
    assert_eq!(
        journal,
        vec![OperationKind::OrganizerMerged, OperationKind::Undo]
    );
    assert!(m.doctor().unwrap().healthy());
}

#[test]
fn undo_after_a_dependent_later_merge_is_refused_with_its_reason() {
    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let first = organize(&m, "o", &[Job::Deduplicate]).jobs[0].merges[0].op_id;
    // A third, stronger copy: the next merge retires the node kept first.
    let ev3 = event(&m, "o", "third telling");
    let strong = Node {
        confidence: 0.9,
        evidence_refs: vec![ev3],
        ..claim("o", ev3, "Aurora requires approval.")
    };
    let strong = Node {
        id: strong.id,
        ..Node {
            session_id: c.keep.session_id.clone(),
            ..strong
        }
    };
    put(&m, &[&strong]);
    let r = organize(&m, "o", &[Job::Deduplicate]);
    let later = &r.jobs[0].merges[0];
    assert_eq!((later.keep_id, later.retired_id), (strong.id, c.keep.id));
    let before = graph(&m, "o");
    let err = m.undo(&owner("o"), first).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let text = err.to_string();
    assert!(text.contains(&later.op_id.to_string()), "{text}");
    assert!(text.contains("undo that first"), "{text}");
    assert_eq!(graph(&m, "o"), before, "nothing written");
    // In reverse order both undo.
    m.undo(&owner("o"), later.op_id).unwrap();
    m.undo(&owner("o"), first).unwrap();
    for id in [c.keep.id, c.dup.id, strong.id] {
        assert_eq!(get(&m, id).lifecycle, Lifecycle::Tentative);
    }
    // Only merges and accepted aliases undo.
    let undo_op = kith::organize::undo_op_id(first);
    let err = m.undo(&owner("o"), undo_op).unwrap_err();
    assert!(err.to_string().contains("only ORGANIZER_MERGED"), "{err}");
    // Another owner's record is not found.
    let err = m.undo(&owner("x"), first).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

// ---------------------------------------------------------------------------
// The inbox (§8 item 18)
// ---------------------------------------------------------------------------

fn proposed(m: &Memory, o: &str, x: &str, y: &str) -> (Node, Node, Uuid) {
    let ev = event(m, o, &format!("{x} and {y}"));
    let a = entity(o, ev, x, "person");
    let b = entity(o, ev, y, "person");
    put(m, &[&a, &b]);
    let r = hinted(m, o, a.id, b.id, Some(0.95));
    assert_eq!(proposals(&r), 1, "{r:#?}");
    (a, b, r.jobs[1].proposals[0].op_id)
}

/// §8 item 18: accept publishes a verified edge beside the proposal (both
/// nodes stay); an identical retry replays; a conflicting one fails;
/// reject needs a reason; a changed node makes the proposal stale.
#[test]
fn item18_review_accepts_once_and_refuses_conflicts() {
    let (_t, _d, m) = common::pack();
    let o = owner("o");
    let (a, b, op) = proposed(&m, "o", "Alice", "Alicia");
    let err = m
        .review_alias(&o, op, Decision::Reject, Some("  "), None)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");

    let acc = m
        .review_alias(&o, op, Decision::Accept, Some("same person"), Some("me"))
        .unwrap();
    assert!(!acc.replayed);
    let edges = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(a.id)
        .unwrap();
    let relates: Vec<&Edge> = edges
        .iter()
        .filter(|e| e.edge_type == EdgeType::RelatesTo)
        .collect();
    assert_eq!(relates.len(), 2);
    let verified: Vec<&&Edge> = relates
        .iter()
        .filter(|e| e.metadata.as_ref().unwrap()["identity_verified"] == true)
        .collect();
    assert_eq!(verified.len(), 1);
    assert_eq!(Some(verified[0].id), acc.edge_id);
    assert_eq!(
        (verified[0].source_id, verified[0].target_id),
        (a.id.min(b.id), a.id.max(b.id))
    );
    for id in [a.id, b.id] {
        assert!(get(&m, id).lifecycle.is_active());
    }
    // The decision record holds the whole proposal and the reviewer input.
    let rec = m
        .journal(
            &o,
            &JournalQuery {
                kind: Some(OperationKind::AliasProposalAccepted),
                ..JournalQuery::default()
            },
        )
        .unwrap()
        .remove(0);
    assert_eq!(rec.id, acc.review_op_id);
    let proposal_op = m
        .journal(
            &o,
            &JournalQuery {
                kind: Some(OperationKind::AliasProposed),
                ..JournalQuery::default()
            },
        )
        .unwrap()
        .remove(0);
    assert_eq!(rec.payload["record"]["proposal"], proposal_op.payload);
    assert_eq!(rec.payload["record"]["reason"], "same person");
    assert_eq!(rec.payload["record"]["reviewer_id"], "me");

    let before = graph(&m, "o");
    let replay = m
        .review_alias(&o, op, Decision::Accept, Some("same person"), Some("me"))
        .unwrap();
    assert!(replay.replayed);
    assert_eq!(replay.review_op_id, acc.review_op_id);
    assert_eq!(replay.edge_id, acc.edge_id);
    let err = m
        .review_alias(
            &o,
            op,
            Decision::Reject,
            Some("changed my mind"),
            Some("me"),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(matches!(
        err,
        kith::Error::Organizer(kith::OrganizerError::ReviewConflict { .. })
    ));
    assert_eq!(graph(&m, "o"), before);
    assert_eq!(
        m.alias_proposals(&o).unwrap()[0].status,
        ProposalStatus::Accepted
    );

    // A node changed since the proposal: accepting it is stale.
    let (c, _d2, op2) = proposed(&m, "o", "Robert", "Roberta");
    let mut changed = get(&m, c.id);
    changed.lifecycle = Lifecycle::Stable;
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.update_node(&changed).unwrap();
    tx.commit().unwrap();
    let err = m
        .review_alias(&o, op2, Decision::Accept, None, None)
        .unwrap_err();
    assert!(
        matches!(
            err,
            kith::Error::Organizer(kith::OrganizerError::StaleProposal { node, .. }) if node == c.id
        ),
        "{err}"
    );
    // Another owner cannot see it.
    let err = m
        .review_alias(&owner("x"), op2, Decision::Accept, None, None)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn rejected_pairs_are_never_proposed_again() {
    let (_t, _d, m) = common::pack();
    let o = owner("o");
    let (a, b, op) = proposed(&m, "o", "Alice", "Alicia");
    let rej = m
        .review_alias(&o, op, Decision::Reject, Some("different people"), None)
        .unwrap();
    assert_eq!(rej.edge_id, None);
    let r = hinted(&m, "o", b.id, a.id, Some(0.99));
    assert_eq!(proposals(&r), 0);
    assert!(
        reasons(&r).contains(&"proposal_rejected".to_string()),
        "{r:#?}"
    );
    assert_eq!(
        m.alias_proposals(&o).unwrap()[0].status,
        ProposalStatus::Rejected
    );
    // A rejection is not undoable.
    assert!(m.undo(&o, rej.review_op_id).is_err());
}

#[test]
fn undoing_an_acceptance_removes_the_verified_edge_and_reopens_the_proposal() {
    let (_t, _d, m) = common::pack();
    let o = owner("o");
    let (a, _b, op) = proposed(&m, "o", "Alice", "Alicia");
    let acc = m
        .review_alias(&o, op, Decision::Accept, None, None)
        .unwrap();
    let u = m.undo(&o, acc.review_op_id).unwrap();
    assert_eq!(u.removed_edges, vec![acc.edge_id.unwrap()]);
    let edges = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(a.id)
        .unwrap();
    assert_eq!(edges.len(), 1, "the unverified proposal stays");
    assert_eq!(
        m.alias_proposals(&o).unwrap()[0].status,
        ProposalStatus::Pending
    );
    // Decided again: a new generation of the decision record.
    let again = m
        .review_alias(&o, op, Decision::Reject, Some("not the same"), None)
        .unwrap();
    assert_ne!(again.review_op_id, acc.review_op_id);
    assert!(m.doctor().unwrap().healthy());
}

/// An unverified proposal never brings the other entity's claims into
/// retrieval's graph path.
#[test]
fn unverified_alias_stays_out_of_retrieval_graph_path() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "facts");
    let alice = entity("o", ev, "Alice", "person");
    let alicia = entity("o", ev, "Alicia", "person");
    let tea = Node {
        metadata: Some(json!({"subject": "Alice", "predicate": "likes", "object": "tea"})),
        ..claim("o", ev, "Alice likes tea.")
    };
    let chess = Node {
        metadata: Some(json!({"subject": "Alicia", "predicate": "plays", "object": "chess"})),
        ..claim("o", ev, "Alicia plays chess.")
    };
    put(&m, &[&alice, &alicia, &tea, &chess]);
    // Open links (no validity end): an ended link is history, which the
    // graph path never follows, whatever the aliases.
    open_link(&m, &alice, &tea, EdgeType::HasFact, ev);
    open_link(&m, &alicia, &chess, EdgeType::HasFact, ev);
    let r = hinted(&m, "o", alice.id, alicia.id, Some(0.99));
    assert_eq!(proposals(&r), 1);
    let req = common::graph_only("o", "What does Alicia do?");
    let got: Vec<Uuid> = m
        .retrieve(&req)
        .unwrap()
        .results
        .iter()
        .map(|i| i.node_id)
        .collect();
    assert!(got.contains(&chess.id), "{got:?}");
    assert!(!got.contains(&tea.id), "{got:?}");
}

#[test]
fn doctor_reports_a_record_that_does_not_match_its_sha256() {
    let (_t, dir, m) = common::pack();
    let c = copies(&m, "o");
    let _ = c;
    let op = organize(&m, "o", &[Job::Deduplicate]).jobs[0].merges[0].op_id;
    drop(m);
    let conn = rusqlite::Connection::open(dir.join("kith.sqlite")).unwrap();
    // Tamper with the record and recompute the outer checksum, as a
    // careless edit would: only the record's own SHA-256 catches it.
    let payload: String = conn
        .query_row(
            "SELECT payload FROM operations WHERE id = ?1",
            [op.to_string()],
            |r| r.get(0),
        )
        .unwrap();
    let mut v: Value = serde_json::from_str(&payload).unwrap();
    v["record"]["basis"] = json!("forged");
    let m = Memory::open(&dir).unwrap();
    let mut stored = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .get_operation(op)
        .unwrap()
        .unwrap();
    stored.payload = v.clone();
    let checksum = stored.compute_checksum();
    conn.execute(
        "UPDATE operations SET payload = ?2, checksum = ?3 WHERE id = ?1",
        [
            op.to_string(),
            kith_core::canon::to_canonical_string(&v),
            checksum,
        ],
    )
    .unwrap();
    let report = m.doctor().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("does not match its SHA-256")),
        "{report:?}"
    );
    let err = m.undo(&owner("o"), op).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupted, "{err}");
}

/// A hinted pair naming another owner's node learns nothing about it: the
/// refusal is the same "not_found" as for a node that does not exist.
#[test]
fn hints_naming_another_owners_node_answer_not_found() {
    let (_t, _d, m) = common::pack();
    let ev_o = event(&m, "o", "Postgres notes.");
    let ev_p = event(&m, "p", "PostgreSQL notes.");
    let mine = entity("o", ev_o, "Postgres", "product");
    let theirs = entity("p", ev_p, "PostgreSQL", "product");
    put(&m, &[&mine, &theirs]);
    let before = graph(&m, "p");
    let r = hinted(&m, "o", mine.id, theirs.id, Some(0.99));
    let missing = hinted(&m, "o", mine.id, Uuid::new_v4(), Some(0.99));
    assert_eq!(merges(&r) + proposals(&r), 0, "{r:#?}");
    assert!(reasons(&r).iter().all(|x| x == "not_found"), "{r:#?}");
    let details = |r: &OrganizeReport| -> Vec<String> {
        r.jobs
            .iter()
            .flat_map(|j| {
                j.not_applied
                    .iter()
                    .map(|n| format!("{} {}", n.reason, n.detail))
            })
            .collect()
    };
    assert_eq!(details(&r), details(&missing));
    assert_eq!(graph(&m, "p"), before);
}

/// A run that stops at its budget examines the newest pairs first, so a
/// pair refused on every run cannot keep a new duplicate from being merged.
#[test]
fn a_small_budget_reaches_new_duplicates_before_old_refusals() {
    let (_t, _d, m) = common::pack();
    let o = "o";
    let ev = event(&m, o, "Aurora requires approval.");
    // Old: the same text with another validity start, refused every run.
    let old_a = claim(o, ev, "Aurora requires approval.");
    let old_b = Node {
        valid_from: ts("2025-04-01T00:00:00+00:00"),
        ..claim(o, ev, "Aurora requires approval.")
    };
    put(&m, &[&old_a, &old_b]);
    // New: an exact copy pair, written later.
    let new_a = claim(o, ev, "Aurora needs a second signature.");
    let new_b = claim(o, ev, "Aurora needs a second signature.");
    put(&m, &[&new_a]);
    put(&m, &[&new_b]);
    let r = m.organize(&owner(o), &[Job::Deduplicate], 1).unwrap();
    let job = &r.jobs[0];
    assert_eq!(job.candidates, 1);
    assert!(job.budget_exhausted);
    assert_eq!(merges(&r), 1, "{r:#?}");
    let merged = [job.merges[0].keep_id, job.merges[0].retired_id];
    assert!(merged.contains(&new_a.id) && merged.contains(&new_b.id));
    // Later runs reach the old pairs (the two claims, and each with the
    // note of the same text) and refuse them again.
    let r = m.organize(&owner(o), &[Job::Deduplicate], 1).unwrap();
    assert_eq!((merges(&r), r.jobs[0].candidates), (0, 1));
    let r = m.organize(&owner(o), &[Job::Deduplicate], 100).unwrap();
    assert_eq!((merges(&r), r.jobs[0].candidates), (0, 3));
    assert!(!r.jobs[0].budget_exhausted);
}

// ---------------------------------------------------------------------------
// Audit against spec 000 (organizer merges, alias proposals, the inbox)
// ---------------------------------------------------------------------------

/// Claim subject and predicate metadata are part of the boundary: two
/// claims with byte-equal text, validity and provenance but another
/// subject or predicate never merge, and the reason names the field.
#[test]
fn claims_differing_only_in_subject_or_predicate_never_merge() {
    let (_t, _d, m) = common::pack();
    for (o, key, value) in [("s", "subject", "Aurora team"), ("p", "predicate", "needs")] {
        let ev = event(&m, o, "Deploy policy.");
        let a = claim(o, ev, "Aurora requires approval.");
        let mut meta = a.metadata.clone().unwrap();
        meta[key] = json!(value);
        let b = Node {
            id: Uuid::new_v4(),
            metadata: Some(meta),
            ..a.clone()
        };
        put(&m, &[&a, &b]);
        let before = graph(&m, o);
        let r = organize(&m, o, BOTH);
        assert_eq!(r.jobs[0].candidates, 1, "{key}: {r:#?}");
        assert_eq!(merges(&r), 0, "{key}: {r:#?}");
        let n = &r.jobs[0].not_applied[0];
        assert_eq!(n.reason, "different_metadata", "{key}");
        assert_eq!(n.detail, format!("claim {key} differs"));
        assert_eq!(graph(&m, o), before, "{key}: nothing changes");
    }
}

/// Named entities keep stripped, case-insensitive name matching for
/// duplicates (within the metadata and provenance boundary).
#[test]
fn entity_duplicates_match_names_stripped_and_case_insensitively() {
    let (_t, _d, m) = common::pack();
    let ev1 = event(&m, "o", "Aster.");
    let ev2 = event(&m, "o", "aster.");
    let a = Node {
        confidence: 0.7,
        ..entity("o", ev1, "Aster", "organization")
    };
    let b = entity("o", ev2, "  aster ", "organization");
    put(&m, &[&a, &b]);
    let r = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(merges(&r), 1, "{r:#?}");
    let applied = &r.jobs[0].merges[0];
    assert_eq!((applied.keep_id, applied.retired_id), (a.id, b.id));
    assert_eq!(applied.basis, "exact_copy");
    assert_eq!(get(&m, a.id).evidence_refs, vec![ev1, ev2]);
    assert_eq!(get(&m, a.id).content, "Aster", "the kept name is unchanged");
}

/// §4 item 18: the duplicate kept is the one with the higher confidence,
/// then more evidence, then the older.
#[test]
fn duplicate_canonical_prefers_confidence_then_evidence_then_age() {
    let (_t, _d, m) = common::pack();
    let kept = |o: &str, a: Node, b: Node| -> Uuid {
        put(&m, &[&a, &b]);
        let r = organize(&m, o, &[Job::Deduplicate]);
        assert_eq!(merges(&r), 1, "{r:#?}");
        r.jobs[0].merges[0].keep_id
    };
    // More evidence wins at equal confidence, whatever the age.
    let ev1 = event(&m, "e", "one");
    let ev2 = event(&m, "e", "two");
    let more = Node {
        evidence_refs: vec![ev1, ev2],
        created_at: ts("2025-03-02T10:00:00+00:00"),
        ..claim("e", ev1, "Aurora requires approval.")
    };
    let less = claim("e", ev1, "Aurora requires approval.");
    assert_eq!(kept("e", less, more.clone()), more.id);
    // Equal confidence and evidence: the older wins, whatever the id.
    let ev = event(&m, "t", "one");
    let older = claim("t", ev, "Aurora requires approval.");
    let newer = Node {
        created_at: ts("2025-03-02T10:00:00+00:00"),
        ..claim("t", ev, "Aurora requires approval.")
    };
    assert_eq!(kept("t", newer, older.clone()), older.id);
}

/// A case variant and an equal normalised name merge as aliases at the
/// default threshold; a stricter configured threshold leaves a case
/// variant alone but still merges a known abbreviation.
#[test]
fn alias_names_merge_at_the_configured_threshold() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "OpenAI and Open-AI.");
    let a = entity("o", ev, "OpenAI", "organization");
    let b = entity("o", ev, "Open-AI", "organization");
    put(&m, &[&a, &b]);
    let r = organize(&m, "o", &[Job::AliasResolve]);
    assert_eq!(merges(&r), 1, "{r:#?}");
    assert_eq!(r.jobs[0].merges[0].basis, "normalised_name");
    assert_eq!(r.jobs[0].merges[0].keep_id, b.id, "the longer name");

    let ev = event(&m, "p", "Kubernetes and K8S and k8s.");
    let k8s = entity("p", ev, "K8S", "technology");
    let long = entity("p", ev, "Kubernetes", "technology");
    let lower = entity("p", ev, "k8s", "technology");
    put(&m, &[&k8s, &long, &lower]);
    let mut req = OrganizeRequest::new(owner("p"), vec![Job::AliasResolve]);
    req.alias_threshold = 0.95;
    let r = m.organize_with(&req).unwrap();
    let bases: Vec<&str> = r.jobs[0].merges.iter().map(|x| x.basis.as_str()).collect();
    assert_eq!(bases, vec!["abbreviation", "abbreviation"], "{r:#?}");
    assert!(r.jobs[0].merges.iter().all(|x| x.keep_id == long.id));
    // At 0.95 the case variant alone would not have merged.
    let ev = event(&m, "q", "Aster and aster.");
    let x = entity("q", ev, "Aster", "organization");
    let y = entity("q", ev, "ASTER", "organization");
    put(&m, &[&x, &y]);
    let mut req = OrganizeRequest::new(owner("q"), vec![Job::AliasResolve]);
    req.alias_threshold = 0.95;
    let before = graph(&m, "q");
    let r = m.organize_with(&req).unwrap();
    assert_eq!(merges(&r), 0, "{r:#?}");
    assert_eq!(reasons(&r), vec!["below_threshold"]);
    assert_eq!(graph(&m, "q"), before);
    let r = organize(&m, "q", &[Job::AliasResolve]);
    assert_eq!(r.jobs[0].merges[0].basis, "case_variant", "{r:#?}");
}

/// The owner's reference entity is never merged or alias-linked either.
#[test]
fn owner_reference_entities_never_merge_or_alias() {
    let (_t, _d, m) = common::pack();
    let ev = event(&m, "o", "I said so.");
    let meta = json!({"entity_type": "person", "identity_status": "owner_reference"});
    let a = node("o", ev, NodeType::Entity, "I", meta.clone());
    let b = node("o", ev, NodeType::Entity, "i", meta);
    put(&m, &[&a, &b]);
    embed(&m, &a, &[1.0, 0.0]);
    embed(&m, &b, &[1.0, 0.0]);
    let before = graph(&m, "o");
    let r = organize(&m, "o", BOTH);
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    let r = hinted(&m, "o", a.id, b.id, Some(0.99));
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    assert!(!reasons(&r).is_empty());
    assert!(reasons(&r).iter().all(|x| x == "personal_reference"));
    assert_eq!(graph(&m, "o"), before);
}

/// Two separately stored messages with the same text are two episodes:
/// each has its own validity start, so deduplicate keeps both.
#[test]
fn separately_admitted_observations_with_the_same_text_stay_distinct() {
    let (_t, _d, m) = common::pack();
    let mut notes = Vec::new();
    for _ in 0..2 {
        let r = m
            .store(EventInput {
                owner_id: Some("o".into()),
                session_id: Some("s1".into()),
                ..EventInput::new("user", "Deployed the release.")
            })
            .unwrap();
        notes.push(r.node_id);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let before = graph(&m, "o");
    let r = organize(&m, "o", BOTH);
    assert_eq!(r.jobs[0].candidates, 1, "{r:#?}");
    assert_eq!(merges(&r), 0, "{r:#?}");
    assert_eq!(reasons(&r), vec!["different_valid_from"]);
    assert_eq!(graph(&m, "o"), before);
    for id in notes {
        assert!(get(&m, id).lifecycle.is_active());
    }
}

/// A copy an earlier interrupted attempt left under the copy's
/// deterministic id is recognised (not written twice); a different value
/// under that id aborts the merge and writes nothing.
#[test]
fn exact_partial_copies_are_recognised_and_conflicting_ones_abort() {
    let copy_of = moved_edge;
    let insert = |m: &Memory, e: &Edge| {
        let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
        tx.insert_edge(e).unwrap();
        tx.commit().unwrap();
    };

    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let left = copy_of(&c, &c.edges[0]);
    insert(&m, &left);
    let r = organize(&m, "o", &[Job::Deduplicate]);
    assert_eq!(merges(&r), 1, "{r:#?}");
    let rec = m.journal(&owner("o"), &JournalQuery::default()).unwrap();
    let rec = rec
        .iter()
        .find(|op| op.kind == OperationKind::OrganizerMerged)
        .unwrap();
    assert_eq!(
        rec.payload["record"]["recognised_edges"],
        json!([left.id]),
        "{:#}",
        rec.payload
    );
    let g = graph(&m, "o");
    assert_eq!(g.edges.get(&left.id), Some(&left), "left as it was");
    assert!(g.edges.contains_key(&copy_of(&c, &c.edges[1]).id));
    assert!(m.doctor().unwrap().healthy());

    let (_t2, _d2, m2) = common::pack();
    let c = copies(&m2, "o");
    let conflicting = Edge {
        confidence: 0.1,
        ..copy_of(&c, &c.edges[0])
    };
    insert(&m2, &conflicting);
    let before = graph(&m2, "o");
    let err = m2
        .organize(&owner("o"), &[Job::Deduplicate], 0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            kith::Error::Organizer(kith::OrganizerError::CopyConflict { edge, .. }) if edge == conflicting.id
        ),
        "{err}"
    );
    assert_eq!(graph(&m2, "o"), before, "nothing written");
}

/// Two people on Alice and Alicia with similar vectors, for proposals.
fn alice_and_alicia(m: &Memory, o: &str) -> (Node, Node) {
    let ev = event(m, o, "Alice and Alicia.");
    let alice = entity(o, ev, "Alice", "person");
    let alicia = entity(o, ev, "Alicia", "person");
    put(m, &[&alice, &alicia]);
    embed(m, &alice, &[1.0, 0.0447]);
    embed(m, &alicia, &[1.0, 0.0]);
    (alice, alicia)
}

/// A new proposal publishes its edge and a checksummed `ALIAS_PROPOSED`
/// record holding both complete nodes and the exact edge, in one
/// transaction: a fault at any write leaves nothing, and the retry
/// publishes under the same ids.
#[test]
fn proposals_publish_edge_and_record_atomically_with_complete_inputs() {
    let (_tmp, faults, m) = faulty_memory();
    let (alice, alicia) = alice_and_alicia(&m, "o");
    let before = graph(&m, "o");
    let mut failures = 0;
    for n in 1.. {
        faults.arm(n);
        match m.organize(&owner("o"), &[Job::AliasResolve], 0) {
            Err(e) => {
                assert!(e.to_string().contains("injected fault"), "{e}");
                assert_eq!(graph(&m, "o"), before, "fault at write {n}");
                failures += 1;
            }
            Ok(r) => {
                assert_eq!(proposals(&r), 1, "{r:#?}");
                break;
            }
        }
        assert!(n < 20);
    }
    faults.arm(0);
    // edge, record, commit.
    assert_eq!(failures, 3);
    let op_id = kith::organize::proposal_op_id(alice.id, alicia.id);
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    let op = tx.get_operation(op_id).unwrap().expect("the record");
    let edge = tx
        .get_edge(kith::organize::proposal_edge_id(op_id))
        .unwrap()
        .expect("the edge");
    drop(tx);
    assert_eq!(op.kind, OperationKind::AliasProposed);
    assert_eq!(op.checksum, op.compute_checksum());
    let rec = &op.payload["record"];
    assert_eq!(op.payload["sha256"], json!(kith_core::canon::checksum(rec)));
    let (a, b) = kith::organize::ordered(alice.id, alicia.id);
    for (key, id) in [("a", a), ("b", b)] {
        let node = get(&m, id);
        assert_eq!(rec["nodes"][key], serde_json::to_value(&node).unwrap());
    }
    assert_eq!(rec["edge"], serde_json::to_value(&edge).unwrap());
    assert_eq!((edge.source_id, edge.target_id), (a, b));
    assert_eq!(
        edge.metadata.as_ref().unwrap()["alias_operation_id"],
        json!(op_id)
    );
    assert!(m.doctor().unwrap().healthy());
}

/// Two organizer passes at once publish one proposal and one edge; two
/// overlapping duplicate passes keep the union of all evidence.
#[test]
fn concurrent_organizer_passes_publish_once_and_keep_the_evidence_union() {
    let (_t, dir, m) = common::pack();
    let (alice, _alicia) = alice_and_alicia(&m, "o");
    let evs: Vec<Uuid> = (0..3)
        .map(|i| event(&m, "o", &format!("telling {i}")))
        .collect();
    let tellings: Vec<Node> = evs
        .iter()
        .map(|ev| claim("o", *ev, "Aurora requires approval."))
        .collect();
    put(&m, &tellings.iter().collect::<Vec<_>>());
    let barrier = std::sync::Barrier::new(2);
    let reports: Vec<OrganizeReport> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let (dir, barrier) = (&dir, &barrier);
                s.spawn(move || {
                    let m = Memory::open(dir).unwrap();
                    barrier.wait();
                    m.organize(&owner("o"), BOTH, 0).unwrap()
                })
            })
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        reports.iter().map(proposals).sum::<usize>(),
        1,
        "{reports:#?}"
    );
    let relates: Vec<Edge> = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(alice.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::RelatesTo)
        .collect();
    assert_eq!(relates.len(), 1);
    assert_eq!(m.alias_proposals(&owner("o")).unwrap().len(), 1);
    let active: Vec<Node> = tellings
        .iter()
        .map(|n| get(&m, n.id))
        .filter(|n| n.lifecycle.is_active())
        .collect();
    assert_eq!(active.len(), 1, "{reports:#?}");
    let mut evidence = active[0].evidence_refs.clone();
    evidence.sort();
    let mut all = evs.clone();
    all.sort();
    assert_eq!(evidence, all, "no merge overwrote another's evidence");
    assert!(m.doctor().unwrap().healthy());
}

/// §8 item 18: two reviewers accepting at once leave one decision record
/// and one verified edge; an accept racing a reject leaves one decision
/// and the other fails as a conflict.
#[test]
fn concurrent_reviews_leave_one_decision() {
    let (_t, dir, m) = common::pack();
    let o = owner("o");
    let (a, _b, op) = proposed(&m, "o", "Alice", "Alicia");
    let (_c, _d, op2) = proposed(&m, "o", "Robert", "Roberta");
    let race = |decisions: [Decision; 2], proposal: Uuid| {
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let runs: Vec<_> = decisions
                .into_iter()
                .map(|d| {
                    let (dir, barrier) = (&dir, &barrier);
                    s.spawn(move || {
                        let m = Memory::open(dir).unwrap();
                        barrier.wait();
                        m.review_alias(&owner("o"), proposal, d, Some("checked"), Some("me"))
                    })
                })
                .collect();
            runs.into_iter()
                .map(|h| h.join().unwrap())
                .collect::<Vec<_>>()
        })
    };
    let got = race([Decision::Accept, Decision::Accept], op);
    let outcomes: Vec<ReviewOutcomeLite> = got
        .into_iter()
        .map(|r| {
            let r = r.unwrap();
            (r.review_op_id, r.edge_id, r.replayed)
        })
        .collect();
    assert_eq!(outcomes[0].0, outcomes[1].0);
    assert_eq!(outcomes[0].1, outcomes[1].1);
    assert_eq!(
        outcomes.iter().filter(|x| !x.2).count(),
        1,
        "one wrote, one replayed: {outcomes:?}"
    );
    let verified = m
        .store_backend()
        .begin(TxMode::Read)
        .unwrap()
        .edges_of(a.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.metadata.as_ref().unwrap()["identity_verified"] == true)
        .count();
    assert_eq!(verified, 1);

    let got = race([Decision::Accept, Decision::Reject], op2);
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 1, "{got:?}");
    let err = got.into_iter().find_map(Result::err).unwrap();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    let decisions = m
        .journal(&o, &JournalQuery::default())
        .unwrap()
        .into_iter()
        .filter(|op| {
            matches!(
                op.kind,
                OperationKind::AliasProposalAccepted | OperationKind::AliasProposalRejected
            )
        })
        .count();
    assert_eq!(decisions, 2, "one per proposal");
}

type ReviewOutcomeLite = (Uuid, Option<Uuid>, bool);

/// A rejection publishes no edge at all: the graph gains only its record.
#[test]
fn rejection_publishes_no_edge() {
    let (_t, _d, m) = common::pack();
    let (_a, _b, op) = proposed(&m, "o", "Alice", "Alicia");
    let before = graph(&m, "o");
    let rej = m
        .review_alias(&owner("o"), op, Decision::Reject, Some("different"), None)
        .unwrap();
    let after = graph(&m, "o");
    assert_eq!(after.nodes, before.nodes);
    assert_eq!(after.edges, before.edges);
    assert_eq!(after.ops.len(), before.ops.len() + 1);
    assert!(after.ops.contains(&rej.review_op_id));
}

/// §4 item 24: an unverified alias edge an earlier version (or an import)
/// wrote under a random id already links the pair: the organizer reuses
/// it and writes nothing, neither a second edge nor a record inventing the
/// old edge's history.
#[test]
fn a_random_id_proposal_edge_is_reused_not_duplicated() {
    let (_t, _d, m) = common::pack();
    let (alice, alicia) = alice_and_alicia(&m, "o");
    let legacy = Edge {
        id: Uuid::new_v4(),
        owner_id: owner("o"),
        scope: ScopeId::personal(),
        source_id: alicia.id,
        target_id: alice.id,
        edge_type: EdgeType::RelatesTo,
        confidence: 0.9,
        valid_from: ts("2025-03-01T10:00:00+00:00"),
        valid_to: None,
        provenance_event_id: None,
        metadata: Some(json!({"relation": "alias", "identity_verified": false})),
        created_at: ts("2025-03-01T10:00:00+00:00"),
    };
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.insert_edge(&legacy).unwrap();
    tx.commit().unwrap();
    let before = graph(&m, "o");
    let r = organize(&m, "o", BOTH);
    assert_eq!((merges(&r), proposals(&r)), (0, 0), "{r:#?}");
    let n = r.jobs[1]
        .not_applied
        .iter()
        .find(|n| n.reason == "already_proposed")
        .unwrap_or_else(|| panic!("{r:#?}"));
    assert!(n.detail.contains(&legacy.id.to_string()), "{}", n.detail);
    assert_eq!(n.op_id, None, "no record is invented");
    assert_eq!(graph(&m, "o"), before);
    assert!(m.alias_proposals(&owner("o")).unwrap().is_empty());
}

/// An unverified proposal stays queryable as an edge, but the ordinary
/// neighbourhood of a node does not reach the other entity through it; a
/// caller who opts in does, and a verified alias is ordinary.
#[test]
fn unverified_alias_is_left_out_of_the_neighbourhood_unless_asked() {
    let (_t, _d, m) = common::pack();
    let o = owner("o");
    let (a, b, op) = proposed(&m, "o", "Alice", "Alicia");
    let edge = kith::organize::proposal_edge_id(op);
    let view = m.node_view(&o, a.id).unwrap();
    assert!(
        view.edges.iter().any(|e| e.id == edge),
        "queryable as an edge"
    );
    assert!(!view.neighbours.iter().any(|n| n.id == b.id), "{view:#?}");
    let opted = m.node_view_with(&o, a.id, true).unwrap();
    assert!(opted.neighbours.iter().any(|n| n.id == b.id));
    m.review_alias(&o, op, Decision::Accept, None, None)
        .unwrap();
    let view = m.node_view(&o, a.id).unwrap();
    assert!(view.neighbours.iter().any(|n| n.id == b.id), "verified");
}

/// §4 items 16 and 19: vectors make duplicate candidates from cosine 0.92
/// and alias candidates from 0.85; below, a pair is not even a candidate,
/// and above, duplicates still need equal text and aliases only propose.
#[test]
fn vector_candidates_start_at_their_thresholds() {
    let (_t, _d, m) = common::pack();
    // cos([1, t], [1, 0]) = 1 / sqrt(1 + t²)
    let t = |cos: f32| (1.0 / (cos * cos) - 1.0).sqrt();
    for (o, cos, dup_candidates) in [("d90", 0.90, 0), ("d95", 0.95, 1)] {
        let ev = event(&m, o, "policy");
        let x = claim(o, ev, "Aurora requires approval.");
        let y = claim(o, ev, "Aurora needs sign-off.");
        put(&m, &[&x, &y]);
        embed(&m, &x, &[1.0, t(cos)]);
        embed(&m, &y, &[1.0, 0.0]);
        let r = organize(&m, o, &[Job::Deduplicate]);
        assert_eq!(r.jobs[0].candidates, dup_candidates, "{o}: {r:#?}");
        assert_eq!(merges(&r), 0, "{o}");
    }
    for (o, cos, alias_candidates) in [("a84", 0.84, 0), ("a86", 0.86, 1)] {
        let ev = event(&m, o, "people");
        let x = entity(o, ev, "Alice", "person");
        let y = entity(o, ev, "Alicia", "person");
        put(&m, &[&x, &y]);
        embed(&m, &x, &[1.0, t(cos)]);
        embed(&m, &y, &[1.0, 0.0]);
        let r = organize(&m, o, BOTH);
        assert_eq!(r.jobs[0].candidates, 0, "{o}: no duplicate candidate");
        assert_eq!(r.jobs[1].candidates, alias_candidates, "{o}: {r:#?}");
        assert_eq!(proposals(&r), alias_candidates, "{o}");
        assert_eq!(merges(&r), 0, "{o}");
    }
}

/// A retry of a committed merge returns its record unchanged (same bytes
/// and checksum); a pair naming one node twice is no candidate at all.
#[test]
fn a_retried_merge_keeps_its_record_bytes_and_self_pairs_are_ignored() {
    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let op = organize(&m, "o", &[Job::Deduplicate]).jobs[0].merges[0].op_id;
    let read = |m: &Memory| {
        m.store_backend()
            .begin(TxMode::Read)
            .unwrap()
            .get_operation(op)
            .unwrap()
            .unwrap()
    };
    let first = read(&m);
    let before = graph(&m, "o");
    let mut req = OrganizeRequest::new(owner("o"), vec![Job::Deduplicate]);
    req.hints.push(CandidateHint {
        a: c.dup.id,
        b: c.keep.id,
        kind: MergeKind::Duplicate,
        score: None,
    });
    let r = m.organize_with(&req).unwrap();
    assert_eq!(r.jobs[0].not_applied[0].op_id, Some(op), "{r:#?}");
    let again = read(&m);
    assert_eq!(again.checksum, first.checksum);
    assert_eq!(
        kith_core::canon::to_canonical_string(&again.payload),
        kith_core::canon::to_canonical_string(&first.payload)
    );
    assert_eq!(again.created_at, first.created_at);
    assert_eq!(graph(&m, "o"), before);

    let mut req = OrganizeRequest::new(owner("o"), BOTH.to_vec());
    for kind in [MergeKind::Duplicate, MergeKind::Alias] {
        req.hints.push(CandidateHint {
            a: c.keep.id,
            b: c.keep.id,
            kind,
            score: Some(0.99),
        });
    }
    let r = m.organize_with(&req).unwrap();
    assert_eq!(
        (candidates(&r), merges(&r), proposals(&r)),
        (0, 0, 0),
        "{r:#?}"
    );
    assert_eq!(graph(&m, "o"), before);
}

// ---------------------------------------------------------------------------
// Issue 13 items 11, 12, 14 and 15
// ---------------------------------------------------------------------------

#[path = "common/identity_bodies.rs"]
mod identity_bodies;

/// Item 11: an undo records "not the same"; the next organize leaves the
/// pair apart until an accept recorded after the undo.
#[test]
fn undo_sticks_until_an_accept() {
    let (_t, _d, m) = common::pack();
    identity_bodies::undo_sticks(&m);
}

/// Item 11: a changed name is new evidence, so an undone pair may merge
/// again on it (admission judges the new names).
#[test]
fn a_changed_name_reopens_an_undone_pair() {
    let (_t, _d, m) = common::pack();
    let o = owner("o");
    let ev = event(&m, "o", "JS and JavaScript.");
    let js = entity("o", ev, "JS", "technology");
    let long = entity("o", ev, "JavaScript", "technology");
    put(&m, &[&js, &long]);
    let op = organize(&m, "o", BOTH).jobs[1].merges[0].op_id;
    m.undo(&o, op).unwrap();
    assert_eq!(merges(&organize(&m, "o", BOTH)), 0);
    // A correction renames the short one: a different name, new evidence.
    let mut renamed = get(&m, js.id);
    renamed.content = "ECMAScript".into();
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.update_node(&renamed).unwrap();
    tx.commit().unwrap();
    let r = organize(&m, "o", BOTH);
    assert_eq!(merges(&r), 1, "{r:#?}");
    assert_eq!(r.jobs[1].merges[0].basis, "abbreviation");
}

/// Item 11 for duplicates: an undone exact copy stays two, in both jobs.
#[test]
fn an_undone_duplicate_is_not_merged_again() {
    let (_t, _d, m) = common::pack();
    let c = copies(&m, "o");
    let op = organize(&m, "o", &[Job::Deduplicate]).jobs[0].merges[0].op_id;
    let u = m.undo(&owner("o"), op).unwrap();
    let r = organize(&m, "o", BOTH);
    assert_eq!(merges(&r), 0, "{r:#?}");
    assert!(r.jobs[0]
        .not_applied
        .iter()
        .any(|n| n.reason == "undone_merge" && n.op_id == Some(u.undo_op_id)));
    assert!(get(&m, c.dup.id).lifecycle.is_active());
}

/// Item 12: entities get vectors from their name, type and context, and
/// `organize` proposes look-alikes on its own (never merges them), across
/// sessions; an unrelated name is not proposed.
#[test]
fn entities_get_vectors_and_look_alikes_are_proposed_without_hints() {
    let tmp = tempfile::tempdir().unwrap();
    let letters = Arc::new(identity_bodies::Letters::default());
    let m = Memory::init_with_embedder(&tmp.path().join("p.kith"), letters.clone()).unwrap();
    identity_bodies::look_alikes_proposed(&m, &letters);
}

/// Item 12: the text an entity's vector is made from.
#[test]
fn entity_vector_text_is_name_type_and_a_short_context() {
    use kith::embedding::entity_vector_text;
    assert_eq!(
        entity_vector_text(" Jordan Lee ", Some("person"), &[]),
        "Jordan Lee (person)"
    );
    assert_eq!(
        entity_vector_text("Jordan Lee", None, &["Jordan Lee moved to Berlin.".into()]),
        "Jordan Lee: Jordan Lee moved to Berlin."
    );
    let long = "x".repeat(1000);
    assert_eq!(
        entity_vector_text("A", Some("tool"), &[long])
            .chars()
            .count(),
        "A (tool): ".len() + 240
    );
}

/// Item 12: name evidence is not refused because the mentions came from
/// different sessions (an abbreviation merges, a given name proposes);
/// exact duplicates still need the same session and event time.
#[test]
fn name_evidence_aliases_cross_sessions_duplicates_do_not() {
    let (_t, _d, m) = common::pack();
    let ev = event(
        &m,
        "o",
        "k8s on Monday, Kubernetes on Friday; Jordan, Jordan Lee.",
    );
    let later = |n: Node| Node {
        session_id: Some(kith::SessionId::new("s9").unwrap()),
        event_time: Some(ts("2025-03-07T10:00:00+00:00")),
        ..n
    };
    let k8s = entity("o", ev, "k8s", "technology");
    let kube = later(entity("o", ev, "Kubernetes", "technology"));
    let jordan = entity("o", ev, "Jordan", "person");
    let jordan_lee = later(entity("o", ev, "Jordan Lee", "person"));
    let c1 = claim("o", ev, "Aurora requires approval.");
    let c2 = later(claim("o", ev, "Aurora requires approval."));
    put(&m, &[&k8s, &kube, &jordan, &jordan_lee, &c1, &c2]);
    let r = organize(&m, "o", BOTH);
    assert!(
        reasons(&r).contains(&"different_session".to_string()),
        "the copies stay two: {r:#?}"
    );
    assert!(get(&m, c2.id).lifecycle.is_active());
    assert_eq!(merges(&r), 1, "{r:#?}");
    assert_eq!(r.jobs[1].merges[0].keep_id, kube.id);
    assert_eq!(proposals(&r), 1, "{r:#?}");
    let p = &r.jobs[1].proposals[0];
    assert_eq!(
        (p.a, p.b),
        kith::organize::ordered(jordan.id, jordan_lee.id)
    );
    assert!(get(&m, jordan.id).lifecycle.is_active());
    assert!(get(&m, jordan_lee.id).lifecycle.is_active());
    // A given name never merges, whatever the threshold.
    let mut req = OrganizeRequest::new(owner("o"), BOTH.to_vec());
    req.alias_threshold = 0.5;
    assert_eq!(merges(&m.organize_with(&req).unwrap()), 0);
}

/// Item 14: version-2 proposals.
#[test]
fn version_two_proposals_keep_the_first_assessment() {
    let (_t, _d, m) = common::pack();
    identity_bodies::version_two_proposals(&m);
}

/// Item 15: shortest paths leave proposals out unless asked.
#[test]
fn paths_skip_unverified_proposals_unless_asked() {
    let (_t, _d, m) = common::pack();
    identity_bodies::paths_skip_proposals(&m);
}

/// Item 12: entity vectors are for alias proposals only. A question's
/// vector search leaves entities out, so 60 entities whose vectors equal
/// the question's cannot push a memory out of the vector path's pool.
#[test]
fn entity_vectors_never_crowd_memories_out_of_retrieval() {
    let tmp = tempfile::tempdir().unwrap();
    let letters = Arc::new(identity_bodies::Letters::default());
    let m = Memory::init_with_embedder(&tmp.path().join("p.kith"), letters.clone()).unwrap();
    let question = "Where does Quinn keep the kayak?";
    let note = m
        .store(EventInput {
            owner_id: Some("o".into()),
            ..EventInput::new("user", "The kayak lives in Quinn's garage.")
        })
        .unwrap();
    let ev = note.event_id;
    let query_vector = kith::Embedder::embed(&*letters, &[question])
        .unwrap()
        .remove(0);
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    for i in 0..60 {
        let e = entity("o", ev, &format!("Entity {i}"), "thing");
        tx.insert_node(&e).unwrap();
        tx.put_embedding(e.id, "test/letters-26", &query_vector)
            .unwrap();
    }
    tx.commit().unwrap();
    let mut req = kith::RetrieveRequest::new("o", question).unwrap();
    req.record = false;
    let r = m.retrieve(&req).unwrap();
    let hit = r
        .results
        .iter()
        .find(|h| h.node_id == note.node_id)
        .unwrap_or_else(|| panic!("{r:#?}"));
    assert!(
        hit.trace.has(kith::retrieve::fusion::PathKind::Vector),
        "{:#?}",
        hit.trace
    );
    assert!(r.results.iter().all(|h| h.node_type != NodeType::Entity));
}
