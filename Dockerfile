# syntax=docker/dockerfile:1
# Legate: a static, cgo-free binary, running as a non-root user. Two images:
#
#   docker build -t legate .                      # distroless, the binary alone (the default)
#   docker build -t legate:full --target full .   # plus Node.js (npx) and uv (uvx), for stdio upstreams
#   docker build --build-arg TAGS=custom,connector_http,connector_webhook .   # a slim build (docs/build.md)
#
#   docker run -p 8080:8080 -v legate-state:/var/lib/legate -v $PWD/config.yaml:/etc/legate/config.yaml:ro legate \
#     serve --config /etc/legate/config.yaml --listen 0.0.0.0:8080 --state-dir /var/lib/legate
#
# Stdio upstreams (`command: [npx, …]`, `command: [uvx, …]`) run inside the container: the
# default image has no Node.js or Python, so use the `full` target for them, or extend an image
# of your own with `COPY --from=legate /legate /legate`. compose.yaml runs the image with a
# config, a state volume and an auth token.
#
# Inside the container Legate listens on 0.0.0.0, which it refuses without authentication: give it a
# config with an `auth:` section (tokens from `legate token create … --state-dir /var/lib/legate`, or
# OAuth), or add --allow-unauthenticated behind a proxy that authenticates. The HEALTHCHECK asks
# /healthz on 127.0.0.1:8080: with `allowed_hosts` set, list 127.0.0.1:8080 in it too.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
# Build tags, empty for every connector type; see docs/build.md for slim builds.
ARG TAGS=
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The same command as `make build` (and `make build-slim` with TAGS).
RUN go build -trimpath -tags "${TAGS}" -ldflags "-s -w -X main.version=${VERSION}" -o /out/legate ./cmd/legate \
 && mkdir -p /out/state

# uv and uvx for Python stdio upstreams, in the full image.
FROM ghcr.io/astral-sh/uv:0.13.8 AS uv

FROM node:22-bookworm-slim AS full
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=uv /uv /uvx /usr/local/bin/
COPY --from=build /out/legate /legate
COPY --from=build --chown=65532:65532 /out/state /var/lib/legate
# npx and uvx cache what they fetch under HOME.
ENV HOME=/var/lib/legate
USER 65532:65532
VOLUME ["/var/lib/legate"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["/legate", "health"]
ENTRYPOINT ["/legate"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--state-dir", "/var/lib/legate"]

# The release image (.goreleaser.yaml, docker buildx --target release): the default image, but
# with the binary goreleaser built for TARGETPLATFORM (at <os>/<arch>/legate in its context)
# rather than one built here.
FROM --platform=$BUILDPLATFORM busybox:1.37 AS release-state
RUN mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot AS release
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/legate /legate
COPY --from=release-state --chown=65532:65532 /out/state /var/lib/legate
USER 65532:65532
VOLUME ["/var/lib/legate"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["/legate", "health"]
ENTRYPOINT ["/legate"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--state-dir", "/var/lib/legate"]

# The default image: the last stage.
FROM gcr.io/distroless/static-debian12:nonroot AS static
COPY --from=build /out/legate /legate
# The state dir (SQLite database and the tool cache) belongs to the nonroot user (65532).
COPY --from=build --chown=65532:65532 /out/state /var/lib/legate
USER 65532:65532
VOLUME ["/var/lib/legate"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["/legate", "health"]
ENTRYPOINT ["/legate"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--state-dir", "/var/lib/legate"]
