"""The Rust core (`_core`, built from rust_core/ by maturin), its hand-written stub, and its
pure-Python twin (`_reference`) that the parity tests hold it to."""
