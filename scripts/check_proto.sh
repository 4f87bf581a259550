#!/usr/bin/env bash
# Lints proto/ and checks it for breaking changes against the last released version (buf, from
# .tools/bin; see buf.yaml). The released version is buf.released.json, an image of proto/ that
# `make proto-release` writes at each release and that is committed with it. Before the first
# release there is nothing to break: the check says so and passes.
#   PROTO_ROOT  the folder holding buf.yaml and proto/ (default: this repository)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${PROTO_ROOT:-$here}
buf="$here/.tools/bin/buf"
baseline="$root/buf.released.json"

[[ -x "$buf" ]] || { echo "check_proto: $buf is missing: run 'make client-tools'" >&2; exit 1; }
cd "$root"
"$buf" lint
if [[ -f "$baseline" ]]; then
  "$buf" breaking --against "$baseline"
  echo "check_proto: no breaking change since the released proto ($(basename "$baseline"))"
else
  echo "check_proto: no released proto yet ($(basename "$baseline") is absent): breaking-change check skipped; 'make proto-release' records one"
fi
