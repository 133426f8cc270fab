# vault-rag — everything a fresh clone needs is reached from here.
#   make demo   set up, index the demo vault, run the demo searches
#   make test   run the tests (what .ci/run calls)

SHELL := /bin/bash
# The binary reads .env itself (VAULT_PATH, DB_PATH, ...).

DATA      ?= $(CURDIR)/data
export VAULT_RAG_DATA ?= $(DATA)
export CGO_ENABLED := 1
export CGO_LDFLAGS := -L$(DATA)/lib $(CGO_LDFLAGS)
GOFLAGS_TAGS := -tags=sqlite_fts5
BIN := bin/vault-rag
GO_SOURCES := $(shell find . -name '*.go' -not -path './data/*' -not -path './node_modules/*' 2>/dev/null) go.mod go.sum models/manifest.json

.PHONY: setup build demo test test-short eval eval-check bench fuzz clean

## setup: native libraries, Go modules and models (idempotent, cached under data/)
setup: $(DATA)/.setup-done

$(DATA)/.setup-done: scripts/setup.sh scripts/platform.sh models/manifest.json go.mod
	bash scripts/setup.sh
	$(MAKE) --no-print-directory build
	$(BIN) models fetch --require bge-small-en-v1.5-q,bge-small-en-v1.5,bge-small-zh-v1.5-q,bge-small-zh-v1.5
	@touch $@

build: $(BIN)

$(BIN): $(GO_SOURCES)
	go build $(GOFLAGS_TAGS) -o $(BIN) ./cmd/vault-rag

## demo: the main job — set up, index the demo vault, print the demo searches
demo: setup
	$(BIN) reindex
	$(BIN) search

## test: every test, with the real models
test: setup
	go vet $(GOFLAGS_TAGS) ./...
	go test $(GOFLAGS_TAGS) -count=1 ./...

test-short: setup
	go test $(GOFLAGS_TAGS) -short -count=1 ./...

## eval: score every configuration on the demo vault, Cranfield, CACM and the three real vaults (Obsidian
##   developer docs, blue-book, the Chinese Obsidian help), without and with the client expansions of
##   ../shared/client-expansions; each dataset indexed with the model a first index of it would choose
EVAL_DATASETS := --dataset demo --dataset ../shared/datasets/cranfield --dataset ../shared/datasets/cacm \
	--dataset ../shared/datasets/obsidian-dev-docs --dataset ../shared/datasets/blue-book \
	--dataset ../shared/datasets/obsidian-help-zh --expansions ../shared/client-expansions
eval: setup
	$(BIN) eval $(EVAL_DATASETS) --report report

## eval-check: the regression gate — exits non-zero if any number moved. Datasets are indexed
##   with the fp32 embedder, whose scores agree across CPUs; the users' int8 embedder is then
##   checked against it on the shipped configurations (README "Reproducible")
eval-check: setup
	$(BIN) eval --check $(EVAL_DATASETS)

clean:
	rm -rf bin report

## e2e: the official MCP TypeScript SDK drives `vault-rag serve` over stdio and streamable HTTP
.PHONY: e2e
e2e: setup build
	cd e2e && npm ci --no-audit --no-fund && node mcp-e2e.mjs

## bench: the performance figures (report/bench.md and .json); takes a while
.PHONY: bench
bench: setup build
	$(BIN) bench --cranfield ../shared/datasets/cranfield --recall ../shared/datasets/cacm --out report/bench

## fuzz: run each fuzz target briefly (FUZZTIME each, one after another); seeds live in */testdata/fuzz/
FUZZTIME ?= 10s
FUZZ_TARGETS := internal/vault:FuzzParseNote internal/vault:FuzzChunkNote internal/vault:FuzzExtractLinks stages:FuzzMatchExpr pipeline:FuzzParseConfig pipeline:FuzzQuery
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzz: $$name ($$pkg, $(FUZZTIME))"; \
		go test $(GOFLAGS_TAGS) -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg/; \
	done

## load: bounded load test of `serve` on loopback: 16 MCP clients, 2,000 calls, a reindex mid-run;
##       latency per tool, throughput, resident memory (idle, loaded, peak); JSON in data/bench/load.json
.PHONY: load
load: setup build
	go run $(GOFLAGS_TAGS) ./loadtest -calls 2000 -json data/bench/load.json
