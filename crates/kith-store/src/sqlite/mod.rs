//! The embedded backend: one SQLite database in WAL mode.
//!
//! Assumptions (also in docs/internals/storage.md): WAL journaling with
//! `synchronous=FULL`, so a transaction that returned from `COMMIT` survives
//! `kill -9` and power loss; writers take the lock at `BEGIN IMMEDIATE` and
//! wait up to [`BUSY_TIMEOUT`] for it, so two processes writing one pack queue
//! instead of failing; readers never block writers.

mod bm25;
mod counting;
mod lengths;
pub(crate) mod lexical;
mod many;
mod postings;
pub mod readonly;
mod rows;
mod schema;
mod sql;
mod vector;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use kith_core::{
    Edge, Event, Node, NodeType, Operation, OperationKind, OwnerId, SourceId, Timestamp, Tombstone,
};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};
use uuid::Uuid;

pub use schema::SCHEMA_VERSION;

use crate::{
    DeletedNodes, EmbeddingModelCount, EventQuery, LexicalHit, LexicalQuery, NodeQuery,
    OperationQuery, OperationStamp, StatementLog, Stats, Store, StoreError, StoreErrorKind,
    StoredEvent, StoredNode, Tx, TxMode, VectorQuery, WorkItem, WorkQuery,
};

/// How long a writer waits for another process's write lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether [`SqliteStore::open`] may create the database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the file and schema if missing.
    CreateIfMissing,
    /// The file must exist.
    MustExist,
    /// The file must exist and is only read: nothing is migrated, write
    /// transactions are refused, and a pack on read-only storage can be
    /// read (see [`readonly`]).
    ReadOnly,
}

/// A SQLite-backed [`Store`]. Connections are pooled; each transaction uses
/// one connection for its whole life.
pub struct SqliteStore {
    path: PathBuf,
    access: readonly::Access,
    pool: Mutex<Vec<Connection>>,
    vectors: vector::VectorCache,
    /// Statements counted while recording ([`counting`]).
    statements: StatementLog,
    /// What lexical searches counted: owners' shares, words' matches.
    lexical: lexical::Memo,
}

impl SqliteStore {
    /// Opens (or creates) the database at `path` and brings its schema up to
    /// [`SCHEMA_VERSION`], refusing a newer one. [`OpenMode::ReadOnly`]
    /// migrates nothing and refuses an older schema instead.
    pub fn open(path: &Path, mode: OpenMode) -> Result<Self, StoreError> {
        memory_statistics_off();
        if mode != OpenMode::CreateIfMissing && !path.exists() {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("no database at {}", path.display()),
            ));
        }
        if mode == OpenMode::ReadOnly {
            let access = readonly::probe(path)?;
            return Ok(SqliteStore {
                path: path.to_path_buf(),
                access,
                pool: Mutex::new(Vec::new()),
                vectors: vector::VectorCache::default(),
                statements: StatementLog::default(),
                lexical: lexical::Memo::default(),
            });
        }
        let store = SqliteStore {
            path: path.to_path_buf(),
            access: readonly::Access::ReadWrite,
            pool: Mutex::new(Vec::new()),
            vectors: vector::VectorCache::default(),
            statements: StatementLog::default(),
            lexical: lexical::Memo::default(),
        };
        // Refuse a newer schema before anything (even the WAL switch) can
        // touch the file.
        if path.exists() {
            let probe = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
                .map_err(|e| readonly::open_error(path, e))?;
            probe.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
            let version = read_version(&probe).map_err(|e| readonly::with_cause(path, e))?;
            if version > SCHEMA_VERSION {
                return Err(too_new(version));
            }
        }
        let conn = store.connect()?;
        migrate(&conn)?;
        store.release(conn);
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version stored in the database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let conn = self.take()?;
        let v = read_version(&conn);
        self.release(conn);
        v
    }

    fn connect(&self) -> Result<Connection, StoreError> {
        if self.access != readonly::Access::ReadWrite {
            return readonly::connect(&self.path, self.access);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&self.path, flags)
            .map_err(|e| readonly::open_error(&self.path, e))?;
        // SQLite quietly opens a file it may not write read-only; every
        // write would then fail with "attempt to write a readonly
        // database" and no path. Say it here, with the reason.
        if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(readonly::not_writable(&self.path));
        }
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
        // WAL is persistent in the file; setting it again is cheap. It needs
        // the lock briefly, which the busy timeout covers.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| readonly::open_error(&self.path, e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::new(
                StoreErrorKind::Io,
                format!(
                    "{} cannot use WAL journaling (got {mode}); put the pack on a local file system",
                    self.path.display()
                ),
            ));
        }
        conn.execute_batch(
            // secure_delete: space freed by a delete or an update is
            // overwritten with zeros, so a forgotten message's bytes do not
            // linger in free pages of the file or its WAL.
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;
             PRAGMA secure_delete = ON;
             PRAGMA cache_size = -65536; PRAGMA mmap_size = 268435456;",
        )
        .map_err(map_err)?;
        keep_statements(&conn);
        postings::register(&conn)?;
        Ok(conn)
    }

    fn take(&self) -> Result<Connection, StoreError> {
        let pooled = self.pool.lock().map(|mut p| p.pop()).unwrap_or(None);
        match pooled {
            Some(c) => Ok(c),
            None => self.connect(),
        }
    }

    fn release(&self, conn: Connection) {
        if let Ok(mut pool) = self.pool.lock() {
            if pool.len() < 8 {
                pool.push(conn);
            }
        }
    }
}

/// Turns SQLite's allocation statistics off, once per process, before
/// the first connection. They are on by default and take a process-wide
/// mutex on every allocation SQLite makes, and kith never reads them.
/// SQLite accepts the setting only before it initialises: if something in
/// the process opened a database first, the call is refused (it returns
/// `SQLITE_MISUSE`) and changes nothing.
fn memory_statistics_off() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `sqlite3_config` with `SQLITE_CONFIG_MEMSTATUS` takes one
        // int; the `Once` keeps it from racing another call, and SQLite
        // refuses it (changing nothing) once initialised.
        unsafe {
            rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0);
        }
    });
}

/// How many prepared statements a connection keeps for reuse. One
/// retrieve runs some 30 different statements (rusqlite keeps 16 by
/// default, so a retrieve re-parsed most of its statements every time).
const STATEMENT_CACHE: usize = 128;

/// Sizes `conn`'s statement cache ([`STATEMENT_CACHE`]).
fn keep_statements(conn: &Connection) {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
}

fn read_version(conn: &Connection) -> Result<i64, StoreError> {
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get::<_, i64>(0).map(|n| n > 0),
        )
        .map_err(map_err)?;
    if !has_meta {
        return Ok(0);
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(map_err)?;
    match v {
        None => Ok(0),
        Some(text) => text.parse().map_err(|_| {
            StoreError::corrupted(format!("meta.schema_version is {text:?}, not a number"))
        }),
    }
}

/// Applies missing migrations in one transaction. The version is re-read
/// under the write lock, so two processes opening a new pack at once migrate
/// it once.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let current = read_version(conn)?;
    if current > SCHEMA_VERSION {
        return Err(too_new(current));
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE").map_err(map_err)?;
    let result = (|| {
        let current = read_version(conn)?;
        if current > SCHEMA_VERSION {
            return Err(too_new(current));
        }
        for (i, step) in schema::MIGRATIONS.iter().enumerate().skip(current as usize) {
            conn.execute_batch(step).map_err(|e| {
                map_err(e).with_context(&format!("schema migration to version {}", i + 1))
            })?;
        }
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(map_err)?;
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT").map_err(map_err),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn too_new(found: i64) -> StoreError {
    StoreError::new(
        StoreErrorKind::TooNew,
        format!(
            "database schema version {found} is newer than this kith (reads 1–{SCHEMA_VERSION}); upgrade kith"
        ),
    )
}

impl Store for SqliteStore {
    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    fn vector_probe(
        &self,
        q: &VectorQuery,
        k: usize,
    ) -> Result<Option<crate::VectorProbe>, StoreError> {
        let conn = self.take()?;
        let probe = self.vectors.probe(&conn, q, k);
        self.release(conn);
        probe
    }

    fn is_read_only(&self) -> bool {
        self.access != readonly::Access::ReadWrite
    }

    fn statement_log(&self) -> Option<&StatementLog> {
        Some(&self.statements)
    }

    fn begin(&self, mode: TxMode) -> Result<Box<dyn Tx + '_>, StoreError> {
        if mode == TxMode::Write && self.access != readonly::Access::ReadWrite {
            return Err(readonly::write_refused(&self.path));
        }
        let conn = self.take()?;
        let sql = match mode {
            TxMode::Read => "BEGIN DEFERRED",
            TxMode::Write => "BEGIN IMMEDIATE",
        };
        let counted = counting::mark(&conn, &self.statements);
        if let Err(e) = conn.execute_batch(sql) {
            let err = map_err(e);
            if let Some(m) = counted {
                m.settle(&conn, &self.statements);
            }
            self.release(conn);
            return Err(err);
        }
        let changes_at_begin = conn.total_changes();
        Ok(Box::new(SqliteTx {
            store: self,
            conn: Some(conn),
            mode,
            changes_at_begin,
            counted,
            // A read transaction's snapshot does not move; a write
            // transaction's own writes would change the counts.
            word_counts: (mode == TxMode::Read).then(Default::default),
        }))
    }

    fn compact(&self) -> Result<Vec<String>, StoreError> {
        if self.access != readonly::Access::ReadWrite {
            return Err(readonly::write_refused(&self.path));
        }
        let conn = self.take()?;
        let result = compact(&conn);
        self.release(conn);
        result
    }
}

/// Checkpoints the WAL into the database and truncates it, rebuilds the
/// database file (`VACUUM`: only live rows are copied, free pages go), and
/// truncates the WAL the rebuild wrote. A reader holding an old snapshot
/// keeps the WAL from being truncated; that is reported as Busy.
fn compact(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut done = vec!["secure_delete is on for every connection".to_string()];
    let checkpoint = |conn: &Connection| -> Result<(), StoreError> {
        let (busy, _, _): (i64, i64, i64) = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(map_err)?;
        if busy != 0 {
            return Err(StoreError::new(
                StoreErrorKind::Busy,
                "another connection is reading the pack, so its WAL cannot be truncated yet; \
                 run the compaction again when it is done",
            ));
        }
        Ok(())
    };
    checkpoint(conn)?;
    done.push("WAL checkpoint (TRUNCATE)".into());
    conn.execute_batch("VACUUM").map_err(map_err)?;
    done.push("VACUUM".into());
    checkpoint(conn)?;
    done.push("WAL checkpoint (TRUNCATE) after VACUUM".into());
    Ok(done)
}

struct SqliteTx<'a> {
    store: &'a SqliteStore,
    conn: Option<Connection>,
    mode: TxMode,
    /// The connection's `total_changes()` when the transaction began: a
    /// write transaction whose count moved changed a row, and its commit
    /// advances the write generation.
    changes_at_begin: u64,
    /// Set while the store's log counts this transaction's statements.
    counted: Option<counting::Mark>,
    /// The full-text index's version, for the words' match counts
    /// ([`lexical::WordCounts`]).
    word_counts: lexical::WordCounts,
}

impl SqliteTx<'_> {
    /// Sets an edge's `valid_to` from open to `end` (close) or from closed
    /// to open (`None`); anything else is a conflict.
    fn set_edge_end(&mut self, id: Uuid, end: Option<Timestamp>) -> Result<(), StoreError> {
        let writer = self.writer()?;
        let sql = if end.is_some() {
            "UPDATE edges SET valid_to = ?2 WHERE id = ?1 AND valid_to IS NULL"
        } else {
            "UPDATE edges SET valid_to = ?2 WHERE id = ?1 AND valid_to IS NOT NULL"
        };
        let changed = writer
            .execute(sql, params![uuid_text(id), end.map(|t| t.to_rfc3339())])
            .map_err(|err| map_err(err).with_context(&format!("edge {id}")))?;
        if changed == 1 {
            return Ok(());
        }
        let exists: bool = writer
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM edges WHERE id = ?1)",
                params![uuid_text(id)],
                |row| row.get(0),
            )
            .map_err(|err| map_err(err).with_context(&format!("edge {id}")))?;
        Err(if exists {
            let state = if end.is_some() { "closed" } else { "open" };
            StoreError::new(
                StoreErrorKind::Conflict,
                format!("edge {id} is already {state}"),
            )
        } else {
            StoreError::new(
                StoreErrorKind::NotFound,
                format!("edge {id} does not exist"),
            )
        })
    }

    /// Adds the statements this transaction ran to the store's log, when
    /// it was counted; `conn` is its connection, taken out for its end.
    fn settle(&mut self, conn: &Connection) {
        if let Some(mark) = self.counted.take() {
            mark.settle(conn, &self.store.statements);
        }
    }

    fn conn(&self) -> &Connection {
        // Present from `begin` until `commit` or drop takes it.
        self.conn.as_ref().expect("transaction connection is live")
    }

    /// The connection, for a write; refused in a read transaction, which
    /// did not take the write lock and must not try to upgrade.
    fn writer(&self) -> Result<&Connection, StoreError> {
        match self.mode {
            TxMode::Write => Ok(self.conn()),
            TxMode::Read => Err(StoreError::new(
                StoreErrorKind::Other,
                "a read transaction cannot write; begin it with TxMode::Write",
            )),
        }
    }
}

impl Drop for SqliteTx<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            // Not committed: undo everything. If even ROLLBACK fails the
            // connection is in an unknown state, so it is not reused.
            let rolled_back = conn.execute_batch("ROLLBACK").is_ok();
            self.settle(&conn);
            if rolled_back {
                self.store.release(conn);
            }
        }
    }
}

fn uuid_text(id: Uuid) -> String {
    id.to_string()
}

/// Tells in-process vector caches that the stored vectors changed: a
/// cache that sees another generation starts over (`vector.rs`).
fn bump_embeddings_generation(conn: &Connection) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('embeddings_generation', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![Uuid::new_v4().to_string()],
    )
    .map_err(map_err)?;
    Ok(())
}

/// Deletes the vectors of the nodes `ids` (as text) and, when there were
/// any, tells the vector caches ([`bump_embeddings_generation`]).
fn delete_vectors(conn: &Connection, ids: &[String]) -> Result<u64, StoreError> {
    let mut n = 0;
    for id in ids {
        n += conn
            .execute("DELETE FROM embeddings WHERE node_id = ?1", params![id])
            .map_err(map_err)? as u64;
    }
    if n > 0 {
        bump_embeddings_generation(conn)?;
    }
    Ok(n)
}

impl Tx for SqliteTx<'_> {
    fn insert_event(&mut self, e: &Event) -> Result<i64, StoreError> {
        let conn = self.writer()?;
        conn.execute(
            "INSERT INTO events (id, owner_id, scope, session_id, role, speaker, content,
                    content_sha256, event_time, event_time_ms, ingested_at, ingested_at_ms,
                    metadata, source_id, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                uuid_text(e.id),
                e.owner_id.as_str(),
                e.scope.as_str(),
                e.session_id.as_ref().map(|s| s.as_str()),
                e.role.as_str(),
                e.speaker.as_ref().map(|s| s.as_str()),
                e.content,
                e.content_sha256,
                e.event_time.map(|t| t.to_rfc3339()),
                e.event_time.map(|t| t.unix_millis()),
                e.ingested_at.to_rfc3339(),
                e.ingested_at.unix_millis(),
                rows::json_text(&e.metadata),
                e.source_id.as_str(),
                e.checksum,
            ],
        )
        .map_err(|err| map_err(err).with_context(&format!("event {}", e.id)))?;
        let seq = conn.last_insert_rowid();
        // Nodes written before their event (in the same transaction) get the
        // copied role and time now.
        conn.execute(
            "UPDATE nodes SET source_role = ?2, effective_ms = ?3
             WHERE source_event_id = ?1 AND source_role IS NULL",
            params![
                uuid_text(e.id),
                e.role.as_str(),
                e.effective_time().unix_millis()
            ],
        )
        .map_err(map_err)?;
        Ok(seq)
    }

    fn event_id_by_source(
        &mut self,
        owner: &OwnerId,
        source_id: &SourceId,
    ) -> Result<Option<Uuid>, StoreError> {
        let id: Option<String> = self
            .conn()
            .query_row(
                "SELECT id FROM events WHERE owner_id = ?1 AND source_id = ?2",
                params![owner.as_str(), source_id.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)?;
        id.map(|t| {
            Uuid::parse_str(&t).map_err(|e| StoreError::corrupted(format!("event id {t:?}: {e}")))
        })
        .transpose()
    }

    fn get_event(&mut self, id: Uuid) -> Result<Option<StoredEvent>, StoreError> {
        let sql = format!("SELECT {} FROM events WHERE id = ?1", rows::EVENT_COLUMNS);
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(id))],
            rows::event,
        )
        .map(|mut v| v.pop())
    }

    fn get_events(
        &mut self,
        owner: &OwnerId,
        ids: &[Uuid],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        many::events(self.conn(), owner, ids)
    }

    fn list_session_events(
        &mut self,
        owner: &OwnerId,
        sessions: &[kith_core::SessionId],
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        many::session_events(self.conn(), owner, sessions, limit)
    }

    fn get_nodes(&mut self, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        many::nodes(self.conn(), None, ids)
    }

    fn get_owned_nodes(&mut self, owner: &OwnerId, ids: &[Uuid]) -> Result<Vec<Node>, StoreError> {
        many::nodes(self.conn(), Some(owner), ids)
    }

    fn edges_of_nodes(
        &mut self,
        owner: &OwnerId,
        nodes: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, Vec<Edge>>, StoreError> {
        many::edges_of_nodes(self.conn(), owner, nodes)
    }

    fn list_events(&mut self, q: &EventQuery) -> Result<Vec<StoredEvent>, StoreError> {
        let mut select = sql::Select::new(
            format!("SELECT {} FROM events WHERE seq > ?", rows::EVENT_COLUMNS),
            vec![SqlValue::Integer(q.after_seq)],
        );
        select
            .eq("owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .eq("scope", q.scope.as_ref().map(|s| s.as_str()))
            .eq("session_id", q.session.as_ref().map(|s| s.as_str()))
            .int("seq <= ?", q.through_seq);
        let order = if q.newest_first { "seq DESC" } else { "seq" };
        let (sql, args) = select.finish(order, q.limit);
        query_all(self.conn(), &sql, &args, rows::event)
    }

    fn insert_node(&mut self, n: &Node) -> Result<(), StoreError> {
        let refs = serde_json::to_string(&n.evidence_refs)
            .map_err(|e| StoreError::new(StoreErrorKind::Other, e.to_string()))?;
        let conn = self.writer()?;
        conn.execute(
            "INSERT INTO nodes (id, owner_id, scope, session_id, node_type, content, metadata,
                confidence, lifecycle, epistemic_type, source_type, valid_from, valid_to,
                event_time, superseded_by, evidence_refs, source_event_id, created_at, updated_at,
                created_ms, updated_ms, source_role, effective_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21,
                (SELECT role FROM events WHERE id = ?17),
                (SELECT coalesce(event_time_ms, ingested_at_ms) FROM events WHERE id = ?17))",
            params![
                uuid_text(n.id),
                n.owner_id.as_str(),
                n.scope.as_str(),
                n.session_id.as_ref().map(|s| s.as_str()),
                n.node_type.as_str(),
                n.content,
                rows::json_text(&n.metadata),
                n.confidence,
                n.lifecycle.as_str(),
                n.epistemic_type.as_str(),
                n.source_type.as_str(),
                n.valid_from.to_rfc3339(),
                n.valid_to.map(|t| t.to_rfc3339()),
                n.event_time.map(|t| t.to_rfc3339()),
                n.superseded_by.map(uuid_text),
                refs,
                n.evidence_refs.first().copied().map(uuid_text),
                n.created_at.to_rfc3339(),
                n.updated_at.to_rfc3339(),
                n.created_at.unix_millis(),
                n.updated_at.unix_millis(),
            ],
        )
        .map_err(|err| map_err(err).with_context(&format!("node {}", n.id)))?;
        let rowid = conn.last_insert_rowid();
        conn.execute(
            "INSERT INTO node_fts (rowid, content) VALUES (?1, ?2)",
            params![rowid, n.content],
        )
        .map_err(map_err)?;
        Ok(())
    }

    fn get_node(&mut self, id: Uuid) -> Result<Option<Node>, StoreError> {
        let sql = format!("SELECT {} FROM nodes WHERE id = ?1", rows::NODE_COLUMNS);
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(id))],
            rows::node,
        )
        .map(|mut v| v.pop())
    }

    fn list_nodes(&mut self, q: &NodeQuery) -> Result<Vec<StoredNode>, StoreError> {
        let mut select = sql::Select::new(
            format!(
                "SELECT seq, {} FROM nodes WHERE seq > ?",
                rows::NODE_COLUMNS
            ),
            vec![SqlValue::Integer(q.after_seq)],
        );
        let event = q.event_id.map(uuid_text);
        select
            .eq("owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .eq("scope", q.scope.as_ref().map(|s| s.as_str()))
            .eq("source_event_id", event.as_deref())
            .any("node_type", q.node_types.iter().map(|t| t.as_str()));
        if let Some(key) = &q.metadata_key {
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(StoreError::new(
                    StoreErrorKind::Other,
                    format!("metadata key {key:?} must be letters, digits and _"),
                ));
            }
            let path = format!("$.{key}");
            select.text("json_type(metadata, ?) IS NOT NULL", &path);
        }
        let order = if q.newest_first { "seq DESC" } else { "seq" };
        let (sql, args) = select.finish(order, q.limit);
        query_all(self.conn(), &sql, &args, |r| {
            Ok(StoredNode {
                seq: r.get("seq").map_err(map_err)?,
                node: rows::node(r)?,
            })
        })
    }

    fn insert_edge(&mut self, e: &Edge) -> Result<(), StoreError> {
        self.writer()?
            .execute(
                "INSERT INTO edges (id, owner_id, scope, source_id, target_id, edge_type,
                    confidence, valid_from, valid_to, provenance_event_id, metadata, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    uuid_text(e.id),
                    e.owner_id.as_str(),
                    e.scope.as_str(),
                    uuid_text(e.source_id),
                    uuid_text(e.target_id),
                    e.edge_type.as_str(),
                    e.confidence,
                    e.valid_from.to_rfc3339(),
                    e.valid_to.map(|t| t.to_rfc3339()),
                    e.provenance_event_id.map(uuid_text),
                    rows::json_text(&e.metadata),
                    e.created_at.to_rfc3339(),
                ],
            )
            .map_err(|err| map_err(err).with_context(&format!("edge {}", e.id)))?;
        Ok(())
    }

    fn update_node(&mut self, n: &Node) -> Result<(), StoreError> {
        let refs = serde_json::to_string(&n.evidence_refs)
            .map_err(|e| StoreError::new(StoreErrorKind::Other, e.to_string()))?;
        let conn = self.writer()?;
        let old: Option<(i64, String)> = conn
            .query_row(
                "SELECT seq, content FROM nodes WHERE id = ?1",
                params![uuid_text(n.id)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(map_err)?;
        let Some((seq, old_content)) = old else {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("node {} does not exist", n.id),
            ));
        };
        conn.execute(
            "UPDATE nodes SET content = ?2, metadata = ?3, confidence = ?4, lifecycle = ?5,
                epistemic_type = ?6, valid_from = ?7, valid_to = ?8, superseded_by = ?9,
                evidence_refs = ?10, updated_at = ?11, updated_ms = ?12
             WHERE id = ?1",
            params![
                uuid_text(n.id),
                n.content,
                rows::json_text(&n.metadata),
                n.confidence,
                n.lifecycle.as_str(),
                n.epistemic_type.as_str(),
                n.valid_from.to_rfc3339(),
                n.valid_to.map(|t| t.to_rfc3339()),
                n.superseded_by.map(uuid_text),
                refs,
                n.updated_at.to_rfc3339(),
                n.updated_at.unix_millis(),
            ],
        )
        .map_err(|err| map_err(err).with_context(&format!("node {}", n.id)))?;
        if old_content != n.content {
            // External-content FTS5: delete the old text, insert the new.
            conn.execute(
                "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
                params![seq, old_content],
            )
            .map_err(map_err)?;
            conn.execute(
                "INSERT INTO node_fts (rowid, content) VALUES (?1, ?2)",
                params![seq, n.content],
            )
            .map_err(map_err)?;
            lengths::note_rewrite(conn)?;
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
        let columns = rows::NODE_COLUMNS
            .split(", ")
            .map(|c| format!("n.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let mut select = sql::Select::new(
            format!(
                "SELECT {columns} FROM edges g JOIN nodes n ON n.id = g.target_id
                 WHERE g.source_id = ? AND g.edge_type = 'HAS_FACT' AND g.valid_to IS NULL
                   AND n.node_type <> 'entity'
                   AND n.lifecycle IN ('tentative', 'stable', 'contested')"
            ),
            vec![SqlValue::Text(uuid_text(subject))],
        );
        // SQL's key where it is exact, else every row, judged below by the
        // one definition (crate::predicates).
        let keys = crate::predicates::keys(predicates);
        let marks = vec!["?"; keys.len()].join(", ");
        select.raw(
            &format!(
                "(replace(replace(lower(trim(json_extract(n.metadata, '$.predicate'))), ' ', '_'), '-', '_') IN ({marks})
                  OR json_extract(n.metadata, '$.predicate') GLOB '*[^{chars}]*'
                  OR instr(json_extract(n.metadata, '$.predicate'), '  ') > 0)",
                chars = kith_core::text::PREDICATE_SQL_EXACT_CHARS
            ),
            keys.iter().map(|k| SqlValue::Text(k.clone())).collect(),
        );
        let (sql, args) = select.finish("n.seq", 0);
        let rows = query_all(self.conn(), &sql, &args, rows::node)?;
        Ok(crate::predicates::keep_matching(rows, &keys))
    }

    fn edges_of(&mut self, node: Uuid) -> Result<Vec<Edge>, StoreError> {
        let sql = format!(
            "SELECT {} FROM edges WHERE source_id = ?1 OR target_id = ?1 ORDER BY seq",
            rows::EDGE_COLUMNS
        );
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(node))],
            rows::edge,
        )
    }

    fn get_edge(&mut self, id: Uuid) -> Result<Option<Edge>, StoreError> {
        let sql = format!("SELECT {} FROM edges WHERE id = ?1", rows::EDGE_COLUMNS);
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(id))],
            rows::edge,
        )
        .map(|mut v| v.pop())
    }

    fn delete_edge(&mut self, id: Uuid) -> Result<(), StoreError> {
        let removed = self
            .writer()?
            .execute("DELETE FROM edges WHERE id = ?1", params![uuid_text(id)])
            .map_err(|err| map_err(err).with_context(&format!("edge {id}")))?;
        if removed == 0 {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("edge {id} does not exist"),
            ));
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
        let conn = self.writer()?;
        let state: Option<Option<String>> = conn
            .query_row(
                "SELECT forgotten_at FROM events WHERE id = ?1",
                params![uuid_text(id)],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)?;
        match state {
            None => {
                return Err(StoreError::new(
                    StoreErrorKind::NotFound,
                    format!("event {id} does not exist"),
                ))
            }
            Some(Some(_)) => {
                return Err(StoreError::new(
                    StoreErrorKind::Conflict,
                    format!("event {id} is already forgotten"),
                ))
            }
            Some(None) => {}
        }
        conn.execute(
            "UPDATE events SET content = '', speaker = NULL, metadata = NULL,
                forgotten_at = ?2, forgotten_reason = ?3, forgotten_by = ?4,
                tombstone_checksum = ?5
             WHERE id = ?1",
            params![
                uuid_text(id),
                t.forgotten_at.to_rfc3339(),
                t.reason,
                uuid_text(t.operation_id),
                t.checksum
            ],
        )
        .map_err(|err| map_err(err).with_context(&format!("event {id}")))?;
        Ok(())
    }

    fn delete_nodes(&mut self, ids: &[Uuid]) -> Result<DeletedNodes, StoreError> {
        let conn = self.writer()?;
        let mut out = DeletedNodes::default();
        let mut removed = Vec::new();
        for id in ids {
            let id = uuid_text(*id);
            let row: Option<(i64, String)> = conn
                .query_row(
                    "SELECT seq, content FROM nodes WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(map_err)?;
            let Some((seq, content)) = row else { continue };
            // External-content FTS5 forgets a row only when told its text.
            conn.execute(
                "INSERT INTO node_fts (node_fts, rowid, content) VALUES ('delete', ?1, ?2)",
                params![seq, content],
            )
            .map_err(map_err)?;
            conn.execute("DELETE FROM nodes WHERE seq = ?1", params![seq])
                .map_err(map_err)?;
            out.nodes += 1;
            out.edges += conn
                .execute(
                    "DELETE FROM edges WHERE source_id = ?1 OR target_id = ?1",
                    params![id],
                )
                .map_err(map_err)? as u64;
            removed.push(id);
        }
        if out.nodes > 0 {
            // A 'delete' only adds a delete marker; the old tokens stay in
            // older index segments until they are merged. 'optimize' merges
            // every segment, so the erased text's tokens are gone from the
            // index in this transaction.
            conn.execute("INSERT INTO node_fts (node_fts) VALUES ('optimize')", [])
                .map_err(map_err)?;
        }
        out.vectors = delete_vectors(conn, &removed)?;
        Ok(out)
    }

    fn delete_edges_from_events(
        &mut self,
        owner: &OwnerId,
        events: &[Uuid],
    ) -> Result<u64, StoreError> {
        let conn = self.writer()?;
        let mut removed = 0;
        for e in events {
            removed += conn
                .execute(
                    "DELETE FROM edges WHERE owner_id = ?1 AND provenance_event_id = ?2",
                    params![owner.as_str(), uuid_text(*e)],
                )
                .map_err(map_err)? as u64;
        }
        Ok(removed)
    }

    fn delete_work_item(&mut self, event_id: Uuid) -> Result<bool, StoreError> {
        let removed = self
            .writer()?
            .execute(
                "DELETE FROM work_items WHERE event_id = ?1",
                params![uuid_text(event_id)],
            )
            .map_err(map_err)?;
        Ok(removed > 0)
    }

    fn rewrite_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        let Some(old) = self.get_operation(op.id)? else {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("journal record {} does not exist", op.id),
            ));
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
            return Err(StoreError::new(
                StoreErrorKind::Conflict,
                format!(
                    "journal record {}: only its payload and checksum may be rewritten",
                    op.id
                ),
            ));
        }
        self.writer()?
            .execute(
                "UPDATE operations SET payload = ?2, checksum = ?3 WHERE id = ?1",
                params![
                    uuid_text(op.id),
                    kith_core::canon::to_canonical_string(&op.payload),
                    op.checksum
                ],
            )
            .map_err(|err| map_err(err).with_context(&format!("operation {}", op.id)))?;
        Ok(())
    }

    fn append_operation(&mut self, op: &Operation) -> Result<(), StoreError> {
        // Cached: every retrieval receipt comes this way.
        self.writer()?
            .prepare_cached(
                "INSERT INTO operations (id, kind, owner_id, scope, target_id, payload,
                    created_at, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    uuid_text(op.id),
                    op.kind.as_str(),
                    op.owner_id.as_str(),
                    op.scope.as_str(),
                    op.target_id.map(uuid_text),
                    kith_core::canon::to_canonical_string(&op.payload),
                    op.created_at.to_rfc3339(),
                    op.checksum,
                ])
            })
            .map_err(|err| map_err(err).with_context(&format!("operation {}", op.id)))?;
        Ok(())
    }

    fn get_operation(&mut self, id: Uuid) -> Result<Option<Operation>, StoreError> {
        let sql = format!(
            "SELECT {} FROM operations WHERE id = ?1",
            rows::OPERATION_COLUMNS
        );
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(id))],
            rows::operation,
        )
        .map(|mut v| v.pop())
    }

    fn scan_operations(
        &mut self,
        after_seq: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Operation)>, StoreError> {
        let select = sql::Select::new(
            format!(
                "SELECT seq, {} FROM operations WHERE seq > ?",
                rows::OPERATION_COLUMNS
            ),
            vec![SqlValue::Integer(after_seq)],
        );
        let (sql, args) = select.finish("seq", limit);
        query_all(self.conn(), &sql, &args, |r| {
            Ok((r.get("seq").map_err(map_err)?, rows::operation(r)?))
        })
    }

    fn list_operations(&mut self, q: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
        let mut select = sql::Select::new(
            format!(
                "SELECT {} FROM operations WHERE owner_id = ?",
                rows::OPERATION_COLUMNS
            ),
            vec![SqlValue::Text(q.owner.as_str().to_string())],
        );
        let target = q.target_id.map(uuid_text);
        select
            .eq("kind", q.kind.map(|k| k.as_str()))
            .eq("target_id", target.as_deref());
        let (sql, args) = select.finish("seq", q.limit);
        query_all(self.conn(), &sql, &args, rows::operation)
    }

    fn count_operations(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
    ) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn()
            .prepare_cached("SELECT count(*) FROM operations WHERE owner_id = ?1 AND kind = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![owner.as_str(), kind.as_str()], |r| r.get(0))
            })
            .map_err(map_err)?;
        Ok(n as u64)
    }

    fn operation_stamps(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        limit: usize,
    ) -> Result<Vec<OperationStamp>, StoreError> {
        let select = sql::Select::new(
            "SELECT seq, id, created_at FROM operations WHERE owner_id = ? AND kind = ?"
                .to_string(),
            vec![
                SqlValue::Text(owner.as_str().to_string()),
                SqlValue::Text(kind.as_str().to_string()),
            ],
        );
        let (sql, args) = select.finish("seq", limit);
        query_all(self.conn(), &sql, &args, rows::operation_stamp)
    }

    fn delete_operations(
        &mut self,
        owner: &OwnerId,
        kind: OperationKind,
        ids: &[Uuid],
    ) -> Result<u64, StoreError> {
        let conn = self.writer()?;
        let mut removed = 0;
        for id in ids {
            removed += conn
                .execute(
                    "DELETE FROM operations WHERE id = ?1 AND owner_id = ?2 AND kind = ?3",
                    params![uuid_text(*id), owner.as_str(), kind.as_str()],
                )
                .map_err(map_err)? as u64;
        }
        Ok(removed)
    }

    fn insert_work_item(&mut self, w: &WorkItem) -> Result<(), StoreError> {
        self.writer()?
            .execute(
                "INSERT INTO work_items (event_id, owner_id, scope, status, attempts, reason_code,
                    last_error, lease_until_ms, options, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    uuid_text(w.event_id),
                    w.owner_id.as_str(),
                    w.scope.as_str(),
                    w.status.as_str(),
                    w.attempts,
                    w.reason_code,
                    w.last_error,
                    w.lease_until_ms,
                    kith_core::canon::to_canonical_string(&w.options),
                    w.created_at.to_rfc3339(),
                    w.updated_at.to_rfc3339(),
                ],
            )
            .map_err(|err| map_err(err).with_context(&format!("work item {}", w.event_id)))?;
        Ok(())
    }

    fn get_work_item(&mut self, event_id: Uuid) -> Result<Option<WorkItem>, StoreError> {
        let sql = format!(
            "SELECT {} FROM work_items WHERE event_id = ?1",
            rows::WORK_COLUMNS
        );
        query_all(
            self.conn(),
            &sql,
            &[SqlValue::Text(uuid_text(event_id))],
            rows::work_item,
        )
        .map(|mut v| v.pop())
    }

    fn update_work_item(&mut self, w: &WorkItem) -> Result<(), StoreError> {
        let changed = self
            .writer()?
            .execute(
                "UPDATE work_items SET status = ?2, attempts = ?3, reason_code = ?4,
                    last_error = ?5, lease_until_ms = ?6, options = ?7, updated_at = ?8
                 WHERE event_id = ?1",
                params![
                    uuid_text(w.event_id),
                    w.status.as_str(),
                    w.attempts,
                    w.reason_code,
                    w.last_error,
                    w.lease_until_ms,
                    kith_core::canon::to_canonical_string(&w.options),
                    w.updated_at.to_rfc3339(),
                ],
            )
            .map_err(map_err)?;
        if changed == 0 {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("work item {} does not exist", w.event_id),
            ));
        }
        Ok(())
    }

    fn list_work_items(&mut self, q: &WorkQuery) -> Result<Vec<WorkItem>, StoreError> {
        let mut select = sql::Select::new(
            format!("SELECT {} FROM work_items WHERE 1 = 1", rows::WORK_COLUMNS),
            Vec::new(),
        );
        select
            .eq("owner_id", q.owner.as_ref().map(|o| o.as_str()))
            .any("status", q.statuses.iter().map(|s| s.as_str()))
            .int(
                "(status <> 'running' OR coalesce(lease_until_ms, 0) < ?)",
                q.lease_expired_before_ms,
            );
        let (sql, args) = select.finish("seq", q.limit);
        query_all(self.conn(), &sql, &args, rows::work_item)
    }

    fn search_lexical(&mut self, q: &LexicalQuery) -> Result<Vec<LexicalHit>, StoreError> {
        let conn = self.conn.as_ref().expect("transaction connection is live");
        lexical::search(conn, q, &self.store.lexical, &mut self.word_counts)
    }

    fn put_embedding(
        &mut self,
        node_id: Uuid,
        model: &str,
        vector: &[f32],
    ) -> Result<(), StoreError> {
        if vector.is_empty() || vector.iter().any(|v| !v.is_finite()) {
            return Err(StoreError::new(
                StoreErrorKind::Other,
                format!("node {node_id}: an embedding must be non-empty and finite"),
            ));
        }
        let conn = self.writer()?;
        let owner: Option<String> = conn
            .query_row(
                "SELECT owner_id FROM nodes WHERE id = ?1",
                params![uuid_text(node_id)],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)?;
        let Some(owner) = owner else {
            return Err(StoreError::new(
                StoreErrorKind::NotFound,
                format!("node {node_id} does not exist"),
            ));
        };
        // A new row (new seq) rather than an in-place update, so vector
        // caches that load by seq see the replacement.
        conn.execute(
            "DELETE FROM embeddings WHERE node_id = ?1",
            params![uuid_text(node_id)],
        )
        .map_err(map_err)?;
        conn.execute(
            "INSERT INTO embeddings (node_id, owner_id, model, dim, vector)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                uuid_text(node_id),
                owner,
                model,
                vector.len() as i64,
                vector::encode(vector)
            ],
        )
        .map_err(map_err)?;
        Ok(())
    }

    fn get_embedding(&mut self, node_id: Uuid) -> Result<Option<(String, Vec<f32>)>, StoreError> {
        let row: Option<(String, Vec<u8>)> = self
            .conn()
            .query_row(
                "SELECT model, vector FROM embeddings WHERE node_id = ?1",
                params![uuid_text(node_id)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(map_err)?;
        row.map(|(model, blob)| {
            vector::decode(&blob).map(|v| (model, v)).ok_or_else(|| {
                StoreError::corrupted(format!("embedding of node {node_id}: bad blob"))
            })
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
        let columns: Vec<String> = rows::NODE_COLUMNS
            .split(',')
            .map(|c| format!("n.{}", c.trim()))
            .collect();
        let mut select = sql::Select::new(
            format!(
                "SELECT n.seq, {} FROM nodes n
                 LEFT JOIN embeddings e ON e.node_id = n.id AND e.model = ?
                 WHERE e.node_id IS NULL AND n.seq > ?",
                columns.join(", ")
            ),
            vec![
                SqlValue::Text(model.to_string()),
                SqlValue::Integer(after_seq),
            ],
        );
        select.eq("n.owner_id", owner.map(|o| o.as_str()));
        let (sql, args) = select.finish("n.seq", limit);
        query_all(self.conn(), &sql, &args, |r| {
            Ok(StoredNode {
                seq: r.get("seq").map_err(map_err)?,
                node: rows::node(r)?,
            })
        })
    }

    fn delete_embeddings(&mut self) -> Result<u64, StoreError> {
        let conn = self.writer()?;
        let n = conn
            .execute("DELETE FROM embeddings", [])
            .map_err(map_err)?;
        bump_embeddings_generation(conn)?;
        Ok(n as u64)
    }

    fn delete_node_embeddings(&mut self, ids: &[Uuid]) -> Result<u64, StoreError> {
        let conn = self.writer()?;
        let ids: Vec<String> = ids.iter().map(|id| uuid_text(*id)).collect();
        delete_vectors(conn, &ids)
    }

    fn embedding_models(&mut self) -> Result<Vec<EmbeddingModelCount>, StoreError> {
        query_all(
            self.conn(),
            "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim ORDER BY model, dim",
            &[],
            |r| {
                Ok(EmbeddingModelCount {
                    model: r.get(0).map_err(map_err)?,
                    dimension: r.get::<_, i64>(1).map_err(map_err)? as usize,
                    vectors: r.get::<_, i64>(2).map_err(map_err)? as u64,
                })
            },
        )
    }

    fn search_vector(&mut self, query: &VectorQuery) -> Result<Vec<LexicalHit>, StoreError> {
        vector::search(self.conn(), &self.store.vectors, query)
    }

    fn stats(&mut self, owner: Option<&OwnerId>) -> Result<Stats, StoreError> {
        let conn = self.conn();
        let o = owner.map(|o| o.as_str().to_string());
        let count = |sql: &str| -> Result<u64, StoreError> {
            conn.query_row(sql, params![o], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(map_err)
        };
        let events = count("SELECT count(*) FROM events WHERE ?1 IS NULL OR owner_id = ?1")?;
        let edges = count("SELECT count(*) FROM edges WHERE ?1 IS NULL OR owner_id = ?1")?;
        let operations =
            count("SELECT count(*) FROM operations WHERE ?1 IS NULL OR owner_id = ?1")?;
        let owners =
            count("SELECT count(DISTINCT owner_id) FROM events WHERE ?1 IS NULL OR owner_id = ?1")?;
        let sessions = count(
            "SELECT count(*) FROM (SELECT DISTINCT owner_id, session_id FROM events
             WHERE session_id IS NOT NULL AND (?1 IS NULL OR owner_id = ?1))",
        )?;
        let mut stmt = conn
            .prepare(
                "SELECT node_type, count(*) FROM nodes WHERE ?1 IS NULL OR owner_id = ?1
                 GROUP BY node_type ORDER BY node_type",
            )
            .map_err(map_err)?;
        let mut nodes_by_type = Vec::new();
        let mut rows = stmt.query(params![o]).map_err(map_err)?;
        while let Some(row) = rows.next().map_err(map_err)? {
            let t: String = row.get(0).map_err(map_err)?;
            let n: i64 = row.get(1).map_err(map_err)?;
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
        self.integrity("PRAGMA quick_check")
    }

    fn check_integrity_deep(&mut self) -> Result<Vec<String>, StoreError> {
        self.integrity("PRAGMA integrity_check")
    }

    fn get_setting(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        let key = crate::setting_key(key)?;
        self.conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
                r.get(0)
            })
            .optional()
            .map_err(map_err)
    }

    fn set_setting(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        let key = crate::setting_key(key)?;
        let conn = self.writer()?;
        match value {
            Some(v) => conn.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, v],
            ),
            None => conn.execute("DELETE FROM meta WHERE key = ?1", params![key]),
        }
        .map_err(map_err)?;
        Ok(())
    }

    fn write_generation(&mut self) -> Result<Option<u64>, StoreError> {
        let text: Option<String> = self
            .conn()
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![crate::WRITE_GENERATION_KEY],
                |r| r.get(0),
            )
            .optional()
            .map_err(map_err)?;
        match text {
            None => Ok(Some(0)),
            Some(t) => t.parse().map(Some).map_err(|_| {
                StoreError::corrupted(format!("meta.write_generation is {t:?}, not a number"))
            }),
        }
    }

    fn commit(mut self: Box<Self>) -> Result<(), StoreError> {
        let conn = self.conn.take().expect("transaction connection is live");
        // `total_changes` counts rows changed by statements and triggers; a
        // write transaction that changed none leaves the generation alone,
        // so a pass that only looked does not make the next one look again.
        if self.mode == TxMode::Write && conn.total_changes() != self.changes_at_begin {
            let bumped = conn
                .prepare_cached(
                    "INSERT INTO meta (key, value) VALUES (?1, '1')
                     ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
                )
                .and_then(|mut stmt| stmt.execute(params![crate::WRITE_GENERATION_KEY]));
            if let Err(e) = bumped {
                let _ = conn.execute_batch("ROLLBACK");
                self.settle(&conn);
                return Err(map_err(e).with_context("commit"));
            }
        }
        let committed = conn.execute_batch("COMMIT");
        if committed.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.settle(&conn);
        match committed {
            Ok(()) => {
                self.store.release(conn);
                Ok(())
            }
            Err(e) => Err(map_err(e).with_context("commit")),
        }
    }
}

/// Runs `sql` and decodes every row with `decode`.
fn query_all<T>(
    conn: &Connection,
    sql: &str,
    args: &[SqlValue],
    decode: impl Fn(&rusqlite::Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(args.iter()))
        .map_err(map_err)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(map_err)? {
        out.push(decode(row)?);
    }
    Ok(out)
}

/// Sorts a SQLite error into a [`StoreErrorKind`] with a readable sentence.
impl SqliteTx<'_> {
    /// The backend's checks, with `page_check` (quick or full) first.
    fn integrity(&mut self, page_check: &str) -> Result<Vec<String>, StoreError> {
        // FTS5's integrity check is issued as an INSERT command, so it needs
        // the write lock; it changes nothing. A read-only store cannot take
        // that lock: there it runs every other check.
        let read_only = self.mode == TxMode::Read && self.store.is_read_only();
        let conn = if read_only {
            self.conn()
        } else {
            self.writer()?
        };
        let mut problems = Vec::new();
        let mut stmt = conn.prepare(page_check).map_err(map_err)?;

        let mut rows = stmt.query([]).map_err(map_err)?;
        while let Some(row) = rows.next().map_err(map_err)? {
            let line: String = row.get(0).map_err(map_err)?;
            if line != "ok" {
                problems.push(format!("sqlite: {line}"));
            }
        }
        drop(rows);
        drop(stmt);
        let fts_check = if read_only {
            Ok(0)
        } else {
            conn.execute(
                "INSERT INTO node_fts (node_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )
        };
        if let Err(e) = fts_check {
            let err = map_err(e);
            if err.kind() == StoreErrorKind::Busy {
                return Err(err);
            }
            problems.push(format!("lexical index does not match the nodes: {err}"));
        }
        let dangling: [(&str, &str); 3] = [
            (
                "SELECT n.id FROM nodes n LEFT JOIN events e ON e.id = n.source_event_id
                 WHERE n.source_event_id IS NOT NULL AND e.id IS NULL LIMIT 20",
                "node {} cites an event that does not exist",
            ),
            (
                "SELECT g.id FROM edges g LEFT JOIN nodes s ON s.id = g.source_id
                 LEFT JOIN nodes t ON t.id = g.target_id WHERE s.id IS NULL OR t.id IS NULL LIMIT 20",
                "edge {} points at a node that does not exist",
            ),
            (
                "SELECT n.id FROM nodes n JOIN events e ON e.id = n.source_event_id
                 WHERE e.owner_id <> n.owner_id LIMIT 20",
                "node {} belongs to another owner than its source event",
            ),
        ];
        for (sql, message) in dangling {
            let ids = query_all(conn, sql, &[], |r| r.get::<_, String>(0).map_err(map_err))?;
            problems.extend(ids.into_iter().map(|id| message.replace("{}", &id)));
        }
        Ok(problems)
    }
}

fn map_err(err: rusqlite::Error) -> StoreError {
    let kind = match &err {
        rusqlite::Error::SqliteFailure(e, _) => match e.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => StoreErrorKind::Busy,
            ErrorCode::ConstraintViolation => StoreErrorKind::Conflict,
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => StoreErrorKind::Corrupted,
            ErrorCode::CannotOpen
            | ErrorCode::SystemIoFailure
            | ErrorCode::DiskFull
            | ErrorCode::ReadOnly
            | ErrorCode::PermissionDenied => StoreErrorKind::Io,
            _ => StoreErrorKind::Other,
        },
        _ => StoreErrorKind::Other,
    };
    let message = match kind {
        StoreErrorKind::Busy => format!(
            "the pack is busy: another process held its write lock for more than {} s ({err}); try again",
            BUSY_TIMEOUT.as_secs()
        ),
        StoreErrorKind::Corrupted => format!("the database is damaged: {err}"),
        _ => err.to_string(),
    };
    StoreError::new(kind, message).with_source(err)
}

impl StoreError {
    /// Prefixes the message with what was being done.
    fn with_context(self, what: &str) -> StoreError {
        let message = format!("{what}: {}", self.message());
        self.with_message(message)
    }
}
