"""Shared test configuration: hypothesis profiles.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=<name>``):

* ``fast`` (default): few examples, for the edit-run loop.
* ``ci``: more examples, no deadline, derandomized so that a CI run is reproducible.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fast",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))
