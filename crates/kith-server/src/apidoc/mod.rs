//! The OpenAPI document `/openapi.json` serves: what utoipa generates from
//! the routes' annotations (paths, parameters, typed request bodies), made
//! complete here:
//!
//! - every success answer gets its schema ([`responses`]: the facade's
//!   result types have no schema derive, so they are declared by hand);
//! - every operation gets its `operationId` from one table (unique, and
//!   the names generated clients use);
//! - every response gets a description (utoipa leaves an error response
//!   without one empty, which validators refuse).
//!
//! `tests/openapi.rs` checks the result: unique ids, described responses,
//! resolving `$ref`s, every served route documented, and every route's
//! real answers valid under its schema.

pub mod responses;

use serde_json::{json, Value};

/// What an error status means, for responses that do not say.
fn status_description(status: &str) -> &'static str {
    match status {
        "200" => "Success.",
        "201" => "Created.",
        "400" => "The body is not JSON (`invalid_json`).",
        "401" => "No key, an unknown key, or not `Bearer KEY` (`unauthorized`).",
        "403" => "The body's `owner_id` is not the request's owner (`forbidden`).",
        "404" => "No such id for this owner, or no such route (`not_found`).",
        "405" => "The route does not take this method (`method_not_allowed`).",
        "409" => {
            "Refused as a conflict, nothing written (`conflict`, or the organizer's \
             `review_conflict`, `stale_proposal`, `undo_refused`, `copy_conflict`, \
             `not_admitted`, `forgotten`)."
        }
        "413" => "The body is over 1 MiB (`payload_too_large`).",
        "415" => "The body is not `Content-Type: application/json` (`unsupported_media_type`).",
        "422" => {
            "Invalid input, nothing written (`invalid_input`, `reason_required`, \
             `invalid_assessment`)."
        }
        "503" => "The store stayed busy; retry (`busy`, with `Retry-After`).",
        _ => "See the error body's code (`corrupted`, `unsupported`, `internal`).",
    }
}

/// The finished document, from utoipa's.
pub fn finish(generated: &utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(generated).unwrap_or_else(|_| json!({}));
    if let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        for (name, schema) in responses::components() {
            schemas.insert(name.to_string(), schema);
        }
    }
    for (method, path, operation_id, answer) in responses::OPERATIONS {
        let pointer = format!("/paths/{}/{method}", escape_pointer(path));
        let Some(op) = doc.pointer_mut(&pointer) else {
            // A route the table names but the code does not: the test of
            // the document catches it.
            continue;
        };
        op["operationId"] = json!(operation_id);
        if let Some(name) = answer {
            if let Some(responses) = op["responses"].as_object_mut() {
                for (status, response) in responses.iter_mut() {
                    if status.starts_with('2') {
                        response["content"] = json!({
                            "application/json": {"schema": responses::r(name)}
                        });
                    }
                }
            }
        }
    }
    if let Some(paths) = doc["paths"].as_object_mut() {
        for op in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in op.values_mut() {
                let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                    continue;
                };
                for (status, response) in responses.iter_mut() {
                    let empty = response["description"].as_str().is_none_or(str::is_empty);
                    if empty {
                        response["description"] = json!(status_description(status));
                    }
                }
            }
        }
    }
    doc
}

/// A path as one JSON Pointer token (`/` → `~1`, `~` → `~0`).
fn escape_pointer(path: &str) -> String {
    path.replace('~', "~0").replace('/', "~1")
}
