//! Current facts on the demo pack (issue 16), on the default path a user
//! takes: `import` with the default heuristic extractor, then the organizer
//! pass. Maya said "I work at Northwind Analytics…" in March, then in
//! August "I left Northwind Analytics…" (`NOT works_at Northwind
//! Analytics`, which supersedes the first claim) and "I started my new job
//! at Brightpath Labs…" (`works_at Brightpath Labs`). Vectors come from the
//! hashing embedder.

mod common;

use kith::embedding::EmbeddingSpec;
use kith::retrieve::fusion::PathKind;
use kith::{Memory, OwnerId, Retrieval, RetrieveRequest};

fn demo() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let hashing = EmbeddingSpec::parse("hashing-256")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), hashing).unwrap();
    common::import_demo(&m);
    (dir, m)
}

fn ask(m: &Memory, req: RetrieveRequest) -> Retrieval {
    let mut req = req;
    req.record = false;
    m.retrieve(&req).unwrap()
}

/// The demo source id of each result, best first.
fn sources(m: &Memory, r: &Retrieval) -> Vec<String> {
    let owner = OwnerId::new("maya").unwrap();
    r.results
        .iter()
        .map(|i| {
            m.event(&owner, i.provenance.event_id)
                .unwrap()
                .event
                .source_id
                .as_str()
                .to_string()
        })
        .collect()
}

fn rank(sources: &[String], source: &str) -> Option<usize> {
    sources.iter().position(|s| s == source).map(|p| p + 1)
}

/// The claim a result's `current` path names ("claim in force <id>, …").
fn claim_in_force(r: &Retrieval, rank: usize) -> String {
    let via = r.results[rank - 1]
        .trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Current)
        .and_then(|p| p.via.clone())
        .expect("reached as a current fact");
    via.split(',').next().unwrap_or_default().to_string()
}

/// "I left Northwind" replaced "I work at Northwind", but where she works
/// now is the Brightpath turn, said since: a claim in force of the same
/// kind (`works_at`) about her. It joins the current turns with the old
/// turn's score, so it ranks near the top whatever the other paths find
/// (the hashing vectors and BM25 find nothing of "work" in it). Before,
/// it ranked 9th–10th, on the graph path alone, and fell out of the ten as
/// soon as the feedback lifted other turns.
#[test]
fn the_claims_in_force_of_the_same_kind_are_current_facts_too() {
    let (_d, m) = demo();
    for q in [
        "Where does Maya work now?",
        "Where does Maya Okafor work now?",
        "Where does Ms Okafor work now?",
        "Who is Maya working for now?",
    ] {
        let r = ask(&m, RetrieveRequest::new("maya", q).unwrap());
        let s = sources(&m, &r);
        let new_job = rank(&s, "demo-s3-03").expect("the new job");
        let left = rank(&s, "demo-s3-01").expect("the claim that replaced the old one");
        assert!(new_job <= 3, "{q}: new job at {new_job}: {s:?}");
        if let Some(old) = rank(&s, "demo-s1-08") {
            assert!(old > new_job, "{q}: superseded turn at {old}");
        }
        // Each says which claim in force brought it: two different ones.
        assert_ne!(claim_in_force(&r, new_job), claim_in_force(&r, left), "{q}");
    }
    // A question about the past does not bring it in as current.
    let r = ask(
        &m,
        RetrieveRequest::new("maya", "Where did Maya work in March?").unwrap(),
    );
    assert!(r
        .results
        .iter()
        .all(|i| i.trace.paths.iter().all(|p| p.path != PathKind::Current)));
}

/// On the graph path alone, Maya's claims that say what is asked (their
/// predicate shares "work") rank newest said first: her new job
/// (`works_at Brightpath Labs`), then the turn she left Northwind in (`NOT
/// works_at Northwind Analytics`). The import wrote every claim in the same
/// millisecond, so ranking by when a node was written left them in the
/// order of the entity's edges. "Hi both, I want to host a dinner … before
/// things get busy at work" is not offered: its claim (`wants_to host a
/// dinner`) says nothing of work, though its sentence has the word.
#[test]
fn the_graph_path_ranks_equal_matches_newest_said_first() {
    let (_d, m) = demo();
    let req = common::graph_only("maya", "Where did Maya work?");
    let r = ask(&m, req);
    let s = sources(&m, &r);
    assert_eq!(s[..2], ["demo-s3-03", "demo-s3-01"], "{s:?}");
    assert_eq!(rank(&s, "demo-s1-01"), None, "{s:?}");
}

/// A question about someone at large asks nothing one predicate could
/// answer, so the graph path offers every claim of theirs, newest said
/// first: the dinner turn is among them, and so are the old job's turns.
#[test]
fn a_question_about_someone_at_large_takes_all_their_claims() {
    let (_d, m) = demo();
    for q in ["What do you know about Maya?", "Tell me about Maya Okafor."] {
        let mut req = common::graph_only("maya", q);
        req.limit = 50;
        let r = ask(&m, req);
        let s = sources(&m, &r);
        for turn in ["demo-s1-01", "demo-s1-08", "demo-s3-03"] {
            assert!(rank(&s, turn).is_some(), "{q}: {turn} in {s:?}");
        }
        assert!(
            rank(&s, "demo-s3-03") < rank(&s, "demo-s1-01"),
            "{q}: {s:?}"
        );
    }
}
