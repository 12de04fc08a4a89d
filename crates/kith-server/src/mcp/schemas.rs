//! Each tool's `outputSchema`: the JSON Schema its `structuredContent`
//! follows. They are the HTTP API's answer schemas (the OpenAPI document's
//! components, `crate::apidoc`), so both surfaces promise the same shapes:
//! a tool's schema is its component with the components it refers to
//! carried along under `$defs`. Built once per process.
//! `crates/kith-cli/tests/serve.rs` checks every tool's real answers
//! against them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use serde_json::{json, Value};

const PREFIX: &str = "#/components/schemas/";

/// `value` with every `#/components/schemas/X` reference turned into
/// `#/$defs/X`; the names referred to are added to `seen`.
fn rebase(value: &Value, seen: &mut BTreeSet<String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v.as_str()) {
                    ("$ref", Some(r)) if r.starts_with(PREFIX) => {
                        let name = &r[PREFIX.len()..];
                        seen.insert(name.to_string());
                        (k.clone(), json!(format!("#/$defs/{name}")))
                    }
                    _ => (k.clone(), rebase(v, seen)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| rebase(v, seen)).collect()),
        other => other.clone(),
    }
}

/// A self-contained schema for `root` (a schema that may refer to
/// components), with every component it needs under `$defs`.
fn standalone(root: Value, components: &serde_json::Map<String, Value>) -> Arc<JsonObject> {
    let mut wanted = BTreeSet::new();
    let mut schema = rebase(&root, &mut wanted);
    let mut defs = BTreeMap::new();
    while let Some(name) = wanted.iter().find(|n| !defs.contains_key(*n)).cloned() {
        let component = components.get(&name).cloned().unwrap_or_else(|| json!({}));
        let mut more = BTreeSet::new();
        defs.insert(name, rebase(&component, &mut more));
        wanted.extend(more);
    }
    if !defs.is_empty() {
        schema["$defs"] = json!(defs);
    }
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// An object schema that is the component `name`.
fn component(name: &str) -> Value {
    // MCP wants an object at the root; the component says the rest.
    json!({"type": "object", "allOf": [{"$ref": format!("{PREFIX}{name}")}]})
}

/// Every tool's output schema, by tool name.
fn all() -> &'static BTreeMap<&'static str, Arc<JsonObject>> {
    static SCHEMAS: OnceLock<BTreeMap<&'static str, Arc<JsonObject>>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let doc = crate::routes::openapi();
        let components = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let roots: [(&str, Value); 15] = [
            ("memory_store", component("Receipt")),
            ("memory_ingest", component("IngestReceipt")),
            ("memory_retrieve", component("RetrieveAnswer")),
            ("memory_get_node", component("NodeView")),
            ("memory_organize", component("OrganizeReport")),
            ("memory_list_alias_proposals", component("AliasPage")),
            ("memory_review_alias_proposal", component("ReviewOutcome")),
            ("memory_propose_alias", component("ProposeOutcome")),
            ("memory_path", component("PathReport")),
            ("memory_correct", component("CorrectionReport")),
            ("memory_forget", component("ForgetReport")),
            (
                "memory_list_claims",
                json!({"type": "object", "description": "The claims, current first.",
                       "properties": {"claims": {"$ref": format!("{PREFIX}ClaimFacts")}},
                       "required": ["claims"]}),
            ),
            ("memory_retract_claim", component("ClaimEditReport")),
            ("memory_correct_claim", component("ClaimEditReport")),
            ("memory_undo", component("UndoReport")),
        ];
        roots
            .into_iter()
            .map(|(tool, root)| (tool, standalone(root, &components)))
            .collect()
    })
}

/// The output schema of `tool`.
pub fn of(tool: &str) -> Arc<JsonObject> {
    all()
        .get(tool)
        .cloned()
        .unwrap_or_else(|| Arc::new(JsonObject::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_resolves_inside_the_tool_schema() {
        for (tool, schema) in all() {
            let schema = Value::Object((**schema).clone());
            let text = schema.to_string();
            assert!(
                !text.contains(PREFIX),
                "{tool}: a components reference left"
            );
            let mut refs = BTreeSet::new();
            rebase(&schema, &mut refs);
            assert!(refs.is_empty());
            for def in text.split("\"#/$defs/").skip(1) {
                let name = def.split('"').next().unwrap_or_default();
                assert!(
                    schema["$defs"].get(name).is_some_and(|d| d != &json!({})),
                    "{tool}: $defs/{name} missing"
                );
            }
            assert_eq!(schema["type"], "object", "{tool}");
        }
    }
}
