"""Fixtures of the fault tests: a small disk of their own (a tmpfs: mounting one needs root, which
CI has; elsewhere those tests are skipped, saying so), and a slow one (`slow_fsync.c`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
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


@dataclass(frozen=True)
class SlowDisk:
    """What makes a host's disk slow: the environment to start it with (`slow_fsync.c`
    preloaded), and the flag file whose existence makes each of its fsyncs take 0.5 to 2 s."""

    env: dict[str, str]
    flag: Path

    def slow(self) -> None:
        self.flag.touch()

    def fast(self) -> None:
        self.flag.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def slow_fsync_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`slow_fsync.c` built as a shared library, once per session."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip(
            "a slow disk is made with a C compiler (apt-get install gcc; scripts/test.sh does)"
        )
    library = tmp_path_factory.mktemp("slow-fsync") / "slow_fsync.so"
    source = Path(__file__).with_name("slow_fsync.c")
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"], check=True
    )
    return library


@pytest.fixture
def slow_disk(slow_fsync_library: Path, tmp_path: Path) -> SlowDisk:
    flag = tmp_path / "slow"
    return SlowDisk({"LD_PRELOAD": str(slow_fsync_library), "UQ_SLOW_FSYNC": str(flag)}, flag)
