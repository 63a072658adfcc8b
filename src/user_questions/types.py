"""Wire vocabulary: the JSON shapes every surface, process and language shares.

This module imports nothing from the package, so a browser test, another process or a bridge can
load the vocabulary without the service, the kernel or any extra.

Conventions (README, "Public API and key types"): attributes are snake_case and JSON is
camelCase; both spellings are accepted on input; an optional field that is not set is absent from
JSON, never `null`, with the default arguments of `model_dump()`, `model_dump(mode="json")` and
`model_dump_json()`. On input a `null` optional field is read as absent, because OpenAI's strict
tool mode sends one for every field the model left out. Unknown keys are ignored so that a newer
peer can add fields.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import sys
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionIntent",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "PlanReviewIntent",
    "WireModel",
]


@functools.cache
def _field_docstrings(module: str) -> dict[str, dict[str, str]]:
    """The docstrings under the attributes of each class of `module`, by qualified name; none when
    its source cannot be read (as pydantic leaves them then).

    Pydantic's `use_attribute_docstrings` reads them too, but before Python 3.13 it finds each
    class's source by matching every frame of the stack to a module, which makes `inspect` map
    every loaded module to its file: over a third of defining and building the models, paid by
    every process that loads the vocabulary. Here a module's source is parsed once, with pydantic's
    rule: a string statement right after an annotated attribute documents it.
    """
    try:
        source = inspect.getsource(sys.modules[module])
    except (KeyError, OSError, TypeError):
        return {}
    found: dict[str, dict[str, str]] = {}
    _collect(ast.parse(source).body, "", found)
    return found


def _collect(body: list[ast.stmt], prefix: str, found: dict[str, dict[str, str]]) -> None:
    for node in body:
        if isinstance(node, ast.ClassDef):
            name = prefix + node.name
            found.setdefault(name, _documented(node.body))
            _collect(node.body, f"{name}.", found)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            _collect(node.body, f"{prefix}{node.name}.<locals>.", found)


def _documented(body: list[ast.stmt]) -> dict[str, str]:
    return {
        target.target.id: inspect.cleandoc(docstring.value.value)
        for target, docstring in itertools.pairwise(body)
        if isinstance(target, ast.AnnAssign)
        and isinstance(target.target, ast.Name)
        and isinstance(docstring, ast.Expr)
        and isinstance(docstring.value, ast.Constant)
        and isinstance(docstring.value.value, str)
    }


class WireModel(BaseModel):
    """Base of every wire model: camelCase JSON, both spellings on input, unset fields absent."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        frozen=True,
        defer_build=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # The docstring under a field is its description, in JSON Schema too, as pydantic's
        # `use_attribute_docstrings` makes it but at a fraction of its cost (`_field_docstrings`).
        # It is set before the schema is built: `defer_build` (which a subclass must keep) builds
        # it on first use, which also spares a process the models it never uses.
        # `None` is never a meaningful value on the wire: a field holding it is absent. Said per
        # field (`exclude_if`), pydantic's serializer skips it in its own code, about four times
        # faster than a wrap serializer filtering each model's dict in Python (`benchmarks/`).
        super().__pydantic_init_subclass__(**kwargs)
        documented = _field_docstrings(cls.__module__).get(cls.__qualname__, {})
        for name, field in cls.model_fields.items():
            if field.description is None and name in documented:
                field.description = documented[name]
            if field.exclude_if is None:
                field.exclude_if = _is_none


def _is_none(value: object) -> bool:
    return value is None


class AskUserQuestionOption(WireModel):
    """One selectable answer offered to the user."""

    label: StrictStr
    """User-facing label, and the value returned in `selected` when it is chosen."""
    description: StrictStr | None = None
    """Optional extra context rendered by capable UIs."""


class PlanReviewIntent(WireModel):
    """A plan submitted for review: `detail` is the plan, and the decision approves or declines it.

    The approving option is named rather than positional, so no UI infers the verdict from order.
    """

    # On the wire the tag is required: it is how a peer tells intents apart.
    model_config = ConfigDict(json_schema_extra={"required": ["kind", "approve"]})

    kind: Literal["plan-review"] = "plan-review"
    """The intent's tag."""
    approve: StrictStr
    """The option label that approves the plan; every other option declines it."""


AskUserQuestionIntent = Annotated[PlanReviewIntent, Field(discriminator="kind")]
"""A caller-declared presentation intent, tagged by `kind` so further intents can be added.

An intent changes presentation only: a UI that honours it answers with the same labels a generic
UI would, and a UI that does not know a `kind` renders the generic option list.
"""


class AskUserQuestionItem(WireModel):
    """One question in a request."""

    id: StrictStr
    """Stable caller-provided question id, echoed in the answer."""
    question: StrictStr
    """The question to display."""
    detail: StrictStr | None = None
    """Supporting markdown shown with the question, never an option label; a plan review's plan."""
    header: StrictStr | None = None
    """Optional short heading or group label."""
    options: list[AskUserQuestionOption] | None = None
    """Optional choices; without them the question takes free text only."""
    multi_select: StrictBool | None = None
    """Whether more than one option may be selected; absent means single-select."""
    intent: AskUserQuestionIntent | None = None
    """Optional presentation intent for capable UIs; absent asks for the generic option list."""
    schema_: Annotated[dict[str, Any] | None, WithJsonSchema({"type": "object"})] = Field(
        default=None, alias="schema"
    )
    """Optional form the answer fills in (JSON key `schema`): a JSON Schema for a flat object,
    the subset MCP elicitation defines. A question has options, a schema, or neither (free
    text); its answer's `value` holds the object."""


class AskUserQuestionAnswerItem(WireModel):
    """The answer to one question."""

    id: StrictStr
    """The answered question's id."""
    selected: list[StrictStr]
    """Chosen option labels, in option order; empty when skipped or answered with custom text."""
    custom: StrictStr | None = None
    """Free "Other" text the user typed; on a single-select question it replaces the choice."""
    note: StrictStr | None = None
    """A remark the user added beside the answer, never instead of it: "approve, but don't
    touch the lockfile". At most 4,000 characters."""
    value: dict[str, Any] | None = None
    """The object that fills in the question's form (`schema`); absent when it was skipped."""
    edited: dict[str, Any] | None = None
    """An approval allowed with changes: the call's whole new input, replacing the one asked
    about (never merged into it). Only with the approving option, on an approval whose agent
    takes a changed call (`approval.editable`)."""


class AskUserQuestionAnswer(WireModel):
    """The human's answer: one item per question id, in question order."""

    answers: list[AskUserQuestionAnswerItem]
    """One item per question of the request."""
