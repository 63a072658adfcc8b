"""The fuzz suite's hypothesis profiles: `ci` (the default here) and `long`, run by hand.

Registered from tests/conftest.py, so `--hypothesis-profile long` is known however pytest is
started (`bash scripts/test.sh tests/fuzz --hypothesis-profile long`). The fuzz tests take their
settings from `fuzz_settings()`: the `ci` profile unless another one was loaded, so the rest of
the suite's hypothesis tests keep hypothesis's own defaults, but for the deadline.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

__all__ = ["CI", "LONG", "fuzz_settings", "register"]

CI = "ci"
"""Derandomized: the same inputs on every run, the whole fuzz directory in well under a minute."""
LONG = "long"
"""Random and thorough: thousands of inputs per channel, for a run by hand."""

_SLOW_INPUTS = [
    HealthCheck.too_slow,  # each input goes through a host and waits for its reply
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]


def register() -> None:
    """Register both profiles (idempotent), and take the deadline off hypothesis's default one:
    a test's speed is the benchmarks' business, and a loaded machine made a 200 ms deadline
    fail tests whose every input passed."""
    settings.register_profile("default", deadline=None)
    if settings.get_current_profile_name() == "default":
        settings.load_profile("default")
    settings.register_profile(
        CI,
        derandomize=True,
        database=None,
        max_examples=200,
        deadline=None,
        suppress_health_check=_SLOW_INPUTS,
        print_blob=True,
    )
    settings.register_profile(
        LONG,
        max_examples=10_000,
        deadline=None,
        suppress_health_check=_SLOW_INPUTS,
        print_blob=True,
    )


def fuzz_settings(percent: int = 100) -> settings:
    """The loaded profile's settings, or the `ci` profile's when none was chosen; `percent`
    scales the number of inputs, for a slower test (at least 10)."""
    chosen = settings.get_current_profile_name()
    base = settings.get_profile(CI if chosen == "default" else chosen)
    return settings(base, max_examples=max(10, base.max_examples * percent // 100))
