# ragdown's image: `ragdown serve` for the folders mounted at /docs (one folder per
# subdirectory), the index in the /data volume, the model and ONNX Runtime inside the image so
# the first start downloads nothing, run as an unprivileged user.
#
#   docker compose up -d            builds the binary in a Rust stage, then this image
#   cargo build --release && podman build --build-arg RAGDOWN_BINARY=prebuilt -t ragdown .
#                                   takes target/release/ragdown instead (CI builds it so)
#
# Build arguments: RAGDOWN_EMBEDDER, the model baked in (default granite-small; see the README's
# Models); RAGDOWN_BINARY, `built` or `prebuilt`. Files put in docker/models/ before the build
# are taken as they are instead of downloaded (CI bakes its offline test model that way).

ARG RAGDOWN_BINARY=built

FROM docker.io/library/rust:1-bookworm AS binary-built
WORKDIR /src
COPY . .
RUN CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=true \
    cargo build --release --locked --bin ragdown \
 && install -D target/release/ragdown /out/ragdown

FROM scratch AS binary-prebuilt
COPY target/release/ragdown /out/ragdown

# Only the stage the argument names is built.
FROM binary-${RAGDOWN_BINARY} AS binary

FROM docker.io/library/debian:bookworm-slim
ARG RAGDOWN_EMBEDDER=granite-small
# Certificates for downloads a user may still ask for (another model, an OpenAI endpoint).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# /data is open to any user, so that compose's `user:` (to write notes as their owner) keeps
# an index too.
RUN useradd --system --user-group --uid 10001 --home-dir /data --no-create-home ragdown \
 && mkdir -p /docs /data \
 && chown ragdown:ragdown /docs /data \
 && chmod 1777 /data
COPY --from=binary /out/ragdown /usr/local/bin/ragdown
COPY docker/models/ /opt/ragdown/models/
ENV RAGDOWN_EMBEDDER=${RAGDOWN_EMBEDDER} \
    RAGDOWN_MODELS=/opt/ragdown/models
# Downloads what docker/models/ lacks (the model, ONNX Runtime's library from PyPI), checks
# that it loads and embeds, and leaves the models read-only for the user that serves.
RUN ragdown model && rm -f /opt/ragdown/models/README.md && chmod -R a+rX /opt/ragdown/models
ENV RAGDOWN_DOCS_DIR=/docs \
    RAGDOWN_DATA_DIR=/data \
    RAGDOWN_BIND=0.0.0.0 \
    PORT=3000 \
    HOME=/data
USER ragdown
WORKDIR /data
VOLUME /data
EXPOSE 3000
ENTRYPOINT ["ragdown"]
CMD ["serve"]
