"""The PostgreSQL store: the same protocols as the embedded SQLite store, for deployments with
several server nodes over one database (docs/DEPLOYMENT.md)."""
