"""Answering in Slack, end to end: a real `uq serve --slack-app-token --slack-bot-token` on
Socket Mode with a fake Slack on loopback (`tests/slack_fake.py`), people paired with
`uq chat pair slack`, agents asking through the host, users clicking buttons and submitting
modals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host_process import HostProcess
from tests.e2e.test_host_cli import uq
from tests.e2e.test_people_history import history
from tests.e2e.test_telegram import PICK, Ask, answer_through_api, ask_approval
from tests.slack_fake import APP_TOKEN, BOT_TOKEN, FakeSlack, Message, View, fake_slack

OWNER = "U0OWNER"
STRANGER = "U0STRANGER"
REFUSAL = "You are not paired to answer this question."


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with fake_slack() as slack:
        yield slack
        assert slack.late_acks == []  # every envelope acknowledged within 3 s


def slack_host(fake: FakeSlack, db: Path | str, stack: ExitStack) -> HostProcess:
    host = HostProcess(
        None,
        args=("--store", str(db), "--slack-api", fake.url),
        env={"UQ_SLACK_APP_TOKEN": APP_TOKEN, "UQ_SLACK_BOT_TOKEN": BOT_TOKEN},
    )
    host.start()
    stack.callback(host.stop)
    return host


@pytest.fixture
def host(fake: FakeSlack, tmp_path: Path) -> Iterator[HostProcess]:
    with ExitStack() as stack:
        host = slack_host(fake, tmp_path / "host.db", stack)
        fake.wait(lambda: fake.connections == 1)
        yield host


def pair(fake: FakeSlack, db: Path | str, person: str = "owner", user: str = OWNER) -> None:
    made = uq("chat", "pair", "slack", person, "--store", str(db))
    assert made.returncode == 0, made.stderr
    (code,) = made.stdout.split()  # no link: Slack has none
    assert "pair CODE" in made.stderr
    fake.dm(user, f"pair {code}")
    fake.wait(lambda: any(f"answer here as {person}" in m.text for m in fake.messages_in(dm(user))))


def dm(user: str) -> str:
    return FakeSlack.channel_of(user)


def request_message(fake: FakeSlack, user: str = OWNER, count: int = 1) -> Message:
    """The latest of `count` request messages (with buttons) sent to `user`."""
    found = fake.wait(
        lambda: len(sent := [m for m in fake.messages_in(dm(user)) if m.buttons]) >= count and sent
    )
    return found[count - 1]  # type: ignore[no-any-return]


def modal(fake: FakeSlack, count: int = 1) -> View:
    return fake.wait(lambda: len(fake.views) >= count and fake.views)[count - 1]  # type: ignore[no-any-return]


def test_a_paired_person_answers_with_a_click_and_a_stranger_changes_nothing(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)
    assert message.blocks[0] == {
        "type": "header", "text": {"type": "plain_text", "text": "Setup <b>", "emoji": True}
    }  # fmt: skip
    assert "Which package manager? <script>alert(1)</script> & more" in message.shown
    assert "&lt;script&gt;" in message.blocks[1]["text"]["text"]  # escaped, so never a link
    assert "Fast, <strict>" in message.shown
    assert "recommended" in message.shown
    assert message.labels == ["pnpm (Recommended)", "npm", "Other…", "Dismiss", "Add a note…"]
    old_blocks = list(message.blocks)

    fake.click(STRANGER, message, "npm")
    fake.wait(lambda: fake.ephemerals_for(STRANGER) == [REFUSAL])
    assert message.edits == 0
    assert len(host.pending()) == 1

    fake.click(OWNER, message, "pnpm")
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["pnpm (Recommended)"]}]}
    fake.wait(lambda: message.edits == 1)
    assert message.buttons == []  # the same message, edited: no buttons remain
    assert "Answered by owner via slack" in message.shown
    assert "→ pnpm (Recommended)" in message.shown
    (item,) = history(host)
    assert (item["via"], item["by"]) == ("slack", "owner")

    message.blocks = old_blocks  # a click on the buttons it had
    fake.click(OWNER, message, "npm")
    fake.wait(lambda: "Too late: answered by owner via slack." in fake.ephemerals_for(OWNER))
    assert len(history(host)) == 1


def test_a_stranger_writing_or_a_wrong_code_pairs_nobody(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    fake.dm(STRANGER, "pair not-a-real-code")
    fake.wait(lambda: any("unknown or expired" in m.text for m in fake.messages_in(dm(STRANGER))))
    fake.dm(STRANGER, "hello")
    fake.wait(lambda: any("not paired" in m.text for m in fake.messages_in(dm(STRANGER))))
    listed = uq("chat", "list", "--store", str(tmp_path / "host.db"))
    assert (listed.returncode, listed.stdout) == (0, "")
    pair(fake, tmp_path / "host.db")
    listed = uq("chat", "list", "--store", str(tmp_path / "host.db"))
    assert listed.stdout.split("\t")[:3] == ["slack", "owner", OWNER]
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)
    unpaired = uq("chat", "unpair", "slack", "owner", "--store", str(tmp_path / "host.db"))
    assert unpaired.returncode == 0
    fake.click(OWNER, message, "npm")
    fake.wait(lambda: fake.ephemerals_for(OWNER) == [REFUSAL])
    assert len(host.pending()) == 1
    answer_through_api(host)
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_several_questions_with_toggles_and_other_in_a_modal_then_a_summary_and_send(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    questions: list[dict[str, Any]] = [
        {"id": "langs", "question": "Which languages?", "multiSelect": True,
         "options": [{"label": "Python"}, {"label": "Go"}, {"label": "Rust"}]},
        {"id": "name", "question": "Project name?", "options": [{"label": "uq"}]},
    ]  # fmt: skip
    ask = Ask(host.asker_url, questions)
    message = request_message(fake)
    assert "Done" in message.labels
    fake.click(OWNER, message, "Python")
    fake.wait(lambda: message.edits == 1)
    rust = fake.click(OWNER, message, "Rust")
    fake.wait(lambda: message.edits == 2)
    fake.acked(rust)
    fake.send_again(rust)  # Slack retries it: its effect happens once
    assert message.labels[:3] == ["☑ Python", "☐ Go", "☑ Rust"]
    fake.click(OWNER, message, "Done")
    fake.wait(lambda: "Project name?" in message.shown)
    assert message.edits == 3  # the retried click on Rust was done once
    fake.click(OWNER, message, "Other")
    view = modal(fake)
    assert view.view["blocks"][0]["label"]["text"] == "Project name?"
    fake.submit(OWNER, view, "user-questions <&>")
    fake.wait(lambda: "Your answers" in message.shown)
    assert "Python, Rust" in message.shown
    assert "user-questions <&>" in message.shown
    fake.click(OWNER, message, "Send")
    assert ask.result() == {
        "answers": [
            {"id": "langs", "selected": ["Python", "Rust"]},
            {"id": "name", "selected": [], "custom": "user-questions <&>"},
        ]
    }
    fake.wait(lambda: "Answered by owner via slack" in message.shown)


def test_a_long_plan_goes_whole_in_messages_of_its_own_and_feedback_is_a_modal(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    plan = "# Plan\n\n" + "".join(f"{n}. step <{n}> of the plan\n" for n in range(2000))
    review = {
        "id": "plan", "question": "Approve this plan?", "detail": plan,
        "options": [{"label": "Approve"}, {"label": "Keep planning"}],
        "intent": {"kind": "plan-review", "approve": "Approve"},
    }  # fmt: skip
    ask = Ask(host.asker_url, [review])
    message = request_message(fake)
    before = [m for m in fake.messages_in(dm(OWNER)) if not m.buttons and "full text" in m.text]
    assert len(before) >= 2
    assert "".join(m.shown for m in before).replace("\n", "") == plan.replace("\n", "")
    assert "step <1999>" not in message.shown
    assert "The full text is too long for this message" in message.shown
    assert message.labels == [
        "Approve",
        "Keep planning",
        "Give feedback…",
        "Dismiss",
        "Add a note…",
    ]
    fake.click(OWNER, message, "Give feedback")
    view = modal(fake)
    fake.submit(STRANGER, view, "approve it all")  # someone else's submission of this modal
    fake.wait(lambda: fake.ephemerals_for(STRANGER) == [REFUSAL])
    assert len(host.pending()) == 1
    fake.submit(OWNER, view, "add tests first")
    assert ask.result() == {
        "answers": [{"id": "plan", "selected": [], "custom": "add tests first"}]
    }


def test_a_short_plan_is_in_the_message_above_approve(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    plan = "# Plan\n\n1. write <tests>\n2. ship\n"
    review = {
        "id": "plan", "question": "Approve this plan?", "detail": plan,
        "options": [{"label": "Approve"}, {"label": "Keep planning"}],
        "intent": {"kind": "plan-review", "approve": "Approve"},
    }  # fmt: skip
    ask = Ask(host.asker_url, [review])
    message = request_message(fake)
    assert "1. write <tests>\n2. ship" in message.shown
    fake.click(OWNER, message, "Approve")
    assert ask.result() == {"answers": [{"id": "plan", "selected": ["Approve"]}]}


def test_an_approval_card_shows_its_command_as_code(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = ask_approval(host)
    message = request_message(fake)
    texts = "\n".join(b["text"]["text"] for b in message.blocks if "text" in b)
    assert "```\nrm -rf build &amp;&amp; echo '&lt;done&gt;'\n```" in texts
    fake.click(OWNER, message, "Allow")
    assert ask.result() == {"answers": [{"id": "approval", "selected": ["Allow"]}]}


def test_settled_elsewhere_the_message_says_how_and_a_late_click_is_told(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)
    old_blocks = list(message.blocks)
    answer_through_api(host)
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    fake.wait(lambda: message.edits == 1)
    assert message.buttons == []
    assert "Answered by owner via api" in message.shown
    message.blocks = old_blocks
    fake.click(OWNER, message, "pnpm")
    fake.wait(lambda: fake.ephemerals_for(OWNER) == ["Too late: answered by owner via api."])


def test_a_429_a_disconnect_and_a_dropped_socket_are_recovered(
    fake: FakeSlack, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    fake.rate_limit("chat.postMessage")
    ask = Ask(host.asker_url, [PICK])
    message = request_message(fake)  # sent after the 429's Retry-After
    assert ("chat.postMessage", "ratelimited") not in fake.refused
    fake.disconnect()
    fake.wait(lambda: fake.connections == 2)  # a fresh apps.connections.open
    fake.drop()
    fake.wait(lambda: fake.connections == 3)
    assert fake.calls.count("apps.connections.open") == 3
    fake.click(OWNER, message, "npm")
    assert ask.result() == {"answers": [{"id": "pkg", "selected": ["npm"]}]}


def test_bad_tokens_are_refused_before_the_host_starts_and_tokens_are_never_logged(
    fake: FakeSlack, tmp_path: Path
) -> None:
    db = str(tmp_path / "host.db")
    for args, says in (
        (("--slack-app-token", "xoxb-1-2-not-an-app-token", "--slack-bot-token", BOT_TOKEN),
         "begins with xapp-"),
        (("--slack-app-token", APP_TOKEN), "Slack needs both tokens"),
    ):  # fmt: skip
        refused = uq("serve", "--store", db, *args)
        assert refused.returncode == 2
        assert says in refused.stderr
        assert "Traceback" not in refused.stderr
    with ExitStack() as stack:
        host = slack_host(fake, db, stack)
        fake.wait(lambda: fake.connections == 1)
        fake.drop()  # logged, without the URL (its ticket) or a token
        fake.wait(lambda: fake.connections == 2)
    assert host.stderr is not None
    assert "connection was lost" in host.stderr
    for secret in (APP_TOKEN, BOT_TOKEN, "ticket"):
        assert secret not in host.stderr


def test_two_nodes_on_one_database_hold_one_connection_and_both_send(
    fake: FakeSlack, pg_url: str
) -> None:
    with ExitStack() as stack:
        first = slack_host(fake, pg_url, stack)
        second = slack_host(fake, pg_url, stack)
        fake.wait(lambda: fake.connections == 1)
        pair(fake, pg_url)
        asks = [Ask(node.asker_url, [{**PICK, "id": f"q{n}"}]) for n, node in
                enumerate((first, second))]  # fmt: skip
        sent = [request_message(fake, count=2), request_message(fake, count=1)]  # one per node
        for message in sent:
            fake.click(OWNER, message, "npm")
        for n, ask in enumerate(asks):
            assert ask.result() == {"answers": [{"id": f"q{n}", "selected": ["npm"]}]}
        assert fake.connections == 1  # the lease: one Socket Mode connection for both
        assert fake.calls.count("apps.connections.open") == 1
        edited = fake.wait(
            lambda: len(found := [m for m in fake.messages_in(dm(OWNER)) if m.edits]) == 2 and found
        )
        assert all(m.buttons == [] and "Answered by owner via slack" in m.shown for m in edited)


def test_a_token_slack_refuses_is_logged_and_retried_and_the_host_goes_on(
    fake: FakeSlack, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        host = HostProcess(
            None,
            args=("--store", str(tmp_path / "host.db"), "--slack-api", fake.url),
            env={"UQ_SLACK_APP_TOKEN": APP_TOKEN, "UQ_SLACK_BOT_TOKEN": "xoxb-1-2-revoked"},
        )
        host.start()
        stack.callback(host.stop)
        fake.wait(lambda: fake.refused.count(("auth.test", "invalid_auth")) >= 2)
        assert host.pending() == []  # the host serves on
        assert fake.connections == 0
    assert host.stderr is not None
    assert "auth.test was refused: invalid_auth" in host.stderr
    assert "xoxb-1-2-revoked" not in host.stderr
