"""`GET /metrics`: scraped after a scripted run and read with prometheus-client's own parser,
every number matches what happened."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, TOKEN, answer_frame, ask_frame, dismiss_frame
from tests.host.notify.helpers import notifying_hub
from tests.host.notify.test_notifier import GatedNotifier
from user_questions import (
    AbortController,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
    UserQuestionService,
)
from user_questions._version import __version__
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.hub import HostTask, Hub
from user_questions.host.in_process import HostProvider
from user_questions.host.notify.events import HostEvent
from user_questions.host.stores import StoredQuestion
from user_questions.host.telemetry.metrics import SETTLE_BUCKETS, HostMetrics
from user_questions.outcomes import RequestState, Surface

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of an exposition, by name and labels, as Prometheus reads it."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def of(found: Samples, name: str, **labels: str) -> dict[frozenset[tuple[str, str]], float]:
    """The samples called `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return {key: value for (n, key), value in found.items() if n == name and wanted <= key}


def value(found: Samples, name: str, **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


def agent_that_times_out(done: threading.Event) -> HostTask:
    """A host task: an agent in the host's process whose ask times out (withdrawn by `host`)
    once it is stored: a timer could run out before the ask is stored, on a loaded machine."""

    async def run(hub: Hub) -> None:
        ctx = Context()
        ctx.plugin(UserQuestionService)
        ctx.user_questions.register_provider(HostProvider(hub, "in-process"))
        timer = AbortController()

        def time_out_once_stored(stored: StoredQuestion) -> None:
            if stored.session_id == "in-process" and stored.state is RequestState.PENDING:
                timer.abort(TimeoutError("signal timed out"))

        remove = hub.on_event(time_out_once_stored)
        with pytest.raises(UserQuestionError) as timed_out:
            await ctx.user_questions.ask(AskUserQuestionRequest([PICK], signal=timer.signal))
        remove()
        assert timed_out.value.code == ErrorCode.ASK_TIMED_OUT
        done.set()

    return run


@pytest.fixture
def agent_done() -> threading.Event:
    return threading.Event()


@pytest.fixture
def client(tmp_path: Path, agent_done: threading.Event) -> Iterator[TestClient]:
    app = create_app(
        HostConfig(
            store=tmp_path / "host.db", token=TOKEN, tasks=[agent_that_times_out(agent_done)]
        )
    )
    with TestClient(app) as test_client:
        yield test_client


def test_every_counter_matches_a_scripted_run(
    client: TestClient, agent_done: threading.Event
) -> None:
    with (
        client.websocket_connect("/ws/ask", headers=AUTH) as asker,
        client.websocket_connect("/ws", headers=AUTH) as page,
    ):
        for rpc_id in ("r1", "r2", "r3", "r4", "r5", "r6", "r1"):  # r1 again: a re-attachment
            asker.send_json(ask_frame(rpc_id, PICK))
            assert asker.receive_json()["payload"]["type"] == "ask/pending"
        page.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}))
        assert asker.receive_json()["payload"]["outcome"] == "answered"
        dismissed = client.post("/api/respond", json=dismiss_frame("r2"), headers=AUTH)
        assert dismissed.json() == {"accepted": True}
        in_terminal = {**AUTH, "X-UQ-Surface": "terminal"}
        answer = answer_frame("r3", "s", {"id": "pick", "selected": ["b"]})
        assert client.post("/api/respond", json=answer, headers=in_terminal).json() == {
            "accepted": True
        }
        asker.send_json({"type": "withdraw", "rpcId": "r4", "reason": "timed-out"})
        asker.send_json({"type": "withdraw", "rpcId": "r5"})
        outcomes = {asker.receive_json()["payload"]["outcome"] for _ in range(4)}
        assert outcomes == {"dismissed", "answered", "timed-out", "withdrawn"}
        assert agent_done.wait(10), "the in-process agent's ask did not time out"

        scraped = client.get("/metrics", headers=AUTH)
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        found = samples(scraped.text)
        assert value(found, "uq_connections", kind="page") == 1
        assert value(found, "uq_connections", kind="asker") == 1

    assert value(found, "uq_requests_asked_total") == 7  # six over /ws/ask, one in-process
    assert value(found, "uq_requests_pending") == 1  # r6
    assert 0 < value(found, "uq_oldest_pending_seconds") < 60
    assert of(found, "uq_requests_settled_total") == {
        frozenset({("outcome", "answered"), ("surface", "web")}): 1,
        frozenset({("outcome", "dismissed"), ("surface", "api")}): 1,
        frozenset({("outcome", "answered"), ("surface", "terminal")}): 1,
        frozenset({("outcome", "timed-out"), ("surface", "asker")}): 1,
        frozenset({("outcome", "withdrawn"), ("surface", "asker")}): 1,
        frozenset({("outcome", "timed-out"), ("surface", "host")}): 1,
    }
    counts = {"answered": 2, "dismissed": 1, "timed-out": 2, "withdrawn": 1}
    for outcome, count in counts.items():
        assert value(found, "uq_request_settle_seconds_count", outcome=outcome) == count
        buckets = of(found, "uq_request_settle_seconds_bucket", outcome=outcome)
        assert len(buckets) == len(SETTLE_BUCKETS) + 1
        # Everything settled within a second of being asked, so every bucket holds them all.
        assert set(buckets.values()) == {count}
        assert 0 <= value(found, "uq_request_settle_seconds_sum", outcome=outcome) < count
    assert value(found, "uq_store_errors_total") == 0
    assert value(found, "uq_store_reconnects_total") == 0
    assert value(found, "uq_build_info", version=__version__) == 1
    # Web Push is the one notifier a host runs unasked (with the notify extra): nothing queued.
    assert of(found, "uq_notifier_queued") == {frozenset({("notifier", "web push")}): 0}

    after = samples(client.get("/metrics", headers=AUTH).text)
    assert value(after, "uq_connections", kind="page") == 0
    assert value(after, "uq_connections", kind="asker") == 0


def test_metrics_need_the_token(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 401


def test_a_settle_time_lands_in_the_buckets_that_hold_it() -> None:
    metrics = HostMetrics()
    asked = datetime(2025, 6, 3, 14, 0, tzinfo=UTC)
    for seconds in (0.5, 90, 7200):
        metrics.committed(
            StoredQuestion(
                rpc_id=f"r{seconds}",
                session_id="s",
                questions=(PICK,),
                asked_at=asked,
                state=RequestState.ANSWERED,
                settled_at=asked + timedelta(seconds=seconds),
                settled_via=Surface.WEB,
            )
        )
    found = samples(metrics.exposition().decode())
    bucket = {
        dict(key)["le"]: count
        for key, count in of(found, "uq_request_settle_seconds_bucket").items()
    }
    assert bucket["1.0"] == 1
    assert bucket["60.0"] == 1
    assert bucket["120.0"] == 2
    assert bucket["3600.0"] == 2
    assert bucket["14400.0"] == 3
    assert bucket["+Inf"] == 3
    assert value(found, "uq_request_settle_seconds_sum", outcome="answered") == 7290.5


@pytest.mark.anyio
async def test_every_notifier_reports_its_queue_its_failures_and_its_drops(
    tmp_path: Path,
) -> None:
    class Failing(GatedNotifier):
        target = "webhook https://hooks.example.com"

        async def deliver(self, event: HostEvent) -> bool:
            await super().deliver(event)
            return event.rpc_id != "r2"

    notifier = Failing(concurrency=1, capacity=3)
    async with notifying_hub(tmp_path, notifier) as hub:
        for rpc_id in ("r1", "r2", "r3", "r4", "r5"):
            await hub.submit(rpc_id, "s", [PICK])
        await notifier.until_started(1)
        name = {"notifier": "webhook https://hooks.example.com"}
        found = samples(hub.metrics.exposition().decode())
        assert value(found, "uq_notifier_queued", **name) == 3  # one delivering, two waiting
        assert value(found, "uq_notifier_dropped_total", **name) == 2
        assert value(found, "uq_notifier_delivered_total", **name) == 0
        for started in range(1, 4):  # let the three queued events through, one by one
            await notifier.until_started(started)
            notifier.gate(notifier.started[-1]).set()
        with anyio.fail_after(5):
            await notifier.drained()
        found = samples(hub.metrics.exposition().decode())
        assert value(found, "uq_notifier_queued", **name) == 0
        assert value(found, "uq_notifier_delivered_total", **name) == 2
        assert value(found, "uq_notifier_failed_total", **name) == 1
    assert of(samples(hub.metrics.exposition().decode()), "uq_notifier_queued") == {}


def test_every_metric_is_in_the_deployment_docs() -> None:
    documented = (Path(__file__).resolve().parents[3] / "docs" / "deploy.md").read_text()
    families = list(text_string_to_metric_families(HostMetrics().exposition().decode()))
    assert len(families) == 13
    for family in families:
        name = f"{family.name}_total" if family.type == "counter" else family.name
        assert f"`{name}`" in documented, f"{name} is not in docs/deploy.md"
