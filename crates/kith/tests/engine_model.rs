//! A model-based test of the engine on both backends (redb's discipline):
//! proptest generates sequences of operations — store, ingest (the default
//! heuristic extractor), reingest, organize, undo of a merge, forget of an
//! event or a session — applies each to a real [`Memory`] and to a small
//! in-memory reference model of what was acknowledged and what was
//! forgotten, and after **every** step checks that the two agree:
//!
//! - the owner's events, in order, are exactly the acknowledged ones, and
//!   exactly the forgotten ones are tombstones (no content, no speaker);
//! - each live message's marker word is found by search, and no forgotten
//!   message's marker is found anywhere;
//! - `stats` counts the model's events;
//! - `doctor` finds nothing wrong.
//!
//! A refused operation must be refused with a typed error and change
//! nothing the model can see. On failure proptest shrinks the sequence to
//! a short one that still fails.
//!
//! Each case runs as a fresh owner in one store per backend (a new
//! PostgreSQL database per case would cost more than the case).

use std::sync::atomic::{AtomicUsize, Ordering};

use kith::{
    EventInput, EventQuery, ForgetRequest, ForgetSelector, IngestOptions, Job, Memory, OwnerId,
    SearchRequest,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use uuid::Uuid;

/// What people write, with names and first persons for the heuristic to
/// read; each message also gets a marker word of its own.
const SENTENCES: &[&str] = &[
    "I moved to Lisbon with Jordan last spring.",
    "Jordan and I adopted a dog called Pixel.",
    "Sam works at Northwind now.",
    "I started a new job at Northwind!",
    "Mel said, \"I painted a lake sunrise.\"",
    "Honestly, Lisbon is lovely in May.",
    "My sister Ana lives in Porto.",
    // An abbreviation and its expansion: the organizer merges these, so
    // sequences reach undo.
    "I write JS at work.",
    "I mostly write JavaScript these days.",
];

#[derive(Debug, Clone)]
enum Op {
    /// `store()` a message (a note, nothing extracted).
    Store { session: usize, sentence: usize },
    /// `ingest()` a message with the heuristic extractor, inline.
    Ingest { session: usize, sentence: usize },
    /// Re-derive the i-th message (modulo how many there are).
    Reingest(usize),
    /// Run every organizer job.
    Organize,
    /// Undo the i-th merge the organizer reported (modulo).
    Undo(usize),
    /// Forget the i-th message.
    ForgetEvent(usize),
    /// Forget a whole session.
    ForgetSession(usize),
}

fn op() -> impl Strategy<Value = Op> {
    // Half the time one of the abbreviation pair, so merges (and undos of
    // them) come up in most sequences.
    let n = SENTENCES.len();
    let sentence = prop_oneof![0..n, n - 2..n];
    prop_oneof![
        3 => (0..3usize, sentence.clone()).prop_map(|(session, sentence)| Op::Store { session, sentence }),
        4 => (0..3usize, sentence).prop_map(|(session, sentence)| Op::Ingest { session, sentence }),
        1 => any::<usize>().prop_map(Op::Reingest),
        2 => Just(Op::Organize),
        2 => any::<usize>().prop_map(Op::Undo),
        1 => any::<usize>().prop_map(Op::ForgetEvent),
        1 => (0..3usize).prop_map(Op::ForgetSession),
    ]
}

/// One acknowledged message, as the model knows it.
#[derive(Debug, Clone)]
struct Message {
    id: Uuid,
    session: usize,
    marker: String,
    forgotten: bool,
}

/// The reference model: messages in acknowledgement order, and the
/// organizer's merges (undo targets).
#[derive(Debug, Default)]
struct Model {
    messages: Vec<Message>,
    merges: Vec<Uuid>,
}

/// A word no sentence holds and the tokenizer keeps whole: letters only.
fn marker(n: usize) -> String {
    let mut s = String::from("qzv");
    let mut n = n + 1;
    while n > 0 {
        s.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    s
}

fn input(owner: &OwnerId, session: usize, text: String) -> EventInput {
    EventInput {
        owner_id: Some(owner.as_str().to_string()),
        session_id: Some(format!("s{session}")),
        speaker: Some("Maya Okafor".into()),
        ..EventInput::new("user", &text)
    }
}

/// Applies `op` to the memory and the model. An error must be typed and
/// leave the model's view unchanged (the check after the step sees that).
fn apply(memory: &Memory, owner: &OwnerId, model: &mut Model, op: &Op, counter: &AtomicUsize) {
    let pick = |i: usize| (!model.messages.is_empty()).then(|| i % model.messages.len());
    match *op {
        Op::Store { session, sentence } | Op::Ingest { session, sentence } => {
            let marker = marker(counter.fetch_add(1, Ordering::Relaxed));
            let text = format!("{} {marker}", SENTENCES[sentence]);
            let id = if matches!(op, Op::Store { .. }) {
                memory.store(input(owner, session, text)).unwrap().event_id
            } else {
                memory
                    .ingest(input(owner, session, text), IngestOptions::default())
                    .unwrap()
                    .event_id
            };
            model.messages.push(Message {
                id,
                session,
                marker,
                forgotten: false,
            });
        }
        Op::Reingest(i) => {
            if let Some(i) = pick(i) {
                // A stored note has no extraction to re-derive and a
                // forgotten event nothing left to derive from: refused or a
                // no-op, either way nothing the model sees changes.
                if let Err(e) = memory.reingest_event(owner, model.messages[i].id) {
                    assert!(!e.to_string().is_empty(), "{e:?}");
                }
            }
        }
        Op::Organize => {
            let report = memory
                .organize(owner, &[Job::Deduplicate, Job::AliasResolve], 0)
                .unwrap();
            for job in &report.jobs {
                model.merges.extend(job.merges.iter().map(|m| m.op_id));
            }
        }
        Op::Undo(i) => {
            if !model.merges.is_empty() {
                let op_id = model.merges[i % model.merges.len()];
                // Undone already, or refused because something changed
                // since: a typed refusal, nothing written.
                if let Err(e) = memory.undo(owner, op_id) {
                    assert!(!e.to_string().is_empty(), "{e:?}");
                }
            }
        }
        Op::ForgetEvent(i) => {
            if let Some(i) = pick(i) {
                let request = ForgetRequest {
                    selector: ForgetSelector::Event(model.messages[i].id),
                    reason: "model test".into(),
                    dry_run: false,
                };
                // Forgetting a forgotten event again is harmless either way:
                // a no-op or a typed refusal.
                match memory.forget(owner, &request) {
                    Ok(_) => {}
                    Err(e) => assert!(model.messages[i].forgotten, "forget: {e}"),
                }
                model.messages[i].forgotten = true;
            }
        }
        Op::ForgetSession(session) => {
            let request = ForgetRequest {
                selector: ForgetSelector::Session(
                    kith::SessionId::new(format!("s{session}")).unwrap(),
                ),
                reason: "model test".into(),
                dry_run: false,
            };
            let known = model.messages.iter().any(|m| m.session == session);
            match memory.forget(owner, &request) {
                Ok(_) => assert!(known, "forgot a session the owner never had"),
                // A session the owner never had: refused, nothing written.
                Err(e) => assert!(
                    !known && e.kind() == kith::ErrorKind::NotFound,
                    "forget session s{session}: {e}"
                ),
            }
            for m in model.messages.iter_mut().filter(|m| m.session == session) {
                m.forgotten = true;
            }
        }
    }
}

/// The memory agrees with the model; `Err` says where it does not.
fn check(memory: &Memory, owner: &OwnerId, model: &Model) -> Result<(), TestCaseError> {
    let events = memory
        .events(&EventQuery {
            owner: Some(owner.clone()),
            limit: 10_000,
            ..EventQuery::default()
        })
        .unwrap();
    let ids: Vec<Uuid> = events.iter().map(|e| e.event.id).collect();
    let want: Vec<Uuid> = model.messages.iter().map(|m| m.id).collect();
    prop_assert_eq!(
        ids,
        want,
        "the owner's events are the acknowledged ones, in order"
    );
    for (stored, m) in events.iter().zip(&model.messages) {
        prop_assert_eq!(
            stored.tombstone.is_some(),
            m.forgotten,
            "tombstone of {}",
            m.marker
        );
        if m.forgotten {
            prop_assert!(
                stored.event.content.is_empty(),
                "a tombstone keeps no content"
            );
            prop_assert!(
                stored.event.speaker.is_none(),
                "a tombstone keeps no speaker"
            );
        } else {
            prop_assert!(stored.event.content.contains(&m.marker));
        }
    }
    for m in &model.messages {
        let hits = memory
            .search(&SearchRequest::new(owner.as_str(), &m.marker).unwrap())
            .unwrap();
        if m.forgotten {
            prop_assert!(
                hits.is_empty(),
                "forgotten {} still found: {:?}",
                m.marker,
                hits
            );
        } else {
            prop_assert!(
                hits.iter().any(|h| h.content.contains(&m.marker)),
                "live {} not found",
                m.marker
            );
        }
    }
    let stats = memory.stats(Some(owner)).unwrap();
    prop_assert_eq!(stats.events as usize, model.messages.len());
    let doctor = memory.doctor().unwrap();
    prop_assert!(doctor.problems.is_empty(), "doctor: {:?}", doctor.problems);
    Ok(())
}

/// Runs generated sequences against `memory`, one fresh owner per case.
fn run_model(memory: &Memory, backend: &str, cases: u32) {
    let counter = AtomicUsize::new(0);
    let case_no = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(op(), 1..16), |ops| {
        let owner = OwnerId::new(format!(
            "{backend}-case-{}",
            case_no.fetch_add(1, Ordering::Relaxed)
        ))
        .unwrap();
        let mut model = Model::default();
        for (step, op) in ops.iter().enumerate() {
            apply(memory, &owner, &mut model, op, &counter);
            check(memory, &owner, &model)
                .map_err(|e| TestCaseError::fail(format!("after step {step} ({op:?}): {e}")))?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{backend}: {e}");
    }
}

#[test]
fn engine_agrees_with_the_model_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let memory = Memory::init(&tmp.path().join("model.kith")).unwrap();
    run_model(&memory, "sqlite", 24);
}

#[test]
fn engine_agrees_with_the_model_on_postgres() {
    let db = kith_store::postgres::testing::test_database();
    let memory = Memory::init_database(db.url(), None).unwrap();
    run_model(&memory, "postgres", 16);
}
