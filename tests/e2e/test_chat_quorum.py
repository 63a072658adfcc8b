"""A quorum and the card's digest in Telegram and Slack, on a real `uq serve` with each
service's fake at its network edge and the real `uq hook claude`: each paired person's Allow on
their own message of a request whose asker token needs two approvals is counted, the first told
"1 of 2 approved: alice" (in their own language) with the hook still waiting and every person's
message edited in place with the count, the second settling it; and a press on a message whose
stored card digest is not the request's is refused ("Not sent: the card changed since it was
shown", in the person's language: Japanese for hanako), the request still pending."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import ExitStack
from pathlib import Path

from tests.e2e.conftest import start_hook
from tests.e2e.host_process import HostProcess
from tests.e2e.test_fair_share import accepted
from tests.e2e.test_host_cli import uq
from tests.e2e.test_slack import dm, slack_host
from tests.e2e.test_slack import pair as slack_pair
from tests.e2e.test_slack import request_message as slack_request_message
from tests.e2e.test_telegram import (
    ALICE,
    BOB,
    OWNER_USER,
    ask_approval,
    fake,
    host,
    pair,
    request_message,
)
from tests.e2e.test_uq_hook import UQ, fixture_text
from tests.slack_fake import FakeSlack, fake_slack
from tests.telegram_fake import FakeBotApi

__all__ = ["fake", "host"]  # the fixtures, used by name


def add_token(host: HostProcess, db: Path, name: str, *grants: str) -> str:
    made = uq("token", "add", name, *grants, "--store", str(db))
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[0]
    accepted(host, token)
    return token


def allow(fake: FakeBotApi, user: int) -> str:
    """`user` taps `Allow` (not "Allow and don't ask again") on their request message."""
    message = request_message(fake, user)
    message.markup = {"inline_keyboard": [[b for b in message.buttons if b["text"] == "Allow"]]}
    return fake.tap(user, message, "Allow")


def test_each_persons_tap_is_counted_and_the_second_allows(
    fake: FakeBotApi, host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    db = tmp_path / "host.db"
    deploy = add_token(host, db, "deploy", "--role", "asker", "--approvals", "2")
    add_token(host, db, "alice", "--lang", "ko")  # told where it stands in Korean
    add_token(host, db, "bob")
    pair(fake, db, "alice", ALICE, said="연결되었습니다")
    pair(fake, db, "bob", BOB)
    event = fixture_text("claude_code", "permission_request_bash")
    asking = start_hook(
        [UQ, "hook", "claude", "--url", f"{host.base}/?token={deploy}"], event, tmp_path
    )
    hooks.append(asking)
    assert "2명 중 0명 승인" in request_message(fake, ALICE).shown  # alice reads Korean
    assert "0 of 2 approved" in request_message(fake, BOB).shown
    first = allow(fake, ALICE)
    assert fake.answer_to(first)["text"] == "2명 중 1명 승인: alice"
    fake.wait(  # both people's messages edited in place with the count, their buttons kept
        lambda: all(
            quorum in message.shown and message.buttons
            for quorum, message in (
                ("2명 중 1명 승인: alice", request_message(fake, ALICE)),
                ("1 of 2 approved: alice", request_message(fake, BOB)),
            )
        )
    )
    assert asking.poll() is None
    assert len(host.pending()) == 1
    allow(fake, BOB)
    out, err = asking.communicate(timeout=30)
    assert (asking.returncode, err) == (0, "")
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


def test_a_press_on_a_card_that_is_not_the_stored_one_is_refused(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    db = tmp_path / "host.db"
    pair(fake, db)
    add_token(host, db, "hanako", "--lang", "ja")  # told in Japanese
    pair(fake, db, "hanako", ALICE, said="ペアリングしました")
    ask_approval(host)
    message, hanakos = request_message(fake), request_message(fake, ALICE)
    with sqlite3.connect(db) as connection:  # the card it showed, changed
        connection.execute("UPDATE chat_messages SET digest = ?", ("0" * 64,))
    refused = fake.tap(OWNER_USER, message, "Allow")
    assert fake.answer_to(refused)["text"] == "Not sent: the card changed since it was shown"
    refused = fake.tap(ALICE, hanakos, "Allow")
    assert fake.answer_to(refused)["text"] == "送信されませんでした：表示後にカードが変更されました"
    assert len(host.pending()) == 1


def slack_allow(slack: FakeSlack, user: str) -> None:
    """`user` clicks `Allow` (not "Allow and don't ask again") on their Slack request message."""
    message = slack_request_message(slack, user)
    message.blocks = [
        {**block, "elements": [e for e in block["elements"] if e["text"]["text"] == "Allow"]}
        if block.get("type") == "actions"
        else block
        for block in message.blocks
    ]
    slack.click(user, message, "Allow")


def test_slack_counts_each_persons_click_and_refuses_a_stale_card(
    hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    db = tmp_path / "host.db"
    with fake_slack() as slack, ExitStack() as stack:
        host = slack_host(slack, db, stack)
        slack.wait(lambda: slack.connections == 1)
        deploy = add_token(host, db, "deploy", "--role", "asker", "--approvals", "2")
        add_token(host, db, "alice")
        add_token(host, db, "bob")
        slack_pair(slack, db, "alice", "U0ALICE")
        slack_pair(slack, db, "bob", "U0BOB")
        event = fixture_text("claude_code", "permission_request_bash")
        url = f"{host.base}/?token={deploy}"
        asking = start_hook([UQ, "hook", "claude", "--url", url], event, tmp_path)
        hooks.append(asking)
        slack_allow(slack, "U0ALICE")
        slack.wait(lambda: "1 of 2 approved: alice" in slack.ephemerals_for("U0ALICE"))
        slack.wait(  # bob's message edited in place with the count
            lambda: (
                "1 of 2 approved: alice" in json.dumps(slack_request_message(slack, "U0BOB").blocks)
            )
        )
        assert asking.poll() is None
        slack_request_message(slack, "U0BOB")
        with sqlite3.connect(db) as connection:  # bob's message shows another card
            connection.execute(
                "UPDATE chat_messages SET digest = ? WHERE chat_id = ?", ("0" * 64, dm("U0BOB"))
            )
        slack_allow(slack, "U0BOB")
        stale = "Not sent: the card changed since it was shown"
        slack.wait(lambda: stale in slack.ephemerals_for("U0BOB"))
        assert len(host.pending()) == 1
