//! Issue 18: kith as standard Python tools see it, run against the real
//! binary. `openapi-spec-validator` checks the document `kith serve`
//! serves at `/openapi.json`; the official MCP Python SDK drives `kith mcp`
//! over stdio and `/mcp` of `kith serve` over Streamable HTTP.
//!
//! The scripts are in `tests/python/`; the interpreter comes from
//! `kith_fetch::python`: a virtual environment with the pinned packages of
//! `tests/python/requirements.txt`, provisioned into kith's cache on first
//! use (or `KITH_TEST_PYTHON`). A script's failure fails the test with its
//! output. No test skips: without Python the first one fails saying why.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use common::python::{run_script, script_passes, summary};
use common::TestPack;

/// `kith serve` on a free loopback port, killed on drop.
struct Serve {
    child: Child,
    url: String,
}

impl Serve {
    /// Serves the pack of `t`, with the keys file `keys` if given.
    fn start(t: &TestPack, keys: Option<&Path>) -> Serve {
        let mut command = t.cmd(&["serve", "--bind", "127.0.0.1:0"]);
        if let Some(keys) = keys {
            command.arg("--keys-file").arg(keys);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(t.path("serve.log")).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Serve { child, url }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent()
}

/// `GET url` with a bearer key; the status.
fn status_with_key(url: &str, key: &str) -> u16 {
    let mut response = http()
        .get(url)
        .header("Authorization", format!("Bearer {key}"))
        .call()
        .unwrap();
    let _ = response.body_mut().read_to_string();
    response.status().as_u16()
}

#[test]
fn openapi_spec_validator_accepts_the_served_document() {
    let t = TestPack::new();
    let serve = Serve::start(&t, None);
    let url = format!("{}/openapi.json", serve.url);
    let output = script_passes("openapi_check.py", &[&url]);
    assert!(output.contains("valid: OpenAPI 3.1."), "{output}");

    // The same check fails a document with the faults the issue found
    // (a duplicate operationId, a response without a description), so the
    // pass above is the validator's verdict, not a script that cannot fail.
    let mut doc: Value = serde_json::from_str(
        &http()
            .get(&url)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    let mut operations: Vec<&mut Value> = doc["paths"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .flat_map(|item| item.as_object_mut().unwrap().values_mut())
        .collect();
    assert!(operations.len() > 2);
    let first_id = operations[0]["operationId"].clone();
    operations[1]["operationId"] = first_id.clone();
    let responses = operations[0]["responses"].as_object_mut().unwrap();
    let (_, response) = responses.iter_mut().next().unwrap();
    response.as_object_mut().unwrap().remove("description");
    let broken = t.path("broken.json");
    std::fs::write(&broken, doc.to_string()).unwrap();
    let run = run_script("openapi_check.py", &[broken.to_str().unwrap()]);
    assert!(!run.success, "a broken document passed:\n{}", run.output);
    assert!(run.output.contains("is not unique"), "{}", run.output);
    assert!(
        run.output.contains("'description' is a required property"),
        "{}",
        run.output
    );
}

#[test]
fn the_mcp_python_sdk_works_over_stdio() {
    let t = TestPack::new();
    let kith = env!("CARGO_BIN_EXE_kith");
    let output = script_passes("mcp_check.py", &["stdio", kith, t.pack.to_str().unwrap()]);
    let summary = summary(&output);
    assert!(summary["tools"].as_u64().unwrap() >= 15, "{output}");
    assert!(summary["context"].as_str().unwrap().contains("Lisbon"));

    // What the SDK stored is in the pack, for the owner the server was
    // started for.
    let export = Command::new(kith)
        .args([
            "--pack",
            t.pack.to_str().unwrap(),
            "--owner",
            "alice",
            "export",
        ])
        .env_remove("KITH_OWNER")
        .output()
        .unwrap();
    assert!(export.status.success());
    let export = String::from_utf8(export.stdout).unwrap();
    let event_id = summary["event_id"].as_str().unwrap();
    let line = export
        .lines()
        .find(|l| l.contains(event_id))
        .unwrap_or_else(|| panic!("event {event_id} not exported:\n{export}"));
    assert!(line.contains("I moved to Lisbon in September."), "{line}");
    assert_eq!(export.lines().count(), 2, "{export}");
}

#[test]
fn the_mcp_python_sdk_works_over_streamable_http() {
    let t = TestPack::new();
    let (alice, bob) = (
        "python-sdk-key-alice-0123456789",
        "python-sdk-key-bob-0123456789",
    );
    let keys = t.path("keys");
    std::fs::write(&keys, format!("{alice} alice\n{bob} bob\n")).unwrap();
    let serve = Serve::start(&t, Some(&keys));
    let endpoint = format!("{}/mcp", serve.url);
    let output = script_passes("mcp_check.py", &["http", &endpoint, alice, bob]);
    let summary = summary(&output);
    assert!(summary["tools"].as_u64().unwrap() >= 15, "{output}");
    assert!(output.contains("a wrong key cannot connect"), "{output}");

    // The event is alice's, as her key said, and not bob's.
    let event = format!(
        "{}/v1/events/{}",
        serve.url,
        summary["event_id"].as_str().unwrap()
    );
    assert_eq!(status_with_key(&event, alice), 200);
    assert_eq!(status_with_key(&event, bob), 404);
}
