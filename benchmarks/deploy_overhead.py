"""What a deployment's options cost a request: the JSON access log behind a trusted proxy, and
TLS served by the host itself, against a plain host; and what a `/metrics` scrape costs.

Run: `.venv/bin/python benchmarks/deploy_overhead.py [--requests N]` (needs the dev extra, for
trustme). Starts three `uq serve` processes side by side (plain; `--log-format json
--trust-proxy 127.0.0.1` with an `X-Forwarded-For` on every request; `--tls-cert`), sends each
N `GET /api/pending` on one kept-alive connection, one host after the other request by request
(these machines are noisy: so each host meets the same noise), and prints p50 / p99 latency and
the difference from the plain host. Then it asks 2,000 questions of the plain host (left
pending) and times `GET /metrics`. Targets: the JSON log and the proxy headers add under 100 us
per request at p50; a scrape with 2,000 pending requests takes under 10 ms at p50.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import trustme
from websockets.sync.client import connect

from user_questions._host_link.tls import client_context

PENDING = 2_000


def start(folder: Path, name: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """`uq serve` on a store of its own; the process and the URL it printed."""
    command = [sys.executable, "-m", "user_questions.cli", "serve", "--port", "0"]
    command += ["--store", str(folder / f"{name}.db"), *args]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def timed(client: httpx.Client, url: str, count: int, headers: dict[str, str]) -> list[float]:
    found = []
    for _ in range(count):
        started = time.perf_counter()
        client.get(url, headers=headers).raise_for_status()
        found.append(time.perf_counter() - started)
    return found


def micros(samples: list[float], quantile: float) -> float:
    return sorted(samples)[int(quantile * (len(samples) - 1))] * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2_000, help="requests per host")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        authority = trustme.CA()
        server = authority.issue_cert("127.0.0.1")
        server.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
        server.private_key_pem.write_to_path(str(folder / "key.pem"))
        authority.cert_pem.write_to_path(str(folder / "ca.pem"))
        hosts = {
            "plain": start(folder, "plain"),
            "json log, proxied": start(
                folder, "json", "--log-format", "json", "--trust-proxy", "127.0.0.1"
            ),
            "tls": start(
                folder,
                "tls",
                "--tls-cert",
                str(folder / "cert.pem"),
                "--tls-key",
                str(folder / "key.pem"),
            ),
        }
        try:
            clients = {
                name: httpx.Client(verify=client_context(folder / "ca.pem"), timeout=30)
                for name in hosts
            }
            samples: dict[str, list[float]] = {name: [] for name in hosts}
            requests = {}
            for name, (_, url) in hosts.items():
                base, _, token = url.partition("/?token=")
                headers = {"Authorization": f"Bearer {token}"}
                if name == "json log, proxied":
                    headers["X-Forwarded-For"] = "203.0.113.9"
                requests[name] = (f"{base}/api/pending", headers)
            for _ in range(options.requests):
                for name, (url, headers) in requests.items():
                    samples[name] += timed(clients[name], url, 1, headers)
            plain = statistics.median(samples["plain"]) * 1e6
            print(f"GET /api/pending, {options.requests} requests per host, one connection")
            for name, found in samples.items():
                p50, p99 = micros(found, 0.5), micros(found, 0.99)
                print(f"  {name:18} p50 {p50:7.0f} us  p99 {p99:7.0f} us  (+{p50 - plain:.0f} us)")
            _, url = hosts["plain"]
            base, _, token = url.partition("/?token=")
            headers = {"Authorization": f"Bearer {token}"}
            with connect(
                base.replace("http", "ws", 1) + "/ws/ask", additional_headers=headers
            ) as ws:
                for number in range(PENDING):
                    question = {"id": "q", "question": f"Question {number}?"}
                    ask = {"type": "ask", "rpcId": f"r{number}", "sessionId": "bench"}
                    ws.send(json.dumps({**ask, "questions": [question]}))
                    ws.recv()
            scrapes = timed(clients["plain"], f"{base}/metrics", 200, headers)
            print(
                f"GET /metrics with {PENDING} pending: p50 {micros(scrapes, 0.5) / 1000:.2f} ms, "
                f"p99 {micros(scrapes, 0.99) / 1000:.2f} ms"
            )
            print("targets: json log and proxy headers +100 us at p50 at most; a scrape 10 ms")
        finally:
            for process, _ in hosts.values():
                process.terminate()
                process.wait(timeout=30)


if __name__ == "__main__":
    main()
