//! The PostgreSQL backend: a shared server, pgvector for embeddings,
//! PostgreSQL full text search for lexical search.
//!
//! Connect with [`PgStore::connect`] and a libpq-style URL
//! (`postgres://user:password@host:5432/kith`); the schema is created or
//! migrated on connect ([`schema`]). The database needs the `vector`
//! extension available (created by the first migration, or beforehand by an
//! administrator when kith's role may not create extensions). TLS is not
//! supported yet: connect over a private network or a local socket.
//!
//! # Transactions
//!
//! - [`TxMode::Read`] is `REPEATABLE READ READ ONLY`: one snapshot for the
//!   whole transaction, as the trait asks; readers never block writers.
//! - [`TxMode::Write`] is `READ COMMITTED` after taking one transaction-level
//!   advisory lock ([`WRITE_LOCK_KEY`]), waiting at most [`BUSY_TIMEOUT`].
//!   Writers therefore run one at a time, exactly like SQLite's single
//!   writer, so every read-check-write sequence of the engine (leases, plan
//!   re-checks, "does this node exist yet") holds without serialization
//!   failures. `READ COMMITTED` (not `REPEATABLE READ`) because its
//!   statements take their snapshot *after* the lock is granted: a writer
//!   that waited sees what the previous writer committed. The cost is that
//!   writers of different owners queue too; a per-owner lock needs the
//!   owner at `begin`, which the trait does not give yet.
//! - A statement that fails aborts a PostgreSQL transaction. The expected
//!   failures (an id that exists) are detected without an error
//!   (`ON CONFLICT DO NOTHING`), so the transaction stays usable, as on
//!   SQLite. After any other failed statement the transaction refuses
//!   further work and [`Tx::commit`] reports it rather than silently rolling
//!   back.
//!
//! # Sequence numbers
//!
//! `seq` columns are identity columns. PostgreSQL hands out sequence values
//! at insert, not at commit, so two concurrent writers could commit seqs out
//! of order. Writers are serialised by the write lock, so in practice seqs do
//! follow commit order; what is guaranteed in any case is that paging
//! (`after_seq`) over data committed before the pages are read never skips a
//! row, which is how the engine pages (maintenance over committed data).
//! A reader that pages *while* a writer outside kith's lock commits could
//! miss that writer's rows.
//!
//! # Errors
//!
//! Serialization failures and deadlocks (SQLSTATE 40001, 40P01) and a lock
//! wait that timed out (55P03) are [`StoreErrorKind::Busy`] and say the
//! transaction can be retried; lost connections and resource exhaustion are
//! [`StoreErrorKind::Io`]; constraint violations (class 23, including the
//! append-only triggers) are [`StoreErrorKind::Conflict`]; data corruption
//! (XX001, XX002) is [`StoreErrorKind::Corrupted`].

mod batch;
pub mod hnsw;
mod joined;
pub mod pool;
mod rows;
pub mod schema;
mod search;
mod sql;
#[cfg(any(test, feature = "pg-testing"))]
pub mod testing;
mod together;
pub mod vectors;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kith_core::{
    Edge, Event, Node, NodeType, Operation, OperationKind, OwnerId, SourceId, Timestamp, Tombstone,
};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};
use uuid::Uuid;

pub use schema::SCHEMA_VERSION;
pub use search::OWNER_FIRST_BELOW;
pub use vectors::{VectorCache, VectorCacheMode};

use crate::{
    DeletedNodes, EmbeddingModelCount, EventQuery, ExpiryCheck, LexicalHit, LexicalQuery,
    NodeQuery, OperationQuery, OperationStamp, StatementLog, Stats, Store, StoreError,
    StoreErrorKind, StoredEvent, StoredNode, Tx, TxMode, VectorQuery, WorkItem, WorkQuery,
};
use search::PgVector;
use sql::{refs, Arg, Select};

/// How long a writer waits for another writer's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The advisory lock every write transaction holds (a fixed key: "kith" in
/// ASCII, then "w" for write).
pub const WRITE_LOCK_KEY: i64 = 0x6b69_7468_0000_0077;

/// The advisory lock migrations hold, so two processes opening a new
/// database at once apply each step once.
pub const MIGRATION_LOCK_KEY: i64 = 0x6b69_7468_0000_006d;

/// How a [`PgStore`] is configured beyond its URL: typed, so a program
/// passes it to [`PgStore::connect_with`] instead of setting environment
/// variables for the store to read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOptions {
    /// How vector searches are answered.
    pub vector_cache: VectorCacheMode,
    /// Cap on the vectors held in memory, in bytes.
    pub vector_cache_bytes: usize,
    /// Answer vector searches with pgvector's HNSW index ([`hnsw`]) instead
    /// of the paths `vector_cache` chooses. Opt-in; off by default.
    pub hnsw: bool,
    /// The HNSW walk's width (pgvector's `hnsw.ef_search`, 1 to 1,000;
    /// [`hnsw::DEFAULT_EF_SEARCH`] by default): used with `hnsw` only.
    pub hnsw_ef_search: u32,
    /// How long a read transaction's `ROLLBACK` may wait to travel with
    /// its connection's next statement (retrieval's receipt) before it is
    /// sent on its own ([`pool::DEFAULT_END_WAIT`] by default; [`pool`]).
    pub read_end_wait: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            vector_cache: VectorCacheMode::Background,
            vector_cache_bytes: vectors::DEFAULT_BUDGET_MB * 1024 * 1024,
            hnsw: false,
            hnsw_ef_search: hnsw::DEFAULT_EF_SEARCH,
            read_end_wait: pool::DEFAULT_END_WAIT,
        }
    }
}

impl PgOptions {
    /// The options `KITH_PG_VECTOR_CACHE`, `KITH_VECTOR_CACHE_MB`,
    /// `KITH_PG_VECTOR_INDEX` and `KITH_PG_HNSW_EF_SEARCH` set, the defaults
    /// for what they leave unset.
    pub fn from_env() -> Result<PgOptions, StoreError> {
        PgOptions::from_env_or(VectorCacheMode::Background)
    }

    /// [`PgOptions::from_env`] with `mode` when `KITH_PG_VECTOR_CACHE` is
    /// unset (a command picks its own default; a value the user set wins).
    pub fn from_env_or(mode: VectorCacheMode) -> Result<PgOptions, StoreError> {
        Ok(PgOptions {
            vector_cache: VectorCacheMode::from_env()?.unwrap_or(mode),
            vector_cache_bytes: VectorCache::budget_from_env()?,
            hnsw: hnsw::from_env()?,
            hnsw_ef_search: hnsw::ef_search_from_env()?.unwrap_or(hnsw::DEFAULT_EF_SEARCH),
            read_end_wait: pool::DEFAULT_END_WAIT,
        })
    }
}

/// A PostgreSQL-backed [`Store`]. Connections are pooled; each transaction
/// uses one connection for its whole life.
pub struct PgStore {
    config: postgres::Config,
    pool: pool::Pool,
    /// In-process copies of searched owners' vectors ([`vectors`]).
    vectors: Arc<Mutex<VectorCache>>,
    /// Lexical search's average node length and when it was sampled.
    avg_lexemes: Mutex<Option<(std::time::Instant, f64)>>,
    /// Round trips made, and statements recorded for tests.
    log: Arc<StatementLog>,
    /// Vector searches through pgvector's HNSW index (opt-in).
    hnsw: bool,
    /// The HNSW walk's width (`hnsw.ef_search`).
    hnsw_ef_search: u32,
}

/// A connection and its prepared statements.
struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
    /// When a read transaction on it ended without its `ROLLBACK` sent
    /// yet (sent with the connection's next statement: [`pool`]).
    end_due: Option<std::time::Instant>,
}

impl Conn {
    /// Runs `sql`, prepared once per connection (preparing is a round trip
    /// of its own, logged as one).
    fn query(
        &mut self,
        log: &StatementLog,
        sql: &str,
        args: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let statement = match self.statements.get(sql) {
            Some(s) => s.clone(),
            None => {
                log.sent(sql);
                let s = self.client.prepare(sql)?;
                self.statements.insert(sql.to_string(), s.clone());
                s
            }
        };
        log.sent(sql);
        self.client.query(&statement, args)
    }
}

impl PgStore {
    /// Connects to the database at `url`, creates or migrates its schema up
    /// to [`SCHEMA_VERSION`], and refuses a newer one with
    /// [`StoreErrorKind::TooNew`] (without touching it).
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        PgStore::connect_with(url, PgOptions::from_env()?)
    }

    /// [`PgStore::connect`] configured by `options` rather than the
    /// environment.
    pub fn connect_with(url: &str, options: PgOptions) -> Result<PgStore, StoreError> {
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            StoreError::new(StoreErrorKind::Other, format!("not a PostgreSQL URL ({e})"))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("kith");
        }
        let cache = VectorCache::new(options.vector_cache, options.vector_cache_bytes);
        let log = Arc::new(StatementLog::default());
        let store = PgStore {
            config,
            pool: pool::Pool::new(Arc::clone(&log), options.read_end_wait),
            vectors: Arc::new(Mutex::new(cache)),
            avg_lexemes: Mutex::new(None),
            log,
            hnsw: options.hnsw,
            hnsw_ef_search: options.hnsw_ef_search,
        };
        let mut conn = store.open_conn()?;
        migrate(&mut conn.client)?;
        store.release(conn);
        Ok(store)
    }

    /// How vector searches are answered (see [`vectors`]); `Off` drops
    /// every in-process copy.
    pub fn set_vector_cache(&self, mode: VectorCacheMode) {
        if let Ok(mut c) = self.vectors.lock() {
            c.set_mode(mode);
        }
    }

    /// The owners whose vectors are held in this process, and how many
    /// vectors each.
    pub fn vector_cache_owners(&self) -> Vec<(String, usize)> {
        self.vectors.lock().map_or_else(
            |_| Vec::new(),
            |c| {
                c.cached_owners()
                    .into_iter()
                    .map(|o| {
                        let n = c.cached_rows(&o);
                        (o, n)
                    })
                    .collect()
            },
        )
    }

    /// PostgreSQL's plan of the statement a lexical search for `q` runs
    /// (a query of at most 64 words, as retrieval asks), executed:
    /// `EXPLAIN (ANALYZE, BUFFERS)`, one line a row. For looking into a
    /// slow search; `None` when the query has no word to search.
    pub fn explain_lexical(&self, q: &LexicalQuery) -> Result<Option<Vec<String>>, StoreError> {
        let words = crate::words::query_words(&q.text);
        if words.is_empty() || words.len() > search::MAX_SCORED_WORDS {
            return Ok(None);
        }
        let mut conn = self.take()?;
        let plan = (|| {
            let avg: f64 = conn
                .client
                .query_one(search::AVG_LEXEMES_SQL, &[])
                .map_err(map_err)?
                .get(0);
            let (sql, args) = search::bm25_sql(q, &words, avg);
            let rows = conn
                .client
                .query(&format!("EXPLAIN (ANALYZE, BUFFERS) {sql}"), &refs(&args))
                .map_err(map_err)?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })();
        self.release(conn);
        plan.map(Some)
    }

    /// The schema version stored in the database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let mut conn = self.take()?;
        let v = read_version(&mut conn.client);
        self.release(conn);
        v
    }

    fn open_conn(&self) -> Result<Conn, StoreError> {
        let client = self.config.connect(NoTls).map_err(|e| {
            let host = self
                .config
                .get_hosts()
                .first()
                .map(|h| match h {
                    postgres::config::Host::Tcp(name) => name.clone(),
                    postgres::config::Host::Unix(path) => path.display().to_string(),
                })
                .unwrap_or_default();
            map_err(e).context(&format!("cannot connect to PostgreSQL at {host}"))
        })?;
        Ok(Conn {
            client,
            statements: HashMap::new(),
            end_due: None,
        })
    }

    /// A connection outside any transaction: pooled (a deferred end sent
    /// first, on its own), else new.
    fn take(&self) -> Result<Conn, StoreError> {
        match self.pool.take_unsettled() {
            Some(mut c) => match c.settle(&self.log) {
                Ok(()) => Ok(c),
                // In an unknown state: dropped, and a new one opened.
                Err(_) => self.open_conn(),
            },
            None => self.open_conn(),
        }
    }

    /// A pooled connection whose deferred end, if any, is still due: the
    /// caller sends [`Conn::end_prefix`] before its first statement.
    fn take_unsettled(&self) -> Result<Conn, StoreError> {
        match self.pool.take_unsettled() {
            Some(c) => Ok(c),
            None => self.open_conn(),
        }
    }

    fn release(&self, conn: Conn) {
        self.pool.release(conn);
    }
}

/// `url` with its database replaced by `name`: a URL's path, or a
/// `dbname=` appended to a key-value string (the last one wins).
pub fn with_dbname(url: &str, name: &str) -> String {
    for scheme in ["postgres://", "postgresql://"] {
        if let Some(rest) = url.strip_prefix(scheme) {
            let (main, query) = match rest.find('?') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let authority = main.split('/').next().unwrap_or(main);
            return format!("{scheme}{authority}/{name}{query}");
        }
    }
    format!("{url} dbname={name}")
}

/// Creates the empty database `name` on the server of `url` (whose role
/// needs `CREATEDB`), dropping one of that name first when `replace`, and
/// returns its URL. For benchmarks and scratch memories; kith's schema is
/// made by the first [`PgStore::connect`].
pub fn create_database(url: &str, name: &str, replace: bool) -> Result<String, StoreError> {
    let ident = quote_ident(name)?;
    let mut client = postgres::Client::connect(url, NoTls).map_err(map_err)?;
    if replace {
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {ident} WITH (FORCE)"))
            .map_err(|e| map_err(e).context(&format!("drop database {name}")))?;
    }
    client
        .batch_execute(&format!("CREATE DATABASE {ident}"))
        .map_err(|e| map_err(e).context(&format!("create database {name}")))?;
    Ok(with_dbname(url, name))
}

/// Refreshes the planner's statistics of the database at `url` (`ANALYZE`),
/// as autovacuum does a while after a bulk load. Lexical search reads word
/// frequencies from them; benchmarks call this after loading so they
/// measure the steady state rather than the minute after an import.
pub fn analyze(url: &str) -> Result<(), StoreError> {
    let mut client = postgres::Client::connect(url, NoTls).map_err(map_err)?;
    client
        .batch_execute("ANALYZE")
        .map_err(|e| map_err(e).context("analyze"))
}

/// Drops database `name` on the server of `url` (ending its connections),
/// if it exists.
pub fn drop_database(url: &str, name: &str) -> Result<(), StoreError> {
    let ident = quote_ident(name)?;
    let mut client = postgres::Client::connect(url, NoTls).map_err(map_err)?;
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {ident} WITH (FORCE)"))
        .map_err(|e| map_err(e).context(&format!("drop database {name}")))
}

/// `name` as a quoted identifier; only letters, digits and `_` are taken,
/// so no quoting rule can be got wrong.
fn quote_ident(name: &str) -> Result<String, StoreError> {
    if !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        Ok(format!("\"{name}\""))
    } else {
        Err(StoreError::new(
            StoreErrorKind::Other,
            format!("database name {name:?} must be 1-63 letters, digits or _"),
        ))
    }
}

fn read_version(client: &mut Client) -> Result<i64, StoreError> {
    let exists: bool = client
        .query_one("SELECT to_regclass('kith_meta') IS NOT NULL", &[])
        .map_err(map_err)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client
        .query_opt(
            "SELECT value FROM kith_meta WHERE key = 'schema_version'",
            &[],
        )
        .map_err(map_err)?;
    match row {
        None => Ok(0),
        Some(r) => {
            let text: String = r.get(0);
            text.parse().map_err(|_| {
                StoreError::corrupted(format!(
                    "kith_meta.schema_version is {text:?}, not a number"
                ))
            })
        }
    }
}

/// Applies missing migrations in one transaction under
/// [`MIGRATION_LOCK_KEY`]; the version is re-read under the lock, so
/// concurrent openers apply each step once.
fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let current = read_version(client)?;
    if current > SCHEMA_VERSION {
        return Err(too_new(current));
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    client
        .batch_execute(&format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED;
             SET LOCAL lock_timeout = '{}s';
             SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY});",
            BUSY_TIMEOUT.as_secs()
        ))
        .map_err(map_err)?;
    let result = (|| {
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS kith_meta (
                     key   text PRIMARY KEY,
                     value text NOT NULL
                 )",
            )
            .map_err(map_err)?;
        let current = read_version(client)?;
        if current > SCHEMA_VERSION {
            return Err(too_new(current));
        }
        let vector = pgvector_state(client)?;
        if current == 0 && !vector.installed && !vector.available {
            return Err(StoreError::new(StoreErrorKind::Other, PGVECTOR_MISSING));
        }
        for (i, step) in schema::MIGRATIONS.iter().enumerate().skip(current as usize) {
            client.batch_execute(step).map_err(|e| {
                let err = map_err(e);
                // The first step creates the extension; a role that may not
                // create it fails here with a permission error.
                let err = if i == 0 && !vector.installed {
                    StoreError::new(err.kind(), format!("{}; {PGVECTOR_CREATE}", err.message()))
                } else {
                    err
                };
                err.context(&format!("schema migration to version {}", i + 1))
            })?;
        }
        client
            .execute(
                "INSERT INTO kith_meta (key, value) VALUES ('schema_version', $1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&SCHEMA_VERSION.to_string()],
            )
            .map_err(map_err)?;
        Ok(())
    })();
    match result {
        Ok(()) => client
            .batch_execute("COMMIT")
            .map_err(|e| map_err(e).context("commit the schema migration")),
        Err(e) => {
            let _ = client.batch_execute("ROLLBACK");
            Err(e)
        }
    }
}

/// Said when the server has no pgvector at all.
pub const PGVECTOR_MISSING: &str = "the PostgreSQL server has no pgvector extension (kith keeps \
     its vectors in it); install it on the database server (Debian/Ubuntu with the PGDG \
     repository: `apt install postgresql-16-pgvector`; Docker: the `pgvector/pgvector:pg16` \
     image; from source: https://github.com/pgvector/pgvector), then connect again: kith runs \
     `CREATE EXTENSION vector` itself when its role may";

/// Said when pgvector is installed on the server but kith's role may not
/// create the extension in its database.
pub const PGVECTOR_CREATE: &str = "pgvector is installed on the server but not enabled in this \
     database, and kith's role may not enable it: ask a superuser to run \
     `CREATE EXTENSION vector;` in this database, then connect again";

/// Whether pgvector is enabled in the database, and whether the server has
/// it to enable.
struct PgvectorState {
    installed: bool,
    available: bool,
}

fn pgvector_state(client: &mut Client) -> Result<PgvectorState, StoreError> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
                    EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')",
            &[],
        )
        .map_err(map_err)?;
    Ok(PgvectorState {
        installed: row.get(0),
        available: row.get(1),
    })
}

fn too_new(found: i64) -> StoreError {
    StoreError::new(
        StoreErrorKind::TooNew,
        format!(
            "database schema version {found} is newer than this kith (reads 1–{SCHEMA_VERSION}); upgrade kith"
        ),
    )
}

impl Store for PgStore {
    fn backend_name(&self) -> &'static str {
        "postgres"
    }

    fn begin(&self, mode: TxMode) -> Result<Box<dyn Tx + '_>, StoreError> {
        // A deferred end travels with the first statement.
        let mut conn = self.take_unsettled()?;
        let sql = match mode {
            // A read transaction begins with its first statement (see
            // `PgTx::pending_begin`): nothing to send yet.
            TxMode::Read => {
                return Ok(Box::new(PgTx {
                    store: self,
                    conn: Some(conn),
                    mode,
                    failed: None,
                    pending_begin: Some(READ_BEGIN),
                    owner_has_entities: None,
                }))
            }
            TxMode::Write => format!(
                "{}BEGIN ISOLATION LEVEL READ COMMITTED;
                 SET LOCAL lock_timeout = '{}s';
                 SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY});
                 SET LOCAL lock_timeout = 0;",
                conn.end_prefix(),
                BUSY_TIMEOUT.as_secs()
            ),
        };
        self.log.sent(&sql);
        if let Err(e) = conn.client.batch_execute(&sql) {
            let err = map_err(e);
            // The connection may sit in an aborted transaction; close it.
            if conn.client.batch_execute("ROLLBACK").is_ok() {
                self.release(conn);
            }
            return Err(err.context("begin a transaction"));
        }
        Ok(Box::new(PgTx {
            store: self,
            conn: Some(conn),
            mode,
            failed: None,
            pending_begin: None,
            owner_has_entities: None,
        }))
    }

    fn compact(&self) -> Result<Vec<String>, StoreError> {
        // VACUUM cannot run inside a transaction block: a pooled connection
        // between transactions is outside one.
        let mut conn = self.take()?;
        let result = conn
            .client
            .batch_execute(
                "VACUUM (ANALYZE) events, nodes, edges, operations, embeddings, work_items",
            )
            .map_err(|e| map_err(e).context("vacuum after forgetting"));
        self.release(conn);
        result?;
        Ok(vec![
            "VACUUM (ANALYZE) of events, nodes, edges, operations, embeddings, work_items".into(),
        ])
    }

    fn statement_log(&self) -> Option<&StatementLog> {
        Some(&self.log)
    }

    fn append_unless_expiring(
        &self,
        op: &Operation,
        check: &ExpiryCheck,
    ) -> Result<bool, StoreError> {
        // One statement outside a transaction block is a transaction of
        // its own: lock, checks, insert and generation bump commit
        // together, or not at all (schema step 4). It travels in the simple
        // protocol, its values written as literals, so that the deferred
        // end of the read transaction before it (retrieval's) goes in the
        // same round trip: `ROLLBACK; SELECT …` ends that transaction, then
        // runs the call in a transaction of its own.
        let keep = check.keep.map(|k| i64::try_from(k).unwrap_or(i64::MAX));
        let scan = i32::try_from(check.scan).unwrap_or(i32::MAX);
        let int = |n: Option<i64>| n.map_or_else(|| "NULL".to_string(), |n| n.to_string());
        let call = format!(
            "SELECT kith_append_unless_expiring({lock}::bigint, {wait}, {id}::uuid, {kind}, \
             {owner}, {scope}, {target}::uuid, {payload}, {created}, {checksum}, \
             {keep}::bigint, {cutoff}::bigint, {scan}::integer, {generation})",
            lock = WRITE_LOCK_KEY,
            wait = sql::literal(&format!("{}s", BUSY_TIMEOUT.as_secs())),
            id = sql::literal(&op.id.to_string()),
            kind = sql::literal(op.kind.as_str()),
            owner = sql::literal(op.owner_id.as_str()),
            scope = sql::literal(op.scope.as_str()),
            target = op
                .target_id
                .map_or_else(|| "NULL".to_string(), |t| sql::literal(&t.to_string())),
            payload = sql::literal(&kith_core::canon::to_canonical_string(&op.payload)),
            created = sql::literal(&op.created_at.to_rfc3339()),
            checksum = sql::literal(&op.checksum),
            keep = int(keep),
            cutoff = int(check.cutoff_ms),
            generation = sql::literal(crate::WRITE_GENERATION_KEY),
        );
        let mut conn = self.take_unsettled()?;
        let text = format!("{}{call}", conn.end_prefix());
        self.log.sent(&text);
        let result = conn.client.simple_query(&text);
        // A failed statement outside a block leaves the connection idle
        // (the message's implicit transaction is rolled back).
        self.release(conn);
        let rows = result.map_err(|e| map_err(e).context("journal a record"))?;
        let status = rows
            .iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => r.get(0),
                _ => None,
            })
            .unwrap_or("");
        match status {
            "appended" => Ok(true),
            "expiring" => Ok(false),
            "exists" => Err(operation_exists(op.id)),
            other => Err(StoreError::new(
                StoreErrorKind::Other,
                format!("kith_append_unless_expiring answered {other:?}"),
            )),
        }
    }
}

/// `list_session_events`'s statement and arguments: each session's first
/// `limit` events (0: all) through the (owner, session, seq) index, in the
/// order the sessions were given, numbered in that order (`rn`, for a
/// statement that wraps this one: SQL keeps no subquery's order).
fn session_events_sql(
    owner: &OwnerId,
    sessions: &[kith_core::SessionId],
    limit: usize,
) -> (String, Vec<Arg>) {
    let names: Vec<String> = sessions.iter().map(|s| s.as_str().to_string()).collect();
    let sql = format!(
        "SELECT e.*, row_number() OVER (ORDER BY s.ord, e.seq) AS rn
         FROM unnest($2::text[]) WITH ORDINALITY AS s(id, ord)
         CROSS JOIN LATERAL (
             SELECT {} FROM events
             WHERE owner_id = $1 AND session_id = s.id ORDER BY seq LIMIT $3
         ) e
         ORDER BY s.ord, e.seq",
        rows::EVENT_COLUMNS
    );
    // NULL: no limit.
    let limit = (limit > 0).then_some(limit as i64);
    let args: Vec<Arg> = vec![
        Box::new(owner.as_str().to_string()),
        Box::new(names),
        Box::new(limit),
    ];
    (sql, args)
}

/// How a read transaction begins: one snapshot for all its statements
/// (taken by the first of them, not by `BEGIN`).
const READ_BEGIN: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

struct PgTx<'a> {
    store: &'a PgStore,
    conn: Option<Conn>,
    mode: TxMode,
    /// The first error that aborted the transaction on the server.
    failed: Option<StoreError>,
    /// A read transaction's `BEGIN`, until it is sent: with the first
    /// statement, in the same round trip when that statement can travel
    /// with it (a batch without parameters, the vector copy's state); one
    /// that never sends a statement never begins, and ends with nothing to
    /// send. The snapshot is the first statement's either way.
    pending_begin: Option<&'static str>,
    /// Whether an owner holds any entity node, as a read transaction's
    /// snapshot sees it: read with the vector copy's state
    /// ([`vectors::state`]), so the entity search that follows needs no
    /// probe of its own ([`PgTx::has_nodes_to_search`]).
    owner_has_entities: Option<(OwnerId, bool)>,
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            if self.pending_begin.is_some() {
                // Never begun: nothing to undo (an earlier transaction's
                // deferred end stays due).
                self.store.release(conn);
                return;
            }
            if self.mode == TxMode::Read && self.failed.is_none() {
                // Nothing to undo: the ROLLBACK waits for the connection's
                // next statement ([`pool`]).
                conn.end_due = Some(std::time::Instant::now());
                self.store.release(conn);
                return;
            }
            // Not committed: undo everything. If even ROLLBACK fails the
            // connection is in an unknown state, so it is not reused.
            self.store.log.sent("ROLLBACK");
            if conn.client.batch_execute("ROLLBACK").is_ok() {
                self.store.release(conn);
            }
        }
    }
}

impl PgTx<'_> {
    /// Sets an edge's `valid_to` from open to `end` (close) or from closed
    /// to open (`None`); anything else is a conflict.
    fn set_edge_end(&mut self, id: Uuid, end: Option<Timestamp>) -> Result<(), StoreError> {
        self.writable()?;
        let sql = if end.is_some() {
            "UPDATE edges SET valid_to = $2 WHERE id = $1 AND valid_to IS NULL RETURNING seq"
        } else {
            "UPDATE edges SET valid_to = $2 WHERE id = $1 AND valid_to IS NOT NULL RETURNING seq"
        };
        let rows = self.query(sql, &[&id, &end.map(|t| t.to_rfc3339())])?;
        if !rows.is_empty() {
            return Ok(());
        }
        let exists = self.query("SELECT 1 FROM edges WHERE id = $1", &[&id])?;
        Err(if exists.is_empty() {
            not_found(format!("edge {id} does not exist"))
        } else {
            let state = if end.is_some() { "closed" } else { "open" };
            StoreError::new(
                StoreErrorKind::Conflict,
                format!("edge {id} is already {state}"),
            )
        })
    }

    /// Refuses writes in a read transaction (which is `READ ONLY` on the
    /// server too, but saying so here gives a clearer message).
    fn writable(&self) -> Result<(), StoreError> {
        match self.mode {
            TxMode::Write => Ok(()),
            TxMode::Read => Err(StoreError::new(
                StoreErrorKind::Other,
                "a read transaction cannot write; begin it with TxMode::Write",
            )),
        }
    }

    /// The entity search's probe ([`crate::has_nodes_to_search`]), answered
    /// without a round trip when this read transaction already knows
    /// whether the owner holds entities ([`PgTx::owner_has_entities`]): a
    /// search for entities alone finds none in any scope when the owner has
    /// none, and some when it has and the search is not limited to a scope.
    /// Any other search sends the probe.
    fn has_nodes_to_search(&mut self, q: &LexicalQuery) -> Result<bool, StoreError> {
        let types = &q.filters.node_types;
        let entities_only = !types.is_empty() && types.iter().all(|t| *t == NodeType::Entity);
        if let Some((owner, has)) = &self.owner_has_entities {
            if entities_only && *owner == q.owner && (!*has || q.filters.scope.is_none()) {
                return Ok(*has);
            }
        }
        crate::has_nodes_to_search(self, q)
    }

    /// Sends the pending `BEGIN` of a read transaction, if any, on its own.
    fn begin_now(&mut self) -> Result<(), StoreError> {
        let Some(begin) = self.pending_begin.take() else {
            return Ok(());
        };
        let conn = self.conn.as_mut().expect("transaction connection is live");
        let begin = format!("{}{begin}", conn.end_prefix());
        self.store.log.sent(&begin);
        conn.client.batch_execute(&begin).map_err(|e| {
            let err = map_err(e).context("begin a transaction");
            self.failed = Some(err.clone());
            err
        })
    }

    /// Runs `sql` (statements without parameters, ending with one query)
    /// after the pending `BEGIN`, if any, in one round trip with the simple
    /// protocol, and returns the query's rows as text.
    fn simple_query(&mut self, sql: &str) -> Result<Vec<postgres::SimpleQueryRow>, StoreError> {
        if let Some(err) = &self.failed {
            return Err(StoreError::new(
                err.kind(),
                format!("the transaction was aborted by an earlier error: {err}"),
            ));
        }
        let conn = self.conn.as_mut().expect("transaction connection is live");
        let text = match self.pending_begin.take() {
            Some(begin) => format!("{}{begin}; {sql}", conn.end_prefix()),
            None => sql.to_string(),
        };
        self.store.log.sent(&text);
        match conn.client.simple_query(&text) {
            Ok(messages) => Ok(messages
                .into_iter()
                .filter_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => Some(r),
                    _ => None,
                })
                .collect()),
            Err(e) => {
                let err = map_err(e);
                self.failed = Some(err.clone());
                Err(err)
            }
        }
    }

    /// Runs one statement and returns its rows. Statements are prepared
    /// once per connection. A failure marks the transaction as aborted.
    fn query(&mut self, sql: &str, args: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        if let Some(err) = &self.failed {
            return Err(StoreError::new(
                err.kind(),
                format!("the transaction was aborted by an earlier error: {err}"),
            ));
        }
        self.begin_now()?;
        let conn = self.conn.as_mut().expect("transaction connection is live");
        conn.query(&self.store.log, sql, args).map_err(|e| {
            let err = map_err(e);
            self.failed = Some(err.clone());
            err
        })
    }

    /// Runs statements without parameters or rows (settings) in one round
    /// trip. A failure marks the transaction as aborted.
    fn execute_batch(&mut self, sql: &str) -> Result<(), StoreError> {
        if let Some(err) = &self.failed {
            return Err(StoreError::new(
                err.kind(),
                format!("the transaction was aborted by an earlier error: {err}"),
            ));
        }
        // A pending `BEGIN` travels in the same batch.
        let conn = self.conn.as_mut().expect("transaction connection is live");
        let sql = match self.pending_begin.take() {
            Some(begin) => format!("{}{begin}; {sql}", conn.end_prefix()),
            None => sql.to_string(),
        };
        self.store.log.sent(&sql);
        conn.client.batch_execute(&sql).map_err(|e| {
            let err = map_err(e);
            self.failed = Some(err.clone());
            err
        })
    }

    /// [`PgTx::query`] with owned arguments from a [`Select`].
    fn query_args(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, StoreError> {
        self.query(sql, &refs(args))
    }

    /// Runs a statement and decodes each row.
    fn query_map<T>(
        &mut self,
        sql: &str,
        args: &[&(dyn ToSql + Sync)],
        decode: impl Fn(&Row) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        self.query(sql, args)?.iter().map(decode).collect()
    }

    /// The store's average lexemes per node for BM25, sampled at most once
    /// a minute per process (it drifts slowly; a window over every match
    /// cost 5 ms a query at 100k nodes).
    fn avg_lexemes(&mut self) -> Result<f64, StoreError> {
        let fresh = |at: &std::time::Instant| at.elapsed() < Duration::from_secs(60);
        if let Ok(cached) = self.store.avg_lexemes.lock() {
            if let Some((at, v)) = *cached {
                if fresh(&at) {
                    return Ok(v);
                }
            }
        }
        let rows = self.query(search::AVG_LEXEMES_SQL, &[])?;
        let v: f64 = rows.first().map_or(0.0, |r| r.get(0));
        if let Ok(mut cached) = self.store.avg_lexemes.lock() {
            *cached = Some((std::time::Instant::now(), v));
        }
        Ok(v)
    }

    /// The statement `list_nodes` runs for `q`, and its arguments.
    fn list_nodes_sql(&self, q: &NodeQuery) -> Result<(String, Vec<Arg>), StoreError> {
        let mut select = Select::new(format!("SELECT {} FROM nodes n", rows::NODE_COLUMNS));
        let after = select.arg(q.after_seq);
        select
            .push(&format!(" WHERE n.seq > {after}"))
            .eq("n.owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .eq("n.scope", q.scope.as_ref().map(|s| s.as_str()))
            .any("n.node_type", q.node_types.iter().map(|t| t.as_str()));
        if let Some(event) = q.event_id {
            let p = select.arg(event);
            select.and(&format!("n.source_event_id = {p}"));
        }
        if let Some(key) = &q.metadata_key {
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(StoreError::new(
                    StoreErrorKind::Other,
                    format!("metadata key {key:?} must be letters, digits and _"),
                ));
            }
            // `->` on an object gives the value (JSON null included) and SQL
            // NULL when the key is missing or metadata is not an object, as
            // SQLite's `json_type(metadata, '$.key') IS NOT NULL` does.
            let p = select.arg(key.clone());
            select.and(&format!("(n.metadata -> {p}) IS NOT NULL"));
        }
        let order = if q.newest_first {
            "n.seq DESC"
        } else {
            "n.seq"
        };
        Ok(select.finish(order, q.limit))
    }

    /// A `count(*)`-like statement's single number.
    fn count(&mut self, sql: &str, args: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        let rows = self.query(sql, args)?;
        let n: i64 = rows
            .first()
            .map(|r| r.get(0))
            .ok_or_else(|| StoreError::new(StoreErrorKind::Other, "a count returned no row"))?;
        Ok(n as u64)
    }
}

/// Refuses a vector pgvector cannot hold or kith must not rank: empty,
/// not finite, or longer than pgvector's 65,535 dimensions.
fn check_vector(node_id: Uuid, vector: &[f32]) -> Result<(), StoreError> {
    if vector.is_empty() || vector.iter().any(|v| !v.is_finite()) {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            format!("node {node_id}: an embedding must be non-empty and finite"),
        ));
    }
    if vector.len() > usize::from(u16::MAX) {
        return Err(StoreError::new(
            StoreErrorKind::Other,
            format!(
                "node {node_id}: an embedding of {} dimensions is more than pgvector holds",
                vector.len()
            ),
        ));
    }
    Ok(())
}

fn conflict(what: String) -> StoreError {
    StoreError::new(StoreErrorKind::Conflict, what)
}

/// A journal record whose id is taken.
fn operation_exists(id: Uuid) -> StoreError {
    conflict(format!(
        "operation {id}: a journal record with this id exists"
    ))
}

fn not_found(what: String) -> StoreError {
    StoreError::new(StoreErrorKind::NotFound, what)
}

impl Tx for PgTx<'_> {
    fn insert_event(&mut self, e: &Event) -> Result<i64, StoreError> {
        self.writable()?;
        let rows = self.query(
            // One round trip: nodes written before their event (in the same
            // transaction) get the copied role and time in the same
            // statement, which sees them (earlier commands' effects).
            "WITH ins AS (
                INSERT INTO events (id, owner_id, scope, session_id, role, speaker, content,
                    content_sha256, event_time, event_time_ms, ingested_at, ingested_at_ms,
                    metadata, source_id, checksum)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::text::json,
                    $14, $15)
                ON CONFLICT DO NOTHING
                RETURNING seq, id, role, coalesce(event_time_ms, ingested_at_ms) AS effective_ms
             ), early AS (
                UPDATE nodes n SET source_role = ins.role, effective_ms = ins.effective_ms
                FROM ins WHERE n.source_event_id = ins.id AND n.source_role IS NULL
             )
             SELECT seq FROM ins",
            &[
                &e.id,
                &e.owner_id.as_str(),
                &e.scope.as_str(),
                &e.session_id.as_ref().map(|s| s.as_str()),
                &e.role.as_str(),
                &e.speaker.as_ref().map(|s| s.as_str()),
                &e.content,
                &e.content_sha256,
                &e.event_time.map(|t| t.to_rfc3339()),
                &e.event_time.map(|t| t.unix_millis()),
                &e.ingested_at.to_rfc3339(),
                &e.ingested_at.unix_millis(),
                &rows::json_text(&e.metadata),
                &e.source_id.as_str(),
                &e.checksum,
            ],
        )?;
        let Some(row) = rows.first() else {
            return Err(conflict(format!(
                "event {}: an event with this id or (owner, source id) exists; events are append-only",
                e.id
            )));
        };
        Ok(row.get(0))
    }

    fn insert_events(&mut self, events: &[Event]) -> Result<Vec<i64>, StoreError> {
        self.batch_insert_events(events)
    }

    fn event_ids_by_sources(
        &mut self,
        keys: &[(OwnerId, SourceId)],
    ) -> Result<Vec<Option<Uuid>>, StoreError> {
        self.batch_event_ids_by_sources(keys)
    }

    fn insert_nodes(&mut self, nodes: &[Node]) -> Result<(), StoreError> {
        self.batch_insert_nodes(nodes)
    }

    fn insert_edges(&mut self, edges: &[Edge]) -> Result<(), StoreError> {
        self.batch_insert_edges(edges)
    }

    fn append_operations(&mut self, ops: &[Operation]) -> Result<(), StoreError> {
        self.batch_append_operations(ops)
    }

    fn insert_work_items(&mut self, items: &[WorkItem]) -> Result<(), StoreError> {
        self.batch_insert_work_items(items)
    }

    fn get_work_items(&mut self, event_ids: &[Uuid]) -> Result<Vec<WorkItem>, StoreError> {
        self.batch_get_work_items(event_ids)
    }

    fn put_embeddings(&mut self, model: &str, rows: &[(Uuid, &[f32])]) -> Result<(), StoreError> {
        self.batch_put_embeddings(None, model, rows)
    }

    fn put_owned_embeddings(
        &mut self,
        owner: &OwnerId,
        model: &str,
        rows: &[(Uuid, &[f32])],
    ) -> Result<(), StoreError> {
        self.batch_put_embeddings(Some(owner), model, rows)
    }

    fn event_id_by_source(
        &mut self,
        owner: &OwnerId,
        source_id: &SourceId,
    ) -> Result<Option<Uuid>, StoreError> {
        let rows = self.query(
            "SELECT id FROM events WHERE owner_id = $1 AND source_id = $2",
            &[&owner.as_str(), &source_id.as_str()],
        )?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn get_event(&mut self, id: Uuid) -> Result<Option<StoredEvent>, StoreError> {
        let sql = format!("SELECT {} FROM events WHERE id = $1", rows::EVENT_COLUMNS);
        Ok(self.query_map(&sql, &[&id], rows::event)?.pop())
    }

    fn list_events(&mut self, q: &EventQuery) -> Result<Vec<StoredEvent>, StoreError> {
        let mut select = Select::new(format!("SELECT {} FROM events", rows::EVENT_COLUMNS));
        let after = select.arg(q.after_seq);
        select
            .push(&format!(" WHERE seq > {after}"))
            .eq("owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .eq("scope", q.scope.as_ref().map(|s| s.as_str()))
            .eq("session_id", q.session.as_ref().map(|s| s.as_str()));
        if let Some(through) = q.through_seq {
            let p = select.arg(through);
            select.push(&format!(" AND seq <= {p}"));
        }
        let order = if q.newest_first { "seq DESC" } else { "seq" };
        let (sql, args) = select.finish(order, q.limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::event)
            .collect()
    }

    fn get_events(
        &mut self,
        owner: &OwnerId,
        ids: &[Uuid],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM events WHERE owner_id = $1 AND id = ANY($2)",
            rows::EVENT_COLUMNS
        );
        self.query_map(&sql, &[&owner.as_str(), &ids], rows::event)
    }

    fn get_owned_events_and_nodes(
        &mut self,
        owner: &OwnerId,
        event_ids: &[Uuid],
        node_ids: &[Uuid],
    ) -> Result<(Vec<StoredEvent>, Vec<Node>), StoreError> {
        joined::events_and_nodes(self, owner, event_ids, node_ids)
    }

    fn list_session_events(
        &mut self,
        owner: &OwnerId,
        sessions: &[kith_core::SessionId],
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if sessions.is_empty() {
            return Ok(Vec::new());
        }
        let (sql, args) = session_events_sql(owner, sessions, limit);
        self.query_map(&sql, &refs(&args), rows::event)
    }

    fn insert_node(&mut self, n: &Node) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query(
            "INSERT INTO nodes (id, owner_id, scope, session_id, node_type, content, metadata,
                confidence, lifecycle, epistemic_type, source_type, valid_from, valid_to,
                event_time, superseded_by, evidence_refs, source_event_id, created_at, updated_at,
                created_ms, updated_ms, source_role, effective_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, $9, $10, $11, $12, $13, $14, $15,
                $16, $17, $18, $19, $20, $21,
                (SELECT role FROM events WHERE id = $17),
                (SELECT coalesce(event_time_ms, ingested_at_ms) FROM events WHERE id = $17))
             ON CONFLICT DO NOTHING
             RETURNING seq",
            &[
                &n.id,
                &n.owner_id.as_str(),
                &n.scope.as_str(),
                &n.session_id.as_ref().map(|s| s.as_str()),
                &n.node_type.as_str(),
                &n.content,
                &rows::json_text(&n.metadata),
                &n.confidence,
                &n.lifecycle.as_str(),
                &n.epistemic_type.as_str(),
                &n.source_type.as_str(),
                &n.valid_from.to_rfc3339(),
                &n.valid_to.map(|t| t.to_rfc3339()),
                &n.event_time.map(|t| t.to_rfc3339()),
                &n.superseded_by,
                &n.evidence_refs,
                &n.evidence_refs.first().copied(),
                &n.created_at.to_rfc3339(),
                &n.updated_at.to_rfc3339(),
                &n.created_at.unix_millis(),
                &n.updated_at.unix_millis(),
            ],
        )?;
        if rows.is_empty() {
            return Err(conflict(format!(
                "node {}: a node with this id exists",
                n.id
            )));
        }
        Ok(())
    }

    fn get_node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError> {
        let sql = format!("SELECT {} FROM nodes n WHERE n.id = $1", rows::NODE_COLUMNS);
        Ok(self.query_map(&sql, &[&id], rows::node)?.pop())
    }

    fn get_nodes(&mut self, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM nodes n WHERE n.id = ANY($1)",
            rows::NODE_COLUMNS
        );
        self.query_map(&sql, &[&ids], rows::node)
    }

    fn get_owned_nodes(&mut self, owner: &OwnerId, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} FROM nodes n WHERE n.owner_id = $1 AND n.id = ANY($2)",
            rows::NODE_COLUMNS
        );
        self.query_map(&sql, &[&owner.as_str(), &ids], rows::node)
    }

    fn list_nodes(&mut self, q: &NodeQuery) -> Result<Vec<StoredNode>, StoreError> {
        let (sql, args) = self.list_nodes_sql(q)?;
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::stored_node)
            .collect()
    }

    fn list_nodes_with_evidence(
        &mut self,
        q: &NodeQuery,
    ) -> Result<(Vec<StoredNode>, Vec<StoredEvent>), StoreError> {
        let list = self.list_nodes_sql(q)?;
        joined::nodes_with_evidence(self, q.owner.as_ref(), list, q.newest_first)
    }

    fn insert_edge(&mut self, e: &Edge) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query(
            "INSERT INTO edges (id, owner_id, scope, source_id, target_id, edge_type,
                confidence, valid_from, valid_to, provenance_event_id, metadata, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text::json, $12)
             ON CONFLICT DO NOTHING
             RETURNING seq",
            &[
                &e.id,
                &e.owner_id.as_str(),
                &e.scope.as_str(),
                &e.source_id,
                &e.target_id,
                &e.edge_type.as_str(),
                &e.confidence,
                &e.valid_from.to_rfc3339(),
                &e.valid_to.map(|t| t.to_rfc3339()),
                &e.provenance_event_id,
                &rows::json_text(&e.metadata),
                &e.created_at.to_rfc3339(),
            ],
        )?;
        if rows.is_empty() {
            return Err(conflict(format!(
                "edge {}: an edge with this id exists",
                e.id
            )));
        }
        Ok(())
    }

    fn update_node(&mut self, n: &Node) -> Result<(), StoreError> {
        self.writable()?;
        // The generated tsvector column follows the new content by itself.
        let rows = self.query(
            "UPDATE nodes SET content = $2, metadata = $3::text::json, confidence = $4,
                lifecycle = $5, epistemic_type = $6, valid_from = $7, valid_to = $8,
                superseded_by = $9, evidence_refs = $10, updated_at = $11, updated_ms = $12
             WHERE id = $1
             RETURNING seq",
            &[
                &n.id,
                &n.content,
                &rows::json_text(&n.metadata),
                &n.confidence,
                &n.lifecycle.as_str(),
                &n.epistemic_type.as_str(),
                &n.valid_from.to_rfc3339(),
                &n.valid_to.map(|t| t.to_rfc3339()),
                &n.superseded_by,
                &n.evidence_refs,
                &n.updated_at.to_rfc3339(),
                &n.updated_at.unix_millis(),
            ],
        )?;
        if rows.is_empty() {
            return Err(not_found(format!("node {} does not exist", n.id)));
        }
        Ok(())
    }

    fn subject_claims(
        &mut self,
        subject: Uuid,
        predicates: &[String],
    ) -> Result<Vec<Node>, StoreError> {
        if predicates.is_empty() {
            return Ok(Vec::new());
        }
        // SQL's key where it is exact, else every row, judged below by the
        // one definition (crate::predicates).
        let keys = crate::predicates::keys(predicates);
        let sql = format!(
            "SELECT {} FROM edges g JOIN nodes n ON n.id = g.target_id
             WHERE g.source_id = $1 AND g.edge_type = 'HAS_FACT' AND g.valid_to IS NULL
               AND n.node_type <> 'entity'
               AND n.lifecycle IN ('tentative', 'stable', 'contested')
               AND (replace(replace(lower(trim(n.metadata ->> 'predicate')), ' ', '_'), '-', '_')
                      = ANY($2)
                    OR (n.metadata ->> 'predicate') ~ '[^{}]'
                    OR strpos(n.metadata ->> 'predicate', '  ') > 0)
             ORDER BY n.seq",
            rows::NODE_COLUMNS,
            kith_core::text::PREDICATE_SQL_EXACT_CHARS
        );
        let rows = self.query_map(&sql, &[&subject, &keys], rows::node)?;
        Ok(crate::predicates::keep_matching(rows, &keys))
    }

    fn edges_of(&mut self, node: Uuid) -> Result<Vec<Edge>, StoreError> {
        let sql = format!(
            "SELECT {} FROM edges WHERE source_id = $1 OR target_id = $1 ORDER BY seq",
            rows::EDGE_COLUMNS
        );
        self.query_map(&sql, &[&node], rows::edge)
    }

    fn edges_of_nodes(
        &mut self,
        owner: &OwnerId,
        nodes: &[Uuid],
    ) -> Result<HashMap<Uuid, Vec<Edge>>, StoreError> {
        if nodes.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!("{} ORDER BY seq", joined::edges_at_sql("$1", "= ANY($2)"));
        // In seq order for each end asked about.
        let edges = self.query_map(&sql, &[&owner.as_str(), &nodes], rows::edge)?;
        Ok(joined::group_by_end(nodes, edges))
    }

    fn edges_of_nodes_with_ends(
        &mut self,
        owner: &OwnerId,
        nodes: &[Uuid],
    ) -> Result<crate::EdgesWithEnds, StoreError> {
        joined::edges_with_ends(self, owner, nodes)
    }

    fn get_edge(&mut self, id: Uuid) -> Result<Option<Edge>, StoreError> {
        let sql = format!("SELECT {} FROM edges WHERE id = $1", rows::EDGE_COLUMNS);
        self.query_map(&sql, &[&id], rows::edge)
            .map(|mut v| v.pop())
    }

    fn delete_edge(&mut self, id: Uuid) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query("DELETE FROM edges WHERE id = $1 RETURNING seq", &[&id])?;
        if rows.is_empty() {
            return Err(not_found(format!("edge {id} does not exist")));
        }
        Ok(())
    }

    fn close_edge(&mut self, id: Uuid, at: Timestamp) -> Result<(), StoreError> {
        self.set_edge_end(id, Some(at))
    }

    fn reopen_edge(&mut self, id: Uuid) -> Result<(), StoreError> {
        self.set_edge_end(id, None)
    }

    fn tombstone_event(&mut self, id: Uuid, t: &Tombstone) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query("SELECT forgotten_at FROM events WHERE id = $1", &[&id])?;
        let Some(row) = rows.first() else {
            return Err(not_found(format!("event {id} does not exist")));
        };
        if row.get::<_, Option<String>>(0).is_some() {
            return Err(conflict(format!("event {id} is already forgotten")));
        }
        self.query(
            "UPDATE events SET content = '', speaker = NULL, metadata = NULL,
                forgotten_at = $2, forgotten_reason = $3, forgotten_by = $4,
                tombstone_checksum = $5
             WHERE id = $1",
            &[
                &id,
                &t.forgotten_at.to_rfc3339(),
                &t.reason,
                &t.operation_id,
                &t.checksum,
            ],
        )?;
        Ok(())
    }

    fn delete_nodes(&mut self, ids: &[Uuid]) -> Result<DeletedNodes, StoreError> {
        self.writable()?;
        if ids.is_empty() {
            return Ok(DeletedNodes::default());
        }
        let ids = ids.to_vec();
        // Edges and vectors first, each in one statement; the lexical
        // index is a generated column of the node row and goes with it.
        let edges = self
            .query(
                "DELETE FROM edges WHERE source_id = ANY($1) OR target_id = ANY($1) RETURNING 1",
                &[&ids],
            )?
            .len() as u64;
        let vectors = self.delete_node_embeddings(&ids)?;
        let nodes = self
            .query("DELETE FROM nodes WHERE id = ANY($1) RETURNING 1", &[&ids])?
            .len() as u64;
        Ok(DeletedNodes {
            nodes,
            edges,
            vectors,
        })
    }

    fn delete_edges_from_events(
        &mut self,
        owner: &OwnerId,
        events: &[Uuid],
    ) -> Result<u64, StoreError> {
        self.writable()?;
        let events = events.to_vec();
        Ok(self
            .query(
                "DELETE FROM edges WHERE owner_id = $1 AND provenance_event_id = ANY($2)
                 RETURNING 1",
                &[&owner.as_str(), &events],
            )?
            .len() as u64)
    }

    fn delete_work_item(&mut self, event_id: Uuid) -> Result<bool, StoreError> {
        self.writable()?;
        Ok(!self
            .query(
                "DELETE FROM work_items WHERE event_id = $1 RETURNING 1",
                &[&event_id],
            )?
            .is_empty())
    }

    fn rewrite_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        self.writable()?;
        let Some(old) = self.get_operation(op.id)? else {
            return Err(not_found(format!(
                "journal record {} does not exist",
                op.id
            )));
        };
        if (
            old.kind,
            &old.owner_id,
            &old.scope,
            old.target_id,
            old.created_at,
        ) != (
            op.kind,
            &op.owner_id,
            &op.scope,
            op.target_id,
            op.created_at,
        ) {
            return Err(conflict(format!(
                "journal record {}: only its payload and checksum may be rewritten",
                op.id
            )));
        }
        self.query(
            "UPDATE operations SET payload = $2::text::json, checksum = $3 WHERE id = $1",
            &[
                &op.id,
                &kith_core::canon::to_canonical_string(&op.payload),
                &op.checksum,
            ],
        )?;
        Ok(())
    }

    fn append_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query(
            "INSERT INTO operations (id, kind, owner_id, scope, target_id, payload,
                created_at, checksum)
             VALUES ($1, $2, $3, $4, $5, $6::text::json, $7, $8)
             ON CONFLICT DO NOTHING
             RETURNING seq",
            &[
                &op.id,
                &op.kind.as_str(),
                &op.owner_id.as_str(),
                &op.scope.as_str(),
                &op.target_id,
                &kith_core::canon::to_canonical_string(&op.payload),
                &op.created_at.to_rfc3339(),
                &op.checksum,
            ],
        )?;
        if rows.is_empty() {
            return Err(operation_exists(op.id));
        }
        Ok(())
    }

    fn get_operation(&mut self, id: Uuid) -> Result<Option<Operation>, StoreError> {
        let sql = format!(
            "SELECT {} FROM operations WHERE id = $1",
            rows::OPERATION_COLUMNS
        );
        Ok(self.query_map(&sql, &[&id], rows::operation)?.pop())
    }

    fn scan_operations(
        &mut self,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Operation)>, StoreError> {
        let mut select = Select::new(format!(
            "SELECT {} FROM operations",
            rows::OPERATION_COLUMNS
        ));
        let after = select.arg(after_seq);
        select.push(&format!(" WHERE seq > {after}"));
        let (sql, args) = select.finish("seq", limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(|r| Ok((r.get::<_, i64>("seq"), rows::operation(r)?)))
            .collect()
    }

    fn list_operations(&mut self, q: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
        let mut select = Select::new(format!(
            "SELECT {} FROM operations",
            rows::OPERATION_COLUMNS
        ));
        let owner = select.arg(q.owner.as_str().to_string());
        select
            .push(&format!(" WHERE owner_id = {owner}"))
            .eq("kind", q.kind.map(|k| k.as_str()));
        if let Some(target) = q.target_id {
            let p = select.arg(target);
            select.and(&format!("target_id = {p}"));
        }
        let (sql, args) = select.finish("seq", q.limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::operation)
            .collect()
    }

    fn count_operations(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
    ) -> Result<u64, StoreError> {
        let rows = self.query(
            "SELECT count(*) AS n FROM operations WHERE owner_id = $1 AND kind = $2",
            &[&owner.as_str(), &kind.as_str()],
        )?;
        let n: i64 = rows.first().map_or(0, |r| r.get("n"));
        Ok(n as u64)
    }

    fn operation_stamps(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        limit: usize,
    ) -> Result<Vec<OperationStamp>, StoreError> {
        let mut select = Select::new("SELECT seq, id, created_at FROM operations".to_string());
        let o = select.arg(owner.as_str().to_string());
        let k = select.arg(kind.as_str().to_string());
        select.push(&format!(" WHERE owner_id = {o} AND kind = {k}"));
        let (sql, args) = select.finish("seq", limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::operation_stamp)
            .collect()
    }

    fn delete_operations(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        ids: &[Uuid],
    ) -> Result<u64, StoreError> {
        self.writable()?;
        let rows = self.query(
            "DELETE FROM operations WHERE id = ANY($1) AND owner_id = $2 AND kind = $3
             RETURNING 1",
            &[&ids, &owner.as_str(), &kind.as_str()],
        )?;
        Ok(rows.len() as u64)
    }

    fn insert_work_item(&mut self, w: &WorkItem) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query(
            "INSERT INTO work_items (event_id, owner_id, scope, status, attempts, reason_code,
                last_error, lease_until_ms, options, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::json, $10, $11)
             ON CONFLICT DO NOTHING
             RETURNING seq",
            &[
                &w.event_id,
                &w.owner_id.as_str(),
                &w.scope.as_str(),
                &w.status.as_str(),
                &i64::from(w.attempts),
                &w.reason_code,
                &w.last_error,
                &w.lease_until_ms,
                &kith_core::canon::to_canonical_string(&w.options),
                &w.created_at.to_rfc3339(),
                &w.updated_at.to_rfc3339(),
            ],
        )?;
        if rows.is_empty() {
            return Err(conflict(format!(
                "work item {}: the event has a work item",
                w.event_id
            )));
        }
        Ok(())
    }

    fn get_work_item(&mut self, event_id: Uuid) -> Result<Option<WorkItem>, StoreError> {
        let sql = format!(
            "SELECT {} FROM work_items WHERE event_id = $1",
            rows::WORK_COLUMNS
        );
        Ok(self.query_map(&sql, &[&event_id], rows::work_item)?.pop())
    }

    fn update_work_item(&mut self, w: &WorkItem) -> Result<(), StoreError> {
        self.writable()?;
        let rows = self.query(
            "UPDATE work_items SET status = $2, attempts = $3, reason_code = $4,
                last_error = $5, lease_until_ms = $6, options = $7::text::json, updated_at = $8
             WHERE event_id = $1
             RETURNING seq",
            &[
                &w.event_id,
                &w.status.as_str(),
                &i64::from(w.attempts),
                &w.reason_code,
                &w.last_error,
                &w.lease_until_ms,
                &kith_core::canon::to_canonical_string(&w.options),
                &w.updated_at.to_rfc3339(),
            ],
        )?;
        if rows.is_empty() {
            return Err(not_found(format!(
                "work item {} does not exist",
                w.event_id
            )));
        }
        Ok(())
    }

    fn list_work_items(&mut self, q: &WorkQuery) -> Result<Vec<WorkItem>, StoreError> {
        let mut select = Select::new(format!(
            "SELECT {} FROM work_items WHERE true",
            rows::WORK_COLUMNS
        ));
        select
            .eq("owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .any("status", q.statuses.iter().map(|s| s.as_str()));
        if let Some(ms) = q.lease_expired_before_ms {
            let p = select.arg(ms);
            select.and(&format!(
                "(status <> 'running' OR coalesce(lease_until_ms, 0) < {p})"
            ));
        }
        let (sql, args) = select.finish("seq", q.limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::work_item)
            .collect()
    }

    fn search_lexical(&mut self, q: &LexicalQuery) -> Result<Vec<LexicalHit>, StoreError> {
        let words = crate::words::query_words(&q.text);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        if words.len() <= search::MAX_SCORED_WORDS {
            // Statistics, pruning, IDFs and the search in one round trip.
            let avg_lexemes = self.avg_lexemes()?;
            let (sql, args) = search::bm25_sql(q, &words, avg_lexemes);
            return search::decode_hits(&self.query_args(&sql, &args)?);
        }
        // A pasted document (past `MAX_SCORED_WORDS` words): its words'
        // statistics first, then the search, ranked by `ts_rank_cd` unless
        // pruning leaves few enough words to score.
        // Word shares come from the planner's statistics (lexeme
        // frequencies ANALYZE keeps for the tsvector column), not from
        // counting postings on every query: a free lookup, as fresh as the
        // last (auto)analyze. The same round trip reads the store's size
        // (nodes ever written: a bound, from the seq index) for IDFs and for
        // leaving common words out as on SQLite.
        // A word in this share of the rows or more is common.
        let common = q.pruning_share();
        let found = self.query(search::WORD_STATS_SQL, &[&words])?;
        let rows: i64 = found.first().map_or(0, |r| r.get(3));
        let mut stats: Vec<(String, Option<f64>, Option<f64>)> = found
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        if (2..=search::MAX_SCORED_WORDS).contains(&words.len())
            && stats.iter().all(|w| w.2.is_none())
            && rows > 0
        {
            // No statistics yet (a new or just imported store): count each
            // word's rows exactly, in one pass over the query's matches.
            // A word reaching the cap is common: its exact share matters
            // no more (it is left out in a big store, and weighs little).
            let cap = ((rows as f64 * common) as i64).max(100);
            let counts = self.query(search::WORD_COUNTS_SQL, &[&words, &cap])?;
            for (w, r) in stats.iter_mut().zip(&counts) {
                let n: i64 = r.get(0);
                w.1 = Some(n as f64 / rows as f64);
                // Every word is now known exactly: none "rarer than the
                // rarest tracked".
                w.2 = Some(0.0);
            }
        }
        let share = |(_, share, smallest): &(String, Option<f64>, Option<f64>)| {
            // Not among the tracked lexemes: rarer than the rarest tracked.
            smallest.map(|min| share.unwrap_or(min / 2.0))
        };
        let prune = words.len() >= 2 && rows >= crate::words::PRUNE_FROM_ROWS;
        let rare: Vec<&(String, Option<f64>, Option<f64>)> = stats
            .iter()
            .filter(|w| !prune || share(w).is_none_or(|s| s < common))
            .collect();
        let kept: Vec<&(String, Option<f64>, Option<f64>)> = if rare.is_empty() {
            stats.iter().collect()
        } else {
            rare
        };
        let words: Vec<String> = kept.iter().map(|w| w.0.clone()).collect();
        // A pasted document can bring thousands of words; each scored word
        // costs a test per matching row, so past a bound `ts_rank_cd` ranks.
        let idfs: Vec<f64> = if kept.len() > search::MAX_SCORED_WORDS {
            Vec::new()
        } else {
            kept.iter()
                .map(|w| share(w).map_or(1.0, |s| search::idf(s, rows as f64)))
                .collect()
        };
        let avg_lexemes = self.avg_lexemes()?;
        let Some((sql, args)) = search::lexical_sql(q, &words, &idfs, avg_lexemes) else {
            return Ok(Vec::new());
        };
        search::decode_hits(&self.query_args(&sql, &args)?)
    }

    fn search_lexical_nodes(
        &mut self,
        q: &LexicalQuery,
    ) -> Result<Vec<(LexicalHit, Node)>, StoreError> {
        let words = crate::words::query_words(&q.text);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        if words.len() > search::MAX_SCORED_WORDS {
            // A pasted document's search takes several statements anyway.
            return crate::search_lexical_nodes_in_steps(self, q);
        }
        // The probe on its own: planning the search statement costs more
        // (~3 ms) than the round trip the probe spares an owner without a
        // node of the types asked (measured: BENCHMARKS.md, "Many owners on
        // PostgreSQL").
        if !self.has_nodes_to_search(q)? {
            return Ok(Vec::new());
        }
        let avg_lexemes = self.avg_lexemes()?;
        let search = search::bm25_sql(q, &words, avg_lexemes);
        joined::hits_with_nodes(self, search)
    }

    fn read_together(&mut self, reads: &[crate::Read]) -> Result<Vec<crate::Answer>, StoreError> {
        together::read(self, reads)
    }

    fn put_embedding(
        &mut self,
        node_id: Uuid,
        model: &str,
        vector: &[f32],
    ) -> Result<(), StoreError> {
        check_vector(node_id, vector)?;
        self.writable()?;
        // One round trip: the owner comes from the node (none: no row, so
        // the node does not exist), and a replacement takes a new seq, as
        // on SQLite, so in-process copies see it.
        let written = self.query(
            "INSERT INTO embeddings (node_id, owner_id, model, dim, vector)
             SELECT n.id, n.owner_id, $2, $3, $4 FROM nodes n WHERE n.id = $1
             ON CONFLICT (node_id) DO UPDATE SET owner_id = excluded.owner_id,
                 model = excluded.model, dim = excluded.dim, vector = excluded.vector,
                 seq = DEFAULT
             RETURNING seq",
            &[
                &node_id,
                &model,
                &(vector.len() as i32),
                &PgVector(vector.to_vec()),
            ],
        )?;
        if written.is_empty() {
            return Err(not_found(format!("node {node_id} does not exist")));
        }
        Ok(())
    }

    fn get_embedding(&mut self, node_id: Uuid) -> Result<Option<(String, Vec<f32>)>, StoreError> {
        let rows = self.query(
            "SELECT model, vector FROM embeddings WHERE node_id = $1",
            &[&node_id],
        )?;
        rows.first()
            .map(|r| {
                let model: String = r.get(0);
                let vector: PgVector = r.try_get(1).map_err(|e| {
                    StoreError::corrupted(format!("embedding of node {node_id}: {e}"))
                })?;
                Ok((model, vector.0))
            })
            .transpose()
    }

    fn nodes_missing_embedding(
        &mut self,
        owner: Option<&OwnerId>,
        model: &str,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<StoredNode>, StoreError> {
        let mut select = Select::new(format!(
            "SELECT {} FROM nodes n LEFT JOIN embeddings m ON m.node_id = n.id AND m.model = ",
            rows::NODE_COLUMNS
        ));
        let model = select.arg(model.to_string());
        let after = select.arg(after_seq);
        select
            .push(&format!(
                " {model} WHERE m.node_id IS NULL AND n.seq > {after}"
            ))
            .eq("n.owner_id", owner.map(|o| o.as_str()));
        let (sql, args) = select.finish("n.seq", limit);
        self.query_args(&sql, &args)?
            .iter()
            .map(rows::stored_node)
            .collect()
    }

    fn delete_embeddings(&mut self) -> Result<u64, StoreError> {
        self.writable()?;
        let n = self.query("DELETE FROM embeddings RETURNING 1", &[])?.len() as u64;
        // In-process copies of the old vectors are dropped when they see
        // another generation.
        let generation = Uuid::new_v4().to_string();
        self.query(vectors::BUMP_SQL, &[&generation])?;
        Ok(n)
    }

    fn delete_node_embeddings(&mut self, ids: &[Uuid]) -> Result<u64, StoreError> {
        self.writable()?;
        if ids.is_empty() {
            return Ok(0);
        }
        let ids = ids.to_vec();
        let n = self
            .query(
                "DELETE FROM embeddings WHERE node_id = ANY($1) RETURNING 1",
                &[&ids],
            )?
            .len() as u64;
        if n > 0 {
            // In-process copies holding the removed vectors start over.
            let generation = Uuid::new_v4().to_string();
            self.query(vectors::BUMP_SQL, &[&generation])?;
        }
        Ok(n)
    }

    fn embedding_models(&mut self) -> Result<Vec<EmbeddingModelCount>, StoreError> {
        self.query_map(
            "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim ORDER BY model, dim",
            &[],
            |r| {
                Ok(EmbeddingModelCount {
                    model: r.get(0),
                    dimension: r.get::<_, i32>(1) as usize,
                    vectors: r.get::<_, i64>(2) as u64,
                })
            },
        )
    }

    fn search_vector(&mut self, q: &VectorQuery) -> Result<Vec<LexicalHit>, StoreError> {
        // Checks the vector (finite, non-empty) and builds the SQL fallback.
        let Some((sql, args)) = search::vector_sql(q)? else {
            return Ok(Vec::new());
        };
        let limit = if q.limit == 0 { 10 } else { q.limit };
        // The in-process copy's state (the HNSW path needs none).
        let (generation, max_seq): (Option<String>, i64) = if self.store.hnsw {
            (None, 0)
        } else {
            vectors::state(self, &q.owner)?
        };
        // Slack for candidates the re-check drops (no longer active, or not
        // of the lifecycle asked for); if it drops too many, the scan is
        // asked for more until it runs out of rows.
        let mut k = limit * 2 + 16;
        loop {
            let found = if self.store.hnsw {
                hnsw::search(self, q, k, self.store.hnsw_ef_search)?
            } else {
                match vectors::plan(self, q, generation.clone(), max_seq, k)? {
                    vectors::Plan::Sql => {
                        return search::decode_hits(&self.query_args(&sql, &args)?)
                    }
                    vectors::Plan::Scanned(found) => found,
                }
            };
            if found.is_empty() {
                return Ok(Vec::new());
            }
            // Rank and exact score of each candidate, as the scan ordered them.
            let rank_of: HashMap<Uuid, (usize, f32)> = found
                .iter()
                .enumerate()
                .map(|(rank, (id, score))| (*id, (rank, *score)))
                .collect();
            let ids = found.iter().map(|(id, _)| *id).collect();
            let (check, check_args) = search::candidates_sql(ids, q);
            let mut hits = search::decode_hits(&self.query_args(&check, &check_args)?)?;
            if hits.len() < limit && found.len() == k {
                k *= 4;
                continue;
            }
            for h in &mut hits {
                h.score = f64::from(rank_of.get(&h.node_id).map_or(f32::MIN, |r| r.1));
            }
            hits.sort_by_key(|h| rank_of.get(&h.node_id).map_or(usize::MAX, |r| r.0));
            hits.truncate(limit);
            return Ok(hits);
        }
    }

    fn stats(&mut self, owner: Option<&OwnerId>) -> Result<Stats, StoreError> {
        let o = owner.map(|o| o.as_str().to_string());
        let args: &[&(dyn ToSql + Sync)] = &[&o];
        let events = self.count(
            "SELECT count(*) FROM events WHERE $1::text IS NULL OR owner_id = $1",
            args,
        )?;
        let edges = self.count(
            "SELECT count(*) FROM edges WHERE $1::text IS NULL OR owner_id = $1",
            args,
        )?;
        let operations = self.count(
            "SELECT count(*) FROM operations WHERE $1::text IS NULL OR owner_id = $1",
            args,
        )?;
        let owners = self.count(
            "SELECT count(DISTINCT owner_id) FROM events WHERE $1::text IS NULL OR owner_id = $1",
            args,
        )?;
        let sessions = self.count(
            "SELECT count(*) FROM (SELECT DISTINCT owner_id, session_id FROM events
             WHERE session_id IS NOT NULL AND ($1::text IS NULL OR owner_id = $1)) s",
            args,
        )?;
        let rows = self.query(
            "SELECT node_type, count(*) FROM nodes WHERE $1::text IS NULL OR owner_id = $1
             GROUP BY node_type ORDER BY node_type",
            args,
        )?;
        let mut nodes_by_type = Vec::new();
        for row in rows {
            let t: String = row.get(0);
            let n: i64 = row.get(1);
            let t = NodeType::parse("node_type", &t)
                .map_err(|e| StoreError::corrupted(format!("nodes: {e}")))?;
            nodes_by_type.push((t, n as u64));
        }
        Ok(Stats {
            events,
            nodes_by_type,
            edges,
            operations,
            owners,
            sessions,
        })
    }

    fn check_integrity(&mut self) -> Result<Vec<String>, StoreError> {
        // Refused in a read transaction, as on SQLite, so callers behave the
        // same on both backends; nothing here writes.
        self.writable()?;
        let checks: [(&str, &str); 9] = [
            (
                "SELECT n.id::text FROM nodes n LEFT JOIN events e ON e.id = n.source_event_id
                 WHERE n.source_event_id IS NOT NULL AND e.id IS NULL LIMIT 20",
                "node {} cites an event that does not exist",
            ),
            (
                "SELECT DISTINCT n.id::text FROM nodes n, unnest(n.evidence_refs) AS r(id)
                 WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = r.id) LIMIT 20",
                "node {} lists evidence that is not a stored event",
            ),
            (
                "SELECT g.id::text FROM edges g LEFT JOIN nodes s ON s.id = g.source_id
                 LEFT JOIN nodes t ON t.id = g.target_id WHERE s.id IS NULL OR t.id IS NULL
                 LIMIT 20",
                "edge {} points at a node that does not exist",
            ),
            (
                "SELECT n.id::text FROM nodes n JOIN events e ON e.id = n.source_event_id
                 WHERE e.owner_id <> n.owner_id LIMIT 20",
                "node {} belongs to another owner than its source event",
            ),
            (
                "SELECT id::text FROM nodes
                 WHERE content_tsv IS DISTINCT FROM to_tsvector('english'::regconfig, content)
                 LIMIT 20",
                "the lexical index row of node {} does not match its text",
            ),
            (
                "SELECT id::text FROM events WHERE checksum !~ '^[0-9a-f]{64}$' LIMIT 20",
                "event {} has no well-formed checksum",
            ),
            (
                "SELECT m.node_id::text FROM embeddings m LEFT JOIN nodes n ON n.id = m.node_id
                 WHERE n.id IS NULL OR n.owner_id <> m.owner_id LIMIT 20",
                "the embedding of node {} has no node of its owner",
            ),
            (
                "SELECT node_id::text FROM embeddings WHERE vector_dims(vector) <> dim LIMIT 20",
                "the embedding of node {} is not of its recorded dimension",
            ),
            (
                "SELECT w.event_id::text FROM work_items w LEFT JOIN events e ON e.id = w.event_id
                 WHERE e.id IS NULL LIMIT 20",
                "the work item of event {} has no event",
            ),
        ];
        let mut problems = Vec::new();
        for (sql, message) in checks {
            let ids = self.query_map(sql, &[], |r| Ok(r.get::<_, String>(0)))?;
            problems.extend(ids.into_iter().map(|id| message.replace("{}", &id)));
        }
        Ok(problems)
    }

    fn get_setting(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        let key = crate::setting_key(key)?;
        let rows = self.query("SELECT value FROM kith_meta WHERE key = $1", &[&key])?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    fn set_setting(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        let key = crate::setting_key(key)?;
        self.writable()?;
        match value {
            Some(v) => self.query(
                "INSERT INTO kith_meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &v],
            )?,
            None => self.query("DELETE FROM kith_meta WHERE key = $1", &[&key])?,
        };
        Ok(())
    }

    fn write_generation(&mut self) -> Result<Option<u64>, StoreError> {
        let rows = self.query(
            "SELECT value FROM kith_meta WHERE key = $1",
            &[&crate::WRITE_GENERATION_KEY],
        )?;
        match rows.first().map(|r| r.get::<_, String>(0)) {
            None => Ok(Some(0)),
            Some(t) => t.parse().map(Some).map_err(|_| {
                StoreError::corrupted(format!("kith_meta.write_generation is {t:?}, not a number"))
            }),
        }
    }

    fn commit(mut self: Box<Self>) -> Result<(), StoreError> {
        if let Some(err) = self.failed.take() {
            // PostgreSQL would answer COMMIT with a silent ROLLBACK; say so.
            return Err(StoreError::new(
                err.kind(),
                format!("commit refused: the transaction was aborted by an earlier error ({err}); nothing was written"),
            ));
        }
        let mut conn = self.conn.take().expect("transaction connection is live");
        if self.pending_begin.take().is_some() {
            // A read transaction that sent nothing never began.
            self.store.release(conn);
            return Ok(());
        }
        if self.mode == TxMode::Read {
            // Nothing to commit: ended with the connection's next
            // statement, as when dropped ([`pool`]).
            conn.end_due = Some(std::time::Instant::now());
            self.store.release(conn);
            return Ok(());
        }
        // A transaction that changed a row has a transaction id; one that
        // only read (or only took the advisory lock) has none and leaves the
        // write generation alone. The bump and COMMIT go in one round trip:
        // if the bump fails the server skips the COMMIT, and the
        // transaction is rolled back below.
        let sql = if self.mode == TxMode::Write {
            format!(
                "INSERT INTO kith_meta (key, value)
                 SELECT '{key}', '1' WHERE txid_current_if_assigned() IS NOT NULL
                 ON CONFLICT (key) DO UPDATE SET value = ((kith_meta.value)::bigint + 1)::text;
                 COMMIT",
                key = crate::WRITE_GENERATION_KEY
            )
        } else {
            "COMMIT".to_string()
        };
        self.store.log.sent(&sql);
        match conn.client.batch_execute(&sql) {
            Ok(()) => {
                self.store.release(conn);
                Ok(())
            }
            Err(e) => {
                let _ = conn.client.batch_execute("ROLLBACK");
                Err(map_err(e).context("commit"))
            }
        }
    }
}

/// Sorts a PostgreSQL error into a [`StoreErrorKind`] with a readable
/// sentence.
fn map_err(err: postgres::Error) -> StoreError {
    let Some(db) = err.as_db_error() else {
        // No server answer: the connection broke, or never opened.
        let kind = if err.is_closed()
            || std::error::Error::source(&err).is_some_and(|s| s.is::<std::io::Error>())
        {
            StoreErrorKind::Io
        } else {
            StoreErrorKind::Other
        };
        let message = format!("PostgreSQL: {err}");
        return StoreError::new(kind, message).with_source(err);
    };
    let code = db.code();
    let class = &code.code()[..2];
    let kind = if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::LOCK_NOT_AVAILABLE
    {
        StoreErrorKind::Busy
    } else if class == "23" {
        StoreErrorKind::Conflict
    } else if *code == SqlState::DATA_CORRUPTED || *code == SqlState::INDEX_CORRUPTED {
        StoreErrorKind::Corrupted
    } else if class == "08" || class == "53" || class == "57" || class == "58" {
        // Connection, resources (disk full, too many connections), operator
        // intervention (shutdown), system errors.
        StoreErrorKind::Io
    } else {
        StoreErrorKind::Other
    };
    let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
    let message = match kind {
        StoreErrorKind::Busy => format!(
            "the database is busy: {} [SQLSTATE {}]; retryable: run the transaction again",
            db.message(),
            code.code()
        ),
        StoreErrorKind::Corrupted => format!("the database is damaged: {}{detail}", db.message()),
        _ => format!(
            "PostgreSQL: {}{detail} [SQLSTATE {}]",
            db.message(),
            code.code()
        ),
    };
    StoreError::new(kind, message).with_source(err)
}

/// Prefixes an error's message with what was being done.
trait Context {
    fn context(self, what: &str) -> StoreError;
}

impl Context for StoreError {
    fn context(self, what: &str) -> StoreError {
        let message = format!("{what}: {}", self.message());
        self.with_message(message)
    }
}
