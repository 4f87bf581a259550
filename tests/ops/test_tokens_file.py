"""The tokens file: scopes, tenants' limits, rotation, and every problem named by its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor_memory.api.auth import TokenBook, new_token, token_sha256
from tutor_memory.api.tokens_file import TokensFileError, entry_text, load_tokens_file
from tutor_memory.app.access import Scope
from tutor_memory.app.quotas import TenantLimits
from tutor_memory.cli.main import main

H1, H2, H3 = "a" * 64, "b" * 64, "c" * 64


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text(body)
    return path


def test_scopes_and_limits_are_read(tmp_path: Path) -> None:
    parsed = load_tokens_file(
        _write(
            tmp_path,
            f'[[tokens]]\ntenant = "school"\nsha256 = "{H1}"\nname = "reports"\n'
            'read_only = true\nstudent_prefix = "7b-"\nsubjects = ["bio", "chem"]\n\n'
            f'[[tokens]]\ntenant = "school"\nsha256 = "{H2}"\n\n'
            "[tenants.school]\nrequests_per_second = 2.5\nburst = 5\nmax_episodes = 100\n",
        )
    )
    first, second = parsed.entries
    assert first.scope == Scope(True, "7b-", frozenset({"bio", "chem"}))
    assert (first.name, first.line) == ("reports", 1)
    assert second.scope.is_unlimited
    assert (second.name, second.line) == ("school", 9)
    assert parsed.limits == {"school": TenantLimits(2.5, 5, 100)}


def test_two_tokens_of_one_caller_both_authenticate(tmp_path: Path) -> None:
    old, new = new_token(), new_token()
    body = "".join(
        f'[[tokens]]\ntenant = "school"\nname = "chat"\nsha256 = "{token_sha256(t)}"\n'
        for t in (old, new)
    )
    book = TokenBook.from_file(_write(tmp_path, body))
    for token in (old, new):
        caller = book.authenticate([("authorization", f"Bearer {token}")])
        assert (caller.tenant, caller.name) == ("school", "chat")


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\nreadonly = true\n', 4, "unknown scope"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n\n[[tokens]]\ntenant = "a"\n'
         f'sha256 = "{H2}"\nsubjects = "bio"\n', 8, "non-empty list"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\nread_only = "yes"\n', 4, "true or false"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n\n[tenants.a]\nrate = 3\n', 6,
         "unknown limit"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n[tenants.a]\nburst = 3\n', 5,
         "needs requests_per_second"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n[tenants.a]\nmax_episodes = -1\n', 5,
         "at least 0"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n[tenants.a]\nrequests_per_second = 0\n',
         5, "above 0"),
        (f'[[tokens]]\ntenant = "a"\nname = "c"\nsha256 = "{H1}"\n[[tokens]]\ntenant = "b"\n'
         f'name = "c"\nsha256 = "{H2}"\n', 7, "must name the same tenant"),
        (f'[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n[[tokens]]\ntenant = "a"\n'
         f'sha256 = "{H1}"\n', 4, "listed twice"),
        (f'tokenz = 1\n[[tokens]]\ntenant = "a"\nsha256 = "{H1}"\n', 1, "unknown key"),
        ('[[tokens]]\ntenant = "a"\nsha256 = "short"\n', 3, "64 lowercase hex"),
        ('[[tokens]]\ntenant = "a"\nsha256 = \n', 3, "line 3"),
    ],
)  # fmt: skip
def test_a_problem_names_its_line(tmp_path: Path, body: str, line: int, problem: str) -> None:
    with pytest.raises(TokensFileError) as err:
        load_tokens_file(_write(tmp_path, body))
    assert f"line {line}" in str(err.value)
    assert problem in str(err.value)


def test_token_new_prints_an_entry_with_its_scopes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["token", "new", "--tenant", "school", "--name", "reports", "--read-only"]
    argv += ["--student-prefix", "7b-", "--subject", "bio", "--subject", "chem"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    token = out.split("not stored): ", 1)[1].split("\n", 1)[0]
    entry = out.split("entry for the tokens file:\n", 1)[1]
    book = TokenBook.from_file(_write(tmp_path, entry))
    caller = book.authenticate([("authorization", f"Bearer {token}")])
    assert caller.scope == Scope(True, "7b-", frozenset({"bio", "chem"}))
    assert caller.name == "reports"


def test_token_new_refuses_a_bad_scope_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "new", "--tenant", "school", "--subject", "bad\nsubject"]) == 2
    assert "--subject" in capsys.readouterr().err


def test_entry_text_escapes_what_toml_needs() -> None:
    text = entry_text("t", H3, name='say "hi"')
    assert 'name = "say \\"hi\\""' in text
