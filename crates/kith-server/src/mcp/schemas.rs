//! Each tool's `outputSchema`: the JSON Schema its `structuredContent`
//! follows. The facade's result types carry no schema derive (the engine
//! knows nothing of schemars), so the schemas are declared here, one line
//! a field, and `crates/kith-cli/tests/serve.rs` checks every tool's real
//! answers against them.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{json, Value};

/// A field's JSON type, as declared below.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    OptStr,
    Uuid,
    OptUuid,
    Bool,
    Int,
    Num,
    Obj,
    OptObj,
    Uuids,
    Strs,
    Objs,
}

impl Ty {
    fn schema(self) -> Value {
        match self {
            Ty::Str => json!({"type": "string"}),
            Ty::OptStr => json!({"type": ["string", "null"]}),
            Ty::Uuid => json!({"type": "string", "format": "uuid"}),
            Ty::OptUuid => json!({"type": ["string", "null"], "format": "uuid"}),
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Int => json!({"type": "integer", "minimum": 0}),
            Ty::Num => json!({"type": "number"}),
            Ty::Obj => json!({"type": "object"}),
            Ty::OptObj => json!({"type": ["object", "null"]}),
            Ty::Uuids => json!({"type": "array", "items": {"type": "string", "format": "uuid"}}),
            Ty::Strs => json!({"type": "array", "items": {"type": "string"}}),
            Ty::Objs => json!({"type": "array", "items": {"type": "object"}}),
        }
    }
}

/// An object whose listed fields are all present.
fn object(fields: &[(&str, Ty)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, ty)| ((*name).to_string(), ty.schema()))
        .collect();
    let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn finish(schema: Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        // `object` always builds an object; an empty schema accepts anything.
        _ => Arc::new(JsonObject::new()),
    }
}

use Ty::*;

/// `memory_store`.
pub fn store() -> Arc<JsonObject> {
    finish(object(&[
        ("event_id", Uuid),
        ("node_id", Uuid),
        ("created", Bool),
    ]))
}

/// `memory_ingest`.
pub fn ingest() -> Arc<JsonObject> {
    finish(object(&[
        ("event_id", Uuid),
        ("node_id", Uuid),
        ("created", Bool),
        ("status", Str),
        ("derivation", OptObj),
        ("error", OptStr),
    ]))
}

/// `memory_retrieve`: the compact form's fields, which the full form
/// (`detail: "full"`) has too; results differ in their other fields.
pub fn retrieve() -> Arc<JsonObject> {
    let mut schema = object(&[
        ("request_id", Uuid),
        ("context", Str),
        ("tokens", Int),
        ("token_budget", Int),
        ("results", Objs),
    ]);
    schema["properties"]["results"]["items"] = json!({
        "type": "object",
        "properties": {
            "rank": {"type": "integer", "minimum": 1},
            "node_id": {"type": "string", "format": "uuid"},
            "event_id": {"type": "string", "format": "uuid"},
            "node_type": {"type": "string"},
            "speaker": {"type": "string"},
            "role": {"type": "string"},
            "time": {"type": "string", "format": "date-time"},
            "score": {"type": "number"}
        },
        "required": ["rank", "node_id"]
    });
    finish(schema)
}

/// `memory_get_node`.
pub fn node() -> Arc<JsonObject> {
    finish(object(&[
        ("node", Obj),
        ("provenance", Objs),
        ("edges", Objs),
        ("neighbours", Objs),
        ("truncated", Bool),
    ]))
}

/// `memory_organize`.
pub fn organize() -> Arc<JsonObject> {
    finish(object(&[
        ("owner", Str),
        ("jobs", Objs),
        ("duration_ms", Num),
    ]))
}

/// `memory_list_alias_proposals`.
pub fn alias_page() -> Arc<JsonObject> {
    finish(object(&[("proposals", Objs), ("next_after", OptUuid)]))
}

/// `memory_review_alias_proposal`.
pub fn review() -> Arc<JsonObject> {
    finish(object(&[
        ("review_op_id", Uuid),
        ("decision", Str),
        ("edge_id", OptUuid),
        ("replayed", Bool),
    ]))
}

/// `memory_propose_alias`.
pub fn propose() -> Arc<JsonObject> {
    finish(object(&[
        ("op_id", OptUuid),
        ("edge_id", Uuid),
        ("created", Bool),
        ("format", OptStr),
        ("assessment", OptObj),
        ("status", Str),
    ]))
}

/// `memory_path`.
pub fn path() -> Arc<JsonObject> {
    finish(object(&[
        ("from", Obj),
        ("to", Uuid),
        ("steps", Objs),
        ("found", Bool),
        ("include_unverified_aliases", Bool),
        ("skipped_proposals", Int),
        ("truncated", Bool),
    ]))
}

/// `memory_correct`.
pub fn correction() -> Arc<JsonObject> {
    finish(object(&[
        ("op_id", Uuid),
        ("target", Uuid),
        ("created_target", Bool),
        ("moved_claims", Uuids),
        ("closed_edges", Uuids),
        ("opened_edges", Uuids),
        ("replayed", Bool),
    ]))
}

/// `memory_forget`.
pub fn forget() -> Arc<JsonObject> {
    finish(object(&[
        ("dry_run", Bool),
        ("operation_id", OptUuid),
        ("events", Uuids),
        ("already_forgotten", Uuids),
        ("nodes_deleted", Uuids),
        ("nodes_updated", Uuids),
        ("edges_deleted", Int),
        ("vectors_deleted", Int),
        ("work_items_deleted", Int),
        ("journal_records_scrubbed", Uuids),
        ("compaction", Strs),
        ("verification", OptObj),
    ]))
}

/// `memory_list_claims`: the claims under `claims` (structured content
/// must be an object).
pub fn claims() -> Arc<JsonObject> {
    let mut schema = object(&[("claims", Objs)]);
    schema["properties"]["claims"]["items"] = object(&[
        ("id", Uuid),
        ("subject_id", Uuid),
        ("subject", Str),
        ("predicate", OptStr),
        ("object", OptStr),
        ("polarity", OptStr),
        ("content", Str),
        ("lifecycle", Str),
        ("current", Bool),
        ("valid_from", Str),
        ("valid_to", OptStr),
        ("event_time", OptStr),
        ("evidence_quote", OptStr),
        ("evidence", Uuids),
        ("superseded_by", OptUuid),
        ("edited", OptObj),
    ]);
    finish(schema)
}

/// `memory_retract_claim` and `memory_correct_claim`.
pub fn claim_edit() -> Arc<JsonObject> {
    finish(object(&[
        ("op_id", Uuid),
        ("kind", Str),
        ("claim", Uuid),
        ("replacement", OptUuid),
        ("replayed", Bool),
    ]))
}

/// `memory_undo`.
pub fn undo() -> Arc<JsonObject> {
    finish(object(&[
        ("undo_op_id", Uuid),
        ("undone_op_id", Uuid),
        ("undone_kind", Str),
        ("restored_nodes", Uuids),
        ("removed_edges", Uuids),
        ("replayed", Bool),
    ]))
}
