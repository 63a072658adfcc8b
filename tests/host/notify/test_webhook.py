"""Webhooks: signed JSON events, in order per question, retried with backoff, never delaying an ask.

A real receiver on loopback (`notify_helpers.receiving`) takes the deliveries; the retry pauses
are shortened so the tests stay fast, but every path is the one a host runs.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from tests.host.conftest import PICK, answer, dismissal
from tests.host.notify.helpers import HANG, dead_url, notifying_hub, receiving
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
    UserQuestionService,
)
from user_questions.host.hub import Hub
from user_questions.host.in_process import HostProvider
from user_questions.host.notify.webhook import (
    MIN_SECRET_LENGTH,
    NOTIFY_SECRET_SETTING,
    WebhookNotifier,
    sign,
    webhook_secret,
)
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio

SECRET = "s3cret-for-the-tests-only"
DOCS = Path(__file__).resolve().parents[3] / "docs"
EXAMPLE = DOCS / "examples" / "webhook_receiver.py"


def example() -> ModuleType:
    """docs/examples/webhook_receiver.py, the receiver the docs tell people to copy."""
    spec = importlib.util.spec_from_file_location("webhook_receiver", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quick(url: str, **options: float) -> WebhookNotifier:
    """A webhook notifier with short pauses between tries (the tests' only shortcut)."""
    settings: dict[str, float] = {"tries": 3, "backoff": 0.01, "timeout": 5.0, **options}
    return WebhookNotifier(
        url,
        secret=SECRET,
        tries=int(settings["tries"]),
        backoff=settings["backoff"],
        timeout=settings["timeout"],
    )


async def test_each_event_arrives_signed_with_the_documented_shape(tmp_path: Path) -> None:
    async with receiving() as receiver, notifying_hub(tmp_path, quick(receiver.url)) as hub:
        await hub.submit("r1", "agent-1", [PICK])
        await hub.respond(
            answer("r1", "agent-1", {"id": "pick", "selected": ["b"]}), via=Surface.WEB
        )
        pending, settled = await receiver.wait_for(2)

    verify = example().verify
    for delivery in (pending, settled):
        assert delivery.method == "POST"
        assert delivery.path == "/hooks/secret-path"
        assert delivery.headers["content-type"] == "application/json"
        assert delivery.headers["x-uq-signature"] == sign(SECRET, delivery.body)
        assert verify(SECRET, delivery.body, delivery.headers["x-uq-signature"])
        assert not verify(
            "another secret, not ours", delivery.body, delivery.headers["x-uq-signature"]
        )
        assert delivery.headers["x-uq-event"] == delivery.json["type"]
        assert delivery.headers["x-uq-delivery"] == delivery.json["id"]
        assert delivery.headers["user-agent"].startswith("user-questions/")
    asked_at = pending.json["askedAt"]
    assert asked_at.endswith("Z")
    assert pending.json == {
        "type": "question/pending",
        "id": "r1:pending",
        "rpcId": "r1",
        "sessionId": "agent-1",
        "questions": [PICK.model_dump(mode="json")],
        "askedAt": asked_at,
        "at": asked_at,
    }
    assert settled.json == {
        "type": "question/settled",
        "id": "r1:settled",
        "rpcId": "r1",
        "sessionId": "agent-1",
        "questions": [PICK.model_dump(mode="json")],
        "askedAt": asked_at,
        "at": settled.json["at"],
        "outcome": "answered",
        "answer": {"answers": [{"id": "pick", "selected": ["b"]}]},
        "via": "web",
    }
    assert settled.json["at"] >= asked_at


async def test_a_tampered_body_fails_the_receivers_check(tmp_path: Path) -> None:
    async with receiving() as receiver, notifying_hub(tmp_path, quick(receiver.url)) as hub:
        await hub.submit("r1", "s", [PICK])
        (delivery,) = await receiver.wait_for(1)
    tampered = delivery.body.replace(b'"s"', b'"t"')
    assert tampered != delivery.body
    assert not example().verify(SECRET, tampered, delivery.headers["x-uq-signature"])


async def test_a_failing_receiver_is_retried_until_it_accepts_and_order_is_kept(
    tmp_path: Path,
) -> None:
    async with receiving(lambda number: 500 if number <= 2 else 200) as receiver:
        notifier = quick(receiver.url, tries=5)
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("r1", "s", [PICK])
            await hub.respond(dismissal("r1"), via=Surface.API)
            deliveries = await receiver.wait_for(4)
            await notifier.drained()
    ids = [delivery.json["id"] for delivery in deliveries]
    assert ids == ["r1:pending", "r1:pending", "r1:pending", "r1:settled"]
    assert deliveries[0].body == deliveries[1].body == deliveries[2].body  # the same event again
    assert deliveries[3].json["outcome"] == "dismissed"
    assert (notifier.delivered, notifier.failed, notifier.dropped) == (2, 0, 0)


async def test_an_event_is_dropped_after_the_bounded_tries_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    async with receiving(lambda number: 503) as receiver:
        notifier = quick(receiver.url, tries=3)
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("r1", "s", [PICK])
            with anyio.fail_after(10):
                await notifier.drained()
    assert len(receiver.deliveries) == 3
    port = receiver.url.split(":")[2].split("/")[0]
    assert [record.getMessage() for record in caplog.records] == [
        f"webhook http://127.0.0.1:{port}: dropped question/pending of question r1 after 3 tries "
        "(HTTP 503)"
    ]
    assert "secret-path" not in caplog.text  # webhook paths often hold a secret of their own
    assert (notifier.delivered, notifier.failed) == (0, 1)


async def test_a_refusal_that_will_not_change_is_not_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    async with receiving(lambda number: 401) as receiver:
        notifier = quick(receiver.url, tries=5)
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("r1", "s", [PICK])
            with anyio.fail_after(10):
                await notifier.drained()
    assert len(receiver.deliveries) == 1
    assert caplog.records[0].getMessage().endswith("after 1 try (HTTP 401)")


async def test_a_dead_receiver_never_delays_an_ask_and_its_events_are_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    notifier = quick(dead_url(), tries=3, backoff=0.5)  # at least 0.75 s of pauses per event
    async with notifying_hub(tmp_path, notifier) as hub:
        with anyio.fail_after(5):
            got = await _ask_and_answer(hub)
        assert got.model_dump(mode="json") == {"answers": [{"id": "pick", "selected": ["a"]}]}
        assert notifier.failed == 0  # the ask is back while the notifier is still retrying
        with anyio.fail_after(15):
            await notifier.drained()
    assert notifier.failed == 2
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert "dropped question/pending of question" in messages[0]
    assert "dropped question/settled of question" in messages[1]
    assert all("after 3 tries (ConnectError" in message for message in messages)


async def test_a_slow_receiver_never_delays_an_ask(tmp_path: Path) -> None:
    async with receiving(lambda number: HANG) as receiver:
        notifier = WebhookNotifier(receiver.url, secret=SECRET, tries=1, timeout=30.0)
        async with notifying_hub(tmp_path, notifier) as hub:
            with anyio.fail_after(5):
                await _ask_and_answer(hub)
                await receiver.wait_for(1)
            # The receiver holds the first delivery; the settled event waits its turn behind it.
            assert len(receiver.deliveries) == 1
            assert notifier.delivered == 0
            receiver.cut()
    # The receiver cut its connections and went away, so the notifier gave up on both events.
    assert notifier.failed == 2


async def test_a_slow_question_does_not_hold_up_the_events_of_others(tmp_path: Path) -> None:
    async with (
        receiving(lambda number: HANG if number == 1 else 200) as receiver,
        notifying_hub(tmp_path, quick(receiver.url, timeout=30.0)) as hub,
    ):
        await hub.submit("slow", "s", [PICK])
        await receiver.wait_for(1)
        await hub.respond(dismissal("slow"), via=Surface.API)
        await hub.submit("other", "s", [PICK])
        await hub.respond(dismissal("other"), via=Surface.API)
        deliveries = await receiver.wait_for(3)
        receiver.cut()
    assert [delivery.json["id"] for delivery in deliveries] == [
        "slow:pending",
        "other:pending",
        "other:settled",
    ]


async def test_the_secret_is_kept_in_the_store_and_a_given_one_replaces_it(
    tmp_path: Path,
) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        first = await webhook_secret(store)
        assert len(first) >= MIN_SECRET_LENGTH
        assert await webhook_secret(store) == first
        assert await webhook_secret(store, "chosen-secret-0123") == "chosen-secret-0123"
        assert await store.setting(NOTIFY_SECRET_SETTING) == "chosen-secret-0123"
        assert await webhook_secret(store) == "chosen-secret-0123"


@pytest.mark.parametrize(
    ("url", "secret", "message"),
    [
        ("ftp://example.com/hook", SECRET, "a notify webhook must be an http:// or https:// URL"),
        ("http:///no-host", SECRET, "a notify webhook must be an http:// or https:// URL"),
        ("https://example.com/hook", "short", "a notify secret must be at least 16 characters"),
    ],
)
async def test_an_unusable_webhook_is_refused_with_a_code(
    url: str, secret: str, message: str
) -> None:
    with pytest.raises(UserQuestionError) as caught:
        WebhookNotifier(url, secret=secret)
    assert caught.value.code == ErrorCode.BAD_NOTIFIER
    assert caught.value.message.startswith(message)


async def _ask_and_answer(hub: Hub) -> AskUserQuestionAnswer:
    """An agent's ask through the host's in-process provider, answered by a page at once."""
    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(HostProvider(hub, "agent"))
    page = hub.subscribe()

    async def answer_first() -> None:
        rpc_id = json.loads(await page.frames.receive())["rpcId"]
        await hub.respond(
            answer(rpc_id, "agent", {"id": "pick", "selected": ["a"]}), via=Surface.WEB
        )

    async with anyio.create_task_group() as group:
        group.start_soon(answer_first)
        got = await ctx.user_questions.ask(AskUserQuestionRequest([PICK]))
    page.close()
    return got


def test_the_check_the_docs_show_is_the_example_the_tests_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "notify.md").read_text(), flags=re.S)
    assert blocks
    assert all(block in EXAMPLE.read_text(encoding="utf-8") for block in blocks)
