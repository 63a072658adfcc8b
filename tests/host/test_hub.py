"""The hub: stored before shown, replay, first answer wins, withdrawal, and the store's wake-ups."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio
import pytest

from tests.host.conftest import MANY, PICK, PLAN, answer, dismissal, next_frame
from user_questions import (
    AbortController,
    AbortSignal,
    Agent,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
)
from user_questions.frames import (
    ClientResponse,
    Origin,
    QuestionRequested,
    QuestionRequestedFrame,
    QuestionResolved,
    QuestionResolvedFrame,
    Receipt,
    iso,
)
from user_questions.host.hub import Hub, _hub, _pages
from user_questions.host.in_process import HostProvider
from user_questions.host.stores import ChangeListener, NewQuestion, Settlement, StoredQuestion
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface, resolved_outcome
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio


async def test_a_request_is_stored_before_any_page_sees_it(hub: Hub) -> None:
    page = hub.subscribe()
    record, _ = await hub.submit("r1", "agent-1", [PICK])
    frame = await next_frame(page)
    assert frame["rpcId"] == "r1"
    assert await hub.store.get("r1") == record
    assert frame["payload"] == {
        "type": "question/requested",
        "sessionId": "agent-1",
        "questions": [PICK.model_dump(mode="json")],
    }
    assert frame["rendered"] == {}
    assert frame["askedAt"].endswith("Z")


async def test_a_new_page_gets_every_pending_request_replayed(hub: Hub) -> None:
    await hub.submit("r1", "s", [PICK])
    await hub.submit("r2", "s", [MANY])
    await hub.respond(dismissal("r1"), via=Surface.WEB)
    replay = [json.loads(frame) for frame in hub.subscribe().snapshot]
    assert [frame["rpcId"] for frame in replay] == ["r2"]
    again = [json.loads(frame) for frame in hub.subscribe().snapshot]
    assert again == replay


async def test_plan_detail_is_rendered_without_raw_html(hub: Hub) -> None:
    await hub.submit("r1", "s", [PLAN])
    frame = json.loads(hub.pending_frames()[0])
    assert frame["rendered"] == {
        "plan-review": "<h1>Plan</h1>\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    }


async def test_the_first_answer_wins_and_a_later_one_is_not_pending(hub: Hub) -> None:
    page = hub.subscribe()
    await hub.submit("r1", "s", [PICK])
    await next_frame(page)
    first = await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["a"]}), via=Surface.WEB)
    second = await hub.respond(
        answer("r1", "s", {"id": "pick", "selected": ["b"]}), via=Surface.API
    )
    assert first == Receipt(accepted=True)
    assert second.accepted is False
    assert second.reason == "not-pending"
    assert await next_frame(page) == {
        "payload": {
            "type": "question/resolved",
            "sessionId": "s",
            "questionRpcId": "r1",
            "outcome": "answered",
            "settled": "answered",
        }
    }
    stored = await hub.store.get("r1")
    assert stored is not None
    assert stored.answer == AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id="pick", selected=["a"])]
    )
    assert stored.settled_via == "web"


async def test_two_answers_at_once_exactly_one_wins(hub: Hub) -> None:
    await hub.submit("r1", "s", [PICK])
    receipts = []

    async def respond(label: str) -> None:
        response = answer("r1", "s", {"id": "pick", "selected": [label]})
        receipts.append(await hub.respond(response, via=Surface.WEB, by=label))

    async with anyio.create_task_group() as task_group:
        for label in ("a", "b", "a", "b"):
            task_group.start_soon(respond, label)
    assert sorted(receipt.accepted for receipt in receipts) == [False, False, False, True]
    assert {receipt.reason for receipt in receipts if not receipt.accepted} == {"not-pending"}
    assert hub.pending_count == 0


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ([{"id": "pick", "selected": ["c"]}], '"c" is not one of its options'),
        ([{"id": "pick", "selected": ["a", "b"]}], "takes one label, got 2"),
        ([], "for question pick: missing"),
        ([{"id": "pick", "selected": []}, {"id": "other", "selected": []}], "no such question"),
        ([{"id": "pick", "selected": [], "custom": "  "}], "custom text is blank"),
    ],
)
async def test_an_answer_breaking_the_rules_is_a_bad_response_and_stays_pending(
    hub: Hub, items: list[dict[str, Any]], problem: str
) -> None:
    await hub.submit("r1", "s", [PICK])
    receipt = await hub.respond(answer("r1", "s", *items), via=Surface.WEB)
    assert receipt.accepted is False
    assert receipt.reason == "bad-response"
    assert receipt.message is not None
    assert problem in receipt.message
    assert hub.pending_count == 1
    good = await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["b"]}), via=Surface.WEB)
    assert good.accepted


async def test_an_answer_for_another_session_is_refused(hub: Hub) -> None:
    await hub.submit("r1", "alice", [PICK])
    receipt = await hub.respond(
        answer("r1", "mallory", {"id": "pick", "selected": ["a"]}), via=Surface.WEB
    )
    assert receipt.reason == "bad-response"
    assert receipt.message == 'question "r1" belongs to session "alice", not "mallory"'
    assert hub.pending_count == 1


async def test_a_dismissal_with_an_unknown_code_is_a_bad_response(hub: Hub) -> None:
    await hub.submit("r1", "s", [PICK])
    response = ClientResponse.model_validate(
        {"rpcId": "r1", "result": {"ok": False, "error": {"code": "later"}}}
    )
    receipt = await hub.respond(response, via=Surface.WEB)
    assert receipt.reason == "bad-response"
    assert receipt.message == 'error code "later" is not understood; dismiss with code "cancelled"'
    assert hub.pending_count == 1


async def test_an_unknown_rpc_id_is_not_pending(hub: Hub) -> None:
    receipt = await hub.respond(dismissal("nope"), via=Surface.WEB)
    assert receipt.reason == "not-pending"
    assert receipt.message == 'no pending question has rpcId "nope"'


async def test_resubmitting_an_rpc_id_reattaches_to_the_same_request(hub: Hub) -> None:
    page = hub.subscribe()
    seen: list[StoredQuestion] = []
    await hub.submit("r1", "s", [PICK], watcher=seen.append)
    await next_frame(page)
    again, _ = await hub.submit("r1", "s", [PICK], watcher=seen.append)
    assert again.pending
    assert hub.pending_count == 1
    await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["a"]}), via=Surface.WEB)
    assert [record.state for record in seen] == ["answered", "answered"]
    assert (await next_frame(page))["payload"]["type"] == "question/resolved"
    with anyio.move_on_after(0.05):
        extra = await page.frames.receive()
        pytest.fail(f"a re-attachment was shown twice: {extra}")


async def test_reattaching_after_the_answer_returns_it_at_once(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        async with Hub(store) as hub:
            await hub.submit("r1", "s", [PICK])
            await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["b"]}), via=Surface.WEB)
        async with Hub(store) as restarted:  # forgets everything but the store
            seen: list[StoredQuestion] = []
            record, _ = await restarted.submit("r1", "s", [PICK], watcher=seen.append)
    assert record.state == "answered"
    assert record.answer is not None
    assert record.answer.answers[0].selected == ["b"]
    assert seen == []  # the settled record is the answer; the watcher is never called


async def test_an_rpc_id_naming_another_request_is_refused(hub: Hub) -> None:
    await hub.submit("r1", "s", [PICK])
    for session, questions in (("s", [MANY]), ("t", [PICK])):
        with pytest.raises(UserQuestionError) as caught:
            await hub.submit("r1", session, questions)
        assert caught.value.code == ErrorCode.BAD_REQUEST
        assert "already names another request" in str(caught.value)


async def test_request_checks_and_limits_apply_to_every_asker(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases: list[tuple[str, str, list[AskUserQuestionItem], str]] = [
        ("r", "s", [], ErrorCode.EMPTY_QUESTIONS),
        ("r", "s", [PICK, PICK], ErrorCode.BAD_QUESTION),
        (
            "r",
            "s",
            [PICK.model_copy(update={"id": f"q{i}"}) for i in range(33)],
            "TOO_MANY_QUESTIONS",
        ),
        ("r" * 257, "s", [PICK], ErrorCode.BAD_REQUEST),
        ("r", "", [PICK], ErrorCode.BAD_REQUEST),
    ]
    for rpc_id, session, questions, code in cases:
        with pytest.raises(UserQuestionError) as caught:
            await hub.submit(rpc_id, session, questions)
        assert caught.value.code == code
    monkeypatch.setattr(_hub, "MAX_PENDING", 2)
    await hub.submit("one", "s", [PICK])
    await hub.submit("two", "s", [PICK])
    with pytest.raises(UserQuestionError) as caught:
        await hub.submit("three", "s", [PICK])
    assert caught.value.code == ErrorCode.TOO_MANY_PENDING
    again, _ = await hub.submit("two", "s", [PICK])  # re-attaching is never refused
    assert again.pending


async def test_a_restarted_hub_shows_every_pending_request_again(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        for rpc_id in ("r1", "r2", "r3"):
            await hub.submit(rpc_id, "s", [PICK])
        await hub.respond(dismissal("r2"), via=Surface.WEB)
        before = hub.pending_frames()
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        assert hub.pending_frames() == before
        assert [json.loads(frame)["rpcId"] for frame in before] == ["r1", "r3"]


AWKWARD = 'quote " backslash \\ newline \n tab \t bell \x07 é 漢字 🙂 \u2028 </script>'


async def test_every_requested_frame_is_the_models_json_for_new_and_restored_requests(
    tmp_path: Path,
) -> None:
    # The hub writes these frames as text around the stored questions' JSON (`_frame_text`);
    # read back through the frame's model, each must be what the model itself would have made.
    question = AskUserQuestionItem(
        id=f"id {AWKWARD}",
        question=AWKWARD,
        header=AWKWARD,
        detail=f"# {AWKWARD}\n\n**bold** <b>raw</b>",
        options=[AskUserQuestionOption(label=AWKWARD, description=AWKWARD)],
    )
    asks = [
        (f"r1 {AWKWARD}", f"session {AWKWARD}", [question], Origin(client=AWKWARD, cwd="/w")),
        ("r2", "s", [PICK, MANY], None),
    ]
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        for rpc_id, session, questions, origin in asks:
            await hub.submit(rpc_id, session, questions, origin=origin)
        new = hub.pending_frames()
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        restored = hub.pending_frames()
        records = [await store.get(rpc_id) for rpc_id, *_ in asks]
    assert restored == new
    for frame, record in zip(new, records, strict=True):
        assert record is not None
        expected = QuestionRequestedFrame(
            rpc_id=record.rpc_id,
            payload=QuestionRequested(
                session_id=record.session_id,
                questions=list(record.questions),
            ),
            rendered=dict(record.rendered),
            asked_at=iso(record.asked_at),
            origin=record.origin,
            digest=record.digest,  # the card's, as stored: a page sends it back
        )
        assert record.digest is not None
        assert QuestionRequestedFrame.model_validate_json(frame) == expected
        assert json.loads(frame) == json.loads(expected.model_dump_json())
    html = json.loads(new[0])["rendered"][question.id]
    assert "&lt;b&gt;raw&lt;/b&gt;" in html
    assert "<b>" not in html


async def test_every_resolved_frame_is_the_models_json_whatever_the_ending(hub: Hub) -> None:
    page = hub.subscribe()
    rpc_ids = [f"r{index} {AWKWARD}" for index in range(4)]
    for rpc_id in rpc_ids:
        await hub.submit(rpc_id, f"session {AWKWARD}", [PICK])
    picked = {"id": "pick", "selected": ["a"]}
    await hub.respond(answer(rpc_ids[0], f"session {AWKWARD}", picked), via=Surface.WEB)
    await hub.respond(dismissal(rpc_ids[1]), via=Surface.WEB)
    await hub.withdraw(rpc_ids[2], via=Surface.ASKER)
    await hub.withdraw(rpc_ids[3], via=Surface.ASKER, reason="timed-out")
    frames = [await page.frames.receive() for _ in range(8)]
    resolved = [frame for frame in frames if '"question/resolved"' in frame]
    endings = [Outcome.ANSWERED, Outcome.DISMISSED, Outcome.WITHDRAWN, Outcome.TIMED_OUT]
    for frame, rpc_id, ending in zip(resolved, rpc_ids, endings, strict=True):
        expected = QuestionResolvedFrame(
            payload=QuestionResolved(
                session_id=f"session {AWKWARD}",
                question_rpc_id=rpc_id,
                outcome=resolved_outcome(ending),
                settled=ending,
            )
        )
        assert QuestionResolvedFrame.model_validate_json(frame) == expected
        assert json.loads(frame) == json.loads(expected.model_dump_json())


async def test_withdraw_settles_a_pending_request_and_reports_a_settled_one(hub: Hub) -> None:
    page = hub.subscribe()
    await hub.submit("r1", "s", [PICK])
    await next_frame(page)
    withdrawn = await hub.withdraw("r1", via=Surface.ASKER)
    assert withdrawn is not None
    assert withdrawn.state == "withdrawn"
    resolved = await next_frame(page)
    assert (resolved["payload"]["outcome"], resolved["payload"]["settled"]) == (
        "cancelled",
        "withdrawn",
    )
    assert (await hub.withdraw("r1", via=Surface.ASKER)) == withdrawn
    assert await hub.withdraw("unknown", via=Surface.ASKER) is None


async def test_a_page_that_falls_too_far_behind_is_dropped(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pages, "MAX_CLIENT_BACKLOG", 2)
    page = hub.subscribe()
    for rpc_id in ("r1", "r2", "r3"):
        await hub.submit(rpc_id, "s", [PICK])
    received = [json.loads(frame)["rpcId"] async for frame in page.frames]
    assert received == ["r1", "r2"]  # then the stream ends: the page reconnects and replays
    page.close()
    assert [json.loads(frame)["rpcId"] for frame in hub.subscribe().snapshot] == ["r1", "r2", "r3"]


# -- the in-process provider ----------------------------------------------------------------


async def page_answers(hub: Hub, respond: Callable[[str, str], Any]) -> None:
    """Act as a page: wait for the next request and respond to it."""
    page = hub.subscribe()
    try:
        frame = await next_frame(page)
        receipt = await hub.respond(
            respond(frame["rpcId"], frame["payload"]["sessionId"]), via=Surface.WEB
        )
        assert receipt.accepted
    finally:
        page.close()


async def test_the_host_provider_returns_the_answer_given_in_a_page(ctx: Context, hub: Hub) -> None:
    ctx.user_questions.register_provider(HostProvider(hub, "tests"))
    request = AskUserQuestionRequest(questions=[PICK, MANY])
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(
            page_answers,
            hub,
            lambda rpc_id, session: answer(
                rpc_id,
                session,
                {"id": "many", "selected": ["y", "x"]},
                {"id": "pick", "selected": ["a"]},
            ),
        )
        with anyio.fail_after(5):
            result = await ctx.user_questions.ask(request)
    assert result.model_dump(mode="json") == {
        "answers": [{"id": "pick", "selected": ["a"]}, {"id": "many", "selected": ["x", "y"]}]
    }


async def test_the_session_is_the_agents_id_when_an_agent_asks(ctx: Context, hub: Hub) -> None:
    agent = Agent(id="agent-7")
    ctx.agents.enter(agent)
    ctx.user_questions.register_provider(HostProvider(hub, "tests"))
    sessions: list[str] = []

    def respond(rpc_id: str, session: str) -> Any:
        sessions.append(session)
        return dismissal(rpc_id)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(page_answers, hub, respond)
        with pytest.raises(UserQuestionError):
            await ctx.user_questions.ask(AskUserQuestionRequest(questions=[PICK], agent=agent))
    assert sessions == ["agent-7"]


async def test_a_dismissal_fails_the_ask_with_ask_cancelled(ctx: Context, hub: Hub) -> None:
    ctx.user_questions.register_provider(HostProvider(hub))
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(page_answers, hub, lambda rpc_id, session: dismissal(rpc_id))
        with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
            await ctx.user_questions.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.ASK_CANCELLED


async def test_aborting_the_ask_withdraws_it_from_every_page(ctx: Context, hub: Hub) -> None:
    ctx.user_questions.register_provider(HostProvider(hub))
    pages = [hub.subscribe(), hub.subscribe()]
    controller = AbortController()

    async def abort_once_shown() -> None:
        await next_frame(pages[0])
        controller.abort()

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(abort_once_shown)
        with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
            await ctx.user_questions.ask(
                AskUserQuestionRequest(questions=[PICK], signal=controller.signal)
            )
    assert caught.value.code == ErrorCode.ASK_ABORTED
    await next_frame(pages[1])  # its question/requested
    for page in pages:
        resolved = await next_frame(page)
        assert resolved["payload"]["type"] == "question/resolved"
        assert resolved["payload"]["outcome"] == "cancelled"
    assert hub.pending_count == 0
    rpc_id = resolved["payload"]["questionRpcId"]
    stored = await hub.store.get(rpc_id)
    assert stored is not None
    assert stored.state == "withdrawn"
    assert stored.settled_via == "host"


async def test_a_timeout_is_recorded_as_timed_out_and_pages_see_it_so(
    ctx: Context, hub: Hub
) -> None:
    ctx.user_questions.register_provider(HostProvider(hub))
    page = hub.subscribe()
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
        await ctx.user_questions.ask(
            AskUserQuestionRequest(questions=[PICK], signal=AbortSignal.timeout(0.05))
        )
    assert caught.value.code == ErrorCode.ASK_TIMED_OUT
    rpc_id = (await next_frame(page))["rpcId"]
    resolved = (await next_frame(page))["payload"]
    assert (resolved["outcome"], resolved["settled"]) == ("cancelled", "timed-out")
    stored = await hub.store.get(rpc_id)
    assert stored is not None
    assert (stored.state, stored.settled_via) == ("timed-out", "host")


# -- wake-ups from a shared store -----------------------------------------------------------


class SharedStore:
    """A SQLite store standing in for one shared with other hosts: the test writes to it behind
    the hub's back, then fires the change listeners as LISTEN/NOTIFY would."""

    def __init__(self, path: Path) -> None:
        self.inner = SQLiteStore(path)
        self.url = self.inner.url
        self.listeners: list[ChangeListener] = []

    async def __aenter__(self) -> Self:
        await self.inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.inner.__aexit__(exc_type, exc, tb)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def notify(self, rpc_id: str | None) -> None:
        for listener in self.listeners:
            listener(rpc_id)


async def test_changes_made_by_another_host_reach_pages_and_askers(tmp_path: Path) -> None:
    async with SharedStore(tmp_path / "host.db") as store, Hub(store) as hub:
        page = hub.subscribe()
        seen: list[StoredQuestion] = []
        await hub.submit("mine", "s", [PICK], watcher=seen.append)
        await next_frame(page)

        # Another host answers our request: one notification names it.
        await store.inner.settle(
            "mine",
            Settlement(
                Outcome.ANSWERED,
                AskUserQuestionAnswer(
                    answers=[AskUserQuestionAnswerItem(id="pick", selected=["a"])]
                ),
                via=Surface.WEB,
            ),
        )
        store.notify("mine")
        resolved = await next_frame(page)
        assert resolved["payload"]["questionRpcId"] == "mine"
        assert [record.state for record in seen] == ["answered"]

        # Another host took a request while our notifications were lost: `None` re-reads all.
        await store.inner.submit(NewQuestion("theirs", "t", (MANY,), datetime.now(UTC)))
        store.notify(None)
        requested = await next_frame(page)
        assert requested["rpcId"] == "theirs"
        assert hub.pending_count == 1
    assert store.listeners == []


async def test_a_request_another_host_stores_while_this_one_starts_is_not_missed(
    tmp_path: Path,
) -> None:
    async with SharedStore(tmp_path / "host.db") as store:
        await store.inner.submit(NewQuestion("before", "t", (MANY,), datetime.now(UTC)))
        reads, read = 0, store.inner.pending

        async def pending_then_another_host_asks() -> list[StoredQuestion]:
            nonlocal reads
            reads += 1
            found = await read()
            if reads == 1:  # after the hub's first read, before it follows the store
                await store.inner.submit(NewQuestion("during", "t", (MANY,), datetime.now(UTC)))
                store.notify("during")
            return found

        store.inner.pending = pending_then_another_host_asks  # type: ignore[method-assign]
        async with Hub(store) as hub:
            page = hub.subscribe()
            shown = [json.loads(frame)["rpcId"] for frame in page.snapshot]
            while "during" not in shown:
                shown.append((await next_frame(page))["rpcId"])
            assert shown == ["before", "during"]
        assert reads == 1  # read once: the start does not read everything again


async def test_a_store_failing_while_following_changes_is_logged_and_survived(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SharedStore(tmp_path / "host.db") as store, Hub(store) as hub:
        page = hub.subscribe()
        real_get = store.inner.get
        failed = anyio.Event()

        async def unavailable(rpc_id: str) -> StoredQuestion | None:
            failed.set()
            raise UserQuestionError("the store is unavailable", ErrorCode.STORE_UNAVAILABLE)

        store.inner.get = unavailable  # type: ignore[method-assign]
        store.notify("whatever")
        with anyio.fail_after(5):
            await failed.wait()
        store.inner.get = real_get  # type: ignore[method-assign]
        await store.inner.submit(NewQuestion("later", "t", (MANY,), datetime.now(UTC)))
        store.notify(None)  # the store reconnected: the hub re-reads everything
        assert (await next_frame(page))["rpcId"] == "later"
    assert "could not re-read the store after a change" in caplog.text
