//! Reading a pack without writing it, and saying why a pack cannot be
//! opened (issue 20 item 10).
//!
//! A pack on read-only storage (a read-only mount, a snapshot, a CD) could
//! not even be read: WAL mode wants to create the `-shm` and `-wal` files
//! beside the database, and SQLite answered "unable to open database file",
//! with no path and no cause. Read commands open the pack with
//! [`super::OpenMode::ReadOnly`]:
//!
//! 1. read-only, as usual: works wherever the `-shm` file exists or can be
//!    created, and sees every committed transaction, WAL included;
//! 2. else, when there is no unfinished WAL, as an *immutable* file (no
//!    locks, no side files): correct because nothing can write the file
//!    there;
//! 3. else an error naming the path, the cause and what to do.
//!
//! Every open error names the database file and, when the file system
//! says why it cannot be written, that reason.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::{map_err, read_version, too_new, BUSY_TIMEOUT, SCHEMA_VERSION};
use crate::{StoreError, StoreErrorKind};

/// How a store's connections reach the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads and writes (WAL, migrations).
    ReadWrite,
    /// Reads only, through SQLite's locks (sees other processes' commits).
    ReadOnly,
    /// Reads only, the file assumed unchangeable (read-only storage).
    Immutable,
}

/// Decides how a read-only store reaches `path`, and checks its schema.
pub(super) fn probe(path: &Path) -> Result<Access, StoreError> {
    let first = connect(path, Access::ReadOnly).and_then(|c| {
        read_version(&c)
            .map_err(|e| with_cause(path, e))
            .map(|v| (c, v))
    });
    let (access, version) = match first {
        Ok((_, version)) => (Access::ReadOnly, version),
        Err(e) if e.kind() == StoreErrorKind::Io => {
            let wal = side_file(path, "-wal");
            if wal.metadata().is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::new(
                    StoreErrorKind::Io,
                    format!(
                        "{e}; its write-ahead log {} holds commits that only a writable copy \
                         can read: copy the pack to writable storage and open it there",
                        wal.display()
                    ),
                ));
            }
            let conn = connect(path, Access::Immutable)?;
            let version = read_version(&conn).map_err(|e| with_cause(path, e))?;
            (Access::Immutable, version)
        }
        Err(e) => return Err(e),
    };
    if version > SCHEMA_VERSION {
        return Err(too_new(version));
    }
    if version < SCHEMA_VERSION {
        return Err(StoreError::new(
            StoreErrorKind::Io,
            format!(
                "{} has schema version {version}; this kith reads it after migrating it to \
                 {SCHEMA_VERSION}, which needs write access: run a writing command (e.g. \
                 `kith doctor`) on it once where it can be written",
                path.display()
            ),
        ));
    }
    Ok(access)
}

/// One connection that never writes.
pub(super) fn connect(path: &Path, access: Access) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = match access {
        Access::Immutable => Connection::open_with_flags(immutable_uri(path), flags),
        _ => Connection::open_with_flags(path, flags),
    }
    .map_err(|e| open_error(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(map_err)?;
    conn.execute_batch(
        "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536; PRAGMA mmap_size = 268435456;",
    )
    .map_err(|e| open_error(path, e))?;
    super::keep_statements(&conn);
    super::postings::register(&conn)?;
    Ok(conn)
}

/// The error of a write transaction on a read-only store.
pub(super) fn write_refused(path: &Path) -> StoreError {
    StoreError::new(
        StoreErrorKind::Io,
        format!(
            "{} is open read-only (a read command opened it); this needs write access",
            path.display()
        ),
    )
}

/// The error of opening for writing a file the file system will not let
/// kith write.
pub(super) fn not_writable(path: &Path) -> StoreError {
    let cause = write_cause(path).unwrap_or_else(|| "SQLite opened it read-only".into());
    StoreError::new(
        StoreErrorKind::Io,
        format!(
            "cannot write {}: {cause}; commands that only read (search, events, nodes, \
             stats, export) can still read it",
            path.display()
        ),
    )
}

/// An error opening `path`: SQLite's words, the path, and why the file
/// system refuses writes when that is the trouble.
pub(super) fn open_error(path: &Path, err: rusqlite::Error) -> StoreError {
    with_cause(path, map_err(err))
}

/// `err` prefixed with the path, and with the file system's reason when
/// the file cannot be written (SQLite's own message never says).
pub(super) fn with_cause(path: &Path, err: StoreError) -> StoreError {
    let mut message = format!("cannot open {}: {}", path.display(), err.message());
    if err.kind() == StoreErrorKind::Io || cant_open(&err) {
        if let Some(cause) = write_cause(path) {
            message.push_str(&format!(" ({cause})"));
        }
    }
    err.with_message(message)
}

fn cant_open(err: &StoreError) -> bool {
    err.message().contains("unable to open") || err.message().contains("readonly")
}

/// Why `path` or its directory cannot be written, if they cannot. Nothing
/// is opened: closing any descriptor of a SQLite file drops every POSIX
/// lock this process holds on it, including those of a live connection.
fn write_cause(path: &Path) -> Option<String> {
    if let Err(e) = writable(path) {
        return Some(format!("the file cannot be written: {e}"));
    }
    let dir = path.parent()?;
    match std::fs::metadata(dir) {
        Ok(m) if m.permissions().readonly() => Some(format!(
            "its directory {} is read-only, and SQLite keeps files beside the database",
            dir.display()
        )),
        Err(e) => Some(format!(
            "its directory {} cannot be read: {e}",
            dir.display()
        )),
        Ok(_) => None,
    }
}

/// Whether this process may write `path`, as the file system answers an
/// open for writing (missing file, permission bits, read-only mount), asked
/// with `access(2)`.
#[cfg(unix)]
fn writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call,
    // and access(2) only reads it.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether `path` may be written, from its metadata where `access(2)` is
/// not available.
#[cfg(not(unix))]
fn writable(path: &Path) -> std::io::Result<()> {
    if std::fs::metadata(path)?.permissions().readonly() {
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    Ok(())
}

fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `file:PATH?immutable=1`, the path percent-encoded where a URI needs it.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_a_uri_cannot_hold() {
        assert_eq!(
            immutable_uri(Path::new("/a b/p?#%.kith/kith.sqlite")),
            "file:/a%20b/p%3F%23%25.kith/kith.sqlite?immutable=1"
        );
    }

    #[test]
    fn write_causes_name_a_missing_file_and_nothing_for_a_writable_one() {
        let dir = tempfile::tempdir().expect("a directory");
        let missing = dir.path().join("missing.sqlite");
        let cause = write_cause(&missing).expect("a missing file cannot be written");
        assert!(
            cause.starts_with("the file cannot be written: ") && cause.contains("No such file"),
            "{cause}"
        );
        let file = dir.path().join("kith.sqlite");
        std::fs::write(&file, b"").expect("a file");
        assert_eq!(write_cause(&file), None);
    }
}
