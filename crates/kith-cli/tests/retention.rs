//! `kith retrievals prune` and the receipt retention through the real
//! binary (issue 15 item 6): the environment's limit applied on write,
//! prune by count and by age, an expired receipt's `show` saying it
//! expired, `kith config show` naming the settings, bad values refused.

mod common;

use common::TestPack;

/// Retrieves with `env` set; returns the request id.
fn ask(t: &TestPack, query: &str, env: &[(&str, &str)]) -> String {
    let mut c = t.cmd(&["--json", "retrieve", query]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("kith runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    r["request_id"].as_str().unwrap().to_string()
}

fn listed(t: &TestPack) -> Vec<String> {
    t.json(&["retrievals", "list", "--limit", "100"])
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn prune_by_count_and_age_and_show_an_expired_receipt() {
    let t = TestPack::new();
    t.ok(&["store", "Maya adopted a grey cat called Pebble"]);
    t.ok(&["store", "Maya's sister lives in Lisbon"]);
    // The environment's limit applies as receipts are written.
    let keep3 = [("KITH_RECEIPTS_KEEP", "3")];
    let ids: Vec<String> = (0..4)
        .map(|i| ask(&t, &format!("where is the cat {i}"), &keep3))
        .collect();
    assert_eq!(listed(&t), ids[1..].to_vec());

    let out = t.ok(&["retrievals", "prune", "--keep", "1"]);
    assert!(out.contains("pruned 2 receipt(s) of maya"), "{out}");
    assert!(out.contains("1 kept"), "{out}");
    assert!(out.contains("compacted: VACUUM"), "{out}");
    assert_eq!(listed(&t), vec![ids[3].clone()]);

    let err = t.fails(&["retrievals", "show", &ids[0]]);
    assert!(err.contains("has expired"), "{err}");
    assert!(err.contains("kith config show"), "{err}");
    // The kept one still shows.
    assert!(t
        .ok(&["retrievals", "show", &ids[3]])
        .contains("query: where is the cat 3"));

    // Nothing is a day old: an age prune keeps it; `0s` takes it.
    let out = t.ok(&["retrievals", "prune", "--older-than", "1d"]);
    assert!(out.contains("pruned 0 receipt(s)"), "{out}");
    let report = t.json(&["retrievals", "prune", "--older-than", "0s"]);
    assert_eq!(report["removed"], 1);
    assert_eq!(report["kept"], 0);
    assert!(listed(&t).is_empty());
    let err = t.fails(&["retrievals", "show", &ids[3]]);
    assert!(err.contains("has expired"), "{err}");

    // The events themselves are untouched.
    let doctor = t.ok(&["doctor"]);
    assert!(
        doctor.contains("healthy") || doctor.contains("ok"),
        "{doctor}"
    );
    assert_eq!(
        t.json(&["stats"])["events"].as_u64(),
        Some(2),
        "events stay"
    );
}

#[test]
fn config_show_names_the_retention_and_bad_values_are_refused() {
    let t = TestPack::new();
    let shown = t.ok(&["config", "show"]);
    assert!(
        shown.contains("KITH_RECEIPTS_KEEP") && shown.contains("1000"),
        "{shown}"
    );
    assert!(
        shown.contains("KITH_RECEIPTS_MAX_AGE") && shown.contains("30d"),
        "{shown}"
    );
    let out = t
        .cmd(&["--json", "config", "show"])
        .env("KITH_RECEIPTS_KEEP", "50")
        .env("KITH_RECEIPTS_MAX_AGE", "forever")
        .output()
        .unwrap();
    assert!(out.status.success());
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["receipts"]["keep"]["value"], "50");
    assert_eq!(c["receipts"]["max_age"]["value"], "forever");

    let err = t.fails(&["retrievals", "prune", "--older-than", "3w"]);
    assert!(
        err.contains("--older-than") && err.contains("unknown unit"),
        "{err}"
    );
    let out = t
        .cmd(&["retrieve", "cat"])
        .env("KITH_RECEIPTS_KEEP", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KITH_RECEIPTS_KEEP") && err.contains("--no-record"),
        "{err}"
    );
}
