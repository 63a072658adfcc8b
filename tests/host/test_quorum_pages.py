"""Where a quorum stands, on every page: a request that needs two approvals carries its `quorum`
(how many, who approved) in its `question/requested` frame and in what a page gets on
connecting; each counted approval pushes a `question/quorum` frame to every page showing it and
tells the tally listeners, on both stores, and on another PostgreSQL node than the one that
counted it; a second approval by the same person pushes nothing."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.host.conftest import answer, next_frame
from tests.host.test_hub_multinode import frame_of, node
from user_questions.approvals import ALLOW, approval_question
from user_questions.frames import (
    Approval,
    QuestionQuorumFrame,
    QuestionRequestedFrame,
    QuestionResolvedFrame,
)
from user_questions.host.hub import Hub
from user_questions.host.stores import Store, StoredQuestion
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

CALL = {"command": "terraform apply"}
CARD = approval_question("Bash", CALL, agent="claude-code")
APPROVAL = Approval(tool="Bash", input=CALL, agent="claude-code")


async def ask(hub: Hub, rpc_id: str) -> None:
    record, _ = await hub.submit(
        rpc_id, "s", [CARD], asked_by="deploy", approval=APPROVAL, approvals=2
    )
    assert record.pending


async def allow(hub: Hub, rpc_id: str, person: str) -> str | None:
    """`person` allows the call; the receipt's message (`None` once it settled)."""
    receipt = await hub.respond(
        answer(rpc_id, "s", {"id": "approval", "selected": [ALLOW]}), via=Surface.WEB, by=person
    )
    assert receipt.accepted, receipt
    return receipt.message


def card_quorum(hub: Hub) -> dict[str, Any] | None:
    """The quorum of the one card a page would be shown on connecting."""
    [frame] = hub.pending_frames()
    quorum = QuestionRequestedFrame.model_validate_json(frame).quorum
    return None if quorum is None else quorum.model_dump(by_alias=True)


async def test_every_page_sees_each_counted_approval(store: Store) -> None:
    tallies: list[tuple[str, tuple[str, ...]]] = []
    async with Hub(store) as hub:
        hub.on_tally(lambda record, people: tallies.append((record.rpc_id, people)))
        page = hub.subscribe()
        await ask(hub, "apply")
        shown = QuestionRequestedFrame.model_validate(await next_frame(page))
        assert shown.quorum is not None
        assert (shown.quorum.needed, shown.quorum.approved_by) == (2, [])

        assert await allow(hub, "apply", "alice") == "1 of 2 approved: alice"
        pushed = QuestionQuorumFrame.model_validate(await next_frame(page))
        assert pushed.payload.question_rpc_id == "apply"
        assert (pushed.payload.quorum.needed, pushed.payload.quorum.approved_by) == (2, ["alice"])
        assert card_quorum(hub) == {"needed": 2, "approvedBy": ["alice"]}
        assert tallies == [("apply", ("alice",))]

        assert (await allow(hub, "apply", "alice") or "").endswith("1 of 2 approved: alice")
        assert await allow(hub, "apply", "bob") is None  # settled: the plain ACCEPTED
        closed = await next_frame(page)  # no count frame for alice's second approval
        assert closed["payload"]["type"] == "question/resolved"
        assert tallies == [("apply", ("alice",))]


async def test_a_plain_request_has_no_quorum(store: Store) -> None:
    async with Hub(store) as hub:
        await hub.submit("once", "s", [CARD], asked_by="deploy", approval=APPROVAL)
        assert "quorum" not in json.loads(hub.pending_frames()[0])


async def test_a_host_restarted_between_approvals_shows_the_count(store: Store) -> None:
    async with Hub(store) as hub:
        await ask(hub, "apply")
        await allow(hub, "apply", "alice")
    async with Hub(store) as again:
        assert card_quorum(again) == {"needed": 2, "approvedBy": ["alice"]}


async def test_an_approval_on_one_node_is_counted_on_the_others_pages(pg_url: str) -> None:
    settled: list[StoredQuestion] = []
    heard, asker_told = anyio.Event(), anyio.Event()
    tallies: list[tuple[str, ...]] = []

    def tallied(_: StoredQuestion, people: tuple[str, ...]) -> None:
        tallies.append(people)
        heard.set()

    def told(record: StoredQuestion) -> None:
        settled.append(record)
        asker_told.set()

    async with node(pg_url) as shown_on, node(pg_url) as approved_on:
        shown_on.on_tally(tallied)
        page = shown_on.subscribe()
        await approved_on.submit(
            "apply",
            "s",
            [CARD],
            asked_by="deploy",
            approval=APPROVAL,
            approvals=2,
            watcher=told,
        )
        await frame_of(page, "question/requested")
        assert await allow(approved_on, "apply", "alice") == "1 of 2 approved: alice"
        pushed = await frame_of(page, "question/quorum")
        assert pushed["payload"] == {
            "type": "question/quorum",
            "questionRpcId": "apply",
            "quorum": {"needed": 2, "approvedBy": ["alice"]},
        }
        with anyio.fail_after(30):
            await heard.wait()
        assert tallies == [("alice",)]
        assert card_quorum(shown_on) == {"needed": 2, "approvedBy": ["alice"]}
        # bob approves on the other node: the second approval settles it for both
        assert await allow(shown_on, "apply", "bob") is None
        closed = QuestionResolvedFrame.model_validate(await frame_of(page, "question/resolved"))
        assert closed.payload.settled is Outcome.ANSWERED
        with anyio.fail_after(30):  # the asker's node hears of it from the store
            await asker_told.wait()
        assert [record.outcome for record in settled] == [Outcome.ANSWERED]
