//! What a forget checks after it commits and compacts.
//!
//! Through the store: every erased event reads back as a tombstone whose
//! checksum verifies; none of the owner's nodes cites an erased event; no
//! journal record of the owner other than `FORGOTTEN` names or quotes what
//! went. For a pack: every byte of every file in the pack directory
//! (database, WAL, shared memory, manifest) is searched for every erased
//! text. A PostgreSQL server's files are not kith's to read; its rows are
//! checked through the store.

use std::collections::HashSet;
use std::path::Path;

use aho_corasick::AhoCorasick;
use kith_core::{tombstone, OperationKind, OwnerId};
use kith_store::{NodeQuery, TxMode};
use serde::Serialize;
use uuid::Uuid;

use super::ForgetReport;
use crate::context::Ctx;
use crate::error::Error;

/// The shortest erased text searched for in the pack's bytes (a two-letter
/// message would be found everywhere).
const MIN_NEEDLE: usize = 4;

/// Bytes read per step when searching files.
const CHUNK: usize = 8 << 20;

/// What was checked after a forget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Erased events that read back as tombstones with a valid checksum.
    pub tombstones_verified: u64,
    /// The owner's nodes that still cite an erased event (0 when erased).
    pub nodes_citing_erased: u64,
    /// The owner's journal records (other than `FORGOTTEN`) that still name
    /// or quote what went (0 when erased).
    pub journal_records_naming_erased: u64,
    /// Pack files whose every byte was searched (none for a database).
    pub pack_files_scanned: Vec<String>,
    /// Their total size.
    pub pack_bytes_scanned: u64,
    /// Erased texts searched for (those of at least 4 bytes).
    pub texts_searched: u64,
    /// Erased texts still found in the pack's bytes that no live event
    /// holds (0 when erased).
    pub texts_found_in_pack: u64,
    /// Erased texts found in the pack's bytes because a live event (of any
    /// owner) has the same content: not a trace of the forgotten one.
    pub texts_held_by_live_events: u64,
}

impl Verification {
    /// True when every check found nothing left.
    pub fn clean(&self) -> bool {
        self.nodes_citing_erased == 0
            && self.journal_records_naming_erased == 0
            && self.texts_found_in_pack == 0
    }
}

pub(super) fn verify(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    report: &ForgetReport,
    texts: &[String],
) -> Result<Verification, Error> {
    let mut v = Verification::default();
    let erased: HashSet<Uuid> = report.events.iter().copied().collect();
    let mut named = erased.clone();
    named.extend(report.nodes_deleted.iter().copied());
    let mut tx = ctx.store.begin(TxMode::Read)?;
    for id in &report.events {
        if let Some(s) = tx.get_event(*id)? {
            if s.tombstone
                .as_ref()
                .is_some_and(|t| t.verify(&s.event).is_empty())
            {
                v.tombstones_verified += 1;
            }
        }
    }
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            after_seq: after,
            limit: 1000,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        v.nodes_citing_erased += page
            .iter()
            .filter(|s| s.node.evidence_refs.iter().any(|r| erased.contains(r)))
            .count() as u64;
    }
    let mut after = 0;
    loop {
        let page = tx.scan_operations(after, 1000)?;
        let Some((last, _)) = page.last() else { break };
        after = *last;
        v.journal_records_naming_erased += page
            .iter()
            .filter(|(_, op)| {
                &op.owner_id == owner
                    && op.kind != OperationKind::Forgotten
                    && !tombstone::is_scrubbed(&op.payload)
                    && super::journal::names_or_quotes(
                        &op.payload,
                        &named,
                        if super::journal::keeps_raw_text(op.kind) {
                            texts
                        } else {
                            &[]
                        },
                    )
            })
            .count() as u64;
    }
    drop(tx);
    if let Some(dir) = ctx.pack_dir {
        let found = scan_pack(dir, texts, &mut v)?;
        if !found.is_empty() {
            let held = held_by_live_events(ctx, &found)?;
            v.texts_held_by_live_events = held as u64;
            v.texts_found_in_pack = (found.len() - held) as u64;
        }
    }
    Ok(v)
}

/// How many of `found` some live event of the store (any owner) holds
/// word for word: one pass over the log, only when something was found.
fn held_by_live_events(ctx: &Ctx<'_>, found: &[&str]) -> Result<usize, Error> {
    let mut hashes: HashSet<String> = found
        .iter()
        .map(|t| kith_core::canon::sha256_hex(t.as_bytes()))
        .collect();
    let wanted = hashes.len();
    let mut tx = ctx.store.begin(TxMode::Read)?;
    let mut after = 0;
    while !hashes.is_empty() {
        let page = tx.list_events(&kith_store::EventQuery {
            after_seq: after,
            limit: 1000,
            ..kith_store::EventQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for s in &page {
            if s.tombstone.is_none() {
                hashes.remove(&s.event.content_sha256);
            }
        }
    }
    Ok(wanted - hashes.len())
}

/// Searches every file under `dir` for every erased text; returns the
/// texts found.
fn scan_pack<'t>(
    dir: &Path,
    texts: &'t [String],
    v: &mut Verification,
) -> Result<Vec<&'t str>, Error> {
    let needles: Vec<&str> = texts
        .iter()
        .map(|t| t.as_str())
        .filter(|t| t.len() >= MIN_NEEDLE)
        .collect();
    v.texts_searched = needles.len() as u64;
    let matcher = AhoCorasick::new(&needles).map_err(|e| Error::Request(e.to_string()))?;
    let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut found: HashSet<usize> = HashSet::new();
    let mut files = Vec::new();
    collect_files(dir, &mut files)?;
    files.sort();
    for path in files {
        let file = held::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut carry: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; CHUNK];
        let mut offset = 0u64;
        loop {
            let n = held::read_at(&file, &mut buf, offset).map_err(|e| Error::io(&path, e))?;
            offset += n as u64;
            if n == 0 {
                break;
            }
            v.pack_bytes_scanned += n as u64;
            carry.extend_from_slice(&buf[..n]);
            if !needles.is_empty() {
                for m in matcher.find_overlapping_iter(&carry) {
                    found.insert(m.pattern().as_usize());
                }
            }
            // Keep the tail, so a text split across two reads is found.
            let keep = longest.saturating_sub(1).min(carry.len());
            carry.drain(..carry.len() - keep);
        }
        v.pack_files_scanned.push(
            path.strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string(),
        );
    }
    v.texts_found_in_pack = found.len() as u64;
    let mut found: Vec<usize> = found.into_iter().collect();
    found.sort_unstable();
    Ok(found.into_iter().map(|i| needles[i]).collect())
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            collect_files(&path, out)?;
        } else if kind.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Reading the pack's files without releasing this process's SQLite locks.
///
/// Closing *any* descriptor of a file releases every POSIX advisory lock the
/// process holds on that file, and SQLite's locks on the database, its WAL
/// and its shared-memory index are such locks. A scan that opened and closed
/// them dropped this process's locks: a process opening the pack afterwards
/// found no other user, rebuilt the WAL index, and from then on this process
/// no longer saw that process's writes (found by the Python package's tests,
/// two `kith serve` on one pack). So each scanned file is opened once and its
/// descriptor kept for the life of the process, as SQLite keeps its own; a
/// pack has a handful of files, so this holds a handful of descriptors.
mod held {
    use std::collections::HashMap;
    use std::fs::File;
    use std::io;
    use std::path::Path;
    use std::sync::{Arc, Mutex, OnceLock};

    /// By file identity (device, inode), so a replaced file gets its own.
    type Key = (u64, u64);

    static HELD: OnceLock<Mutex<HashMap<Key, Arc<File>>>> = OnceLock::new();

    #[cfg(unix)]
    pub(super) fn open(path: &Path) -> io::Result<Arc<File>> {
        use std::os::unix::fs::MetadataExt;
        let mut held = HELD
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let meta = std::fs::metadata(path)?;
        let key = (meta.dev(), meta.ino());
        if let Some(file) = held.get(&key) {
            return Ok(file.clone());
        }
        let file = Arc::new(File::open(path)?);
        held.insert(key, file.clone());
        Ok(file)
    }

    /// Elsewhere locks belong to the handle that took them: a plain open.
    #[cfg(not(unix))]
    pub(super) fn open(path: &Path) -> io::Result<Arc<File>> {
        let _ = &HELD;
        Ok(Arc::new(File::open(path)?))
    }

    /// Reads at `offset` without moving a shared cursor.
    #[cfg(unix)]
    pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }

    #[cfg(not(unix))]
    pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        f.read(buf)
    }
}
