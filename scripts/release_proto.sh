#!/usr/bin/env bash
# Records proto/ as released: writes buf.released.json, the image `make proto-check` checks later
# versions against for breaking changes. Run it when a version is released, and commit the file
# with the release.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
buf="$here/.tools/bin/buf"
[[ -x "$buf" ]] || { echo "release_proto: $buf is missing: run 'make client-tools'" >&2; exit 1; }
cd "$here"
"$buf" build --exclude-source-info -o buf.released.json
echo "release_proto: wrote buf.released.json; commit it with the release"
