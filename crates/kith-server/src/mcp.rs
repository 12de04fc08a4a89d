//! `kith mcp`: the Model Context Protocol over stdio (the official `rmcp`
//! SDK). One owner per process, fixed at start-up (`KITH_MCP_OWNER`): a
//! tool call cannot name another.
//!
//! Tools: `memory_store`, `memory_ingest`, `memory_retrieve`,
//! `memory_get_node`. Inputs are the HTTP API's request bodies (same
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
use crate::dto::{IngestBody, MessageBody, RetrieveBody};
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
        let id = uuid::Uuid::parse_str(p.node_id.trim())
            .map_err(|_| format!("invalid_input: node_id {:?} is not a UUID", p.node_id))?;
        let owner = self.owner.0.clone();
        self.run(move |m| Ok(m.node_view(&owner, id)?)).await
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
