//! Set-ups shared by the unit tests that run the store's transactions one
//! by one (the write path, the embedding worker).

use std::sync::Arc;

use kith_core::{EventInput, Timestamp, Tombstone};
use kith_embed::Embedder;
use kith_store::postgres::testing::{test_database, TestDatabase};
use kith_store::postgres::PgStore;
use kith_store::sqlite::{OpenMode, SqliteStore};
use kith_store::{Store, TxMode};
use uuid::Uuid;

use crate::embedding::EmbeddingSpec;

/// A store of either backend for a unit test, with what keeps it alive
/// (fields drop in order: the store closes before its database goes).
pub(crate) struct TestStore {
    pub store: Box<dyn Store>,
    _dir: Option<tempfile::TempDir>,
    _db: Option<TestDatabase>,
}

/// The backends the unit tests that run transactions one by one cover.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// A fresh, empty store of this backend (PostgreSQL: a database of its
    /// own on the test server).
    pub fn open(self) -> TestStore {
        match self {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("k.sqlite");
                let store = SqliteStore::open(&path, OpenMode::CreateIfMissing).unwrap();
                TestStore {
                    store: Box::new(store),
                    _dir: Some(dir),
                    _db: None,
                }
            }
            Backend::Postgres => {
                let db = test_database();
                let store = PgStore::connect(db.url()).unwrap();
                TestStore {
                    store: Box::new(store),
                    _dir: None,
                    _db: Some(db),
                }
            }
        }
    }
}

/// A 64-dimension hashing embedder.
pub(crate) fn hashing() -> Arc<dyn Embedder> {
    EmbeddingSpec::parse("hashing-64")
        .unwrap()
        .load()
        .unwrap()
        .unwrap()
}

/// Maya's turn `text` in owner `o`'s session `s`.
pub(crate) fn mayas_turn(text: &str) -> EventInput {
    EventInput {
        owner_id: Some("o".into()),
        session_id: Some("s".into()),
        speaker: Some("Maya".into()),
        ..EventInput::new("user", text)
    }
}

/// Tombstones the event `id` in a write transaction of its own, as a
/// forget committing between two other transactions would.
pub(crate) fn tombstone(store: &dyn Store, id: Uuid) {
    let mut tx = store.begin(TxMode::Write).unwrap();
    let event = tx.get_event(id).unwrap().unwrap().event;
    let t = Tombstone::new(&event, Timestamp::now(), "test", Uuid::new_v4());
    tx.tombstone_event(id, &t).unwrap();
    tx.commit().unwrap();
}

/// A `#[test]` on each backend for every check named (a function taking
/// a [`Backend`] in the calling module, which imports `Backend`): modules
/// `sqlite` and `postgres`, so a test reads `…::sqlite::the_check`.
macro_rules! on_both_backends {
    ($($check:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $check() {
                super::$check(super::Backend::Sqlite);
            })*
        }
        mod postgres {
            $(#[test]
            fn $check() {
                super::$check(super::Backend::Postgres);
            })*
        }
    };
}
pub(crate) use on_both_backends;
