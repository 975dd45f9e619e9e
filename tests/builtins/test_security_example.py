"""The security guide's sandbox example (docs/security.md) hides, refuses and asks, as it shows."""

from __future__ import annotations

import pytest

from docs.blocks import marked
from ferrotool.builtins import Sandbox
from ferrotool.builtins._sandbox import sandbox_problem


@pytest.mark.skipif(
    sandbox_problem(Sandbox()) is not None, reason="bubblewrap cannot start a sandbox here"
)
def test_the_security_example_hides_refuses_and_asks(capsys: pytest.CaptureFixture[str]) -> None:
    example = marked("tests/builtins/test_security_example.py", "Sandbox(hidden=")
    example.run()
    printed = capsys.readouterr().out
    assert printed.splitlines() == [
        "cat .env: error",
        "touch notes.txt: success",
        "touch /etc/motd: error",
        "env rm -rf /: running",
    ]
    assert printed == example.output
