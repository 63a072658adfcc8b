"""The `Store` contract, run against every backend: what the hub relies on, the answer records,
history queries, retention, named tokens, and who may see what (roles, routes, audiences)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from tests.host.conftest import StoreFactory
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    ErrorCode,
    UserQuestionError,
)
from user_questions.host.stores import (
    HistoryQuery,
    NewQuestion,
    Role,
    Settlement,
    Store,
    StoredQuestion,
    TokenChange,
    TokenRecord,
)
from user_questions.outcomes import Outcome, RequestState, Surface
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


def new(
    rpc_id: str,
    session: str = "agent-1",
    questions: tuple[AskUserQuestionItem, ...] = QUESTIONS,
    asked_by: str | None = None,
    *,
    audience: tuple[str, ...] = (),
) -> NewQuestion:
    return NewQuestion(
        rpc_id,
        session,
        questions,
        datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        asked_by,
        audience=audience,
    )


async def test_an_open_store_answers_a_ping_and_has_had_no_trouble(store: Store) -> None:
    await store.ping()
    assert (store.stats.errors, store.stats.reconnects) == (0, 0)


async def test_submit_stores_the_request_exactly_as_given(store: Store) -> None:
    record, created = await store.submit(new("r1"))
    assert created
    assert record.rpc_id == "r1"
    assert record.session_id == "agent-1"
    assert record.questions == QUESTIONS
    assert record.asked_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert record.pending
    assert await store.get("r1") == record


async def test_every_record_carries_its_questions_as_the_json_the_store_keeps(
    store: Store,
) -> None:
    # The hub embeds this text in the pages' frames instead of serialising the questions again.
    submitted, _ = await store.submit(new("r1"))
    wire = [question.model_dump(mode="json") for question in QUESTIONS]
    for record in (submitted, await store.get("r1"), *(await store.pending())):
        assert record is not None
        assert record.questions_json is not None
        assert json.loads(record.questions_json) == wire


async def test_the_rendered_details_are_kept_with_the_request_in_question_order(
    store: Store,
) -> None:
    # PostgreSQL keeps a JSON object's keys shortest first: the questions' order is kept anyway.
    first = AskUserQuestionItem(id="bb", question="?", detail="b")
    second = AskUserQuestionItem(id="a", question="?", detail="a")
    rendered = {"bb": "<p>b</p>\n", "a": '<p><a href="https://x">a</a> ü 😀</p>\n'}
    asked = replace(new("r1", questions=(first, second)), rendered=rendered)
    record, _ = await store.submit(asked)
    assert record.rendered == rendered
    stored = await store.get("r1")
    assert stored is not None
    assert list(stored.rendered.items()) == list(rendered.items())
    settled = await store.settle("r1", Settlement(Outcome.WITHDRAWN, via=Surface.ASKER))
    assert settled is not None
    assert settled.rendered == rendered
    (listed,) = (await store.history(HistoryQuery())).records
    assert list(listed.rendered) == ["bb", "a"]


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
    await store.settle("c", Settlement(Outcome.DISMISSED, via=Surface.WEB))
    assert [record.rpc_id for record in await store.pending()] == ["a", "b"]


async def test_settle_records_the_answer_and_who_settled(store: Store) -> None:
    await store.submit(new("r1"))
    settled = await store.settle("r1", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB))
    assert settled is not None
    assert settled.state == "answered"
    assert settled.answer == ANSWER
    assert settled.settled_via == "web"
    assert settled.settled_at is not None
    assert await store.get("r1") == settled


async def test_settling_with_the_pending_record_in_hand_returns_the_record_as_stored(
    store: Store,
) -> None:
    pending, _ = await store.submit(new("r1", asked_by="alice"))
    await store.mark_shown(["r1"])
    settlement = Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB, by="bob", channel="ntfy")
    settled = await store.settle("r1", settlement, pending=pending)
    assert settled is not None
    assert settled.shown_at is not None  # read back: the caller's record did not have it
    assert await store.get("r1") == settled
    assert await store.settle("r1", settlement, pending=pending) is None


async def test_only_the_first_settlement_wins(store: Store) -> None:
    await store.submit(new("r1"))
    assert await store.settle("r1", Settlement(Outcome.DISMISSED, via=Surface.WEB)) is not None
    assert await store.settle("r1", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.API)) is None
    record = await store.get("r1")
    assert record is not None
    assert record.state == "dismissed"
    assert record.answer is None


async def test_of_many_concurrent_settlements_exactly_one_wins(store: Store) -> None:
    await store.submit(new("r1"))
    winners: list[str] = []

    async def settle(by: str) -> None:
        if await store.settle("r1", Settlement(Outcome.ANSWERED, ANSWER, by=by)) is not None:
            winners.append(by)

    async with anyio.create_task_group() as task_group:
        for index in range(8):
            task_group.start_soon(settle, f"client-{index}")
    assert len(winners) == 1
    record = await store.get("r1")
    assert record is not None
    assert record.settled_by == winners[0]


async def test_settling_an_unknown_request_does_nothing(store: Store) -> None:
    assert await store.settle("nope", Settlement(Outcome.WITHDRAWN, via=Surface.ASKER)) is None
    assert await store.get("nope") is None


async def test_reading_a_missing_setting_stores_nothing(store: Store) -> None:
    assert await store.setting("token") is None
    assert await store.setting("token") is None
    assert await store.ensure_setting("token", "first") == "first"


async def test_settings_keep_the_first_default_until_set(store: Store) -> None:
    assert await store.ensure_setting("token", "first") == "first"
    assert await store.setting("token") == "first"
    assert await store.ensure_setting("token", "second") == "first"
    await store.set_setting("token", "third")
    assert await store.setting("token") == "third"
    assert await store.ensure_setting("token", "fourth") == "third"


async def test_settings_under_a_prefix_are_read_and_deleted_one_by_one(store: Store) -> None:
    await store.set_setting("a2a-push:t1:a", "one")
    await store.set_setting("a2a-push:t1:b", "two")
    await store.set_setting("a2a-push:t10:a", "other task")
    await store.set_setting("a2a-push:t1", "no separator")
    assert await store.settings_under("a2a-push:t1:") == {
        "a2a-push:t1:a": "one",
        "a2a-push:t1:b": "two",
    }
    await store.delete_setting("a2a-push:t1:a")
    await store.delete_setting("a2a-push:t1:a")  # gone already: nothing happens
    assert await store.settings_under("a2a-push:t1:") == {"a2a-push:t1:b": "two"}
    assert await store.setting("a2a-push:t10:a") == "other task"
    assert await store.settings_under("%") == {}  # a prefix is text, never a pattern


async def test_concurrent_defaults_for_one_setting_all_get_the_first_stored(store: Store) -> None:
    values: list[str] = []

    async def read(default: str) -> None:
        values.append(await store.ensure_setting("token", default))

    async with anyio.create_task_group() as task_group:
        for index in range(8):
            task_group.start_soon(read, f"default-{index}")
    assert len(set(values)) == 1
    assert values[0] in {f"default-{index}" for index in range(8)}
    assert await store.ensure_setting("token", "later") == values[0]


async def test_everything_survives_closing_and_reopening(make_store: StoreFactory) -> None:
    async with make_store() as store:
        await store.submit(new("pending-one"))
        await store.submit(new("answered-one"))
        await store.settle("answered-one", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB))
        await store.set_setting("token", "kept")
    async with make_store() as store:
        assert [record.rpc_id for record in await store.pending()] == ["pending-one"]
        answered = await store.get("answered-one")
        assert answered is not None
        assert answered.answer == ANSWER
        assert await store.setting("token") == "kept"


async def test_on_change_returns_a_remover_that_can_be_called_twice(
    make_store: StoreFactory, tells_changes: bool
) -> None:
    removed: list[str | None] = []
    async with make_store() as host, make_store(host=False) as command:
        remove = host.on_change(removed.append)
        remove()
        remove()
        witnessed = anyio.Event()
        host.on_change(lambda rpc_id: witnessed.set() if rpc_id == "r1" else None)
        await command.submit(new("r1"))  # a write this host did not make
        if tells_changes:
            with anyio.fail_after(5):
                await witnessed.wait()  # so the removed listener would have been told too
    assert removed == []


# -- answer records ---------------------------------------------------------------------------


async def settled(
    store: Store,
    rpc_id: str,
    *,
    session: str = "agent-1",
    outcome: Outcome = Outcome.ANSWERED,
    by: str | None = "alice",
    questions: tuple[AskUserQuestionItem, ...] = QUESTIONS,
    answer: AskUserQuestionAnswer | None = ANSWER,
    audience: tuple[str, ...] = (),
) -> StoredQuestion:
    """Submit and settle a request; its settled record."""
    await store.submit(new(rpc_id, session, questions, audience=audience))
    record = await store.settle(
        rpc_id,
        Settlement(
            outcome, answer if outcome == Outcome.ANSWERED else None, via=Surface.WEB, by=by
        ),
    )
    assert record is not None
    return record


async def history(store: Store, **query: object) -> list[str]:
    """The rpcIds of one history page for `query`, newest settled first."""
    page = await store.history(HistoryQuery(**query))  # type: ignore[arg-type]
    return [record.rpc_id for record in page.records]


async def test_a_settlement_records_who_asked_who_settled_and_through_which_surface(
    store: Store,
) -> None:
    created, _ = await store.submit(new("r1", asked_by="ci-bot"))
    assert created.asked_by == "ci-bot"
    record = await store.settle(
        "r1", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.TERMINAL, by="alice")
    )
    assert record is not None
    assert (record.asked_by, record.settled_by, record.settled_via) == (
        "ci-bot",
        "alice",
        "terminal",
    )
    assert await store.get("r1") == record


async def test_a_timed_out_withdrawal_is_kept_as_its_own_outcome(store: Store) -> None:
    record = await settled(store, "r1", outcome=Outcome.TIMED_OUT, by="ci-bot")
    assert record.state == RequestState.TIMED_OUT
    assert record.answer is None
    assert await history(store, outcome=Outcome.TIMED_OUT) == ["r1"]
    assert await history(store, outcome=Outcome.WITHDRAWN) == []


async def test_shown_keeps_the_first_time_a_request_was_shown(store: Store) -> None:
    await store.submit(new("r1"))
    await store.submit(new("r2"))
    await store.mark_shown(["r1", "never-asked"])
    first = await store.get("r1")
    assert first is not None
    assert first.shown_at is not None
    assert (await store.get("r2") or first).shown_at is None
    await store.mark_shown(["r1", "r2"])
    again = await store.get("r1")
    assert again is not None
    assert again.shown_at == first.shown_at
    assert (await store.get("r2") or first).shown_at is not None


async def test_a_request_shown_as_it_is_asked_keeps_that_time(store: Store) -> None:
    shown = datetime(2025, 1, 2, 3, 4, 6, 123456, tzinfo=UTC)
    asked = replace(new("r1"), shown_at=shown)
    record, _ = await store.submit(asked)
    assert record.shown_at == shown
    await store.mark_shown(["r1"])
    assert await store.get("r1") == record


async def test_history_lists_only_settled_requests_newest_settled_first(store: Store) -> None:
    await store.submit(new("pending"))
    for rpc_id in ("c", "a", "d"):
        await settled(store, rpc_id)
    page = await store.history(HistoryQuery())
    assert [record.rpc_id for record in page.records] == ["d", "a", "c"]
    assert page.next is None
    assert page.records[0].answer == ANSWER
    assert page.records[0].settled_by == "alice"


async def test_history_filters_by_session_outcome_and_person(store: Store) -> None:
    await settled(store, "s1-answered", session="s1", by="alice")
    await settled(store, "s1-dismissed", session="s1", outcome=Outcome.DISMISSED, by="bob")
    await settled(store, "s2-answered", session="s2", by="bob")
    await settled(store, "s2-withdrawn", session="s2", outcome=Outcome.WITHDRAWN, by=None)
    assert await history(store, session="s1") == ["s1-dismissed", "s1-answered"]
    assert await history(store, outcome=Outcome.ANSWERED) == ["s2-answered", "s1-answered"]
    assert await history(store, by="bob") == ["s2-answered", "s1-dismissed"]
    assert await history(store, session="s2", outcome=Outcome.ANSWERED, by="bob") == ["s2-answered"]
    assert await history(store, session="nobody") == []


async def test_history_search_needs_every_word_in_the_text_or_the_typed_answer(
    store: Store,
) -> None:
    await settled(store, "databases")  # header-less, detail "We need **durability**."
    sizes = (
        AskUserQuestionItem(
            id="size",
            header="Größe",
            question="How big?",
            options=[AskUserQuestionOption(label="S", description="fits 100% of cases")],
        ),
    )
    await settled(store, "sizes", questions=sizes, outcome=Outcome.DISMISSED)
    assert await history(store, terms=("durability",)) == ["databases"]
    assert await history(store, terms=("postgres",)) == ["databases"]  # an option label
    assert await history(store, terms=("inbox",)) == ["databases"]  # the typed answer
    assert await history(store, terms=("sqlite", "inbox")) == ["databases"]
    assert await history(store, terms=("sqlite", "nowhere")) == []
    assert await history(store, terms=("grösse",)) == ["sizes"]  # casefolded: ß is ss
    assert await history(store, terms=("100%",)) == ["sizes"]  # wildcards are plain text
    assert await history(store, terms=("%",)) == ["sizes"]
    assert await history(store, terms=("_",)) == []
    assert await history(store, terms=("label",)) == []  # the JSON around the words is not text
    assert await history(store, terms=("which",)) == ["databases"]


async def test_history_search_finds_a_withdrawal_by_the_note_its_asker_gave(store: Store) -> None:
    await store.submit(new("editor-answered", "agent-1", QUESTIONS))
    note = "Answered in the editor: Zed chose Approve"
    await store.settle(
        "editor-answered", Settlement(Outcome.WITHDRAWN, via=Surface.ASKER, note=note)
    )
    await settled(store, "answered-here")
    assert await history(store, terms=("zed",)) == ["editor-answered"]
    assert await history(store, terms=("editor", "approve")) == ["editor-answered"]


async def test_history_finds_what_an_answer_says_and_lists_the_changed_calls(store: Store) -> None:
    """A note, a form's value and a changed call are searched like typed text; `edited` lists
    the answers that changed a call, keeping the call as asked and its change."""
    form = AskUserQuestionItem.model_validate(
        {
            "id": "deploy",
            "question": "Deploy how?",
            "schema": {
                "type": "object",
                "properties": {"replicas": {"type": "integer", "title": "Replica count"}},
            },
        }
    )
    await settled(
        store,
        "formed",
        questions=(form,),
        answer=AskUserQuestionAnswer.model_validate(
            {"answers": [{"id": "deploy", "selected": [], "value": {"replicas": 7}}]}
        ),
    )
    noted = AskUserQuestionAnswer.model_validate(
        {
            "answers": [
                {"id": "db", "selected": ["SQLite"], "note": "keep the lockfile"},
                {"id": "name", "selected": []},
            ]
        }
    )
    await settled(store, "noted", answer=noted)
    card = (
        AskUserQuestionItem(
            id="approval", question="Allow Bash?", options=[AskUserQuestionOption(label="Allow")]
        ),
    )
    changed = AskUserQuestionAnswer.model_validate(
        {
            "answers": [
                {"id": "approval", "selected": ["Allow"], "edited": {"command": "rm -rf build/tmp"}}
            ]
        }
    )
    await settled(store, "changed", questions=card, answer=changed)
    assert await history(store, terms=("lockfile",)) == ["noted"]
    assert await history(store, terms=("replica", "7")) == ["formed"]
    assert await history(store, terms=("build/tmp",)) == ["changed"]
    assert await history(store, edited=True) == ["changed"]
    assert await history(store, edited=True, terms=("lockfile",)) == []
    assert set(await history(store)) == {"formed", "noted", "changed"}


async def test_history_search_takes_backslashes_and_wildcards_literally(store: Store) -> None:
    for rpc_id, text in (
        ("windows", "Clean c:\\temp first?"),
        ("colon", "Clean c:temp first?"),  # what `\t` would match if it escaped the t
        ("fifty", "Give 50% off?"),
        ("five-hundred", "Raise the limit to 500?"),
        ("snake", "Rename a_b?"),
        ("plain", "Rename axb?"),
    ):
        await settled(store, rpc_id, questions=(AskUserQuestionItem(id="q", question=text),))
    assert await history(store, terms=("c:\\temp",)) == ["windows"]
    assert await history(store, terms=("\\",)) == ["windows"]
    assert await history(store, terms=("c:\\\\temp",)) == []  # two backslashes are two
    assert await history(store, terms=("50%",)) == ["fifty"]
    assert await history(store, terms=("a_b",)) == ["snake"]
    assert await history(store, terms=("\\%",)) == []
    assert await history(store, terms=("\\_",)) == []


async def test_history_pages_follow_a_cursor_that_later_settlements_never_shift(
    store: Store,
) -> None:
    for index in range(7):
        await settled(store, f"r{index}")
    first = await store.history(HistoryQuery(limit=3))
    assert [record.rpc_id for record in first.records] == ["r6", "r5", "r4"]
    assert first.next is not None
    await settled(store, "later")  # settles between two page reads
    second = await store.history(HistoryQuery(before=first.next, limit=3))
    assert [record.rpc_id for record in second.records] == ["r3", "r2", "r1"]
    assert second.next is not None
    third = await store.history(HistoryQuery(before=second.next, limit=3))
    assert [record.rpc_id for record in third.records] == ["r0"]
    assert third.next is None
    assert await history(store, limit=1) == ["later"]


async def test_a_cursor_the_store_did_not_make_is_refused(store: Store) -> None:
    forged = base64.urlsafe_b64encode(b"yesterday|1").decode()
    for cursor in ("not a cursor", forged, ""):
        with pytest.raises(UserQuestionError) as caught:
            await store.history(HistoryQuery(before=cursor or "=="))
        assert caught.value.code == ErrorCode.BAD_REQUEST
        assert "invalid history cursor" in str(caught.value)


async def test_history_with_pending_lists_every_request_newest_change_first(store: Store) -> None:
    await store.submit(new("waiting-1", "a2a:ctx", asked_by="ci-bot"))
    await settled(store, "answered", session="a2a:ctx")
    await store.submit(new("waiting-2", "a2a:other", asked_by="ci-bot"))
    await settled(store, "dismissed", session="a2a:ctx", outcome=Outcome.DISMISSED)
    assert await history(store, pending=True) == ["dismissed", "answered", "waiting-2", "waiting-1"]
    assert await history(store) == ["dismissed", "answered"]  # without: settled only
    assert await history(store, pending=True, outcome=RequestState.PENDING) == [
        "waiting-2",
        "waiting-1",
    ]
    assert await history(store, pending=True, outcome=Outcome.DISMISSED) == ["dismissed"]


async def test_history_filters_by_asker_and_session_prefix_taking_wildcards_literally(
    store: Store,
) -> None:
    await store.submit(new("mine", "a2a:one", asked_by="ci-bot"))
    await store.submit(new("theirs", "a2a:two", asked_by="other-bot"))
    await store.submit(new("not-a2a", "agent-1", asked_by="ci-bot"))
    await store.submit(new("lookalike", "a2ax:three", asked_by="ci-bot"))
    await store.submit(new("underscore", "a_b:four", asked_by="ci-bot"))
    assert await history(store, pending=True, asked_by="ci-bot", session_prefix="a2a:") == ["mine"]
    assert await history(store, pending=True, session_prefix="a2a:") == ["theirs", "mine"]
    assert await history(store, pending=True, session_prefix="a_b:") == ["underscore"]
    assert await history(store, pending=True, session_prefix="a%") == []


async def test_history_keeps_requests_changed_at_or_after_an_instant(store: Store) -> None:
    await store.submit(new("asked-long-ago"))
    first = await settled(store, "first")
    assert first.settled_at is not None
    await settled(store, "second")
    since = await history(store, pending=True, changed_after=first.settled_at)
    assert since == ["second", "first"]
    later = first.settled_at + timedelta(microseconds=1)
    assert await history(store, pending=True, changed_after=later) == ["second"]
    assert await history(store, changed_after=later) == ["second"]
    old = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert await history(store, pending=True, changed_after=old) == [
        "second",
        "first",
        "asked-long-ago",
    ]


async def test_history_counts_every_match_on_every_page_when_asked(store: Store) -> None:
    for index in range(5):
        await store.submit(new(f"p{index}", "a2a:ctx", asked_by="ci-bot"))
    await settled(store, "elsewhere")
    query = HistoryQuery(pending=True, session_prefix="a2a:", count=True, limit=2)
    first = await store.history(query)
    assert [record.rpc_id for record in first.records] == ["p4", "p3"]
    assert first.total == 5
    second = await store.history(replace(query, before=first.next))
    assert [record.rpc_id for record in second.records] == ["p2", "p1"]
    assert second.total == 5
    assert (await store.history(HistoryQuery(limit=2))).total is None


async def test_pending_pages_follow_their_cursor_as_requests_settle(store: Store) -> None:
    for index in range(5):
        await store.submit(new(f"p{index}"))
    first = await store.history(HistoryQuery(pending=True, limit=2))
    assert [record.rpc_id for record in first.records] == ["p4", "p3"]
    await settled(store, "later")  # a new change: above the cursor, never repeated below it
    await store.settle("p4", Settlement(Outcome.DISMISSED, None, via=Surface.WEB, by="bob"))
    rest = await store.history(HistoryQuery(pending=True, before=first.next, limit=10))
    assert [record.rpc_id for record in rest.records] == ["p2", "p1", "p0"]
    assert rest.next is None
    assert await history(store, pending=True, limit=2) == ["p4", "later"]


async def test_purge_deletes_only_requests_settled_before_the_cutoff_never_pending_ones(
    store: Store,
) -> None:
    await store.submit(new("pending-and-old"))
    old = await settled(store, "old")
    assert old.settled_at is not None
    cutoff = old.settled_at + timedelta(microseconds=1)
    recent = await settled(store, "recent")
    assert recent.settled_at is not None
    assert recent.settled_at > cutoff
    assert await store.purge(cutoff) == 1
    assert await store.get("old") is None
    assert await store.get("recent") == recent
    assert await store.purge(datetime.now(UTC) + timedelta(days=1)) == 1
    assert [record.rpc_id for record in await store.pending()] == ["pending-and-old"]
    assert await history(store) == []


# -- people -----------------------------------------------------------------------------------

CREATED = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


async def test_tokens_are_added_listed_and_revoked_and_a_revoked_name_can_be_reused(
    store: Store,
) -> None:
    await store.add_token(TokenRecord("bob", "b" * 64, CREATED))
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    assert await store.tokens() == [
        TokenRecord("alice", "a" * 64, CREATED),
        TokenRecord("bob", "b" * 64, CREATED),
    ]
    revoked = await store.revoke_token("alice")
    assert revoked is not None
    assert revoked.revoked_at is not None
    assert not revoked.active
    assert await store.revoke_token("alice") is None
    assert await store.revoke_token("nobody") is None
    assert (await store.tokens())[0] == revoked
    await store.add_token(TokenRecord("alice", "c" * 64, CREATED))  # a new token for alice
    assert (await store.tokens())[0] == TokenRecord("alice", "c" * 64, CREATED)


async def test_a_second_active_token_of_the_same_name_is_refused(store: Store) -> None:
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    with pytest.raises(UserQuestionError) as caught:
        await store.add_token(TokenRecord("alice", "c" * 64, CREATED))
    assert caught.value.code == ErrorCode.TOKEN_EXISTS
    assert [token.token_hash for token in await store.tokens()] == ["a" * 64]


async def test_touching_a_token_records_its_last_use(store: Store) -> None:
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    before = datetime.now(UTC)
    await store.touch_token("alice")
    (token,) = await store.tokens()
    assert token.last_used_at is not None
    assert token.last_used_at >= before - timedelta(seconds=1)


async def test_a_store_tells_its_own_tokens_listeners_of_its_changes(store: Store) -> None:
    heard: list[None] = []
    remove = store.on_tokens_change(lambda: heard.append(None))
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    await store.change_token("alice", TokenChange(role=Role.ADMIN))
    await store.revoke_token("alice")
    await store.revoke_token("alice")  # nothing changed
    await store.change_token("alice", TokenChange(role=Role.PERSON))
    assert len(heard) == 3
    remove()
    remove()
    await store.add_token(TokenRecord("bob", "b" * 64, CREATED))
    assert len(heard) == 3


async def test_a_hosts_store_hears_of_token_changes_made_by_a_command_beside_it(
    make_store: StoreFactory,
) -> None:
    async with make_store() as host, make_store(host=False) as command:
        changed = anyio.Event()

        def heard() -> None:
            changed.set()

        host.on_tokens_change(heard)
        await command.add_token(TokenRecord("alice", "a" * 64, CREATED))
        with anyio.fail_after(5):
            await changed.wait()
        assert [token.name for token in await host.tokens() if token.active] == ["alice"]
        changed = anyio.Event()
        await command.change_token("alice", TokenChange(role=Role.ADMIN, groups=["oncall"]))
        with anyio.fail_after(5):
            await changed.wait()
        (alice,) = await host.tokens()
        assert (alice.role, alice.groups) == (Role.ADMIN, ("oncall",))
        changed = anyio.Event()
        await command.revoke_token("alice")
        with anyio.fail_after(5):
            await changed.wait()
        assert [token.name for token in await host.tokens() if token.active] == []


async def test_a_tokens_role_groups_routes_and_notification_urls_are_kept(store: Store) -> None:
    ci = TokenRecord("ci", "c" * 64, CREATED, role=Role.ASKER, routes=("alice", "@oncall"))
    alice = TokenRecord(
        "alice",
        "a" * 64,
        CREATED,
        role=Role.ADMIN,
        groups=("oncall", "équipe"),
        notify=("ntfy://ntfy.sh/alice", "mailto://alice@example.com"),
    )
    for token in (ci, alice):
        await store.add_token(token)
    assert await store.tokens() == [alice, ci]
    revoked = await store.revoke_token("ci")
    assert revoked is not None
    assert (revoked.role, revoked.routes) == (Role.ASKER, ("alice", "@oncall"))
    again = TokenRecord("ci", "d" * 64, CREATED, role=Role.PERSON, groups=("db",))
    await store.add_token(again)  # a new token for the name: nothing of the revoked one is kept
    assert await store.tokens() == [alice, again]


async def test_a_token_made_without_a_role_is_a_person(store: Store) -> None:
    await store.add_token(TokenRecord("bob", "b" * 64, CREATED))
    (bob,) = await store.tokens()
    assert (bob.role, bob.groups, bob.routes, bob.notify) == (Role.PERSON, (), (), ())


async def test_change_token_replaces_the_fields_given_and_keeps_the_others(store: Store) -> None:
    token = TokenRecord("alice", "a" * 64, CREATED, groups=("oncall",))
    await store.add_token(token)

    async def changed(expected: TokenRecord, returned: TokenRecord | None) -> TokenRecord:
        assert returned == expected
        assert await store.tokens() == [expected]
        return expected

    token = await changed(
        replace(token, role=Role.ADMIN),
        await store.change_token("alice", TokenChange(role=Role.ADMIN)),
    )
    token = await changed(
        replace(token, groups=("db", "oncall")),
        await store.change_token("alice", TokenChange(groups=["db", "oncall"])),
    )
    token = await changed(
        replace(token, routes=("@db",)),
        await store.change_token("alice", TokenChange(routes=("@db",))),
    )
    token = await changed(
        replace(token, notify=("ntfy://ntfy.sh/alice",)),
        await store.change_token("alice", TokenChange(notify=["ntfy://ntfy.sh/alice"])),
    )
    token = await changed(  # several at once; an empty list empties the field
        replace(token, role=Role.ASKER, groups=()),
        await store.change_token("alice", TokenChange(role=Role.ASKER, groups=[])),
    )
    await changed(
        token, await store.change_token("alice", TokenChange())
    )  # nothing given: nothing changes


async def test_change_token_refuses_an_unknown_or_revoked_name(store: Store) -> None:
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    revoked = await store.revoke_token("alice")
    assert await store.change_token("alice", TokenChange(role=Role.ADMIN)) is None
    assert await store.change_token("nobody", TokenChange(groups=["oncall"])) is None
    assert await store.tokens() == [revoked]


# -- who sees what ----------------------------------------------------------------------------


async def test_a_requests_audience_is_kept_through_every_read(store: Store) -> None:
    audience = ("alice", "@oncall", "@équipe")
    submitted, _ = await store.submit(new("routed", audience=audience))
    await store.submit(new("everyone"))
    held, _ = await store.submit(new("held", audience=("@db",)))
    again, created = await store.submit(new("routed", audience=("bob",)))
    assert not created
    assert submitted.audience == again.audience == audience
    stored = await store.get("routed")
    assert stored is not None
    assert stored.audience == audience
    pending = {record.rpc_id: record.audience for record in await store.pending()}
    assert pending == {"routed": audience, "everyone": (), "held": ("@db",)}
    dismissal = Settlement(Outcome.DISMISSED, via=Surface.WEB)
    for rpc_id in ("routed", "everyone"):
        by_row = await store.settle(rpc_id, dismissal)  # read back from the row
        assert by_row is not None
        assert by_row.audience == pending[rpc_id]
    assert await store.settle("held", dismissal, pending=held) == await store.get("held")
    listed = {
        record.rpc_id: record.audience for record in (await store.history(HistoryQuery())).records
    }
    assert listed == pending


async def test_history_seen_by_a_person_lists_what_is_routed_to_them_or_to_everyone(
    store: Store,
) -> None:
    for rpc_id, audience in (
        ("everyone", ()),
        ("alice", ("alice",)),
        ("oncall", ("@oncall",)),
        ("bob", ("bob",)),
        ("db-or-carol", ("@db", "carol")),
        ("group-alice", ("@alice",)),  # a group is not a person of the same name
        ("alicia", ("alicia",)),  # nor does a name match part of another
        ("équipe", ("@équipe",)),
    ):
        await settled(store, rpc_id, audience=audience)
    alice = ("alice", "@oncall")
    assert await history(store, seen_by=alice) == ["oncall", "alice", "everyone"]
    assert await history(store, seen_by=("carol",)) == ["db-or-carol", "everyone"]
    assert await history(store, seen_by=("dave", "@db")) == ["db-or-carol", "everyone"]
    assert await history(store, seen_by=("@équipe",)) == ["équipe", "everyone"]
    assert await history(store, seen_by=()) == ["everyone"]  # nobody named: only the unrouted
    assert len(await history(store)) == 8  # no `seen_by`: an admin's view, everything


async def test_history_seen_by_combines_with_the_other_filters_and_pages(store: Store) -> None:
    alice = ("alice", "@oncall")
    for index in range(4):
        await settled(store, f"mine-{index}", audience=("@oncall",) if index % 2 else ())
        await settled(store, f"theirs-{index}", audience=("bob",))
        await settled(store, f"dismissed-{index}", outcome=Outcome.DISMISSED, audience=("alice",))
    first = await store.history(HistoryQuery(seen_by=alice, outcome=Outcome.ANSWERED, limit=3))
    assert [record.rpc_id for record in first.records] == ["mine-3", "mine-2", "mine-1"]
    assert first.next is not None
    second = await store.history(
        HistoryQuery(seen_by=alice, outcome=Outcome.ANSWERED, limit=3, before=first.next)
    )
    assert [record.rpc_id for record in second.records] == ["mine-0"]
    assert second.next is None
    assert await history(store, seen_by=alice, terms=("inbox",)) == [  # the typed answer
        "mine-3",
        "mine-2",
        "mine-1",
        "mine-0",
    ]
    assert await history(store, seen_by=("bob",), outcome=Outcome.DISMISSED) == []
