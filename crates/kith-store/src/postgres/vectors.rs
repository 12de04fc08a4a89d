//! Exact vector search for PostgreSQL from an in-process copy of each
//! owner's vectors.
//!
//! pgvector's exact scan costs about a microsecond a row on this hardware
//! (100k vectors: ~125 ms a query), and an HNSW index would make results
//! approximate. So, as on SQLite, a [`VectorCache`] keeps a copy of an owner's
//! vectors in the process and answers with [`crate::vector_scan`]; the
//! database re-checks the best candidates (lifecycle can change) and supplies
//! their provenance.
//!
//! Keeping the copy right:
//! - **Per owner, loaded on demand.** A shared server may hold many owners;
//!   only those this process searches are copied. The first search of an
//!   owner is answered by the SQL scan while a background thread (its own
//!   connection and snapshot) loads the owner's vectors
//!   ([`VectorCacheMode::Background`], the default), so a one-shot command
//!   never pays for a copy it will not reuse.
//! - **Grows by `seq`.** Every search first reads the owner's rows above the
//!   last `seq` copied. Writers hold kith's write lock
//!   ([`super::WRITE_LOCK_KEY`]) from their first statement to commit, so
//!   `seq`s are handed out in commit order and a snapshot always sees a
//!   prefix of them: nothing is skipped. Rows newer than the searching
//!   transaction's snapshot (copied by a later one) are left out of its scan
//!   by `seq`.
//! - **Replacements and rebuilds.** A replaced embedding is a new row with a
//!   new `seq`, which overwrites the node's slot. `delete_embeddings` bumps
//!   `kith_meta.embeddings_generation`; a copy of another generation is
//!   dropped.
//! - **No lock during a scan.** The cache's mutex guards the map of owners
//!   and is held only to look an owner up and to publish; an owner that is
//!   behind the searching transaction is grown under that owner's own lock
//!   (the rows fetched and absorbed outside the cache's mutex), and every
//!   scan reads an immutable snapshot ([`MatrixView`]) with no lock held.
//! - **Bounded memory.** Copies are capped at `KITH_VECTOR_CACHE_MB`
//!   (default 2048) in total; the least recently searched owners are dropped
//!   first, and an owner too big for the cap alone is searched in SQL.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use kith_core::{NodeType, Role};
use postgres::types::ToSql;
use postgres::{NoTls, Row};
use uuid::Uuid;

use super::search::PgVector;
use crate::vector_scan::{IndexBuild, Matrix, MatrixView, RowMeta};
use crate::{StoreError, StoreErrorKind, VectorQuery};

/// How a [`super::PgStore`] answers vector searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorCacheMode {
    /// Always the exact scan in SQL (pgvector); nothing held in memory.
    Off,
    /// SQL until a background thread has copied the owner's vectors, then
    /// the in-process scan (the default).
    Background,
    /// The first search of an owner copies its vectors before answering
    /// (deterministic; for tests and benchmarks).
    Eager,
}

impl VectorCacheMode {
    /// Reads `KITH_PG_VECTOR_CACHE` (`off`, `background`, `eager`); `None`
    /// when it is unset.
    pub fn from_env() -> Result<Option<Self>, StoreError> {
        match std::env::var("KITH_PG_VECTOR_CACHE") {
            Ok(v) => Self::parse(Some(&v)).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// A `KITH_PG_VECTOR_CACHE` value (`None`: unset).
    pub fn parse(value: Option<&str>) -> Result<Self, StoreError> {
        match value {
            None => Ok(VectorCacheMode::Background),
            Some(v) => match v.trim() {
                "off" => Ok(VectorCacheMode::Off),
                "background" | "" => Ok(VectorCacheMode::Background),
                "eager" => Ok(VectorCacheMode::Eager),
                other => Err(StoreError::new(
                    StoreErrorKind::Other,
                    format!("KITH_PG_VECTOR_CACHE is {other:?}; use off, background or eager"),
                )),
            },
        }
    }
}

/// Default cap on the vectors held, in MiB (`KITH_VECTOR_CACHE_MB`).
pub const DEFAULT_BUDGET_MB: usize = 2048;

/// One owner's copied vectors, by model: the snapshot searches scan, and
/// the writer's copy it is taken from.
#[derive(Debug, Default)]
struct OwnerVectors {
    generation: Option<String>,
    /// Every row of the owner up to this `seq` is in `views`.
    last_seq: i64,
    views: Arc<HashMap<String, Arc<MatrixView>>>,
    /// The writer's copy: locked by a search that grows it (one owner's
    /// growers wait for each other; nobody else does).
    writer: Arc<Mutex<OwnerWriter>>,
    bytes: usize,
    last_used: u64,
}

/// The matrices a search grows, and the last `seq` copied into them.
#[derive(Debug, Default)]
struct OwnerWriter {
    last_seq: i64,
    matrices: HashMap<String, Matrix>,
}

impl OwnerWriter {
    fn bytes(&self) -> usize {
        self.matrices.values().map(Matrix::bytes).sum()
    }

    fn views(&self) -> Arc<HashMap<String, Arc<MatrixView>>> {
        Arc::new(
            self.matrices
                .iter()
                .map(|(model, m)| (model.clone(), m.view()))
                .collect(),
        )
    }

    /// Copies rows of [`ROWS_SQL`] in `seq` order (rows at or below
    /// `last_seq`, copied by another search meanwhile, are skipped).
    fn absorb(&mut self, row: &Row) -> Result<(), StoreError> {
        let damaged = |what: String| StoreError::corrupted(format!("embedding row: {what}"));
        let seq: i64 = get(row, 0)?;
        if seq <= self.last_seq {
            return Ok(());
        }
        let node_id: Uuid = get(row, 1)?;
        let model: String = get(row, 2)?;
        let vector: PgVector = get(row, 3)?;
        let role: Option<String> = get(row, 6)?;
        let node_type: String = get(row, 7)?;
        let meta = RowMeta {
            node_id,
            seq,
            scope: get(row, 4)?,
            session: get(row, 5)?,
            role: role
                .map(|s| Role::parse("role", &s).map_err(|e| damaged(e.to_string())))
                .transpose()?,
            node_type: NodeType::parse("node_type", &node_type)
                .map_err(|e| damaged(e.to_string()))?,
            effective_ms: get(row, 8)?,
            created_ms: Some(get(row, 9)?),
        };
        self.last_seq = seq;
        self.matrices
            .entry(model)
            .or_default()
            .upsert(meta, &vector.0)
            .map_err(damaged)
    }

    /// Builds or retrains indexes after a batch.
    fn maintain(&mut self) {
        self.matrices
            .values_mut()
            .for_each(|m| m.maintain_index(IndexBuild::Now));
    }
}

impl OwnerVectors {
    fn bytes(&self) -> usize {
        self.bytes
    }

    /// A copy publishing `w`'s rows.
    fn of(generation: Option<String>, w: OwnerWriter) -> Self {
        OwnerVectors {
            generation,
            last_seq: w.last_seq,
            views: w.views(),
            bytes: w.bytes(),
            writer: Arc::new(Mutex::new(w)),
            last_used: 0,
        }
    }
}

fn get<'a, T: postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> Result<T, StoreError> {
    row.try_get(i)
        .map_err(|e| StoreError::corrupted(format!("embedding row, column {i}: {e}")))
}

/// An owner's embedding rows above a `seq`, with the unchanging attributes
/// of their nodes, in `seq` order.
const ROWS_SQL: &str = "SELECT e.seq, e.node_id, e.model, e.vector, n.scope, n.session_id,
        n.source_role, n.node_type, n.effective_ms, n.created_ms
 FROM embeddings e JOIN nodes n ON n.id = e.node_id
 WHERE e.owner_id = $1 AND e.seq > $2 ORDER BY e.seq";

/// The embeddings generation and the newest `seq` of owner `$1` a snapshot
/// sees. Per owner, not store-wide: one probe of `embeddings_owner_seq` on
/// the owner's shard of a sharded database (docs/deploy.md), where a
/// store-wide `max(seq)` would ask every shard. Enough for the owner's
/// copy: writers commit in `seq` order, so the owner's rows a snapshot sees
/// are exactly those up to this `seq`.
pub(super) const STATE_SQL: &str =
    "SELECT (SELECT value FROM kith_meta WHERE key = 'embeddings_generation'),
            (SELECT coalesce(max(seq), 0) FROM embeddings WHERE owner_id = $1)";

/// [`STATE_SQL`] with one more column for a read transaction: whether
/// owner `$1` holds any entity node (one probe of `nodes_owner_type_seq`),
/// the entity search's probe ([`crate::has_nodes_to_search`] for entities),
/// answered in the round trip retrieval makes first ([`PgTx::owner_has_entities`]).
fn tx_state_sql() -> String {
    format!(
        "{STATE_SQL},
            EXISTS (SELECT 1 FROM nodes WHERE owner_id = $1 AND node_type = 'entity')"
    )
}

/// The embeddings generation and `owner`'s newest embedding `seq` as the
/// transaction sees them ([`STATE_SQL`]). When the transaction has not
/// begun, its `BEGIN` and this read go in one round trip: the simple
/// protocol has no parameters, so the owner is written as a literal (owner
/// ids are letters, digits and `._-:@`; quotes are doubled all the same).
///
/// A read transaction's read also notes whether the owner holds entities
/// ([`tx_state_sql`]): its snapshot does not change, so that holds for the
/// transaction's life and spares the entity search its probe.
pub(super) fn state(
    tx: &mut super::PgTx<'_>,
    owner: &kith_core::OwnerId,
) -> Result<(Option<String>, i64), StoreError> {
    let no_row = || StoreError::new(StoreErrorKind::Other, "no vector state row");
    let reads = tx.mode == crate::TxMode::Read;
    let sql = if reads {
        tx_state_sql()
    } else {
        STATE_SQL.to_string()
    };
    if tx.pending_begin.is_none() {
        let rows = tx.query(&sql, &[&owner.as_str()])?;
        let row = rows.first().ok_or_else(no_row)?;
        if reads {
            let has: bool = row
                .try_get(2)
                .map_err(|e| StoreError::corrupted(format!("the entity probe: {e}")))?;
            tx.owner_has_entities = Some((owner.clone(), has));
        }
        return Ok((row.get(0), row.get(1)));
    }
    let literal = format!("'{}'", owner.as_str().replace('\'', "''"));
    let rows = tx.simple_query(&sql.replace("$1", &literal))?;
    let row = rows.first().ok_or_else(no_row)?;
    let max_seq = row
        .get(1)
        .ok_or_else(no_row)?
        .parse::<i64>()
        .map_err(|e| StoreError::corrupted(format!("the newest embedding seq: {e}")))?;
    if reads {
        // The simple protocol's text form of a boolean.
        let has = match row.get(2) {
            Some("t") => true,
            Some("f") => false,
            other => {
                return Err(StoreError::corrupted(format!(
                    "the entity probe answered {other:?}"
                )))
            }
        };
        tx.owner_has_entities = Some((owner.clone(), has));
    }
    Ok((row.get(0).map(str::to_string), max_seq))
}

/// Bumps the generation (with `delete_embeddings`).
pub(super) const BUMP_SQL: &str = "INSERT INTO kith_meta (key, value)
 VALUES ('embeddings_generation', $1)
 ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// The in-process copies of owners' vectors, shared by a store's
/// transactions (and its background loaders).
#[derive(Debug)]
pub struct VectorCache {
    mode: VectorCacheMode,
    budget_bytes: usize,
    owners: HashMap<String, OwnerVectors>,
    /// Owners a background thread is copying now.
    loading: HashSet<String>,
    /// Owners whose vectors alone exceed the budget (searched in SQL).
    oversized: HashSet<String>,
    clock: u64,
}

/// What a search learns from the cache.
pub(super) enum Plan {
    /// Scan results: node id and exact score, best first.
    Scanned(Vec<(Uuid, f32)>),
    /// Not cached (yet): search in SQL.
    Sql,
}

impl VectorCache {
    /// An empty cache of `budget_bytes` answering in `mode`.
    pub fn new(mode: VectorCacheMode, budget_bytes: usize) -> Self {
        VectorCache {
            mode,
            budget_bytes,
            owners: HashMap::new(),
            loading: HashSet::new(),
            oversized: HashSet::new(),
            clock: 0,
        }
    }

    /// Reads the budget from `KITH_VECTOR_CACHE_MB` (default
    /// [`DEFAULT_BUDGET_MB`]).
    pub fn budget_from_env() -> Result<usize, StoreError> {
        let mb = match std::env::var("KITH_VECTOR_CACHE_MB") {
            Err(_) => DEFAULT_BUDGET_MB,
            Ok(v) => v.trim().parse::<usize>().map_err(|_| {
                StoreError::new(
                    StoreErrorKind::Other,
                    format!("KITH_VECTOR_CACHE_MB is {v:?}; give a number of MiB"),
                )
            })?,
        };
        Ok(mb.saturating_mul(1024 * 1024))
    }

    /// The mode searches run in.
    pub fn mode(&self) -> VectorCacheMode {
        self.mode
    }

    /// Changes the mode; turning the cache off drops every copy.
    pub fn set_mode(&mut self, mode: VectorCacheMode) {
        self.mode = mode;
        if mode == VectorCacheMode::Off {
            self.owners.clear();
        }
    }

    /// Owners copied now (for tests and `doctor`-style reports).
    pub fn cached_owners(&self) -> Vec<String> {
        let mut v: Vec<String> = self.owners.keys().cloned().collect();
        v.sort();
        v
    }

    /// Vectors held for `owner`, all models.
    pub fn cached_rows(&self, owner: &str) -> usize {
        self.owners
            .get(owner)
            .map_or(0, |o| o.views.values().map(|v| v.len()).sum())
    }

    fn touch(&mut self, owner: &str) {
        self.clock += 1;
        if let Some(o) = self.owners.get_mut(owner) {
            o.last_used = self.clock;
        }
    }

    /// Drops least recently used owners (never `keep`) until the copies fit
    /// the budget; if `keep` alone does not fit, drops it too and marks it
    /// oversized. Returns whether `keep` is still cached.
    fn fit(&mut self, keep: &str) -> bool {
        let total = |c: &Self| c.owners.values().map(OwnerVectors::bytes).sum::<usize>();
        while total(self) > self.budget_bytes {
            let victim = self
                .owners
                .iter()
                .filter(|(k, _)| k.as_str() != keep)
                .min_by_key(|(_, o)| o.last_used)
                .map(|(k, _)| k.clone());
            match victim {
                Some(v) => {
                    self.owners.remove(&v);
                }
                None => {
                    self.owners.remove(keep);
                    self.oversized.insert(keep.to_string());
                    return false;
                }
            }
        }
        true
    }
}

/// Answers `q` from the cache when it can, bringing the owner's copy up to
/// the transaction's snapshot first. `generation` and `max_seq` (the
/// owner's) come from [`STATE_SQL`] in the same transaction.
///
/// The cache's mutex is held only to look the owner up and to publish: the
/// rows are read from the database and absorbed under the owner's own
/// writer lock, and the scan reads an immutable snapshot with no lock held.
pub(super) fn plan(
    tx: &mut super::PgTx<'_>,
    q: &VectorQuery,
    generation: Option<String>,
    max_seq: i64,
    k: usize,
) -> Result<Plan, StoreError> {
    let owner = q.owner.as_str();
    let cache = Arc::clone(&tx.store.vectors);
    let lock = || {
        cache
            .lock()
            .map_err(|_| StoreError::new(StoreErrorKind::Other, "vector cache lock poisoned"))
    };
    let (views, last_seq, writer) = {
        let mut c = lock()?;
        if c.mode == VectorCacheMode::Off || c.oversized.contains(owner) {
            return Ok(Plan::Sql);
        }
        if c.owners
            .get(owner)
            .is_some_and(|o| o.generation != generation)
        {
            c.owners.remove(owner);
        }
        if !c.owners.contains_key(owner) {
            match c.mode {
                VectorCacheMode::Eager => {
                    let fresh = OwnerVectors::of(generation.clone(), OwnerWriter::default());
                    c.owners.insert(owner.to_string(), fresh);
                }
                VectorCacheMode::Background => {
                    if c.loading.insert(owner.to_string()) {
                        spawn_loader(
                            Arc::clone(&cache),
                            tx.store.config.clone(),
                            owner.to_string(),
                        );
                    }
                    return Ok(Plan::Sql);
                }
                VectorCacheMode::Off => return Ok(Plan::Sql),
            }
        }
        c.touch(owner);
        let o = &c.owners[owner];
        (Arc::clone(&o.views), o.last_seq, Arc::clone(&o.writer))
    };
    let scan = |views: &HashMap<String, Arc<MatrixView>>| {
        views
            .get(&q.model)
            .map_or_else(Vec::new, |m| m.scan(q, max_seq, k))
    };
    if last_seq >= max_seq {
        return Ok(Plan::Scanned(scan(&views)));
    }
    // Behind this transaction: grow the owner's copy.
    let mut w = writer
        .lock()
        .map_err(|_| StoreError::new(StoreErrorKind::Other, "vector cache lock poisoned"))?;
    if w.last_seq < max_seq {
        let from = w.last_seq;
        let grown = tx
            .query(ROWS_SQL, &[&owner as &(dyn ToSql + Sync), &from])
            .and_then(|rows| rows.iter().try_for_each(|row| w.absorb(row)));
        if let Err(e) = grown {
            // A copy that stopped half way would answer from half the rows.
            drop(w);
            let mut c = lock()?;
            if c.owners
                .get(owner)
                .is_some_and(|o| Arc::ptr_eq(&o.writer, &writer))
            {
                c.owners.remove(owner);
            }
            return Err(e);
        }
        // This transaction sees every row of the owner up to `max_seq`
        // (writers commit in `seq` order), so the copy is whole up to there.
        w.last_seq = w.last_seq.max(max_seq);
        w.maintain();
    }
    let views = w.views();
    let (last_seq, bytes) = (w.last_seq, w.bytes());
    drop(w);
    let mut c = lock()?;
    if let Some(o) = c.owners.get_mut(owner) {
        // Unless the copy was dropped (generation, budget) meanwhile.
        if Arc::ptr_eq(&o.writer, &writer) && o.last_seq < last_seq {
            o.views = Arc::clone(&views);
            o.last_seq = last_seq;
            o.bytes = bytes;
        }
    }
    if !c.fit(owner) {
        return Ok(Plan::Sql);
    }
    drop(c);
    Ok(Plan::Scanned(scan(&views)))
}

/// Copies `owner`'s vectors on a connection of its own, then hands them to
/// the cache (unless a copy got there first). A failure is dropped: the
/// next search of the owner tries again.
fn spawn_loader(cache: Arc<Mutex<VectorCache>>, config: postgres::Config, owner: String) {
    let run = move || {
        let loaded = load(&config, &owner);
        let Ok(mut c) = cache.lock() else { return };
        c.loading.remove(&owner);
        if let Ok(o) = loaded {
            if c.mode != VectorCacheMode::Off && !c.owners.contains_key(&owner) {
                c.owners.insert(owner.clone(), o);
                c.touch(&owner);
                c.fit(&owner);
            }
        }
    };
    if std::thread::Builder::new()
        .name("kith-vector-load".into())
        .spawn(run)
        .is_err()
    {
        // No thread: searches stay in SQL; nothing is lost.
    }
}

/// One owner's vectors as of a fresh snapshot.
fn load(config: &postgres::Config, owner: &str) -> Result<OwnerVectors, StoreError> {
    let mut client = config.connect(NoTls).map_err(super::map_err)?;
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(super::map_err)?;
    let state = tx.query_one(STATE_SQL, &[&owner]).map_err(super::map_err)?;
    let mut w = OwnerWriter::default();
    let start: i64 = 0;
    let params: [&(dyn ToSql + Sync); 2] = [&owner, &start];
    let mut rows = tx
        .query_raw(ROWS_SQL, params.iter().copied())
        .map_err(super::map_err)?;
    use postgres::fallible_iterator::FallibleIterator;
    while let Some(row) = rows.next().map_err(super::map_err)? {
        w.absorb(&row)?;
    }
    drop(rows);
    tx.commit().map_err(super::map_err)?;
    w.maintain();
    Ok(OwnerVectors::of(state.get(0), w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owner copy of `rows` 4-dimension vectors (16 + 4 + 4 bytes each).
    fn owner_of(rows: usize, last_used: u64) -> OwnerVectors {
        let mut m = Matrix::default();
        for i in 0..rows {
            let meta = RowMeta {
                node_id: Uuid::from_u128(i as u128 + 1),
                seq: i as i64 + 1,
                scope: "personal".into(),
                session: None,
                role: None,
                node_type: NodeType::Note,
                effective_ms: None,
                created_ms: None,
            };
            m.upsert(meta, &[0.5, 0.5, 0.5, 0.5]).unwrap();
        }
        let w = OwnerWriter {
            last_seq: rows as i64,
            matrices: HashMap::from([("m".to_string(), m)]),
        };
        OwnerVectors {
            last_used,
            ..OwnerVectors::of(None, w)
        }
    }

    #[test]
    fn the_budget_drops_least_recently_used_owners_then_refuses_a_giant() {
        // 24 bytes a row: three owners of 10 rows are 720 bytes.
        let mut c = VectorCache::new(VectorCacheMode::Eager, 500);
        c.owners.insert("old".into(), owner_of(10, 1));
        c.owners.insert("mid".into(), owner_of(10, 2));
        c.owners.insert("new".into(), owner_of(10, 3));
        assert!(c.fit("new"));
        assert_eq!(
            c.cached_owners(),
            vec!["mid".to_string(), "new".to_string()]
        );
        // An owner bigger than the whole budget is dropped and remembered.
        c.owners.insert("giant".into(), owner_of(30, 4));
        assert!(!c.fit("giant"));
        assert!(c.oversized.contains("giant"));
        assert!(!c.owners.contains_key("giant"));
        assert!(c.owners.values().map(OwnerVectors::bytes).sum::<usize>() <= 500);
    }

    #[test]
    fn modes_parse_bad_values_are_refused_and_off_drops_every_copy() {
        use VectorCacheMode::*;
        assert_eq!(VectorCacheMode::parse(None).unwrap(), Background);
        assert_eq!(VectorCacheMode::parse(Some(" off")).unwrap(), Off);
        assert_eq!(VectorCacheMode::parse(Some("eager")).unwrap(), Eager);
        let err = VectorCacheMode::parse(Some("hnsw")).unwrap_err();
        assert!(
            err.to_string().contains("off, background or eager"),
            "{err}"
        );
        let mut c = VectorCache::new(VectorCacheMode::Eager, 1 << 20);
        c.owners.insert("a".into(), owner_of(3, 1));
        assert_eq!(c.cached_rows("a"), 3);
        c.set_mode(VectorCacheMode::Off);
        assert!(c.cached_owners().is_empty());
        assert_eq!(c.mode(), VectorCacheMode::Off);
    }
}
