//! A query's postings read out of FTS5 in one call.
//!
//! `kith_postings(node_fts)` is an FTS5 auxiliary function (registered on
//! every connection through the `fts5_api`, see the FTS5 documentation's
//! "Extending FTS5"). Called on any one match of a query, it walks each
//! phrase's rows with `xQueryPhrase` and returns, as one blob, what BM25
//! needs from the index and nothing it does not: the index's row and token
//! totals, and per phrase every row holding it with its number of
//! occurrences. No row's length is read (that is a
//! lookup in `node_fts_docsize` per row) and nothing is scored: ranking is
//! [`super::bm25`]'s.
//!
//! The blob is native-endian: `rows: i64, tokens: i64, phrases: u32`, then
//! per phrase `count: u32` and `count` postings of `rowid: i64, freq: u32`
//! in rowid order. It lives only between this module's two
//! halves in one process.

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;
use rusqlite::Connection;

use super::map_err;
use crate::StoreError;

/// One row holding one phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Posting {
    /// The row (`nodes.seq`).
    pub rowid: i64,
    /// The phrase's occurrences in the row.
    pub freq: u32,
}

/// What the index says about a query's phrases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Postings {
    /// Rows in the index.
    pub rows: i64,
    /// Tokens in the index.
    pub tokens: i64,
    /// Per phrase of the query, in its order: the rows holding it, in
    /// rowid order.
    pub phrases: Vec<Vec<Posting>>,
}

/// The SQL name of the function.
const NAME: &std::ffi::CStr = c"kith_postings";

/// Registers `kith_postings` on `conn`. Without FTS5 compiled in there is
/// nothing to register on: a typed error.
pub(super) fn register(conn: &Connection) -> Result<(), StoreError> {
    // SAFETY: the handle is `conn`'s and used only during this call, on
    // this thread; `fts5_api` checks every return code and pointer.
    unsafe {
        let db = conn.handle();
        let api = fts5_api(db)?;
        let create = (*api)
            .xCreateFunction
            .ok_or_else(|| unusable("no xCreateFunction"))?;
        let rc = create(api, NAME.as_ptr(), ptr::null_mut(), Some(postings), None);
        if rc != ffi::SQLITE_OK {
            return Err(map_err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                Some("registering kith_postings".into()),
            )));
        }
    }
    Ok(())
}

fn unusable(what: &str) -> StoreError {
    StoreError::new(
        crate::StoreErrorKind::Other,
        format!("this SQLite's FTS5 cannot take kith's ranking function: {what}"),
    )
}

/// The connection's `fts5_api`, as the FTS5 documentation obtains it:
/// `SELECT fts5(?1)` with a pointer bound of type `fts5_api_ptr`.
///
/// # Safety
/// `db` must be a live connection handle used by no other thread meanwhile.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api, StoreError> {
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    let rc = ffi::sqlite3_prepare_v2(
        db,
        c"SELECT fts5(?1)".as_ptr(),
        -1,
        &mut stmt,
        ptr::null_mut(),
    );
    if rc != ffi::SQLITE_OK || stmt.is_null() {
        return Err(unusable("SELECT fts5(?1) does not prepare"));
    }
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut rc = ffi::sqlite3_bind_pointer(
        stmt,
        1,
        (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
        c"fts5_api_ptr".as_ptr(),
        None,
    );
    if rc == ffi::SQLITE_OK {
        rc = ffi::sqlite3_step(stmt);
    }
    ffi::sqlite3_finalize(stmt);
    if rc != ffi::SQLITE_ROW || api.is_null() || (*api).iVersion < 2 {
        return Err(unusable("no fts5_api"));
    }
    Ok(api)
}

/// Where `posting` writes while one phrase's rows are walked.
struct Sink<'a> {
    out: &'a mut Vec<u8>,
    count: u32,
}

/// The auxiliary function: the postings blob of the current query, or an
/// SQLite error (never a panic across the boundary).
unsafe extern "C" fn postings(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes its live API table and cursor for this call.
    let collected = std::panic::catch_unwind(|| unsafe { collect(api, fts) });
    match collected {
        Ok(Ok(blob)) => ffi::sqlite3_result_blob64(
            ctx,
            blob.as_ptr().cast::<c_void>(),
            blob.len() as u64,
            ffi::SQLITE_TRANSIENT(),
        ),
        Ok(Err(rc)) => ffi::sqlite3_result_error_code(ctx, rc),
        Err(_) => ffi::sqlite3_result_error(ctx, c"kith_postings panicked".as_ptr(), -1),
    }
}

/// Reads the totals and every phrase's postings into a blob.
///
/// # Safety
/// `api` and `fts` must be what FTS5 passed to an auxiliary function call.
unsafe fn collect(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<Vec<u8>, c_int> {
    let a = &*api;
    let (Some(row_count), Some(total_size), Some(phrase_count), Some(query_phrase)) = (
        a.xRowCount,
        a.xColumnTotalSize,
        a.xPhraseCount,
        a.xQueryPhrase,
    ) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let mut rows = 0i64;
    check(row_count(fts, &mut rows))?;
    let mut tokens = 0i64;
    check(total_size(fts, -1, &mut tokens))?;
    let phrases = phrase_count(fts);
    let mut out = Vec::with_capacity(1 << 16);
    out.extend_from_slice(&rows.to_ne_bytes());
    out.extend_from_slice(&tokens.to_ne_bytes());
    out.extend_from_slice(&(phrases.max(0) as u32).to_ne_bytes());
    for phrase in 0..phrases {
        let at = out.len();
        out.extend_from_slice(&0u32.to_ne_bytes());
        let mut sink = Sink {
            out: &mut out,
            count: 0,
        };
        check(query_phrase(
            fts,
            phrase,
            (&mut sink as *mut Sink).cast::<c_void>(),
            Some(posting),
        ))?;
        let count = sink.count;
        out[at..at + 4].copy_from_slice(&count.to_ne_bytes());
    }
    Ok(out)
}

fn check(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// `xQueryPhrase`'s callback, once per row holding the phrase: appends
/// the row's posting to the [`Sink`] in `user`.
unsafe extern "C" fn posting(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    let a = &*api;
    let sink = &mut *user.cast::<Sink>();
    let (Some(rowid_of), Some(first), Some(next)) = (a.xRowid, a.xPhraseFirst, a.xPhraseNext)
    else {
        return ffi::SQLITE_MISUSE;
    };
    let rowid = rowid_of(fts);
    let mut iter = ffi::Fts5PhraseIter {
        a: ptr::null(),
        b: ptr::null(),
    };
    let (mut col, mut off) = (0, 0);
    let rc = first(fts, 0, &mut iter, &mut col, &mut off);
    if rc != ffi::SQLITE_OK {
        return rc;
    }
    let mut freq = 0u32;
    while col >= 0 {
        freq += 1;
        next(fts, &mut iter, &mut col, &mut off);
    }
    sink.out.extend_from_slice(&rowid.to_ne_bytes());
    sink.out.extend_from_slice(&freq.to_ne_bytes());
    sink.count += 1;
    ffi::SQLITE_OK
}

/// The postings of `expr` (an FTS5 query on `node_fts`) in `conn`'s
/// snapshot, or `None` when nothing matches.
pub(super) fn read(conn: &Connection, expr: &str) -> Result<Option<Postings>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT kith_postings(node_fts) FROM node_fts WHERE node_fts MATCH ?1 LIMIT 1",
        )
        .map_err(map_err)?;
    let mut rows = stmt.query([expr]).map_err(map_err)?;
    let Some(row) = rows.next().map_err(map_err)? else {
        return Ok(None);
    };
    let rusqlite::types::ValueRef::Blob(blob) = row.get_ref(0).map_err(map_err)? else {
        return Err(StoreError::corrupted("kith_postings returned no blob"));
    };
    decode(blob)
        .map(Some)
        .ok_or_else(|| StoreError::corrupted("kith_postings returned a malformed blob"))
}

/// The blob's fields (module docs), or `None` if it is cut short.
fn decode(blob: &[u8]) -> Option<Postings> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let part = blob.get(at..at + n)?;
        at += n;
        Some(part)
    };
    let rows = i64::from_ne_bytes(take(8)?.try_into().ok()?);
    let tokens = i64::from_ne_bytes(take(8)?.try_into().ok()?);
    let phrases = u32::from_ne_bytes(take(4)?.try_into().ok()?);
    let mut out = Vec::with_capacity(phrases as usize);
    for _ in 0..phrases {
        let count = u32::from_ne_bytes(take(4)?.try_into().ok()?) as usize;
        let bytes = take(count.checked_mul(12)?)?;
        out.push(
            bytes
                .chunks_exact(12)
                .map(|p| Posting {
                    rowid: i64::from_ne_bytes(p[0..8].try_into().unwrap_or_default()),
                    freq: u32::from_ne_bytes(p[8..12].try_into().unwrap_or_default()),
                })
                .collect(),
        );
    }
    Some(Postings {
        rows,
        tokens,
        phrases: out,
    })
}
