//! The compact form of a retrieval: what a model needs to answer (the
//! packed context) and to cite (each result's id, speaker, time and score),
//! without traces, timings, packed-line bookkeeping or left-out lists. A
//! full retrieval of a 100-token context is about 6 KB of JSON; its compact
//! form is the context plus a few dozen bytes a result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How much of a retrieval to answer (`detail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Detail {
    /// The packed context, and per result its id, speaker, time and score.
    Compact,
    /// Everything: each result's content, provenance and trace, the packed
    /// lines, what was left out, timings.
    Full,
}

/// A retrieval in compact form.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct CompactRetrieval {
    /// The request id (the receipt's id when one was recorded:
    /// `GET /v1/retrievals/{id}` has the traces).
    pub request_id: String,
    /// The evidence packed into the token budget, one line a result: put
    /// this in the prompt.
    pub context: String,
    /// The context's size in cl100k_base tokens.
    pub tokens: usize,
    /// The budget it had.
    pub token_budget: usize,
    /// The ranked results.
    pub results: Vec<CompactResult>,
}

/// One result of a compact retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct CompactResult {
    /// 1-based rank.
    pub rank: usize,
    /// The node (for `memory_get_node`, `GET /v1/nodes/{id}`).
    pub node_id: String,
    /// The message it came from.
    pub event_id: String,
    /// `note`, `entity`, `claim`, …
    pub node_type: String,
    /// Who said it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// `user`, `participant`, `assistant`, `tool` or `system`.
    pub role: String,
    /// When it was said (RFC 3339; the ingestion time when the event time
    /// is unknown).
    pub time: String,
    /// The fused score (higher is better), rounded to 4 decimals.
    pub score: f64,
}

impl From<&kith::Retrieval> for CompactRetrieval {
    fn from(r: &kith::Retrieval) -> Self {
        CompactRetrieval {
            request_id: r.request_id.to_string(),
            context: r.context.clone(),
            tokens: r.tokens,
            token_budget: r.token_budget,
            results: r
                .results
                .iter()
                .map(|item| {
                    let p = &item.provenance;
                    CompactResult {
                        rank: item.rank,
                        node_id: item.node_id.to_string(),
                        event_id: p.event_id.to_string(),
                        node_type: item.node_type.as_str().to_string(),
                        speaker: p.speaker.clone(),
                        role: p.role.as_str().to_string(),
                        time: p.event_time.unwrap_or(p.ingested_at).to_string(),
                        // Rounded: the digits past the fourth carry no
                        // meaning a model can use, and cost tokens.
                        score: (item.trace.score * 10_000.0).round() / 10_000.0,
                    }
                })
                .collect(),
        }
    }
}
