"""A question's form and the one check of its value: the shared cases (the TypeScript client
answers them word for word too), and the answer checks every surface goes through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from user_questions._checks import check_answer, check_request
from user_questions._reading.forms import form_fields, schema_problem, value_problem
from user_questions.errors import UserQuestionError
from user_questions.frames import Approval
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

CASES = json.loads(
    (Path(__file__).parents[1] / "clients/typescript/test/form-cases.json").read_text("utf-8")
)
DEPLOY: dict[str, Any] = CASES["forms"]["deploy"]


def _form(schema: object) -> Any:
    return CASES["forms"][schema] if isinstance(schema, str) else schema


@pytest.mark.parametrize("case", CASES["values"], ids=lambda case: json.dumps(case["value"]))
def test_each_value_gets_its_problem_naming_the_field(case: dict[str, Any]) -> None:
    assert value_problem(_form(case["schema"]), case["value"]) == case["problem"]


@pytest.mark.parametrize("case", CASES["schemas"], ids=lambda case: json.dumps(case["schema"]))
def test_each_schema_gets_its_problem(case: dict[str, Any]) -> None:
    assert schema_problem(_form(case["schema"])) == case["problem"]


def test_the_cases_cover_what_a_refusal_must_name() -> None:
    problems = {case["problem"] for case in CASES["values"]}
    assert "value.replicas: must be at most 10" in problems
    assert None in problems
    assert sum(case["problem"] is None for case in CASES["values"]) >= 10


def test_fields_are_read_in_order_with_their_choices_and_defaults() -> None:
    fields = form_fields(DEPLOY)
    assert [field.key for field in fields] == list(DEPLOY["properties"])
    replicas, _ratio, env, tier, regions, tags, notify, *_ = fields
    assert (replicas.kind, replicas.minimum, replicas.maximum, replicas.default) == (
        "integer",
        1,
        10,
        2,
    )
    assert replicas.required
    assert env.required
    assert not tier.required
    assert [(choice.value, choice.title) for choice in env.choices] == [
        ("prod", "Production"),
        ("dev", "Development"),
    ]
    assert tier.choices[1].title == "Silver"
    assert regions.kind == "choices"
    assert (regions.min_items, regions.max_items) == (1, 2)
    assert tags.choices[0].title == "a"
    assert notify.has_default
    assert notify.default is True
    assert replicas.hint() == "A whole number from 1 to 10."
    assert regions.hint() == "Choose 1 to 2 choices."


FORM = AskUserQuestionItem.model_validate({"id": "deploy", "question": "Deploy?", "schema": DEPLOY})
PICK = AskUserQuestionItem.model_validate(
    {"id": "pm", "question": "Which?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
)
CARD = AskUserQuestionItem.model_validate(
    {
        "id": "approval",
        "question": "Allow Bash?",
        "options": [{"label": "Allow"}, {"label": "Allow and don't ask again"}, {"label": "Deny"}],
    }
)
CALL = Approval(tool="Bash", input={"command": "rm -rf build/"}, editable=True)


def _answer(*items: dict[str, Any]) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer.model_validate({"answers": list(items)})


def _refusal(questions: list[AskUserQuestionItem], answer: AskUserQuestionAnswer, **kw: Any) -> str:
    with pytest.raises(UserQuestionError) as caught:
        check_answer(questions, answer, **kw)
    assert caught.value.code == "BAD_ANSWER"
    return caught.value.message


def test_a_form_question_is_answered_with_a_value_that_fits_it() -> None:
    value = {"replicas": 3, "env": "prod", "regions": ["eu"], "notify": False}
    answer = _answer({"id": "deploy", "selected": [], "value": value, "note": "after lunch"})
    checked = check_answer([FORM], answer)
    assert checked.answers[0].value == value
    assert isinstance(checked.answers[0].value["replicas"], int)
    assert checked.answers[0].note == "after lunch"
    assert check_answer([FORM], _answer({"id": "deploy", "selected": []})).answers[0].value is None
    assert _refusal(
        [FORM], _answer({"id": "deploy", "selected": [], "value": {"replicas": 11, "env": "prod"}})
    ) == ("provider answer for question deploy: value.replicas: must be at most 10")
    assert _refusal([FORM], _answer({"id": "deploy", "selected": [], "custom": "3"})) == (
        "provider answer for question deploy: a form is answered with its value, not custom text"
    )
    assert _refusal([PICK], _answer({"id": "pm", "selected": ["npm"], "value": {"a": 1}})) == (
        "provider answer for question pm: the question asks for no form, so it takes no value"
    )


def test_a_note_goes_beside_any_answer_and_is_bounded() -> None:
    for item in (
        {"id": "pm", "selected": ["pnpm"], "note": "pin the version"},
        {"id": "pm", "selected": [], "custom": "yarn", "note": "berry"},
        {"id": "pm", "selected": [], "note": "either is fine"},
    ):
        assert check_answer([PICK], _answer(item)).answers[0] == AskUserQuestionAnswerItem(**item)
    too_long = _answer({"id": "pm", "selected": ["npm"], "note": "x" * 4001})
    assert _refusal([PICK], too_long) == (
        "provider answer for question pm: note is 4001 characters long; at most 4000 are allowed"
    )
    assert _refusal([PICK], _answer({"id": "pm", "selected": ["npm"], "note": "  "})) == (
        "provider answer for question pm: note is blank; omit note instead"
    )
    assert _refusal([PICK], _answer({"id": "pm", "selected": ["npm"], "note": "a\x00"})) == (
        "provider answer for question pm: note holds a NUL character (U+0000)"
    )


def test_an_edit_goes_only_with_allow_on_an_editable_approval() -> None:
    edited = {"command": "rm -rf build/tmp"}
    allow = _answer({"id": "approval", "selected": ["Allow"], "edited": edited})
    assert check_answer([CARD], allow, CALL).answers[0].edited == edited
    prefix = "provider answer for question approval: "
    deny = _answer({"id": "approval", "selected": ["Deny"], "edited": edited})
    assert _refusal([CARD], deny, approval=CALL) == (
        prefix + 'edited goes with "Allow", the option that allows once'
    )
    always = _answer(
        {"id": "approval", "selected": ["Allow and don't ask again"], "edited": edited}
    )
    assert _refusal([CARD], always, approval=CALL) == (
        prefix + 'edited goes with "Allow", the option that allows once'
    )
    fixed = CALL.model_copy(update={"editable": None})
    assert _refusal([CARD], allow, approval=fixed) == (
        prefix + "the agent cannot take a changed Bash call, so it cannot be edited"
    )
    assert _refusal([CARD], allow) == prefix + "edited goes with an approval card only"
    same = _answer({"id": "approval", "selected": ["Allow"], "edited": dict(CALL.input)})
    assert _refusal([CARD], same, approval=CALL) == (
        prefix + "the edited call is the call as asked; allow it without edited"
    )
    huge = _answer({"id": "approval", "selected": ["Allow"], "edited": {"content": "x" * 500_000}})
    assert "at most 500000 are allowed" in _refusal([CARD], huge, approval=CALL)
    nul = _answer({"id": "approval", "selected": ["Allow"], "edited": {"args": ["a", "b\x00"]}})
    assert _refusal([CARD], nul, approval=CALL) == (
        prefix + "edited.args[1] holds a NUL character (U+0000)"
    )


def _request_refusal(question: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(UserQuestionError) as caught:
        check_request([AskUserQuestionItem.model_validate(question)], None, None, None)
    return caught.value.code, caught.value.message


def test_a_request_asks_only_forms_it_can_show() -> None:
    check_request([FORM], None, None, None)
    both = {"id": "f", "question": "F?", "options": [{"label": "x"}], "schema": DEPLOY}
    assert _request_refusal(both) == (
        "BAD_QUESTION",
        "question f has both options and a schema; a question has options, a schema, or neither",
    )
    nested = {
        "id": "f",
        "question": "F?",
        "schema": {"type": "object", "properties": {"a": {"type": "object"}}},
    }
    assert _request_refusal(nested) == (
        "BAD_QUESTION",
        "question f asks for a form this package cannot ask: schema.properties.a.type: must be "
        'one of "string", "number", "integer", "boolean", "array"',
    )
    many = {"type": "object", "properties": {f"f{n}": {"type": "boolean"} for n in range(65)}}
    assert _request_refusal({"id": "f", "question": "F?", "schema": many}) == (
        "LIMIT_EXCEEDED",
        'property "questions[0].schema.properties" holds 65 fields; at most 64 are allowed',
    )
    titled = {"type": "object", "properties": {"n": {"type": "integer", "title": "t" * 1001}}}
    assert _request_refusal({"id": "f", "question": "F?", "schema": titled}) == (
        "LIMIT_EXCEEDED",
        'property "questions[0].schema.properties.n.title" is 1001 characters long; at most '
        "1000 are allowed",
    )
