//! Issue 9's concurrency test: 8 writers ingest into one owner while an
//! organizer merges duplicates in the same memory, all on one PostgreSQL
//! database, each writer with its own connection pool (as separate
//! processes would have). Afterwards `doctor` finds no damage, every
//! acknowledged event is present with its derivation complete, and every
//! merge kept the union of its evidence.
//!
//! Ingests per writer: `KITH_PG_CONCURRENCY_INGESTS` (default 250, so the
//! debug test stays near a minute on two cores; the full figure is
//! 1,000 — run it with `KITH_PG_CONCURRENCY_INGESTS=1000`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use kith::embedding::EmbeddingSpec;
use kith::{EventInput, EventQuery, IngestOptions, Job, Memory, OwnerId, WorkStatus};
use kith_store::postgres::testing::test_database;

mod common;
use kith_store::{TxMode, WorkQuery};
use uuid::Uuid;

const WRITERS: usize = 8;
const OWNER: &str = "team";

const TEXTS: &[&str] = &[
    "I adopted a rescue dog called Biscuit.",
    "Jordan started a pottery class in Berlin.",
    "Priya moved to Lisbon last month.",
    "I finished the quarterly report for Acme.",
    "Sam and I went hiking near the river.",
    "Omar is learning to play the violin.",
    "The Aurora project needs approval from Ops.",
    "Grace booked flights to Osaka.",
];

/// Message `i` of writer `w`: mostly distinct, but every 25th is one of
/// a few shared sentences, so that writers derive duplicate claims the
/// organizer merges while more arrive (merging every message into a few
/// ever-growing nodes would make the test slow, not stronger).
fn text(w: usize, i: usize) -> String {
    let base = TEXTS[(w + i) % TEXTS.len()];
    if i.is_multiple_of(25) {
        base.to_string()
    } else {
        format!(
            "{} It was day {i} for writer {w}.",
            base.trim_end_matches('.')
        )
    }
}

fn ingests_per_writer() -> usize {
    std::env::var("KITH_PG_CONCURRENCY_INGESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250)
}

#[test]
fn eight_writers_and_an_organizer_lose_nothing() {
    let n = ingests_per_writer();
    let db = test_database();
    // With vectors (the hashing embedder): every note is embedded under
    // concurrent writers, the organizer's semantic pass searches them from
    // its process's in-process copy while they grow, and the copy is checked
    // against every write at the end. `KITH_PG_CONCURRENCY_VECTORS=0` leaves
    // vectors out (the 8 x 1,000 run is then about 80 s shorter).
    let vectors = std::env::var("KITH_PG_CONCURRENCY_VECTORS").as_deref() != Ok("0");
    let embedder = if vectors {
        EmbeddingSpec::parse("hashing-64").unwrap().load().unwrap()
    } else {
        None
    };
    let model = embedder.as_ref().map(|e| e.model_id().to_string());
    drop(Memory::init_database(db.url(), embedder).unwrap());
    let owner = OwnerId::new(OWNER).unwrap();
    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    // A copy of the owner's vectors made while the writers start, and
    // grown by a search every 100 ms while they write; checked at the end.
    let copy = Arc::new(kith_store::postgres::PgStore::connect(db.url()).unwrap());
    copy.set_vector_cache(kith_store::postgres::VectorCacheMode::Eager);
    let searcher = model.map(|model| {
        let (copy, done, owner) = (Arc::clone(&copy), Arc::clone(&done), owner.clone());
        std::thread::spawn(move || {
            use kith_store::Store;
            let mut searches = 0;
            while !done.load(Ordering::SeqCst) {
                let mut tx = copy.begin(TxMode::Read).unwrap();
                let mut vector = vec![0.0f32; 64];
                vector[searches % 64] = 1.0;
                tx.search_vector(&kith_store::VectorQuery {
                    owner: owner.clone(),
                    model: model.clone(),
                    vector,
                    filters: kith_store::SearchFilters::default(),
                    limit: 10,
                })
                .unwrap();
                drop(tx);
                searches += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            searches
        })
    });

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let url = db.url().to_string();
            std::thread::spawn(move || {
                let m = Memory::connect(&url).unwrap();
                let mut acked = Vec::with_capacity(n);
                for i in 0..n {
                    let r = m
                        .ingest(
                            EventInput {
                                owner_id: Some(OWNER.into()),
                                session_id: Some(format!("w{w}-s{}", i / 50)),
                                speaker: Some(format!("Writer{w}")),
                                source_id: Some(format!("w{w}-{i}")),
                                event_time: Some("2025-03-01T10:00:00+00:00".into()),
                                ..EventInput::new("user", &text(w, i))
                            },
                            IngestOptions::default(),
                        )
                        .unwrap_or_else(|e| panic!("writer {w} ingest {i}: {e}"));
                    acked.push(r.event_id);
                }
                acked
            })
        })
        .collect();

    let organizer = {
        let url = db.url().to_string();
        let done = done.clone();
        let owner = owner.clone();
        std::thread::spawn(move || {
            let m = Memory::connect(&url).unwrap();
            let mut runs = 0;
            let mut merges = Vec::new();
            let mut seeded = 0;
            let mut exhausted = 0;
            loop {
                let finished = done.load(Ordering::SeqCst);
                // Give each run something to merge: a fresh pair of copies
                // whose evidence is two events already written.
                let events = m
                    .events(&EventQuery {
                        owner: Some(owner.clone()),
                        limit: 2,
                        ..EventQuery::default()
                    })
                    .unwrap();
                if events.len() == 2 {
                    common::claim_copies(
                        &m,
                        OWNER,
                        [events[0].event.id, events[1].event.id],
                        &format!("Seeded fact number {seeded} is repeated."),
                        serde_json::json!({"subject": "seed", "predicate": "is", "object": seeded}),
                    );
                    seeded += 1;
                }
                // The default budget (1,000 pairs a job) while writers
                // run; the last run examines every pair. Runs examine the
                // newest pairs first, so pairs refused in one run wait
                // behind what was written since.
                let budget = if finished { 1_000_000 } else { 0 };
                let report = m
                    .organize(&owner, &[Job::Deduplicate, Job::AliasResolve], budget)
                    .unwrap_or_else(|e| panic!("organizer run {runs}: {e}"));
                runs += 1;
                exhausted += report.jobs.iter().filter(|j| j.budget_exhausted).count();
                merges.extend(report.jobs.into_iter().flat_map(|j| j.merges));
                if finished {
                    break;
                }
            }
            (runs, seeded, merges, exhausted)
        })
    };

    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.join().expect("writer thread"));
    }
    let ingest_secs = started.elapsed().as_secs_f64();
    done.store(true, Ordering::SeqCst);
    let (runs, seeded, merges, exhausted) = organizer.join().expect("organizer thread");
    let searches = searcher.map(|s| s.join().expect("searcher thread"));
    let organizer_secs = started.elapsed().as_secs_f64() - ingest_secs;
    eprintln!(
        "{WRITERS} writers x {n} ingests in {ingest_secs:.1} s ({:.0}/s) with {runs} organizer runs ({exhausted} jobs out of budget), {} merges; last organizer run ended {organizer_secs:.1} s later",
        acked.len() as f64 / ingest_secs,
        merges.len()
    );

    let m = Memory::connect(db.url()).unwrap();
    // Every acknowledged event is there, once, and nothing else is.
    assert_eq!(acked.len(), WRITERS * n);
    let acked: HashSet<Uuid> = acked.into_iter().collect();
    assert_eq!(acked.len(), WRITERS * n, "distinct event ids");
    let mut present = HashSet::new();
    let mut after = 0;
    loop {
        let page = m
            .events(&EventQuery {
                owner: Some(owner.clone()),
                after_seq: after,
                limit: 1000,
                ..EventQuery::default()
            })
            .unwrap();
        let Some(last) = page.last() else { break };
        after = last.seq;
        present.extend(page.iter().map(|e| e.event.id));
    }
    assert_eq!(present, acked);

    // Every derivation completed.
    let mut tx = m.store_backend().begin(TxMode::Read).unwrap();
    let unfinished = tx
        .list_work_items(&WorkQuery {
            owner: Some(owner.clone()),
            statuses: vec![WorkStatus::Pending, WorkStatus::Running, WorkStatus::Failed],
            ..WorkQuery::default()
        })
        .unwrap();
    assert!(unfinished.is_empty(), "{unfinished:?}");
    drop(tx);

    // The organizer merged every seeded pair exactly once, and each merge
    // kept the union of the evidence.
    assert!(seeded > 0);
    let seeded_merges = merges.iter().filter(|mg| mg.basis == "exact_copy").count();
    assert!(
        seeded_merges >= seeded,
        "{seeded_merges} merges for {seeded} pairs"
    );
    let ops: HashSet<Uuid> = merges.iter().map(|mg| mg.op_id).collect();
    assert_eq!(ops.len(), merges.len(), "no merge applied twice");
    for mg in &merges {
        let keep = m.node(&owner, mg.keep_id).unwrap();
        let retired = m.node(&owner, mg.retired_id).unwrap();
        assert_eq!(retired.superseded_by, Some(keep.id));
        for ev in &retired.evidence_refs {
            assert!(keep.evidence_refs.contains(ev), "evidence union lost");
        }
    }

    if let Some(searches) = searches {
        assert!(searches > 1, "the copy was searched while writers wrote");
        every_note_is_found_by_its_own_vector(&copy, &owner);
    }

    let checks = Instant::now();
    let doctor = m.doctor().unwrap();
    eprintln!(
        "checks {:.1} s (doctor included)",
        checks.elapsed().as_secs_f64()
    );
    assert!(doctor.healthy(), "{:?}", doctor.problems);
    assert_eq!(doctor.events_checked, (WRITERS * n) as u64);
}

/// Every unique note written by the concurrent writers is found by a search
/// for its own vector, answered from `store`'s in-process copy, made when
/// the writers started and grown by `seq` while they committed: it missed
/// none of their writes. Notes repeating a base text (identical vectors, up
/// to hundreds of them) are skipped: their own id need not make a top 10.
fn every_note_is_found_by_its_own_vector(store: &kith_store::postgres::PgStore, owner: &OwnerId) {
    use kith_store::{NodeQuery, SearchFilters, Store, VectorQuery};
    let mut tx = store.begin(TxMode::Read).unwrap();
    let mut notes = Vec::new();
    let mut after = 0;
    loop {
        let page = tx
            .list_nodes(&NodeQuery {
                owner: Some(owner.clone()),
                node_types: vec![kith::NodeType::Note],
                after_seq: after,
                limit: 1000,
                ..NodeQuery::default()
            })
            .unwrap();
        let Some(last) = page.last() else { break };
        after = last.seq;
        notes.extend(
            page.into_iter()
                .map(|s| s.node)
                .filter(|n| n.lifecycle.is_active() && n.content.contains("It was day")),
        );
    }
    assert!(notes.len() > 100, "{} unique notes", notes.len());
    let mut checked = 0;
    for note in notes.iter().step_by(7) {
        let (model, vector) = tx
            .get_embedding(note.id)
            .unwrap()
            .unwrap_or_else(|| panic!("note {} has no vector", note.id));
        let hits = tx
            .search_vector(&VectorQuery {
                owner: owner.clone(),
                model,
                vector,
                filters: SearchFilters::default(),
                limit: 10,
            })
            .unwrap();
        assert!(
            hits.iter().any(|h| h.node_id == note.id),
            "note {} ({:?}) not found by its own vector",
            note.id,
            note.content
        );
        checked += 1;
    }
    assert_eq!(store.vector_cache_owners().len(), 1);
    eprintln!("{checked} notes found by their own vectors from the grown in-process copy");
}
