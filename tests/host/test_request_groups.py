"""Identical pending requests of one asker on both stores: one card with a count on every page
and in `pending_frames`, a count frame (not a card) for each one more or fewer, one answer settling
them all (each its own settlement, each asker told), and a card that goes on with the next request
when its own is withdrawn."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.host.conftest import answer, next_frame
from tests.host.test_hub_multinode import node
from user_questions.frames import QuestionGroupFrame, QuestionRequestedFrame
from user_questions.host.hub import Hub, PageSubscription
from user_questions.host.stores import HistoryQuery, Store, StoredQuestion
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio

AGAIN = AskUserQuestionItem.model_validate(
    {
        "id": "again",
        "question": "Run the migration again?",
        "options": [{"label": "Yes"}, {"label": "No"}],
    }
)
OTHER = AGAIN.model_copy(update={"question": "Drop the table?"})


async def ask(
    hub: Hub,
    rpc_id: str,
    told: list[StoredQuestion],
    *,
    question: AskUserQuestionItem = AGAIN,
    asked_by: str | None = "runaway",
    session: str = "s",
) -> None:
    record, _ = await hub.submit(
        rpc_id, session, [question], asked_by=asked_by, watcher=told.append
    )
    assert record.pending


def cards(hub: Hub) -> dict[str, int]:
    """Each card a page would be shown on connecting, with how many requests it stands for."""
    shown = [QuestionRequestedFrame.model_validate_json(frame) for frame in hub.pending_frames()]
    return {frame.rpc_id: 1 if frame.group is None else frame.group.count for frame in shown}


async def frame_of(page: PageSubscription, kind: str) -> dict[str, Any]:
    frame = await next_frame(page)
    assert frame["payload"]["type"] == kind, frame
    return frame


async def test_identical_asks_are_one_card_and_one_answer_settles_them_all(store: Store) -> None:
    told: list[StoredQuestion] = []
    async with Hub(store) as hub:
        for number in range(3):
            await ask(hub, f"r{number}", told)
        await ask(hub, "other-question", told, question=OTHER)
        await ask(hub, "other-session", told, session="s2")
        await ask(hub, "other-token", told, asked_by="careful")
        await ask(hub, "a-person", told, asked_by=None)
        assert cards(hub) == {
            "r0": 3,
            "other-question": 1,
            "other-session": 1,
            "other-token": 1,
            "a-person": 1,
        }
        assert hub.pending_count == 7
        page = hub.subscribe()
        await ask(hub, "r3", told)
        group = QuestionGroupFrame.model_validate(await frame_of(page, "question/group"))
        assert (group.payload.question_rpc_id, group.payload.count) == ("r0", 4)

        receipt = await hub.respond(
            answer("r2", "s", {"id": "again", "selected": ["Yes"]}), via=Surface.WEB, by="ann"
        )
        assert receipt.accepted
        closed = await frame_of(page, "question/resolved")
        assert closed["payload"]["questionRpcId"] == "r0"  # the card closes once, no count falls
        assert sorted(record.rpc_id for record in told) == ["r0", "r1", "r2", "r3"]
        for record in told:
            assert record.outcome is Outcome.ANSWERED
            assert record.answer is not None
            assert record.answer.answers[0].selected == ["Yes"]
            assert (record.settled_via, record.settled_by) == (Surface.WEB, "ann")
        assert hub.pending_count == 4
        history = await store.history(HistoryQuery())
        assert {record.rpc_id for record in history.records} >= {"r0", "r1", "r2", "r3"}
        await ask(hub, "r4", told)  # asked after the answer: a card of its own
        assert cards(hub)["r4"] == 1
        assert (await frame_of(page, "question/requested"))["rpcId"] == "r4"


async def test_a_withdrawn_request_lowers_the_count_and_the_next_one_carries_the_card(
    store: Store,
) -> None:
    told: list[StoredQuestion] = []
    async with Hub(store) as hub:
        for number in range(3):
            await ask(hub, f"r{number}", told)
        page = hub.subscribe()
        await hub.withdraw("r1", via=Surface.ASKER, reason="aborted")
        group = await frame_of(page, "question/group")
        assert (group["payload"]["questionRpcId"], group["payload"]["count"]) == ("r0", 2)
        await hub.withdraw("r0", via=Surface.ASKER, reason="aborted")
        assert (await frame_of(page, "question/resolved"))["payload"]["questionRpcId"] == "r0"
        card = QuestionRequestedFrame.model_validate(await frame_of(page, "question/requested"))
        assert card.rpc_id == "r2"
        assert card.group is None  # alone now
        assert cards(hub) == {"r2": 1}
        # Each asker is told as its request settles: by the time withdraw returns.
        assert sorted((record.rpc_id, record.outcome) for record in told) == [
            ("r0", Outcome.WITHDRAWN),
            ("r1", Outcome.WITHDRAWN),
        ]


async def test_a_group_answered_on_one_node_closes_on_another(pg_url: str) -> None:
    told: list[StoredQuestion] = []
    all_told = anyio.Event()

    def tell(record: StoredQuestion) -> None:
        told.append(record)
        if len(told) == 3:
            all_told.set()

    async with node(pg_url) as asked_on, node(pg_url) as answered_on:
        page = answered_on.subscribe()
        for number in range(3):
            await asked_on.submit(f"r{number}", "s", [AGAIN], asked_by="runaway", watcher=tell)
        card = await frame_of(page, "question/requested")  # the first: a card of its own
        assert card["rpcId"] == "r0"
        for count in (2, 3):  # each later one: its count, as node B hears of it
            group = await frame_of(page, "question/group")
            assert group["payload"] == {
                "type": "question/group",
                "questionRpcId": "r0",
                "count": count,
            }
        assert cards(answered_on) == {"r0": 3}
        yes = answer("r0", "s", {"id": "again", "selected": ["Yes"]})
        assert (await answered_on.respond(yes, via=Surface.WEB)).accepted
        closed = await frame_of(page, "question/resolved")
        assert closed["payload"]["questionRpcId"] == "r0"
        with anyio.fail_after(10):  # the askers wait on node A, told as its store's notices come
            await all_told.wait()
        assert {record.outcome for record in told} == {Outcome.ANSWERED}
        assert asked_on.pending_count == answered_on.pending_count == 0
