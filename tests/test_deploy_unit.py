"""The systemd unit in docs/deploy.md is one systemd takes, hardened, running `uq serve` with
options it has.

The unit is read from the page as it is, with the path of uq in its `ExecStart` replaced by this
installation's (systemd checks that the program exists). `systemd-analyze` is part of systemd;
without it the systemd checks are skipped, saying so.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from user_questions.cli import app
from user_questions.cli._serve import serve

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"
DOC_UQ = "/opt/user-questions/bin/uq"
"""Where the page installs uq."""
UQ = str(Path(sys.executable).with_name("uq"))
MAX_EXPOSURE = 20
"""The most `systemd-analyze security` may rate the unit, in tenths (2.0: `OK`)."""
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze (part of systemd) is not installed here"
)


def unit_text() -> str:
    """The unit the page shows: the `ini` block that is /etc/systemd/system/uq.service."""
    page = DEPLOY.read_text(encoding="utf-8")
    (unit,) = re.findall(r"```ini\n# /etc/systemd/system/uq\.service\n(.*?)```", page, re.S)
    text: str = unit
    return text


def exec_start() -> list[str]:
    """The unit's `ExecStart`, its continuation lines joined, split as systemd splits it."""
    joined = unit_text().replace("\\\n", " ")
    (line,) = [line for line in joined.splitlines() if line.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


@pytest.fixture
def unit_file(tmp_path: Path) -> Path:
    assert Path(UQ).is_file(), f"{UQ} is not installed"
    path = tmp_path / "uq.service"
    path.write_text(unit_text().replace(DOC_UQ, UQ), encoding="utf-8")
    return path


@needs_systemd
def test_systemd_verifies_the_unit_without_a_word(unit_file: Path) -> None:
    assert SYSTEMD_ANALYZE is not None
    verified = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", str(unit_file)], capture_output=True, text=True, timeout=60
    )
    # An unknown key or a bad value is only a warning to systemd: any output is a failure here.
    assert (verified.returncode, verified.stdout, verified.stderr) == (0, "", "")


@needs_systemd
def test_the_unit_runs_the_host_under_its_own_user_hardened(unit_file: Path) -> None:
    assert SYSTEMD_ANALYZE is not None
    lines = set(unit_text().splitlines())
    assert {"User=uq", "StateDirectory=user-questions", "UMask=0077"} <= lines
    assert {"ProtectHome=yes", "ProtectSystem=strict", "NoNewPrivileges=yes"} <= lines
    rated = subprocess.run(
        [
            SYSTEMD_ANALYZE,
            "security",
            "--offline=yes",
            f"--threshold={MAX_EXPOSURE}",
            str(unit_file),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rated.returncode == 0, rated.stdout.splitlines()[-1:]


def test_its_execstart_is_uq_serve_with_options_uq_serve_has() -> None:
    program, command, *options = exec_start()
    assert (program, command) == (DOC_UQ, "serve")
    called, bound, _ = app.parse_args(["serve", *options], exit_on_error=False, print_error=False)
    assert called is serve
    assert bound.arguments["store"] == "/var/lib/user-questions/host.db"  # in its StateDirectory=
    assert bound.arguments["public_url"] == "https://uq.example.com/"
