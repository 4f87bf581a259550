"""The embedded SQLite store: every SQLite statement of the project lives in this package."""
