"""`RemoteProvider` and what its token may do: the role the handshake says, one warning for a token
that can answer, `require_asker` refusing it before anything is asked; and the note a withdrawal
carries (the text an ask was aborted with).

Against the scripted host of test_remote.py, told to say a role in its handshake's answer; the
real host's side is in tests/e2e/test_self_approval.py.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from tests.providers.test_remote import PICK, FakeHost
from user_questions import (
    AbortController,
    AbortSignal,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
    connect,
)
from user_questions._host_link import ask_endings
from user_questions.frames import MAX_NOTE_LENGTH, ROLE_HEADER
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio

HINT = (
    "give agents an asker's token, which can ask but never answer: the `export UQ_URL=...` line "
    "`uq serve` prints, or one made with `uq token add NAME --role asker`"
)


class RoleHost(FakeHost):
    """The scripted host, saying `role` in every handshake's answer (nothing when `None`)."""

    def __init__(self, role: str | None) -> None:
        super().__init__()
        self.role = role

    async def start(self) -> None:
        self._server = await serve(
            self._handle,
            "127.0.0.1",
            self.port,
            process_request=self._check,
            process_response=self._say_role,
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def _say_role(self, connection: ServerConnection, request: Request, response: Response) -> None:
        if self.role is not None:
            response.headers[ROLE_HEADER] = self.role


@pytest.fixture
async def host(request: pytest.FixtureRequest) -> AsyncIterator[RoleHost]:
    fake = RoleHost(getattr(request, "param", "asker"))
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


async def dismissed_once(host: FakeHost, provider: RemoteProvider) -> None:
    """Ask once through `provider` while the host dismisses the request."""
    async with anyio.create_task_group() as task_group:

        async def dismiss() -> None:
            await host.wait_for(lambda: bool(host.watchers))
            await host.settle(next(iter(host.watchers)), "dismissed")

        task_group.start_soon(dismiss)
        with pytest.raises(UserQuestionError) as caught:
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.ASK_CANCELLED


@pytest.mark.parametrize("host", ["person", "admin"], indirect=True)
async def test_a_token_that_can_answer_is_used_with_one_warning(
    host: RoleHost, caplog: pytest.LogCaptureFixture
) -> None:
    async with RemoteProvider(host.url) as provider:
        await dismissed_once(host, provider)
        await host.drop_connections()  # a second connection says the same: no second warning
        await dismissed_once(host, provider)
    assert provider.role == host.role
    assert host.connected_total == 2
    (warning,) = [record for record in caplog.records if record.name.startswith("user_questions")]
    assert warning.levelno == logging.WARNING
    assert warning.getMessage() == (
        f"the token for http://127.0.0.1:{host.port}/ can answer questions (its role is "
        f"{host.role}), so an agent holding it could answer its own; {HINT}"
    )


async def test_an_askers_token_is_used_without_a_word(
    host: RoleHost, caplog: pytest.LogCaptureFixture
) -> None:
    async with RemoteProvider(host.url, require_asker=True) as provider:
        await provider.connect()
        assert provider.role == "asker"
        await dismissed_once(host, provider)
    assert not caplog.records


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("admin", "the token for {url} can answer questions (its role is admin), so an agent "),
        (None, "{url} did not say what the token may do (a host older than roles, where every "),
    ],
    indirect=["host"],
)
async def test_require_asker_refuses_a_token_that_can_answer_before_asking(
    host: RoleHost, says: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{host.port}/"
    async with RemoteProvider(host.url, require_asker=True) as provider:
        with pytest.raises(UserQuestionError) as refused:
            await provider.connect()
        assert refused.value.code == ErrorCode.FORBIDDEN
        assert refused.value.message.startswith(says.format(url=url))
        assert refused.value.message.endswith(HINT)
        with pytest.raises(UserQuestionError) as asked:  # an ask without connect(): the same
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
        assert asked.value.code == ErrorCode.FORBIDDEN
    assert host.received == []  # nothing was ever asked with it
    assert not caplog.records  # refused, so not warned of as well


async def test_the_text_an_ask_was_aborted_with_is_the_withdrawals_note(
    host: RoleHost, ctx: Context
) -> None:
    ctx.user_questions.register_provider(RemoteProvider(host.url))
    controller = AbortController()
    async with anyio.create_task_group() as task_group:

        async def abort_once_asked() -> None:
            await host.wait_for(lambda: bool(host.requests))
            controller.abort("answered in the editor: Allow once")

        task_group.start_soon(abort_once_asked)
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(
                AskUserQuestionRequest(questions=[PICK], signal=controller.signal)
            )
    assert caught.value.code == ErrorCode.ASK_ABORTED
    (withdrawn,) = host.frames("withdraw")
    assert (withdrawn["reason"], withdrawn["note"]) == (
        "aborted",
        "answered in the editor: Allow once",
    )


def test_withdraw_note_is_text_the_frame_can_carry() -> None:
    controller = AbortController()
    assert ask_endings.withdraw_note(None) is None
    assert ask_endings.withdraw_note(controller.signal) is None  # not aborted
    assert ask_endings.withdraw_note(AbortSignal.timeout(0)) is None  # a TimeoutError, not text
    controller.abort("x\x00y\ud800" + "z" * 2000)
    note = ask_endings.withdraw_note(controller.signal)
    assert note is not None
    assert note.startswith("xy\\ud800zzz")
    assert (len(note), note[-1]) == (MAX_NOTE_LENGTH, "…")
    empty = AbortController()
    empty.abort("")
    assert ask_endings.withdraw_note(empty.signal) is None


@pytest.mark.parametrize("host", ["admin"], indirect=True)
async def test_connect_warns_of_a_token_that_can_answer_once_too(
    host: RoleHost, caplog: pytest.LogCaptureFixture
) -> None:
    async with connect(host.url, session="framework") as asker, anyio.create_task_group() as tg:

        async def dismiss() -> None:
            await host.wait_for(lambda: bool(host.watchers))
            await host.settle(next(iter(host.watchers)), "dismissed")

        tg.start_soon(dismiss)
        with pytest.raises(UserQuestionError):
            await asker.ask([PICK])
    assert [record.levelno for record in caplog.records] == [logging.WARNING]
    assert "can answer questions (its role is admin)" in caplog.records[0].getMessage()
