"""`connect()`: an asker around one provider, with the service's checks and the tool runtime."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from user_questions import (
    AbortSignal,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    ErrorCode,
    ScriptedProvider,
    UserQuestionError,
    connect,
)
from user_questions.asker import URL_VARIABLE
from user_questions.frames import Origin
from user_questions.providers.remote import RemoteProvider
from user_questions.service import AskUserQuestionRequest

pytestmark = pytest.mark.anyio

PKG = {"id": "pkg", "question": "Which package manager?", "options": [{"label": "uv"}]}


async def test_an_asker_asks_wire_dicts_and_models_alike() -> None:
    human = ScriptedProvider({"pkg": "uv", "name": "shop"})
    async with connect(provider=human) as asker:
        answer = await asker.ask([PKG, AskUserQuestionItem(id="name", question="Name?")])
    assert answer.model_dump(mode="json") == {
        "answers": [
            {"id": "pkg", "selected": ["uv"]},
            {"id": "name", "selected": [], "custom": "shop"},
        ]
    }
    assert [question.id for question in human.seen[0].questions] == ["pkg", "name"]


async def test_an_asker_fails_with_the_services_codes() -> None:
    async with connect(provider=ScriptedProvider({})) as asker:
        with pytest.raises(UserQuestionError) as dismissed:
            await asker.ask([PKG])
        with pytest.raises(UserQuestionError) as repeated:
            await asker.ask([PKG, PKG])
        with pytest.raises(UserQuestionError) as empty:
            await asker.ask([])
    assert dismissed.value.code == ErrorCode.ASK_CANCELLED
    assert repeated.value.code == ErrorCode.BAD_QUESTION
    assert empty.value.code == ErrorCode.EMPTY_QUESTIONS


async def test_a_malformed_question_names_its_property() -> None:
    async with connect(provider=ScriptedProvider({})) as asker:
        with pytest.raises(UserQuestionError) as bad:
            await asker.ask([{"id": "pkg"}])
    assert bad.value.code == ErrorCode.BAD_REQUEST
    assert str(bad.value) == 'invalid request: missing required property "questions[0].question"'


async def test_a_timeout_is_a_typed_error_never_an_answer() -> None:
    async with connect(provider=ScriptedProvider({"pkg": "uv"}, delay=30)) as asker:
        with anyio.fail_after(10), pytest.raises(UserQuestionError) as late:
            await asker.ask([PKG], signal=AbortSignal.timeout(0.05))
    assert late.value.code == ErrorCode.ASK_TIMED_OUT


async def test_the_bound_tool_answers_as_the_model_reads_it() -> None:
    async with connect(provider=ScriptedProvider({"pkg": "uv"})) as asker:
        assert asker.tool.name == "ask_user_question"
        assert asker.tool.to_responses()["name"] == "ask_user_question"
        done = await asker.execute(json.dumps({"questions": [PKG]}))
        invalid = await asker.execute({"questions": [{"id": "pkg"}]})
    assert done.text == '{"answers":[{"id":"pkg","selected":["uv"]}]}'
    assert invalid.is_error
    assert (
        invalid.text
        == 'Error: invalid arguments: missing required property "questions[0].question"'
    )


class Reattaching:
    """A provider that records the rpcId each request was asked under, as a host would."""

    def __init__(self) -> None:
        self.asked: list[str | None] = []

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.asked.append(None)
        return AskUserQuestionAnswer.model_validate({"answers": [{"id": "pkg", "selected": []}]})

    async def ask_with_id(
        self, rpc_id: str, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer:
        self.asked.append(rpc_id)
        return AskUserQuestionAnswer.model_validate({"answers": [{"id": "pkg", "selected": []}]})


async def test_a_named_rpc_id_reaches_a_provider_that_can_reattach() -> None:
    provider = Reattaching()
    async with connect(provider=provider) as asker:
        await asker.ask([PKG], rpc_id="thread-7")
        await asker.ask([PKG])
    assert provider.asked == ["thread-7", None]


async def test_connect_without_a_host_says_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(URL_VARIABLE, raising=False)
    with pytest.raises(UserQuestionError) as missing:
        async with connect():
            pass
    assert missing.value.code == ErrorCode.NO_PROVIDER
    assert "UQ_URL" in str(missing.value)


async def test_connect_reads_the_host_from_uq_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(URL_VARIABLE, "http://127.0.0.1:8765/?token=secret-token")
    async with connect(session="ci-bot") as asker:
        provider = asker.provider
    assert isinstance(provider, RemoteProvider)
    assert provider.url == "http://127.0.0.1:8765/"
    assert provider.session == "ci-bot"


async def test_connect_names_the_asking_program_and_this_folder_beside_each_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(URL_VARIABLE, "http://127.0.0.1:8765/?token=secret-token")
    async with connect(client="langgraph") as asker:
        provider = asker.provider
    assert isinstance(provider, RemoteProvider)
    assert provider.origin == Origin(client="langgraph", cwd=os.getcwd())


async def test_connect_without_the_web_extra_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "user_questions.providers.remote", None)
    with pytest.raises(UserQuestionError) as missing:
        async with connect("http://127.0.0.1:8765/?token=secret-token"):
            pass
    assert missing.value.code == ErrorCode.NO_PROVIDER
    assert "pip install 'user-questions[web]'" in str(missing.value)


async def test_connect_refuses_a_provider_and_a_host_together() -> None:
    with pytest.raises(TypeError):
        async with connect("http://127.0.0.1:8765/", provider=ScriptedProvider({})):
            pass
