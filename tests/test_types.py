"""The wire vocabulary: camelCase JSON, both spellings in, unset fields absent, strict types."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, StrictStr, ValidationError

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    PlanReviewIntent,
)
from user_questions.types import WireModel


def test_unset_optional_fields_are_absent_from_json_never_null() -> None:
    item = AskUserQuestionItem(id="pkg", question="Which package manager?")
    assert item.model_dump_json() == '{"id":"pkg","question":"Which package manager?"}'
    assert item.model_dump(mode="json") == {"id": "pkg", "question": "Which package manager?"}
    assert item.model_dump() == {"id": "pkg", "question": "Which package manager?"}


def test_json_is_camel_case_and_attributes_are_snake_case() -> None:
    item = AskUserQuestionItem(
        id="t",
        question="Which targets?",
        multi_select=True,
        options=[AskUserQuestionOption(label="tests", description="Run the suite")],
    )
    assert item.multi_select is True
    assert json.loads(item.model_dump_json()) == {
        "id": "t",
        "question": "Which targets?",
        "options": [{"label": "tests", "description": "Run the suite"}],
        "multiSelect": True,
    }


def test_snake_case_and_camel_case_input_agree() -> None:
    camel = AskUserQuestionItem.model_validate({"id": "a", "question": "q", "multiSelect": True})
    snake = AskUserQuestionItem.model_validate({"id": "a", "question": "q", "multi_select": True})
    assert camel == snake


def test_false_multi_select_is_kept_because_it_is_set() -> None:
    item = AskUserQuestionItem(id="a", question="q", multi_select=False)
    assert item.model_dump(mode="json") == {"id": "a", "question": "q", "multiSelect": False}


def test_null_optional_fields_on_input_read_as_absent() -> None:
    item = AskUserQuestionItem.model_validate_json(
        '{"id":"a","question":"q","header":null,"options":null}'
    )
    assert item.model_dump_json() == '{"id":"a","question":"q"}'


def test_intent_is_discriminated_by_kind_and_serialises_its_tag() -> None:
    item = AskUserQuestionItem.model_validate(
        {
            "id": "plan",
            "question": "Approve?",
            "detail": "1. do it",
            "options": [{"label": "Approve"}, {"label": "Keep planning"}],
            "intent": {"kind": "plan-review", "approve": "Approve"},
        }
    )
    assert isinstance(item.intent, PlanReviewIntent)
    assert item.model_dump(mode="json")["intent"] == {"kind": "plan-review", "approve": "Approve"}
    assert PlanReviewIntent(approve="Go").model_dump() == {"kind": "plan-review", "approve": "Go"}


def test_unknown_intent_kind_is_rejected_on_input() -> None:
    with pytest.raises(ValidationError):
        AskUserQuestionItem.model_validate(
            {"id": "a", "question": "q", "intent": {"kind": "vote", "approve": "x"}}
        )


@pytest.mark.parametrize(
    "data",
    [
        {"id": 5, "question": "q"},
        {"id": "a", "question": "q", "options": [{"label": 1}]},
        {"id": "a", "question": "q", "multiSelect": "yes"},
        {"id": "a", "question": "q", "options": "a,b"},
    ],
)
def test_wrong_types_are_refused_not_coerced(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        AskUserQuestionItem.model_validate(data)


def test_answer_shape_matches_the_spec() -> None:
    answer = AskUserQuestionAnswer(
        answers=[
            AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"]),
            AskUserQuestionAnswerItem(id="notes", selected=[], custom="ship today"),
        ]
    )
    assert answer.model_dump_json() == (
        '{"answers":[{"id":"pkg","selected":["pnpm"]},'
        '{"id":"notes","selected":[],"custom":"ship today"}]}'
    )


def test_models_are_immutable() -> None:
    item = AskUserQuestionItem(id="a", question="q")
    with pytest.raises(ValidationError):
        item.id = "b"  # type: ignore[misc]


text = st.text(max_size=12)
options = st.builds(
    lambda label, description: {
        "label": label,
        **({"description": description} if description else {}),
    },
    text,
    st.none() | text,
)


@st.composite
def question_json(draw: st.DrawFn) -> dict[str, object]:
    data: dict[str, object] = {"id": draw(text), "question": draw(text)}
    for key, strategy in (
        ("detail", text),
        ("header", text),
        ("options", st.lists(options, max_size=4)),
        ("multiSelect", st.booleans()),
    ):
        if draw(st.booleans()):
            data[key] = draw(strategy)
    if draw(st.booleans()):
        data["intent"] = {"kind": "plan-review", "approve": draw(text)}
    return data


answer_item_json = st.builds(
    lambda id, selected, custom: {
        "id": id,
        "selected": selected,
        **({"custom": custom} if custom is not None else {}),
    },
    text,
    st.lists(text, max_size=4),
    st.none() | text,
)


@given(question_json())
def test_question_json_round_trips_unchanged(data: dict[str, object]) -> None:
    item = AskUserQuestionItem.model_validate_json(json.dumps(data))
    assert json.loads(item.model_dump_json()) == data
    assert item.model_dump(mode="json") == data


@given(st.lists(answer_item_json, max_size=4))
def test_answer_json_round_trips_unchanged(items: list[dict[str, object]]) -> None:
    data = {"answers": items}
    answer = AskUserQuestionAnswer.model_validate_json(json.dumps(data))
    assert json.loads(answer.model_dump_json()) == data


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


@given(question_json())
def test_snake_case_input_reads_as_the_camel_case_json(data: dict[str, object]) -> None:
    snake = {_snake(key): value for key, value in data.items()}
    assert AskUserQuestionItem.model_validate(snake) == AskUserQuestionItem.model_validate(data)


class _Documented(WireModel):
    """A model of this test module, its fields documented the way the wire models are."""

    plain: StrictStr
    """Told by the docstring under it."""
    given: StrictStr = Field(description="Told by the field itself.")
    """A docstring the field's own description wins over."""
    undocumented: StrictStr | None = None

    class Inner(WireModel):
        """A model nested in a class."""

        nested: StrictStr
        """Told inside the nesting class."""


class _Inheriting(_Documented):
    extra: StrictStr
    """Added by the subclass."""


def _descriptions(model: type[WireModel]) -> dict[str, str | None]:
    schema = model.model_json_schema()
    return {name: field.get("description") for name, field in schema["properties"].items()}


def test_the_docstring_under_a_field_is_its_description_in_json_schema() -> None:
    assert _descriptions(_Documented) == {
        "plain": "Told by the docstring under it.",
        "given": "Told by the field itself.",
        "undocumented": None,
    }
    assert _descriptions(_Documented.Inner) == {"nested": "Told inside the nesting class."}
    assert _descriptions(_Inheriting) == {
        **_descriptions(_Documented),
        "extra": "Added by the subclass.",
    }


def test_a_model_defined_in_a_function_documents_its_fields_too() -> None:
    class Local(WireModel):
        answer: StrictStr
        """Told in a function."""

    assert _descriptions(Local) == {"answer": "Told in a function."}
    assert Local.model_fields["answer"].description == "Told in a function."
