"""Honesty and citation (SPEC R7): tracing answers to their sources, verifying cited files."""
