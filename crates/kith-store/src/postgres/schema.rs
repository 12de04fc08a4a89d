//! The PostgreSQL schema and its migrations.
//!
//! `MIGRATIONS[i]` takes a database from schema version `i` to `i + 1`; the
//! version lives in `kith_meta.schema_version`. PostgreSQL's DDL is
//! transactional, so all missing steps run in one transaction, taken under
//! an advisory lock (see [`super::migrate`]). The PostgreSQL schema has its
//! own version numbers, independent of SQLite's.
//!
//! Layout choices that differ from SQLite, and why:
//! - ids are `uuid`, evidence references `uuid[]`: half the bytes of text and
//!   cheap to join on.
//! - Times stay `text` (RFC 3339 in the offset the caller wrote, nanoseconds
//!   kept), beside `bigint` milliseconds where filters need instants;
//!   `timestamptz` would lose both the offset and the nanoseconds.
//! - JSON is `json`, not `jsonb`: `json` keeps the canonical text byte for
//!   byte (jsonb would rewrite numbers and refuse `\u0000`), yet still
//!   answers `->` for the few queries that look inside.
//! - The lexical index is a stored generated `tsvector` with a GIN index, so
//!   it can never be out of step with `content`.
//! - Every table carries `owner_id`: it is the distribution column for an
//!   owner-sharded Citus deployment (docs/deploy.md), and every index that
//!   serves a per-owner query starts with it.

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Each step, in order. Never edit a released step; add a new one.
pub const MIGRATIONS: &[&str] = &[
    // 1: events, nodes (+ full text), edges, operations, work items,
    // embeddings (pgvector).
    r#"
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE events (
    seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id             uuid PRIMARY KEY,
    owner_id       text NOT NULL,
    scope          text NOT NULL,
    session_id     text,
    role           text NOT NULL,
    speaker        text,
    content        text NOT NULL,
    content_sha256 text NOT NULL,
    event_time     text,
    event_time_ms  bigint,
    ingested_at    text NOT NULL,
    ingested_at_ms bigint NOT NULL,
    metadata       json,
    source_id      text NOT NULL,
    checksum       text NOT NULL,
    UNIQUE (owner_id, source_id)
);
CREATE INDEX events_owner_seq ON events (owner_id, seq);
CREATE INDEX events_owner_scope ON events (owner_id, scope, seq);
CREATE INDEX events_owner_session ON events (owner_id, session_id, seq);

-- The log is append-only: normal operation never rewrites or removes an
-- event. The error is a constraint violation (class 23), like SQLite's.
CREATE FUNCTION kith_events_are_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: an event is never %',
        CASE TG_OP WHEN 'UPDATE' THEN 'updated' WHEN 'DELETE' THEN 'deleted'
                   ELSE 'truncated' END
        USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER events_are_immutable BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION kith_events_are_append_only();
CREATE TRIGGER events_are_never_truncated BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION kith_events_are_append_only();

CREATE TABLE nodes (
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id              uuid PRIMARY KEY,
    owner_id        text NOT NULL,
    scope           text NOT NULL,
    session_id      text,
    node_type       text NOT NULL,
    content         text NOT NULL,
    metadata        json,
    confidence      double precision NOT NULL,
    lifecycle       text NOT NULL,
    epistemic_type  text NOT NULL,
    source_type     text NOT NULL,
    valid_from      text NOT NULL,
    valid_to        text,
    event_time      text,
    superseded_by   uuid,
    evidence_refs   uuid[] NOT NULL,
    source_event_id uuid,
    created_at      text NOT NULL,
    updated_at      text NOT NULL,
    created_ms      bigint NOT NULL,
    updated_ms      bigint NOT NULL,
    -- Copied from the source event at insert so that search filters on
    -- role and time without joining events for every match.
    source_role     text,
    effective_ms    bigint,
    -- English stemming and stopwords; always in step with content.
    content_tsv     tsvector GENERATED ALWAYS AS
                        (to_tsvector('english'::regconfig, content)) STORED
);
CREATE INDEX nodes_owner_seq ON nodes (owner_id, seq);
CREATE INDEX nodes_owner_scope_type ON nodes (owner_id, scope, node_type);
CREATE INDEX nodes_source_event ON nodes (source_event_id);
-- fastupdate off: new rows go straight into the index instead of a pending
-- list that every search scans linearly until vacuum merges it, so search
-- right after a bulk import stays fast (inserts pay a little more).
CREATE INDEX nodes_content_tsv ON nodes USING gin (content_tsv)
    WITH (fastupdate = off);

CREATE TABLE edges (
    seq                 bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                  uuid PRIMARY KEY,
    owner_id            text NOT NULL,
    scope               text NOT NULL,
    source_id           uuid NOT NULL,
    target_id           uuid NOT NULL,
    edge_type           text NOT NULL,
    confidence          double precision NOT NULL,
    valid_from          text NOT NULL,
    valid_to            text,
    provenance_event_id uuid,
    metadata            json,
    created_at          text NOT NULL
);
CREATE INDEX edges_source ON edges (source_id);
CREATE INDEX edges_target ON edges (target_id);

CREATE TABLE operations (
    seq        bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id         uuid PRIMARY KEY,
    kind       text NOT NULL,
    owner_id   text NOT NULL,
    scope      text NOT NULL,
    target_id  uuid,
    payload    json NOT NULL,
    created_at text NOT NULL,
    checksum   text NOT NULL
);
CREATE INDEX operations_owner ON operations (owner_id, kind, seq);
CREATE INDEX operations_target ON operations (target_id, seq);

CREATE TABLE work_items (
    seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    event_id       uuid PRIMARY KEY,
    owner_id       text NOT NULL,
    scope          text NOT NULL,
    status         text NOT NULL,
    attempts       bigint NOT NULL,
    reason_code    text,
    last_error     text,
    lease_until_ms bigint,
    options        json NOT NULL,
    created_at     text NOT NULL,
    updated_at     text NOT NULL
);
CREATE INDEX work_items_status ON work_items (status, owner_id, seq);

-- One vector per node. `vector` without a dimension holds any dimension;
-- `dim` is kept beside it so a query only compares vectors of its own
-- dimension (pgvector refuses to compare others). No ANN index: search is
-- an exact scan of one owner's vectors of one model.
CREATE TABLE embeddings (
    seq      bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    node_id  uuid PRIMARY KEY,
    owner_id text NOT NULL,
    model    text NOT NULL,
    dim      integer NOT NULL,
    vector   vector NOT NULL
);
CREATE INDEX embeddings_owner_model ON embeddings (owner_id, model, dim);
"#,
    // 2: an owner's embeddings in seq order, for the in-process copy that
    // grows by seq (postgres/vectors.rs), and the generation it checks;
    // an owner's nodes by type.
    r#"
CREATE INDEX embeddings_owner_seq ON embeddings (owner_id, seq);
-- An owner's nodes of one type (its entities, say) without walking all of
-- its nodes: retrieval asks for them on every query.
CREATE INDEX nodes_owner_type_seq ON nodes (owner_id, node_type, seq);
INSERT INTO kith_meta (key, value) VALUES ('embeddings_generation', '0')
    ON CONFLICT (key) DO NOTHING;
"#,
    // 3: forgetting. An event can be turned, once, into a tombstone: its
    // content, speaker and metadata erased, every other column unchanged,
    // and the tombstone's own fields set. Every other update, every delete
    // and TRUNCATE are still refused.
    r#"
ALTER TABLE events ADD COLUMN forgotten_at text;
ALTER TABLE events ADD COLUMN forgotten_reason text;
ALTER TABLE events ADD COLUMN forgotten_by uuid;
ALTER TABLE events ADD COLUMN tombstone_checksum text;
CREATE OR REPLACE FUNCTION kith_events_are_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND OLD.forgotten_at IS NULL AND NEW.forgotten_at IS NOT NULL
       AND NEW.forgotten_reason IS NOT NULL AND NEW.forgotten_by IS NOT NULL
       AND NEW.tombstone_checksum IS NOT NULL
       AND NEW.content = '' AND NEW.speaker IS NULL AND NEW.metadata IS NULL
       AND NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.owner_id = OLD.owner_id
       AND NEW.scope = OLD.scope AND NEW.session_id IS NOT DISTINCT FROM OLD.session_id
       AND NEW.role = OLD.role AND NEW.content_sha256 = OLD.content_sha256
       AND NEW.event_time IS NOT DISTINCT FROM OLD.event_time
       AND NEW.event_time_ms IS NOT DISTINCT FROM OLD.event_time_ms
       AND NEW.ingested_at = OLD.ingested_at AND NEW.ingested_at_ms = OLD.ingested_at_ms
       AND NEW.source_id = OLD.source_id AND NEW.checksum = OLD.checksum
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'events are append-only: an event is never %',
        CASE TG_OP WHEN 'UPDATE' THEN 'updated, except once into a tombstone that erases its content, speaker and metadata'
                   WHEN 'DELETE' THEN 'deleted'
                   ELSE 'truncated' END
        USING ERRCODE = 'restrict_violation';
END
$$;
"#,
    // 4: a journal record (a retrieval receipt) in one round trip
    // (PgStore::append_unless_expiring). In a function, each statement of
    // a READ COMMITTED transaction takes its snapshot when it starts, so
    // the checks after the write lock see what earlier writers committed,
    // as the statements of a write transaction do. It writes nothing and
    // answers 'expiring' when the record would expire an older one of its
    // owner and kind (count past `keep`, or one of the oldest `scan`
    // created before `cutoff_ms`; a time PostgreSQL cannot read counts as
    // expiring): the caller then writes in a transaction that expires them.
    r#"
CREATE FUNCTION kith_append_unless_expiring(
    lock_key bigint, lock_wait text,
    op_id uuid, op_kind text, op_owner text, op_scope text, op_target uuid,
    op_payload text, op_created_at text, op_checksum text,
    keep bigint, cutoff_ms bigint, scan integer, generation_key text
) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_wait, true);
    PERFORM pg_advisory_xact_lock(lock_key);
    PERFORM set_config('lock_timeout', '0', true);
    IF keep IS NOT NULL AND (
        SELECT count(*) FROM operations WHERE owner_id = op_owner AND kind = op_kind
    ) + 1 > keep THEN
        RETURN 'expiring';
    END IF;
    IF cutoff_ms IS NOT NULL THEN
        BEGIN
            IF EXISTS (
                SELECT 1 FROM (
                    SELECT created_at FROM operations
                    WHERE owner_id = op_owner AND kind = op_kind
                    ORDER BY seq LIMIT scan
                ) o
                -- Milliseconds as kith counts them are floored; PostgreSQL
                -- rounds to microseconds: a millisecond of margin.
                WHERE extract(epoch FROM o.created_at::timestamptz) * 1000 < cutoff_ms + 1
            ) THEN
                RETURN 'expiring';
            END IF;
        EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow THEN
            RETURN 'expiring';
        END;
    END IF;
    INSERT INTO operations (id, kind, owner_id, scope, target_id, payload, created_at, checksum)
    VALUES (op_id, op_kind, op_owner, op_scope, op_target, op_payload::json, op_created_at,
            op_checksum)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'exists';
    END IF;
    INSERT INTO kith_meta (key, value) VALUES (generation_key, '1')
    ON CONFLICT (key) DO UPDATE SET value = ((kith_meta.value)::bigint + 1)::text;
    RETURN 'appended';
END
$$;
"#,
];
