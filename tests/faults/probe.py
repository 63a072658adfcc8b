"""A monitor of a host in a process of its own: `GET /healthz` every `INTERVAL`, until stdin closes.

    python -m tests.faults.probe BASE_URL

It prints `probing` once its first probe is made; once stdin closes, one JSON line: each probe as
`[began, seconds, ok]`, `began` on the system's monotonic clock (the one `time.monotonic()` reads
in every process), so that a test can leave out a window in which it stopped the host. A process
of its own, so that what it measures is the host, not the test's own event loop.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import httpx

INTERVAL = 0.05
"""Seconds between two probes."""
TIMEOUT = 5.0
"""Seconds after which a probe counts as failed."""


def main(base: str) -> None:
    stopped = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.read()
        stopped.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    samples: list[tuple[float, float, bool]] = []
    with httpx.Client(timeout=TIMEOUT) as client:
        while not stopped.wait(INTERVAL):
            began = time.monotonic()
            try:
                ok = client.get(f"{base}/healthz").status_code == 200
            except httpx.HTTPError:
                ok = False
            samples.append((began, time.monotonic() - began, ok))
            if len(samples) == 1:
                print("probing", flush=True)
    print(json.dumps(samples), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
