"""The Redis session store: `RedisSessionStore` (needs the ``redis`` package)."""

from ferrotool._redis import RedisSessionStore

__all__ = ["RedisSessionStore"]
