# The README's two commands are `make serve` and `make test`; each does all the set-up first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
RUST_SOURCES := $(shell find rust_core/src -name '*.rs') Cargo.toml rust_core/Cargo.toml
CLIENT_SOURCES := clients/python/pyproject.toml
SERVE_ARGS ?=

.PHONY: serve test setup install model proto proto-check lint bench clean

serve: setup
	$(BIN)/tutor-memory serve $(SERVE_ARGS)

# pytest exits 5 when it collected no test: that is a failure here, never a pass.
test: setup
	cargo test --quiet --manifest-path rust_core/Cargo.toml
	$(PY) -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests ran" >&2; exit 1; fi; exit $$rc

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

# Regenerates every stub from proto/ (see scripts/gen_proto.sh).
proto: $(INSTALLED)
	PYTHON=$(PY) bash scripts/gen_proto.sh

# Fails when the committed generated code differs from what proto/ generates.
proto-check: proto
	@git diff --exit-code --stat -- server/tutor_memory/_proto clients/python/tutor_memory_client/_proto \
	  || { echo "generated code drifted from proto/: run 'make proto' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- server/tutor_memory/_proto clients/python/tutor_memory_client/_proto)" \
	  || { echo "untracked generated files: run 'make proto' and commit" >&2; exit 1; }

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(PY) -m mypy.stubtest tutor_memory._core
	cargo fmt --check --manifest-path rust_core/Cargo.toml
	cargo clippy --quiet --manifest-path rust_core/Cargo.toml --all-targets -- -D warnings

bench: setup
	$(PY) -m bench.bench_ingest
	$(PY) -m bench.bench_embed
	$(PY) -m bench.bench_rank
	$(PY) -m bench.bench_block

clean:
	rm -rf $(VENV) target .pytest_cache .mypy_cache .ruff_cache
