//! The correction API (issue 13 item 13): rebind a claim's subject to
//! another entity, or split an identity by naming the events that belong to
//! the other person; journaled, checksummed, replayable and undoable. Every
//! scenario runs through the default heuristic extractor and through
//! recorded LLM replies.

mod common;

use common::i_fact;
use kith::{
    Correction, CorrectionTarget, EventInput, IngestOptions, Memory, Node, NodeQuery, NodeType,
    OwnerId,
};
use kith_extract::replay::ReplayServer;
use uuid::Uuid;

fn memory(recorded: bool) -> (tempfile::TempDir, Memory, Option<ReplayServer>) {
    let (tmp, _dir, m) = common::pack();
    if !recorded {
        return (tmp, m, None);
    }
    let (m, server) = common::with_recorded_replies(
        m,
        vec![
            ("I love sushi.", i_fact("love", "sushi", "I love sushi.")),
            ("I love hiking.", i_fact("love", "hiking", "I love hiking.")),
            (
                "I live in Lisbon.",
                i_fact("live in", "Lisbon", "I live in Lisbon."),
            ),
            (
                "I live in Oslo.",
                i_fact("live in", "Oslo", "I live in Oslo."),
            ),
        ],
    );
    (tmp, m, Some(server))
}

fn say(m: &Memory, text: &str, speaker: &str, session: &str) -> Uuid {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: Some(speaker.into()),
                session_id: Some(session.into()),
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
    r.event_id
}

fn owner() -> OwnerId {
    OwnerId::new("owner").unwrap()
}

fn entity(m: &Memory, name: &str) -> Node {
    let found: Vec<Node> = m
        .nodes(&NodeQuery {
            owner: Some(owner()),
            node_types: vec![NodeType::Entity],
            ..NodeQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|s| s.node)
        .filter(|n| n.content == name && n.lifecycle.is_active())
        .collect();
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    found.into_iter().next().unwrap()
}

fn claim(m: &Memory, sentence: &str) -> Node {
    common::active_claim(m, "owner", sentence)
}

fn subjects(m: &Memory, claim: &Node) -> Vec<String> {
    common::open_subjects(m, claim)
}

fn claims_of(m: &Memory, who: &Node) -> Vec<String> {
    let mut out: Vec<String> = m
        .entity_claims(&owner(), who.id)
        .unwrap()
        .into_iter()
        .map(|(c, _)| c.content)
        .collect();
    out.sort();
    out
}

#[test]
fn rebind_moves_one_claim_and_undo_puts_it_back() {
    for recorded in [false, true] {
        let (_tmp, m, _server) = memory(recorded);
        say(&m, "I love hiking.", "Jordan", "s1");
        say(&m, "I love sushi.", "Maya", "s1");
        let (maya, jordan) = (entity(&m, "Maya"), entity(&m, "Jordan"));
        let sushi = claim(&m, "I love sushi.");
        assert_eq!(subjects(&m, &sushi), ["Maya"], "recorded={recorded}");
        let before = common::snapshot(&m, "owner");

        let request = Correction {
            entity: maya.id,
            claims: vec![sushi.id],
            events: vec![],
            to: CorrectionTarget::Entity { id: jordan.id },
            reason: "Maya pasted Jordan's message".into(),
        };
        let r = m.correct(&owner(), &request).unwrap();
        assert!(!r.replayed && !r.created_target);
        assert_eq!(r.moved_claims, vec![sushi.id]);
        assert_eq!(r.target, jordan.id);
        let sushi = claim(&m, "I love sushi.");
        assert_eq!(subjects(&m, &sushi), ["Jordan"], "recorded={recorded}");
        let md = sushi.metadata.as_ref().unwrap();
        assert!(md.get("speaker_reference").is_none(), "{md}");
        assert_eq!(md["correction"]["op_id"], r.op_id.to_string());
        assert_eq!(claims_of(&m, &maya), Vec::<String>::new());
        assert_eq!(claims_of(&m, &jordan), ["I love hiking.", "I love sushi."]);

        // Journaled and checksummed; the same request replays the record.
        let op = m
            .journal(
                &owner(),
                &kith::JournalQuery {
                    kind: Some(kith::OperationKind::IdentityCorrected),
                    ..kith::JournalQuery::default()
                },
            )
            .unwrap();
        assert_eq!(op.len(), 1);
        assert_eq!(op[0].id, r.op_id);
        assert_eq!(op[0].checksum, op[0].compute_checksum());
        let again = m.correct(&owner(), &request).unwrap();
        assert!(again.replayed);
        assert_eq!(again.moved_claims, r.moved_claims);
        assert!(m.doctor().unwrap().healthy());

        // Undo restores the binding exactly; undoing again replays.
        let u = m.undo(&owner(), r.op_id).unwrap();
        assert_eq!(u.removed_edges, r.opened_edges);
        let sushi = claim(&m, "I love sushi.");
        assert_eq!(subjects(&m, &sushi), ["Maya"]);
        assert_eq!(
            sushi.metadata.as_ref().unwrap()["speaker_reference"]["speaker"],
            "Maya"
        );
        assert_eq!(claims_of(&m, &maya), ["I love sushi."]);
        assert!(m.undo(&owner(), r.op_id).unwrap().replayed);
        let report = m.doctor().unwrap();
        assert!(report.healthy(), "{:?}", report.problems);
        // The graph is as before, but for the journal and closed history.
        let (_, stats_before, _) = before;
        let (_, stats_after, _) = common::snapshot(&m, "owner");
        assert_eq!(stats_after.nodes(), stats_before.nodes());
    }
}

#[test]
fn split_moves_the_named_events_to_a_new_person() {
    for recorded in [false, true] {
        let (_tmp, m, _server) = memory(recorded);
        // Two people called Jordan, one node: the speaker rule cannot tell.
        say(&m, "I live in Lisbon.", "Jordan", "s1");
        let oslo_event = say(&m, "I live in Oslo.", "Jordan", "s2");
        let jordan = entity(&m, "Jordan");
        assert_eq!(claims_of(&m, &jordan).len(), 2);

        let r = m
            .correct(
                &owner(),
                &Correction {
                    entity: jordan.id,
                    claims: vec![],
                    events: vec![oslo_event],
                    to: CorrectionTarget::NewPerson {
                        name: "Jordan Berg".into(),
                    },
                    reason: "the Oslo Jordan is Jordan Berg, a colleague".into(),
                },
            )
            .unwrap();
        assert!(r.created_target, "recorded={recorded}");
        let berg = entity(&m, "Jordan Berg");
        assert_eq!(berg.id, r.target);
        assert_eq!(
            berg.metadata.as_ref().unwrap()["split_from"],
            jordan.id.to_string()
        );
        assert_eq!(berg.evidence_refs, vec![oslo_event]);
        assert_eq!(claims_of(&m, &jordan), ["I live in Lisbon."]);
        assert_eq!(claims_of(&m, &berg), ["I live in Oslo."]);
        assert_eq!(subjects(&m, &claim(&m, "I live in Oslo.")), ["Jordan Berg"]);

        // Undo archives the new person and puts the claim back.
        m.undo(&owner(), r.op_id).unwrap();
        assert_eq!(claims_of(&m, &jordan).len(), 2);
        let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
        let archived = tx.get_node(berg.id).unwrap().unwrap();
        assert_eq!(archived.lifecycle, kith::Lifecycle::Archived);
    }
}

#[test]
fn bad_corrections_are_typed_errors_and_change_nothing() {
    let (_tmp, m, _server) = memory(false);
    say(&m, "I love hiking.", "Jordan", "s1");
    let sushi_event = say(&m, "I love sushi.", "Maya", "s1");
    let (maya, jordan) = (entity(&m, "Maya"), entity(&m, "Jordan"));
    let sushi = claim(&m, "I love sushi.");
    let hiking = claim(&m, "I love hiking.");
    // Another owner's entity.
    m.ingest(
        EventInput {
            owner_id: Some("other".into()),
            speaker: Some("Sam".into()),
            ..EventInput::new("user", "I love tea.")
        },
        IngestOptions::default(),
    )
    .unwrap();
    let sam = m
        .nodes(&NodeQuery {
            owner: Some(OwnerId::new("other").unwrap()),
            node_types: vec![NodeType::Entity],
            ..NodeQuery::default()
        })
        .unwrap()
        .into_iter()
        .find(|n| n.node.content == "Sam")
        .unwrap()
        .node;
    let before = common::snapshot(&m, "owner");
    let base = Correction {
        entity: maya.id,
        claims: vec![sushi.id],
        events: vec![],
        to: CorrectionTarget::Entity { id: jordan.id },
        reason: "pasted".into(),
    };
    let cases: Vec<(Correction, kith::ErrorKind, &str)> = vec![
        (
            Correction {
                reason: "  ".into(),
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "needs a reason",
        ),
        (
            Correction {
                claims: vec![],
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "name the evidence",
        ),
        (
            Correction {
                events: vec![sushi_event],
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "not both",
        ),
        (
            Correction {
                claims: vec![hiking.id],
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "is not an active claim linked to entity",
        ),
        (
            Correction {
                claims: vec![],
                events: vec![Uuid::new_v4()],
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "none of the named events",
        ),
        (
            Correction {
                to: CorrectionTarget::Entity { id: maya.id },
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "already link",
        ),
        (
            Correction {
                to: CorrectionTarget::Entity { id: sam.id },
                ..base.clone()
            },
            kith::ErrorKind::NotFound,
            "not found",
        ),
        (
            Correction {
                entity: sam.id,
                ..base.clone()
            },
            kith::ErrorKind::NotFound,
            "not found",
        ),
        (
            Correction {
                to: CorrectionTarget::NewPerson { name: " ".into() },
                ..base.clone()
            },
            kith::ErrorKind::InvalidInput,
            "needs a name",
        ),
    ];
    for (request, kind, words) in cases {
        let err = m.correct(&owner(), &request).unwrap_err();
        assert_eq!(err.kind(), kind, "{request:?}: {err}");
        assert!(err.to_string().contains(words), "{err}");
    }
    assert_eq!(common::snapshot(&m, "owner"), before);
}
