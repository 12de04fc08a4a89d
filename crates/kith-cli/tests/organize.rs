//! `kith organize`, `kith aliases`, `kith undo`, `kith journal` and `kith
//! doctor` over the organizer's records, as a user runs them.

mod common;

use common::TestPack;

fn store(t: &TestPack, node_type: &str, text: &str) {
    t.ok(&[
        "store",
        "--node-type",
        node_type,
        "--session",
        "s1",
        "--event-time",
        "2025-03-01T10:00:00+00:00",
        text,
    ]);
}

#[test]
fn organize_merges_then_undo_and_journal_show_it() {
    let t = TestPack::new();
    store(&t, "fact", "Aurora requires approval.");
    store(&t, "fact", "Aurora requires approval.");
    store(&t, "fact", "Aurora requires Approval.");
    store(&t, "entity", "JS");
    store(&t, "entity", "JavaScript");

    let out = t.ok(&["organize", "--jobs", "deduplicate,alias_resolve"]);
    assert!(
        out.contains("deduplicate: ") && out.contains("1 merged"),
        "{out}"
    );
    assert!(
        out.contains("policy exact_content_provenance_validity_v1"),
        "{out}"
    );
    assert!(
        out.contains("alias_resolve: ") && out.contains("(alias, abbreviation)"),
        "{out}"
    );
    assert!(out.contains("different_content"), "{out}");

    let merges = t.json(&["journal", "--kind", "ORGANIZER_MERGED"]);
    let merges = merges.as_array().unwrap();
    assert_eq!(merges.len(), 2);
    let first = merges[0]["id"].as_str().unwrap().to_string();
    let kept = merges[0]["target_id"].as_str().unwrap().to_string();
    let by_node = t.json(&["journal", "--node", &kept]);
    assert!(by_node
        .as_array()
        .unwrap()
        .iter()
        .any(|op| op["id"] == first.as_str()));
    assert!(t.ok(&["journal"]).contains("ORGANIZER_MERGED"));
    assert!(t
        .fails(&["journal", "--kind", "NOPE"])
        .contains("--kind NOPE"));

    // Nothing left to do; a second run is a no-op.
    let again = t.json(&["organize", "--budget", "10"]);
    assert_eq!(again["jobs"][0]["merges"].as_array().unwrap().len(), 0);

    let out = t.ok(&["undo", &first]);
    assert!(out.contains("undid ORGANIZER_MERGED"), "{out}");
    assert!(out.contains("restored 2 node(s)"), "{out}");
    assert!(t.ok(&["undo", &first]).contains("already undone"));
    let undos = t.json(&["journal", "--kind", "undo"]);
    assert_eq!(undos.as_array().unwrap().len(), 1);

    // Undo sticks (issue 13 item 11): the next organize leaves the pair
    // apart and says which undo decided it.
    let undo_id = undos[0]["id"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let redo = t.json(&["organize"]);
        assert_eq!(
            redo["jobs"][0]["merges"].as_array().unwrap().len(),
            0,
            "{redo:#}"
        );
        let refused = redo["jobs"][0]["not_applied"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["reason"] == "undone_merge")
            .unwrap_or_else(|| panic!("{redo:#}"))
            .clone();
        assert_eq!(refused["op_id"], undo_id.as_str());
    }
    assert!(t.ok(&["organize"]).contains("undone_merge"));
    let facts = t.json(&["nodes", "list", "--limit", "1000"]);
    let active = facts
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["content"] == "Aurora requires approval." && n["lifecycle"] != "superseded")
        .count();
    assert_eq!(active, 2, "still two: {facts:#}");

    let doctor = t.ok(&["doctor"]);
    assert!(doctor.starts_with("healthy"), "{doctor}");
    assert!(t
        .fails(&["organize", "--jobs", "promote_everything"])
        .contains("unknown organizer job"));
    assert!(t.fails(&["undo", "not-a-uuid"]).contains("is not a UUID"));
}

#[test]
fn alias_inbox_lists_reviews_and_refuses_conflicts() {
    let tmp = tempfile::tempdir().unwrap();
    let t = TestPack {
        pack: tmp.path().join("h.kith"),
        tmp,
    };
    // Spelling-overlap vectors: two names that look alike but are not a
    // known abbreviation or case variant only get a proposal.
    t.ok(&["init", "--embeddings", "hashing-256"]);
    store(&t, "entity", "Katherine Johnson of Langley Research");
    store(&t, "entity", "Catherine Johnson of Langley Research");
    assert!(t.ok(&["aliases", "list"]).contains("no alias proposals"));
    let r = t.json(&["organize", "--jobs", "alias_resolve"]);
    let proposals = r["jobs"][0]["proposals"].as_array().unwrap();
    assert_eq!(proposals.len(), 1, "{r:#}");
    assert_eq!(r["jobs"][0]["merges"].as_array().unwrap().len(), 0);
    let op = proposals[0]["op_id"].as_str().unwrap().to_string();

    let list = t.ok(&["aliases", "list"]);
    assert!(list.contains(&op) && list.contains("pending"), "{list}");
    assert!(t
        .fails(&["aliases", "review", &op, "--reject"])
        .contains("needs a reason"));
    let out = t.ok(&[
        "aliases",
        "review",
        &op,
        "--accept",
        "--reason",
        "same person",
    ]);
    assert!(
        out.contains("accepted") && out.contains("verified alias edge"),
        "{out}"
    );
    let again = t.ok(&[
        "aliases",
        "review",
        &op,
        "--accept",
        "--reason",
        "same person",
    ]);
    assert!(again.contains("already recorded"), "{again}");
    let err = t.fails(&["aliases", "review", &op, "--reject", "--reason", "no"]);
    assert!(err.contains("already decided"), "{err}");
    let listed = t.json(&["aliases", "list"]);
    assert_eq!(listed[0]["status"], "accepted");

    let review = listed[0]["review_op_id"].as_str().unwrap().to_string();
    assert!(t.ok(&["undo", &review]).contains("removed 1 edge(s)"));
    assert_eq!(t.json(&["aliases", "list"])[0]["status"], "pending");
    assert!(t.ok(&["doctor"]).starts_with("healthy"));
}

#[test]
fn link_prints_entities_links_and_refusals() {
    let t = TestPack::new();
    for text in [
        "We met Dana at Cafe Milano.",
        "Cafe Milano again with Dana.",
        "Lisbon next week.",
    ] {
        t.ok(&["store", text]);
    }
    // Spec 004's defaults: every heuristic mention is under the threshold.
    let out = t.ok(&["link", "--scope", "personal"]);
    assert!(out.contains("0 entities"), "{out}");
    assert!(
        out.contains(
            "refused \"Cafe Milano\": below_threshold — confidence 0.4 is below the 0.5 threshold"
        ),
        "{out}"
    );

    let dry = t.json(&[
        "link",
        "--scope",
        "personal",
        "--threshold",
        "0.4",
        "--dry-run",
    ]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["entities"][0]["status"], "would_write");

    let out = t.ok(&["link", "--scope", "personal", "--threshold", "0.4"]);
    assert!(
        out.contains("\"Cafe Milano\" [cafe-milano] other (2 mention(s), new)"),
        "{out}"
    );
    assert!(
        out.contains("link \"Cafe Milano\" MENTIONS \"Dana\" (weight 0.5, new)"),
        "{out}"
    );
    assert!(
        out.contains(
            "refused \"Lisbon\": below_mention_floor — mentioned 1 time(s), below the 2 floor"
        ),
        "{out}"
    );
    let again = t.json(&["link", "--scope", "personal", "--threshold", "0.4"]);
    assert_eq!(again["written"], 0);
    assert!(again["op_id"].is_null());

    let out = t.ok(&["link", "--scope", "personal", "--max-records", "2"]);
    assert!(
        out.contains(
            "over_budget — 3 memories exceed the 2-memory read budget for one linking pass"
        ),
        "{out}"
    );
    let out = t.ok(&["organize", "--jobs", "link_entities"]);
    assert!(out.contains("policy heuristic_linking_v1"), "{out}");
    let journal = t.json(&["journal", "--kind", "ENTITIES_LINKED"]);
    assert_eq!(journal.as_array().unwrap().len(), 1);
    t.ok(&["doctor"]);
}

/// Issue 13 items 14 and 15 through the binary: `kith aliases propose`
/// with an assessment (a version-2 record; a repeat returns the first),
/// and `kith path`, which does not cross an unverified proposal unless
/// asked.
#[test]
fn propose_with_an_assessment_and_paths_skip_proposals() {
    let t = TestPack::new();
    store(&t, "entity", "Sam Rivera");
    store(&t, "entity", "Samuel Rivera");
    let nodes = t.json(&["nodes", "list"]);
    let ids: Vec<String> = nodes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["node_type"] == "entity")
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{nodes:#}");
    let (a, b) = (&ids[0], &ids[1]);

    let none = t.ok(&["path", a, b]);
    assert!(none.contains("no path"), "{none}");

    assert!(t
        .fails(&[
            "aliases",
            "propose",
            a,
            b,
            "--score",
            "0.9",
            "--assessor",
            "robot:x",
            "--verdict",
            "same",
            "--reason",
            "r"
        ])
        .contains("neither reviewer nor model"));
    assert!(t.ok(&["journal"]).trim().is_empty(), "nothing written");
    let first = t.json(&[
        "aliases",
        "propose",
        a,
        b,
        "--score",
        "0.9",
        "--assessor",
        "model:judge-7",
        "--verdict",
        "same",
        "--reason",
        "Sam is short for Samuel",
        "--reason",
        "same surname",
    ]);
    assert_eq!(first["created"], true, "{first:#}");
    assert_eq!(first["format"], "kith.alias_proposal.v2");
    assert_eq!(first["assessment"]["verdict"], "same");
    assert_eq!(first["assessment"]["reasons"].as_array().unwrap().len(), 2);
    let again = t.ok(&[
        "aliases",
        "propose",
        b,
        a,
        "--score",
        "0.5",
        "--assessor",
        "reviewer:maya",
        "--verdict",
        "different",
        "--reason",
        "no",
    ]);
    assert!(again.contains("already proposed"), "{again}");
    let listed = t.json(&["aliases", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let text = t.ok(&["aliases", "list"]);
    assert!(text.contains("assessed same by model:judge-7"), "{text}");
    assert!(t
        .fails(&["aliases", "propose", a, a, "--score", "0.9"])
        .contains("the same node"));
    assert_eq!(listed[0]["assessment"]["assessor"]["id"], "judge-7");

    let skipped = t.ok(&["path", a, b]);
    assert!(
        skipped.contains("no path")
            && skipped.contains("1 unverified alias proposal(s) not followed"),
        "{skipped}"
    );
    let opted = t.json(&["path", a, b, "--include-unverified-aliases"]);
    assert_eq!(opted["found"], true, "{opted:#}");
    assert_eq!(opted["steps"].as_array().unwrap().len(), 1);
    assert_eq!(opted["steps"][0]["node"]["id"], b.as_str());
    assert!(t
        .fails(&["path", a, b, "--max-hops", "0"])
        .contains("max_hops"));
    let doctor = t.ok(&["doctor"]);
    assert!(doctor.starts_with("healthy"), "{doctor}");
}

/// `kith correct` through the binary (issue 13 item 13): rebind a claim
/// named by id to another person, see it in the journal, undo it; bad
/// requests fail with one readable line and change nothing.
#[test]
fn correct_rebinds_and_undo_reverses_through_the_binary() {
    let t = TestPack::new();
    t.ok(&["ingest", "I love hiking.", "--speaker", "Jordan"]);
    t.ok(&["ingest", "I love sushi.", "--speaker", "Maya"]);
    let nodes = t.json(&["nodes", "list", "--limit", "100"]);
    let id_of = |content: &str| -> String {
        nodes
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["content"] == content && n["node_type"] != "note")
            .unwrap_or_else(|| panic!("no node {content:?} in {nodes}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (maya, jordan, sushi) = (id_of("Maya"), id_of("Jordan"), id_of("I love sushi."));

    let err = t.fails(&[
        "correct", "--entity", &maya, "--claim", &sushi, "--to", &jordan,
    ]);
    assert!(err.contains("--reason"), "{err}");
    let err = t.fails(&[
        "correct", "--entity", &jordan, "--claim", &sushi, "--to", &maya, "--reason", "x",
    ]);
    assert!(
        err.contains("is not an active claim linked to entity"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );

    let out = t.json(&[
        "correct",
        "--entity",
        &maya,
        "--claim",
        &sushi,
        "--to",
        &jordan,
        "--reason",
        "Maya pasted Jordan's words",
    ]);
    assert_eq!(out["moved_claims"], serde_json::json!([sushi]));
    let op = out["op_id"].as_str().unwrap().to_string();
    let shown = t.json(&["nodes", "show", &jordan]);
    assert!(shown.to_string().contains("I love sushi."), "{shown}");
    let journal = t.json(&["journal", "--kind", "IDENTITY_CORRECTED"]);
    assert_eq!(journal.as_array().unwrap().len(), 1, "{journal}");

    let undone = t.ok(&["undo", &op]);
    assert!(undone.contains("IDENTITY_CORRECTED"), "{undone}");
    let shown = t.json(&["nodes", "show", &maya]);
    assert!(shown.to_string().contains("I love sushi."), "{shown}");
    assert_eq!(t.json(&["doctor"])["problems"], serde_json::json!([]));
}
