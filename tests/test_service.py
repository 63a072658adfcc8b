"""`ctx.user_questions`: the README's "Errors" table row by row, byte for byte, the abort race,
task cancellation, provider errors, answer checking and events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from user_questions import (
    AbortController,
    AbortSignal,
    Agent,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    PlanReviewIntent,
    ScriptedProvider,
    UserQuestionError,
    UserQuestionService,
)

pytestmark = pytest.mark.anyio


def q(id: str = "pkg", *labels: str, **fields: Any) -> AskUserQuestionItem:
    options = [AskUserQuestionOption(label=label) for label in labels] if labels else None
    return AskUserQuestionItem(id=id, question=f"{id}?", options=options, **fields)


def answer(*items: AskUserQuestionAnswerItem) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer(answers=list(items))


def item(id: str, *selected: str, custom: str | None = None) -> AskUserQuestionAnswerItem:
    return AskUserQuestionAnswerItem(id=id, selected=list(selected), custom=custom)


async def failure(ctx: Context, request: AskUserQuestionRequest) -> UserQuestionError:
    with pytest.raises(UserQuestionError) as caught:
        await ctx.user_questions.ask(request)
    return caught.value


class Waiting:
    """A provider that waits until cancelled, recording what happened to it."""

    def __init__(self, on_cancel: BaseException | None = None) -> None:
        self.started = anyio.Event()
        self.cancelled = False
        self.on_cancel = on_cancel

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            if self.on_cancel is not None:
                raise self.on_cancel from None
            raise
        raise AssertionError("unreachable")


async def abort_once_shown(
    ctx: Context, provider: Waiting, controller: AbortController
) -> UserQuestionError:
    """Ask one question with the controller's signal and abort once the provider shows it."""

    async def abort_when_shown() -> None:
        await provider.started.wait()
        controller.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_when_shown)
            error = await failure(ctx, AskUserQuestionRequest([q()], signal=controller.signal))
    return error


# -- registration -------------------------------------------------------------------------


async def test_second_provider_is_rejected_and_first_stays(ctx: Context) -> None:
    first, second = ScriptedProvider({"pkg": "pnpm"}), ScriptedProvider({"pkg": "npm"})
    ctx.user_questions.register_provider(first)
    with pytest.raises(UserQuestionError) as caught:
        ctx.user_questions.register_provider(second)
    assert str(caught.value) == "a user-questions provider is already registered"
    assert caught.value.code == "DUPLICATE_PROVIDER"
    result = await ctx.user_questions.ask(AskUserQuestionRequest([q("pkg", "pnpm", "npm")]))
    assert result.answers[0].selected == ["pnpm"]


async def test_provider_disposer_is_idempotent_and_a_stale_one_keeps_later_registrations(
    ctx: Context,
) -> None:
    provider = ScriptedProvider({})
    dispose = ctx.user_questions.register_provider(provider)
    dispose()
    dispose()
    assert ctx.user_questions.provider is None
    ctx.user_questions.register_provider(provider)
    dispose()
    assert ctx.user_questions.provider is provider


async def test_unloading_the_plugin_that_registered_a_provider_unregisters_it(ctx: Context) -> None:
    provider = ScriptedProvider({})
    fiber = ctx.plugin(lambda plugin_ctx: plugin_ctx.user_questions.register_provider(provider))
    assert ctx.user_questions.provider is provider
    fiber.dispose()
    assert ctx.user_questions.provider is None
    ctx.plugin(lambda plugin_ctx: plugin_ctx.user_questions.register_provider(provider))
    assert ctx.user_questions.provider is provider


# -- the check table ----------------------------------------------------------------------


async def test_aborted_signal_fails_first_with_ask_aborted(ctx: Context) -> None:
    controller = AbortController()
    controller.abort()
    error = await failure(ctx, AskUserQuestionRequest([], signal=controller.signal))
    assert str(error) == "ask_user_question was aborted before the user answered"
    assert error.code == "ASK_ABORTED"


async def test_timed_out_signal_fails_first_with_ask_timed_out(ctx: Context) -> None:
    signal = AbortSignal.timeout(0)
    error = await failure(ctx, AskUserQuestionRequest([], signal=signal))
    assert str(error) == "ask_user_question timed out before the user answered"
    assert error.code == "ASK_TIMED_OUT"


async def test_no_questions_and_no_provider_is_empty_questions(ctx: Context) -> None:
    error = await failure(ctx, AskUserQuestionRequest([]))
    assert str(error) == "ask_user_question requires at least one question"
    assert error.code == "EMPTY_QUESTIONS"


async def test_agent_that_is_not_live_is_caller_not_live(ctx: Context) -> None:
    error = await failure(ctx, AskUserQuestionRequest([q()], agent=Agent(id="ghost")))
    assert str(error) == (
        "human interaction requires the exact live calling agent when an agent is supplied"
    )
    assert error.code == "CALLER_NOT_LIVE"


async def test_agent_with_the_live_id_but_another_instance_is_caller_not_live(ctx: Context) -> None:
    ctx.agents.enter(Agent(id="a"))
    error = await failure(ctx, AskUserQuestionRequest([q()], agent=Agent(id="a")))
    assert error.code == "CALLER_NOT_LIVE"


async def test_agent_given_without_an_agent_registry_is_caller_not_live() -> None:
    ctx = Context()
    ctx.plugin(UserQuestionService)
    error = await failure(ctx, AskUserQuestionRequest([q()], agent=Agent(id="a")))
    assert error.code == "CALLER_NOT_LIVE"


async def test_owned_agent_is_delegated_caller(ctx: Context) -> None:
    root, child = Agent(id="root"), Agent(id="child")
    ctx.agents.enter(root)
    ctx.agents.enter(child, owner=root)
    error = await failure(ctx, AskUserQuestionRequest([q()], agent=child))
    assert str(error) == (
        "human interaction is unavailable while the calling agent is owned by another live "
        "agent; include the unresolved question or decision in the child agent's final result"
    )
    assert error.code == "DELEGATED_CALLER"


async def test_delegated_caller_with_a_bad_intent_is_delegated_caller(ctx: Context) -> None:
    root, child = Agent(id="root"), Agent(id="child")
    ctx.agents.enter(root)
    ctx.agents.enter(child, owner=root)
    bad = q("plan", "Yes", detail="plan", intent=PlanReviewIntent(approve="Go"))
    error = await failure(ctx, AskUserQuestionRequest([bad], agent=child))
    assert error.code == "DELEGATED_CALLER"


async def test_live_root_agent_may_ask(ctx: Context) -> None:
    root = Agent(id="root")
    ctx.agents.enter(root)
    ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm"}))
    result = await ctx.user_questions.ask(AskUserQuestionRequest([q("pkg", "pnpm")], agent=root))
    assert result.answers == [item("pkg", "pnpm")]


async def test_approve_label_naming_no_option_is_bad_intent(ctx: Context) -> None:
    bad = q("plan", "Yes", "No", detail="x", intent=PlanReviewIntent(approve="Approve ✓"))
    error = await failure(ctx, AskUserQuestionRequest([bad]))
    assert str(error) == (
        'question plan declares intent plan-review whose approve label "Approve ✓" '
        "names none of its options"
    )
    assert error.code == "BAD_INTENT"


async def test_intent_on_an_optionless_question_is_bad_intent(ctx: Context) -> None:
    bad = q("plan", detail="x", intent=PlanReviewIntent(approve="Approve"))
    error = await failure(ctx, AskUserQuestionRequest([bad]))
    assert str(error) == (
        'question plan declares intent plan-review whose approve label "Approve" '
        "names none of its options"
    )


async def test_intent_without_detail_is_bad_intent(ctx: Context) -> None:
    bad = q("plan", "Approve", intent=PlanReviewIntent(approve="Approve"))
    error = await failure(ctx, AskUserQuestionRequest([bad]))
    assert str(error) == "question plan declares intent plan-review without the detail it reviews"
    assert error.code == "BAD_INTENT"


async def test_intent_with_empty_detail_passes(ctx: Context) -> None:
    ctx.user_questions.register_provider(ScriptedProvider({"plan": "Approve"}))
    ok = q("plan", "Approve", detail="", intent=PlanReviewIntent(approve="Approve"))
    result = await ctx.user_questions.ask(AskUserQuestionRequest([ok]))
    assert result.answers == [item("plan", "Approve")]


async def test_bad_intent_with_no_provider_is_bad_intent(ctx: Context) -> None:
    bad = q("plan", "Yes", detail="x", intent=PlanReviewIntent(approve="Go"))
    assert (await failure(ctx, AskUserQuestionRequest([bad]))).code == "BAD_INTENT"


async def test_intents_are_checked_in_question_order(ctx: Context) -> None:
    first = q("first", "A", intent=PlanReviewIntent(approve="A"))
    second = q("second", "A", detail="d", intent=PlanReviewIntent(approve="B"))
    error = await failure(ctx, AskUserQuestionRequest([q("ok"), first, second]))
    assert str(error) == "question first declares intent plan-review without the detail it reviews"


async def test_repeated_question_id_is_bad_question(ctx: Context) -> None:
    error = await failure(ctx, AskUserQuestionRequest([q("Größe"), q("Größe")]))
    assert str(error) == (
        'question id "Größe" appears more than once; ids must be unique within a request'
    )
    assert error.code == "BAD_QUESTION"


async def test_repeated_option_label_is_bad_question(ctx: Context) -> None:
    error = await failure(ctx, AskUserQuestionRequest([q("pkg", "pnpm", "npm", "pnpm")]))
    assert str(error) == 'question pkg offers the option label "pnpm" more than once'
    assert error.code == "BAD_QUESTION"


async def test_intent_is_checked_before_duplicates(ctx: Context) -> None:
    bad = q("plan", "A", intent=PlanReviewIntent(approve="A"))
    error = await failure(ctx, AskUserQuestionRequest([q("x"), q("x"), bad]))
    assert error.code == "BAD_INTENT"


async def test_no_provider_is_checked_last(ctx: Context) -> None:
    error = await failure(ctx, AskUserQuestionRequest([q()]))
    assert str(error) == "no user-questions provider is registered"
    assert error.code == "NO_PROVIDER"


async def test_aborted_signal_with_no_questions_is_ask_aborted(ctx: Context) -> None:
    controller = AbortController()
    controller.abort()
    error = await failure(ctx, AskUserQuestionRequest([], signal=controller.signal))
    assert error.code == "ASK_ABORTED"


# -- the wait -----------------------------------------------------------------------------


async def test_the_provider_gets_the_same_request_object(ctx: Context) -> None:
    provider = ScriptedProvider({"pkg": "pnpm"})
    ctx.user_questions.register_provider(provider)
    request = AskUserQuestionRequest([q("pkg", "pnpm")])
    await ctx.user_questions.ask(request)
    assert provider.seen == [request]
    assert provider.seen[0] is request


async def test_abort_while_waiting_withdraws_the_prompt_and_raises_ask_aborted(
    ctx: Context,
) -> None:
    provider = Waiting()
    ctx.user_questions.register_provider(provider)
    controller = AbortController()
    error = await abort_once_shown(ctx, provider, controller)
    assert error.code == "ASK_ABORTED"
    assert str(error) == "ask_user_question was aborted before the user answered"
    assert provider.cancelled


async def test_timeout_while_waiting_raises_ask_timed_out(ctx: Context) -> None:
    provider = Waiting()
    ctx.user_questions.register_provider(provider)
    with anyio.fail_after(5):
        error = await failure(ctx, AskUserQuestionRequest([q()], signal=AbortSignal.timeout(0.05)))
    assert error.code == "ASK_TIMED_OUT"
    assert provider.cancelled


async def test_timeout_made_outside_the_loop_still_times_out(ctx: Context) -> None:
    ctx.user_questions.register_provider(Waiting())
    signal = await anyio.to_thread.run_sync(lambda: AbortSignal.timeout(0.05))
    with anyio.fail_after(5):
        error = await failure(ctx, AskUserQuestionRequest([q()], signal=signal))
    assert error.code == "ASK_TIMED_OUT"


async def test_provider_error_during_the_abort_becomes_the_cause(ctx: Context) -> None:
    cause = RuntimeError("prompt torn down badly")
    provider = Waiting(on_cancel=cause)
    ctx.user_questions.register_provider(provider)
    controller = AbortController()
    error = await abort_once_shown(ctx, provider, controller)
    assert error.code == "ASK_ABORTED"
    assert error.__cause__ is cause


async def test_provider_user_question_error_during_the_abort_is_raised_as_it_is(
    ctx: Context,
) -> None:
    cancelled = UserQuestionError("the user cancelled ask_user_question", "ASK_CANCELLED")
    provider = Waiting(on_cancel=cancelled)
    ctx.user_questions.register_provider(provider)
    controller = AbortController()
    error = await abort_once_shown(ctx, provider, controller)
    assert error is cancelled


async def test_cancelling_the_asking_task_cancels_the_provider_and_propagates(
    ctx: Context,
) -> None:
    provider = Waiting()
    ctx.user_questions.register_provider(provider)
    finished = False
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def asker() -> None:
                nonlocal finished
                await ctx.user_questions.ask(AskUserQuestionRequest([q()]))
                finished = True

            tg.start_soon(asker)
            await provider.started.wait()
            tg.cancel_scope.cancel()
    assert provider.cancelled
    assert not finished


async def test_other_provider_exceptions_propagate_unchanged(ctx: Context) -> None:
    boom = ConnectionError("surface went away")

    class Broken:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            raise boom

    ctx.user_questions.register_provider(Broken())
    with pytest.raises(ConnectionError) as caught:
        await ctx.user_questions.ask(AskUserQuestionRequest([q()]))
    assert caught.value is boom
    with pytest.raises(ConnectionError) as caught:
        await ctx.user_questions.ask(AskUserQuestionRequest([q()], signal=AbortController().signal))
    assert caught.value is boom


async def test_an_answer_after_an_abort_is_not_delivered(ctx: Context) -> None:
    controller = AbortController()

    class AnswersAnyway:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            controller.abort()
            return answer(item("pkg"))

    ctx.user_questions.register_provider(AnswersAnyway())
    error = await failure(ctx, AskUserQuestionRequest([q()], signal=controller.signal))
    assert error.code == "ASK_ABORTED"


# -- answer checking ----------------------------------------------------------------------


class provider_returning:
    """A provider that returns `result` as it is, whatever it is."""

    def __init__(self, result: object) -> None:
        self.result = result

    async def ask(self, request: AskUserQuestionRequest) -> Any:
        return self.result


@pytest.mark.parametrize(
    ("questions", "result", "message"),
    [
        (
            [q("a"), q("b")],
            answer(item("a")),
            "provider answer for question b: missing; answer every question once",
        ),
        (
            [q("a")],
            answer(item("a"), item("a")),
            "provider answer for question a: answered more than once",
        ),
        (
            [q("a")],
            answer(item("a"), item("zz")),
            'provider answer for question "zz": no such question in the request',
        ),
        (
            [q("a", "x", "y")],
            answer(item("a", "z")),
            'provider answer for question a: "z" is not one of its options',
        ),
        (
            [q("a", "x", "y", multi_select=True)],
            answer(item("a", "x", "x")),
            'provider answer for question a: "x" is selected more than once',
        ),
        (
            [q("a", "x", "y")],
            answer(item("a", "x", "y")),
            "provider answer for question a: a single-select question takes one label, got 2",
        ),
        (
            [q("a", "x", "y")],
            answer(item("a", "x", custom="other")),
            "provider answer for question a: a single-select answer has both a label and "
            "custom text",
        ),
        (
            [q("a")],
            answer(item("a", "x")),
            "provider answer for question a: the question has no options, so nothing can be "
            "selected",
        ),
        (
            [q("a")],
            answer(item("a", custom="  \n")),
            "provider answer for question a: custom text is blank; omit custom instead",
        ),
        (
            [q("a")],
            {"answers": []},
            "provider answer has the wrong type: expected AskUserQuestionAnswer, got dict",
        ),
    ],
)
async def test_a_bad_provider_answer_is_bad_answer(
    ctx: Context, questions: list[AskUserQuestionItem], result: object, message: str
) -> None:
    ctx.user_questions.register_provider(provider_returning(result))
    error = await failure(ctx, AskUserQuestionRequest(questions))
    assert error.code == "BAD_ANSWER"
    assert str(error) == message


async def test_the_answer_lists_items_in_question_order_and_labels_in_option_order(
    ctx: Context,
) -> None:
    questions = [q("a", "x", "y", "z", multi_select=True), q("b")]
    given = answer(item("b", custom=" keep my spaces "), item("a", "z", "x", custom="more"))
    ctx.user_questions.register_provider(provider_returning(given))
    result = await ctx.user_questions.ask(AskUserQuestionRequest(questions))
    assert result.model_dump(mode="json") == {
        "answers": [
            {"id": "a", "selected": ["x", "z"], "custom": "more"},
            {"id": "b", "selected": [], "custom": " keep my spaces "},
        ]
    }


async def test_a_well_formed_answer_is_returned_as_it_is(ctx: Context) -> None:
    given = answer(item("a", "x"), item("b"))
    ctx.user_questions.register_provider(provider_returning(given))
    result = await ctx.user_questions.ask(AskUserQuestionRequest([q("a", "x"), q("b")]))
    assert result is given


# -- events -------------------------------------------------------------------------------


def record(ctx: Context) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for name in ("user-questions/requested", "user-questions/resolved"):

        def listener(event: dict[str, Any], name: str = name) -> None:
            events.append((name, event))

        ctx.on(name, listener)
    return events


async def test_events_follow_an_answered_question(ctx: Context) -> None:
    events = record(ctx)
    ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm"}))
    request = AskUserQuestionRequest([q("pkg", "pnpm")])
    result = await ctx.user_questions.ask(request)
    assert events == [
        ("user-questions/requested", {"request": request}),
        ("user-questions/resolved", {"request": request, "outcome": "answered", "answer": result}),
    ]


@pytest.mark.parametrize(
    ("make_provider", "signal_factory", "outcome", "code"),
    [
        (lambda: ScriptedProvider({}), lambda: None, "cancelled", "ASK_CANCELLED"),
        (lambda: Waiting(), lambda: AbortSignal.timeout(0.02), "timed-out", "ASK_TIMED_OUT"),
        (lambda: provider_returning({}), lambda: None, "failed", "BAD_ANSWER"),
    ],
)
async def test_events_follow_a_failed_question(
    ctx: Context,
    make_provider: Callable[[], Any],
    signal_factory: Callable[[], AbortSignal | None],
    outcome: str,
    code: str,
) -> None:
    events = record(ctx)
    ctx.user_questions.register_provider(make_provider())
    request = AskUserQuestionRequest([q()], signal=signal_factory())
    with anyio.fail_after(5):
        error = await failure(ctx, request)
    assert error.code == code
    assert [name for name, _ in events] == ["user-questions/requested", "user-questions/resolved"]
    assert events[1][1] == {"request": request, "outcome": outcome, "error": error}


async def test_an_aborted_ask_resolves_as_aborted(ctx: Context) -> None:
    events = record(ctx)
    provider = Waiting()
    ctx.user_questions.register_provider(provider)
    controller = AbortController()
    await abort_once_shown(ctx, provider, controller)
    assert events[1][1]["outcome"] == "aborted"


async def test_a_cancelled_task_resolves_as_aborted(ctx: Context) -> None:
    events = record(ctx)
    provider = Waiting()
    ctx.user_questions.register_provider(provider)
    async with anyio.create_task_group() as tg:
        tg.start_soon(ctx.user_questions.ask, AskUserQuestionRequest([q()]))
        await provider.started.wait()
        tg.cancel_scope.cancel()
    assert events[1][1]["outcome"] == "aborted"
    assert events[1][1]["error"].code == "ASK_ABORTED"


async def test_a_provider_crash_resolves_as_failed_with_the_error(ctx: Context) -> None:
    events = record(ctx)
    boom = RuntimeError("boom")

    class Broken:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            raise boom

    ctx.user_questions.register_provider(Broken())
    with pytest.raises(RuntimeError):
        await ctx.user_questions.ask(AskUserQuestionRequest([q()]))
    assert events[1][1]["outcome"] == "failed"
    assert events[1][1]["error"] is boom


async def test_an_interrupt_resolves_as_aborted_and_propagates(ctx: Context) -> None:
    events = record(ctx)

    class Interrupted:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            raise KeyboardInterrupt

    ctx.user_questions.register_provider(Interrupted())
    with pytest.raises(KeyboardInterrupt):
        await ctx.user_questions.ask(AskUserQuestionRequest([q()]))
    assert events[1][1]["outcome"] == "aborted"
    assert isinstance(events[1][1]["error"], KeyboardInterrupt)


async def test_requests_failing_the_checks_emit_no_events(ctx: Context) -> None:
    events = record(ctx)
    await failure(ctx, AskUserQuestionRequest([q()]))
    assert events == []
