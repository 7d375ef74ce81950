"""Scopes (memory/scopes.py) are written and read in one place: "persona/room" both ways, and
anything else is not a scope."""

from __future__ import annotations

import pytest

from memory.errors import KizunaError
from memory.scopes import NotAScope, Scope


def test_a_scope_is_written_and_read_back() -> None:
    for room in ("telegram:-1001:user:7", "discord:dm:42", "console:dm:a/b"):
        scope = Scope("pip", room)
        assert Scope.parse(str(scope)) == scope
    assert str(Scope("miao", "discord:dm:42")) == "miao/discord:dm:42"


@pytest.mark.parametrize("text", ["", "pip", "pip/", "/discord:dm:42"])
def test_what_is_not_a_scope_is_refused(text: str) -> None:
    with pytest.raises(NotAScope, match="not a scope") as refused:
        Scope.parse(text)
    assert isinstance(refused.value, KizunaError)
