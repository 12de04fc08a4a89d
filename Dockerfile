# kith in a container: `kith serve` (REST, MCP at /mcp, metrics) as a
# non-root user, the memory on the volume /data or in PostgreSQL.
# docs/deploy.md, "Docker", says how to run it and what was checked
# (crates/kith-cli/tests/dockerfile.rs checks this file on every test run).

# Build: the same command as a release build anywhere else.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
RUN cargo build --release --locked -p kith-cli

# Run: Debian slim, the binary and its entrypoint, nothing else.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin kith \
    && mkdir -p /data \
    && chown kith:kith /data
COPY --from=build /src/target/release/kith /usr/local/bin/kith
COPY docker/entrypoint.sh /usr/local/bin/kith-entrypoint
ENV KITH_PACK=/data/memory.kith \
    KITH_CACHE_DIR=/data/cache \
    KITH_EMBEDDINGS=minilm \
    KITH_LOG=info
USER kith
WORKDIR /data
VOLUME ["/data"]
EXPOSE 7878
ENTRYPOINT ["/usr/local/bin/kith-entrypoint"]
CMD ["serve", "--bind", "0.0.0.0:7878"]
