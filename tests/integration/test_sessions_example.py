"""The sessions guide's Redis example (docs/sessions.md) runs against a real Redis server."""

from __future__ import annotations

import pytest

from docs.blocks import marked

SHOWN_URL = 'REDIS_URL = "redis://localhost:6379/0"'
SHOWN_PREFIX = 'prefix="shop:"'


def test_two_workers_share_a_session_through_redis(
    redis_url: str, redis_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    example = marked("tests/integration/test_sessions_example.py", "RedisSessionStore.from_url(")
    assert SHOWN_URL in example.code
    assert SHOWN_PREFIX in example.code
    program = example.code.replace(SHOWN_URL, f"REDIS_URL = {redis_url!r}").replace(
        SHOWN_PREFIX, f"prefix={redis_prefix!r}"
    )
    example.run(program)
    printed = capsys.readouterr().out
    assert printed.splitlines() == ["error", "success", "success"]
    assert printed == example.output
