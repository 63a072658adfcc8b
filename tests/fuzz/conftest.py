"""The long profile runs for minutes: its fuzz tests get `LONG_TIMEOUT` instead of the suite's
timeout (pyproject.toml), which is meant for tests that run in seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests.fuzz.profiles import LONG

LONG_TIMEOUT = 3_600
"""Seconds one fuzz test may run under the long profile."""

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if settings.get_current_profile_name() != LONG:
        return
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))
