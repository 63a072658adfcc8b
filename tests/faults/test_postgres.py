"""Two `uq serve` nodes on one PostgreSQL database, askers given both (`RemoteProvider([a, b])`), a
page on node B: the database server killed (`pg_ctl stop -m immediate`) and restarted under load;
node A cut off the database by a partition (`tests/faults/proxy.py`) while B still reaches it; the
database answering slowly. Askers fail over and re-attach exactly once: every ask is stored once
and answered once; nothing is refused with a bug's code; each node logs one line as the fault
starts and one as it ends, and is ready again by itself."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio
import pytest

from tests.e2e.host_process import HostProcess
from tests.faults.harness import (
    SESSION,
    Page,
    fault_lines,
    health,
    readiness,
    tracebacks,
    until_ready,
)
from tests.faults.proxy import Proxy
from tests.pg import PostgresCluster, database_of
from user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio


class Asks:
    """Asks through a `RemoteProvider` given both nodes, each in a task of its own; `answers`
    has what each got."""

    def __init__(self, provider: RemoteProvider, tasks: anyio.abc.TaskGroup) -> None:
        self.provider = provider
        self.tasks = tasks
        self.answers: dict[str, list[str]] = {}

    def ask(self, name: str) -> None:
        self.tasks.start_soon(self._ask, name)

    async def _ask(self, name: str) -> None:
        item = AskUserQuestionItem(
            id=name,
            question=f"Go ahead with {name}?",
            options=[AskUserQuestionOption(label="yes"), AskUserQuestionOption(label="no")],
        )
        answer = await self.provider.ask(AskUserQuestionRequest(questions=[item]))
        self.answers.setdefault(name, []).append(answer.answers[0].selected[0])

    async def all_answered(self, count: int, seconds: float) -> None:
        with anyio.fail_after(seconds):
            while len(self.answers) < count:  # noqa: ASYNC110 - answers the tasks write
                await anyio.sleep(0.05)


@contextlib.asynccontextmanager
async def nodes(
    pg_url: str, cluster: PostgresCluster, tmp_path: Path
) -> AsyncIterator[tuple[HostProcess, HostProcess, Proxy]]:
    """Node A, reaching the database through a proxy, and node B, directly; stopped after."""
    async with Proxy(cluster.base / ".s.PGSQL.5432").serving() as proxy:
        through = f"postgresql://postgres@127.0.0.1:{proxy.port}/{database_of(pg_url)}"
        node_a = HostProcess(None, args=("--store", through), log=tmp_path / "a.log")
        node_b = HostProcess(None, args=("--store", pg_url), log=tmp_path / "b.log")
        # The nodes start in threads: the proxy node A goes through runs on this event loop.
        await anyio.to_thread.run_sync(node_a.start)
        await anyio.to_thread.run_sync(node_b.start)
        try:
            yield node_a, node_b, proxy
        finally:
            for node in (node_a, node_b):
                assert await anyio.to_thread.run_sync(node.stop) == 0


def stored(cluster: PostgresCluster, pg_url: str) -> dict[str, str]:
    """Each stored request's state, by its question's id (the ask's name)."""
    with cluster._connect(database_of(pg_url)) as connection:
        rows = connection.execute(
            "SELECT questions->0->>'id', state FROM user_questions.questions"
        ).fetchall()
    return _by_name(rows)


def stored_sqlite(db: Path) -> dict[str, str]:
    """The same, from a SQLite store."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT questions->0->>'id', state FROM questions").fetchall()
    return _by_name(rows)


def _by_name(rows: Sequence[Sequence[object]]) -> dict[str, str]:
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), "an ask was stored twice"
    return {str(name): str(state) for name, state in rows}


async def test_the_database_killed_and_restarted_under_load(
    pg_url: str, pg_cluster: PostgresCluster, tmp_path: Path
) -> None:
    async with nodes(pg_url, pg_cluster, tmp_path) as (node_a, node_b, _):
        with health(node_a.base) as monitor:
            page = Page(node_b)
            provider = RemoteProvider([node_a.url, node_b.url], session=SESSION)
            async with page.running(), provider, anyio.create_task_group() as tasks:
                asks = Asks(provider, tasks)
                for index in range(5):
                    asks.ask(f"before-{index}")
                await asks.all_answered(5, 15)
                for index in range(10):
                    asks.ask(f"during-{index}")
                await anyio.to_thread.run_sync(pg_cluster.stop, "immediate")
                killed = time.monotonic()
                for node in (node_a, node_b):
                    await until_ready(node, 503, 15)
                    assert await readiness(node) == (503, "STORE_UNAVAILABLE")
                for index in range(5):
                    asks.ask(f"down-{index}")
                await anyio.sleep(1)
                await anyio.to_thread.run_sync(pg_cluster.start)
                back = max([await until_ready(node, 200, 30) for node in (node_a, node_b)])
                await asks.all_answered(20, 30)
                took = time.monotonic() - killed
        print(
            f"database killed (down 1 s and its restart): all 20 asks answered {took:.2f} s "
            f"after the kill, nodes ready again within {back:.2f} s of its restart; "
            f"page refused {dict(page.errors)}; {monitor.report()}"
        )
        assert asks.answers == {name: ["yes"] for name in asks.answers}
        assert set(page.errors) <= {"STORE_UNAVAILABLE"}
        monitor.check()
    assert stored(pg_cluster, pg_url) == dict.fromkeys(asks.answers, "answered")
    for log in ("a.log", "b.log"):
        lines = fault_lines(tmp_path / log)
        assert len(lines) == 2, lines
        assert tracebacks(tmp_path / log) == 0


async def test_a_partitioned_node_sends_its_askers_to_the_other(
    pg_url: str, pg_cluster: PostgresCluster, tmp_path: Path
) -> None:
    async with nodes(pg_url, pg_cluster, tmp_path) as (node_a, node_b, proxy):
        with health(node_a.base) as monitor:
            page = Page(node_b)
            provider = RemoteProvider([node_a.url, node_b.url], session=SESSION)
            async with page.running(answering=False), provider, anyio.create_task_group() as tasks:
                asks = Asks(provider, tasks)
                for index in range(5):
                    asks.ask(f"waiting-{index}")
                await anyio.to_thread.run_sync(node_b.wait_pending, 5)
                proxy.partition()
                cut = time.monotonic()
                asks.ask("during")
                page.go.set()  # answered on node B, which node A cannot hear of
                detected = await until_ready(node_a, 503, 30)
                assert await readiness(node_a) == (503, "STORE_UNAVAILABLE")
                assert await readiness(node_b) == (200, None)
                await asks.all_answered(6, 30)
                answered = time.monotonic() - cut
                assert provider.url == node_b.url.partition("?")[0]
                proxy.heal()
                back = await until_ready(node_a, 200, 30)
        print(
            f"partition: node A said so {detected:.2f} s after the cut; its askers failed over "
            f"and all 6 asks were answered {answered:.2f} s after it; A ready {back:.2f} s "
            f"after the partition healed; {monitor.report()}"
        )
        assert asks.answers == {name: ["yes"] for name in asks.answers}
        monitor.check()
    assert stored(pg_cluster, pg_url) == dict.fromkeys(asks.answers, "answered")
    lines = fault_lines(tmp_path / "a.log")
    assert len(lines) == 2, lines
    assert fault_lines(tmp_path / "b.log") == []
    assert tracebacks(tmp_path / "a.log") == 0


async def test_a_slow_database_only_slows_its_node(
    pg_url: str, pg_cluster: PostgresCluster, tmp_path: Path
) -> None:
    async with nodes(pg_url, pg_cluster, tmp_path) as (node_a, node_b, proxy):
        with health(node_a.base) as monitor:
            page = Page(node_b)
            provider = RemoteProvider([node_a.url, node_b.url], session=SESSION)
            async with page.running(), provider, anyio.create_task_group() as tasks:
                asks = Asks(provider, tasks)
                proxy.delay = 0.3  # each chunk, each way: a statement takes 0.6 s at least
                began = time.monotonic()
                for index in range(10):
                    asks.ask(f"slow-{index}")
                await asks.all_answered(10, 40)
                took = time.monotonic() - began
                assert await readiness(node_a) == (200, None)
        print(f"slow database: 10 asks through node A answered in {took:.2f} s; {monitor.report()}")
        assert provider.url == node_a.url.partition("?")[0]  # slow is not gone: no failover
        monitor.check()
    assert stored(pg_cluster, pg_url) == dict.fromkeys(asks.answers, "answered")
    assert fault_lines(tmp_path / "a.log") == []
