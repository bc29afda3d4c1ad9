# Strata — every set-up step a fresh machine with Go needs is behind these
# targets: `make run` and `make test` (see README.md).

GO        ?= go
BIN       ?= bin
# duckdb_arrow: sync ingestion through DuckDB's Arrow scan (impl/sync). Without
# the tag the code builds too, and ingests through the slower Appender.
TAGS      ?= duckdb_arrow
# Flags for `make run`; e.g. make run RUN_FLAGS="--addr 127.0.0.1:9090".
RUN_FLAGS ?=
# Packages and flags for `make bench`.
BENCH     ?= .
BENCH_PKG ?= ./...
GEN_TMP   := $(shell mktemp -u /tmp/strata-gen.XXXXXX)

.PHONY: all deps generate build run test check bench conformance clean

all: build

## deps: install the OS packages the project needs (apt-get, only when missing).
deps:
	@./scripts/deps.sh

## generate: regenerate gen/ and sdk/client.gen.go from openapi/openapi.yaml, and
## plugins/proto from connector.proto.
generate:
	$(GO) generate ./gen/... ./plugins/proto/...

## build: build bin/strata and the connector plugins into bin/plugins.
build:
	$(GO) build -tags $(TAGS) -o $(BIN)/strata ./cmd/strata
	$(GO) build -o $(BIN)/plugins/strata-connector-hosted_backend ./plugins/hostedbackend/cmd/strata-connector-hosted_backend

## run: build and serve on the embedded defaults (http://127.0.0.1:8080, ./data),
## creating a demo tenant and user on an empty store and printing how to log in.
run: deps build
	./$(BIN)/strata serve --demo $(RUN_FLAGS)

## test: run every test (also starts the test PostgreSQL when it is not running).
test: deps
	@./scripts/deps.sh --test
	$(GO) test -tags $(TAGS) -count=1 -timeout 14m ./...
	$(GO) test -count=1 ./impl/sync/   # ingestion through the Appender (builds without the tag)

## check: gofmt, go vet, and generated code in sync with openapi/openapi.yaml.
check:
	@unformatted=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...
	$(GO) vet ./impl/sync/   # the Appender path of builds without the tag
	@mkdir -p $(GEN_TMP)
	@# oapi-codegen's -o does not override a config's output, so generate from copies that point into $(GEN_TMP).
	@sed 's#^output:.*#output: $(GEN_TMP)/server.gen.go#' openapi/server.cfg.yaml > $(GEN_TMP)/server.cfg.yaml
	@sed 's#^output:.*#output: $(GEN_TMP)/client.gen.go#' openapi/client.cfg.yaml > $(GEN_TMP)/client.cfg.yaml
	@$(GO) tool oapi-codegen -config $(GEN_TMP)/server.cfg.yaml openapi/openapi.yaml
	@$(GO) tool oapi-codegen -config $(GEN_TMP)/client.cfg.yaml openapi/openapi.yaml
	@diff -u gen/api/server.gen.go $(GEN_TMP)/server.gen.go >/dev/null && \
	 diff -u sdk/client.gen.go $(GEN_TMP)/client.gen.go >/dev/null || \
	 { echo "generated code is out of date: run make generate and commit"; rm -rf $(GEN_TMP); exit 1; }
	@rm -rf $(GEN_TMP)
	@# The protobuf code: regenerate in place and compare with the committed files.
	@$(GO) generate ./plugins/proto/... && git diff --quiet -- plugins/proto || \
	 { echo "plugins/proto is out of date with connector.proto: run make generate and commit"; exit 1; }
	@echo "check: ok"

## conformance: run the conformance suite against a real `strata serve` of the built binary, with
## bin/postgrest-fixture (a PostgREST-protocol test double over the test PostgreSQL) as the hosted
## backend of its sync check.
conformance: deps build
	@./scripts/deps.sh --test
	$(GO) build -o $(BIN)/postgrest-fixture ./plugins/hostedbackend/postgrestfixture/cmd/postgrest-fixture
	./scripts/conformance.sh

## bench: run the benchmarks (BENCH=regexp BENCH_PKG=./impl/...).
bench: deps
	$(GO) test -tags $(TAGS) -run '^$$' -bench '$(BENCH)' -benchmem -count 6 $(BENCH_PKG)

clean:
	rm -rf $(BIN)
