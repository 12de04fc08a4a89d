//! kith on a PostgreSQL server: [`crate::Memory::init_database`] and
//! [`crate::Memory::connect`].
//!
//! A pack records its embedding model in `manifest.json`; a server database
//! has no directory, so the same facts are store settings
//! ([`kith_store::Tx::set_setting`]) in the database itself:
//!
//! | setting | value |
//! |---|---|
//! | `created_at` | when `init_database` made the memory (RFC 3339); its presence marks an initialised database |
//! | `created_by` | `kith <version>` |
//! | `embedding_model` | the embedding model id, absent without vectors |
//! | `embedding_dimension` | its dimension |
//!
//! They are written in one transaction, so a database is either initialised
//! with its model or not at all.

use std::sync::Arc;

use kith_core::Timestamp;
use kith_embed::Embedder;
use kith_store::postgres::PgStore;
pub use kith_store::postgres::{PgOptions, VectorCacheMode};
use kith_store::{Store, TxMode};

use crate::embedding::{EmbeddingSpec, LazyEmbedder};
use crate::error::{Error, PackError};

/// The setting whose presence marks a database `init_database` made.
pub const SETTING_CREATED_AT: &str = "created_at";
/// The kith version that made the memory.
pub const SETTING_CREATED_BY: &str = "created_by";
/// The embedding model id (absent: no vectors).
pub const SETTING_EMBEDDING_MODEL: &str = "embedding_model";
/// The embedding dimension.
pub const SETTING_EMBEDDING_DIMENSION: &str = "embedding_dimension";

/// A database the facade opened: its store, its URL with the password
/// hidden, and the embedder its settings record.
pub(crate) struct Opened {
    /// The store.
    pub store: PgStore,
    /// The URL, password hidden.
    pub shown: String,
    /// The embedding model the database records (loaded on first use).
    pub embedder: Option<Arc<dyn Embedder>>,
}

/// Makes a new memory in the PostgreSQL database at `url` (which must hold
/// no kith memory yet): creates kith's schema, and records `embedder`'s
/// model id and dimension when given (else no vectors).
pub(crate) fn init(
    url: &str,
    embedder: Option<Arc<dyn Embedder>>,
    options: PgOptions,
) -> Result<Opened, Error> {
    let shown = redact_url(url);
    let store = connect_store(url, &shown, options)?;
    crate::retry::on_busy("init the database", || {
        let mut tx = store.begin(TxMode::Write)?;
        let events = tx.stats(None)?.events;
        if tx.get_setting(SETTING_CREATED_AT)?.is_some() || events > 0 {
            return Err(PackError::DatabaseInUse { url: shown.clone() }.into());
        }
        tx.set_setting(SETTING_CREATED_AT, Some(&Timestamp::now().to_rfc3339()))?;
        tx.set_setting(
            SETTING_CREATED_BY,
            Some(&format!("kith {}", env!("CARGO_PKG_VERSION"))),
        )?;
        write_model(&mut *tx, embedder.as_deref())?;
        tx.commit()?;
        Ok(())
    })?;
    Ok(Opened {
        store,
        shown,
        embedder,
    })
}

/// Opens the memory in the PostgreSQL database at `url`, migrating kith's
/// schema if it is older; the embedding model the database records is
/// loaded on first use. A database `init` did not make is refused, with
/// the command that makes one.
pub(crate) fn connect(url: &str, options: PgOptions) -> Result<Opened, Error> {
    let shown = redact_url(url);
    let store = connect_store(url, &shown, options)?;
    let (created, model, dimension) = {
        let mut tx = store.begin(TxMode::Read)?;
        (
            tx.get_setting(SETTING_CREATED_AT)?,
            tx.get_setting(SETTING_EMBEDDING_MODEL)?,
            tx.get_setting(SETTING_EMBEDDING_DIMENSION)?,
        )
    };
    if created.is_none() {
        return Err(PackError::NotADatabase { url: shown }.into());
    }
    let embedder = match (model, dimension) {
        (Some(model), Some(dim)) => {
            let dim: usize = dim.parse().map_err(|_| {
                Error::Store(kith_store::StoreError::corrupted(format!(
                    "the database's embedding_dimension setting is {dim:?}, not a number"
                )))
            })?;
            let spec = EmbeddingSpec::parse(&model)?;
            Some(Arc::new(LazyEmbedder::new(spec, model, dim)) as Arc<dyn Embedder>)
        }
        _ => None,
    };
    Ok(Opened {
        store,
        shown,
        embedder,
    })
}

/// Records `embedder`'s model (or none) in the database's settings, in its
/// own transaction.
pub(crate) fn record_model(
    store: &dyn Store,
    embedder: Option<&dyn Embedder>,
) -> Result<(), Error> {
    crate::retry::on_busy("record the embedding model", || {
        let mut tx = store.begin(TxMode::Write)?;
        write_model(&mut *tx, embedder)?;
        tx.commit()?;
        Ok(())
    })
}

/// Builds pgvector's HNSW index over the `dim`-dimensional vectors of the
/// database at `url` (for the opt-in `KITH_PG_VECTOR_INDEX=hnsw` path;
/// `kith bench owners --hnsw`); returns the build time.
pub fn create_hnsw_index(url: &str, dim: usize) -> Result<std::time::Duration, Error> {
    Ok(kith_store::postgres::hnsw::create_index(url, dim)?)
}

/// Connects, adding what to check to a connection failure.
fn connect_store(url: &str, shown: &str, options: PgOptions) -> Result<PgStore, Error> {
    PgStore::connect_with(url, options).map_err(|e| {
        let hint = match e.kind() {
            kith_store::StoreErrorKind::Io => {
                "; is the server running and reachable, and is the URL (--database-url or \
                 KITH_DATABASE_URL) right?"
            }
            _ => "",
        };
        Error::Store(kith_store::StoreError::new(
            e.kind(),
            format!("{shown}: {e}{hint}"),
        ))
    })
}

/// Records `embedder`'s model and dimension, or removes them (no vectors).
pub(crate) fn write_model(
    tx: &mut dyn kith_store::Tx,
    embedder: Option<&dyn Embedder>,
) -> Result<(), Error> {
    tx.set_setting(SETTING_EMBEDDING_MODEL, embedder.map(|e| e.model_id()))?;
    let dim = embedder.map(|e| e.dimension().to_string());
    tx.set_setting(SETTING_EMBEDDING_DIMENSION, dim.as_deref())?;
    Ok(())
}

/// `url` without its password, for messages and `kith stats`: the password
/// of a `postgres://user:password@host/db` URL and a `password=` key of a
/// key-value string become `***`.
pub fn redact_url(url: &str) -> String {
    for scheme in ["postgres://", "postgresql://"] {
        if let Some(rest) = url.strip_prefix(scheme) {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            if let Some(at) = authority.rfind('@') {
                let (userinfo, host) = authority.split_at(at);
                if let Some(colon) = userinfo.find(':') {
                    return format!("{scheme}{}:***{host}{tail}", &userinfo[..colon]);
                }
            }
            return url.to_string();
        }
    }
    url.split_whitespace()
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k.trim() == "password" => "password=***".to_string(),
            _ => kv.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Creates the empty database `name` on the server of `url` (the role needs
/// `CREATEDB`), replacing one of that name when `replace`; returns its URL.
/// For benchmarks and scratch memories: follow with
/// [`crate::Memory::init_database`].
pub fn create_database(url: &str, name: &str, replace: bool) -> Result<String, Error> {
    Ok(kith_store::postgres::create_database(url, name, replace)?)
}

/// Refreshes the planner's statistics of database `name` on the server of
/// `url` (`ANALYZE`), as autovacuum does a while after a bulk load; lexical
/// search weighs words by them.
pub fn analyze_database(url: &str, name: &str) -> Result<(), Error> {
    let db = kith_store::postgres::with_dbname(url, name);
    Ok(kith_store::postgres::analyze(&db)?)
}

/// The URL of database `name` on the server of `url`.
pub fn database_url(url: &str, name: &str) -> String {
    kith_store::postgres::with_dbname(url, name)
}

/// Drops database `name` on the server of `url`, if it exists.
pub fn drop_database(url: &str, name: &str) -> Result<(), Error> {
    Ok(kith_store::postgres::drop_database(url, name)?)
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_are_hidden_in_both_url_forms() {
        assert_eq!(
            redact_url("postgres://kith:s3cret@db.example:5432/kith?sslmode=disable"),
            "postgres://kith:***@db.example:5432/kith?sslmode=disable"
        );
        assert_eq!(
            redact_url("postgresql://kith@db/kith"),
            "postgresql://kith@db/kith"
        );
        assert_eq!(
            redact_url("host=db user=kith password=s3cret dbname=kith"),
            "host=db user=kith password=*** dbname=kith"
        );
        assert_eq!(redact_url("host=db dbname=kith"), "host=db dbname=kith");
    }
}
