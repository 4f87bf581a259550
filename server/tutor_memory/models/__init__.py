"""The local models: the ONNX embedder, the tokenizer that counts a block's tokens, and the
pinned model download."""
