//! `kith bench extract` through the real binary, on a tiny LoCoMo-shaped
//! file written here (the real data is not part of a clone): the heuristic
//! path, the LLM path over real HTTP (a replay server), and the errors a bad
//! `--data` file gets. Issue 14, items 1 and 5.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kith::extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
use serde_json::{json, Value};

/// Two conversations. `conv-a` has Maya and Jordan over two sessions;
/// `conv-b` one turn.
fn fixture() -> Value {
    json!([
        {
            "sample_id": "conv-a",
            "conversation": {
                "speaker_a": "Maya",
                "speaker_b": "Jordan",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Maya", "dia_id": "D1:1", "text": "I love hiking in the hills."},
                    {"speaker": "Jordan", "dia_id": "D1:2", "text": "I work at Northwind as a nurse."},
                    {"speaker": "Maya", "dia_id": "D1:3", "text": "What is that like?"}
                ],
                "session_2_date_time": "9:00 am on 12 May, 2023",
                "session_2": [
                    {"speaker": "Maya", "dia_id": "D2:1", "text": "I adopted a puppy last week."},
                    {"speaker": "Jordan", "dia_id": "D2:2", "text": "Totally. I hate traffic, the Traffic here is awful and traffic is everywhere."}
                ]
            },
            "observation": {
                "session_1_observation": {
                    "Maya": [
                        ["Maya enjoys hiking in the hills.", "D1:1"],
                        ["Maya asked Jordan about the job.", "D1:3"]
                    ],
                    "Jordan": [["Jordan works as a nurse at Northwind.", "D1:2"]]
                },
                "session_2_observation": {
                    "Maya": [["Maya adopted a puppy.", "D2:1"]]
                }
            },
            "qa": []
        },
        {
            "sample_id": "conv-b",
            "conversation": {
                "speaker_a": "Sam",
                "speaker_b": "Lee",
                "session_1_date_time": "1:00 pm on 1 June, 2023",
                "session_1": [
                    {"speaker": "Sam", "dia_id": "D1:1", "text": "I live in Leeds."}
                ]
            },
            "observation": {
                "session_1_observation": {"Sam": [["Sam lives in Leeds.", "D1:1"]]}
            },
            "qa": []
        }
    ])
}

fn write_fixture(dir: &Path) -> PathBuf {
    let path = dir.join("locomo_tiny.json");
    std::fs::write(&path, fixture().to_string()).unwrap();
    path
}

/// `kith bench extract ARGS…` with no LLM configured unless `env` sets one.
fn bench(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kith"));
    c.args(["bench", "extract"]).args(args);
    for var in [
        "KITH_LLM_BASE_URL",
        "KITH_LLM_MODEL",
        "KITH_LLM_API_KEY",
        "KITH_DATABASE_URL",
        "KITH_LOG",
    ] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("kith runs")
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "kith bench extract failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn close(v: &Value, expected: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
}

#[test]
fn heuristic_figures_on_a_tiny_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_fixture(tmp.path());
    let out = bench(
        &[
            "--data",
            data.to_str().unwrap(),
            "--conversations",
            "conv-a",
        ],
        &[],
    );
    let mut args = vec!["--json"];
    args.extend([
        "--data",
        data.to_str().unwrap(),
        "--conversations",
        "conv-a",
    ]);
    let v = json_of(&bench(&args, &[]));
    assert!(
        v["provider"].as_str().unwrap().starts_with("heuristic"),
        "{v}"
    );
    let convs = v["conversations"].as_array().unwrap();
    assert_eq!(convs.len(), 1, "--conversations picks one: {v}");
    let c = &convs[0];
    assert_eq!(c["conversation"], "conv-a");
    assert_eq!(c["turns"], 5);
    assert_eq!(c["failed"], 0);
    // Hiking (D1:1), Northwind (D1:2) and the puppy (D2:1, the clause
    // reader) are read; Maya's question (D1:3) gives nothing.
    assert_eq!(c["counts"]["observations"], 4);
    assert_eq!(c["counts"]["covered"], 3);
    assert_eq!(c["counts"]["matched"], 3);
    close(&c["coverage"], 0.75);
    close(&c["matched_coverage"], 0.75);
    // likes hiking…, works_at Northwind, role nurse, adopted a puppy match
    // observations; "likes traffic" (negative) matches none.
    assert_eq!(c["counts"]["claims"], 5, "{c}");
    assert_eq!(c["counts"]["matching_claims"], 4, "{c}");
    close(&c["claim_precision"], 0.8);
    assert_eq!(c["counts"]["bound_claims"], 5);
    close(&c["binding_precision"], 1.0);
    assert_eq!(c["speaker_nodes"], json!({"Jordan": 1, "Maya": 1}));
    // "Totally" only starts a sentence: no entity. "Traffic" is
    // capitalised mid-sentence once and written "traffic" twice: junk.
    assert_eq!(c["junk_entities"], json!(["Traffic"]), "{c}");
    assert!(c["messages_per_second"].as_f64().unwrap() > 0.0);
    // One conversation: the overall row is the same counts.
    assert_eq!(v["overall"]["counts"], c["counts"]);

    // The text table says the same.
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("provider heuristic"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("conv-a"))
        .expect("a row for conv-a");
    assert!(row.contains("0.750") && row.contains("0.800"), "{row}");
    assert!(row.contains("Jordan 1, Maya 1"), "{row}");
    // Progress on stderr, one line per conversation.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("conv-a: 5 messages"), "{err}");
}

#[test]
fn detail_lists_every_claim_and_observation_with_its_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_fixture(tmp.path());
    let detail = tmp.path().join("detail.jsonl");
    let out = bench(
        &[
            "--data",
            data.to_str().unwrap(),
            "--conversations",
            "conv-a",
            "--detail",
            detail.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = std::fs::read_to_string(&detail)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let claims: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "claim").collect();
    let observations: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "observation")
        .collect();
    assert_eq!((claims.len(), observations.len()), (5, 4), "{lines:?}");
    let traffic = claims
        .iter()
        .find(|c| c["object"] == "traffic")
        .expect("the traffic claim");
    assert_eq!(traffic["matched"], false);
    assert_eq!(traffic["bound_to"], json!(["Jordan"]));
    assert!(traffic["turns"][0]
        .as_str()
        .unwrap()
        .starts_with("D2:2 (Jordan): Totally."));
    let asked = observations
        .iter()
        .find(|o| o["turns"][0].as_str().unwrap().starts_with("D1:3"))
        .expect("the question's observation");
    assert_eq!(
        (&asked["covered"], &asked["matched"]),
        (&json!(false), &json!(false))
    );
    // A directory where the file should be: a readable error.
    let out = bench(
        &[
            "--data",
            data.to_str().unwrap(),
            "--detail",
            tmp.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot create"), "{err}");
}

#[test]
fn both_conversations_pool_into_the_overall_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_fixture(tmp.path());
    let v = json_of(&bench(&["--json", "--data", data.to_str().unwrap()], &[]));
    let convs = v["conversations"].as_array().unwrap();
    assert_eq!(convs.len(), 2);
    assert_eq!(convs[1]["conversation"], "conv-b");
    // conv-b: "I live in Leeds." covers Sam's one observation.
    assert_eq!(convs[1]["counts"]["covered"], 1);
    // Pooled over observations (4 of 5), not the mean of 3/4 and 1.
    assert_eq!(v["overall"]["counts"]["observations"], 5);
    close(&v["overall"]["coverage"], 0.8);
    assert_eq!(v["overall"]["turns"], 6);
    // Lee never says anything: no node, so 3 of 4 speakers have one.
    assert_eq!(convs[1]["speaker_nodes"], json!({"Lee": 0, "Sam": 1}));
    assert_eq!(v["overall"]["counts"]["speakers_with_one_node"], 3);
    assert_eq!(v["overall"]["counts"]["speakers"], 4);
}

#[test]
fn the_llm_path_is_measured_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_fixture(tmp.path());
    let puppy = json!({
        "entities": [],
        "facts": [{
            "subject": "I", "predicate": "adopted", "object": "a puppy",
            "polarity": "positive", "evidence_quote": "I adopted a puppy last week.",
            "fact_type": "fact", "epistemic_type": "asserted", "confidence": 0.9
        }],
        "relationships": []
    });
    let server = ReplayServer::start(vec![
        ReplayRule::new(
            "I adopted a puppy",
            vec![ReplayResponse::extraction(&puppy)],
        ),
        // Every other turn: nothing extracted.
        ReplayRule::new("", vec![ReplayResponse::extraction(&json!({}))]),
    ])
    .unwrap();
    let base = server.base_url();
    let v = json_of(&bench(
        &[
            "--json",
            "--data",
            data.to_str().unwrap(),
            "--conversations",
            "conv-a",
        ],
        &[
            ("KITH_LLM_BASE_URL", &base),
            ("KITH_LLM_MODEL", "replay-model"),
        ],
    ));
    assert_eq!(v["provider"], "openai-compatible (replay-model)");
    let c = &v["conversations"][0];
    assert_eq!(c["failed"], 0);
    // Only the replayed claim: the puppy; nothing of the heuristic's.
    assert_eq!(c["counts"]["claims"], 1, "{c}");
    assert_eq!(c["counts"]["covered"], 1);
    assert_eq!(c["counts"]["matched"], 1);
    close(&c["claim_precision"], 1.0);
    close(&c["binding_precision"], 1.0);
    // One request per message, each carrying its turn.
    let requests = server.requests();
    assert_eq!(requests.len(), 5, "{requests:?}");
    assert!(requests.iter().any(|r| r.contains("I adopted a puppy")));
}

#[test]
fn a_failing_endpoint_is_counted_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_fixture(tmp.path());
    // A reply that is not an extraction: every message fails (not retried).
    let server = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![ReplayResponse::chat("not json at all")],
    )])
    .unwrap();
    let base = server.base_url();
    let v = json_of(&bench(
        &[
            "--json",
            "--data",
            data.to_str().unwrap(),
            "--conversations",
            "conv-b",
        ],
        &[
            ("KITH_LLM_BASE_URL", &base),
            ("KITH_LLM_MODEL", "replay-model"),
        ],
    ));
    let c = &v["conversations"][0];
    assert_eq!(c["failed"], 1, "{c}");
    assert!(c["first_error"].as_str().is_some(), "{c}");
    assert_eq!(c["counts"]["covered"], 0);
    assert_eq!(c["claim_precision"], Value::Null, "no claims, no precision");
}

#[test]
fn bad_data_files_get_errors_that_name_them() {
    let tmp = tempfile::tempdir().unwrap();
    let check = |path: &Path, expected: &str| {
        let out = bench(&["--data", path.to_str().unwrap()], &[]);
        assert!(!out.status.success(), "{} should fail", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&path.display().to_string()),
            "names the file: {err}"
        );
        assert!(err.contains(expected), "{expected:?} in {err}");
        assert!(out.stdout.is_empty(), "no figures on failure");
    };

    check(&tmp.path().join("absent.json"), "cannot read LoCoMo data");

    let not_json = tmp.path().join("not.json");
    std::fs::write(&not_json, "{ this is not json").unwrap();
    check(&not_json, "is not JSON");

    let object = tmp.path().join("object.json");
    std::fs::write(&object, r#"{"conversation": {}}"#).unwrap();
    check(
        &object,
        "is not LoCoMo data: the top level is not a list of conversations",
    );

    let no_speaker = tmp.path().join("no_speaker.json");
    std::fs::write(
        &no_speaker,
        json!([{"sample_id": "c1", "conversation": {"speaker_a": "A"}}]).to_string(),
    )
    .unwrap();
    check(&no_speaker, "conversation 0 (c1) has no `speaker_b` name");

    let mut no_obs = fixture();
    no_obs[1].as_object_mut().unwrap().remove("observation");
    let no_obs_path = tmp.path().join("no_obs.json");
    std::fs::write(&no_obs_path, no_obs.to_string()).unwrap();
    check(
        &no_obs_path,
        "conversation conv-b has no `observation` object",
    );

    // An unknown conversation id names the ones there are.
    let data = write_fixture(tmp.path());
    let out = bench(
        &[
            "--data",
            data.to_str().unwrap(),
            "--conversations",
            "conv-z",
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no conversation \"conv-z\" (it has conv-a, conv-b)"),
        "{err}"
    );
}
