# syntax=docker/dockerfile:1
# Legate: a static, cgo-free binary on distroless, running as a non-root user.
#   docker build -t legate --build-arg VERSION=$(git describe --tags --always) .
#   docker run -p 8080:8080 -v legate-state:/var/lib/legate -v $PWD/config.yaml:/etc/legate/config.yaml:ro legate \
#     serve --config /etc/legate/config.yaml --listen 0.0.0.0:8080 --state-dir /var/lib/legate
# Inside the container Legate listens on 0.0.0.0, which it refuses without authentication: give it a
# config with an `auth:` section (tokens from `legate token create … --state-dir /var/lib/legate`, or
# OAuth), or add --allow-unauthenticated behind a proxy that authenticates.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
ARG VERSION=dev
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/legate ./cmd/legate \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/legate /legate
# The state dir (SQLite database and the tool cache) belongs to the nonroot user (65532).
COPY --from=build --chown=65532:65532 /out/state /var/lib/legate
USER 65532:65532
VOLUME ["/var/lib/legate"]
EXPOSE 8080
ENTRYPOINT ["/legate"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--state-dir", "/var/lib/legate"]
