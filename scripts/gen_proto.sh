#!/usr/bin/env bash
# The one generator of code from proto/. Generated files are committed; CI runs this and fails on
# any drift (`make proto-check`), so never edit them by hand.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-"$here/.venv/bin/python"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$py" -m grpc_tools.protoc -I "$here/proto" \
  --python_out="$tmp" --pyi_out="$tmp" --grpc_python_out="$tmp" \
  "$here/proto/tutor_memory/v1/memory.proto"

# protoc writes absolute imports (`from tutor_memory.v1 import memory_pb2`), which would resolve
# against the server package of the same name; each copy imports its sibling module instead.
sed -i 's/^from tutor_memory\.v1 import memory_pb2 as/from . import memory_pb2 as/' \
  "$tmp/tutor_memory/v1/memory_pb2_grpc.py"

for dest in "$here/server/tutor_memory/_proto" "$here/clients/python/tutor_memory_client/_proto"; do
  mkdir -p "$dest"
  cp "$tmp/tutor_memory/v1/memory_pb2.py" "$tmp/tutor_memory/v1/memory_pb2.pyi" \
    "$tmp/tutor_memory/v1/memory_pb2_grpc.py" "$dest/"
  printf '"""Generated from proto/tutor_memory/v1/memory.proto by scripts/gen_proto.sh."""\n' \
    > "$dest/__init__.py"
done
