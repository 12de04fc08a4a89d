//! Rows' token counts in the full-text index, remembered in memory.
//!
//! BM25 needs each match's length ([`super::bm25`]); FTS5 keeps it in
//! `node_fts_docsize`, one b-tree lookup a row. This copy is an array by
//! rowid (4 bytes a row: 4 MB at 1M), read once and then kept true:
//!
//! - **appends** (every new node): a row's rowid is its `nodes.seq`
//!   (`AUTOINCREMENT`), above every rowid ever committed; a snapshot
//!   holding rows past the copy's newest has them read (`id > newest`)
//!   and added;
//! - **deletes**: a deleted row is in no posting list, and its rowid is
//!   never given again, so its stale entry is never asked for;
//! - **in-place rewrites** (`update_node` changing a node's text, the only
//!   write that gives a rowid new tokens): each sets
//!   `meta.fts_lengths_generation` to a fresh value in the same
//!   transaction; a copy is used only by a snapshot of its generation, and
//!   one of another generation reads the lengths again.
//!
//! Only read transactions use the copy, and only they fill it: a write
//! transaction's own rows may still roll back and their rowids be given
//! again (the lexical search then ranks with FTS5's statement).

use std::sync::{Arc, RwLock};

use rusqlite::{Connection, OptionalExtension};

use super::map_err;
use crate::StoreError;

/// The meta key whose value changes with every in-place rewrite of a
/// row's indexed text.
const GENERATION_KEY: &str = "fts_lengths_generation";

/// Marks a rowid the copy holds no length for.
const UNKNOWN: u32 = u32::MAX;

/// The store's copy ([`Table`]), shared by its transactions.
#[derive(Debug, Default)]
pub(super) struct Lengths(RwLock<Option<Arc<Table>>>);

/// Token counts by rowid, as of one generation and up to one rowid.
#[derive(Debug, Clone)]
pub(super) struct Table {
    generation: String,
    /// The largest rowid read (rows above it are read on demand).
    newest: i64,
    /// Index: rowid; [`UNKNOWN`] where no row was.
    lens: Vec<u32>,
}

impl Table {
    /// The token count of `rowid`, when a row had it.
    pub(super) fn get(&self, rowid: i64) -> Option<u32> {
        let len = *self.lens.get(usize::try_from(rowid).ok()?)?;
        (len != UNKNOWN).then_some(len)
    }

    /// Adds the rows of `conn`'s snapshot above [`Table::newest`].
    fn read_from(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let mut stmt = conn
            .prepare_cached("SELECT id, sz FROM node_fts_docsize WHERE id > ?1 ORDER BY id")
            .map_err(map_err)?;
        let mut rows = stmt.query([self.newest]).map_err(map_err)?;
        while let Some(row) = rows.next().map_err(map_err)? {
            let id: i64 = row.get(0).map_err(map_err)?;
            let rusqlite::types::ValueRef::Blob(size) = row.get_ref(1).map_err(map_err)? else {
                return Err(malformed());
            };
            let len = first_varint(size)
                .filter(|&l| l != UNKNOWN)
                .ok_or_else(malformed)?;
            let at = usize::try_from(id).map_err(|_| malformed())?;
            if at >= self.lens.len() {
                // Rowids are dense (a store's seq); grow by half at least.
                let room = (at + 1).max(self.lens.len() + self.lens.len() / 2);
                self.lens.resize(room, UNKNOWN);
            }
            self.lens[at] = len;
            self.newest = id;
        }
        Ok(())
    }
}

fn malformed() -> StoreError {
    StoreError::corrupted("full-text index: a malformed row length in node_fts_docsize")
}

/// Records, in `conn`'s write transaction, that a row's indexed text was
/// replaced in place: copies of the lengths taken before are not used by
/// snapshots that see this write.
pub(super) fn note_rewrite(conn: &Connection) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [GENERATION_KEY, &uuid::Uuid::new_v4().to_string()],
    )
    .map(drop)
    .map_err(map_err)
}

/// The generation of `conn`'s snapshot (empty before the first rewrite).
fn generation(conn: &Connection) -> Result<String, StoreError> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")
        .and_then(|mut s| s.query_row([GENERATION_KEY], |r| r.get(0)).optional())
        .map(Option::unwrap_or_default)
        .map_err(map_err)
}

impl Lengths {
    /// A copy that holds the length of every row of `conn`'s snapshot up
    /// to rowid `newest`; `conn` must be in a read transaction.
    pub(super) fn covering(
        &self,
        conn: &Connection,
        newest: i64,
    ) -> Result<Arc<Table>, StoreError> {
        let generation = generation(conn)?;
        let usable = |t: &Table| t.generation == generation;
        if let Ok(slot) = self.0.read() {
            if let Some(t) = slot.as_ref().filter(|t| usable(t) && t.newest >= newest) {
                return Ok(Arc::clone(t));
            }
        }
        // Grow the copy of this generation, or read one afresh.
        let mut slot = self.0.write().unwrap_or_else(|e| e.into_inner());
        let mut table = match slot.take() {
            Some(t) if usable(&t) => Arc::unwrap_or_clone(t),
            _ => Table {
                generation,
                newest: 0,
                lens: Vec::new(),
            },
        };
        if table.newest < newest {
            table.read_from(conn)?;
        }
        let table = Arc::new(table);
        *slot = Some(Arc::clone(&table));
        Ok(table)
    }
}

/// The first of FTS5's varints in a `docsize` record (one per column; the
/// table has one column): SQLite's varint, 7 bits a byte, big-endian,
/// the ninth byte whole.
fn first_varint(bytes: &[u8]) -> Option<u32> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            value = (value << 8) | u64::from(b);
            return u32::try_from(value).ok();
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_varint;

    #[test]
    fn varints_decode_as_sqlite_writes_them() {
        assert_eq!(first_varint(&[0x05]), Some(5));
        assert_eq!(first_varint(&[0x81, 0x00]), Some(128));
        assert_eq!(
            first_varint(&[0x83, 0xff, 0x7f, 0x02]),
            Some((3 << 14) | (0x7f << 7) | 0x7f)
        );
        assert_eq!(first_varint(&[0x81]), None);
        assert_eq!(first_varint(&[]), None);
    }
}
