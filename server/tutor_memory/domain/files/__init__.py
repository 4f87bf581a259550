"""Course files: PDF, Markdown and plain text read into pages, and pages cut into passages."""
