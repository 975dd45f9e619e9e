"""`ExecutionConfig`: how long a call may take, how often it is tried, how many run at once.

A call's settings are merged field by field, the first that sets a field winning: the tool's
own settings, then the call's (a batch's ``config``), then the toolkit's, then `DEFAULTS`.

The default timeout is none. A deadline cannot stop a sync tool on a worker thread (its thread
is abandoned, and the pool's slot freed), and async tools are already cancelled by their
caller's own deadlines; so a backend sets a timeout knowingly, per toolkit, per batch or per
tool, instead of inheriting an arbitrary one. A toolkit with no timeout and no retries keeps
every plain tool on the Rust direct call.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Final, final


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionConfig:
    """How calls run; a field left ``None`` is taken from the next config in the merge.

    Attributes:
        timeout: Seconds a call may take before it ends with a timed-out error result.
        max_attempts: How many times a call whose tool raised (or timed out) is tried in all;
            validation errors, denials and suspensions are never tried again.
        initial_backoff: Seconds before the second attempt; doubled for each further one.
        max_backoff: The longest wait between attempts.
        jitter: The fraction of each wait chosen at random (0: none, 1: all of it), so that
            retries of many calls spread out.
        max_concurrency: How many calls of one batch run at the same time.
    """

    timeout: float | None = None
    max_attempts: int | None = None
    initial_backoff: float | None = None
    max_backoff: float | None = None
    jitter: float | None = None
    max_concurrency: int | None = None

    def __post_init__(self) -> None:
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("initial_backoff", "max_backoff"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
        if self.jitter is not None and not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, got {self.jitter}")
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {self.max_concurrency}")

    def over(self, *fallbacks: ExecutionConfig | None) -> ExecutionConfig:
        """This config, its unset fields taken from the fallbacks in order."""
        merged = self
        for fallback in fallbacks:
            if fallback is None:
                continue
            changes = {
                field.name: getattr(fallback, field.name)
                for field in dataclasses.fields(ExecutionConfig)
                if getattr(merged, field.name) is None and getattr(fallback, field.name) is not None
            }
            if changes:
                merged = dataclasses.replace(merged, **changes)
        return merged

    @property
    def attempts(self) -> int:
        """How many attempts a call makes (1 when unset)."""
        return self.max_attempts or 1

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the second attempt)."""
        base = DEFAULTS.initial_backoff if self.initial_backoff is None else self.initial_backoff
        cap = DEFAULTS.max_backoff if self.max_backoff is None else self.max_backoff
        jitter = DEFAULTS.jitter if self.jitter is None else self.jitter
        wait = min(cap, float(base or 0.0) * 2 ** (retry - 1)) if base else 0.0
        spread = wait * float(jitter or 0.0)
        return wait - spread + random.uniform(0, spread)


UNSET: Final = ExecutionConfig()
"""A config that sets nothing: every field comes from the next config of the merge."""

DEFAULTS: Final = ExecutionConfig(
    timeout=None,
    max_attempts=1,
    initial_backoff=1.0,
    max_backoff=10.0,
    jitter=0.5,
    max_concurrency=16,
)
"""The last config of every merge: no timeout, one attempt, backoff from 1 s up to 10 s with
half of it random, 16 calls of a batch at a time."""

__all__ = ["DEFAULTS", "UNSET", "ExecutionConfig"]
