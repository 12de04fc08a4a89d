//! A pass with nothing new is answered from the last pass (issue 20, item
//! 11), and every kind of change makes the next pass a full one.
//!
//! Two packs take the same random steps in lockstep: new entities, new
//! duplicate notes, renames written straight to the store, organizer runs
//! (merges and proposals), undos, explicit proposals and reviews. Before each
//! organizer run the reference pack writes an unrelated setting, so its
//! pass always gathers candidates; the other pack may answer from its saved
//! state. Their reports must be equal (apart from the `unchanged` mark and
//! the time), and a second run right after one that applied nothing must be
//! answered `unchanged`.

mod common;

use kith::{
    Decision, EventInput, Job, JournalQuery, Lifecycle, Memory, Node, NodeType, Operation,
    OperationKind, OrganizeReport, OwnerId, ProposeAliasRequest, ScopeId, Timestamp,
};
use kith_core::{EpistemicType, SourceType};
use kith_store::TxMode;
use proptest::prelude::*;
use serde_json::{json, Value};
use uuid::Uuid;

const NAMES: &[&str] = &["JS", "JavaScript", "js", "ECMAScript", "Python", "py"];

#[derive(Debug, Clone)]
enum Step {
    NewEntity(usize),
    NewNote(usize),
    Rename(usize, usize),
    Organize,
    UndoMerge(usize),
    UndoAccept(usize),
    Propose(usize, usize),
    Review(usize, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..NAMES.len()).prop_map(Step::NewEntity),
        1 => (0..3usize).prop_map(Step::NewNote),
        1 => (0..8usize, 0..NAMES.len()).prop_map(|(k, n)| Step::Rename(k, n)),
        4 => Just(Step::Organize),
        2 => (0..8usize).prop_map(Step::UndoMerge),
        1 => (0..8usize).prop_map(Step::UndoAccept),
        2 => (0..8usize, 0..8usize).prop_map(|(a, b)| Step::Propose(a, b)),
        2 => (0..8usize, any::<bool>()).prop_map(|(k, a)| Step::Review(k, a)),
    ]
}

const OWNER: &str = "p";

fn owner() -> OwnerId {
    OwnerId::new(OWNER).unwrap()
}

fn ts(t: &str) -> Timestamp {
    Timestamp::parse("t", t).unwrap()
}

fn entity(n: usize, name: &str, evidence: Uuid) -> Node {
    let at = ts("2025-03-01T10:00:00+00:00");
    Node {
        id: Uuid::from_u128(0xE000 + n as u128),
        owner_id: owner(),
        scope: ScopeId::personal(),
        session_id: Some(kith::SessionId::new("s1").unwrap()),
        node_type: NodeType::Entity,
        content: name.into(),
        metadata: Some(json!({"entity_type": "technology"})),
        confidence: 0.5,
        lifecycle: Lifecycle::Tentative,
        epistemic_type: EpistemicType::Asserted,
        source_type: SourceType::UserStated,
        valid_from: at,
        valid_to: None,
        event_time: Some(at),
        superseded_by: None,
        evidence_refs: vec![evidence],
        created_at: at,
        updated_at: at,
    }
}

/// A report without what may differ between a full pass and an answered
/// one: the time and the `unchanged` mark.
fn comparable(report: &OrganizeReport) -> Value {
    let mut v = serde_json::to_value(report).unwrap();
    v["duration_ms"] = Value::Null;
    for job in v["jobs"].as_array_mut().unwrap() {
        job["unchanged"] = Value::Null;
        // Notes get random ids and their own times in each pack: a refusal
        // between notes is compared by its reason only.
        for refusal in job["not_applied"].as_array_mut().unwrap() {
            let fixed = |k: &str| {
                refusal[k]
                    .as_str()
                    .is_some_and(|s| s.starts_with(ENTITY_IDS))
            };
            if !(fixed("a") && fixed("b")) {
                refusal["a"] = Value::Null;
                refusal["b"] = Value::Null;
                refusal["detail"] = Value::Null;
            }
        }
    }
    v
}

/// How the test's entity ids (`0xE000 + n`) begin.
const ENTITY_IDS: &str = "00000000-0000-0000-0000-00000000e";

fn journal(m: &Memory, kind: OperationKind) -> Vec<Operation> {
    m.journal(
        &owner(),
        &JournalQuery {
            kind: Some(kind),
            ..JournalQuery::default()
        },
    )
    .unwrap()
}

/// One step on one pack. `reference`: write something first when the step
/// is an organizer run, so the pass is always a full one.
fn apply(m: &Memory, step: &Step, entities: &mut Vec<Uuid>, reference: bool, n: &mut u64) {
    let o = owner();
    match *step {
        Step::NewEntity(i) => {
            let ev = m
                .store(EventInput {
                    owner_id: Some(OWNER.into()),
                    ..EventInput::new("user", &format!("mention {}", entities.len()))
                })
                .unwrap()
                .event_id;
            let node = entity(entities.len(), NAMES[i], ev);
            let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
            tx.insert_node(&node).unwrap();
            tx.commit().unwrap();
            entities.push(node.id);
        }
        Step::NewNote(i) => {
            m.store(EventInput {
                owner_id: Some(OWNER.into()),
                ..EventInput::new("user", &format!("the same sentence {i}"))
            })
            .unwrap();
        }
        Step::Rename(k, name) => {
            if entities.is_empty() {
                return;
            }
            // Straight to the store, with no journal record: the skip must
            // not depend on the journal alone.
            let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
            let mut node = tx.get_node(entities[k % entities.len()]).unwrap().unwrap();
            node.content = NAMES[name].into();
            tx.update_node(&node).unwrap();
            tx.commit().unwrap();
        }
        Step::Organize => {
            if reference {
                *n += 1;
                let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
                tx.set_setting("test_bump", Some(&n.to_string())).unwrap();
                tx.commit().unwrap();
            }
            // The report is compared by the caller.
        }
        Step::UndoMerge(k) | Step::UndoAccept(k) => {
            let kind = match step {
                Step::UndoMerge(_) => OperationKind::OrganizerMerged,
                _ => OperationKind::AliasProposalAccepted,
            };
            let records = journal(m, kind);
            if !records.is_empty() {
                let _ = m.undo(&o, records[k % records.len()].id);
            }
        }
        Step::Propose(a, b) => {
            if entities.len() < 2 {
                return;
            }
            let (a, b) = (entities[a % entities.len()], entities[b % entities.len()]);
            if a != b {
                let req = ProposeAliasRequest {
                    a,
                    b,
                    score: 0.9,
                    assessment: None,
                };
                let _ = m.propose_alias(&o, &req);
            }
        }
        Step::Review(k, accept) => {
            let inbox = m.alias_proposals(&o).unwrap();
            if inbox.is_empty() {
                return;
            }
            let p = &inbox[k % inbox.len()];
            let (decision, reason) = if accept {
                (Decision::Accept, None)
            } else {
                (Decision::Reject, Some("different"))
            };
            let _ = m.review_alias(&o, p.op_id, decision, reason, None);
        }
    }
}

const JOBS: &[Job] = &[Job::Deduplicate, Job::AliasResolve];

fn run_on(fast: &Memory, full: &Memory, steps: &[Step]) -> Result<(), TestCaseError> {
    let (mut fast_entities, mut full_entities) = (Vec::new(), Vec::new());
    let mut n = 0;
    for step in steps {
        apply(fast, step, &mut fast_entities, false, &mut n);
        apply(full, step, &mut full_entities, true, &mut n);
        if !matches!(step, Step::Organize) {
            continue;
        }
        let answered = fast.organize(&owner(), JOBS, 0).unwrap();
        let reference = full.organize(&owner(), JOBS, 0).unwrap();
        prop_assert_eq!(comparable(&answered), comparable(&reference));
        for job in &reference.jobs {
            prop_assert!(!job.unchanged, "the reference pass always runs");
        }
        // Straight after a pass that applied nothing, nothing is new.
        let applied = answered
            .jobs
            .iter()
            .any(|j| !j.merges.is_empty() || !j.proposals.is_empty());
        let again = fast.organize(&owner(), JOBS, 0).unwrap();
        if !applied {
            prop_assert!(again.jobs.iter().all(|j| j.unchanged), "{again:?}");
            prop_assert_eq!(comparable(&again), comparable(&answered));
        }
        // The reference pack takes the same extra pass, so both stay equal.
        n += 1;
        let mut tx = full.store_backend().begin(TxMode::Write).unwrap();
        tx.set_setting("test_bump", Some(&n.to_string())).unwrap();
        tx.commit().unwrap();
        let reference_again = full.organize(&owner(), JOBS, 0).unwrap();
        prop_assert_eq!(comparable(&again), comparable(&reference_again));
    }
    Ok(())
}

fn run(steps: &[Step]) -> Result<(), TestCaseError> {
    let (_t1, _d1, fast) = common::pack();
    let (_t2, _d2, full) = common::pack();
    run_on(&fast, &full, steps)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn an_answered_pass_equals_a_full_pass(steps in prop::collection::vec(step(), 1..20)) {
        run(&steps)?;
    }
}

/// Each kind of change, one after another: a pass after it is a full one
/// and finds what changed.
fn each_change() -> Vec<Step> {
    vec![
        Step::NewEntity(4),
        Step::NewEntity(5),
        Step::Organize,
        Step::Organize,
        Step::NewEntity(0),
        Step::NewEntity(1),
        Step::Organize,
        Step::UndoMerge(0),
        Step::Organize,
        Step::Propose(2, 3),
        Step::Organize,
        Step::Review(0, true),
        Step::Organize,
        Step::UndoAccept(0),
        Step::Organize,
        Step::NewNote(0),
        Step::NewNote(0),
        Step::Organize,
        Step::Rename(0, 0),
        Step::Organize,
    ]
}

#[test]
fn each_kind_of_change_makes_the_next_pass_full() {
    run(&each_change()).unwrap();
}

#[test]
fn a_second_pass_with_nothing_new_is_answered() {
    let (_t, _d, m) = common::pack();
    m.store(common::msg(OWNER, "Jordan moved to Berlin."))
        .unwrap();
    let first = m.organize(&owner(), JOBS, 0).unwrap();
    assert!(first.jobs.iter().all(|j| !j.unchanged));
    let second = m.organize(&owner(), JOBS, 0).unwrap();
    assert!(second.jobs.iter().all(|j| j.unchanged), "{second:?}");
    // Another budget is another request: a full pass.
    let other = m.organize(&owner(), JOBS, 7).unwrap();
    assert!(other.jobs.iter().all(|j| !j.unchanged));
    // A new message makes the next pass a full one.
    m.store(common::msg(OWNER, "Jordan moved to Berlin."))
        .unwrap();
    let after = m.organize(&owner(), JOBS, 0).unwrap();
    assert!(after.jobs.iter().all(|j| !j.unchanged));
}

#[test]
fn the_write_generation_counts_only_commits_that_changed_a_row() {
    let (_t, _d, m) = common::pack();
    let generation = |m: &Memory| {
        m.store_backend()
            .begin(TxMode::Read)
            .unwrap()
            .write_generation()
            .unwrap()
            .unwrap()
    };
    let g0 = generation(&m);
    // A write transaction that changes nothing, and one rolled back.
    m.store_backend()
        .begin(TxMode::Write)
        .unwrap()
        .commit()
        .unwrap();
    {
        let mut tx = m.store_backend().begin(TxMode::Write).unwrap();
        tx.set_setting("x", Some("1")).unwrap();
    }
    assert_eq!(generation(&m), g0);
    m.store(common::msg(OWNER, "hello")).unwrap();
    assert!(generation(&m) > g0);
}

/// The same on PostgreSQL.
#[test]
fn each_kind_of_change_makes_the_next_pass_full_on_postgres() {
    let db1 = kith_store::postgres::testing::test_database();
    let db2 = kith_store::postgres::testing::test_database();
    let fast = Memory::init_database(db1.url(), None).unwrap();
    let full = Memory::init_database(db2.url(), None).unwrap();
    run_on(&fast, &full, &each_change()).unwrap();
    let g = |m: &Memory| {
        m.store_backend()
            .begin(TxMode::Read)
            .unwrap()
            .write_generation()
            .unwrap()
            .unwrap()
    };
    let before = g(&fast);
    fast.store_backend()
        .begin(TxMode::Write)
        .unwrap()
        .commit()
        .unwrap();
    assert_eq!(g(&fast), before, "a write transaction that changed nothing");
}
