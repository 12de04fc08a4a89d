//! Correcting a fact (issue 15 item 4): the owner retracts a claim or
//! replaces its value; journaled, replayable, undoable; the facts view and
//! retrieval show the corrected state at once. Every scenario runs on the
//! default heuristic extractor and on recorded LLM replies.

mod common;

use common::hashing;

use common::i_fact;
use kith::{
    ClaimEdit, ClaimHistory, EventInput, IngestOptions, Lifecycle, Memory, OperationKind,
    OrganizerError, OwnerId, RetrieveRequest,
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
        vec![(
            "I work at Northwind.",
            i_fact("work at", "Northwind", "I work at Northwind."),
        )],
    );
    (tmp, m, Some(server))
}

fn say(m: &Memory, owner: &str, text: &str, speaker: &str) {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some(owner.into()),
                speaker: Some(speaker.into()),
                session_id: Some("s1".into()),
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

/// A pack where Maya said she works at Northwind; returns her one claim's id.
fn maya_works_at_northwind(
    recorded: bool,
) -> (tempfile::TempDir, Memory, Option<ReplayServer>, Uuid) {
    let (tmp, m, server) = memory(recorded);
    say(&m, "owner", "I work at Northwind.", "Maya");
    let facts = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap();
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0].subject, "Maya");
    assert_eq!(facts[0].object.as_deref(), Some("Northwind"));
    assert_eq!(facts[0].polarity.as_deref(), Some("positive"));
    assert!(facts[0]
        .evidence_quote
        .as_deref()
        .unwrap()
        .contains("Northwind"));
    assert_eq!(facts[0].evidence.len(), 1);
    let id = facts[0].id;
    (tmp, m, server, id)
}

/// Node ids a retrieval returned or packed.
fn retrieved(m: &Memory, query: &str) -> Vec<Uuid> {
    let r = m
        .retrieve(&RetrieveRequest::new("owner", query).unwrap())
        .unwrap();
    r.results
        .iter()
        .map(|i| i.node_id)
        .chain(
            r.packed
                .iter()
                .flat_map(|p| std::iter::once(p.node_id).chain(p.folded.clone())),
        )
        .collect()
}

fn retract_round_trip_on(recorded: bool) {
    let (_t, m, _s, claim) = maya_works_at_northwind(recorded);
    let before = m.node(&owner(), claim).unwrap();
    assert!(retrieved(&m, "Where does Maya work? Northwind").contains(&claim));

    let r = m
        .retract_claim(&owner(), claim, "she never worked there")
        .unwrap();
    assert_eq!(r.kind, OperationKind::ClaimRetracted);
    assert_eq!(r.claim, claim);
    assert!(!r.replayed);
    let after = m.node(&owner(), claim).unwrap();
    assert_eq!(after.lifecycle, Lifecycle::Archived);
    assert!(after.valid_to.is_some());
    assert_eq!(
        after.metadata.as_ref().unwrap()["retraction"]["reason"],
        "she never worked there"
    );
    // The facts view and retrieval show it at once.
    assert!(m
        .claims(&owner(), "MAYA", ClaimHistory::Current)
        .unwrap()
        .is_empty());
    let all = m.claims(&owner(), "maya", ClaimHistory::All).unwrap();
    assert_eq!(all.len(), 1);
    assert!(!all[0].current);
    assert!(
        matches!(&all[0].edited, Some(ClaimEdit::Retracted { op_id, reason })
            if *op_id == r.op_id && reason == "she never worked there"),
        "{:?}",
        all[0].edited
    );
    assert!(!retrieved(&m, "Where does Maya work? Northwind").contains(&claim));

    // The same request again replays; another reason is refused (not current).
    let again = m
        .retract_claim(&owner(), claim, "she never worked there")
        .unwrap();
    assert_eq!((again.op_id, again.replayed), (r.op_id, true));
    let err = m
        .retract_claim(&owner(), claim, "another reason")
        .unwrap_err();
    assert_eq!(err.kind(), kith::ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("no longer current"), "{err}");

    // Undo restores the claim exactly.
    let u = m.undo(&owner(), r.op_id).unwrap();
    assert_eq!(u.undone_kind, OperationKind::ClaimRetracted);
    assert_eq!(u.restored_nodes, vec![claim]);
    let mut restored = m.node(&owner(), claim).unwrap();
    restored.confidence = before.confidence;
    assert_eq!(restored, before);
    assert_eq!(
        m.claims(&owner(), "maya", ClaimHistory::Current)
            .unwrap()
            .len(),
        1
    );
    assert!(retrieved(&m, "Where does Maya work? Northwind").contains(&claim));

    // After the undo the same request is a new one.
    let r2 = m
        .retract_claim(&owner(), claim, "she never worked there")
        .unwrap();
    assert!(!r2.replayed);
    assert_ne!(r2.op_id, r.op_id);
    assert_eq!(
        m.node(&owner(), claim).unwrap().lifecycle,
        Lifecycle::Archived
    );
}

#[test]
fn retract_round_trip_on_the_heuristic() {
    retract_round_trip_on(false);
}

#[test]
fn retract_round_trip_on_recorded_replies() {
    retract_round_trip_on(true);
}

fn correct_round_trip_on(recorded: bool) {
    let (_t, m, _s, claim) = maya_works_at_northwind(recorded);
    let before = m.node(&owner(), claim).unwrap();

    let r = m
        .correct_claim(&owner(), claim, "Contoso", "she works at Contoso")
        .unwrap();
    assert_eq!(r.kind, OperationKind::ClaimCorrected);
    let new = r.replacement.unwrap();
    let old = m.node(&owner(), claim).unwrap();
    assert_eq!(old.lifecycle, Lifecycle::Superseded);
    assert_eq!(old.superseded_by, Some(new));
    let replacement = m.node(&owner(), new).unwrap();
    assert_eq!(replacement.content, "I work at Contoso.");
    assert_eq!(replacement.evidence_refs, before.evidence_refs);
    let md = replacement.metadata.as_ref().unwrap();
    assert_eq!(md["object"], "Contoso");
    assert_eq!(md["correction"]["from_object"], "Northwind");
    assert_eq!(md["correction"]["by"], "owner");
    assert_eq!(common::open_subjects(&m, &replacement), vec!["Maya"]);

    let current = m.claims(&owner(), "Maya", ClaimHistory::Current).unwrap();
    assert_eq!(current.len(), 1, "{current:?}");
    assert_eq!(current[0].id, new);
    assert_eq!(current[0].object.as_deref(), Some("Contoso"));
    assert!(
        matches!(&current[0].edited, Some(ClaimEdit::Corrected { op_id, from_object, .. })
            if *op_id == r.op_id && from_object == "Northwind"),
        "{:?}",
        current[0].edited
    );
    let all = m.claims(&owner(), "Maya", ClaimHistory::All).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].id, claim);
    assert_eq!(all[1].superseded_by, Some(new));

    let got = retrieved(&m, "Where does Maya work? Contoso Northwind");
    assert!(got.contains(&new), "{got:?}");
    assert!(!got.contains(&claim), "{got:?}");

    let again = m
        .correct_claim(&owner(), claim, "Contoso", "she works at Contoso")
        .unwrap();
    assert_eq!(
        (again.op_id, again.replacement, again.replayed),
        (r.op_id, Some(new), true)
    );

    let u = m.undo(&owner(), r.op_id).unwrap();
    assert_eq!(u.undone_kind, OperationKind::ClaimCorrected);
    assert_eq!(u.removed_edges.len(), 2, "the subject link and SUPERSEDES");
    let mut restored = m.node(&owner(), claim).unwrap();
    restored.confidence = before.confidence;
    assert_eq!(restored, before);
    assert_eq!(
        m.node(&owner(), new).unwrap_err().kind(),
        kith::ErrorKind::NotFound
    );
    let current = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].id, claim);
    let got = retrieved(&m, "Where does Maya work? Contoso Northwind");
    assert!(got.contains(&claim) && !got.contains(&new), "{got:?}");
}

#[test]
fn correct_round_trip_on_the_heuristic() {
    correct_round_trip_on(false);
}

#[test]
fn correct_round_trip_on_recorded_replies() {
    correct_round_trip_on(true);
}

#[test]
fn bad_requests_change_nothing() {
    let (_t, m, _s, claim) = maya_works_at_northwind(false);
    say(&m, "other", "I work at Fabrikam.", "Ravi");
    let others = m
        .claims(
            &OwnerId::new("other").unwrap(),
            "ravi",
            ClaimHistory::Current,
        )
        .unwrap();
    assert_eq!(others.len(), 1);
    let maya = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap()[0].subject_id;
    let before = common::snapshot(&m, "owner");

    let cases: Vec<(&str, Uuid, &str, &str, kith::ErrorKind)> = vec![
        (
            "unknown id",
            Uuid::nil(),
            "Contoso",
            "wrong",
            kith::ErrorKind::NotFound,
        ),
        (
            "another owner's claim",
            others[0].id,
            "Contoso",
            "wrong",
            kith::ErrorKind::NotFound,
        ),
        (
            "an entity",
            maya,
            "Contoso",
            "wrong",
            kith::ErrorKind::InvalidInput,
        ),
        (
            "an empty reason",
            claim,
            "Contoso",
            "  ",
            kith::ErrorKind::InvalidInput,
        ),
        (
            "an empty object",
            claim,
            " ",
            "wrong",
            kith::ErrorKind::InvalidInput,
        ),
        (
            "the same object",
            claim,
            "northwind",
            "wrong",
            kith::ErrorKind::InvalidInput,
        ),
    ];
    for (what, id, object, reason, kind) in &cases {
        let err = m.correct_claim(&owner(), *id, object, reason).unwrap_err();
        assert_eq!(err.kind(), *kind, "correct {what}: {err}");
        if *object != " " && !what.contains("same") {
            let err = m.retract_claim(&owner(), *id, reason).unwrap_err();
            assert_eq!(err.kind(), *kind, "retract {what}: {err}");
        }
    }
    assert_eq!(common::snapshot(&m, "owner"), before);
    assert!(m.claims(&owner(), "  ", ClaimHistory::Current).is_err());
    assert!(m
        .claims(&owner(), "nobody", ClaimHistory::All)
        .unwrap()
        .is_empty());

    // A retracted claim can be neither corrected nor retracted again.
    m.retract_claim(&owner(), claim, "wrong").unwrap();
    let before = common::snapshot(&m, "owner");
    let err = m
        .correct_claim(&owner(), claim, "Contoso", "x")
        .unwrap_err();
    assert_eq!(err.kind(), kith::ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("archived"), "{err}");
    assert_eq!(common::snapshot(&m, "owner"), before);
}

#[test]
fn an_undo_waits_for_a_later_edit() {
    let (_t, m, _s, claim) = maya_works_at_northwind(false);
    let c = m
        .correct_claim(&owner(), claim, "Contoso", "moved")
        .unwrap();
    let new = c.replacement.unwrap();
    let r = m
        .retract_claim(&owner(), new, "not Contoso either")
        .unwrap();
    let before = common::snapshot(&m, "owner");
    let err = m.undo(&owner(), c.op_id).unwrap_err();
    assert!(
        matches!(err, kith::Error::Organizer(OrganizerError::UndoRefused { op, .. }) if op == c.op_id),
        "{err:?}"
    );
    assert_eq!(common::snapshot(&m, "owner"), before);
    // Undone in reverse order, both go.
    m.undo(&owner(), r.op_id).unwrap();
    m.undo(&owner(), c.op_id).unwrap();
    let current = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap();
    assert_eq!(
        current.iter().map(|f| f.id).collect::<Vec<_>>(),
        vec![claim]
    );
    assert!(m.doctor().unwrap().healthy());
}

/// Forgetting the message a corrected claim came from removes the claim and
/// its replacement (both rest on it) and scrubs the CLAIM_CORRECTED record.
#[test]
fn forgetting_the_message_takes_the_correction_with_it() {
    let (_t, m, _s, claim) = maya_works_at_northwind(false);
    let event = m.node(&owner(), claim).unwrap().evidence_refs[0];
    let c = m
        .correct_claim(&owner(), claim, "Contoso", "moved")
        .unwrap();
    let new = c.replacement.unwrap();
    m.forget(
        &owner(),
        &kith::ForgetRequest {
            selector: kith::ForgetSelector::Event(event),
            reason: "asked".into(),
            dry_run: false,
        },
    )
    .unwrap();
    for id in [claim, new] {
        assert_eq!(
            m.node(&owner(), id).unwrap_err().kind(),
            kith::ErrorKind::NotFound
        );
    }
    assert!(m
        .claims(&owner(), "maya", ClaimHistory::All)
        .unwrap()
        .is_empty());
    let records = m
        .journal(
            &owner(),
            &kith::JournalQuery {
                kind: Some(OperationKind::ClaimCorrected),
                ..kith::JournalQuery::default()
            },
        )
        .unwrap();
    assert_eq!(records.len(), 1);
    assert!(
        kith::tombstone::is_scrubbed(&records[0].payload),
        "{records:?}"
    );
    assert!(!records[0].payload.to_string().contains("Northwind"));
    assert!(m.doctor().unwrap().healthy());
}

/// Retrieval with every path on (vectors too): a retracted claim is never
/// returned or packed, a corrected claim's replacement is and the old one
/// is not, from the moment each edit commits. One body per backend.
fn retrieval_follows_edits(m: &Memory) {
    say(m, "owner", "I work at Northwind.", "Maya");
    say(m, "owner", "I live in Lisbon.", "Maya");
    let facts = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap();
    assert_eq!(facts.len(), 2, "{facts:?}");
    let id_of = |object: &str| {
        facts
            .iter()
            .find(|f| f.object.as_deref() == Some(object))
            .unwrap_or_else(|| panic!("no claim with {object}: {facts:?}"))
            .id
    };
    let (work, home) = (id_of("Northwind"), id_of("Lisbon"));
    let q = "Where does Maya work and live? Northwind Lisbon Contoso";
    let got = retrieved(m, q);
    assert!(got.contains(&work) && got.contains(&home), "{got:?}");

    m.retract_claim(&owner(), home, "she never lived there")
        .unwrap();
    let c = m
        .correct_claim(&owner(), work, "Contoso", "she moved")
        .unwrap();
    let new = c.replacement.unwrap();
    let got = retrieved(m, q);
    assert!(got.contains(&new), "{got:?}");
    assert!(!got.contains(&work) && !got.contains(&home), "{got:?}");
    let r = m
        .retrieve(&RetrieveRequest::new("owner", q).unwrap())
        .unwrap();
    assert!(r.context.contains("I work at Contoso."), "{}", r.context);
}

#[test]
fn retrieval_follows_edits_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let m = Memory::init_with_embedder(&tmp.path().join("p.kith"), hashing()).unwrap();
    retrieval_follows_edits(&m);
}

#[test]
fn retrieval_follows_edits_on_postgres() {
    let db = kith_store::postgres::testing::test_database();
    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    retrieval_follows_edits(&m);
}

/// A re-derivation of the message keeps the owner's word: a retracted claim
/// stays retracted, a corrected one stays replaced.
#[test]
fn a_reingest_keeps_the_owners_edits() {
    let (_t, m, _s, claim) = maya_works_at_northwind(false);
    let event = m.node(&owner(), claim).unwrap().evidence_refs[0];
    let r = m.retract_claim(&owner(), claim, "wrong").unwrap();
    m.reingest_event(&owner(), event).unwrap();
    assert!(m
        .claims(&owner(), "maya", ClaimHistory::Current)
        .unwrap()
        .is_empty());
    m.undo(&owner(), r.op_id).unwrap();
    let c = m
        .correct_claim(&owner(), claim, "Contoso", "moved")
        .unwrap();
    m.reingest_event(&owner(), event).unwrap();
    let current = m.claims(&owner(), "maya", ClaimHistory::Current).unwrap();
    assert_eq!(
        current.iter().map(|f| f.id).collect::<Vec<_>>(),
        vec![c.replacement.unwrap()],
        "{current:?}"
    );
    m.retract_claim(&owner(), c.replacement.unwrap(), "not there either")
        .unwrap();
    m.reingest_event(&owner(), event).unwrap();
    assert!(m
        .claims(&owner(), "maya", ClaimHistory::Current)
        .unwrap()
        .is_empty());
    assert!(m.doctor().unwrap().healthy());
}

/// `kith_ingest_v8`: a claim the owner only reported ("Dev says Ana loves
/// sushi") is unverified and names Dev; once the owner corrects its value,
/// the value is the owner's word: asserted, naming no reporter. Undo
/// brings the reported claim back as it was.
#[test]
fn correcting_a_reported_claim_makes_it_the_owners() {
    let (_t, m, _s) = memory(false);
    say(&m, "owner", "Dev says Ana loves sushi.", "Maya");
    let reported = m.claims(&owner(), "Ana", ClaimHistory::Current).unwrap();
    assert_eq!(reported.len(), 1, "{reported:?}");
    let claim = &reported[0];
    assert_eq!(claim.epistemic_type, kith::EpistemicType::Unverified);
    assert_eq!(
        claim.reported.as_ref().and_then(|r| r.by.as_deref()),
        Some("Dev")
    );

    let r = m
        .correct_claim(&owner(), claim.id, "ramen", "she told me herself")
        .unwrap();
    let current = m.claims(&owner(), "Ana", ClaimHistory::Current).unwrap();
    assert_eq!(current.len(), 1, "{current:?}");
    assert_eq!(current[0].id, r.replacement.unwrap());
    assert_eq!(current[0].object.as_deref(), Some("ramen"));
    assert_eq!(current[0].epistemic_type, kith::EpistemicType::Asserted);
    assert!(current[0].reported.is_none(), "{:?}", current[0].reported);

    m.undo(&owner(), r.op_id).unwrap();
    let back = m.claims(&owner(), "Ana", ClaimHistory::Current).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].id, claim.id);
    assert_eq!(back[0].epistemic_type, kith::EpistemicType::Unverified);
    assert_eq!(back[0].reported, claim.reported);
}
