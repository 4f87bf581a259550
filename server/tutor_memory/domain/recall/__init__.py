"""Recall: what of a chain's history reaches the per-turn memory block (SPEC R2, R6, R7.1)."""
