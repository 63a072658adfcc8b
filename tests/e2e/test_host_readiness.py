"""The probes and the metrics of a running `uq serve`: `/readyz` and `/healthz` of a node on
PostgreSQL while its database stops and starts again, what its metrics say of it afterwards,
and the metrics listener of `--metrics-bind`."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.host_process import HostProcess, free_port
from tests.pg import PostgresCluster

BACK_SECONDS = 30.0
"""How long a node may take to answer again once its database is back."""


def store_counters(node: HostProcess) -> dict[str, float]:
    scraped = httpx.get(f"{node.base}/metrics", headers=node.auth, timeout=10)
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        if sample.name.startswith("uq_store_")
    }


def test_readiness_follows_the_database_and_health_stays(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    node = HostProcess(None, args=("--store", pg_url))
    node.start()
    try:
        ready = httpx.get(f"{node.base}/readyz", timeout=10)
        assert (ready.status_code, ready.json()) == (200, {"ok": True})
        pg_cluster.stop()
        probes = 3
        for _ in range(probes):
            down = httpx.get(f"{node.base}/readyz", timeout=10)
            assert down.status_code == 503
            assert down.json()["error"]["code"] == "STORE_UNAVAILABLE"
            assert "postgresql" not in down.text  # a public probe reveals nothing
            alive = httpx.get(f"{node.base}/healthz", timeout=10)
            assert (alive.status_code, alive.json()) == (200, {"ok": True})
        assert store_counters(node) == {
            "uq_store_errors_total": probes,
            "uq_store_reconnects_total": 0,
        }
        pg_cluster.start()
        deadline = time.monotonic() + BACK_SECONDS
        while httpx.get(f"{node.base}/readyz", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "the node did not become ready again"
            time.sleep(0.1)  # polling the node's probe, as a load balancer would
        counters = store_counters(node)
        assert counters["uq_store_reconnects_total"] == 1
        assert counters["uq_store_errors_total"] >= probes
    finally:
        assert node.stop() == 0


def test_the_metrics_listener_needs_no_token_and_serves_nothing_else(tmp_path: Path) -> None:
    port = free_port()
    host = HostProcess(tmp_path / "uq.db", args=("--metrics-bind", str(port)))
    host.start()
    try:
        listener = f"http://127.0.0.1:{port}"
        scraped = httpx.get(f"{listener}/metrics", timeout=10)
        assert scraped.status_code == 200
        names = {family.name for family in text_string_to_metric_families(scraped.text)}
        assert {"uq_requests_pending", "uq_build_info", "uq_store_errors"} <= names
        assert (
            httpx.get(f"{listener}/api/pending", headers=host.auth, timeout=10).status_code == 404
        )
        assert httpx.get(f"{host.base}/metrics", timeout=10).status_code == 401
        assert httpx.get(f"{host.base}/metrics", headers=host.auth, timeout=10).status_code == 200
    finally:
        assert host.stop() == 0
