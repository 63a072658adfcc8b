"""The request and answer checks of `ask()`, in the order and with the exact messages of the
README's "Errors" table.

Pure functions over the wire models. Bad requests are caught here, at the asker where the mistake
is, rather than in each UI; bad answers are caught before they reach the agent. Check 7, the sizes
of `limits` and the characters text may hold (`_reading.text`), comes after the seam's own
checks, so every surface that checks a request (the service, the host, the bridges) refuses an
oversized one alike.
Every check is linear in the size of the request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from user_questions._hooks.approval_card import ALLOW
from user_questions._reading.forms import schema_problem, schema_texts, value_problem
from user_questions._reading.json_reader import path_text
from user_questions._reading.text import text_problem
from user_questions.abort import AbortSignal, is_timeout
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_ID_LENGTH, Approval
from user_questions.limits import (
    MAX_ANSWER_NOTE_LENGTH,
    MAX_CUSTOM_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_DETAIL_LENGTH,
    MAX_EDITED_LENGTH,
    MAX_FORM_FIELDS,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS_PER_QUESTION,
    MAX_QUESTION_ID_LENGTH,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS_PER_REQUEST,
)
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

if TYPE_CHECKING:
    from user_questions.agents import Agent, AgentRegistry

ABORTED_MESSAGE = "ask_user_question was aborted before the user answered"
TIMED_OUT_MESSAGE = "ask_user_question timed out before the user answered"
CANCELLED_MESSAGE = "the user cancelled ask_user_question"


def usable_id(rpc_id: str) -> str | None:
    """`rpc_id` if a request can have it (1 to `MAX_ID_LENGTH` characters of text), so that a
    reply may name it; else `None`."""
    if 0 < len(rpc_id) <= MAX_ID_LENGTH and text_problem(rpc_id) is None:
        return rpc_id
    return None


def quoted(value: str) -> str:
    """A value as the messages quote it: JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def abort_error(
    signal: AbortSignal | None, cause: BaseException | None = None
) -> UserQuestionError:
    """`ASK_TIMED_OUT` when `signal` timed out, `ASK_ABORTED` for any other abort."""
    if signal is not None and is_timeout(signal.reason):
        return UserQuestionError(TIMED_OUT_MESSAGE, ErrorCode.ASK_TIMED_OUT, cause=cause)
    return UserQuestionError(ABORTED_MESSAGE, ErrorCode.ASK_ABORTED, cause=cause)


def cancelled_error(cause: BaseException | None = None) -> UserQuestionError:
    """The user dismissed the questions: `ASK_CANCELLED`."""
    return UserQuestionError(CANCELLED_MESSAGE, ErrorCode.ASK_CANCELLED, cause=cause)


def check_request(
    questions: Sequence[AskUserQuestionItem],
    agent: Agent | None,
    signal: AbortSignal | None,
    agents: AgentRegistry | None,
) -> None:
    """Checks 1 to 7 of `ask()`, in order; the service adds 8 (a provider is registered)."""
    if signal is not None and signal.aborted:
        raise abort_error(signal)
    if not questions:
        raise UserQuestionError(
            "ask_user_question requires at least one question", ErrorCode.EMPTY_QUESTIONS
        )
    if agent is not None:
        _check_caller(agent, agents)
    _check_intents(questions)
    _check_unique(questions)
    check_limits(questions)
    _check_forms(questions)


def _check_caller(agent: Agent, agents: AgentRegistry | None) -> None:
    """A supplied agent must be the exact live instance, and a runtime root."""
    if agents is None or agents.get(agent.id) is not agent:
        raise UserQuestionError(
            "human interaction requires the exact live calling agent when an agent is supplied",
            ErrorCode.CALLER_NOT_LIVE,
        )
    if not agents.is_root(agent):
        raise UserQuestionError(
            "human interaction is unavailable while the calling agent is owned by another live "
            "agent; include the unresolved question or decision in the child agent's final result",
            ErrorCode.DELEGATED_CALLER,
        )


def _check_intents(questions: Sequence[AskUserQuestionItem]) -> None:
    for question in questions:
        intent = question.intent
        if intent is None:
            continue
        if not any(option.label == intent.approve for option in question.options or ()):
            raise UserQuestionError(
                f"question {question.id} declares intent {intent.kind} whose approve label "
                f"{quoted(intent.approve)} names none of its options",
                ErrorCode.BAD_INTENT,
            )
        if question.detail is None:
            raise UserQuestionError(
                f"question {question.id} declares intent {intent.kind} "
                "without the detail it reviews",
                ErrorCode.BAD_INTENT,
            )


def _check_unique(questions: Sequence[AskUserQuestionItem]) -> None:
    seen_ids: set[str] = set()
    for question in questions:
        if question.id in seen_ids:
            raise UserQuestionError(
                f"question id {quoted(question.id)} appears more than once; "
                "ids must be unique within a request",
                ErrorCode.BAD_QUESTION,
            )
        seen_ids.add(question.id)
        repeated = _first_repeated(option.label for option in question.options or ())
        if repeated is not None:
            raise UserQuestionError(
                f"question {question.id} offers the option label {quoted(repeated)} more than once",
                ErrorCode.BAD_QUESTION,
            )


def _check_forms(questions: Sequence[AskUserQuestionItem]) -> None:
    """A question's form is one `_reading.forms` can ask, and a question has options or a form."""
    for question in questions:
        if question.schema_ is None:
            continue
        if question.options:
            raise UserQuestionError(
                f"question {question.id} has both options and a schema; a question has "
                "options, a schema, or neither",
                ErrorCode.BAD_QUESTION,
            )
        problem = schema_problem(question.schema_)
        if problem is not None:
            raise UserQuestionError(
                f"question {question.id} asks for a form this package cannot ask: {problem}",
                ErrorCode.BAD_QUESTION,
            )


def _first_repeated(values: Iterable[str]) -> str | None:
    """The first value that appeared before it, in one pass."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def check_limits(questions: Sequence[AskUserQuestionItem]) -> None:
    """Check 7: the sizes of `user_questions.limits`, and text without NUL or lone surrogates.

    Raises:
        UserQuestionError: `TOO_MANY_QUESTIONS`; `LIMIT_EXCEEDED` for too many options or too
            long a text; `BAD_QUESTION` for a text holding a NUL or a lone surrogate. The
            message names the property, as `questions[0].options[2].label`.
    """
    if len(questions) > MAX_QUESTIONS_PER_REQUEST:
        raise UserQuestionError(
            f"a request holds at most {MAX_QUESTIONS_PER_REQUEST} questions, got {len(questions)}",
            ErrorCode.TOO_MANY_QUESTIONS,
        )
    for index, question in enumerate(questions):
        options = question.options or ()
        if len(options) > MAX_OPTIONS_PER_QUESTION:
            raise UserQuestionError(
                f'property "questions[{index}].options" holds {len(options)} options; '
                f"at most {MAX_OPTIONS_PER_QUESTION} are allowed",
                ErrorCode.LIMIT_EXCEEDED,
            )
        fields = _form_properties(question)
        if len(fields) > MAX_FORM_FIELDS:
            raise UserQuestionError(
                f'property "questions[{index}].schema.properties" holds {len(fields)} fields; '
                f"at most {MAX_FORM_FIELDS} are allowed",
                ErrorCode.LIMIT_EXCEEDED,
            )
        for name, option, text, limit in _texts(question):
            # Every ask checks every text twice (the service, then the host): the common case,
            # short text without NUL in ASCII, is decided here without a call.
            if len(text) <= limit and "\x00" not in text and text.isascii():
                continue
            where = name if option is None else f"options[{option}].{name}"
            _check_text(f"questions[{index}].{where}", text, limit, ErrorCode.BAD_QUESTION)


def _check_text(path: str, text: str, limit: int, code: ErrorCode) -> None:
    """`text`, found at `path`, is at most `limit` characters of text.

    Raises:
        UserQuestionError: `LIMIT_EXCEEDED` when it is longer; `code` when it holds a NUL or a
            lone surrogate.
    """
    if len(text) > limit:
        raise UserQuestionError(
            f'property "{path}" is {len(text)} characters long; at most {limit} are allowed',
            ErrorCode.LIMIT_EXCEEDED,
        )
    problem = text_problem(text)
    if problem is not None:
        raise UserQuestionError(f'property "{path}" {problem}', code)


def _texts(question: AskUserQuestionItem) -> Iterator[tuple[str, int | None, str, int]]:
    """Every text of a question: its property (in the question, or in its option of that
    index), the text, its limit."""
    yield "id", None, question.id, MAX_QUESTION_ID_LENGTH
    if question.header is not None:
        yield "header", None, question.header, MAX_HEADER_LENGTH
    yield "question", None, question.question, MAX_QUESTION_LENGTH
    if question.detail is not None:
        yield "detail", None, question.detail, MAX_DETAIL_LENGTH
    for index, option in enumerate(question.options or ()):
        yield "label", index, option.label, MAX_LABEL_LENGTH
        if option.description is not None:
            yield "description", index, option.description, MAX_DESCRIPTION_LENGTH
    if question.intent is not None:
        yield "intent.approve", None, question.intent.approve, MAX_LABEL_LENGTH
    if question.schema_ is not None:
        for where, text, limit in schema_texts(question.schema_):
            yield where, None, text, limit


def _form_properties(question: AskUserQuestionItem) -> Mapping[str, Any]:
    properties = None if question.schema_ is None else question.schema_.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _bad_answer(problem: str) -> UserQuestionError:
    return UserQuestionError(f"provider answer {problem}", ErrorCode.BAD_ANSWER)


def check_answer(
    questions: Sequence[AskUserQuestionItem], answer: object, approval: Approval | None = None
) -> AskUserQuestionAnswer:
    """Check a provider's answer against its questions; return it with items in question order.

    `approval` is what the request approves, when it is an approval card: only then, and only
    when its agent takes a changed call, may the answer carry `edited`. Multi-select labels are
    put in option order. Nothing else is changed: custom text and notes are kept as typed.

    Raises:
        UserQuestionError: `BAD_ANSWER`, naming the question and what is wrong.
    """
    if not isinstance(answer, AskUserQuestionAnswer):
        raise _bad_answer(
            f"has the wrong type: expected AskUserQuestionAnswer, got {type(answer).__name__}"
        )
    by_id: dict[str, AskUserQuestionAnswerItem] = {}
    known = {question.id for question in questions}
    for item in answer.answers:
        if item.id not in known:
            raise _bad_answer(f"for question {quoted(item.id)}: no such question in the request")
        if item.id in by_id:
            raise _bad_answer(f"for question {item.id}: answered more than once")
        by_id[item.id] = item
    items: list[AskUserQuestionAnswerItem] = []
    changed = False
    for index, question in enumerate(questions):
        found = by_id.get(question.id)
        if found is None:
            raise _bad_answer(f"for question {question.id}: missing; answer every question once")
        checked = _check_item(question, found, approval)
        changed = changed or checked is not found or answer.answers[index] is not found
        items.append(checked)
    return AskUserQuestionAnswer(answers=items) if changed else answer


def _check_item(
    question: AskUserQuestionItem, item: AskUserQuestionAnswerItem, approval: Approval | None
) -> AskUserQuestionAnswerItem:
    selected, custom = item.selected, item.custom
    options = question.options or ()
    plain = item.note is None and item.value is None and item.edited is None
    if plain and not selected and custom is None:
        return item
    if (
        plain
        and len(selected) == 1
        and custom is None
        and any(o.label == selected[0] for o in options)
    ):
        return item  # the common case: one known label
    where = f"for question {question.id}"
    _check_typed(where, "custom text", custom, MAX_CUSTOM_LENGTH)
    _check_typed(where, "note", item.note, MAX_ANSWER_NOTE_LENGTH)
    _check_value(question, item, where)
    _check_edited(item, approval, where)
    if not selected:
        return item
    if not options:
        raise _bad_answer(f"{where}: the question has no options, so nothing can be selected")
    if not question.multi_select:
        if len(item.selected) > 1:
            raise _bad_answer(
                f"{where}: a single-select question takes one label, got {len(item.selected)}"
            )
        if item.custom is not None:
            raise _bad_answer(f"{where}: a single-select answer has both a label and custom text")
    positions = {option.label: position for position, option in enumerate(options)}
    seen: set[str] = set()
    for label in item.selected:
        if label not in positions:
            raise _bad_answer(f"{where}: {quoted(label)} is not one of its options")
        if label in seen:
            raise _bad_answer(f"{where}: {quoted(label)} is selected more than once")
        seen.add(label)
    in_option_order = sorted(item.selected, key=positions.__getitem__)
    if in_option_order == item.selected:
        return item
    return item.model_copy(update={"selected": in_option_order})


def _check_typed(where: str, what: str, text: str | None, limit: int) -> None:
    """Text a person typed (custom text, a note): not blank, within `limit`, text only."""
    if text is None:
        return
    if not text.strip():
        name = "custom" if what == "custom text" else what
        raise _bad_answer(f"{where}: {what} is blank; omit {name} instead")
    if len(text) > limit:
        raise _bad_answer(
            f"{where}: {what} is {len(text)} characters long; at most {limit} are allowed"
        )
    problem = text_problem(text)
    if problem is not None:
        raise _bad_answer(f"{where}: {what} {problem}")


def _check_value(
    question: AskUserQuestionItem, item: AskUserQuestionAnswerItem, where: str
) -> None:
    """A form is answered with its value (or skipped), and the value fits the form."""
    schema = question.schema_
    if schema is None:
        if item.value is not None:
            raise _bad_answer(f"{where}: the question asks for no form, so it takes no value")
        return
    if item.custom is not None:
        raise _bad_answer(f"{where}: a form is answered with its value, not custom text")
    if item.value is None:
        return
    problem = value_problem(schema, item.value)
    if problem is not None:
        raise _bad_answer(f"{where}: {problem}")


def _check_edited(item: AskUserQuestionAnswerItem, approval: Approval | None, where: str) -> None:
    """An edited call goes only with the approving option, on an approval whose agent takes a
    changed call; it is the call's whole new input, a JSON object within `MAX_EDITED_LENGTH`,
    holding text only, and not the call as it was."""
    edited = item.edited
    if edited is None:
        return
    if approval is None:
        raise _bad_answer(f"{where}: edited goes with an approval card only")
    if not approval.editable:
        raise _bad_answer(
            f"{where}: the agent cannot take a changed {approval.tool} call, so it cannot be edited"
        )
    if item.selected != [ALLOW] or item.custom is not None:
        raise _bad_answer(f"{where}: edited goes with {quoted(ALLOW)}, the option that allows once")
    text = json.dumps(edited, ensure_ascii=False, separators=(",", ":"))
    if len(text) > MAX_EDITED_LENGTH:
        raise _bad_answer(
            f"{where}: the edited call is {len(text)} characters long as JSON; at most "
            f"{MAX_EDITED_LENGTH} are allowed"
        )
    problem = _json_text_problem(edited, ("edited",))
    if problem is not None:
        raise _bad_answer(f"{where}: {problem}")
    if edited == approval.input:
        raise _bad_answer(f"{where}: the edited call is the call as asked; allow it without edited")


def _json_text_problem(value: object, path: tuple[str | int, ...]) -> str | None:
    """The first key or string inside `value` holding a NUL or a lone surrogate (no store keeps
    one), named by its place."""
    if isinstance(value, str):
        problem = text_problem(value)
        return None if problem is None else f"{path_text(path)} {problem}"
    if isinstance(value, Mapping):
        for key, inner in value.items():
            problem = text_problem(key) if isinstance(key, str) else None
            if problem is not None:
                return f"a key of {path_text(path)} {problem}"
            found = _json_text_problem(inner, (*path, key))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, inner in enumerate(value):
            found = _json_text_problem(inner, (*path, index))
            if found is not None:
                return found
    return None
