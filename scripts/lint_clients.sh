#!/usr/bin/env bash
# Lints the hand-written Go and TypeScript client code: gofmt, go vet, and the TypeScript
# compiler in strict mode (no output). Generated code is checked by `make proto-check` instead.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
go=$(bash "$here/scripts/install_client_tools.sh" go-path)

gofmt="$("$go" env GOROOT)/bin/gofmt"
unformatted=$(cd "$here/clients/go" && "$gofmt" -l tutormemory conformance examples)
if [[ -n "$unformatted" ]]; then
  echo "lint_clients: not gofmt-formatted (run gofmt -w):" >&2
  echo "$unformatted" >&2
  exit 1
fi
GOFLAGS=-mod=readonly "$go" -C "$here/clients/go" vet ./...
"$here/clients/typescript/node_modules/.bin/tsc" -p "$here/clients/typescript" --noEmit
