"""Fixtures of the adapters' tests: the A2A tests' host (the inbox the person answers in)."""

from tests.host.a2a.conftest import inbox  # noqa: F401 - a fixture, used by name
