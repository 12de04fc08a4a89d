//! The JSON Schemas of the API's answers. The facade's result types carry
//! no schema derive (the engine knows nothing of utoipa), so each answer is
//! declared here, one line a field, and `tests/openapi.rs` checks every
//! route's real answers against them.

use serde_json::{json, Value};

/// A reference to another schema of this list.
pub fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

fn string() -> Value {
    json!({"type": "string"})
}
fn opt_string() -> Value {
    json!({"type": ["string", "null"]})
}
fn uuid() -> Value {
    json!({"type": "string", "format": "uuid"})
}
fn opt_uuid() -> Value {
    json!({"type": ["string", "null"], "format": "uuid"})
}
fn time() -> Value {
    json!({"type": "string", "format": "date-time"})
}
fn opt_time() -> Value {
    json!({"type": ["string", "null"], "format": "date-time"})
}
fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}
fn opt_count() -> Value {
    json!({"type": ["integer", "null"], "minimum": 0})
}
fn number() -> Value {
    json!({"type": "number"})
}
fn boolean() -> Value {
    json!({"type": "boolean"})
}
fn sha256() -> Value {
    json!({"type": "string", "pattern": "^[0-9a-f]{64}$"})
}
/// Any JSON object (caller metadata, a journal payload).
fn object() -> Value {
    json!({"type": "object"})
}
fn opt_object() -> Value {
    json!({"type": ["object", "null"]})
}
fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}
fn uuids() -> Value {
    array(uuid())
}
fn one_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// An object with these fields, all present (a nullable one is present
/// as `null`), described by `description`.
fn fields(description: &str, list: &[(&str, Value)]) -> Value {
    let properties: serde_json::Map<String, Value> = list
        .iter()
        .map(|(name, schema)| ((*name).to_string(), schema.clone()))
        .collect();
    let required: Vec<&str> = list.iter().map(|(name, _)| *name).collect();
    json!({"type": "object", "description": description,
           "properties": properties, "required": required})
}

/// Adds fields that may be absent.
fn with_optional(mut schema: Value, list: &[(&str, Value)]) -> Value {
    if let Some(props) = schema["properties"].as_object_mut() {
        for (name, s) in list {
            props.insert((*name).to_string(), s.clone());
        }
    }
    schema
}

const ROLES: &[&str] = &["user", "participant", "assistant", "tool", "system"];
const LIFECYCLES: &[&str] = &[
    "tentative",
    "stable",
    "superseded",
    "contested",
    "deprecated",
    "archived",
];

fn node_fields() -> Vec<(&'static str, Value)> {
    vec![
        ("id", uuid()),
        ("owner_id", string()),
        ("scope", string()),
        ("session_id", opt_string()),
        ("node_type", string()),
        ("content", string()),
        ("metadata", opt_object()),
        ("confidence", number()),
        ("lifecycle", one_of(LIFECYCLES)),
        ("epistemic_type", string()),
        ("source_type", string()),
        ("valid_from", time()),
        ("valid_to", opt_time()),
        ("event_time", opt_time()),
        ("superseded_by", opt_uuid()),
        ("evidence_refs", uuids()),
        ("created_at", time()),
        ("updated_at", time()),
    ]
}

fn event_fields() -> Vec<(&'static str, Value)> {
    vec![
        ("seq", count()),
        ("id", uuid()),
        ("owner_id", string()),
        ("scope", string()),
        ("session_id", opt_string()),
        ("role", one_of(ROLES)),
        ("speaker", opt_string()),
        ("content", string()),
        ("content_sha256", sha256()),
        ("event_time", opt_time()),
        ("ingested_at", time()),
        ("metadata", opt_object()),
        ("source_id", opt_string()),
        ("checksum", sha256()),
    ]
}

/// Every answer schema, by component name.
pub fn components() -> Vec<(&'static str, Value)> {
    let node = fields(
        "A memory node: a note, entity, claim or summary.",
        &node_fields(),
    );
    let mut stored = node_fields();
    stored.insert(0, ("seq", count()));
    let stored_node = fields("A node with its position in the owner's listing.", &stored);
    let event = with_optional(
        fields("A source message as stored (append-only).", &event_fields()),
        &[("tombstone", object())],
    );
    vec![
        ("Node", node),
        ("StoredNode", stored_node),
        ("Event", event),
        (
            "Edge",
            fields(
                "A typed link between two nodes.",
                &[
                    ("id", uuid()),
                    ("owner_id", string()),
                    ("scope", string()),
                    ("source_id", uuid()),
                    ("target_id", uuid()),
                    ("edge_type", string()),
                    ("confidence", number()),
                    ("valid_from", time()),
                    ("valid_to", opt_time()),
                    ("provenance_event_id", opt_uuid()),
                    ("metadata", opt_object()),
                    ("created_at", time()),
                ],
            ),
        ),
        (
            "Provenance",
            fields(
                "Where a result came from: its message, who said it, when.",
                &[
                    ("event_id", uuid()),
                    ("session_id", opt_string()),
                    ("role", one_of(ROLES)),
                    ("speaker", opt_string()),
                    ("event_time", opt_time()),
                    ("ingested_at", time()),
                ],
            ),
        ),
        (
            "Operation",
            fields(
                "A checksummed journal record.",
                &[
                    ("id", uuid()),
                    ("kind", string()),
                    ("owner_id", string()),
                    ("scope", opt_string()),
                    ("target_id", opt_uuid()),
                    ("payload", object()),
                    ("created_at", time()),
                    ("checksum", sha256()),
                ],
            ),
        ),
        (
            "DerivationSummary",
            fields(
                "What one extraction derived.",
                &[
                    ("revision", count()),
                    ("plan_checksum", sha256()),
                    ("entities_created", count()),
                    ("entities_reused", count()),
                    ("claims", count()),
                    ("edges", count()),
                    ("dropped", count()),
                    ("superseded", count()),
                ],
            ),
        ),
        (
            "IngestReceipt",
            fields(
                "An ingested message and where its extraction stands.",
                &[
                    ("event_id", uuid()),
                    ("node_id", uuid()),
                    ("created", boolean()),
                    ("status", one_of(&["pending", "running", "complete", "failed"])),
                    ("derivation", nullable(r("DerivationSummary"))),
                    ("error", opt_string()),
                ],
            ),
        ),
        (
            "IngestBatchReceipts",
            fields(
                "One receipt per message, in input order.",
                &[("receipts", array(r("IngestReceipt")))],
            ),
        ),
        (
            "WorkItem",
            fields(
                "An event's extraction work.",
                &[
                    ("event_id", uuid()),
                    ("owner_id", string()),
                    ("scope", string()),
                    ("status", one_of(&["pending", "running", "complete", "failed"])),
                    ("attempts", count()),
                    ("reason_code", opt_string()),
                    ("last_error", opt_string()),
                    ("lease_until_ms", opt_count()),
                    ("options", object()),
                    ("created_at", time()),
                    ("updated_at", time()),
                ],
            ),
        ),
        (
            "WorkReport",
            fields(
                "An ingested event's work item, what it derived, what grounding dropped, and its journal kinds.",
                &[
                    ("item", r("WorkItem")),
                    ("derivation", nullable(r("DerivationSummary"))),
                    ("dropped", array(object())),
                    ("journal", array(string())),
                ],
            ),
        ),
        (
            "EventPage",
            fields(
                "A page of events in ingestion order.",
                &[("events", array(r("Event"))), ("next_after", opt_count())],
            ),
        ),
        (
            "NodePage",
            fields(
                "A page of nodes.",
                &[("nodes", array(r("StoredNode"))), ("next_after", opt_count())],
            ),
        ),
        (
            "NodeView",
            fields(
                "A node with the messages it came from, its edges and the nodes at their other ends.",
                &[
                    ("node", r("Node")),
                    ("provenance", array(r("Event"))),
                    ("edges", array(r("Edge"))),
                    ("neighbours", array(r("Node"))),
                    ("truncated", boolean()),
                ],
            ),
        ),
        (
            "PathReport",
            fields(
                "One shortest path between two nodes.",
                &[
                    ("from", r("Node")),
                    ("to", uuid()),
                    (
                        "steps",
                        array(fields(
                            "One edge of the path and the node it leads to.",
                            &[("edge", r("Edge")), ("node", r("Node"))],
                        )),
                    ),
                    ("found", boolean()),
                    ("include_unverified_aliases", boolean()),
                    ("skipped_proposals", count()),
                    ("truncated", boolean()),
                ],
            ),
        ),
        (
            "SearchHit",
            fields(
                "One BM25 result.",
                &[
                    ("rank", count()),
                    ("score", number()),
                    ("node_id", uuid()),
                    ("node_type", string()),
                    ("scope", string()),
                    ("content", string()),
                    ("provenance", r("Provenance")),
                ],
            ),
        ),
        ("SearchHits", array(r("SearchHit"))),
        (
            "Trace",
            fields(
                "Why a result ranks where it does.",
                &[
                    (
                        "paths",
                        array(with_optional(
                            fields(
                                "A candidate path that found it: its rank there, the \
                                 path's own score (null for a path without one: graph, \
                                 neighbour, hop, current), and what led there.",
                                &[
                                    ("path", string()),
                                    ("rank", count()),
                                    ("score", nullable(number())),
                                ],
                            ),
                            &[("via", string())],
                        )),
                    ),
                    ("rrf", number()),
                    ("boosts", array(object())),
                    ("score", number()),
                ],
            ),
        ),
        (
            "RetrievedItem",
            fields(
                "One ranked result of a full retrieval.",
                &[
                    ("rank", count()),
                    ("node_id", uuid()),
                    ("node_type", string()),
                    ("scope", string()),
                    ("content", string()),
                    ("provenance", r("Provenance")),
                    ("also", uuids()),
                    ("trace", r("Trace")),
                ],
            ),
        ),
        (
            "Retrieval",
            fields(
                "A full retrieval (`detail: full`, the default over HTTP).",
                &[
                    ("request_id", uuid()),
                    ("recorded", boolean()),
                    ("query", string()),
                    ("results", array(r("RetrievedItem"))),
                    ("context", string()),
                    ("tokens", count()),
                    ("token_budget", count()),
                    ("tokenizer", string()),
                    (
                        "packed",
                        array(fields(
                            "One line of the packed context.",
                            &[
                                ("node_id", uuid()),
                                ("event_id", uuid()),
                                ("text", string()),
                                ("tokens", count()),
                                ("truncated", boolean()),
                                ("folded", uuids()),
                            ],
                        )),
                    ),
                    ("left_out", uuids()),
                    ("embedding_model", opt_string()),
                    (
                        "timings",
                        fields(
                            "Milliseconds per stage.",
                            &[
                                ("embed_ms", number()),
                                ("search_ms", number()),
                                ("pack_ms", number()),
                                ("record_ms", number()),
                                ("total_ms", number()),
                            ],
                        ),
                    ),
                ],
            ),
        ),
        (
            "RetrieveAnswer",
            json!({"description": "A full retrieval, or its compact form with `detail: compact`.",
                   "anyOf": [r("Retrieval"), r("CompactRetrieval")]}),
        ),
        (
            "Stats",
            fields(
                "The owner's counts, and its notes waiting for a vector.",
                &[
                    ("events", count()),
                    (
                        "nodes_by_type",
                        array(json!({"type": "array", "description": "[node type, count]",
                                     "prefixItems": [string(), count()],
                                     "minItems": 2, "maxItems": 2})),
                    ),
                    ("edges", count()),
                    ("operations", count()),
                    ("owners", count()),
                    ("sessions", count()),
                    ("embedding_backlog", count()),
                ],
            ),
        ),
        (
            "JournalPage",
            fields(
                "A page of journal records, oldest first.",
                &[("records", array(r("Operation"))), ("next_after", opt_uuid())],
            ),
        ),
        (
            "JobReport",
            fields(
                "What one organizer job did.",
                &[
                    ("job", one_of(&["deduplicate", "alias_resolve"])),
                    ("merge_policy", string()),
                    ("candidates", count()),
                    ("merges", array(object())),
                    ("proposals", array(object())),
                    ("not_applied", array(object())),
                    ("not_applied_total", count()),
                    ("budget_exhausted", boolean()),
                    ("unchanged", boolean()),
                ],
            ),
        ),
        (
            "OrganizeReport",
            fields(
                "The organizer's report.",
                &[
                    ("owner", string()),
                    ("jobs", array(r("JobReport"))),
                    ("duration_ms", number()),
                ],
            ),
        ),
        (
            "AliasProposal",
            fields(
                "A proposal that two entities are one.",
                &[
                    ("op_id", uuid()),
                    ("a", uuid()),
                    ("b", uuid()),
                    ("a_name", string()),
                    ("b_name", string()),
                    ("score", number()),
                    ("edge_id", uuid()),
                    ("status", one_of(&["pending", "accepted", "rejected"])),
                    ("review_op_id", opt_uuid()),
                    ("created_at", time()),
                    ("format", string()),
                    ("assessment", opt_object()),
                ],
            ),
        ),
        (
            "AliasPage",
            fields(
                "A page of alias proposals, oldest first.",
                &[("proposals", array(r("AliasProposal"))), ("next_after", opt_uuid())],
            ),
        ),
        (
            "ProposeOutcome",
            fields(
                "The proposal's record (the first one when the pair was proposed before).",
                &[
                    ("op_id", opt_uuid()),
                    ("edge_id", uuid()),
                    ("created", boolean()),
                    ("format", opt_string()),
                    ("assessment", opt_object()),
                    ("status", one_of(&["pending", "accepted", "rejected"])),
                ],
            ),
        ),
        (
            "ReviewOutcome",
            fields(
                "A proposal's decision record.",
                &[
                    ("review_op_id", uuid()),
                    ("decision", one_of(&["accept", "reject"])),
                    ("edge_id", opt_uuid()),
                    ("replayed", boolean()),
                ],
            ),
        ),
        (
            "UndoReport",
            fields(
                "What an undo restored.",
                &[
                    ("undo_op_id", uuid()),
                    ("undone_op_id", uuid()),
                    ("undone_kind", string()),
                    ("restored_nodes", uuids()),
                    ("removed_edges", uuids()),
                    ("replayed", boolean()),
                ],
            ),
        ),
        (
            "CorrectionReport",
            fields(
                "What a correction moved.",
                &[
                    ("op_id", uuid()),
                    ("target", uuid()),
                    ("created_target", boolean()),
                    ("moved_claims", uuids()),
                    ("closed_edges", uuids()),
                    ("opened_edges", uuids()),
                    ("replayed", boolean()),
                ],
            ),
        ),
        (
            "ClaimFact",
            fields(
                "A claim of an entity, as the facts view shows it.",
                &[
                    ("id", uuid()),
                    ("subject_id", uuid()),
                    ("subject", string()),
                    ("predicate", opt_string()),
                    ("object", opt_string()),
                    ("polarity", opt_string()),
                    ("epistemic_type", string()),
                    ("condition", opt_string()),
                    ("reported", opt_object()),
                    ("content", string()),
                    ("lifecycle", one_of(LIFECYCLES)),
                    ("current", boolean()),
                    ("valid_from", time()),
                    ("valid_to", opt_time()),
                    ("event_time", opt_time()),
                    ("evidence_quote", opt_string()),
                    ("evidence", uuids()),
                    ("superseded_by", opt_uuid()),
                    ("edited", opt_object()),
                ],
            ),
        ),
        ("ClaimFacts", array(r("ClaimFact"))),
        (
            "ClaimEditReport",
            fields(
                "A claim's retraction or correction record.",
                &[
                    ("op_id", uuid()),
                    ("kind", one_of(&["CLAIM_RETRACTED", "CLAIM_CORRECTED"])),
                    ("claim", uuid()),
                    ("replacement", opt_uuid()),
                    ("replayed", boolean()),
                ],
            ),
        ),
        (
            "ForgetReport",
            with_optional(
                fields(
                    "What a forget erased, compacted and verified.",
                    &[
                        ("dry_run", boolean()),
                        ("operation_id", opt_uuid()),
                        ("events", uuids()),
                        ("already_forgotten", uuids()),
                        ("nodes_deleted", uuids()),
                        ("nodes_updated", uuids()),
                        ("edges_deleted", count()),
                        ("vectors_deleted", count()),
                        ("notes_reembedded", uuids()),
                        ("work_items_deleted", count()),
                        ("journal_records_scrubbed", uuids()),
                        ("compaction", array(string())),
                        ("verification", opt_object()),
                    ],
                ),
                &[("compacted", boolean())],
            ),
        ),
        (
            "OpenApiDocument",
            json!({"type": "object", "description": "This OpenAPI 3.1 document.",
                   "required": ["openapi", "info", "paths"]}),
        ),
    ]
}

/// Every route's `operationId` (the function name a generated client
/// gives it) and the component its success answer follows (`None`: the
/// route's own annotation already names a typed body).
pub const OPERATIONS: &[(&str, &str, &str, Option<&str>)] = &[
    ("get", "/v1/health", "health", None),
    ("get", "/v1/stats", "stats", Some("Stats")),
    ("get", "/metrics", "metrics", None),
    ("get", "/openapi.json", "openapi", Some("OpenApiDocument")),
    ("post", "/v1/events", "store_event", None),
    ("post", "/v1/events/batch", "store_events", None),
    ("post", "/v1/ingest", "ingest", Some("IngestReceipt")),
    (
        "post",
        "/v1/ingest/batch",
        "ingest_batch",
        Some("IngestBatchReceipts"),
    ),
    ("get", "/v1/events", "list_events", Some("EventPage")),
    ("get", "/v1/events/{id}", "get_event", Some("Event")),
    (
        "get",
        "/v1/events/{id}/status",
        "get_event_status",
        Some("WorkReport"),
    ),
    (
        "delete",
        "/v1/events/{id}",
        "forget_event",
        Some("ForgetReport"),
    ),
    (
        "delete",
        "/v1/sessions/{id}",
        "forget_session",
        Some("ForgetReport"),
    ),
    ("delete", "/v1/owner", "forget_owner", Some("ForgetReport")),
    ("post", "/v1/retrieve", "retrieve", Some("RetrieveAnswer")),
    (
        "get",
        "/v1/retrievals/{id}",
        "get_retrieval",
        Some("Operation"),
    ),
    ("post", "/v1/search", "search", Some("SearchHits")),
    ("get", "/v1/nodes", "list_nodes", Some("NodePage")),
    ("get", "/v1/nodes/{id}", "get_node", Some("NodeView")),
    ("get", "/v1/path", "find_path", Some("PathReport")),
    ("post", "/v1/organize", "organize", Some("OrganizeReport")),
    (
        "get",
        "/v1/aliases",
        "list_alias_proposals",
        Some("AliasPage"),
    ),
    (
        "post",
        "/v1/aliases",
        "propose_alias",
        Some("ProposeOutcome"),
    ),
    (
        "post",
        "/v1/aliases/{op}/review",
        "review_alias_proposal",
        Some("ReviewOutcome"),
    ),
    ("post", "/v1/undo/{op}", "undo", Some("UndoReport")),
    (
        "post",
        "/v1/corrections",
        "correct_identity",
        Some("CorrectionReport"),
    ),
    ("get", "/v1/journal", "list_journal", Some("JournalPage")),
    ("get", "/v1/claims", "list_claims", Some("ClaimFacts")),
    (
        "post",
        "/v1/claims/{id}/retract",
        "retract_claim",
        Some("ClaimEditReport"),
    ),
    (
        "post",
        "/v1/claims/{id}/correct",
        "correct_claim",
        Some("ClaimEditReport"),
    ),
];
