//! Test bodies for issue 13 items 11, 12, 14 and 15, written once and run on
//! every backend (SQLite in `organize.rs`, PostgreSQL in `postgres.rs`).
#![allow(dead_code)]

use kith::organize::MergeKind;
use kith::{
    Assessment, Assessor, Decision, EdgeType, ErrorKind, EventInput, Job, Lifecycle, Memory, Node,
    NodeType, OperationKind, OwnerId, PathRequest, ProposeAliasRequest, ScopeId, Timestamp,
    Verdict,
};
use kith_core::{EpistemicType, SourceType};
use kith_store::TxMode;
use serde_json::json;
use uuid::Uuid;

fn ts(t: &str) -> Timestamp {
    Timestamp::parse("t", t).unwrap()
}

/// An entity of `owner` in `session`, evidence `ev`.
pub fn entity_in(owner: &str, ev: Uuid, name: &str, kind: &str, session: &str) -> Node {
    Node {
        id: Uuid::new_v4(),
        owner_id: OwnerId::new(owner).unwrap(),
        scope: ScopeId::personal(),
        session_id: Some(kith::SessionId::new(session).unwrap()),
        node_type: NodeType::Entity,
        content: name.into(),
        metadata: Some(json!({"entity_type": kind})),
        confidence: 0.5,
        lifecycle: Lifecycle::Tentative,
        epistemic_type: EpistemicType::Asserted,
        source_type: SourceType::UserStated,
        valid_from: ts("2025-03-01T10:00:00+00:00"),
        valid_to: None,
        event_time: Some(ts(match session {
            "s1" => "2025-03-01T10:00:00+00:00",
            _ => "2025-03-08T10:00:00+00:00",
        })),
        superseded_by: None,
        evidence_refs: vec![ev],
        created_at: ts("2025-03-01T10:00:01+00:00"),
        updated_at: ts("2025-03-01T10:00:01+00:00"),
    }
}

pub fn put(m: &Memory, nodes: &[&Node]) {
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    for n in nodes {
        tx.insert_node(n).unwrap();
    }
    tx.commit().unwrap();
}

pub fn said(m: &Memory, owner: &str, text: &str) -> Uuid {
    m.store(EventInput {
        owner_id: Some(owner.into()),
        session_id: Some("s1".into()),
        ..EventInput::new("user", text)
    })
    .unwrap()
    .event_id
}

fn active(m: &Memory, owner: &OwnerId, id: Uuid) -> bool {
    m.node(owner, id).unwrap().lifecycle.is_active()
}

const BOTH: &[Job] = &[Job::Deduplicate, Job::AliasResolve];

/// Item 11: merge, undo, organize — still two; the refusal names the undo;
/// an accept recorded after the undo reopens the pair (generation 1).
pub fn undo_sticks(m: &Memory) {
    let o = OwnerId::new("u11").unwrap();
    let ev = said(m, "u11", "JS, also called JavaScript.");
    let js = entity_in("u11", ev, "JS", "technology", "s1");
    let long = entity_in("u11", ev, "JavaScript", "technology", "s2");
    put(m, &[&js, &long]);
    let first = m.organize(&o, BOTH, 0).unwrap();
    let merged: Vec<_> = first.jobs.iter().flat_map(|j| &j.merges).collect();
    assert_eq!(merged.len(), 1, "{first:#?}");
    assert_eq!(merged[0].kind, MergeKind::Alias);
    let undo = m.undo(&o, merged[0].op_id).unwrap();
    assert!(active(m, &o, js.id) && active(m, &o, long.id));

    // The undo record says what it decided.
    let undo_op = m
        .journal(&o, &kith::JournalQuery::default())
        .unwrap()
        .into_iter()
        .find(|op| op.id == undo.undo_op_id)
        .unwrap();
    assert_eq!(undo_op.payload["record"]["pair_decision"], "not_same");

    for _ in 0..2 {
        let again = m.organize(&o, BOTH, 0).unwrap();
        assert_eq!(
            again.jobs.iter().map(|j| j.merges.len()).sum::<usize>(),
            0,
            "{again:#?}"
        );
        let refusal = again.jobs[1]
            .not_applied
            .iter()
            .find(|n| n.reason == "undone_merge")
            .unwrap_or_else(|| panic!("{again:#?}"));
        assert_eq!(refusal.op_id, Some(undo.undo_op_id));
        assert!(active(m, &o, js.id) && active(m, &o, long.id), "still two");
    }

    // A proposal alone does not reopen; accepting it does.
    let proposed = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: js.id,
                b: long.id,
                score: 0.95,
                assessment: None,
            },
        )
        .unwrap();
    let op = proposed.op_id.unwrap();
    let still = m.organize(&o, BOTH, 0).unwrap();
    assert_eq!(still.jobs[1].merges.len(), 0, "{still:#?}");
    m.review_alias(&o, op, Decision::Accept, Some("same language"), None)
        .unwrap();
    let reopened = m.organize(&o, BOTH, 0).unwrap();
    assert_eq!(reopened.jobs[1].merges.len(), 1, "{reopened:#?}");
    assert_eq!(
        reopened.jobs[1].merges[0].op_id,
        kith::organize::merge_op_id(js.id, long.id, MergeKind::Alias, 1)
    );
    assert!(m.doctor().unwrap().healthy());
}

/// Item 14: a version-2 proposal carries a complete assessment bound to the
/// node checksums; a repeated request returns the first; a version-1
/// proposal is never relabelled; a bad assessment writes nothing.
pub fn version_two_proposals(m: &Memory) {
    let o = OwnerId::new("u14").unwrap();
    let ev = said(m, "u14", "Sam Rivera and Samuel Rivera.");
    let a = entity_in("u14", ev, "Sam Rivera", "person", "s1");
    let b = entity_in("u14", ev, "Samuel Rivera", "person", "s1");
    let c = entity_in("u14", ev, "Dana Cole", "person", "s1");
    let d = entity_in("u14", ev, "Dana Coleman", "person", "s1");
    put(m, &[&a, &b, &c, &d]);
    let assessment = |verdict, reason: &str| Assessment {
        assessor: Assessor {
            kind: kith::organize::AssessorKind::Model,
            id: "judge-7".into(),
        },
        verdict,
        reasons: vec![reason.into()],
    };
    let journal_len = |m: &Memory| m.journal(&o, &kith::JournalQuery::default()).unwrap().len();

    // Incomplete: refused, typed, nothing written.
    let before = journal_len(m);
    let err = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: a.id,
                b: b.id,
                score: 0.9,
                assessment: Some(Assessment {
                    reasons: vec![],
                    ..assessment(Verdict::Same, "x")
                }),
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("reasons"), "{err}");
    assert_eq!(journal_len(m), before);

    let first = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: a.id,
                b: b.id,
                score: 0.9,
                assessment: Some(assessment(Verdict::Same, "Sam is short for Samuel")),
            },
        )
        .unwrap();
    assert!(first.created);
    assert_eq!(first.format.as_deref(), Some("kith.alias_proposal.v2"));
    let assessed = first.assessment.clone().unwrap();
    assert_eq!(assessed["verdict"], "same");
    assert_eq!(assessed["assessor"]["kind"], "model");
    let op = m
        .journal(&o, &kith::JournalQuery::default())
        .unwrap()
        .into_iter()
        .find(|op| Some(op.id) == first.op_id)
        .unwrap();
    let record = &op.payload["record"];
    assert_eq!(assessed["node_checksums"], record["node_checksums"]);
    // Bound to exactly these nodes: the checksum of each stored snapshot.
    let snap = |n: &Node| {
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&m.node(&o, n.id).unwrap()).unwrap())
                .unwrap();
        kith_core::canon::checksum(&v)
    };
    let (lo, hi) = kith::organize::ordered(a.id, b.id);
    let by_id = |id: Uuid| if id == a.id { &a } else { &b };
    assert_eq!(assessed["node_checksums"]["a"], snap(by_id(lo)));
    assert_eq!(assessed["node_checksums"]["b"], snap(by_id(hi)));

    // A different assessment for the same pair: the first one answers.
    let again = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: b.id,
                b: a.id,
                score: 0.5,
                assessment: Some(assessment(Verdict::Different, "another Sam")),
            },
        )
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.op_id, first.op_id);
    assert_eq!(again.assessment, first.assessment);
    let op_again = m
        .journal(&o, &kith::JournalQuery::default())
        .unwrap()
        .into_iter()
        .find(|x| x.id == op.id)
        .unwrap();
    assert_eq!(op_again, op, "the record is unchanged");

    // A version-1 proposal (no assessment) is never relabelled.
    let v1 = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: c.id,
                b: d.id,
                score: 0.88,
                assessment: None,
            },
        )
        .unwrap();
    assert_eq!(v1.format.as_deref(), Some("kith.alias_proposal.v1"));
    let later = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: c.id,
                b: d.id,
                score: 0.88,
                assessment: Some(assessment(Verdict::Same, "same surname root")),
            },
        )
        .unwrap();
    assert!(!later.created);
    assert_eq!(later.format.as_deref(), Some("kith.alias_proposal.v1"));
    assert_eq!(later.assessment, None);
    let listed = m.alias_proposals(&o).unwrap();
    let v1_listed = listed.iter().find(|p| Some(p.op_id) == v1.op_id).unwrap();
    assert_eq!(v1_listed.assessment, None);
    assert!(listed
        .iter()
        .any(|p| Some(p.op_id) == first.op_id && p.assessment.is_some()));
    // Proposals never retire anything.
    for n in [&a, &b, &c, &d] {
        assert!(active(m, &o, n.id));
    }
    // Stale: a node changed after the assessment; accepting it is refused.
    let mut changed = m.node(&o, a.id).unwrap();
    changed.confidence = 0.9;
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    tx.update_node(&changed).unwrap();
    tx.commit().unwrap();
    let err = m
        .review_alias(&o, first.op_id.unwrap(), Decision::Accept, None, None)
        .unwrap_err();
    assert!(err.to_string().contains("stale"), "{err}");
    assert!(m.doctor().unwrap().healthy());
}

/// Item 15: a path between two entities skips unverified proposals unless
/// asked, follows a verified alias, and goes through claims.
pub fn paths_skip_proposals(m: &Memory) {
    let o = OwnerId::new("u15").unwrap();
    let ev = said(m, "u15", "Alex Kim works with Alexandra Kim.");
    let a = entity_in("u15", ev, "Alex Kim", "person", "s1");
    let b = entity_in("u15", ev, "Alexandra Kim", "person", "s1");
    let city = entity_in("u15", ev, "Seoul", "place", "s1");
    put(m, &[&a, &b, &city]);
    // b —HAS_FACT→ claim —MENTIONS→ Seoul: two hops from b to the city.
    let claim = Node {
        id: Uuid::new_v4(),
        node_type: NodeType::Fact,
        content: "Alexandra Kim lives in Seoul.".into(),
        metadata: Some(json!({"subject": "Alexandra Kim", "predicate": "lives_in"})),
        ..entity_in("u15", ev, "x", "person", "s1")
    };
    put(m, &[&claim]);
    let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
    for (s, t, kind) in [
        (b.id, claim.id, EdgeType::HasFact),
        (claim.id, city.id, EdgeType::Mentions),
    ] {
        tx.insert_edge(&kith::Edge {
            id: Uuid::new_v4(),
            owner_id: o.clone(),
            scope: ScopeId::personal(),
            source_id: s,
            target_id: t,
            edge_type: kind,
            confidence: 0.9,
            valid_from: ts("2025-03-01T10:00:00+00:00"),
            valid_to: None,
            provenance_event_id: Some(ev),
            metadata: None,
            created_at: ts("2025-03-01T10:00:02+00:00"),
        })
        .unwrap();
    }
    tx.commit().unwrap();
    let proposal = m
        .propose_alias(
            &o,
            &ProposeAliasRequest {
                a: a.id,
                b: b.id,
                score: 0.9,
                assessment: None,
            },
        )
        .unwrap()
        .op_id
        .unwrap();

    let to_city = m.path(&o, &PathRequest::new(a.id, city.id)).unwrap();
    assert!(!to_city.found, "{to_city:#?}");
    assert!(to_city.steps.is_empty());
    assert_eq!(to_city.skipped_proposals, 1);
    let mut opted = PathRequest::new(a.id, city.id);
    opted.include_unverified_aliases = true;
    let via = m.path(&o, &opted).unwrap();
    assert!(via.found);
    let hops: Vec<Uuid> = via.steps.iter().map(|s| s.node.id).collect();
    assert_eq!(hops, vec![b.id, claim.id, city.id]);
    assert_eq!(via.steps[0].edge.edge_type, EdgeType::RelatesTo);
    // Too few hops: not found.
    let mut short = opted.clone();
    short.max_hops = 2;
    assert!(!m.path(&o, &short).unwrap().found);
    // Bad bounds and other owners' nodes change nothing and say why.
    let mut bad = PathRequest::new(a.id, city.id);
    bad.max_hops = 0;
    assert_eq!(
        m.path(&o, &bad).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let stranger = OwnerId::new("someone-else").unwrap();
    assert_eq!(
        m.path(&stranger, &PathRequest::new(a.id, city.id))
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );

    // Accepted: the verified alias is an ordinary edge.
    m.review_alias(&o, proposal, Decision::Accept, None, None)
        .unwrap();
    let verified = m.path(&o, &PathRequest::new(a.id, city.id)).unwrap();
    assert!(verified.found, "{verified:#?}");
    assert_eq!(verified.steps.len(), 3);
    assert_eq!(
        verified.steps[0].edge.metadata.as_ref().unwrap()["identity_verified"],
        true
    );
    assert_eq!(verified.skipped_proposals, 1, "the proposal edge stays");
    let journal = m.journal(&o, &kith::JournalQuery::default()).unwrap();
    assert!(journal
        .iter()
        .any(|op| op.kind == OperationKind::AliasProposalAccepted));
}

/// A test embedder: a text's letter frequencies (26 dimensions), so two
/// spellings of one name are close and other names are not. It keeps every
/// text it was asked to embed.
#[derive(Default)]
pub struct Letters {
    /// Every text embedded, in order.
    pub seen: std::sync::Mutex<Vec<String>>,
}

impl kith::Embedder for Letters {
    fn model_id(&self) -> &str {
        "test/letters-26"
    }
    fn dimension(&self) -> usize {
        26
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, kith::embed::EmbedError> {
        self.seen
            .lock()
            .unwrap()
            .extend(texts.iter().map(|t| t.to_string()));
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = [0.0f32; 26];
                for c in t.to_lowercase().chars().filter(char::is_ascii_lowercase) {
                    v[(c as u8 - b'a') as usize] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

/// Item 12: entities get vectors from their name, type and context, and
/// `organize` proposes look-alikes on its own (never merges them), across
/// sessions; an unrelated name is not proposed. `m` embeds with `letters`.
pub fn look_alikes_proposed(m: &Memory, letters: &Letters) {
    let o = OwnerId::new("u12").unwrap();
    let ev = said(
        m,
        "u12",
        "Katherine Johnson and Katharine Johnson, and Maya Patel.",
    );
    let k1 = entity_in("u12", ev, "Katherine Johnson", "person", "s1");
    let k2 = entity_in("u12", ev, "Katharine Johnson", "person", "s2");
    let maya = entity_in("u12", ev, "Maya Patel", "person", "s1");
    put(m, &[&k1, &k2, &maya]);
    let r = m.organize(&o, BOTH, 0).unwrap();
    let merges: usize = r.jobs.iter().map(|j| j.merges.len()).sum();
    assert_eq!(merges, 0, "{r:#?}");
    assert_eq!(r.jobs[1].proposals.len(), 1, "{r:#?}");
    let p = &r.jobs[1].proposals[0];
    assert_eq!((p.a, p.b), kith::organize::ordered(k1.id, k2.id));
    assert!(p.score >= 0.85, "{p:?}");
    for n in [&k1, &k2, &maya] {
        assert!(active(m, &o, n.id));
        let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
        let (model, v) = tx.get_embedding(n.id).unwrap().expect("an entity vector");
        assert_eq!(model, "test/letters-26");
        assert_eq!(v.len(), 26);
    }
    let seen = letters.seen.lock().unwrap().clone();
    assert!(
        seen.contains(&"Maya Patel (person)".to_string()),
        "{seen:?}"
    );
    // Nothing new on a second run: vectors are kept, the proposal exists.
    let embedded = seen.len();
    let again = m.organize(&o, BOTH, 0).unwrap();
    assert_eq!(again.jobs[1].proposals.len(), 0, "{again:#?}");
    assert_eq!(letters.seen.lock().unwrap().len(), embedded);
    assert_eq!(m.alias_proposals(&o).unwrap().len(), 1);
}
