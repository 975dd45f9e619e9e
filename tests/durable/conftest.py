"""The system databases the durable tests run on: a SQLite file, and a database on Postgres.

A test that takes `system_database` runs twice: on a SQLite file in a folder of its own (the
embedded default, ``config(folder)``), and on a fresh database of a Postgres server
(``config(database_url=...)``), made with ``CREATE DATABASE`` for the test and dropped after it
(DBOS makes its ``dbos`` schema and tables there on launch). A test that needs Postgres itself
takes `postgres_database`.

``FERROTOOL_POSTGRES_URL`` names the server, as ``postgresql://user@host:port/database``: a role
that may create databases (`.ci/postgres` starts a throwaway cluster and sets it). Without it,
or when no server answers, the Postgres case is skipped, so that a developer without Postgres
can run the rest; with ``FERROTOOL_REQUIRE_POSTGRES=1`` (CI sets it) it fails instead.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

import pytest


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("FERROTOOL_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"FERROTOOL_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def forks() -> multiprocessing.context.ForkServerContext:
    """Worker processes forked from a server that has imported the workers (and DBOS) once."""
    from processes import fork_server

    return fork_server()


def end_workers() -> None:
    """Kill the test's worker processes still running (a check failed before they ended)."""
    for process in multiprocessing.active_children():
        process.kill()
        process.join(10)


@pytest.fixture(autouse=True)
def no_worker_left() -> Iterator[None]:
    """A test that fails leaves no worker process running."""
    yield
    end_workers()


def with_database(url: str, name: str) -> str:
    """``url`` with its database replaced by ``name`` (user, host, port and options kept)."""
    return urlsplit(url)._replace(path=f"/{name}").geturl()


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a Postgres server that answers, or skip (fail under the REQUIRE variable)."""
    url = os.environ.get("FERROTOOL_POSTGRES_URL")
    if not url:
        _unavailable("FERROTOOL_POSTGRES_URL is not set (.ci/postgres starts a server)")
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'psycopg[binary]')")
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        _unavailable(f"no Postgres server answers at {url}: {error}")
    return url


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """The URL of a database made for this test alone on the server, dropped afterwards."""
    import psycopg
    from psycopg import sql

    name = f"ferrotool_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(postgres_url, name)
    finally:
        end_workers()  # before their database goes
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as connection:
            # FORCE: a process the test killed may leave a session the server has not ended yet.
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(params=["sqlite", "postgres"])
def system_database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the test's DBOS keeps its state, as `worker` takes it.

    Returns:
        A folder in ``tmp_path`` for the SQLite file, or a fresh Postgres database's URL.
    """
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_database")
        return url
    return str(tmp_path / "state")
