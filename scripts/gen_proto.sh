#!/usr/bin/env bash
# The one generator of code from proto/: Python (server and client), Go and TypeScript. Generated
# files are committed; CI runs this and fails on any drift (`make proto-check`), so never edit them
# by hand. Every language is compiled by the same protoc (the one inside grpcio-tools, pinned in
# pyproject.toml); the Go and TypeScript plugins come from scripts/install_client_tools.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-"$here/.venv/bin/python"}
tools="$here/.tools/bin"
ts_plugin="$here/clients/typescript/node_modules/.bin/protoc-gen-ts_proto"
proto_file=tutor_memory/v1/memory.proto
# The Go module of clients/go and the package its generated code lives in (the proto has no
# go_package option, so the import path is given here, once).
go_module=$(sed -n 's/^module //p' "$here/clients/go/go.mod")
go_package="$go_module/memoryv1"

for tool in "$tools/protoc-gen-go" "$tools/protoc-gen-go-grpc" "$ts_plugin"; do
  if [[ ! -x "$tool" ]]; then
    echo "gen_proto: $tool is missing: run 'make client-tools' first" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/py" "$tmp/go" "$tmp/ts"

"$py" -m grpc_tools.protoc -I "$here/proto" \
  --python_out="$tmp/py" --pyi_out="$tmp/py" --grpc_python_out="$tmp/py" \
  "$here/proto/$proto_file"

# protoc writes absolute imports (`from tutor_memory.v1 import memory_pb2`), which would resolve
# against the server package of the same name; each copy imports its sibling module instead.
sed -i 's/^from tutor_memory\.v1 import memory_pb2 as/from . import memory_pb2 as/' \
  "$tmp/py/tutor_memory/v1/memory_pb2_grpc.py"

for dest in "$here/server/tutor_memory/_proto" "$here/clients/python/tutor_memory_client/_proto"; do
  mkdir -p "$dest"
  cp "$tmp/py/tutor_memory/v1/memory_pb2.py" "$tmp/py/tutor_memory/v1/memory_pb2.pyi" \
    "$tmp/py/tutor_memory/v1/memory_pb2_grpc.py" "$dest/"
  printf '"""Generated from proto/tutor_memory/v1/memory.proto by scripts/gen_proto.sh."""\n' \
    > "$dest/__init__.py"
done

"$py" -m grpc_tools.protoc -I "$here/proto" \
  --plugin=protoc-gen-go="$tools/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$tools/protoc-gen-go-grpc" \
  --go_out="$tmp/go" --go_opt="module=$go_module" --go_opt="M$proto_file=$go_package;memoryv1" \
  --go-grpc_out="$tmp/go" --go-grpc_opt="module=$go_module" \
  --go-grpc_opt="M$proto_file=$go_package;memoryv1" \
  "$here/proto/$proto_file"

# ts-proto: plain interfaces with encode/decode, a @grpc/grpc-js client constructor, ES modules
# (hence the .js import suffix), Timestamps as Date.
"$py" -m grpc_tools.protoc -I "$here/proto" \
  --plugin=protoc-gen-ts_proto="$ts_plugin" \
  --ts_proto_out="$tmp/ts" \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,importSuffix=.js \
  --ts_proto_opt=useDate=true,forceLong=number,useOptionals=messages \
  "$here/proto/$proto_file"

# Whole folders are replaced so that a file the proto no longer produces does not linger.
replace_dir() {
  rm -rf "$2"
  mkdir -p "$(dirname "$2")"
  cp -r "$1" "$2"
}
replace_dir "$tmp/go/memoryv1" "$here/clients/go/memoryv1"
replace_dir "$tmp/ts" "$here/clients/typescript/src/gen"
