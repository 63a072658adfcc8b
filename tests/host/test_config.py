"""`HostConfig`: every start-up value checked once, when the config is made, and notifications
for a Python caller of the host as for `uq serve`."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import TOKEN, ask
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

QUESTION = AskUserQuestionItem(
    id="q", question="Ship it?", options=[AskUserQuestionOption(label="Yes")]
)


@pytest.mark.parametrize(
    ("values", "code", "says"),
    [
        ({"token": "short"}, ErrorCode.BAD_TOKEN, "token"),
        ({"retain_days": 0}, ErrorCode.BAD_REQUEST, "--retain-days"),
        ({"public_url": "ftp://example.com/"}, ErrorCode.BAD_REQUEST, "public"),
        ({"trust_proxy": "not-an-address"}, ErrorCode.BAD_REQUEST, "not-an-address"),
        ({"tls_cert": "cert.pem"}, ErrorCode.BAD_REQUEST, "--tls-key"),
        ({"metrics_bind": "127.0.0.1:http"}, ErrorCode.BAD_REQUEST, "--metrics-bind"),
        ({"notify": ["nosuchscheme://x"]}, ErrorCode.BAD_NOTIFIER, "nosuchscheme"),
        ({"notify_webhooks": ["ftp://example.com/hook"]}, ErrorCode.BAD_NOTIFIER, "webhook"),
        ({"notify_commands": ["no-such-program-here"]}, ErrorCode.BAD_NOTIFIER, "not found"),
        ({"notify_secret": "short"}, ErrorCode.BAD_NOTIFIER, "secret"),
        ({"telegram": "no-colon"}, ErrorCode.BAD_TOKEN, "Telegram bot token"),
        ({"telegram": "12:x y"}, ErrorCode.BAD_TOKEN, "Telegram bot token"),
        (
            {"telegram": "12:abc", "telegram_api": "ftp://bots.example/"},
            ErrorCode.BAD_REQUEST,
            "--telegram-api",
        ),
        ({"answer_links": "forever"}, ErrorCode.BAD_NOTIFIER, "forever"),
        ({"slack_app_token": "xapp-1-A1-2-abc"}, ErrorCode.BAD_TOKEN, "--slack-bot-token"),
        ({"slack_bot_token": "xoxb-1-2-abcdef"}, ErrorCode.BAD_TOKEN, "--slack-app-token"),
        (
            {"slack_app_token": "xoxb-1-2-abcdef", "slack_bot_token": "xoxb-1-2-abcdef"},
            ErrorCode.BAD_TOKEN,
            "begins with xapp-",
        ),
        (
            {"slack_app_token": "xapp-1-A1-2-abc", "slack_bot_token": "xoxb-1 2 abcdef"},
            ErrorCode.BAD_TOKEN,
            "begins with xoxb-",
        ),
        (
            {
                "slack_app_token": "xapp-1-A1-2-abc",
                "slack_bot_token": "xoxb-1-2-abcdef",
                "slack_api": "ftp://slack.example/",
            },
            ErrorCode.BAD_REQUEST,
            "--slack-api",
        ),
    ],
)
def test_a_value_that_cannot_be_used_is_refused_when_the_config_is_made(
    tmp_path: Path, values: dict[str, Any], code: ErrorCode, says: str
) -> None:
    with pytest.raises(UserQuestionError) as refused:
        HostConfig(store=tmp_path / "host.db", **values)
    assert refused.value.code == code
    assert says in refused.value.message
    assert not (tmp_path / "host.db").exists()  # refused before the store is touched


def test_the_config_is_frozen_and_keeps_what_it_read(tmp_path: Path) -> None:
    config = HostConfig(
        store=tmp_path / "host.db",
        public_url="https://uq.example.com/",
        trust_proxy="127.0.0.1,10.0.0.0/8",
        metrics_bind="9464",
    )
    assert config.public is not None
    assert config.public.origin == "https://uq.example.com"
    assert config.proxies is not None
    assert len(config.proxies.networks) == 2
    assert config.metrics_at == ("127.0.0.1", 9464)
    assert config.scheme == "http"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.port = 1  # type: ignore[misc]


def test_the_secrets_kept_out_of_the_log_include_every_part_of_a_notification_url(
    tmp_path: Path,
) -> None:
    config = HostConfig(
        store=tmp_path / "host.db",
        notify=["tgram://123456:bot-token-part/4242/"],
        notify_webhooks=["https://hooks.example.com/secret-path-part?key=query-part"],
        notify_secret="a-webhook-secret-of-enough-length",
    )
    secrets = config.secrets
    assert "123456:bot-token-part" in secrets  # an apprise URL's host may be its token
    assert "/secret-path-part" in secrets
    assert "key=query-part" in secrets
    assert "a-webhook-secret-of-enough-length" in secrets
    chat = HostConfig(store=tmp_path / "host.db", telegram="123456:the-bot-secret")
    assert "123456:the-bot-secret" in chat.secrets
    slack = HostConfig(
        store=tmp_path / "host.db",
        slack_app_token="xapp-1-A1-2-app-secret",
        slack_bot_token="xoxb-1-2-bot-secret",
    )
    assert {"xapp-1-A1-2-app-secret", "xoxb-1-2-bot-secret"} <= set(slack.secrets)


def test_slack_without_its_extra_is_refused_with_the_line_that_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "websockets" else found(name)
    )
    with pytest.raises(UserQuestionError) as refused:
        HostConfig(
            store=tmp_path / "host.db",
            slack_app_token="xapp-1-A1-2-abc",
            slack_bot_token="xoxb-1-2-abcdef",
        )
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert "websockets: pip install 'user-questions[slack]'" in refused.value.message


def test_apprise_notifications_need_an_address_to_link_to(tmp_path: Path) -> None:
    config = HostConfig(store=tmp_path / "host.db", notify=["json://127.0.0.1:9/"])
    with pytest.raises(UserQuestionError) as refused:
        create_app(config)
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert "public URL" in refused.value.message


def test_a_python_caller_of_the_host_gets_its_notifications(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    program = f"import sys; open({str(events)!r}, 'a').write(sys.stdin.read())"
    command = shlex.join([sys.executable, "-c", program])
    config = HostConfig(store=tmp_path / "host.db", token=TOKEN, notify_commands=[command])
    with TestClient(create_app(config)) as client:
        ask(client, "r1", QUESTION)
        deadline = time.monotonic() + 20
        while not (events.exists() and events.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
    [event] = [json.loads(line) for line in events.read_text().splitlines()]
    assert (event["type"], event["rpcId"]) == ("question/pending", "r1")
