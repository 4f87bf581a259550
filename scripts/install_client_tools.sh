#!/usr/bin/env bash
# Installs what the Go and TypeScript clients and the proto checks need, pinned by files in the
# repository, into places inside it (git-ignored):
#   go    protoc-gen-go, protoc-gen-go-grpc (scripts/tools/protoc-plugins/go.mod) and buf
#         (scripts/tools/buf/go.mod) into .tools/bin, through the Go module proxy; then the
#         modules clients/go needs, so tests run without the network.
#   node  clients/typescript/node_modules from its package-lock.json (npm ci): @grpc/grpc-js,
#         ts-proto, typescript.
#   ghz   the gRPC load generator of bench/bench_load.py (scripts/tools/ghz/go.mod) into
#         .tools/bin; only the load benchmark and its test need it (`make load-tools`).
# Fails with a clear message when a toolchain is missing or too old.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# Oldest toolchains the pinned modules and packages accept.
GO_MIN=1.26
NODE_MIN=20

# True when version $1 (x.y[.z]) is at least $2 (x.y).
at_least() {
  local have_major have_minor want_major want_minor
  IFS=. read -r have_major have_minor _ <<<"$1"
  IFS=. read -r want_major want_minor _ <<<"$2"
  ((have_major > want_major || (have_major == want_major && ${have_minor:-0} >= ${want_minor:-0})))
}

need() {
  echo "install_client_tools: $1" >&2
  exit 1
}

find_go() {
  local go
  go=$(command -v go || true)
  [[ -z "$go" && -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go
  [[ -n "$go" ]] || need "Go $GO_MIN or newer is needed for the Go client and the proto tools: install it from https://go.dev/dl and put 'go' on PATH"
  local version
  version=$("$go" env GOVERSION)
  version=${version#go}
  at_least "$version" "$GO_MIN" || need "Go $GO_MIN or newer is needed; $go is $version"
  echo "$go"
}

install_go() {
  local go
  go=$(find_go)
  mkdir -p "$here/.tools/bin"
  for module in protoc-plugins buf; do
    GOBIN="$here/.tools/bin" GOFLAGS=-mod=readonly "$go" -C "$here/scripts/tools/$module" install tool
  done
  GOFLAGS=-mod=readonly "$go" -C "$here/clients/go" mod download
}

install_ghz() {
  local go
  go=$(find_go)
  mkdir -p "$here/.tools/bin"
  GOBIN="$here/.tools/bin" GOFLAGS=-mod=readonly "$go" -C "$here/scripts/tools/ghz" install tool
}

install_node() {
  command -v node >/dev/null && command -v npm >/dev/null \
    || need "Node.js $NODE_MIN or newer (with npm) is needed for the TypeScript client: install it and put 'node' and 'npm' on PATH"
  local version
  version=$(node --version)
  at_least "${version#v}" "$NODE_MIN" || need "Node.js $NODE_MIN or newer is needed; node is $version"
  npm ci --prefix "$here/clients/typescript" --no-audit --no-fund --loglevel=error
}

case "${1:-}" in
  go) install_go ;;
  node) install_node ;;
  ghz) install_ghz ;;
  go-path) find_go ;;
  *) need "usage: $0 go|node|ghz|go-path" ;;
esac
