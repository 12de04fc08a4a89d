//! `kith mcp`: the Model Context Protocol (the official `rmcp` SDK) over
//! stdio. One owner per process, fixed at start-up (`KITH_MCP_OWNER`): a
//! tool call cannot name another.
//!
//! Tools: `memory_store`, `memory_ingest`, `memory_retrieve`,
//! `memory_get_node`, the organizer's `memory_organize`,
//! `memory_list_alias_proposals`, `memory_review_alias_proposal`,
//! `memory_propose_alias`, `memory_undo`, `memory_path`, `memory_correct`,
//! `memory_forget`, and `memory_list_claims`, `memory_retract_claim`,
//! `memory_correct_claim`. Inputs are the HTTP API's request bodies (same
//! fields, same validation). Each tool declares an `outputSchema`
//! ([`schemas`]) and annotations (read-only, destructive, idempotent);
//! its answer is `structuredContent` with the same JSON as compact text.
//! `memory_retrieve` answers the compact form unless asked for
//! `detail: "full"`. A refused call is a tool error (`isError: true`)
//! whose text is `code: message`, so the model can read and correct it;
//! arguments that do not fit the schema are refused the same way
//! (`invalid_input: …`), and a memory that cannot be opened answers
//! `unavailable: …` ([`source`]).
//!
//! - [`args`]: arguments whose errors become refusals.
//! - [`schemas`]: the output schemas.
//! - [`source`]: the memory, opened lazily.
//! - [`stdio`]: line framing, with `-32700` for lines that are not JSON.

pub mod args;
pub mod http;
pub mod schemas;
pub mod source;
pub mod stdio;

use std::sync::Arc;

use kith::{Memory, OwnerId};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::auth::Owner;
use crate::compact::{CompactRetrieval, Detail};
use crate::dto::{
    AliasListQuery, ClaimsQuery, CorrectClaimBody, CorrectionBody, DecisionName, ForgetBody,
    IngestBody, MessageBody, OrganizeBody, PathQuery, ProposeBody, RetractClaimBody, RetrieveBody,
    ReviewBody,
};
use crate::error::ApiError;
use crate::ServerError;
use args::Args;
use source::MemorySource;

/// The MCP server: a memory, and the owner it acts for: fixed for a
/// stdio process, or each HTTP request's own (from its key).
#[derive(Clone)]
pub struct KithMcp {
    source: Arc<MemorySource>,
    owner: Option<Owner>,
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

/// What a tool answers: structured content (with the same JSON as text),
/// or the refusal `code: message`.
type ToolResult = Result<CallToolResult, String>;

/// The structured result for `value`, which must serialise to a JSON
/// object (MCP's `structuredContent` is one).
fn structured<T: Serialize>(value: &T) -> ToolResult {
    match serde_json::to_value(value) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(CallToolResult::structured(v)),
        Ok(other) => Err(format!(
            "internal: a tool answered {} instead of an object",
            json_kind(&other)
        )),
        Err(e) => Err(format!("internal: {e}")),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
        _ => "a scalar",
    }
}

fn refused(e: ApiError) -> String {
    format!("{}: {}", e.code, e.message)
}

/// `memory_list_claims`'s answer: the claims under a key, since structured
/// content is an object.
#[derive(Serialize)]
struct ClaimList {
    claims: Vec<kith::claims::ClaimFact>,
}

#[tool_router]
impl KithMcp {
    /// A server for `owner`'s memory.
    pub fn new(memory: Arc<Memory>, owner: OwnerId) -> Self {
        Self::with_source(MemorySource::open(memory), owner)
    }

    /// A server for `owner` whose memory comes from `source` (opened on
    /// the first call that needs it).
    pub fn with_source(source: MemorySource, owner: OwnerId) -> Self {
        KithMcp {
            source: Arc::new(source),
            owner: Some(Owner(owner)),
            tool_router: Self::tool_router(),
        }
    }

    /// A server behind `kith serve`'s `/mcp`: each call acts for the owner
    /// the auth middleware found for its HTTP request (the key's).
    pub fn per_request(memory: Arc<Memory>) -> Self {
        KithMcp {
            source: Arc::new(MemorySource::open(memory)),
            owner: None,
            tool_router: Self::tool_router(),
        }
    }

    /// The owner this call acts for.
    fn owner_for(&self, ctx: &RequestContext<RoleServer>) -> Result<Owner, String> {
        if let Some(owner) = &self.owner {
            return Ok(owner.clone());
        }
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Owner>())
            .cloned()
            // The auth middleware runs before every /mcp request; without
            // an owner nothing may be read or written.
            .ok_or_else(|| "unauthorized: this request has no owner".to_string())
    }

    /// Runs a facade call on the blocking pool (SQLite is synchronous)
    /// and answers its result as structured content.
    async fn run<T, F>(&self, f: F) -> ToolResult
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
    {
        let value = self.call(f).await?;
        structured(&value)
    }

    /// Runs a facade call on the blocking pool; the value, or the refusal.
    async fn call<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Memory) -> Result<T, ApiError> + Send + 'static,
    {
        let source = Arc::clone(&self.source);
        tokio::task::spawn_blocking(move || {
            let memory = source.get()?;
            f(&memory).map_err(refused)
        })
        .await
        .map_err(|e| format!("internal: the call's task failed: {e}"))?
    }

    #[tool(
        name = "memory_store",
        description = "Remember one message verbatim (no extraction). Returns {event_id, node_id, created}; the same source_id again returns the first ids.",
        output_schema = schemas::of("memory_store"),
        annotations(title = "Store a message", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn memory_store(
        &self,
        Parameters(args): Parameters<Args<MessageBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let input = args.get()?.into_input(&owner).map_err(refused)?;
        self.run(move |m| Ok(m.store(input)?)).await
    }

    #[tool(
        name = "memory_ingest",
        description = "Remember one message and extract the entities and claims it states (who is who, who said what). Returns the event id, its extraction status and what was derived.",
        output_schema = schemas::of("memory_ingest"),
        annotations(title = "Ingest a message", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn memory_ingest(
        &self,
        Parameters(args): Parameters<Args<IngestBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let (input, options) = args.get()?.into_parts(&owner).map_err(refused)?;
        self.run(move |m| Ok(m.ingest(input, options)?)).await
    }

    #[tool(
        name = "memory_retrieve",
        description = "Find what memory holds about a question. Returns context (the evidence packed into token_budget tokens, ready to paste into a prompt) and results (rank, node_id, event_id, speaker, role, time, score of each). detail: \"full\" also returns each result's content, provenance and ranking trace, and timings.",
        output_schema = schemas::of("memory_retrieve"),
        annotations(title = "Retrieve memories", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_retrieve(
        &self,
        Parameters(args): Parameters<Args<RetrieveBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let body = args.get()?;
        // A model pays for every byte it reads: compact unless asked.
        let detail = body.detail.unwrap_or(Detail::Compact);
        let req = body.into_request(&owner).map_err(refused)?;
        let r = self.call(move |m| Ok(m.retrieve(&req)?)).await?;
        match detail {
            Detail::Compact => structured(&CompactRetrieval::from(&r)),
            Detail::Full => structured(&r),
        }
    }

    #[tool(
        name = "memory_get_node",
        description = "Show one memory node (a note, entity or claim) with the messages it came from and its neighbours (an entity's claims, a claim's subject).",
        output_schema = schemas::of("memory_get_node"),
        annotations(title = "Show a node", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_get_node(
        &self,
        Parameters(args): Parameters<Args<NodeIdParams>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let p = args.get()?;
        let id = parse_id("node_id", &p.node_id)?;
        let owner = owner.0.clone();
        let unverified = p.include_unverified_aliases;
        self.run(move |m| Ok(m.node_view_with(&owner, id, unverified)?))
            .await
    }

    #[tool(
        name = "memory_organize",
        description = "Tidy memory: merge exact duplicates and known name variants of one entity (JS/JavaScript, case variants), and propose semantic aliases for review (never merged without a decision). Synchronous; returns the report: merges with their op_id (undoable), proposals, and pairs left alone with the reason. candidates may hand in pairs of node ids with a score.",
        output_schema = schemas::of("memory_organize"),
        annotations(title = "Organize memory", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_organize(
        &self,
        Parameters(args): Parameters<Args<OrganizeBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let body = args.get()?;
        let owner = owner.clone();
        self.run(move |m| crate::routes::organize::organize(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_list_alias_proposals",
        description = "List alias proposals (two entities that may be the same), oldest first, with status pending, accepted or rejected. Filter by status; page with limit and after (the previous page's next_after).",
        output_schema = schemas::of("memory_list_alias_proposals"),
        annotations(title = "List alias proposals", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_list_alias_proposals(
        &self,
        Parameters(args): Parameters<Args<AliasListQuery>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let q = args.get()?;
        let owner = owner.clone();
        self.run(move |m| crate::routes::organize::alias_page(m, &owner, q))
            .await
    }

    #[tool(
        name = "memory_review_alias_proposal",
        description = "Decide an alias proposal once: accept (a verified alias link; nothing merges) or reject (needs a reason; never proposed again). The same decision again returns the first record; a different one is refused (review_conflict).",
        output_schema = schemas::of("memory_review_alias_proposal"),
        annotations(title = "Review an alias proposal", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_review_alias_proposal(
        &self,
        Parameters(args): Parameters<Args<ReviewParams>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let p = args.get()?;
        let id = parse_id("proposal_id", &p.proposal_id)?;
        let body = ReviewBody {
            decision: p.decision,
            reason: p.reason,
            reviewer: p.reviewer,
        };
        let owner = owner.clone();
        self.run(move |m| crate::routes::organize::review(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_propose_alias",
        description = "Propose two entities (node ids a and b) as possibly the same, with a score in [0, 1] and optionally a complete assessment (assessor_kind reviewer|model, assessor_id, verdict same|different|unsure, reasons). Nothing merges: the proposal waits for memory_review_alias_proposal. Asking again for the same pair returns the first record unchanged.",
        output_schema = schemas::of("memory_propose_alias"),
        annotations(title = "Propose an alias", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_propose_alias(
        &self,
        Parameters(args): Parameters<Args<ProposeBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let body = args.get()?;
        let owner = owner.clone();
        self.run(move |m| crate::routes::organize::propose(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_path",
        description = "Find one shortest path (fewest links) between two memory nodes (ids from and to), up to max_hops (default 6). Unverified alias proposals are not followed unless include_unverified_aliases is true.",
        output_schema = schemas::of("memory_path"),
        annotations(title = "Find a path", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_path(
        &self,
        Parameters(args): Parameters<Args<PathQuery>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let req = args.get()?.into_request().map_err(refused)?;
        let owner = owner.0.clone();
        self.run(move |m| Ok(m.path(&owner, &req)?)).await
    }

    #[tool(
        name = "memory_correct",
        description = "Correct who claims are about, by naming the evidence: move the given claims (rebind), or every claim of the entity grounded in the given events (split), from entity to an existing entity (to: its id) or to a new person (new_person: a name). A reason is required. Journaled as IDENTITY_CORRECTED (undo with memory_undo); the same request again returns the first record.",
        output_schema = schemas::of("memory_correct"),
        annotations(title = "Correct who claims are about", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_correct(
        &self,
        Parameters(args): Parameters<Args<CorrectionBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let body = args.get()?;
        let owner = owner.clone();
        self.run(move |m| crate::routes::organize::correct(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_forget",
        description = "Forget for good: exactly one of event_id, source_id, session_id, before (RFC 3339) or whole_owner, and a reason. Each event stays in the log as a tombstone (content, speaker, metadata erased); what was derived only from it goes; journal records quoting it are scrubbed; one FORGOTTEN record says what went. dry_run lists what would go and writes nothing. The report says what was compacted and verified.",
        output_schema = schemas::of("memory_forget"),
        annotations(title = "Forget messages", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(
        &self,
        Parameters(args): Parameters<Args<ForgetBody>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let body = args.get()?;
        let owner = owner.clone();
        self.run(move |m| crate::routes::forget::forget_body(m, &owner, body))
            .await
    }

    #[tool(
        name = "memory_list_claims",
        description = "The facts view: {claims: [...]}, the claims of the entities named subject (case-insensitive), current first, each with id, predicate, object, polarity, time and evidence quote. all: true also lists retracted and superseded ones.",
        output_schema = schemas::of("memory_list_claims"),
        annotations(title = "List claims", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_list_claims(
        &self,
        Parameters(args): Parameters<Args<ClaimsQuery>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let q = args.get()?;
        let owner = owner.clone();
        self.run(move |m| {
            crate::routes::claims::list(m, &owner, q).map(|claims| ClaimList { claims })
        })
        .await
    }

    #[tool(
        name = "memory_retract_claim",
        description = "Retract a claim extraction got wrong (claim_id from memory_list_claims) with a reason: it stops being current and is never retrieved again; the conversation stays. Journaled as CLAIM_RETRACTED (undo with memory_undo); the same request again returns the first record.",
        output_schema = schemas::of("memory_retract_claim"),
        annotations(title = "Retract a claim", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_retract_claim(
        &self,
        Parameters(args): Parameters<Args<RetractClaimParams>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let p = args.get()?;
        let id = parse_id("claim_id", &p.claim_id)?;
        let owner = owner.clone();
        let body = RetractClaimBody { reason: p.reason };
        self.run(move |m| crate::routes::claims::retract(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_correct_claim",
        description = "Correct a claim's value (claim_id from memory_list_claims): a new claim with object replaces it (same subject and evidence) and is what retrieval returns. A reason is required. Journaled as CLAIM_CORRECTED (undo with memory_undo); the same request again returns the first record.",
        output_schema = schemas::of("memory_correct_claim"),
        annotations(title = "Correct a claim", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_correct_claim(
        &self,
        Parameters(args): Parameters<Args<CorrectClaimParams>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let p = args.get()?;
        let id = parse_id("claim_id", &p.claim_id)?;
        let owner = owner.clone();
        let body = CorrectClaimBody {
            object: p.object,
            reason: p.reason,
        };
        self.run(move |m| crate::routes::claims::correct(m, &owner, id, body))
            .await
    }

    #[tool(
        name = "memory_undo",
        description = "Undo a merge (its op_id), an accepted alias (its review_op_id), a correction, or a claim's retraction or correction (its op_id) exactly as recorded. Refused (undo_refused, nothing written) when later changes depend on it.",
        output_schema = schemas::of("memory_undo"),
        annotations(title = "Undo a change", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn memory_undo(
        &self,
        Parameters(args): Parameters<Args<UndoParams>>,
        ctx: RequestContext<RoleServer>,
    ) -> ToolResult {
        let owner = self.owner_for(&ctx)?;
        let p = args.get()?;
        let id = parse_id("op_id", &p.op_id)?;
        let owner = owner.clone();
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
pub async fn serve_stdio(source: MemorySource, owner: OwnerId) -> Result<(), ServerError> {
    let server = KithMcp::with_source(source, owner);
    let served = stdio::serve_lines(server.clone(), tokio::io::stdin(), tokio::io::stdout()).await;
    // The last reference to the memory goes on a blocking thread: closing a
    // PostgreSQL store blocks on the driver's own runtime, which panics on a
    // thread that drives this one.
    let _ = tokio::task::spawn_blocking(move || drop(server)).await;
    served
}
