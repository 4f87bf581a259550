"""Generated from proto/tutor_memory/v1/memory.proto by scripts/gen_proto.sh."""
