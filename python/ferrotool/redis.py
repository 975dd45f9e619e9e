"""`RedisSessionStore`: session states in Redis, shared by every process that reaches the server.

Each session is one Redis hash with two fields, ``revision`` (the compare-and-set version, a
decimal integer) and ``state`` (`ToolContextState.to_json`). A Lua script compares and writes in
one step on the server, so two processes that change one session at once never lose an update.

This module needs the ``redis`` package (``pip install 'redis>=5'``); the rest of ferrotool does
not, and does not import this module until it is asked for.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Final, Self, final
from urllib.parse import quote

from ferrotool._extras import requires_extra
from ferrotool._session.state import EMPTY_STATE, SessionKey, ToolContextState

with requires_extra("ferrotool.redis", "redis"):
    import redis.asyncio as aioredis
    from redis.exceptions import ResponseError

DEFAULT_PREFIX: Final = "ferrotool:session:"
"""Where session keys start unless the store is told otherwise."""

DEFAULT_MAX_CONNECTIONS: Final = 64
"""The connection pool's size in a store made by `RedisSessionStore.from_url`."""

DEFAULT_POOL_TIMEOUT: Final = 20.0
"""Seconds an operation of a `from_url` store waits for a free pooled connection."""

_CORRUPT: Final = "ferrotool: corrupt session revision"

# KEYS[1]: the session's hash. ARGV[1]: the expected revision. ARGV[2]: the state's JSON.
# ARGV[3]: the time to live in milliseconds, or "" for none.
# Returns the new revision, or 0 when the stored revision is not the expected one.
_COMPARE_AND_SET: Final = f"""
local stored = redis.call('HGET', KEYS[1], 'revision')
local current = 0
if stored then
  current = tonumber(stored)
  if current == nil or current < 0 or current % 1 ~= 0 then
    return redis.error_reply('{_CORRUPT}')
  end
end
if current ~= tonumber(ARGV[1]) then
  return 0
end
current = current + 1
redis.call('HSET', KEYS[1], 'revision', string.format('%d', current), 'state', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return current
"""


def _escape(part: str) -> str:
    # Percent-escape everything but letters, digits and "_.-~": the ":" between the two parts
    # never occurs inside one, so no two keys meet.
    return quote(part, safe="", errors="surrogatepass")


@final
class RedisSessionStore:
    """A `SessionStore` over ``redis.asyncio``: one hash per session, compare-and-set in Lua.

    Every operation is one round trip: `load` reads revision and state with one ``HMGET``;
    `compare_and_set` runs a registered script (``EVALSHA``) that compares the stored revision
    (absent: 0) with the expected one and, only when they match, writes the state with the
    next revision (and renews the time to live).

    Use it as an async context manager, or call `aclose`, to close a client the store made
    (`from_url`); a client passed to the constructor stays open, its owner closes it.

    Args:
        client: The Redis client. It may decode responses or not.
        prefix: What every session key starts with.
        ttl: Seconds a session lives after its last write; ``None``: until deleted (a write
            then leaves the key's expiry as it is).

    Raises:
        ValueError: ``ttl`` is not a positive, finite number of seconds.
    """

    __slots__ = ("_cas", "_client", "_owns_client", "_prefix", "_ttl_ms")

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
    ) -> None:
        if ttl is not None and not (math.isfinite(ttl) and ttl > 0):
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        self._client = client
        self._prefix = prefix
        self._ttl_ms = "" if ttl is None else str(max(1, round(ttl * 1000)))
        self._cas = client.register_script(_COMPARE_AND_SET)
        self._owns_client = False

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pool_timeout: float | None = DEFAULT_POOL_TIMEOUT,
        **client_options: object,
    ) -> RedisSessionStore:
        """A store with a client (on a blocking connection pool) of its own, closed by `aclose`.

        The pool holds at most ``max_connections`` connections; an operation that finds them
        all busy waits for one, up to ``pool_timeout`` seconds, instead of failing at once
        (redis-py's default pool refuses the 101st concurrent operation). A backend serving
        many requests at once in one process needs exactly that.

        Args:
            url: The server, as ``redis://[[user]:password@]host[:port][/db]`` (or
                ``rediss://``, ``unix://``).
            prefix: What every session key starts with.
            ttl: Seconds a session lives after its last write; ``None``: until deleted.
            max_connections: The pool's size.
            pool_timeout: Seconds an operation waits for a free connection before it fails
                with ``redis.exceptions.ConnectionError``; ``None``: forever.
            **client_options: Passed on to the connection pool (``socket_timeout``,
                ``health_check_interval``...).

        Returns:
            The store; no connection is made before its first operation.

        Raises:
            ValueError: ``max_connections`` is not positive.
        """
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections}")
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout, **client_options
        )
        store = cls(aioredis.Redis.from_pool(pool), prefix=prefix, ttl=ttl)
        store._owns_client = True
        return store

    @property
    def prefix(self) -> str:
        """What every session key starts with."""
        return self._prefix

    @property
    def ttl(self) -> float | None:
        """Seconds a session lives after its last write (``None``: until deleted)."""
        return None if not self._ttl_ms else int(self._ttl_ms) / 1000

    def redis_key(self, key: SessionKey) -> str:
        """The Redis key that holds a session.

        It is the prefix, then the percent-escaped user and session ids joined by ``":"``.
        """
        return f"{self._prefix}{_escape(key.user_id)}:{_escape(key.session_id)}"

    async def load(self, key: SessionKey) -> ToolContextState:
        """The session's state, with the revision it was read at.

        Returns:
            `EMPTY_STATE` at revision 0 for a session never stored (or expired, or deleted).

        Raises:
            ValueError: The key holds something that is not a session state.
        """
        name = self.redis_key(key)
        try:
            revision, data = await self._client.hmget(name, ["revision", "state"])
        except ResponseError as error:
            if str(error).startswith("WRONGTYPE"):
                raise self._corrupt(name, error) from error
            raise
        if revision is None and data is None:
            return EMPTY_STATE
        if revision is None or data is None:
            raise self._corrupt(name, "a revision and a state are not both there")
        try:
            number = int(revision)
            if number < 1:
                raise ValueError(f"revision {number} is not positive")
            return ToolContextState.from_json(data, revision=number)
        except ValueError as error:
            raise self._corrupt(name, error) from error

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        """Store ``state`` if the session is still at ``expected_revision``.

        Returns:
            The stored state with its new revision (``expected_revision + 1``), or ``None`` if
            another writer came first (or the session expired since it was read).

        Raises:
            ValueError: The key holds something that is not a session state.
        """
        name = self.redis_key(key)
        try:
            stored = await self._cas(
                keys=[name], args=[expected_revision, state.to_json(), self._ttl_ms]
            )
        except ResponseError as error:
            if _CORRUPT in str(error) or str(error).startswith("WRONGTYPE"):
                raise self._corrupt(name, error) from error
            raise
        if not isinstance(stored, int):
            raise TypeError(f"unexpected compare-and-set reply from Redis: {stored!r}")
        return None if stored == 0 else state.with_revision(stored)

    async def delete(self, key: SessionKey) -> bool:
        """Forget a session: its next `load` is `EMPTY_STATE` at revision 0.

        Returns:
            Whether there was a session to forget.
        """
        return await self._client.delete(self.redis_key(key)) > 0

    async def aclose(self) -> None:
        """Close the client if the store made it (`from_url`); otherwise leave it open."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"RedisSessionStore(prefix={self._prefix!r}, ttl={self.ttl!r})"

    @staticmethod
    def _corrupt(name: str, why: object) -> ValueError:
        return ValueError(f"Redis key {name!r} does not hold a ferrotool session state: {why}")


__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_POOL_TIMEOUT",
    "DEFAULT_PREFIX",
    "RedisSessionStore",
]
