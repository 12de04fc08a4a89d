//! `reingest` keeps identity straight (issue 13 item 3): a re-derivation that
//! binds a claim to another subject closes the old subject edge and rewrites
//! the claim's identity metadata in the same transaction, so every active
//! claim has exactly one open subject edge; and an owner name given later
//! never reaches back to an earlier claim. Each scenario runs through the
//! default heuristic extractor and through recorded LLM replies served over
//! real HTTP.

mod common;
#[path = "common/faulty.rs"]
mod faulty;

use std::path::Path;

use common::i_fact;
use kith::identity::IdentityOptions;
use kith::{EdgeType, EventInput, IngestOptions, Memory, Node, NodeQuery, NodeType, OwnerId};
use kith_extract::replay::ReplayServer;
use serde_json::{json, Value};

/// How a scenario's messages are read.
#[derive(Debug, Clone, Copy)]
enum Path_ {
    /// The default offline extractor.
    Heuristic,
    /// An LLM whose replies were recorded.
    Recorded,
}

const PATHS: [Path_; 2] = [Path_::Heuristic, Path_::Recorded];

/// The recorded replies for this file's messages (substring → extraction).
fn recorded() -> Vec<(&'static str, Value)> {
    vec![
        (
            "I'm Maya Okafor",
            json!({"entities": [{"name": "Maya Okafor", "entity_type": "person"}],
                   "facts": [], "relationships": []}),
        ),
        (
            "I'm Priya",
            json!({"entities": [{"name": "Priya", "entity_type": "person"}],
                   "facts": [], "relationships": []}),
        ),
        (
            "I work at Northwind",
            json!({"entities": [{"name": "Northwind", "entity_type": "organization"}],
                   "facts": i_fact("works at", "Northwind", "I work at Northwind.")["facts"],
                   "relationships": []}),
        ),
        ("I love tea", i_fact("loves", "tea", "I love tea.")),
    ]
}

/// A memory in `dir` reading through `path` under `options`; the replay
/// server (for the recorded path) must outlive it.
fn open(dir: &Path, path: Path_, options: IdentityOptions) -> (Memory, Option<ReplayServer>) {
    let m = Memory::open(dir).unwrap().with_identity(options);
    match path {
        Path_::Heuristic => (m, None),
        Path_::Recorded => {
            let (m, server) = common::with_recorded_replies(m, recorded());
            (m, Some(server))
        }
    }
}

fn say(m: &Memory, text: &str, time: &str) {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                session_id: Some("s1".into()),
                event_time: Some(time.into()),
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

fn nodes(m: &Memory) -> Vec<Node> {
    m.nodes(&NodeQuery {
        owner: Some(owner()),
        ..NodeQuery::default()
    })
    .unwrap()
    .into_iter()
    .map(|s| s.node)
    .collect()
}

fn claim(m: &Memory, sentence: &str) -> Node {
    common::active_claim(m, "owner", sentence)
}

fn subjects(m: &Memory, claim: &Node) -> Vec<String> {
    common::open_subjects(m, claim)
}

/// The invariant: every active claim of the owner has exactly one open
/// subject edge.
fn assert_one_subject_each(m: &Memory, path: Path_) {
    for n in nodes(m) {
        if matches!(n.node_type, NodeType::Entity | NodeType::Note) || !n.lifecycle.is_active() {
            continue;
        }
        let s = subjects(m, &n);
        assert_eq!(
            s.len(),
            1,
            "{path:?}: claim {:?} has subjects {s:?}",
            n.content
        );
    }
}

fn speaker_of(claim: &Node) -> Option<String> {
    claim.metadata.as_ref().and_then(|m| {
        m.get("speaker_reference")
            .and_then(|r| r["speaker"].as_str())
            .map(str::to_string)
    })
}

#[test]
fn reingest_with_the_carry_off_moves_the_claim_to_its_own_i_and_closes_the_old_edge() {
    for path in PATHS {
        let (tmp, dir, m) = common::pack();
        drop(m);
        let (m, _server) = open(&dir, path, IdentityOptions::default());
        say(&m, "Hi, I'm Maya Okafor.", "2026-03-01T10:00:00Z");
        say(&m, "I work at Northwind.", "2026-03-01T10:01:00Z");
        let works = claim(&m, "I work at Northwind.");
        assert_eq!(subjects(&m, &works), ["Maya Okafor"], "{path:?}");
        assert_eq!(speaker_of(&works).as_deref(), Some("Maya Okafor"));
        drop(m);

        // The same extraction re-derived with the carry off: the claim's I is
        // its own event's again.
        let off = IdentityOptions {
            owner_name_carry: false,
            ..IdentityOptions::default()
        };
        let (m, _server2) = open(&dir, path, off);
        let outcomes = m
            .reingest_session(&owner(), &kith::SessionId::new("s1").unwrap())
            .unwrap();
        assert!(
            outcomes.iter().any(|o| o.outcome == "rederived"),
            "{path:?}: {outcomes:?}"
        );
        let works = claim(&m, "I work at Northwind.");
        assert_eq!(subjects(&m, &works), ["I"], "{path:?}");
        assert_eq!(
            speaker_of(&works),
            None,
            "{path:?}: stale speaker_reference"
        );
        assert_one_subject_each(&m, path);
        // The old edge is kept as history, closed.
        let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
        let closed: Vec<_> = tx
            .edges_of(works.id)
            .unwrap()
            .into_iter()
            .filter(|e| e.edge_type == EdgeType::HasFact && !e.is_open())
            .collect();
        assert_eq!(closed.len(), 1, "{path:?}");
        drop(tx);
        // Maya's own claims no longer list it.
        let maya = nodes(&m)
            .into_iter()
            .find(|n| n.node_type == NodeType::Entity && n.content == "Maya Okafor")
            .unwrap();
        let hers: Vec<String> = m
            .entity_claims(&owner(), maya.id)
            .unwrap()
            .into_iter()
            .map(|(c, _)| c.content)
            .collect();
        assert!(!hers.contains(&works.content), "{path:?}: {hers:?}");

        // Back on: the claim is Maya's again, through one open edge.
        drop(m);
        let (m, _server3) = open(&dir, path, IdentityOptions::default());
        m.reingest_session(&owner(), &kith::SessionId::new("s1").unwrap())
            .unwrap();
        let works = claim(&m, "I work at Northwind.");
        assert_eq!(subjects(&m, &works), ["Maya Okafor"], "{path:?}");
        assert_eq!(speaker_of(&works).as_deref(), Some("Maya Okafor"));
        assert_one_subject_each(&m, path);
        let report = m.doctor().unwrap();
        assert!(report.healthy(), "{path:?}: {:?}", report.problems);
        drop(tmp);
    }
}

#[test]
fn a_name_given_later_never_reaches_back_on_reingest() {
    for path in PATHS {
        let (tmp, dir, m) = common::pack();
        drop(m);
        let (m, _server) = open(&dir, path, IdentityOptions::default());
        say(&m, "I love tea.", "2026-03-01T10:00:00Z");
        say(&m, "Hi, I'm Maya Okafor.", "2026-03-01T10:01:00Z");
        say(&m, "I work at Northwind.", "2026-03-01T10:02:00Z");
        say(&m, "Actually, I'm Priya.", "2026-03-01T10:03:00Z");
        let tea = claim(&m, "I love tea.");
        assert_eq!(subjects(&m, &tea), ["I"], "{path:?}: no name yet");
        // Re-derive everything: each turn keeps the name in force when it
        // was ingested.
        m.reingest_session(&owner(), &kith::SessionId::new("s1").unwrap())
            .unwrap();
        let tea = claim(&m, "I love tea.");
        assert_eq!(
            subjects(&m, &tea),
            ["I"],
            "{path:?}: a later name reached back"
        );
        assert_eq!(speaker_of(&tea), None, "{path:?}");
        let works = claim(&m, "I work at Northwind.");
        assert_eq!(
            subjects(&m, &works),
            ["Maya Okafor"],
            "{path:?}: Priya, given later, took an earlier claim"
        );
        assert_one_subject_each(&m, path);
        drop(tmp);
    }
}

/// `first_person_owner` is part of the event (issue 13 item 7): exported and
/// imported into another pack, the turn's I still binds to the owner's
/// reference entity, and the claim's `owner_reference` names the owner id.
#[test]
fn first_person_owner_survives_export_and_import() {
    for path in PATHS {
        let (tmp, dir, m) = common::pack();
        drop(m);
        let (m, _server) = open(&dir, path, IdentityOptions::default());
        let fpo = IngestOptions {
            first_person_owner: true,
            ..IngestOptions::default()
        };
        m.ingest(
            EventInput {
                owner_id: Some("owner".into()),
                session_id: Some("s1".into()),
                ..EventInput::new("user", "I love tea.")
            },
            fpo,
        )
        .unwrap();
        let check = |m: &Memory, what: &str| {
            let tea = claim(m, "I love tea.");
            let me = subjects(m, &tea);
            assert_eq!(me, ["I"], "{path:?} {what}");
            let reference = &tea.metadata.as_ref().unwrap()["owner_reference"];
            assert_eq!(
                reference["owner_id"], "owner",
                "{path:?} {what}: {reference}"
            );
            assert_eq!(reference["basis"], "first_person_owner");
            assert!(reference.get("speaker").is_none(), "{reference}");
            let owner_ref: Vec<Node> = nodes(m)
                .into_iter()
                .filter(|n| {
                    n.metadata
                        .as_ref()
                        .is_some_and(|md| md["identity_status"] == "owner_reference")
                })
                .collect();
            assert_eq!(owner_ref.len(), 1, "{path:?} {what}");
        };
        check(&m, "as ingested");
        let mut exported = Vec::new();
        m.export_jsonl(None, &mut exported).unwrap();
        let text = String::from_utf8(exported).unwrap();
        assert!(text.contains("kith_first_person_owner_v1"), "{text}");

        let (tmp2, dir2, m2) = common::pack();
        drop(m2);
        let (m2, _server2) = open(&dir2, path, IdentityOptions::default());
        m2.import_jsonl(
            &text,
            &kith::ImportOptions {
                extract: true,
                ..kith::ImportOptions::default()
            },
            |_| {},
        )
        .unwrap();
        m2.process_pending(None, 0, false, false, |_| {}).unwrap();
        check(&m2, "after import");
        drop((tmp, tmp2));
    }
}

/// Callers cannot smuggle the reserved key onto a turn it cannot describe,
/// nor any other reserved key.
#[test]
fn the_reserved_key_is_checked() {
    let (_tmp, _dir, m) = common::pack();
    for (role, speaker, metadata) in [
        (
            "assistant",
            None,
            json!({"kith_first_person_owner_v1": true}),
        ),
        (
            "user",
            Some("Dana"),
            json!({"kith_first_person_owner_v1": true}),
        ),
        ("user", None, json!({"kith_first_person_owner_v1": false})),
        ("user", None, json!({"kith_other": 1})),
    ] {
        let err = m
            .store(EventInput {
                owner_id: Some("owner".into()),
                speaker: speaker.map(Into::into),
                metadata: Some(metadata.clone()),
                ..EventInput::new(role, "I love tea.")
            })
            .unwrap_err();
        assert_eq!(
            err.kind(),
            kith::ErrorKind::InvalidInput,
            "{metadata}: {err}"
        );
    }
    assert_eq!(m.stats(None).unwrap().events, 0);
}

/// A failed owner-name lookup leaves the old behaviour (issue 13 item 16,
/// spec: "A failed lookup leaves the old behavior"): the turn is ingested
/// and its I stays its own, instead of the ingest failing.
#[test]
fn a_failed_owner_name_lookup_leaves_the_old_behaviour() {
    let tmp = tempfile::tempdir().unwrap();
    let faults = std::sync::Arc::new(faulty::Faults::default());
    let store = faulty::FaultyStore {
        inner: kith_store::sqlite::SqliteStore::open(
            &tmp.path().join("kith.sqlite"),
            kith_store::sqlite::OpenMode::CreateIfMissing,
        )
        .unwrap(),
        faults: faults.clone(),
    };
    let m = Memory::with_store(Box::new(store));
    say(&m, "Hi, I'm Maya Okafor.", "2026-03-01T10:00:00Z");
    *faults.failing_metadata_key.lock().unwrap() = Some("owner_name".into());
    say(&m, "I love tea.", "2026-03-01T10:01:00Z");
    let tea = claim(&m, "I love tea.");
    assert_eq!(subjects(&m, &tea), ["I"]);
    // With the read healthy again, the next turn carries the name.
    *faults.failing_metadata_key.lock().unwrap() = None;
    say(&m, "I work at Northwind.", "2026-03-01T10:02:00Z");
    let works = claim(&m, "I work at Northwind.");
    assert_eq!(subjects(&m, &works), ["Maya Okafor"]);
}

/// A claim the owner retracted stays retracted through a reingest whose
/// re-derivation binds it elsewhere (found by `identity_props`: the reingest
/// used to fail as stale on every attempt).
#[test]
fn a_retracted_claim_stays_history_through_a_rebinding_reingest() {
    for path in PATHS {
        let (tmp, dir, m) = common::pack();
        drop(m);
        let (m, _server) = open(&dir, path, IdentityOptions::default());
        say(&m, "Hi, I'm Maya Okafor.", "2026-03-01T10:00:00Z");
        say(&m, "I love tea.", "2026-03-01T10:01:00Z");
        let tea = claim(&m, "I love tea.");
        assert_eq!(subjects(&m, &tea), ["Maya Okafor"], "{path:?}");
        m.retract_claim(&owner(), tea.id, "not true any more")
            .unwrap();
        drop(m);
        let off = IdentityOptions {
            owner_name_carry: false,
            ..IdentityOptions::default()
        };
        let (m, _server2) = open(&dir, path, off);
        m.reingest_session(&owner(), &kith::SessionId::new("s1").unwrap())
            .unwrap();
        let after = m.node(&owner(), tea.id).unwrap();
        assert_eq!(after.lifecycle, kith::Lifecycle::Archived, "{path:?}");
        assert!(after.metadata.as_ref().unwrap().get("retraction").is_some());
        assert_one_subject_each(&m, path);
        let report = m.doctor().unwrap();
        assert!(report.healthy(), "{path:?}: {:?}", report.problems);
        drop(tmp);
    }
}
