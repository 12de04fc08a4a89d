//! The SQLite schema and its migrations.
//!
//! `MIGRATIONS[i]` takes a database from schema version `i` to `i + 1`; the
//! version lives in `meta.schema_version`. Opening a database applies the
//! missing steps in one transaction, and refuses one whose version is newer
//! than [`SCHEMA_VERSION`].

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Each step, in order. Never edit a released step; add a new one.
pub const MIGRATIONS: &[&str] = &[
    // 1: events, nodes (+ FTS5), edges, operations.
    r#"
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT NOT NULL UNIQUE,
    owner_id       TEXT NOT NULL,
    scope          TEXT NOT NULL,
    session_id     TEXT,
    role           TEXT NOT NULL,
    speaker        TEXT,
    content        TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    event_time     TEXT,
    event_time_ms  INTEGER,
    ingested_at    TEXT NOT NULL,
    ingested_at_ms INTEGER NOT NULL,
    metadata       TEXT,
    source_id      TEXT NOT NULL,
    checksum       TEXT NOT NULL,
    UNIQUE (owner_id, source_id)
);
CREATE INDEX events_owner_scope ON events (owner_id, scope, seq);
CREATE INDEX events_owner_session ON events (owner_id, session_id, seq);

-- The log is append-only: normal operation never rewrites or removes an event.
CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: an event is never updated'); END;
CREATE TRIGGER events_are_permanent BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: an event is never deleted'); END;
-- INSERT OR REPLACE deletes the old row without firing DELETE triggers, so a
-- clashing insert is refused before it can replace anything.
CREATE TRIGGER events_are_never_replaced BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE id = NEW.id
             OR (owner_id = NEW.owner_id AND source_id = NEW.source_id))
BEGIN SELECT RAISE(ABORT, 'events are append-only: an event with this id or source id exists'); END;

CREATE TABLE nodes (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    owner_id        TEXT NOT NULL,
    scope           TEXT NOT NULL,
    session_id      TEXT,
    node_type       TEXT NOT NULL,
    content         TEXT NOT NULL,
    metadata        TEXT,
    confidence      REAL NOT NULL,
    lifecycle       TEXT NOT NULL,
    epistemic_type  TEXT NOT NULL,
    source_type     TEXT NOT NULL,
    valid_from      TEXT NOT NULL,
    valid_to        TEXT,
    event_time      TEXT,
    superseded_by   TEXT,
    evidence_refs   TEXT NOT NULL,
    source_event_id TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    -- Copied from the source event at insert so that search filters on
    -- role and time without joining events for every match.
    source_role     TEXT,
    effective_ms    INTEGER
);
CREATE INDEX nodes_owner_scope_type ON nodes (owner_id, scope, node_type);
CREATE INDEX nodes_source_event ON nodes (source_event_id);

-- BM25 over node text; external content keeps one copy of the text.
CREATE VIRTUAL TABLE node_fts USING fts5 (
    content,
    content = 'nodes',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE edges (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    id                  TEXT NOT NULL UNIQUE,
    owner_id            TEXT NOT NULL,
    scope               TEXT NOT NULL,
    source_id           TEXT NOT NULL,
    target_id           TEXT NOT NULL,
    edge_type           TEXT NOT NULL,
    confidence          REAL NOT NULL,
    valid_from          TEXT NOT NULL,
    valid_to            TEXT,
    provenance_event_id TEXT,
    metadata            TEXT,
    created_at          TEXT NOT NULL
);
CREATE INDEX edges_source ON edges (source_id);
CREATE INDEX edges_target ON edges (target_id);

CREATE TABLE operations (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    owner_id   TEXT NOT NULL,
    scope      TEXT NOT NULL,
    target_id  TEXT,
    payload    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    checksum   TEXT NOT NULL
);
CREATE INDEX operations_owner ON operations (owner_id, kind, seq);
"#,
    // 2: durable ingestion work items.
    r#"
CREATE TABLE work_items (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id       TEXT NOT NULL UNIQUE,
    owner_id       TEXT NOT NULL,
    scope          TEXT NOT NULL,
    status         TEXT NOT NULL,
    attempts       INTEGER NOT NULL,
    reason_code    TEXT,
    last_error     TEXT,
    lease_until_ms INTEGER,
    options        TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX work_items_status ON work_items (status, owner_id, seq);
CREATE INDEX operations_target ON operations (target_id, seq);
"#,
    // 3: embeddings; node creation and update times as milliseconds for
    // `as_of` filters.
    r#"
CREATE TABLE embeddings (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id  TEXT NOT NULL UNIQUE,
    owner_id TEXT NOT NULL,
    model    TEXT NOT NULL,
    dim      INTEGER NOT NULL,
    -- little-endian f32 × dim
    vector   BLOB NOT NULL
);
CREATE INDEX embeddings_owner_model ON embeddings (owner_id, model, seq);
ALTER TABLE nodes ADD COLUMN created_ms INTEGER;
ALTER TABLE nodes ADD COLUMN updated_ms INTEGER;
UPDATE nodes SET created_ms = CAST(unixepoch(created_at, 'subsec') * 1000 AS INTEGER),
                 updated_ms = CAST(unixepoch(updated_at, 'subsec') * 1000 AS INTEGER);
INSERT INTO meta (key, value) VALUES ('embeddings_generation', '0')
    ON CONFLICT (key) DO NOTHING;
"#,
    // 4: indexes for narrow searches under a big owner (entities, a time
    // window, a session) and for the embedding-model check.
    r#"
CREATE INDEX nodes_owner_type ON nodes (owner_id, node_type, seq);
CREATE INDEX nodes_owner_time ON nodes (owner_id, effective_ms);
CREATE INDEX nodes_owner_session ON nodes (owner_id, session_id);
CREATE INDEX embeddings_model_dim ON embeddings (model, dim);
"#,
    // 5: forgetting. An event can be turned, once, into a tombstone: its
    // content, speaker and metadata erased, every other column unchanged, and
    // the tombstone's own fields set. Every other update and every delete is
    // still refused.
    r#"
ALTER TABLE events ADD COLUMN forgotten_at TEXT;
ALTER TABLE events ADD COLUMN forgotten_reason TEXT;
ALTER TABLE events ADD COLUMN forgotten_by TEXT;
ALTER TABLE events ADD COLUMN tombstone_checksum TEXT;
DROP TRIGGER events_are_immutable;
CREATE TRIGGER events_are_immutable BEFORE UPDATE ON events
WHEN NOT (
    OLD.forgotten_at IS NULL AND NEW.forgotten_at IS NOT NULL
    AND NEW.forgotten_reason IS NOT NULL AND NEW.forgotten_by IS NOT NULL
    AND NEW.tombstone_checksum IS NOT NULL
    AND NEW.content = '' AND NEW.speaker IS NULL AND NEW.metadata IS NULL
    AND NEW.seq IS OLD.seq AND NEW.id IS OLD.id AND NEW.owner_id IS OLD.owner_id
    AND NEW.scope IS OLD.scope AND NEW.session_id IS OLD.session_id
    AND NEW.role IS OLD.role AND NEW.content_sha256 IS OLD.content_sha256
    AND NEW.event_time IS OLD.event_time AND NEW.event_time_ms IS OLD.event_time_ms
    AND NEW.ingested_at IS OLD.ingested_at AND NEW.ingested_at_ms IS OLD.ingested_at_ms
    AND NEW.source_id IS OLD.source_id AND NEW.checksum IS OLD.checksum
)
BEGIN SELECT RAISE(ABORT, 'events are append-only: an event is never updated, except once into a tombstone that erases its content, speaker and metadata'); END;
"#,
];
