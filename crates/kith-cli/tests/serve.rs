//! `kith mcp` over real stdio JSON-RPC, and `kith serve` as a process:
//! start-up checks, the announced address, SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use common::{kith_cmd, TestPack};
use serde_json::{json, Value};

/// A JSON-RPC session with a `kith mcp` child.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Mcp {
    fn start(t: &TestPack, owner: &str) -> Mcp {
        let mut child = t
            .cmd(&["mcp"])
            .env("KITH_MCP_OWNER", owner)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kith mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Mcp {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads until its response (skipping
    /// notifications the server may send).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "kith mcp closed stdout before answering {method}");
            let msg: Value = serde_json::from_str(&line).expect("one JSON message a line");
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// A tools/call; returns (is_error, the text content parsed as JSON
    /// when it is JSON).
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> (bool, Value) {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let result = &r["result"];
        assert!(result.is_object(), "{tool}: {r}");
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        let value = serde_json::from_str(text).unwrap_or(Value::String(text.into()));
        (result["isError"] == true, value)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_over_stdio_stores_and_retrieves() {
    let t = TestPack::new();
    let mut mcp = Mcp::start(&t, "alice");

    let init = mcp.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "kith-test", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "kith", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = mcp.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "memory_store",
        "memory_ingest",
        "memory_retrieve",
        "memory_get_node",
        "memory_organize",
        "memory_list_alias_proposals",
        "memory_review_alias_proposal",
        "memory_undo",
        "memory_propose_alias",
        "memory_path",
        "memory_correct",
        "memory_forget",
        "memory_list_claims",
        "memory_retract_claim",
        "memory_correct_claim",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let organize_tool = tools
        .iter()
        .find(|t| t["name"] == "memory_organize")
        .unwrap();
    let schema = &organize_tool["inputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    for field in ["jobs", "budget", "candidates"] {
        assert!(schema["properties"][field].is_object(), "{schema}");
    }
    let review_tool = tools
        .iter()
        .find(|t| t["name"] == "memory_review_alias_proposal")
        .unwrap();
    assert!(
        review_tool["inputSchema"]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("decision")),
        "{review_tool}"
    );
    let store_tool = tools.iter().find(|t| t["name"] == "memory_store").unwrap();
    let schema = &store_tool["inputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert!(schema["properties"]["content"].is_object(), "{schema}");
    assert_eq!(schema["required"], json!(["content"]), "{schema}");

    let (err, stored) = mcp.call(
        3,
        "memory_store",
        json!({"content": "I moved to Lisbon in September.", "speaker": "Alice",
               "session_id": "s1"}),
    );
    assert!(!err, "{stored}");
    let node_id = stored["node_id"].as_str().expect("node id").to_string();
    let (err, ingested) = mcp.call(
        4,
        "memory_ingest",
        json!({"content": "My sister Maya lives in Berlin.", "speaker": "Alice",
               "session_id": "s1"}),
    );
    assert!(!err, "{ingested}");
    assert_eq!(ingested["status"], "complete");

    let (err, r) = mcp.call(
        5,
        "memory_retrieve",
        json!({"query": "Where did Alice move?", "token_budget": 100}),
    );
    assert!(!err, "{r}");
    assert_eq!(r["results"][0]["node_id"], node_id.as_str(), "{r}");
    assert!(r["context"].as_str().unwrap().contains("Lisbon"));

    let (err, node) = mcp.call(6, "memory_get_node", json!({"node_id": node_id}));
    assert!(!err, "{node}");
    assert_eq!(node["node"]["content"], "I moved to Lisbon in September.");

    // A refused call is a tool error the model can read.
    let (err, text) = mcp.call(
        7,
        "memory_store",
        json!({"content": "x", "owner_id": "mallory"}),
    );
    assert!(err);
    assert!(text.as_str().unwrap().starts_with("forbidden"), "{text}");
    let (err, text) = mcp.call(
        8,
        "memory_get_node",
        json!({"node_id": "00000000-0000-0000-0000-000000000000"}),
    );
    assert!(err);
    assert!(text.as_str().unwrap().starts_with("not_found"), "{text}");

    // The organizer: two entities named in one message, handed in as a
    // candidate pair, become an alias proposal; listed, then accepted.
    let (err, ingested) = mcp.call(
        9,
        "memory_ingest",
        json!({"content": "Nadia met Nadine in Porto.", "session_id": "s2"}),
    );
    assert!(!err, "{ingested}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .arg("--pack")
        .arg(&t.pack)
        .args([
            "--json", "--owner", "alice", "nodes", "list", "--limit", "1000",
        ])
        .output()
        .unwrap();
    let nodes: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entity = |name: &str| {
        nodes
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["node_type"] == "entity" && n["content"] == name)
            .unwrap_or_else(|| panic!("{name} in {nodes}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (err, report) = mcp.call(
        10,
        "memory_organize",
        json!({"jobs": ["deduplicate", "alias_resolve"],
               "candidates": [{"a": entity("Nadia"), "b": entity("Nadine"), "score": 0.95}]}),
    );
    assert!(!err, "{report}");
    assert_eq!(report["owner"], "alice", "{report}");
    let proposal = report["jobs"][1]["proposals"][0]["op_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a proposal in {report}"))
        .to_string();
    let (err, listed) = mcp.call(
        11,
        "memory_list_alias_proposals",
        json!({"status": "pending"}),
    );
    assert!(!err, "{listed}");
    assert_eq!(
        listed["proposals"][0]["op_id"],
        proposal.as_str(),
        "{listed}"
    );
    let mut pair = [
        listed["proposals"][0]["a_name"].as_str().unwrap(),
        listed["proposals"][0]["b_name"].as_str().unwrap(),
    ];
    pair.sort();
    assert_eq!(pair, ["Nadia", "Nadine"], "{listed}");
    // Issue 13 item 15: the path tool does not cross the pending proposal
    // unless asked.
    let (nadia, nadine) = (entity("Nadia"), entity("Nadine"));
    let (err, path) = mcp.call(20, "memory_path", json!({"from": nadia, "to": nadine}));
    assert!(!err, "{path}");
    assert_eq!(path["found"], false, "{path}");
    assert_eq!(path["skipped_proposals"], 1, "{path}");
    let (err, path) = mcp.call(
        21,
        "memory_path",
        json!({"from": nadia, "to": nadine, "include_unverified_aliases": true}),
    );
    assert!(!err, "{path}");
    assert_eq!(path["steps"][0]["node"]["id"], nadine.as_str(), "{path}");
    // Item 14: asking to propose the pair again returns the first record,
    // which had no assessment (never relabelled).
    let (err, again) = mcp.call(
        22,
        "memory_propose_alias",
        json!({"a": nadine, "b": nadia, "score": 0.9,
               "assessment": {"assessor_kind": "reviewer", "assessor_id": "alice",
                              "verdict": "same", "reasons": ["same person"]}}),
    );
    assert!(!err, "{again}");
    assert_eq!(again["created"], false, "{again}");
    assert_eq!(again["op_id"], proposal.as_str(), "{again}");
    assert!(again["assessment"].is_null(), "{again}");
    let (err, text) = mcp.call(
        23,
        "memory_propose_alias",
        json!({"a": nadine, "b": nadia, "score": 2.0}),
    );
    assert!(err, "{text}");
    assert!(text.as_str().unwrap().contains("score"), "{text}");
    let (err, text) = mcp.call(
        12,
        "memory_review_alias_proposal",
        json!({"proposal_id": proposal, "decision": "reject"}),
    );
    assert!(err);
    assert!(
        text.as_str().unwrap().starts_with("reason_required"),
        "{text}"
    );
    let (err, outcome) = mcp.call(
        13,
        "memory_review_alias_proposal",
        json!({"proposal_id": proposal, "decision": "accept"}),
    );
    assert!(!err, "{outcome}");
    assert_eq!(outcome["decision"], "accept");
    let (err, undone) = mcp.call(14, "memory_undo", json!({"op_id": outcome["review_op_id"]}));
    assert!(!err, "{undone}");
    assert_eq!(undone["undone_kind"], "ALIAS_PROPOSAL_ACCEPTED", "{undone}");
    // Forgetting: two selectors at once are refused; a dry run writes
    // nothing; the Porto message is then forgotten for good.
    let (err, text) = mcp.call(
        15,
        "memory_forget",
        json!({"session_id": "s2", "whole_owner": true, "reason": "asked"}),
    );
    assert!(err);
    assert!(
        text.as_str().unwrap().starts_with("invalid_input"),
        "{text}"
    );
    let (err, dry) = mcp.call(
        16,
        "memory_forget",
        json!({"session_id": "s2", "reason": "asked", "dry_run": true}),
    );
    assert!(!err, "{dry}");
    assert_eq!(dry["events"].as_array().unwrap().len(), 1, "{dry}");
    assert!(dry["operation_id"].is_null());
    let (err, gone) = mcp.call(
        17,
        "memory_forget",
        json!({"session_id": "s2", "reason": "asked"}),
    );
    assert!(!err, "{gone}");
    assert_eq!(gone["events"], dry["events"]);
    assert_eq!(gone["verification"]["texts_found_in_pack"], 0, "{gone}");
    let (err, r) = mcp.call(
        18,
        "memory_retrieve",
        json!({"query": "Nadia Nadine Porto", "token_budget": 100}),
    );
    assert!(!err, "{r}");
    assert_eq!(r["results"], json!([]), "{r}");
    assert!(!r["context"].as_str().unwrap().contains("Porto"), "{r}");
    // Correcting a fact: Alice's claim is listed, retracted (gone from the
    // list), and the retraction undone (back).
    let (err, facts) = mcp.call(19, "memory_list_claims", json!({"subject": "ALICE"}));
    assert!(!err, "{facts}");
    let claim = facts[0]["id"]
        .as_str()
        .expect("a claim of Alice")
        .to_string();
    let (err, text) = mcp.call(
        20,
        "memory_retract_claim",
        json!({"claim_id": claim, "reason": " "}),
    );
    assert!(
        err && text.as_str().unwrap().starts_with("invalid_input"),
        "{text}"
    );
    let (err, text) = mcp.call(
        21,
        "memory_correct_claim",
        json!({"claim_id": "00000000-0000-0000-0000-000000000001", "object": "x", "reason": "x"}),
    );
    assert!(
        err && text.as_str().unwrap().starts_with("not_found"),
        "{text}"
    );
    let (err, retracted) = mcp.call(
        22,
        "memory_retract_claim",
        json!({"claim_id": claim, "reason": "extraction misread it"}),
    );
    assert!(!err, "{retracted}");
    assert_eq!(retracted["kind"], "CLAIM_RETRACTED", "{retracted}");
    let (_, after) = mcp.call(23, "memory_list_claims", json!({"subject": "alice"}));
    assert!(!after.to_string().contains(&claim), "{after}");
    let (err, undone) = mcp.call(24, "memory_undo", json!({"op_id": retracted["op_id"]}));
    assert!(!err, "{undone}");
    let (_, back) = mcp.call(25, "memory_list_claims", json!({"subject": "alice"}));
    assert!(back.to_string().contains(&claim), "{back}");
    drop(mcp);

    // The owner was fixed: alice has both messages, the CLI's owner none.
    let alice = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .arg("--pack")
        .arg(&t.pack)
        .args(["--json", "--owner", "alice", "stats"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&alice.stdout).unwrap();
    assert_eq!(stats["events"], 3);
    assert_eq!(t.json(&["stats"])["events"], 0);
}

#[test]
fn serve_refuses_a_public_bind_without_keys() {
    let t = TestPack::new();
    let err = t.fails(&["serve", "--bind", "0.0.0.0:0"]);
    assert!(err.contains("without API keys"), "{err}");
    let err = kith_cmd(&t.pack, &["serve", "--bind", "127.0.0.1:0"])
        .env("KITH_API_KEYS", "short:alice")
        .output()
        .unwrap();
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("shorter than"));
}

/// Issue 20 item 1: a keys file without a key, or `KITH_API_KEYS` set to
/// nothing, stops `kith serve` before it listens (it used to start with no
/// keys, open to any local client), on loopback as well.
#[test]
fn serve_refuses_key_sources_that_hold_no_key() {
    let t = TestPack::new();
    for (name, text) in [
        ("empty", ""),
        ("comments", "# keys go here\n\n   # none yet\n"),
    ] {
        let file = t.path(name);
        std::fs::write(&file, text).unwrap();
        let out = t
            .cmd(&["serve", "--bind", "127.0.0.1:0", "--keys-file"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}: it started");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("holds no key") && err.contains(name), "{err}");
        assert!(out.stdout.is_empty(), "{name}: it listened");
    }
    let out = kith_cmd(&t.pack, &["serve", "--bind", "127.0.0.1:0"])
        .env("KITH_API_KEYS", "")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KITH_API_KEYS is set but holds no key"),
        "{err}"
    );
    let out = kith_cmd(&t.pack, &["serve", "--bind", "127.0.0.1:0"])
        .args(["--idle-timeout", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("idle timeout must be at least 1 second"));
}

#[cfg(unix)]
#[test]
fn serve_announces_its_address_and_stops_on_sigterm() {
    let t = TestPack::new();
    let keys = t.path("keys");
    std::fs::write(&keys, "# test\nkey-for-alice-0123456789 alice\n").unwrap();
    let mut child = t
        .cmd(&["serve", "--bind", "127.0.0.1:0", "--keys-file"])
        .arg(&keys)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("1 API key(s)"), "{line}");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent();
    let mut r = agent
        .get(format!("{url}/v1/stats"))
        .header("Authorization", "Bearer key-for-alice-0123456789")
        .call()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let _ = r.body_mut().read_to_string();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kith serve ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    // The access log names method, path, status and owner, never the key.
    assert!(log.contains("/v1/stats") && log.contains("alice"), "{log}");
    assert!(
        !log.contains("key-for-alice"),
        "the key leaked into the log"
    );
}
