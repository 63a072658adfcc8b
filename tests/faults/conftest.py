"""Fixtures of the fault tests: a small disk of their own (a tmpfs: mounting one needs root, which
CI has; elsewhere those tests are skipped, saying so)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

DISK_SIZE = "16m"
"""A tmpfs this size fills in a moment, and still holds a host's store with room to spare."""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a tmpfs of `DISK_SIZE` of its own, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs the tests as root)")
    folder = tmp_path / "disk"
    folder.mkdir()
    options = f"size={DISK_SIZE},mode=0700"
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        # Lazily: a host the test failed to stop still holds files there until it exits.
        subprocess.run(["umount", "--lazy", str(folder)], check=False)
