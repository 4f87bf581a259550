"""Course files: reading PDF, Markdown and plain text into pages, and cutting pages into passages."""
