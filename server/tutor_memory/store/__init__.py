"""Storage of the ledger behind a narrow interface (base.py); SQLite is the embedded default."""
