# The README's commands: `make serve` (Python 3.11+ and Rust only), `make test` (everything, the
# Go and TypeScript clients included: what CI runs), `make test-server` (the server's tests, Python
# and Rust only) and `make clients` (the clients' tooling and conformance tests: Go and Node).
# Each does its own set-up first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
RUST_SOURCES := $(shell find rust_core/src -name '*.rs') Cargo.toml rust_core/Cargo.toml
CLIENT_SOURCES := clients/python/pyproject.toml
# Go and Node tooling for the Go and TypeScript clients and the proto checks, pinned by these
# files and installed inside the repository (scripts/install_client_tools.sh).
GO_TOOLS := .tools/bin/.installed
GO_TOOL_PINS := $(foreach tool,protoc-plugins buf,$(addprefix scripts/tools/$(tool)/,go.mod go.sum)) \
  clients/go/go.mod clients/go/go.sum
NODE_TOOLS := clients/typescript/node_modules/.installed
# ghz, the gRPC load generator that bench/bench_load.py drives, pinned the same way. Only the load
# benchmark and its test use it, so `make serve` never needs it.
LOAD_TOOLS := .tools/bin/ghz
LOAD_TOOL_PINS := scripts/tools/ghz/go.mod scripts/tools/ghz/go.sum
# Every folder of generated code; `make proto` rewrites them all.
GENERATED := server/tutor_memory/_proto clients/python/tutor_memory_client/_proto \
  clients/go/memoryv1 clients/typescript/src/gen
SERVE_ARGS ?=
# PostgreSQL 15's server binaries: the test suite starts throwaway clusters with them
# (tests/helpers/postgres.py). Only tests and benchmarks need them; `make serve` never does.
PG_BIN := /usr/lib/postgresql/15/bin

# Tests that need Go or Node (every client's conformance against a real server, the proto checks)
# or ghz (the load benchmark's test); `make test-server` leaves them out, `make clients` runs the
# first two.
CLIENT_TESTS := tests/conformance
LOAD_TESTS := tests/bench/test_load_bench.py
# The console's browser tests need Chromium and its WebDriver (`make console-tools`).
BROWSER_TESTS := tests/console/test_console_browser.py
# pytest exits 5 when it collected no test: that is a failure here, never a pass.
PYTEST = $(PY) -m pytest $(1); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make: no tests ran" >&2; exit 1; fi; exit $$rc

.PHONY: serve test test-server clients setup install model client-tools load-tools console-tools postgres console-screenshots proto proto-check proto-release lint bench eval chaos fuzz clean

# Needs Python 3.11+ and a Rust toolchain only (tests/test_makefile.py holds it to that).
# The editable install writes no bytecode, and with PYTHONDONTWRITEBYTECODE set nothing else
# does: each start would compile the package's modules again (0.2 s of start-up here), so they
# are compiled first (a no-op for the ones that are up to date).
serve: setup
	$(PY) -m compileall -q server/tutor_memory
	$(BIN)/tutor-memory serve $(SERVE_ARGS)

# Everything, as CI runs it: Rust, the server's tests, every client's conformance (Go, Node) and
# the load benchmark's test (ghz, built with Go), and the console's browser tests (Chromium).
test: setup client-tools load-tools console-tools postgres
	cargo test --quiet --manifest-path rust_core/Cargo.toml
	$(call PYTEST,)

# The server's own tests, with Python and Rust only.
test-server: setup postgres
	cargo test --quiet --manifest-path rust_core/Cargo.toml
	$(call PYTEST,--ignore=$(CLIENT_TESTS) --ignore=$(LOAD_TESTS) --ignore=$(BROWSER_TESTS))

# The Go and TypeScript tooling, then every client's conformance test and the proto checks.
clients: setup client-tools postgres
	$(call PYTEST,$(CLIENT_TESTS) tests/clients)

# What serving needs: the package with its Rust extension, and the model.
setup: install model

install: $(INSTALLED)

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Builds the Rust extension (maturin) and installs the package and its dev tools, editable.
$(INSTALLED): pyproject.toml $(RUST_SOURCES) $(CLIENT_SOURCES) | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]' -e clients/python
	touch $@

# Downloads the pinned embedding model once and checks its sha256 (a no-op when present).
model: $(INSTALLED)
	$(BIN)/tutor-memory fetch-model

# protoc plugins and buf into .tools/bin, the Go client's modules, and the TypeScript client's
# node_modules; each fails clearly when Go or Node is missing.
client-tools: $(GO_TOOLS) $(NODE_TOOLS)

$(GO_TOOLS): $(GO_TOOL_PINS) scripts/install_client_tools.sh
	bash scripts/install_client_tools.sh go
	touch $@

$(NODE_TOOLS): clients/typescript/package-lock.json scripts/install_client_tools.sh
	bash scripts/install_client_tools.sh node
	touch $@

load-tools: $(LOAD_TOOLS)

# Installs PostgreSQL 15 from Debian's packages when its binaries are missing (as root, as CI
# runs; otherwise it says what to run).
postgres:
	@test -x $(PG_BIN)/initdb || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15; \
	  else \
	    echo "PostgreSQL 15 is missing: run 'sudo apt-get install postgresql-15'" >&2; exit 1; \
	  fi; }

# Headless Chromium and its WebDriver, from Debian, for the console's browser tests
# (tests/console/test_console_browser.py); only `make test` needs them, never `make serve`.
console-tools:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	else \
	  echo "installing chromium and chromium-driver (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
	    || { echo "make console-tools: cannot install chromium and chromium-driver (needs apt-get as root)" >&2; exit 1; }; \
	fi

# Re-takes the console's screenshots for the README into bench/results/console/.
console-screenshots: setup console-tools
	CONSOLE_SCREENSHOTS=bench/results/console $(PY) -m pytest tests/console/test_console_browser.py -q

$(LOAD_TOOLS): $(LOAD_TOOL_PINS) scripts/install_client_tools.sh
	bash scripts/install_client_tools.sh ghz
	touch $@

# Regenerates every stub from proto/, for Python, Go and TypeScript (see scripts/gen_proto.sh).
proto: $(INSTALLED) client-tools
	PYTHON=$(PY) bash scripts/gen_proto.sh

# Lints proto/ and checks it for breaking changes against the released version (buf.yaml,
# buf.released.json), then fails when the committed generated code differs from what proto/
# generates.
proto-check: proto
	bash scripts/check_proto.sh
	@git diff --exit-code --stat -- $(GENERATED) \
	  || { echo "generated code drifted from proto/: run 'make proto' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED))" \
	  || { echo "untracked generated files: run 'make proto' and commit" >&2; exit 1; }

# At a release: records proto/ as released (buf.released.json, to commit with the release).
proto-release: client-tools
	bash scripts/release_proto.sh

lint: $(INSTALLED) client-tools
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(PY) -m mypy.stubtest tutor_memory.native._core
	$(BIN)/lint-imports
	cargo fmt --check --manifest-path rust_core/Cargo.toml
	cargo clippy --quiet --manifest-path rust_core/Cargo.toml --all-targets -- -D warnings
	bash scripts/lint_clients.sh

# Every performance benchmark, one after the other (32-37 minutes on the development machine,
# 14-19 of them the memory benchmark's fill and ten-minute run); each writes bench/results/<name>.*.
# The hot path in process (pytest-benchmark, bench/hot_path): each run is saved in .benchmarks/
# and compared with the one before it (from the second run on); summary in bench/results/hot_path.*
BENCH_COMPARE = $(if $(wildcard .benchmarks/*/*.json),--benchmark-compare)

bench: setup load-tools postgres
	$(PY) -m pytest bench/hot_path -q --benchmark-enable --benchmark-autosave $(BENCH_COMPARE)
	$(PY) -m bench.bench_block
	$(PY) -m bench.bench_load
	$(PY) -m bench.bench_load --workers 2
	$(PY) -m bench.bench_ingest
	$(PY) -m bench.bench_startup
	$(PY) -m bench.bench_memory
	$(PY) -m bench.bench_embed
	$(PY) -m bench.bench_rank
	$(PY) -m bench.bench_file_ingest
	$(PY) -m bench.bench_consolidate
	$(PY) -m bench.bench_merge_threshold
	$(PY) -m bench.bench_text_shapes
	$(PY) -m bench.bench_hostile_files
	$(PY) -m bench.bench_hostile
	$(PY) -m bench.bench_postgres

# The evaluations (five to seven and a half minutes): the four-version ablation check over 45
# generated histories (run twice, for determinism), LoCoMo evidence recall (dev and held-out
# splits) and what each recall lever adds on the dev split, what centring the dense neighbours does
# (bench/bench_centring.py), and the intent detectors on the hand-labelled phrasing set.
eval: setup
	$(PY) -m bench.eval
	$(PY) -m bench.locomo
	$(PY) -m bench.locomo --ablation
	$(PY) -m bench.bench_centring
	$(PY) -m bench.phrasing

# The crash campaign of issue 12: 100 cycles of kill -9 under mixed ingest, appends and
# Consolidate, each checked after the restart (bench/chaos.py); `make test` runs 3 cycles.
chaos: setup
	$(PY) -m bench.chaos --cycles 100

# The long fuzz run of issue 12: every parser, detector, file reader, request conversion and the
# chain hash, with FUZZ_EXAMPLES examples per property (`make test` runs 150 of each).
FUZZ_EXAMPLES ?= 20000
fuzz: setup
	TUTOR_MEMORY_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/fuzz -q

clean:
	rm -rf $(VENV) target .pytest_cache .mypy_cache .ruff_cache
