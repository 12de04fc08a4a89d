//! A short turn is embedded after the turn before it in its session
//! (`embedding::context`): the same vector whether the turn before came in
//! the same batch, an earlier call, or a rebuild; the vector path finds a
//! short reply by the topic of the turn it answers; and forgetting the turn
//! before leaves no vector made with it — on SQLite and PostgreSQL, with an
//! embedder (made again at once) and without (left to the backlog), and the
//! same on both backends when turns come one call at a time.

mod common;

use common::hashing;
use kith::embedding::turn_vector_text;
use kith::{
    EventInput, ForgetRequest, ForgetSelector, IngestOptions, Memory, OwnerId, RetrieveRequest,
};
use kith_store::postgres::testing::test_database;
use uuid::Uuid;

const OWNER: &str = "maria";

/// [`common::turn`] of [`OWNER`] in `session`.
fn said(session: &str, speaker: &str, source: &str, text: &str) -> EventInput {
    EventInput {
        session_id: Some(session.into()),
        ..common::turn(OWNER, speaker, source, text)
    }
}

const VISIT: &str = "Last week we took the kids to the military memorial downtown, it was a meaningful day for all of us.";
const ASKED: &str = "That's so moving! How did they react when they saw it?";
const REPLY: &str = "They were awestruck and humbled.";

/// The visit, the question and the reply in one session, and distractors in
/// another that share the reply's words but not its topic.
fn conversation() -> Vec<EventInput> {
    vec![
        said("s1", "John", "visit", VISIT),
        said("s1", "Maria", "asked", ASKED),
        said("s1", "John", "reply", REPLY),
        said(
            "s2",
            "John",
            "concert",
            "The concert was loud and fun, we danced all night long.",
        ),
        said(
            "s2",
            "Maria",
            "wow",
            "Wow, they were awestruck and humbled by the band?",
        ),
    ]
}

/// A fresh pack whose notes are embedded by the hashing embedder.
fn pack_with_vectors() -> (tempfile::TempDir, std::path::PathBuf, Memory) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p.kith");
    let m = Memory::init_with_embedder(&dir, hashing()).unwrap();
    (tmp, dir, m)
}

fn vector_of(m: &Memory, event: Uuid) -> Option<Vec<f32>> {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    tx.get_embedding(kith_core::ids::note_node_id(event))
        .unwrap()
        .map(|(_, v)| v)
}

fn embedded(text: &str) -> Vec<f32> {
    hashing().embed(&[text]).unwrap().remove(0)
}

fn event_of(m: &Memory, source: &str) -> kith::StoredEvent {
    let owner = OwnerId::new(OWNER).unwrap();
    m.events(&kith::EventQuery {
        owner: Some(owner),
        limit: 100,
        ..Default::default()
    })
    .unwrap()
    .into_iter()
    .find(|e| e.event.source_id.as_str() == source)
    .expect("stored")
}

/// `batch` gets the conversation in one batch, `one_by_one` one call per
/// turn (the turn before read from the store); then every vector of
/// `one_by_one` is made again by a rebuild. The reply's vector is the same
/// every time.
fn embedded_alike(batch: &Memory, one_by_one: &Memory) {
    let with_question = embedded(&format!("Maria: {ASKED} John: {REPLY}"));
    batch.store_batch(conversation()).unwrap();
    for input in conversation() {
        one_by_one.store(input).unwrap();
    }
    for m in [batch, one_by_one] {
        let reply = event_of(m, "reply");
        assert_eq!(vector_of(m, reply.event.id), Some(with_question.clone()));
        // A long turn is embedded alone.
        let visit = event_of(m, "visit");
        assert_eq!(
            vector_of(m, visit.event.id),
            Some(embedded(&format!("John: {VISIT}")))
        );
    }
    one_by_one.rebuild_embeddings(true, &mut |_, _| {}).unwrap();
    let reply = event_of(one_by_one, "reply");
    assert_eq!(vector_of(one_by_one, reply.event.id), Some(with_question));
    // The rule itself, as the engine exports it.
    assert_eq!(
        turn_vector_text(REPLY, Some("John"), Some(&event_of(batch, "asked").event)),
        format!("Maria: {ASKED} John: {REPLY}")
    );
}

#[test]
fn sqlite_a_short_reply_is_embedded_after_the_turn_it_answers_however_it_was_stored() {
    let (_a, _, batch) = pack_with_vectors();
    let (_b, _, one_by_one) = pack_with_vectors();
    embedded_alike(&batch, &one_by_one);
}

#[test]
fn postgres_a_short_reply_is_embedded_after_the_turn_it_answers_however_it_was_stored() {
    let (a, b) = (test_database(), test_database());
    let batch = Memory::init_database(a.url(), Some(hashing())).unwrap();
    let one_by_one = Memory::init_database(b.url(), Some(hashing())).unwrap();
    embedded_alike(&batch, &one_by_one);
}

#[test]
fn the_vector_path_finds_a_short_reply_by_what_it_answers() {
    // Wide enough that hashed words seldom collide.
    let wide = kith::embedding::EmbeddingSpec::parse("hashing-1024")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), wide).unwrap();
    // Through ingest and the default (heuristic) extractor.
    for input in conversation() {
        m.ingest(input, IngestOptions::default()).unwrap();
    }
    let reply = event_of(&m, "reply");
    let mut req =
        RetrieveRequest::new(OWNER, "How did the kids react at the military memorial?").unwrap();
    req.paths.lexical = false;
    req.paths.neighbours = false;
    req.paths.graph = false;
    let ranked: Vec<Uuid> = m
        .retrieve(&req)
        .unwrap()
        .results
        .iter()
        .map(|r| r.node_id)
        .collect();
    let note = kith_core::ids::note_node_id;
    let at = ranked.iter().position(|id| *id == note(reply.event.id));
    let wow = note(event_of(&m, "wow").event.id);
    let wow_at = ranked.iter().position(|id| *id == wow);
    assert!(
        at.is_some() && (wow_at.is_none() || at < wow_at),
        "the reply ({at:?}) ranks above the look-alike in another session ({wow_at:?})"
    );
}

/// Forgets the question; the reply after it must not keep a vector made
/// with it: made again alone when `m` has an embedder, else gone.
fn forgetting_the_turn_before(m: &Memory, reopened: &Memory, has_embedder: bool) {
    m.store_batch(conversation()).unwrap();
    let owner = OwnerId::new(OWNER).unwrap();
    let (asked, reply) = (event_of(m, "asked"), event_of(m, "reply"));
    let request = |dry_run| ForgetRequest {
        selector: ForgetSelector::Event(asked.event.id),
        reason: "the user asked".into(),
        dry_run,
    };
    let dry = reopened.forget(&owner, &request(true)).unwrap();
    assert_eq!(
        dry.notes_reembedded,
        vec![kith_core::ids::note_node_id(reply.event.id)]
    );
    assert!(
        vector_of(m, reply.event.id).is_some(),
        "a dry run writes nothing"
    );
    let report = reopened.forget(&owner, &request(false)).unwrap();
    assert_eq!(
        report.notes_reembedded,
        vec![kith_core::ids::note_node_id(reply.event.id)]
    );
    assert_eq!(report.vectors_deleted, 2, "the question's and the reply's");
    let now = vector_of(m, reply.event.id);
    if has_embedder {
        assert_eq!(now, Some(embedded(&format!("John: {REPLY}"))));
    } else {
        assert_eq!(now, None, "no vector made with the forgotten turn is left");
        assert_eq!(m.embedding_backlog(Some(&owner)).unwrap(), 1);
        // `kith rebuild --embeddings` fills the backlog, without the turn.
        m.rebuild_embeddings(false, &mut |_, _| {}).unwrap();
        assert_eq!(
            vector_of(m, reply.event.id),
            Some(embedded(&format!("John: {REPLY}")))
        );
    }
    // The turn after the visit was the question, now a tombstone: the
    // visit keeps its own vector.
    let visit = event_of(m, "visit");
    assert_eq!(
        vector_of(m, visit.event.id),
        Some(embedded(&format!("John: {VISIT}")))
    );
}

#[test]
fn sqlite_forgetting_the_turn_before_embeds_the_short_reply_again_without_it() {
    let (_dir, _, m) = pack_with_vectors();
    forgetting_the_turn_before(&m, &m, true);
}

#[test]
fn sqlite_forgetting_without_an_embedder_leaves_the_reply_to_the_backlog() {
    let (_dir, pack, m) = pack_with_vectors();
    let db = pack.join(&m.manifest().unwrap().database);
    let store = kith_store::sqlite::SqliteStore::open(&db, kith_store::sqlite::OpenMode::MustExist)
        .unwrap();
    let without = Memory::with_store(Box::new(store));
    forgetting_the_turn_before(&m, &without, false);
}

#[test]
fn postgres_forgetting_the_turn_before_embeds_the_short_reply_again_without_it() {
    let db = test_database();
    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    forgetting_the_turn_before(&m, &m, true);
}

#[test]
fn postgres_forgetting_without_an_embedder_leaves_the_reply_to_the_backlog() {
    let db = test_database();
    let m = Memory::init_database(db.url(), Some(hashing())).unwrap();
    let without = Memory::with_store(Box::new(
        kith_store::postgres::PgStore::connect(db.url()).unwrap(),
    ));
    forgetting_the_turn_before(&m, &without, false);
}

// ---- the invariant, attacked -----------------------------------------------

use proptest::prelude::*;

/// One step of a generated history.
#[derive(Debug, Clone)]
enum Step {
    /// Store turns (session index, short or long) in one batch.
    Store(Vec<(u8, bool)>),
    /// Forget the n-th stored event (modulo how many there are).
    Forget(usize),
    /// Re-embed every note.
    Rebuild,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => prop::collection::vec((0u8..3, any::<bool>()), 1..4).prop_map(Step::Store),
        2 => any::<usize>().prop_map(Step::Forget),
        1 => Just(Step::Rebuild),
    ]
}

/// After every step, each live note's vector is made from its turn and, when
/// the turn is short, the live turn just before it in its session: never
/// from a forgotten turn, whatever order turns were stored, forgotten and
/// rebuilt in.
fn holds(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let (_dir, _, m) = pack_with_vectors();
    let owner = OwnerId::new(OWNER).unwrap();
    let mut n = 0usize;
    for step in steps {
        match step {
            Step::Store(turns) => {
                let inputs = turns
                    .into_iter()
                    .map(|(session, short)| {
                        n += 1;
                        let speaker = if n.is_multiple_of(2) { "John" } else { "Maria" };
                        let text = if short {
                            format!("Turn {n} is short.")
                        } else {
                            format!("Turn {n} {}", "goes on and on ".repeat(8))
                        };
                        said(&format!("s{session}"), speaker, &format!("t{n}"), &text)
                    })
                    .collect();
                m.store_batch(inputs).unwrap();
            }
            Step::Forget(i) => {
                let live: Vec<_> = all_events(&m)
                    .into_iter()
                    .filter(|e| e.tombstone.is_none())
                    .collect();
                if live.is_empty() {
                    continue;
                }
                let id = live[i % live.len()].event.id;
                let request = ForgetRequest {
                    selector: ForgetSelector::Event(id),
                    reason: "generated".into(),
                    dry_run: false,
                };
                m.forget(&owner, &request).unwrap();
            }
            Step::Rebuild => {
                m.rebuild_embeddings(true, &mut |_, _| {}).unwrap();
            }
        }
        let events = all_events(&m);
        for (i, e) in events.iter().enumerate() {
            if e.tombstone.is_some() {
                continue;
            }
            let before = events[..i]
                .iter()
                .rev()
                .find(|b| b.event.session_id == e.event.session_id)
                .filter(|b| b.tombstone.is_none())
                .map(|b| &b.event);
            let speaker = e.event.speaker.as_ref().map(|s| s.as_str());
            let want = embedded(&turn_vector_text(&e.event.content, speaker, before));
            prop_assert_eq!(
                vector_of(&m, e.event.id),
                Some(want),
                "turn {} after {:?}",
                e.event.source_id.as_str(),
                before.map(|b| b.source_id.as_str())
            );
        }
    }
    Ok(())
}

/// Every event of the owner, tombstones included, in ingestion order.
fn all_events(m: &Memory) -> Vec<kith::StoredEvent> {
    m.events(&kith::EventQuery {
        owner: Some(OwnerId::new(OWNER).unwrap()),
        limit: 1000,
        ..Default::default()
    })
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_vector_is_made_with_a_turn_that_is_not_the_live_one_before(
        steps in prop::collection::vec(step(), 1..10)
    ) {
        holds(steps)?;
    }
}
