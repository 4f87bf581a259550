"""Beliefs about the student (SPEC R5): derived from checks, never updated into another claim."""
