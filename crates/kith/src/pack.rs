//! The memory pack: a directory holding `manifest.json` and one SQLite
//! database, `kith.sqlite`.
//!
//! Format versions (also in docs/internals/formats.md):
//! - 1: manifest + `kith.sqlite` (schema version 1: events, nodes + FTS5,
//!   edges, operations).
//!
//! Opening a pack of an older format migrates it; a newer one is refused
//! with the versions named; a manifest that is not kith's is refused without
//! touching anything.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kith_core::Timestamp;
use kith_embed::Embedder;
use serde::{Deserialize, Serialize};

use crate::error::{Error, PackError};

/// The pack format this build writes and the newest it reads.
pub const PACK_FORMAT_VERSION: u64 = 1;
/// The manifest's `format` field.
pub const PACK_FORMAT_NAME: &str = "kith-pack";
/// The manifest's file name inside the pack.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The database's file name inside the pack.
pub const DATABASE_FILE: &str = "kith.sqlite";

/// What `manifest.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`PACK_FORMAT_NAME`].
    pub format: String,
    /// The pack format version.
    pub format_version: u64,
    /// When the pack was made.
    pub created_at: Timestamp,
    /// The kith version that made it.
    pub created_by: String,
    /// The store backend (`sqlite`).
    pub backend: String,
    /// The database file, relative to the pack.
    pub database: String,
    /// The embedding model id, once vectors exist (retrieval issue).
    #[serde(default)]
    pub embedding_model: Option<String>,
    /// The embedding dimension, once vectors exist.
    #[serde(default)]
    pub embedding_dimension: Option<u32>,
}

impl Manifest {
    fn new() -> Self {
        Manifest {
            format: PACK_FORMAT_NAME.into(),
            format_version: PACK_FORMAT_VERSION,
            created_at: Timestamp::now(),
            created_by: format!("kith {}", env!("CARGO_PKG_VERSION")),
            backend: "sqlite".into(),
            database: DATABASE_FILE.into(),
            embedding_model: None,
            embedding_dimension: None,
        }
    }
}

/// Creates a new pack directory with its manifest. The database is created
/// by the caller (the store), after this succeeds.
pub fn create(dir: &Path) -> Result<Manifest, Error> {
    if dir.exists() {
        let empty = fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .next()
            .is_none();
        if !empty {
            return Err(PackError::AlreadyExists { path: dir.into() }.into());
        }
    }
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let manifest = Manifest::new();
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// Reads and checks the manifest of an existing pack; returns it (migrated
/// to the current format if it was older) and the database path.
pub fn open(dir: &Path) -> Result<(Manifest, PathBuf), Error> {
    let path = dir.join(MANIFEST_FILE);
    if !path.exists() {
        return Err(PackError::NotAPack { path: dir.into() }.into());
    }
    let text = fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let unknown = |reason: String| PackError::UnknownFormat {
        path: path.clone(),
        reason,
    };
    let raw: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unknown(format!("not JSON ({e})")))?;
    let format = raw.get("format").and_then(|f| f.as_str());
    if format != Some(PACK_FORMAT_NAME) {
        return Err(unknown(format!(
            "its format is {}, not \"{PACK_FORMAT_NAME}\"",
            format.map_or("missing".into(), |f| format!("{f:?}"))
        ))
        .into());
    }
    let version = raw
        .get("format_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| unknown("format_version is missing or not a whole number".into()))?;
    if version > PACK_FORMAT_VERSION {
        return Err(PackError::TooNew {
            path: dir.into(),
            found: version,
            supported: PACK_FORMAT_VERSION,
        }
        .into());
    }
    if version == 0 {
        return Err(unknown("format_version 0 was never written by kith".into()).into());
    }
    // Version 1 is the first format: there is nothing older to migrate yet.
    // A later format adds its step here and rewrites the manifest.
    let manifest: Manifest = serde_json::from_value(raw).map_err(|e| unknown(format!("{e}")))?;
    let db = dir.join(&manifest.database);
    if !db.exists() {
        return Err(unknown(format!("its database {} is missing", db.display())).into());
    }
    Ok((manifest, db))
}

/// Records `embedder`'s model id and dimension (or none) in the manifest
/// and writes it.
pub(crate) fn record_model(
    dir: &Path,
    manifest: &mut Manifest,
    embedder: Option<&dyn Embedder>,
) -> Result<(), Error> {
    manifest.embedding_model = embedder.map(|e| e.model_id().to_string());
    manifest.embedding_dimension = embedder.map(|e| e.dimension() as u32);
    write_manifest(dir, manifest)
}

/// The embedder the manifest records, loaded on first use; `None` when the
/// pack has no vectors.
pub(crate) fn recorded_embedder(manifest: &Manifest) -> Result<Option<Arc<dyn Embedder>>, Error> {
    Ok(
        match (&manifest.embedding_model, manifest.embedding_dimension) {
            (Some(model), Some(dim)) => {
                let spec = crate::embedding::EmbeddingSpec::parse(model)?;
                Some(Arc::new(crate::embedding::LazyEmbedder::new(
                    spec,
                    model.clone(),
                    dim as usize,
                )) as Arc<dyn Embedder>)
            }
            _ => None,
        },
    )
}

/// Writes the manifest atomically (temporary file, fsync, rename).
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), Error> {
    let path = dir.join(MANIFEST_FILE);
    let tmp = dir.join(".manifest.json.tmp");
    let mut text = serde_json::to_string_pretty(manifest)
        .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
    text.push('\n');
    let mut file = fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    Ok(())
}
