//! `kith claims list / retract / correct` through the real binary (issue 15
//! item 4): the facts view shows the corrected state, `retrieve` no longer
//! returns a retracted claim, `kith undo` reverses each, and bad requests
//! fail with one readable line and change nothing.

mod common;

use common::TestPack;
use serde_json::Value;

fn claim_ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn retrieved(t: &TestPack, query: &str) -> String {
    t.json(&["retrieve", query]).to_string()
}

#[test]
fn claims_list_retract_correct_and_undo_through_the_binary() {
    let t = TestPack::new();
    t.ok(&["ingest", "I work at Northwind.", "--speaker", "Maya"]);
    let listed = t.json(&["claims", "list", "--subject", "maya"]);
    let ids = claim_ids(&listed);
    assert_eq!(ids.len(), 1, "{listed}");
    let claim = ids[0].clone();
    assert_eq!(listed[0]["object"], "Northwind");
    assert_eq!(listed[0]["subject"], "Maya");
    let text = t.ok(&["claims", "list", "--subject", "MAYA"]);
    assert!(
        text.contains("Northwind") && text.contains("\"I work at Northwind.\""),
        "{text}"
    );

    // Bad requests: one error line, nothing written.
    let before = t.ok(&["export"]);
    let err = t.fails(&["claims", "retract", &claim]);
    assert!(err.contains("--reason"), "{err}");
    let err = t.fails(&["claims", "retract", &claim, "--reason", " "]);
    assert!(err.contains("needs a reason"), "{err}");
    let err = t.fails(&[
        "claims",
        "retract",
        "00000000-0000-0000-0000-000000000001",
        "--reason",
        "x",
    ]);
    assert!(
        err.contains("not found") || err.contains("no claim"),
        "{err}"
    );
    let maya = listed[0]["subject_id"].as_str().unwrap();
    let err = t.fails(&["claims", "correct", maya, "--object", "X", "--reason", "x"]);
    assert!(err.contains("not a claim"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
    assert_eq!(t.ok(&["export"]), before);

    // Retract: gone from the facts view and from retrieval; undo brings it back.
    assert!(retrieved(&t, "Where does Maya work? Northwind").contains(&claim));
    let out = t.ok(&["claims", "retract", &claim, "--reason", "she never did"]);
    assert!(out.contains("CLAIM_RETRACTED"), "{out}");
    let op = t.json(&["journal", "--kind", "CLAIM_RETRACTED"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(claim_ids(&t.json(&["claims", "list", "--subject", "Maya"])).is_empty());
    let all = t.json(&["claims", "list", "--subject", "Maya", "--all"]);
    assert_eq!(claim_ids(&all), vec![claim.clone()]);
    assert_eq!(all[0]["lifecycle"], "archived");
    assert!(!retrieved(&t, "Where does Maya work? Northwind").contains(&claim));
    let undone = t.ok(&["undo", &op]);
    assert!(undone.contains("CLAIM_RETRACTED"), "{undone}");
    assert_eq!(
        claim_ids(&t.json(&["claims", "list", "--subject", "Maya"])),
        vec![claim.clone()]
    );

    // Correct: the replacement is current and retrieved; undo removes it.
    let out = t.json(&[
        "claims",
        "correct",
        &claim,
        "--object",
        "Contoso",
        "--reason",
        "she moved",
    ]);
    let new = out["replacement"].as_str().unwrap().to_string();
    let current = t.json(&["claims", "list", "--subject", "Maya"]);
    assert_eq!(claim_ids(&current), vec![new.clone()]);
    assert_eq!(current[0]["content"], "I work at Contoso.");
    assert_eq!(current[0]["edited"]["action"], "corrected");
    let text = t.ok(&["claims", "list", "--subject", "Maya", "--all"]);
    assert!(
        text.contains("works_at Contoso [corrected]")
            && text.contains("corrected from \"Northwind\" by the owner: she moved")
            && text.contains("works_at Northwind [superseded]"),
        "{text}"
    );
    let got = retrieved(&t, "Where does Maya work? Contoso");
    assert!(got.contains(&new) && !got.contains(&claim), "{got}");
    t.ok(&["undo", out["op_id"].as_str().unwrap()]);
    assert_eq!(
        claim_ids(&t.json(&["claims", "list", "--subject", "Maya", "--all"])),
        vec![claim]
    );
    assert_eq!(t.json(&["doctor"])["problems"], serde_json::json!([]));
}

/// What was said under a condition is listed with it, never as a plain
/// fact: the text marks it, the JSON carries `epistemic_type` and the
/// condition verbatim.
#[test]
fn a_conditional_claim_is_listed_with_its_condition() {
    let t = TestPack::new();
    t.ok(&[
        "ingest",
        "If I get the job at Stripe, I'll move to Dublin.",
        "--speaker",
        "Priya",
    ]);
    t.ok(&["ingest", "I live in Leeds.", "--speaker", "Priya"]);
    t.ok(&["ingest", "Maybe I'll move to Porto.", "--speaker", "Priya"]);
    let listed = t.json(&["claims", "list", "--subject", "Priya"]);
    let facts = listed.as_array().unwrap();
    let dublin = facts
        .iter()
        .find(|f| f["object"] == "Dublin")
        .expect("the Dublin claim");
    assert_eq!(dublin["epistemic_type"], "conditional", "{dublin}");
    assert_eq!(
        dublin["condition"], "If I get the job at Stripe",
        "{dublin}"
    );
    let leeds = facts
        .iter()
        .find(|f| f["object"] == "Leeds")
        .expect("the Leeds claim");
    assert_eq!(leeds["epistemic_type"], "asserted", "{leeds}");
    assert!(leeds["condition"].is_null(), "{leeds}");

    let text = t.ok(&["claims", "list", "--subject", "Priya"]);
    let line = |object: &str| {
        text.lines()
            .find(|l| l.contains(object) && !l.starts_with(' '))
            .unwrap_or_else(|| panic!("no {object} line in {text}"))
            .to_string()
    };
    assert!(
        line("Dublin").ends_with("[conditional: \"If I get the job at Stripe\"]"),
        "{text}"
    );
    assert!(!line("Leeds").contains('['), "{text}");
    // A possibility is marked with its type, as on the console's page.
    assert!(line("Porto").ends_with("[hypothetical]"), "{text}");
}
