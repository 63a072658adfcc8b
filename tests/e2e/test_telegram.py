"""Answering in Telegram, end to end: a real `uq serve --telegram` polling a fake Bot API on
loopback (`tests/telegram_fake.py`), people paired with `uq chat pair`, agents asking through the
host, users tapping buttons and typing replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.sync.client import connect as connect_page

from tests.e2e.host_process import HostProcess, answer_body, free_port
from tests.e2e.test_host_cli import uq
from tests.e2e.test_people_history import history, wait_until_accepted
from tests.telegram_fake import TOKEN, USERNAME, FakeBotApi, Message, fake_bot_api
from user_questions import UserQuestionError, connect
from user_questions.approvals import approval_question

OWNER_USER = 1001
STRANGER = 666
ALICE, BOB = 2002, 3003


class Ask:
    """One ask through the host's agents' URL, in a thread; `result()` is its answer's items
    or its error code."""

    def __init__(
        self, url: str, questions: list[dict[str, Any]], session: str | None = None
    ) -> None:
        self._result: Any = None
        self._thread = threading.Thread(target=anyio.run, args=(self._ask, url, questions, session))
        self._thread.start()

    async def _ask(self, url: str, questions: list[dict[str, Any]], session: str | None) -> None:
        async with connect(url, session=session) as asker:
            try:
                answer = await asker.ask(questions)
                self._result = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
            except UserQuestionError as error:
                self._result = str(error.code)

    def result(self, seconds: float = 20.0) -> Any:
        self._thread.join(seconds)
        assert not self._thread.is_alive(), "the ask did not end"
        return self._result


@pytest.fixture
def fake() -> Iterator[FakeBotApi]:
    with fake_bot_api() as api:
        yield api


def telegram_host(fake: FakeBotApi, db: Path | str, stack: ExitStack, port: int = 0) -> HostProcess:
    host = HostProcess(
        None,
        port=port,
        args=("--store", str(db), "--telegram-api", fake.url),
        env={"UQ_TELEGRAM_TOKEN": TOKEN},
    )
    host.start()
    stack.callback(host.stop)
    return host


@pytest.fixture
def host(fake: FakeBotApi, tmp_path: Path) -> Iterator[HostProcess]:
    with ExitStack() as stack:
        host = telegram_host(fake, tmp_path / "host.db", stack)
        fake.wait(lambda: "getUpdates" in fake.calls)  # it has learned its username by now
        yield host


def pair(
    fake: FakeBotApi,
    db: Path | str,
    person: str = "owner",
    user: int = OWNER_USER,
    said: str = "Paired",
) -> None:
    made = uq("chat", "pair", "telegram", person, "--store", str(db))
    assert made.returncode == 0, made.stderr
    code, link = made.stdout.split()
    assert link == f"https://t.me/{USERNAME}?start={code}"
    fake.send(user, f"/start {code}")
    fake.wait(lambda: any(said in m.shown for m in fake.messages_in(user)))


def request_message(fake: FakeBotApi, user: int = OWNER_USER, count: int = 1) -> Message:
    """The latest of `count` request messages (with buttons) sent to `user`."""
    found = fake.wait(
        lambda: len(sent := [m for m in fake.messages_in(user) if m.buttons]) >= count and sent
    )
    return found[count - 1]  # type: ignore[no-any-return]


NPM = {"id": "pkg", "selected": ["npm"]}
"""`PICK` answered."""
PICK = {
    "id": "pkg",
    "header": "Setup <b>",
    "question": "Which package manager? <script>alert(1)</script> & more",
    "options": [
        {"label": "pnpm (Recommended)", "description": "Fast, <strict>"},
        {"label": "npm"},
    ],
}


def test_a_paired_person_answers_with_a_tap_and_a_stranger_changes_nothing(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)
    assert "Which package manager? <script>alert(1)</script> & more" in message.shown
    assert "Setup <b>" in message.shown
    assert "Fast, <strict>" in message.shown
    assert "recommended" in message.shown
    assert [b["text"] for b in message.buttons][:2] == ["pnpm (Recommended)", "npm"]
    old_buttons = list(message.buttons)

    refused = fake.tap(STRANGER, message, "npm")
    assert fake.answer_to(refused)["text"] == "You are not paired to answer this question."
    assert fake.answer_to(refused)["show_alert"] is True
    assert message.edits == 0
    assert len(host.pending()) == 1

    fake.tap(OWNER_USER, message, "pnpm")
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["pnpm (Recommended)"]}]}
    fake.wait(lambda: message.edits == 1)
    assert message.buttons == []  # the same message, edited: no buttons remain
    assert "Answered by owner via telegram" in message.shown
    (item,) = history(host)
    assert (item["via"], item["by"]) == ("telegram", "owner")

    message.markup = {"inline_keyboard": [old_buttons]}  # a tap on the keyboard it had
    late = fake.tap(OWNER_USER, message, "npm")
    assert "owner" in fake.answer_to(late)["text"]
    assert len(history(host)) == 1


def test_identical_asks_of_one_agent_are_one_message_and_one_tap_answers_them_all(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    asks = [Ask(host.asker_url, [PICK], session="loop")]
    message = request_message(fake)
    with connect_page(
        host.base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": host.base, "Cookie": f"uq_token={host.token}"},
    ) as page:  # following the card's count as a page does, from before the other two asks
        asks += [Ask(host.asker_url, [PICK], session="loop") for _ in range(2)]
        while True:
            payload = json.loads(page.recv(timeout=20))["payload"]
            if payload["type"] == "question/group" and payload["count"] == 3:
                break
    fake.tap(OWNER_USER, message, "npm")
    for ask in asks:
        assert ask.result() == {"answers": [NPM]}
    assert len([m for m in fake.messages_in(OWNER_USER) if m.buttons or m.edits]) == 1
    assert len(history(host)) == 3


def test_several_questions_with_toggles_and_other_then_a_summary_and_send(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    questions: list[dict[str, Any]] = [
        {"id": "langs", "question": "Which languages?", "multiSelect": True,
         "options": [{"label": "Python"}, {"label": "Go"}, {"label": "Rust"}]},
        {"id": "name", "question": "Project name?", "options": [{"label": "uq"}]},
    ]  # fmt: skip
    ask = Ask(host.asker_url, questions)
    message = request_message(fake)
    assert any(b["text"] == "Done" for b in message.buttons)
    for label, edits in (("Python", 1), ("Rust", 2)):
        fake.tap(OWNER_USER, message, label)
        fake.wait(lambda edits=edits: message.edits == edits)
    assert [b["text"] for b in message.buttons][:3] == ["☑ Python", "☐ Go", "☑ Rust"]
    fake.tap(OWNER_USER, message, "Done")
    fake.wait(lambda: "Project name?" in message.shown)
    fake.tap(OWNER_USER, message, "Other")
    prompt = fake.wait(
        lambda: [m for m in fake.messages_in(OWNER_USER) if "Type your answer" in m.shown]
    )[0]
    assert prompt.markup == {"force_reply": True, "input_field_placeholder": "Your answer"}
    fake.send(OWNER_USER, "user-questions")
    fake.wait(lambda: "Your answers" in message.shown)
    assert "Python, Rust" in message.shown
    assert "user-questions" in message.shown
    fake.tap(OWNER_USER, message, "Send")
    assert ask.result() == {
        "answers": [
            {"id": "langs", "selected": ["Python", "Rust"]},
            {"id": "name", "selected": [], "custom": "user-questions"},
        ]
    }


def test_a_long_plan_goes_whole_as_a_document_and_feedback_is_typed(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    plan = "# Plan\n\n" + "".join(f"{n}. step <{n}> of the plan\n" for n in range(400))
    review = {
        "id": "plan", "question": "Approve this plan?", "detail": plan,
        "options": [{"label": "Approve"}, {"label": "Keep planning"}],
        "intent": {"kind": "plan-review", "approve": "Approve"},
    }  # fmt: skip
    ask = Ask(host.asker_url, [review])
    message = request_message(fake)
    ((chat, name, content),) = fake.documents
    assert (chat, name, content.decode()) == (OWNER_USER, "plan.md", plan)
    assert "step <399>" not in message.shown
    assert "plan.md" in message.shown
    assert [b["text"] for b in message.buttons] == [
        "Approve", "Keep planning", "Give feedback…", "Dismiss"
    ]  # fmt: skip
    fake.tap(OWNER_USER, message, "Give feedback")
    fake.wait(lambda: any("Type your answer" in m.shown for m in fake.messages_in(OWNER_USER)))
    fake.send(OWNER_USER, "add tests first")
    assert ask.result() == {
        "answers": [{"id": "plan", "selected": [], "custom": "add tests first"}]
    }


def test_an_approval_card_shows_its_command_as_code(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = ask_approval(host)
    message = request_message(fake)
    assert "<pre><code" in message.text
    assert "rm -rf build &amp;&amp; echo" in message.text
    fake.tap(OWNER_USER, message, "Allow")
    assert ask.result() == {"answers": [{"id": "approval", "selected": ["Allow"]}]}


def test_settled_elsewhere_the_message_says_how_and_a_late_tap_is_told(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)
    old_buttons = list(message.buttons)
    answer_through_api(host)
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    fake.wait(lambda: message.edits == 1)
    assert message.buttons == []
    assert "Answered by owner via api" in message.shown
    message.markup = {"inline_keyboard": [old_buttons]}
    late = fake.tap(OWNER_USER, message, "pnpm")
    assert fake.answer_to(late)["text"] == "Too late: answered by owner via api."


REPLICAS = {
    "id": "scale",
    "question": "How should the service scale?",
    "schema": {
        "type": "object",
        "properties": {"replicas": {"type": "integer", "minimum": 1, "maximum": 10}},
        "required": ["replicas"],
    },
}


def test_a_form_is_filled_in_on_the_page_and_the_card_then_shows_its_value_and_note(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = Ask(host.asker_url, [REPLICAS])
    message = request_message(fake)
    assert "This question is a form: fill it in on the page." in message.shown
    assert [button["text"] for button in message.buttons] == ["Dismiss"]
    (pending,) = host.pending()
    filled = {"id": "scale", "selected": [], "value": {"replicas": 3}, "note": "no rush"}
    body = answer_body(pending["rpcId"], pending["payload"]["sessionId"], filled)
    assert host.respond(body)["accepted"]
    assert ask.result() == {"answers": [filled]}
    fake.wait(lambda: message.edits == 1)
    assert '{"replicas":3} (note: no rush)' in message.shown


def test_a_429_and_a_dropped_connection_are_waited_out(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    fake.rate_limit("sendMessage")
    fake.drop("getUpdates")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)  # sent after the 429's retry_after
    assert fake.calls.count("sendMessage") >= 2
    fake.tap(OWNER_USER, message, "npm")  # polled again after the dropped connection
    assert ask.result(30) == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_a_person_pairing_gets_what_waits_and_dismisses_it_unpaired_taps_nothing(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    ask = Ask(host.asker_url, [PICK])
    host.wait_pending(1)
    pair(fake, tmp_path / "host.db")
    message = request_message(fake)  # asked before the pairing, sent when it was made
    fake.tap(OWNER_USER, message, "Dismiss")
    assert ask.result() == "ASK_CANCELLED"
    fake.wait(lambda: "Dismissed by owner via telegram" in message.shown)
    assert message.buttons == []
    second = Ask(host.asker_url, [PICK])
    message = request_message(fake)  # the first has no buttons left
    unpaired = uq("chat", "unpair", "telegram", "owner", "--store", str(tmp_path / "host.db"))
    assert unpaired.returncode == 0
    refused = fake.tap(OWNER_USER, message, "npm")
    assert fake.answer_to(refused)["text"] == "You are not paired to answer this question."
    assert len(host.pending()) == 1
    again = uq("chat", "unpair", "telegram", "owner", "--store", str(tmp_path / "host.db"))
    assert again.returncode == 2
    answer_through_api(host)
    assert second.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def asked(fake: FakeBotApi, user: int, question: str) -> list[Message]:
    """The messages sent to `user` that ask `question`, whatever became of them."""
    return [m for m in fake.messages_in(user) if question in m.shown]


def test_an_escalation_step_sends_the_request_to_its_paired_target_once(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    db = str(tmp_path / "host.db")
    for name, user in (("alice", ALICE), ("bob", BOB)):
        assert uq("token", "add", name, "--store", db).returncode == 0
        pair(fake, db, name, user)
    made = uq("token", "add", "ci", "--role", "asker", "--route", "alice",
              "--escalate", "2s:bob", "--store", db, "--url", host.base)  # fmt: skip
    token, url = made.stdout.splitlines()
    wait_until_accepted(host, token)
    ask = Ask(url, [PICK])
    request_message(fake, ALICE)
    assert asked(fake, BOB, "Which package manager?") == []  # not routed to him yet
    message = request_message(fake, BOB)  # the step, 2 s later
    fake.tap(BOB, message, "npm")
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    for user in (ALICE, BOB):  # one message each, however often the request was heard
        (sent,) = fake.wait(lambda user=user: asked(fake, user, "Answered by bob via telegram"))
        assert sent.buttons == []
        assert len(asked(fake, user, "Which package manager?")) == 1


def test_a_request_pending_when_the_host_starts_is_sent_then(
    fake: FakeBotApi, tmp_path: Path
) -> None:
    db, port = tmp_path / "host.db", free_port()
    with ExitStack() as stack:
        paired = telegram_host(fake, db, stack, port)
        pair(fake, db)
        paired.stop()  # it hands the polling lease on: the next host polls at once
    without_bot = HostProcess(db, port=port)  # no bot: nothing is sent
    without_bot.start()
    try:
        ask = Ask(without_bot.asker_url, [PICK])
        without_bot.wait_pending(1)
    finally:
        without_bot.kill()
    assert asked(fake, OWNER_USER, "Which package manager?") == []
    with ExitStack() as stack:
        telegram_host(fake, db, stack, port)
        message = request_message(fake)  # caught up at start
        fake.tap(OWNER_USER, message, "npm")
        assert ask.result(30) == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
        fake.wait(lambda: "Answered by owner via telegram" in message.shown)


def answer_through_api(host: HostProcess) -> None:
    """Answer the one pending request, a `PICK`, with `npm` over the HTTP API (elsewhere than
    in the chat)."""
    (pending,) = host.pending()
    body = answer_body(pending["rpcId"], pending["payload"]["sessionId"], NPM)
    assert host.respond(body)["accepted"]


def ask_approval(host: HostProcess) -> Ask:
    """Ask an approval card of a shell command holding what a chat must escape."""
    card = approval_question("Bash", {"command": "rm -rf build && echo '<done>'"})
    return Ask(host.asker_url, [card.model_dump(mode="json", by_alias=True, exclude_none=True)])


def test_a_stranger_writing_or_a_wrong_code_pairs_nobody(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    fake.send(STRANGER, "/start not-a-real-code")
    fake.wait(lambda: any("unknown or expired" in m.shown for m in fake.messages_in(STRANGER)))
    fake.send(STRANGER, "hello")
    fake.wait(lambda: any("not paired" in m.shown for m in fake.messages_in(STRANGER)))
    listed = uq("chat", "list", "--store", str(tmp_path / "host.db"))
    assert listed.returncode == 0
    assert listed.stdout == ""
    refused = uq("chat", "pair", "telegram", "nobody", "--store", str(tmp_path / "host.db"))
    assert refused.returncode == 2
    assert "nobody is called 'nobody'" in refused.stderr


def test_two_nodes_on_one_database_poll_one_at_a_time(fake: FakeBotApi, pg_url: str) -> None:
    with ExitStack() as stack:
        first = telegram_host(fake, pg_url, stack)
        second = telegram_host(fake, pg_url, stack)
        fake.wait(lambda: "getUpdates" in fake.calls)
        pair(fake, pg_url)
        asks = [Ask(node.asker_url, [{**PICK, "id": f"q{n}"}]) for n, node in
                enumerate((first, second, first))]  # fmt: skip
        request_message(fake, count=3)  # all three before a tap: an edited one has no buttons
        sent = [m for m in fake.messages_in(OWNER_USER) if m.buttons]
        for message in sent:
            fake.tap(OWNER_USER, message, "npm")
        for n, ask in enumerate(asks):
            assert ask.result() == {"answers": [{"id": f"q{n}", "selected": ["npm"]}]}
        assert fake.conflicts == 0  # never two getUpdates at once
        fake.wait(lambda: all(m.edits == 1 for m in fake.messages_in(OWNER_USER) if m.edits))


def test_a_bad_bot_token_is_refused_before_the_host_starts_and_the_token_is_never_logged(
    fake: FakeBotApi, tmp_path: Path
) -> None:
    refused = uq("serve", "--store", str(tmp_path / "host.db"), "--telegram", "not a token")
    assert refused.returncode == 2
    assert "a Telegram bot token is the bot's id, a colon and its secret" in refused.stderr
    with ExitStack() as stack:
        host = telegram_host(fake, tmp_path / "host.db", stack)
        fake.drop("getUpdates")  # a network error is logged: without the URL that holds it
        fake.wait(lambda: fake.calls.count("getUpdates") >= 2, seconds=20)
    assert host.stderr is not None
    assert "getUpdates" in host.stderr
    assert TOKEN not in host.stderr
    assert TOKEN.partition(":")[2] not in host.stderr


def test_a_person_whose_language_is_japanese_gets_the_card_and_its_ending_in_japanese(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    made = uq("token", "add", "hanako", "--lang", "ja", "--store", str(tmp_path / "host.db"))
    assert made.returncode == 0, made.stderr
    pair(
        fake,
        tmp_path / "host.db",
        "hanako",
        ALICE,
        said="ペアリングしました：ここでは hanako として回答します。",
    )
    ask = Ask(host.asker_url, [{**PICK, "multiSelect": True}])
    message = request_message(fake, ALICE)
    assert [b["text"] for b in message.buttons] == [
        "☐ pnpm (Recommended)",
        "☐ npm",
        "完了",
        "その他…",
        "取り消す",
    ]
    assert "おすすめ" in message.shown
    fake.tap(ALICE, message, "npm")
    fake.wait(lambda: message.edits == 1)
    fake.tap(ALICE, message, "完了")
    assert ask.result() == {"answers": [NPM]}
    fake.wait(lambda: message.edits == 2)
    assert "回答済み hanako さんが telegram 経由で" in message.shown
