"""The `Store` contract, run against every backend: what the hub relies on."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import pytest

from tests.host.stores.conftest import StoreFactory
from user_questions import AskUserQuestionAnswer, AskUserQuestionAnswerItem
from user_questions.host.stores import NewQuestion, Settlement, Store
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

QUESTIONS = (
    AskUserQuestionItem(
        id="db",
        question="Which database?",
        detail="We need **durability**.",
        options=[AskUserQuestionOption(label="SQLite"), AskUserQuestionOption(label="Postgres")],
    ),
    AskUserQuestionItem(id="name", question="Name it"),
)
ANSWER = AskUserQuestionAnswer(
    answers=[
        AskUserQuestionAnswerItem(id="db", selected=["SQLite"]),
        AskUserQuestionAnswerItem(id="name", selected=[], custom="inbox"),
    ]
)


def new(rpc_id: str, session: str = "agent-1") -> NewQuestion:
    return NewQuestion(rpc_id, session, QUESTIONS, datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))


async def test_submit_stores_the_request_exactly_as_given(store: Store) -> None:
    record, created = await store.submit(new("r1"))
    assert created
    assert record.rpc_id == "r1"
    assert record.session_id == "agent-1"
    assert record.questions == QUESTIONS
    assert record.asked_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert record.pending
    assert await store.get("r1") == record


async def test_submitting_an_existing_rpc_id_changes_nothing(store: Store) -> None:
    first, _ = await store.submit(new("r1"))
    again, created = await store.submit(
        NewQuestion("r1", "someone-else", QUESTIONS[:1], datetime.now(UTC))
    )
    assert not created
    assert again == first
    assert [record.rpc_id for record in await store.pending()] == ["r1"]


async def test_pending_lists_unsettled_requests_oldest_first(store: Store) -> None:
    for rpc_id in ("a", "c", "b"):
        await store.submit(new(rpc_id))
    await store.settle("c", Settlement("cancelled", via="web"))
    assert [record.rpc_id for record in await store.pending()] == ["a", "b"]


async def test_settle_records_the_answer_and_who_settled(store: Store) -> None:
    await store.submit(new("r1"))
    settled = await store.settle("r1", Settlement("answered", ANSWER, via="web"))
    assert settled is not None
    assert settled.state == "answered"
    assert settled.answer == ANSWER
    assert settled.settled_via == "web"
    assert settled.settled_at is not None
    assert await store.get("r1") == settled


async def test_only_the_first_settlement_wins(store: Store) -> None:
    await store.submit(new("r1"))
    assert await store.settle("r1", Settlement("cancelled", via="web")) is not None
    assert await store.settle("r1", Settlement("answered", ANSWER, via="api")) is None
    record = await store.get("r1")
    assert record is not None
    assert record.state == "cancelled"
    assert record.answer is None


async def test_of_many_concurrent_settlements_exactly_one_wins(store: Store) -> None:
    await store.submit(new("r1"))
    winners: list[str] = []

    async def settle(via: str) -> None:
        if await store.settle("r1", Settlement("answered", ANSWER, via=via)) is not None:
            winners.append(via)

    async with anyio.create_task_group() as task_group:
        for index in range(8):
            task_group.start_soon(settle, f"client-{index}")
    assert len(winners) == 1
    record = await store.get("r1")
    assert record is not None
    assert record.settled_via == winners[0]


async def test_settling_an_unknown_request_does_nothing(store: Store) -> None:
    assert await store.settle("nope", Settlement("withdrawn", via="asker")) is None
    assert await store.get("nope") is None


async def test_settings_keep_the_first_default_until_set(store: Store) -> None:
    assert await store.setting("token", "first") == "first"
    assert await store.setting("token", "second") == "first"
    await store.set_setting("token", "third")
    assert await store.setting("token", "fourth") == "third"


async def test_concurrent_defaults_for_one_setting_all_get_the_first_stored(store: Store) -> None:
    values: list[str] = []

    async def read(default: str) -> None:
        values.append(await store.setting("token", default))

    async with anyio.create_task_group() as task_group:
        for index in range(8):
            task_group.start_soon(read, f"default-{index}")
    assert len(set(values)) == 1
    assert values[0] in {f"default-{index}" for index in range(8)}
    assert await store.setting("token", "later") == values[0]


async def test_everything_survives_closing_and_reopening(make_store: StoreFactory) -> None:
    async with make_store() as store:
        await store.submit(new("pending-one"))
        await store.submit(new("answered-one"))
        await store.settle("answered-one", Settlement("answered", ANSWER, via="web"))
        await store.set_setting("token", "kept")
    async with make_store() as store:
        assert [record.rpc_id for record in await store.pending()] == ["pending-one"]
        answered = await store.get("answered-one")
        assert answered is not None
        assert answered.answer == ANSWER
        assert await store.setting("token", "new") == "kept"


async def test_on_change_returns_a_remover_that_can_be_called_twice(store: Store) -> None:
    remove = store.on_change(lambda rpc_id: None)
    remove()
    remove()
