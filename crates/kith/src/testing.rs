//! Set-ups shared by the unit tests that run the store's transactions one
//! by one (the write path, the embedding worker).

use std::path::Path;
use std::sync::Arc;

use kith_core::{EventInput, Timestamp, Tombstone};
use kith_embed::Embedder;
use kith_store::sqlite::{OpenMode, SqliteStore};
use kith_store::{Store, TxMode};
use uuid::Uuid;

use crate::embedding::EmbeddingSpec;

/// A SQLite store in `dir` and a 64-dimension hashing embedder.
pub(crate) fn sqlite_with_hashing(dir: &Path) -> (SqliteStore, Arc<dyn Embedder>) {
    let store = SqliteStore::open(&dir.join("k.sqlite"), OpenMode::CreateIfMissing).unwrap();
    let embedder = EmbeddingSpec::parse("hashing-64")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    (store, embedder)
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
