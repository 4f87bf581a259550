"""In-memory, rebuildable caches the read path searches: per-chain FAISS vectors and recall
tables (arrays of what scoring needs of every episode)."""
