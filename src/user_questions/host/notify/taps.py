"""Which options a notification's own buttons may answer with, in one tap and no page.

A button answers without showing anything more than the notification did, so it is offered only
where one option says all: an approval's allowing and denying options (not "Allow and don't ask
again", which makes a rule: that is for the page, where the rule is shown), a plan review's
approve option (declining asks for words), and every option of a request's only question when it
is single-select without another intent. A batch, a multi-select question, a form or an edit
opens the page. Web Push (`web_push.py`) and ntfy (`ntfy.py`) both ask here; answer links keep
their own rule (`links.answerable_options`).
"""

from __future__ import annotations

from user_questions._hooks.approval_card import ALLOW, DENY
from user_questions.frames import ClientResponse
from user_questions.host.stores import StoredQuestion
from user_questions.presentation import plan_review_of

__all__ = ["one_tap_answer", "one_tap_options"]


def one_tap_options(record: StoredQuestion) -> list[int]:
    """The indexes of the options of `record`'s only question that a button may answer with;
    empty when the request needs the page."""
    questions = record.questions
    if len(questions) != 1 or questions[0].multi_select:
        return []
    options = questions[0].options or []
    if record.approval is not None:
        return [index for index, option in enumerate(options) if option.label in (ALLOW, DENY)]
    review = plan_review_of(questions)
    if review is not None:
        return [index for index, option in enumerate(options) if option.label == review["approve"]]
    if questions[0].intent is not None:
        return []  # another kind of review: only a surface that knows it may answer it
    return list(range(len(options)))


def one_tap_answer(
    record: StoredQuestion, option: int, digest: str | None = None
) -> ClientResponse:
    """The answer choosing option `option` of `record`'s first question, as a page sends it;
    `digest`: the card's digest the person's surface showed, when it sent one back."""
    question = record.questions[0]
    label = (question.options or [])[option].label
    answer = {"answers": [{"id": question.id, "selected": [label]}]}
    return ClientResponse.model_validate(
        {
            "type": "client-response",
            "rpcId": record.rpc_id,
            "result": {"ok": True, "value": {"sessionId": record.session_id, "answer": answer}},
            "digest": digest,
        }
    )
