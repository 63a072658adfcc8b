"""What a running host holds in memory that it does not use: `uq serve` loads the A2A SDK only
when A2A is first called, and httpx only when something is posted (issue 42, docs/performance.md),
so a host nobody calls over A2A and that posts nothing holds neither (about 18 MB together)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.host_process import free_port

_HOST = """
import io, json, os, sys, threading, urllib.request

def loaded():
    return sorted({name.split(".")[0] for name in sys.modules} & {"a2a", "google", "httpx"})

serving = threading.Event()

class Announced(io.StringIO):
    # `uq serve` prints its URL on stdout once it serves: that line is the signal.
    def write(self, text):
        if "://" in text:
            serving.set()
        return super().write(text)

def watch(base):
    serving.wait(60)
    idle = loaded()
    urllib.request.urlopen(base + "/.well-known/agent-card.json", timeout=60).read()
    sys.__stdout__.write(json.dumps({"idle": idle, "after_a2a": loaded()}) + "\\n")
    sys.__stdout__.flush()
    os._exit(0)

port = sys.argv[1]
sys.stdout = Announced()
threading.Thread(target=watch, args=(f"http://127.0.0.1:{port}",), daemon=True).start()
sys.argv = ["uq", "serve", "--port", port, "--store", sys.argv[2]]
from user_questions.cli import main
main()
"""


def test_an_idle_host_holds_neither_the_a2a_sdk_nor_httpx_until_a2a_is_called(
    tmp_path: Path,
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", _HOST, str(free_port()), str(tmp_path / "host.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["idle"] == []
    assert "a2a" in report["after_a2a"]
