//! Issue 18 item 1 (the brief's item 5): `/openapi.json` is an OpenAPI 3.1
//! document a validator and a client generator accept. Structure: unique
//! operation ids, every response described, every `$ref` resolving, every
//! served route documented with a typed success answer. Substance: every
//! route called for real, its answer checked against the document's own
//! schema for that route and status.

mod common;

use std::collections::{HashMap, HashSet};

use kith_server::ServeOptions;
use serde_json::{json, Value};

use common::TestServer;

fn document(s: &TestServer) -> Value {
    let (status, doc) = s.call("GET", "/openapi.json", None);
    assert_eq!(status, 200);
    doc
}

/// Every `$ref` anywhere under `value`.
fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn the_document_is_structurally_valid() {
    let s = TestServer::start(ServeOptions::default(), |m| m);
    let doc = document(&s);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1."),
        "{}",
        doc["openapi"]
    );
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let paths = doc["paths"].as_object().unwrap();
    let mut ids = HashSet::new();
    let mut documented = HashSet::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            documented.insert((method.clone(), path.clone()));
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
            let responses = op["responses"].as_object().unwrap();
            assert!(!responses.is_empty(), "{method} {path}: no responses");
            let mut success = false;
            for (status, response) in responses {
                let description = response["description"].as_str().unwrap_or_default();
                assert!(
                    !description.trim().is_empty(),
                    "{method} {path} {status}: no description"
                );
                if status.starts_with('2') {
                    success = true;
                    let content = response["content"]
                        .as_object()
                        .unwrap_or_else(|| panic!("{method} {path} {status}: no content"));
                    for (media, body) in content {
                        let schema = &body["schema"];
                        assert!(
                            schema.get("$ref").is_some() || schema.get("type").is_some(),
                            "{method} {path} {status} {media}: an untyped answer {schema}"
                        );
                    }
                } else {
                    assert_eq!(
                        response["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorBody",
                        "{method} {path} {status}"
                    );
                }
            }
            assert!(success, "{method} {path}: no success response");
        }
    }
    // Every served route is documented, and only those.
    let served: HashSet<(String, String)> = kith_server::route_table()
        .iter()
        .map(|(m, p)| (m.as_str().to_lowercase(), p.to_string()))
        .collect();
    assert_eq!(served, documented);
    // Every reference resolves.
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 50, "{}", all.len());
    for r in all {
        let pointer = r
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("{r}: not local"));
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }
}

/// Checks `value` against `schema` (resolving `$ref` in `doc`); pushes each
/// mismatch. Knows the keywords kith's document uses and refuses others,
/// so the check cannot silently skip a rule it does not know.
fn check(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        if schema != &Value::Bool(true) {
            errors.push(format!("{at}: schema {schema}"));
        }
        return;
    };
    const KNOWN: &[&str] = &[
        "$ref",
        "type",
        "properties",
        "required",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "enum",
        "anyOf",
        "oneOf",
        "allOf",
        "format",
        "minimum",
        "maximum",
        "pattern",
        "description",
        "title",
        "default",
        "examples",
        "additionalProperties",
        "propertyNames",
    ];
    for key in map.keys() {
        if !KNOWN.contains(&key.as_str()) {
            errors.push(format!("{at}: unknown keyword {key}"));
        }
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        match doc.pointer(r.trim_start_matches('#')) {
            Some(target) => check(doc, target, value, at, errors),
            None => errors.push(format!("{at}: {r} does not resolve")),
        }
    }
    for (key, all) in [("anyOf", false), ("oneOf", false), ("allOf", true)] {
        if let Some(options) = map.get(key).and_then(Value::as_array) {
            let passing = options
                .iter()
                .filter(|o| {
                    let mut e = Vec::new();
                    check(doc, o, value, at, &mut e);
                    e.is_empty()
                })
                .count();
            let ok = if all {
                passing == options.len()
            } else if key == "oneOf" {
                passing == 1
            } else {
                passing >= 1
            };
            if !ok {
                errors.push(format!(
                    "{at}: {key} ({passing} of {}) fails {value}",
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
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "null" => value.is_null(),
            _ => false,
        });
        if !fits {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(options) = map.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(n) = value.as_f64() {
        if map
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n < m)
        {
            errors.push(format!("{at}: {n} is under its minimum"));
        }
        if map
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n > m)
        {
            errors.push(format!("{at}: {n} is over its maximum"));
        }
    }
    if let Some(text) = value.as_str() {
        match map.get("format").and_then(Value::as_str) {
            Some("uuid") if uuid::Uuid::parse_str(text).is_err() => {
                errors.push(format!("{at}: {text:?} is not a uuid"))
            }
            Some("date-time") if !(text.len() >= 20 && text.as_bytes()[10] == b'T') => {
                errors.push(format!("{at}: {text:?} is not a date-time"))
            }
            _ => {}
        }
        match map.get("pattern").and_then(Value::as_str) {
            None => {}
            Some("^[0-9a-f]{64}$") if !is_sha256(text) => {
                errors.push(format!("{at}: {text:?} is not a SHA-256"));
            }
            Some("^[0-9a-f]{64}$") => {}
            Some(other) => errors.push(format!("{at}: the check knows no pattern {other}")),
        }
    }
    if let Some(object) = value.as_object() {
        for name in map
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
        let props = map.get("properties").and_then(Value::as_object);
        for (name, v) in object {
            match props.and_then(|p| p.get(name)) {
                Some(sub) => check(doc, sub, v, &format!("{at}.{name}"), errors),
                None => {
                    if let Some(extra) = map.get("additionalProperties") {
                        check(doc, extra, v, &format!("{at}.{name}"), errors);
                    }
                }
            }
        }
    }
    if let Some(array) = value.as_array() {
        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = map
            .get("maxItems")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        if array.len() < min || max.is_some_and(|m| array.len() > m) {
            errors.push(format!("{at}: {} items", array.len()));
        }
        let prefix = map.get("prefixItems").and_then(Value::as_array);
        for (i, v) in array.iter().enumerate() {
            let sub = prefix.and_then(|p| p.get(i)).or_else(|| map.get("items"));
            if let Some(sub) = sub {
                check(doc, sub, v, &format!("{at}[{i}]"), errors);
            }
        }
    }
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Calls the API and checks every answer against the document.
struct Checked<'a> {
    s: &'a TestServer,
    doc: Value,
    templates: Vec<(String, String)>,
    seen: HashMap<(String, String), HashSet<u16>>,
}

impl<'a> Checked<'a> {
    fn new(s: &'a TestServer) -> Self {
        let doc = document(s);
        let templates = kith_server::route_table()
            .iter()
            .map(|(m, p)| (m.as_str().to_lowercase(), p.to_string()))
            .collect();
        Checked {
            s,
            doc,
            templates,
            seen: HashMap::new(),
        }
    }

    /// The route template `path` (without its query) matches.
    fn template(&self, method: &str, path: &str) -> (String, String) {
        let path = path.split('?').next().unwrap();
        let parts: Vec<&str> = path.split('/').collect();
        self.templates
            .iter()
            .filter(|(m, _)| m == method)
            .find(|(_, t)| {
                let tparts: Vec<&str> = t.split('/').collect();
                tparts.len() == parts.len()
                    && tparts
                        .iter()
                        .zip(&parts)
                        .all(|(t, p)| t == p || (t.starts_with('{') && t.ends_with('}')))
            })
            .cloned()
            .unwrap_or_else(|| panic!("no route serves {method} {path}"))
    }

    /// One call; its answer must follow the document. Returns the body.
    fn call(&mut self, method: &str, path: &str, body: Option<Value>, want: u16) -> Value {
        let (status, ctype, text) = self.s.raw(method, path, body);
        assert_eq!(status, want, "{method} {path}: {text}");
        let m = method.to_lowercase();
        let (tm, tp) = self.template(&m, path);
        self.seen
            .entry((tm.clone(), tp.clone()))
            .or_default()
            .insert(status);
        let media = ctype
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        let pointer = format!(
            "/paths/{}/{tm}/responses/{status}/content",
            tp.replace('~', "~0").replace('/', "~1")
        );
        let content = self
            .doc
            .pointer(&pointer)
            .unwrap_or_else(|| panic!("{method} {tp} does not document {status}"))
            .clone();
        let declared = content
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.split(';').next().unwrap().trim() == media)
            .unwrap_or_else(|| panic!("{method} {tp} {status}: {media} not documented"))
            .clone();
        if media != "application/json" {
            return Value::String(text);
        }
        let value: Value = serde_json::from_str(&text).unwrap();
        let mut errors = Vec::new();
        check(
            &self.doc,
            &content[&declared]["schema"],
            &value,
            "$",
            &mut errors,
        );
        assert!(
            errors.is_empty(),
            "{method} {path} {status}: {errors:#?}\n{value}"
        );
        value
    }
}

#[test]
fn every_route_answers_as_documented() {
    let s = TestServer::start(ServeOptions::default(), |m| m);
    let mut c = Checked::new(&s);
    c.call("GET", "/v1/health", None, 200);
    c.call("GET", "/openapi.json", None, 200);
    let metrics = c.call("GET", "/metrics", None, 200);
    assert!(metrics
        .as_str()
        .unwrap()
        .contains("kith_http_requests_total"));

    let stored = c.call(
        "POST",
        "/v1/events",
        Some(json!({"content": "Hello there.", "session_id": "s0", "source_id": "m0"})),
        201,
    );
    c.call(
        "POST",
        "/v1/events",
        Some(json!({"content": "Hello there.", "source_id": "m0"})),
        200,
    );
    c.call(
        "POST",
        "/v1/events/batch",
        Some(json!({"events": [{"content": "One.", "session_id": "s0"}, {"content": "Two.", "session_id": "s0"}]})),
        200,
    );
    let ingested = c.call(
        "POST",
        "/v1/ingest",
        Some(
            json!({"content": "My sister Maya lives in Berlin. I work at Northwind.",
                    "speaker": "Alice", "session_id": "s1",
                    "event_time": "2025-01-01T10:00:00+00:00"}),
        ),
        200,
    );
    c.call(
        "POST",
        "/v1/ingest/batch",
        Some(json!({"events": [{"content": "Yesterday Nadia met Nadine in Porto.", "session_id": "s2"}]})),
        200,
    );
    c.call(
        "POST",
        "/v1/ingest/batch",
        Some(json!({"defer": true,
        "events": [{"content": "Later, maybe.", "session_id": "s3"}]})),
        200,
    );
    let event = ingested["event_id"].as_str().unwrap().to_string();
    c.call("GET", "/v1/events?limit=2", None, 200);
    c.call("GET", &format!("/v1/events/{event}"), None, 200);
    c.call("GET", &format!("/v1/events/{event}/status"), None, 200);
    c.call("GET", "/v1/stats", None, 200);

    let full = c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "Where does Maya live?"})),
        200,
    );
    c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "Where does Maya live?", "detail": "compact"})),
        200,
    );
    let request = full["request_id"].as_str().unwrap();
    c.call("GET", &format!("/v1/retrievals/{request}"), None, 200);
    c.call("POST", "/v1/search", Some(json!({"query": "Maya"})), 200);

    let nodes = c.call("GET", "/v1/nodes?type=entity&limit=100", None, 200);
    let entity = |name: &str| -> String {
        nodes["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["content"] == name)
            .unwrap_or_else(|| panic!("{name} in {nodes}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (alice, maya, nadia, nadine) = (
        entity("Alice"),
        entity("Maya"),
        entity("Nadia"),
        entity("Nadine"),
    );
    c.call("GET", "/v1/nodes?limit=3", None, 200);
    c.call("GET", &format!("/v1/nodes/{alice}"), None, 200);
    c.call(
        "GET",
        &format!("/v1/path?from={alice}&to={maya}"),
        None,
        200,
    );

    let report = c.call(
        "POST",
        "/v1/organize",
        Some(json!({"candidates": [{"a": nadia, "b": nadine, "score": 0.95}]})),
        200,
    );
    let proposal = report["jobs"][1]["proposals"][0]["op_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a proposal in {report}"))
        .to_string();
    c.call("GET", "/v1/aliases?status=pending", None, 200);
    c.call(
        "POST",
        "/v1/aliases",
        Some(json!({"a": nadia, "b": nadine, "score": 0.9})),
        200,
    );
    let review = c.call(
        "POST",
        &format!("/v1/aliases/{proposal}/review"),
        Some(json!({"decision": "accept", "reviewer": "alice"})),
        200,
    );
    let review_op = review["review_op_id"].as_str().unwrap().to_string();
    c.call("POST", &format!("/v1/undo/{review_op}"), None, 200);
    c.call("GET", "/v1/journal?limit=5", None, 200);

    let claims = c.call("GET", "/v1/claims?subject=alice", None, 200);
    let claim = |i: usize| {
        claims[i]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{claims}"))
            .to_string()
    };
    let (first, second) = (claim(0), claim(1));
    c.call(
        "POST",
        "/v1/corrections",
        Some(json!({"entity": alice, "claims": [first], "to": maya, "reason": "Maya said it of herself"})),
        200,
    );
    c.call(
        "POST",
        &format!("/v1/claims/{second}/correct"),
        Some(json!({"object": "Contoso", "reason": "she works at Contoso"})),
        200,
    );
    let claims = c.call("GET", "/v1/claims?subject=alice", None, 200);
    let current = claims[0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{claims}"))
        .to_string();
    c.call(
        "POST",
        &format!("/v1/claims/{current}/retract"),
        Some(json!({"reason": "never mind"})),
        200,
    );

    let hello = stored["event_id"].as_str().unwrap();
    c.call(
        "DELETE",
        "/v1/sessions/s2?reason=asked&dry_run=true",
        None,
        200,
    );
    c.call("DELETE", "/v1/owner?reason=asked&dry_run=true", None, 200);
    c.call(
        "DELETE",
        &format!("/v1/events/{hello}?reason=asked"),
        None,
        200,
    );

    // Errors follow ErrorBody.
    let missing = "00000000-0000-0000-0000-000000000000";
    c.call("GET", &format!("/v1/events/{missing}"), None, 404);
    c.call(
        "POST",
        "/v1/events",
        Some(json!({"content": "x", "role": "robot"})),
        422,
    );
    c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "x", "limit": 0})),
        422,
    );

    // Every documented route was called.
    let documented: HashSet<(String, String)> = c.templates.iter().cloned().collect();
    let called: HashSet<(String, String)> = c.seen.keys().cloned().collect();
    let missed: Vec<_> = documented.difference(&called).collect();
    assert!(missed.is_empty(), "not called: {missed:?}");
}
