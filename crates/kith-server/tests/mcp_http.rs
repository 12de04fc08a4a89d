//! Issue 18 item 2: MCP's Streamable HTTP transport at `/mcp` of `kith
//! serve`, over real HTTP with per-owner keys: every call acts for its
//! key's owner, and owners never see each other.

mod common;

use kith_server::{ApiKeys, Auth, ServeOptions};
use serde_json::{json, Value};

use common::TestServer;

const ALICE: &str = "alice-key-0123456789abcdef";
const BOB: &str = "bob-key-0123456789abcdef00";

fn keyed() -> TestServer {
    let keys = ApiKeys::parse_env(&format!("{ALICE}:alice,{BOB}:bob")).unwrap();
    TestServer::start_with(Auth::Keys(keys), ServeOptions::default(), |m| m)
}

/// One JSON-RPC message to `/mcp` with `key`; the HTTP status and the
/// JSON-RPC answer (Null when there is none).
fn rpc(s: &TestServer, key: &str, message: Value) -> (u16, Value) {
    let auth = format!("Bearer {key}");
    let (status, _, text) = s.send(
        "POST",
        "/mcp",
        &[
            ("authorization", auth.as_str()),
            ("accept", "application/json, text/event-stream"),
        ],
        Some(message),
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A tools/call; (is_error, structured content or the refusal's text).
fn call(s: &TestServer, key: &str, tool: &str, arguments: Value) -> (bool, Value) {
    let (status, answer) = rpc(
        s,
        key,
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}}),
    );
    assert_eq!(status, 200, "{tool}: {answer}");
    let result = &answer["result"];
    assert!(result.is_object(), "{tool}: {answer}");
    if result["isError"] == true {
        (true, result["content"][0]["text"].clone())
    } else {
        (false, result["structuredContent"].clone())
    }
}

#[test]
fn mcp_over_http_acts_for_the_key_owner() {
    let s = keyed();
    // No key, a wrong key: the server's 401, before MCP sees anything.
    let (status, body) = rpc(
        &s,
        "nobody-key-0123456789abc",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized", "{body}");

    let (status, init) = rpc(
        &s,
        ALICE,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "kith-test", "version": "0"}}}),
    );
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "kith", "{init}");
    let (_, list) = rpc(
        &s,
        ALICE,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let tools = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(tools.len(), 15, "{list}");

    let (err, stored) = call(
        &s,
        ALICE,
        "memory_store",
        json!({"content": "I moved to Lisbon in September.", "speaker": "Alice"}),
    );
    assert!(!err, "{stored}");
    assert_eq!(stored["created"], true);
    let (err, r) = call(
        &s,
        ALICE,
        "memory_retrieve",
        json!({"query": "Where did Alice move?"}),
    );
    assert!(!err, "{r}");
    assert_eq!(r["results"][0]["node_id"], stored["node_id"], "{r}");
    // Bob's key: bob's memory, which holds nothing of alice's.
    let (err, r) = call(
        &s,
        BOB,
        "memory_retrieve",
        json!({"query": "Where did Alice move?"}),
    );
    assert!(!err, "{r}");
    assert_eq!(r["results"], json!([]), "{r}");
    let (err, text) = call(
        &s,
        BOB,
        "memory_get_node",
        json!({"node_id": stored["node_id"]}),
    );
    assert!(
        err && text.as_str().unwrap().starts_with("not_found"),
        "{text}"
    );
    // Naming another owner is refused.
    let (err, text) = call(
        &s,
        BOB,
        "memory_store",
        json!({"content": "x", "owner_id": "alice"}),
    );
    assert!(
        err && text.as_str().unwrap().starts_with("forbidden"),
        "{text}"
    );
    // A body that is not JSON: JSON-RPC's parse error, and nothing else.
    let auth = format!("Bearer {ALICE}");
    let (status, _, text) = s.send_text(
        "POST",
        "/mcp",
        &[
            ("authorization", auth.as_str()),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
        ],
        "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": ",
    );
    assert_eq!(status, 400, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["id"].is_null(), "{answer}");
    // The REST API sees what MCP wrote, for the same owner only.
    let auth = format!("Bearer {ALICE}");
    let (status, _, text) = s.send(
        "GET",
        "/v1/stats",
        &[("authorization", auth.as_str())],
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["events"], 1);
    let auth = format!("Bearer {BOB}");
    let (_, _, text) = s.send(
        "GET",
        "/v1/stats",
        &[("authorization", auth.as_str())],
        None,
    );
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["events"], 0);
}

#[test]
fn a_keyless_server_serves_mcp_to_this_machine_only() {
    let s = TestServer::start(ServeOptions::default(), |m| m);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let accept = ("accept", "application/json, text/event-stream");
    let (status, _, text) = s.send(
        "POST",
        "/mcp",
        &[accept, ("x-kith-owner", "carol")],
        Some(list.clone()),
    );
    assert_eq!(status, 200, "{text}");
    let (status, _, text) = s.send(
        "POST",
        "/mcp",
        &[accept, ("x-kith-owner", "carol")],
        Some(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "memory_store", "arguments": {"content": "Hi."}}})),
    );
    assert_eq!(status, 200, "{text}");
    let (_, _, text) = s.send("GET", "/v1/stats", &[("x-kith-owner", "carol")], None);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap()["events"], 1);
    // A page on another site cannot reach it through DNS rebinding: a Host
    // that is not this machine is refused.
    let (status, _, text) = s.send(
        "POST",
        "/mcp",
        &[accept, ("host", "evil.example")],
        Some(list),
    );
    assert_ne!(status, 200, "{text}");
    assert!(!text.contains("memory_store"), "{text}");
}
