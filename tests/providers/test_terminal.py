"""`TerminalProvider` behind a real service: the flow, the line dialogue, and the extra."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Sequence

import anyio
import pytest

from user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    PlanReviewIntent,
    UserQuestionError,
)
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_view import QuestionView
from user_questions.providers.terminal import INSTALL_HINT, TerminalProvider, ask_with
from user_questions.service import RESOLVED_EVENT

pytestmark = pytest.mark.anyio


def _question(id: str = "deploy", *labels: str, multi: bool = False) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id=id,
        question=f"{id}?",
        options=[AskUserQuestionOption(label=label) for label in labels] or None,
        multi_select=multi or None,
    )


async def _ask(
    ctx: Context, replies: str, *questions: AskUserQuestionItem
) -> tuple[dict[str, object], str]:
    output = io.StringIO()
    ctx.user_questions.register_provider(
        TerminalProvider(input=io.StringIO(replies), output=output)
    )
    answer = await ctx.user_questions.ask(AskUserQuestionRequest(list(questions)))
    return answer.model_dump(mode="json"), output.getvalue()


async def test_a_piped_number_answers_and_the_log_shows_the_conversation(ctx: Context) -> None:
    answer, log = await _ask(ctx, "2\n", _question("deploy", "Yes", "No"))
    assert answer == {"answers": [{"id": "deploy", "selected": ["No"]}]}
    assert log.endswith("> 2\n  -> No\n")


async def test_multi_select_with_other_text_on_the_next_line(ctx: Context) -> None:
    answer, log = await _ask(
        ctx, "4, 1\nand docs\n", _question("checks", "a", "b", "c", multi=True)
    )
    assert answer == {"answers": [{"id": "checks", "selected": ["a"], "custom": "and docs"}]}
    assert "Your answer: and docs\n  -> a + Other: and docs\n" in log


async def test_a_bad_reply_is_explained_and_asked_again(ctx: Context) -> None:
    answer, log = await _ask(ctx, "9\nno\n", _question("deploy", "Yes", "No"))
    assert answer == {"answers": [{"id": "deploy", "selected": ["No"]}]}
    assert "> 9\n  ! there is no option 9; answer with a number from 1 to 3\n> no\n" in log


async def test_an_empty_line_skips_and_free_text_answers(ctx: Context) -> None:
    answer, _ = await _ask(
        ctx,
        "\nlater, maybe\n\n",
        _question("a", "x"),
        _question("b"),
    )
    assert answer == {
        "answers": [
            {"id": "a", "selected": []},
            {"id": "b", "selected": [], "custom": "later, maybe"},
        ]
    }


async def test_end_of_input_dismisses_the_request(ctx: Context) -> None:
    outcomes: list[object] = []
    ctx.on(RESOLVED_EVENT, lambda event: outcomes.append(event["outcome"]))
    with pytest.raises(UserQuestionError) as caught:
        await _ask(ctx, "", _question("deploy", "Yes"))
    assert caught.value.code == ErrorCode.ASK_CANCELLED
    assert str(caught.value) == "the user cancelled ask_user_question"
    assert outcomes == ["cancelled"]


async def test_a_batch_ends_with_a_review_where_an_answer_can_be_changed(ctx: Context) -> None:
    answer, log = await _ask(
        ctx, "1\n2\n2\n1\n\n", _question("a", "x", "y"), _question("b", "p", "q")
    )
    assert answer == {"answers": [{"id": "a", "selected": ["x"]}, {"id": "b", "selected": ["p"]}]}
    assert log.count("Your answers:") == 2
    assert "  2. b? -> q\n" in log
    assert "(your answer was: q)" in log
    assert "  2. b? -> p\n" in log


async def test_plan_review_offers_approve_first_and_answers_with_its_label(ctx: Context) -> None:
    plan = AskUserQuestionItem(
        id="plan",
        question="Approve?",
        detail="1. Ship",
        options=[AskUserQuestionOption(label="Keep planning"), AskUserQuestionOption(label="Go")],
        intent=PlanReviewIntent(approve="Go"),
    )
    approved, log = await _ask(ctx, "1\n", plan)
    assert approved == {"answers": [{"id": "plan", "selected": ["Go"]}]}
    assert "  1. Go\n  2. Keep planning\n" in log


async def test_concurrent_asks_take_turns_at_the_terminal(ctx: Context) -> None:
    output = io.StringIO()
    ctx.user_questions.register_provider(
        TerminalProvider(input=io.StringIO("1\n2\n"), output=output)
    )
    answers: dict[str, list[str]] = {}

    async def ask(question: AskUserQuestionItem) -> None:
        answer = await ctx.user_questions.ask(AskUserQuestionRequest([question]))
        answers[question.id] = answer.answers[0].selected

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, _question("first", "a", "b"))
            group.start_soon(ask, _question("second", "a", "b"))
    assert sorted(answers.values()) == [["a"], ["b"]]
    log = output.getvalue()
    assert log.index("-> ", log.index("?\n")) < log.rindex("?\n")  # one answered before the next


class _Recorder:
    """A surface whose person answers from a script and reviews from another."""

    def __init__(self, answers: list[AnswerDraft], reviews: list[int | None]) -> None:
        self.answers, self.reviews = answers, reviews
        self.asked: list[tuple[str, AnswerDraft]] = []
        self.reviewed = 0

    async def answer(self, view: QuestionView, draft: AnswerDraft) -> AnswerDraft:
        self.asked.append((view.id, draft))
        return self.answers.pop(0)

    async def review(
        self, views: Sequence[QuestionView], drafts: Sequence[AnswerDraft]
    ) -> int | None:
        self.reviewed += 1
        return self.reviews.pop(0)


async def test_a_single_question_submits_without_a_review() -> None:
    surface = _Recorder([AnswerDraft(selected=["x"])], [])
    answer = await ask_with(surface, [_question("a", "x")])
    assert answer.answers[0].selected == ["x"]
    assert surface.reviewed == 0


async def test_changing_an_answer_asks_again_from_the_earlier_draft() -> None:
    first = AnswerDraft(selected=["x"])
    surface = _Recorder([first, AnswerDraft(custom="b1"), AnswerDraft(selected=["y"])], [0, None])
    answer = await ask_with(surface, [_question("a", "x", "y"), _question("b")])
    assert [asked for asked, _ in surface.asked] == ["a", "b", "a"]
    assert surface.asked[2][1] == first
    assert answer.model_dump(mode="json") == {
        "answers": [{"id": "a", "selected": ["y"]}, {"id": "b", "selected": [], "custom": "b1"}]
    }


async def test_asking_at_a_terminal_without_the_extra_names_the_install_line(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "user_questions.providers._terminal_prompt", raising=False)
    for name in [
        "prompt_toolkit",
        *(name for name in sys.modules if name.startswith("prompt_toolkit.")),
    ]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    ctx.user_questions.register_provider(
        TerminalProvider(input=io.StringIO(), output=io.StringIO(), interactive=True)
    )
    with pytest.raises(ModuleNotFoundError) as caught:
        await ctx.user_questions.ask(AskUserQuestionRequest([_question("a", "x")]))
    assert str(caught.value).endswith(f"(prompt_toolkit is missing): {INSTALL_HINT}")


def test_importing_the_package_and_the_provider_loads_no_extra() -> None:
    code = (
        "import sys, user_questions, user_questions.providers.terminal;"
        "print(sorted({'prompt_toolkit', 'rich', 'questionary'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


DEPLOY_FORM = AskUserQuestionItem.model_validate(
    {
        "id": "deploy",
        "question": "How should it deploy?",
        "schema": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
                "canary": {"type": "boolean", "title": "Canary first"},
                "region": {
                    "type": "string",
                    "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "US"}],
                },
                "checks": {"type": "array", "items": {"enum": ["lint", "test", "e2e"]}},
            },
            "required": ["replicas"],
        },
    }
)


async def test_a_form_is_asked_field_by_field_and_its_value_keeps_its_types(
    ctx: Context,
) -> None:
    answer, log = await _ask(ctx, "11\n3\n1\n2\n3, 1\n", DEPLOY_FORM)
    assert answer == {
        "answers": [
            {
                "id": "deploy",
                "selected": [],
                "value": {"replicas": 3, "canary": True, "region": "us", "checks": ["lint", "e2e"]},
            }
        ]
    }
    assert "A whole number from 1 to 10." in log
    assert "Must be at most 10." in log  # 11 was refused, and the field asked again


async def test_a_required_field_skipped_is_asked_again_and_optional_ones_are_left_out(
    ctx: Context,
) -> None:
    answer, log = await _ask(ctx, "\n4\n\n\n\n", DEPLOY_FORM)
    assert answer == {"answers": [{"id": "deploy", "selected": [], "value": {"replicas": 4}}]}
    assert "This field is required." in log
