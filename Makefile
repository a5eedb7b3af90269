# Legate. `make test` is what CI runs; `make peers` installs the real MCP
# clients the end-to-end tests use (they skip without them, fail under CI=true).
export CGO_ENABLED := 0
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/legate
comma    := ,
space    := $() $()

.PHONY: build build-slim install run test test-short lint peers anchors gateways bench bench-smoke bench-curves fuzz fuzz-smoke soak clean docs

## build: the static, stripped binary with every connector type (docs/build.md).
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/legate

## build-slim: the same with only the connector types in CONNECTORS (upstream
## MCP servers are always in): make build-slim CONNECTORS="http webhook postgres".
CONNECTORS ?= http webhook
SLIM_TAGS  := custom $(addprefix connector_,$(CONNECTORS))
build-slim:
	$(GO) build -trimpath -tags "$(subst $(space),$(comma),$(strip $(SLIM_TAGS)))" -ldflags "$(LDFLAGS)" -o $(BIN)-slim ./cmd/legate

## install: the binary into $(go env GOPATH)/bin, with the version of this checkout.
install:
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/legate

run:
	$(GO) run ./cmd/legate serve

## test: lint, then every test (unit, contract, real databases, real MCP peers),
## and the Helm chart's, a module of their own (deploy/go.mod: helm lint and
## template, every manifest decoded into the Kubernetes API types, the default
## install scraped).
test: lint peers
	$(GO) test -count=1 ./...
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-short: the Go tests alone, without installing peers.
test-short:
	$(GO) test ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

peers:
	bash scripts/peers.sh

## anchors: the MCP servers P7b measures Legate's SaaS connectors against
## (github-mcp-server, notion-mcp-server, server-slack), pinned, into
## $LEGATE_TOOLS_DIR/anchors (default ~/.cache/legate-tools/anchors).
anchors:
	bash scripts/anchors.sh

## gateways: the other MCP gateways P10 runs beside Legate (TBXark/mcp-proxy,
## docker/mcp-gateway), pinned, built from the Go module proxy into
## $LEGATE_TOOLS_DIR/gateways (default ~/.cache/legate-tools/gateways).
gateways:
	bash scripts/gateways.sh

## bench: the performance harness, scenarios P1-P10 and P7b against their baselines
## (docs/BENCHMARKS.md; P6 and P8 need PostgreSQL, P7b the anchors: make anchors,
## P10 the other gateways: make gateways, else each is skipped); a few minutes.
## Extra flags: make bench BENCHFLAGS="-only P1".
bench:
	$(GO) run ./cmd/legate-bench $(BENCHFLAGS)

## bench-smoke: every benchmark scenario once, briefly; fails only if one cannot run.
bench-smoke:
	$(GO) run ./cmd/legate-bench -smoke $(BENCHFLAGS)

## bench-curves: the cost curves, how Legate's cost grows with the work (cached
## tools, idle sessions, upstreams, approval requests, audit rows), each a
## table and an SVG plot in docs/curves (docs/BENCHMARKS.md, "Cost curves");
## 15-20 minutes, 10 of them the audit curve's sustained calls. Shorter:
## make bench-curves CURVEFLAGS="-curves-audit 1m"; a check that every curve
## runs, under a minute: make bench-curves CURVEFLAGS="-smoke" CURVES=/tmp/curves.
CURVES ?= docs/curves
bench-curves:
	$(GO) run ./cmd/legate-bench -curves $(CURVES) $(CURVEFLAGS)

## docs: regenerate what is generated from the specs: docs/connectors (one
## reference page per connector type), each connector README's config table,
## config.yaml's schema, key table and goldens, and the panel's screenshots
## in docs/panel (needs chromium and chromedriver).
docs:
	go test ./config -update
	go test ./connectors/all $(patsubst %/readme_test.go,./%,$(wildcard connectors/*/readme_test.go)) -run 'TestReferenceDocs|TestReadme' -update
	go test ./panel -run TestPanelInABrowser -screenshots

## fuzz: every Go fuzz target of the module, found by scripts/fuzz.sh, FUZZTIME
## each (default 60s); a failing input is left in the package's testdata/fuzz
## and named. Only some: make fuzz FUZZ='Glob|Parse'.
FUZZTIME ?= 60s
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## fuzz-smoke: every fuzz target for a few seconds (CI).
fuzz-smoke:
	FUZZTIME=5s bash scripts/fuzz.sh

## soak: 1,000 concurrent sessions and 100,000 calls through `legate serve` to an
## upstream that fails some calls on purpose; fails on any other error or on
## growth of goroutines, open files or memory (docs/BENCHMARKS.md, "Soak").
## Not part of `make test`; a few minutes. Smaller: make soak SOAKFLAGS="-sessions 100 -calls 10000".
soak:
	$(GO) run ./cmd/legate-bench -soak $(SOAKFLAGS)

clean:
	rm -rf bin
