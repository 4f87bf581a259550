"""LoCoMo evidence recall through the real gRPC API (issue 6).

Each LoCoMo conversation is ingested into a fresh server as one (student, subject) chain, one
episode per turn; every question is then asked through BuildBlock at several token budgets and
scored by the share of its evidence turns the block shows. In the same run, four baselines read
the same store and fill the same block at the same budget: BM25 over the store's FTS5 index,
exact vector search over its stored embeddings, the two fused by reciprocal rank (hybrid), and the
most recent turns. Figures are reported
per category, for the month-named questions, and for the dev and held-out splits separately.

Run from the repository root: `.venv/bin/python -m bench.locomo` (see `--help`).
"""
