"""The four-version ablation benchmark (SPEC §9, issue 6) through the real gRPC API.

A seeded generator writes student histories (`generator`, from the language packs in `data/`);
a pre-registered question set is derived from what each history recorded (`questions`); every
history is replayed into a fresh server (`replay`) and every question asked of four versions of
the same server, BuildBlock modes NONE, WINDOW, EPISODES and FULL (`run`); the graders are id and
string comparisons written down before any run (`grading`). The report gives a table per version
and category, the targets, the categories that cannot discriminate and a second run's difference
count (`results`, `report`).

Run from the repository root: `.venv/bin/python -m bench.eval` (see `--help`).
"""
