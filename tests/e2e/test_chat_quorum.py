"""A quorum and the card's digest in Telegram, on a real `uq serve` with the Bot API's fake at
its network edge: each paired person's Allow on their own message of a request whose asker token
needs two approvals is counted, the first told "1 of 2 approved: alice" and the hook still
waiting, the second settling it; and a press on a message whose stored card digest is not the
request's is refused ("Not sent: the card changed since it was shown"), the request pending."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from tests.e2e.conftest import start_hook
from tests.e2e.host_process import HostProcess
from tests.e2e.test_fair_share import accepted
from tests.e2e.test_host_cli import uq
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
    add_token(host, db, "alice")
    add_token(host, db, "bob")
    pair(fake, db, "alice", ALICE)
    pair(fake, db, "bob", BOB)
    event = fixture_text("claude_code", "permission_request_bash")
    asking = start_hook(
        [UQ, "hook", "claude", "--url", f"{host.base}/?token={deploy}"], event, tmp_path
    )
    hooks.append(asking)
    first = allow(fake, ALICE)
    assert fake.answer_to(first)["text"] == "1 of 2 approved: alice"
    assert asking.poll() is None
    assert len(host.pending()) == 1
    allow(fake, BOB)
    out, err = asking.communicate(timeout=30)
    assert (asking.returncode, err) == (0, "")
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


def test_a_press_on_a_card_that_is_not_the_stored_one_is_refused(
    fake: FakeBotApi, host: HostProcess, tmp_path: Path
) -> None:
    pair(fake, tmp_path / "host.db")
    ask_approval(host)
    message = request_message(fake)
    with sqlite3.connect(tmp_path / "host.db") as connection:  # the card it showed, changed
        connection.execute("UPDATE chat_messages SET digest = ?", ("0" * 64,))
    refused = fake.tap(OWNER_USER, message, "Allow")
    assert fake.answer_to(refused)["text"] == "Not sent: the card changed since it was shown"
    assert len(host.pending()) == 1
