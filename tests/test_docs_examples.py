"""The examples in the README and docs are files, run here so they cannot rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"

# Example file -> the first line it must print (the comment in the example says the same).
EXPECTED_OUTPUT = {
    "first_question.py": '{"answers":[{"id":"pkg","selected":["pnpm (Recommended)"]}]}',
    "harness_ask.py": '{"answers":[{"id":"deploy","selected":["Deploy"]}]}',
}


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_example_runs_and_prints_what_it_promises(name: str) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == EXPECTED_OUTPUT[name]


def test_python_blocks_in_the_readme_are_example_files_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    examples = {path.read_text(encoding="utf-8") for path in EXAMPLES.glob("*.py")}
    assert blocks, "the README shows at least one example"
    for block in blocks:
        assert any(block.strip() in example for example in examples), block[:80]
