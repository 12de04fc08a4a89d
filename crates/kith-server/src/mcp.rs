//! `kith mcp`: the Model Context Protocol over stdio (the official `rmcp`
//! SDK). One owner per process, fixed at start-up (`KITH_MCP_OWNER`): a
//! tool call cannot name another.
//!
//! Tools: `memory_store`, `memory_ingest`, `memory_retrieve`,
//! `memory_get_node`, and the organizer's `memory_organize`,
//! `memory_list_alias_proposals`, `memory_review_alias_proposal`,
//! `memory_undo`, and `memory_list_claims`, `memory_retract_claim`,
//! `memory_correct_claim`. Inputs are the HTTP API's request bodies (same
//! fields, same validation); outputs are the HTTP API's JSON responses as
//! text. A refused call is a tool error (`isError: true`) whose text is
//! `code: message`, so the model can read and correct it.

use std::sync::Arc;

use kith::{Memory, OwnerId};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::auth::Owner;
use crate::dto::{
    AliasListQuery, ClaimsQuery, CorrectClaimBody, CorrectionBody, DecisionName, ForgetBody,
    IngestBody, MessageBody, OrganizeBody, PathQuery, ProposeBody, RetractClaimBody, RetrieveBody,
    ReviewBody,
};
use crate::error::ApiError;
use crate::ServerError;

/// The MCP server: a memory and the one owner it acts for.
#[derive(Clone)]
pub struct KithMcp {
    memory: Arc<Memory>,
    owner: Owner,
    tool_router: ToolRouter<KithMcp>,
}

/// `memory_get_node`'s input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeIdParams {
    /// The node's id (a UUID from a store, ingest or retrieve result).
    pub node_id: String,
    /// Also follow unverified alias proposals to the entity at their other
    /// end (default false: a proposal is listed, not traversed).
    #[serde(default)]
    pub include_unverified_aliases: bool,
}

/// `memory_review_alias_proposal`'s input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewParams {
    /// The proposal's `op_id` (from `memory_list_alias_proposals` or a
    /// `memory_organize` report).
    pub proposal_id: String,
    /// `accept` (the two entities are the same) or `reject` (they are not).
    pub decision: DecisionName,
    /// Why (required to reject).
    #[serde(default)]
    pub reason: Option<String>,
    /// Who decided (kept in the decision record).
    #[serde(default)]
    pub reviewer: Option<String>,
}

/// `memory_retract_claim`'s input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetractClaimParams {
    /// The claim (from `memory_list_claims`).
    pub claim_id: String,
    /// Why (required; kept in the journal record).
    pub reason: String,
}

/// `memory_correct_claim`'s input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectClaimParams {
    /// The claim (from `memory_list_claims`).
    pub claim_id: String,
    /// The right value.
    pub object: String,
    /// Why (required; kept in the journal record).
    pub reason: String,
}

/// `memory_undo`'s input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoParams {
    /// The record to undo: a merge's `op_id` or an accepted review's
    /// `review_op_id`.
    pub op_id: String,
}

fn parse_id(field: &str, raw: &str) -> Result<uuid::Uuid, String> {
    uuid::Uuid::parse_str(raw.trim())
        .map_err(|_| format!("invalid_input: {field} {raw:?} is not a UUID"))
}

/// What a tool answers: the JSON text, or `code: message`.
type ToolResult = Result<String, String>;

fn to_text<T: Serialize>(value: &T) -> ToolResult {
    serde_json::to_string_pretty(value).map_err(|e| format!("internal: {e}"))
}

fn refused(e: ApiError) -> String {
    format!("{}: {}", e.code, e.message)
}

#[tool_router]
impl KithMcp {
    /// A server for `owner`'s memory.
    pub fn new(memory: Arc<Memory>, owner: OwnerId) -> Self {
        KithMcp {
            memory,
            owner: Owner(owner),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs a facade call on the blocking pool (SQLite is synchronous).
    async fn run<T, F>(&self, f: F) -> ToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
    {
        let memory = Arc::clone(&self.memory);
        let result = tokio::task::spawn_blocking(move || f(&memory))
            .await
            .map_err(|e| format!("internal: the call's task failed: {e}"))?;
        match result {
            Ok(v) => to_text(&v),
            Err(e) => Err(refused(e)),
        }
    }

    #[tool(
        name = "memory_store",
        description = "Remember one message verbatim (no extraction). Returns {event_id, node_id, created}; the same source_id again returns the first ids."
    )]
    async fn memory_store(&self, Parameters(body): Parameters<MessageBody>) -> ToolResult {
        let input = body.into_input(&self.owner).map_err(refused)?;
        self.run(move |m| Ok(m.store(input)?)).await
    }

    #[tool(
        name = "memory_ingest",
        description = "Remember one message and extract the entities and claims it states (who is who, who said what). Returns the event id, its extraction status and what was derived."
    )]
    async fn memory_ingest(&self, Parameters(body): Parameters<IngestBody>) -> ToolResult {
        let (input, options) = body.into_parts(&self.owner).map_err(refused)?;
        self.run(move |m| Ok(m.ingest(input, options)?)).await
    }

    #[tool(
        name = "memory_retrieve",
        description = "Find what memory holds about a question: ranked evidence with provenance (who said it, when) and a context block packed into token_budget tokens, ready to paste into a prompt."
    )]
    async fn memory_retrieve(&self, Parameters(body): Parameters<RetrieveBody>) -> ToolResult {
        let req = body.into_request(&self.owner).map_err(refused)?;
        self.run(move |m| Ok(m.retrieve(&req)?)).await
    }

    #[tool(
        name = "memory_get_node",
        description = "Show one memory node (a note, entity or claim) with the messages it came from and its neighbours (an entity's claims, a claim's subject)."
    )]
    async fn memory_get_node(&self, Parameters(p): Parameters<NodeIdParams>) -> ToolResult {
        let id = parse_id("node_id", &p.node_id)?;
        let owner = self.owner.0.clone();
        let unverified = p.include_unverified_aliases;
        self.run(move |m| Ok(m.node_view_with(&owner, id, unverified)?))
            .await
    }

    #[tool(
        name = "memory_organize",
        description = "Tidy memory: merge exact duplicates and known name variants of one entity (JS/JavaScript, case variants), and propose semantic aliases for review (never merged without a decision). Synchronous; returns the report: merges with their op_id (undoable), proposals, and pairs left alone with the reason. candidates may hand in pairs of node ids with a score."
    )]
    async fn memory_organize(&self, Parameters(body): Parameters<OrganizeBody>) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::organize(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_list_alias_proposals",
        description = "List alias proposals (two entities that may be the same), oldest first, with status pending, accepted or rejected. Filter by status; page with limit and after (the previous page's next_after)."
    )]
    async fn memory_list_alias_proposals(
        &self,
        Parameters(q): Parameters<AliasListQuery>,
    ) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::alias_page(m, &owner, q))
            .await
    }

    #[tool(
        name = "memory_review_alias_proposal",
        description = "Decide an alias proposal once: accept (a verified alias link; nothing merges) or reject (needs a reason; never proposed again). The same decision again returns the first record; a different one is refused (review_conflict)."
    )]
    async fn memory_review_alias_proposal(
        &self,
        Parameters(p): Parameters<ReviewParams>,
    ) -> ToolResult {
        let id = parse_id("proposal_id", &p.proposal_id)?;
        let body = ReviewBody {
            decision: p.decision,
            reason: p.reason,
            reviewer: p.reviewer,
        };
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::review(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_propose_alias",
        description = "Propose two entities (node ids a and b) as possibly the same, with a score in [0, 1] and optionally a complete assessment (assessor_kind reviewer|model, assessor_id, verdict same|different|unsure, reasons). Nothing merges: the proposal waits for memory_review_alias_proposal. Asking again for the same pair returns the first record unchanged."
    )]
    async fn memory_propose_alias(&self, Parameters(body): Parameters<ProposeBody>) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::propose(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_path",
        description = "Find one shortest path (fewest links) between two memory nodes (ids from and to), up to max_hops (default 6). Unverified alias proposals are not followed unless include_unverified_aliases is true."
    )]
    async fn memory_path(&self, Parameters(q): Parameters<PathQuery>) -> ToolResult {
        let req = q.into_request().map_err(refused)?;
        let owner = self.owner.0.clone();
        self.run(move |m| Ok(m.path(&owner, &req)?)).await
    }

    #[tool(
        name = "memory_correct",
        description = "Correct who claims are about, by naming the evidence: move the given claims (rebind), or every claim of the entity grounded in the given events (split), from entity to an existing entity (to: its id) or to a new person (new_person: a name). A reason is required. Journaled as IDENTITY_CORRECTED (undo with memory_undo); the same request again returns the first record."
    )]
    async fn memory_correct(&self, Parameters(body): Parameters<CorrectionBody>) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::correct(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_forget",
        description = "Forget for good: exactly one of event_id, source_id, session_id, before (RFC 3339) or whole_owner, and a reason. Each event stays in the log as a tombstone (content, speaker, metadata erased); what was derived only from it goes; journal records quoting it are scrubbed; one FORGOTTEN record says what went. dry_run lists what would go and writes nothing. The report says what was compacted and verified."
    )]
    async fn memory_forget(&self, Parameters(body): Parameters<ForgetBody>) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::forget::forget_body(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_list_claims",
        description = "The facts view: the claims of the entities named subject (case-insensitive), current first, each with id, predicate, object, polarity, time and evidence quote. all: true also lists retracted and superseded ones."
    )]
    async fn memory_list_claims(&self, Parameters(q): Parameters<ClaimsQuery>) -> ToolResult {
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::claims::list(m, &owner, q))
            .await
    }

    #[tool(
        name = "memory_retract_claim",
        description = "Retract a claim extraction got wrong (claim_id from memory_list_claims) with a reason: it stops being current and is never retrieved again; the conversation stays. Journaled as CLAIM_RETRACTED (undo with memory_undo); the same request again returns the first record."
    )]
    async fn memory_retract_claim(
        &self,
        Parameters(p): Parameters<RetractClaimParams>,
    ) -> ToolResult {
        let id = parse_id("claim_id", &p.claim_id)?;
        let owner = self.owner.clone();
        let body = RetractClaimBody { reason: p.reason };
        self.run(move |m| crate::routes::claims::retract(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_correct_claim",
        description = "Correct a claim's value (claim_id from memory_list_claims): a new claim with object replaces it (same subject and evidence) and is what retrieval returns. A reason is required. Journaled as CLAIM_CORRECTED (undo with memory_undo); the same request again returns the first record."
    )]
    async fn memory_correct_claim(
        &self,
        Parameters(p): Parameters<CorrectClaimParams>,
    ) -> ToolResult {
        let id = parse_id("claim_id", &p.claim_id)?;
        let owner = self.owner.clone();
        let body = CorrectClaimBody {
            object: p.object,
            reason: p.reason,
        };
        self.run(move |m| crate::routes::claims::correct(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_undo",
        description = "Undo a merge (its op_id), an accepted alias (its review_op_id), a correction, or a claim's retraction or correction (its op_id) exactly as recorded. Refused (undo_refused, nothing written) when later changes depend on it."
    )]
    async fn memory_undo(&self, Parameters(p): Parameters<UndoParams>) -> ToolResult {
        let id = parse_id("op_id", &p.op_id)?;
        let owner = self.owner.clone();
        self.run(move |m| crate::routes::organize::undo(m, &owner, id))
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for KithMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("kith", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "kith is long-term memory. Store or ingest what the user tells you; call \
                 memory_retrieve before answering a question about the past.",
            )
    }
}

/// Serves MCP on stdin/stdout until the client closes the stream.
pub async fn serve_stdio(memory: Arc<Memory>, owner: OwnerId) -> Result<(), ServerError> {
    let service = KithMcp::new(memory, owner)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    Ok(())
}
