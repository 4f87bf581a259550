"""The concept map (SPEC R3, R4): what the student's files are made of and what builds on what."""
