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
    /// Each tool's `outputSchema`, once `tools/list` was asked.
    schemas: std::collections::HashMap<String, Value>,
}

impl Mcp {
    fn start(t: &TestPack, owner: &str) -> Mcp {
        Mcp::spawn(t.cmd(&["mcp"]), owner)
    }

    fn spawn(mut cmd: std::process::Command, owner: &str) -> Mcp {
        let mut child = cmd
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
            schemas: Default::default(),
        }
    }

    /// `initialize` and `notifications/initialized`.
    fn initialize(&mut self) -> Value {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "kith-test", "version": "0"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the server.
    fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "kith mcp closed stdout");
        serde_json::from_str(&line).expect("one JSON message a line")
    }

    /// Sends a request and reads until its response (skipping
    /// notifications the server may send).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.read();
            if msg["id"] == id {
                if method == "tools/list" {
                    for tool in msg["result"]["tools"].as_array().into_iter().flatten() {
                        let name = tool["name"].as_str().unwrap_or_default().to_string();
                        self.schemas.insert(name, tool["outputSchema"].clone());
                    }
                }
                return msg;
            }
        }
    }

    /// A tools/call; returns (is_error, the text content parsed as JSON
    /// when it is JSON). A successful answer must carry structured content
    /// equal to its text and valid under the tool's `outputSchema`.
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
        let is_error = result["isError"] == true;
        if !is_error {
            assert_eq!(result["structuredContent"], value, "{tool}: {r}");
            if let Some(schema) = self.schemas.get(tool) {
                let mut errors = Vec::new();
                check_schema(schema, &value, "$", &mut errors);
                assert!(errors.is_empty(), "{tool}: {errors:?} in {value}");
            }
        }
        (is_error, value)
    }
}

/// A small JSON Schema check of `value` against `schema` (whose `$ref`s
/// point into `root`'s `$defs`): the keywords kith's output schemas use,
/// and a failure for any other, so a schema cannot silently outgrow it.
fn check_schema(schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    check_in(schema, schema, value, at, errors);
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn check_in(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        errors.push(format!("{at}: the schema is not an object"));
        return;
    };
    const KNOWN: &[&str] = &[
        "$ref",
        "$defs",
        "type",
        "properties",
        "required",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "enum",
        "anyOf",
        "allOf",
        "format",
        "minimum",
        "pattern",
        "description",
        "title",
        "$schema",
        "default",
        "examples",
    ];
    for key in map.keys() {
        if !KNOWN.contains(&key.as_str()) {
            errors.push(format!("{at}: the check does not know {key:?}"));
        }
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => check_in(root, target, value, at, errors),
            None => errors.push(format!("{at}: {r} does not resolve")),
        }
    }
    for (key, all) in [("anyOf", false), ("allOf", true)] {
        if let Some(options) = map.get(key).and_then(Value::as_array) {
            let passing = options
                .iter()
                .filter(|o| {
                    let mut e = Vec::new();
                    check_in(root, o, value, at, &mut e);
                    e.is_empty()
                })
                .count();
            if (all && passing < options.len()) || passing == 0 {
                errors.push(format!(
                    "{at}: {key} fails ({passing} of {})",
                    options.len()
                ));
            }
        }
    }
    if let Some(ty) = map.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let fits = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "null" => value.is_null(),
            _ => false,
        });
        if !fits {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if n < min {
            errors.push(format!("{at}: {n} < {min}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} not in {options:?}"));
        }
    }
    if let Some(text) = value.as_str() {
        let ok = match schema.get("format").and_then(Value::as_str) {
            Some("uuid") => uuid::Uuid::parse_str(text).is_ok(),
            Some("date-time") => text.len() >= 20 && text.as_bytes()[10] == b'T',
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: {text:?} does not fit its format"));
        }
        match schema.get("pattern").and_then(Value::as_str) {
            None => {}
            Some("^[0-9a-f]{64}$") if !is_sha256(text) => {
                errors.push(format!("{at}: {text:?} is not a SHA-256"));
            }
            Some("^[0-9a-f]{64}$") => {}
            Some(other) => errors.push(format!("{at}: the check knows no pattern {other}")),
        }
    }
    if let Some(object) = value.as_object() {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap_or_default();
            if !object.contains_key(name) {
                errors.push(format!("{at}: {name} is missing"));
            }
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, sub) in props {
                if let Some(v) = object.get(name) {
                    check_in(root, sub, v, &format!("{at}.{name}"), errors);
                }
            }
        }
    }
    if let Some(array) = value.as_array() {
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = schema.get("maxItems").and_then(Value::as_u64);
        if array.len() < min || max.is_some_and(|m| array.len() as u64 > m) {
            errors.push(format!("{at}: {} items", array.len()));
        }
        let prefix = schema.get("prefixItems").and_then(Value::as_array);
        for (i, v) in array.iter().enumerate() {
            if let Some(sub) = prefix
                .and_then(|p| p.get(i))
                .or_else(|| schema.get("items"))
            {
                check_in(root, sub, v, &format!("{at}[{i}]"), errors);
            }
        }
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

    let init = mcp.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "kith", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );

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
    // Every tool says what it answers and whether it changes memory.
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(tool["outputSchema"]["type"], "object", "{name}: {tool}");
        let hints = &tool["annotations"];
        assert!(hints["readOnlyHint"].is_boolean(), "{name}: {tool}");
        assert!(hints["destructiveHint"].is_boolean(), "{name}: {tool}");
        assert_eq!(hints["openWorldHint"], false, "{name}: {tool}");
    }
    let hint = |name: &str, key: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["annotations"][key].clone()
    };
    assert_eq!(hint("memory_retrieve", "readOnlyHint"), true);
    assert_eq!(hint("memory_list_claims", "readOnlyHint"), true);
    assert_eq!(hint("memory_store", "readOnlyHint"), false);
    assert_eq!(hint("memory_store", "destructiveHint"), false);
    assert_eq!(hint("memory_forget", "destructiveHint"), true);
    assert_eq!(hint("memory_undo", "destructiveHint"), true);
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

    // The organizer: two entities named in one message (inside the
    // sentence: a word that only starts one is no name), handed in as a
    // candidate pair, become an alias proposal; listed, then accepted.
    let (err, ingested) = mcp.call(
        9,
        "memory_ingest",
        json!({"content": "Yesterday Nadia met Nadine in Porto.", "session_id": "s2"}),
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
    let claim = facts["claims"][0]["id"]
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

/// Stores two messages and returns their node ids.
fn seed(mcp: &mut Mcp) -> (String, String) {
    let mut ids = Vec::new();
    for (i, content) in [
        "I moved to Lisbon in September.",
        "My sister Maya lives in Berlin.",
    ]
    .iter()
    .enumerate()
    {
        let (err, stored) = mcp.call(
            100 + i as u64,
            "memory_store",
            json!({"content": content, "speaker": "Alice", "session_id": "s1",
                   "event_time": format!("2025-03-0{}T10:00:00+00:00", i + 1)}),
        );
        assert!(!err, "{stored}");
        ids.push(stored["node_id"].as_str().unwrap().to_string());
    }
    (ids[0].clone(), ids[1].clone())
}

#[test]
fn mcp_retrieve_is_compact_unless_asked() {
    let t = TestPack::new();
    let mut mcp = Mcp::start(&t, "alice");
    mcp.initialize();
    mcp.request(2, "tools/list", json!({}));
    let (lisbon, _) = seed(&mut mcp);
    let question = json!({"query": "Where did Alice move?", "token_budget": 100});
    let (err, compact) = mcp.call(3, "memory_retrieve", question.clone());
    assert!(!err, "{compact}");
    assert!(
        compact["context"].as_str().unwrap().contains("Lisbon"),
        "{compact}"
    );
    let first = &compact["results"][0];
    assert_eq!(first["node_id"], lisbon.as_str(), "{compact}");
    assert_eq!(first["speaker"], "Alice", "{compact}");
    assert_eq!(first["time"], "2025-03-01T10:00:00Z", "{compact}");
    assert!(first["score"].as_f64().unwrap() > 0.0, "{compact}");
    for heavy in ["trace", "timings", "packed", "left_out", "provenance"] {
        assert!(
            !compact.to_string().contains(&format!("\"{heavy}\"")),
            "{heavy} in {compact}"
        );
    }
    // Asked for, the full retrieval: traces and timings, the same ranking.
    let mut full_args = question;
    full_args["detail"] = json!("full");
    let (err, full) = mcp.call(4, "memory_retrieve", full_args);
    assert!(!err, "{full}");
    assert!(full["results"][0]["trace"].is_object(), "{full}");
    assert!(full["timings"].is_object(), "{full}");
    assert_eq!(full["results"][0]["node_id"], lisbon.as_str());
    assert_eq!(full["context"], compact["context"]);
    assert!(
        compact.to_string().len() * 2 < full.to_string().len(),
        "compact {} bytes, full {} bytes",
        compact.to_string().len(),
        full.to_string().len()
    );
    // An unknown detail is refused like any bad argument.
    let (err, text) = mcp.call(
        5,
        "memory_retrieve",
        json!({"query": "x", "detail": "everything"}),
    );
    assert!(err, "{text}");
    assert!(
        text.as_str()
            .unwrap()
            .starts_with("invalid_input: detail: unknown variant"),
        "{text}"
    );
}

#[test]
fn mcp_refuses_arguments_that_do_not_fit_as_invalid_input() {
    let t = TestPack::new();
    let mut mcp = Mcp::start(&t, "alice");
    mcp.initialize();
    let cases = [
        (
            "memory_store",
            json!({}),
            "invalid_input: missing field `content`",
        ),
        (
            "memory_store",
            json!({"content": 5}),
            "invalid_input: content: invalid type: integer `5`, expected a string",
        ),
        (
            "memory_store",
            json!({"content": "x", "colour": "red"}),
            "invalid_input: unknown field `colour`",
        ),
        (
            "memory_retrieve",
            json!({"query": "x", "token_budget": "lots"}),
            "invalid_input: token_budget: invalid type",
        ),
        (
            "memory_review_alias_proposal",
            json!({"proposal_id": "x", "decision": "maybe"}),
            "invalid_input: decision: unknown variant `maybe`",
        ),
        (
            "memory_get_node",
            json!({"node_id": "not-a-uuid"}),
            "invalid_input: node_id \"not-a-uuid\" is not a UUID",
        ),
    ];
    for (i, (tool, args, message)) in cases.into_iter().enumerate() {
        let (err, text) = mcp.call(10 + i as u64, tool, args);
        assert!(err, "{tool}: {text}");
        let text = text.as_str().unwrap_or_default().to_string();
        assert!(text.starts_with(message), "{tool}: {text}");
    }
    drop(mcp);
    // Nothing was stored by any refused call.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kith"))
        .arg("--pack")
        .arg(&t.pack)
        .args(["--json", "--owner", "alice", "stats"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["events"], 0, "{stats}");
}

#[test]
fn mcp_answers_a_frame_that_is_not_json_with_a_parse_error() {
    let t = TestPack::new();
    let mut mcp = Mcp::start(&t, "alice");
    mcp.initialize();
    mcp.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ");
    let reply = mcp.read();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(reply["id"].is_null(), "{reply}");
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    mcp.send_raw("not json at all");
    assert_eq!(mcp.read()["error"]["code"], -32700);
    // JSON that is no request is another error, answered by the SDK.
    mcp.send(json!({"hello": "world"}));
    assert_eq!(mcp.read()["error"]["code"], -32600);
    // The session goes on.
    let list = mcp.request(3, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
}

#[test]
fn mcp_without_a_pack_answers_unavailable_until_one_exists() {
    let t = TestPack::new();
    let pack = t.path("later.kith");
    let mut mcp = Mcp::spawn(kith_cmd(&pack, &["mcp"]), "alice");
    let init = mcp.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "kith", "{init}");
    let list = mcp.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].as_array().unwrap().len() >= 15);
    let (err, text) = mcp.call(3, "memory_retrieve", json!({"query": "Lisbon"}));
    assert!(err, "{text}");
    let text = text.as_str().unwrap().to_string();
    assert!(text.starts_with("unavailable: "), "{text}");
    assert!(
        text.contains("is not a kith pack (no manifest.json); create one with `kith init"),
        "{text}"
    );
    // Said once.
    assert_eq!(text.matches("is not a kith pack").count(), 1, "{text}");
    // Created meanwhile, the next call opens it: no restart needed.
    let init = kith_cmd(&pack, &["init", "--embeddings", "none"])
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let (err, stored) = mcp.call(4, "memory_store", json!({"content": "I moved to Lisbon."}));
    assert!(!err, "{stored}");
    assert_eq!(stored["created"], true);
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

#[test]
fn serve_says_a_taken_port_once() {
    let t = TestPack::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let err = t.fails(&["serve", "--bind", &addr]);
    assert_eq!(err.lines().count(), 1, "{err}");
    let line = err.trim_end();
    assert!(
        line.starts_with(&format!("error: kith serve: cannot listen on {addr}: ")),
        "{line}"
    );
    // The OS's reason appears once, not twice.
    let reason = line.rsplit(": ").next().unwrap();
    assert_eq!(line.matches(reason).count(), 1, "{line}");
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
    let line = announcement(&mut child);
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
    let status = exit_status(&mut child);
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

/// The announced address is a promise that signals are handled: a SIGHUP
/// and a SIGTERM sent the moment the line is read reload the keys and stop
/// the server cleanly, instead of meeting the default actions (which kill
/// the process). Several rounds, since a handler installed late loses a race.
#[cfg(unix)]
#[test]
fn serve_handles_signals_sent_the_moment_it_announces() {
    let t = TestPack::new();
    let keys = t.path("keys");
    std::fs::write(&keys, "key-for-alice-0123456789 alice\n").unwrap();
    for round in 0..4 {
        let mut child = t
            .cmd(&["serve", "--bind", "127.0.0.1:0", "--keys-file"])
            .arg(&keys)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let line = announcement(&mut child);
        assert!(line.contains("http://"), "{line}");
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGHUP);
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let status = exit_status(&mut child);
        assert!(status.success(), "round {round}: {status:?}");
    }
}

/// The line `kith serve` announces itself with (its address), read from
/// the child's piped stdout.
#[cfg(unix)]
fn announcement(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line
}

/// How the child exited, once it has after a SIGTERM (20 s at most).
#[cfg(unix)]
fn exit_status(child: &mut Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "kith serve ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `kith serve` on a free port with `extra` arguments; returns the
/// child and its base URL.
#[cfg(unix)]
fn start_serve(t: &TestPack, extra: &[&str]) -> (Child, String) {
    let mut args = vec!["serve", "--bind", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut child = t
        .cmd(&args)
        .env("KITH_WORKER_POLL_MS", "50")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(t.path("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let line = announcement(&mut child);
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("an address in {line:?}"))
        .to_string();
    (child, url)
}

#[cfg(unix)]
#[test]
fn serve_runs_the_extraction_worker_unless_told_not_to() {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent();
    let get = |url: String| -> Value {
        let mut r = agent.get(url).call().unwrap();
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
    };
    let t = TestPack::new();
    let (mut child, url) = start_serve(&t, &[]);
    let mut r = agent
        .post(format!("{url}/v1/ingest"))
        .header("Content-Type", "application/json")
        .send(r#"{"content": "My sister Maya lives in Berlin.", "defer": true}"#)
        .unwrap();
    let receipt: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(receipt["status"], "pending", "{receipt}");
    let id = receipt["event_id"].as_str().unwrap().to_string();
    // Extracted without `kith process`: a minute means the worker is stuck.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let status = get(format!("{url}/v1/events/{id}/status"));
        if status["item"]["status"] == "complete" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let health = get(format!("{url}/v1/health"));
    assert_eq!(health["worker"]["completed"], 1, "{health}");
    let _ = child.kill();
    let _ = child.wait();

    let (mut child, url) = start_serve(&t, &["--no-worker"]);
    let health = get(format!("{url}/v1/health"));
    assert!(health["worker"].is_null(), "{health}");
    let _ = child.kill();
    let _ = child.wait();
}

/// Two servers on one pack: after the first forgets (and so scans the
/// pack's files), it still sees what the second writes. Reading a file and
/// closing it used to release the first process's SQLite locks, so the
/// second rebuilt the WAL index under it and the first saw nothing the
/// second wrote until that one closed.
#[cfg(unix)]
#[test]
fn a_forget_keeps_seeing_what_another_process_writes() {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .new_agent();
    let contents = |url: &str| -> Vec<String> {
        let mut r = agent
            .get(format!("{url}/v1/events"))
            .header("X-Kith-Owner", "o")
            .call()
            .unwrap();
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        v["events"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|e| e["content"].as_str().unwrap().to_string())
            .collect()
    };
    let store = |url: &str, text: &str| -> String {
        let mut r = agent
            .post(format!("{url}/v1/events"))
            .header("X-Kith-Owner", "o")
            .header("Content-Type", "application/json")
            .send(format!(r#"{{"role": "user", "content": "{text}"}}"#))
            .unwrap();
        assert_eq!(
            r.status(),
            201,
            "store: {}",
            r.body_mut().read_to_string().unwrap()
        );
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        v["event_id"].as_str().unwrap().to_string()
    };
    let t = TestPack::new();
    let (mut first, one) = start_serve(&t, &["--no-worker"]);
    let id = store(&one, "a first message to forget");
    let r = agent
        .delete(format!("{one}/v1/events/{id}?reason=asked"))
        .header("X-Kith-Owner", "o")
        .call()
        .unwrap();
    assert_eq!(r.status(), 200);
    let (mut second, two) = start_serve(&t, &["--no-worker"]);
    store(&two, "written by the second server");
    let seen = contents(&one);
    assert!(
        seen.iter().any(|c| c == "written by the second server"),
        "the first server sees {seen:?}"
    );
    assert_eq!(contents(&two), seen);
    for child in [&mut first, &mut second] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Sends one keep-alive GET on `stream` and reads its status.
#[cfg(unix)]
fn keep_alive_get(stream: &mut std::net::TcpStream, path: &str, key: &str) -> u16 {
    use std::io::Read;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: kith\r\nauthorization: Bearer {key}\r\n\r\n"
    )
    .unwrap();
    // Read the head, then exactly the body its content-length announces,
    // so the connection is ready for the next request.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the connection closed");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    head.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[cfg(unix)]
#[test]
fn sighup_reloads_the_keys_without_dropping_connections() {
    let t = TestPack::new();
    let keys = t.path("keys");
    let alice = "key-for-alice-0123456789";
    let bob = "key-for-bob-00123456789x";
    std::fs::write(&keys, format!("{alice} alice\n")).unwrap();
    let keys_arg = keys.to_str().unwrap().to_string();
    let (mut child, url) = start_serve(&t, &["--keys-file", &keys_arg]);
    let addr = url.trim_start_matches("http://").to_string();
    let mut open = std::net::TcpStream::connect(&addr).unwrap();
    open.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", alice), 200);
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", bob), 401);
    let hup = |child: &Child| {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGHUP);
        }
    };

    // Bob's key added; alice's kept.
    std::fs::write(&keys, format!("{alice} alice\n{bob} bob\n")).unwrap();
    hup(&child);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut fresh = std::net::TcpStream::connect(&addr).unwrap();
    fresh
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    while keep_alive_get(&mut fresh, "/v1/stats", bob) != 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "SIGHUP never reloaded the keys"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The connection opened before the reload still serves, with the new keys.
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", bob), 200);
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", alice), 200);

    // A key file that cannot be used is refused, said in the log, and the
    // keys in use stay.
    let refusals = |t: &TestPack| {
        std::fs::read_to_string(t.path("serve.log"))
            .unwrap_or_default()
            .matches("keys not reloaded")
            .count()
    };
    std::fs::write(&keys, "short bob\n").unwrap();
    hup(&child);
    while refusals(&t) < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the refusal was never logged"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(&keys, "# nobody\n").unwrap();
    hup(&child);
    while refusals(&t) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the refusal was never logged"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", bob), 200);
    assert_eq!(keep_alive_get(&mut fresh, "/v1/stats", alice), 200);
    let log = std::fs::read_to_string(t.path("serve.log")).unwrap();
    assert!(log.contains("shorter than"), "{log}");
    assert!(log.contains("holds no key"), "{log}");
    assert!(!log.contains("key-for-"), "a key leaked into the log");
    // A good file again: replaces the whole set.
    let carol = "key-for-carol-123456789x";
    std::fs::write(&keys, format!("{carol} carol\n")).unwrap();
    hup(&child);
    while keep_alive_get(&mut fresh, "/v1/stats", carol) != 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "the good reload never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Carol's file replaced the set: bob and alice are out now.
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", bob), 401);
    assert_eq!(keep_alive_get(&mut open, "/v1/stats", carol), 200);
    let _ = child.kill();
    let _ = child.wait();
}
