"""The README's table of limits is the one the code generates from the constants that enforce
them (issue 12): changing a limit without regenerating the table fails here."""

from __future__ import annotations

from tests.helpers.paths import REPO_ROOT
from tutor_memory.api.limits_doc import BEGIN, END, markdown_table, rows, with_table
from tutor_memory.domain import limits


def test_the_readme_lists_the_limits_the_code_enforces() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert BEGIN in readme
    assert END in readme
    assert with_table(readme) == readme, (
        "README.md's limits table is stale: run "
        "`.venv/bin/python -m tutor_memory.api.limits_doc README.md`"
    )


def test_the_table_shows_the_values_of_the_constants() -> None:
    table = markdown_table()
    for value in (limits.MAX_QUERY_CHARS, limits.MAX_TEXT_BYTES, limits.MAX_FILE_TEXT_CHARS):
        assert f"{value:,}" in table
    assert len({field for field, _ in rows()}) == len(rows())
