"""The frames a host exchanges with its clients: pages, scripts, and askers in other processes.

It imports only `types` and `outcomes` (which import nothing from the package), so a page's tests,
another process or another language's binding can load the protocol with pydantic alone. The
questions and the answer inside a frame are the vocabulary's own models (`AskUserQuestionItem`,
`AskUserQuestionAnswer`), read once with the frame that carries them; `user_questions._reading.wire`
tells a problem inside them as reading them alone would. docs/protocol.md describes every frame,
field, error and limit, in enough detail to implement a page or an asker in another language.

Two conversations run over WebSockets:

- **Pages** (`/ws`). The host pushes a `QuestionRequestedFrame` for every pending request (on
  connect, in `QuestionReplayFrame` batches for a page that asks for them so, and when one
  becomes pending) and a `QuestionResolvedFrame` when one settles. The page sends a
  `ClientResponse` that answers or dismisses a request and gets a `ReceiptFrame`;
  `Ping` gets `PongFrame`. `POST /api/respond` takes the same `ClientResponse` and returns the
  bare `Receipt`.
- **Askers** (`/ws/ask`, used by `RemoteProvider`). The asker sends `Ask` with an `rpcId` it
  generated; sending it again, on the same or a new connection, re-attaches to the same request
  (the submit is idempotent). The host replies `AskPending` once the request is stored, then
  `AskSettled` once it settles (at once when it already has), or `AskFailed` when it refuses
  the request. `Withdraw` settles a request as withdrawn or timed out (the asker gave up); the
  host replies `AskSettled` with the request's final outcome.

Conventions are those of the wire vocabulary: camelCase JSON, both spellings on input, unset
optional fields absent, unknown keys ignored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr

from user_questions.outcomes import Outcome, ResolvedOutcome
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, WireModel

__all__ = [
    "MAX_FRAME_BYTES",
    "MAX_ID_LENGTH",
    "MAX_MESSAGE_LENGTH",
    "MAX_NOTE_LENGTH",
    "MAX_ORIGIN_CLIENT",
    "MAX_ORIGIN_CWD",
    "ROLE_HEADER",
    "AnswerResult",
    "Approval",
    "AnswerValue",
    "Ask",
    "AskFailed",
    "AskPending",
    "AskSettled",
    "AskerFrame",
    "AskerReply",
    "ClientResponse",
    "ErrorFrame",
    "ErrorPayload",
    "ErrorResult",
    "Frame",
    "JSONObject",
    "Origin",
    "PageFrame",
    "Ping",
    "Pong",
    "PongFrame",
    "QuestionGroup",
    "QuestionGroupFrame",
    "QuestionQuorum",
    "QuestionQuorumFrame",
    "QuestionReplay",
    "QuestionReplayFrame",
    "QuestionRequested",
    "QuestionRequestedFrame",
    "QuestionResolved",
    "QuestionResolvedFrame",
    "Quorum",
    "Receipt",
    "RequestGroup",
    "ReceiptFrame",
    "ResponseError",
    "RuleProposal",
    "Withdraw",
    "WithdrawReason",
    "brief",
    "iso",
]

MAX_FRAME_BYTES = 1024 * 1024
"""The largest frame either side sends or accepts (1 MiB, counted in UTF-8 bytes): a host closes
the connection on a larger one (WebSocket close code 1009), so an asker refuses to send it."""
MAX_ID_LENGTH = 256
"""Characters in an rpcId or a session id; the host refuses others (`BAD_REQUEST`)."""
MAX_MESSAGE_LENGTH = 2_000
"""Characters in the message of an error or a refused receipt; a longer one (it quotes what was
sent, which may be long) is cut, ending with `…`."""
MAX_ORIGIN_CLIENT = 128
"""Characters in an origin's `client`."""
MAX_ORIGIN_CWD = 4096
"""Characters in an origin's `cwd` (Linux's longest path)."""
MAX_NOTE_LENGTH = 1_000
"""Characters in a withdrawal's `note`."""
ROLE_HEADER = "x-uq-role"
"""The header of a WebSocket handshake's answer (`/ws/ask`, `/ws`) that says the role of the token
it was opened with: `asker`, `person` or `admin`. A client that must never hold a token that can
answer (a permission hook) reads it before it asks anything."""

JSONObject = dict[str, Any]
"""A JSON object as parsed by `json.loads`: a question item or an answer, in wire JSON."""

WithdrawReason = Literal["aborted", "timed-out", "cancelled"]
"""Why an asker withdrew: its ask's signal aborted, or timed out, or the ask was cancelled
otherwise (its task was cancelled, or the host stayed unreachable too long). The host records
`timed-out` as the outcome `timed-out` and the other two as `withdrawn`."""


def brief(message: str) -> str:
    """`message`, cut to `MAX_MESSAGE_LENGTH` characters: what an error frame carries."""
    if len(message) <= MAX_MESSAGE_LENGTH:
        return message
    return message[: MAX_MESSAGE_LENGTH - 1] + "…"


Message = Annotated[StrictStr, AfterValidator(brief)]
"""An error's or a refusal's one-line message, at most `MAX_MESSAGE_LENGTH` characters."""


def _without_nul(text: str) -> str:
    # PostgreSQL takes no NUL in a text column; a lone surrogate never gets this far (JSON text
    # holding one is refused as it is read).
    if "\x00" in text:
        raise ValueError("holds a NUL character (U+0000)")
    return text


_Note = Annotated[
    StrictStr, Field(min_length=1, max_length=MAX_NOTE_LENGTH), AfterValidator(_without_nul)
]
"""A withdrawal's note: 1 to `MAX_NOTE_LENGTH` characters, no NUL."""


def iso(moment: datetime) -> str:
    """`moment` as every frame, history entry and event writes a time: ISO 8601 UTC with
    milliseconds and a `Z`."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Frame(WireModel):
    """Base of every frame: the wire vocabulary's JSON conventions."""


class Origin(Frame):
    """Where an ask comes from, as its asker describes itself; shown with the request."""

    client: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ORIGIN_CLIENT)] | None = None
    """The program that asks, such as `claude-code`, `codex` or `langgraph`."""
    cwd: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ORIGIN_CWD)] | None = None
    """The folder it works in."""


class Approval(Frame):
    """What an approval request approves, machine-readable: one tool call, the agent making it
    and where. Carried by every request `user_questions.approvals` makes (and only those), so
    a host can decide it by a rule; plain questions never carry one."""

    tool: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_LENGTH)]
    """The tool's name as the agent calls it: `Bash`, `apply_patch`, `mcp__github__create_pr`."""
    input: JSONObject
    """The call's arguments, as the agent gave them."""
    agent: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ORIGIN_CLIENT)] | None = None
    """The agent that asks (`claude-code`, `codex`, ...), when known."""
    cwd: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ORIGIN_CWD)] | None = None
    """The folder the call runs in, when known: relative paths are read from it."""
    editable: StrictBool | None = None
    """Whether the agent takes a changed call: a person may then allow it with changes (the
    answer's `edited`). Set by the bridges and adapters whose agent accepts one; absent means
    it does not."""


class RuleProposal(Frame):
    """A rule the host offers to make from an approval, exactly as it would make it: on a
    pending card, what "Allow and don't ask again" remembers; in the history, the rule that
    would decide the call as it was decided. The host computes it (from the request's
    `approval` and the name of the token that asked) and computes it again when it makes it:
    a page shows it, never sends it."""

    tool: StrictStr
    decision: Literal["allow", "deny"]
    command: StrictStr | None = None
    """Shell tools: the call's command, as its words."""
    path: StrictStr | None = None
    """File tools: the call's resolved path."""
    domain: StrictStr | None = None
    """Web tools: the URL's host."""
    asker: StrictStr | None = None
    """Only requests asked with this token (the one that asked this)."""
    cwd: StrictStr | None = None
    """Only calls in this folder or one below it (the call's)."""
    text: StrictStr
    """The rule in words, as the pages and `uq rule list` show it: `allow Bash npm run test
    for dev in /home/dev/shop`."""


# -- host -> page ---------------------------------------------------------------------------


class QuestionRequested(Frame):
    """The payload announcing a pending request, as the seam's pages read it."""

    type: Literal["question/requested"] = "question/requested"
    session_id: StrictStr
    """The session the request belongs to: its agent's id, or the asker's named session."""
    questions: list[AskUserQuestionItem]
    """The request's questions, as asked."""


class RequestGroup(Frame):
    """Identical requests of one asker pending at once, shown as one card: the same asker
    token, session, questions, approval and route (`docs/host.md#identical-requests`)."""

    count: Annotated[StrictInt, Field(ge=2)]
    """How many requests the card stands for (itself included); one answer settles them all."""


class Quorum(Frame):
    """Where a request that needs several people's approvals stands (docs/rules.md): shown on
    every person's card as `1 of 2 approved: alice`."""

    needed: Annotated[StrictInt, Field(ge=2)]
    """How many distinct people must approve the call."""
    approved_by: list[StrictStr]
    """Who approved the call as asked so far (token names), oldest first."""


class QuestionRequestedFrame(Frame):
    """A pending request, pushed to every page on connect and when it becomes pending."""

    rpc_id: StrictStr
    """The request's id; a client-response names it, and replays repeat it."""
    payload: QuestionRequested
    rendered: dict[str, str]
    """Safe HTML of each question's `detail` (markdown, raw HTML disabled), by question id."""
    asked_at: StrictStr
    """When the request was first stored, ISO 8601 UTC."""
    origin: Origin | None = None
    """Where the asker says the request comes from, when it said."""
    remember: RuleProposal | None = None
    """On an approval card the host can remember: the rule an answer with `remember: true`
    makes. Absent on plain questions and on calls no rule can name exactly (a compound shell
    command, say)."""
    approval: Approval | None = None
    """On an approval card: the call it approves (tool, input, and whether it may be changed),
    so that a page can offer "Edit and allow"."""
    digest: StrictStr | None = None
    """The card's digest: SHA-256 (hex) of the canonical JSON of its questions and approval as
    the host stored them. A client sends it back with its answer (`ClientResponse.digest`)."""
    quorum: Quorum | None = None
    """When its call needs several people's approvals: how many, and who approved it so far
    (`question/quorum` keeps it current); absent when one approval settles it."""
    group: RequestGroup | None = None
    """When the card stands for identical requests of its asker: how many (absent: one)."""


class QuestionReplay(Frame):
    """The payload of one batch of a replay: the pending requests, for a page that asked for
    them in batches (`/ws?replay=batch` or `?replay=paced`) rather than one frame each."""

    type: Literal["question/replay"] = "question/replay"
    pending: Annotated[StrictInt, Field(ge=0)]
    """How many requests the whole replay holds, the same in every batch: a page shows the
    count from the first batch on, and knows the replay complete once it has them all."""
    requests: list[QuestionRequestedFrame]
    """The next batch of pending requests, oldest first, each exactly as it would be sent alone."""


class QuestionReplayFrame(Frame):
    """A batch of the replay of the pending requests; one with no requests when none is pending."""

    payload: QuestionReplay


class QuestionResolved(Frame):
    """The payload announcing that a request settled; every page drops its card."""

    type: Literal["question/resolved"] = "question/resolved"
    session_id: StrictStr
    question_rpc_id: StrictStr
    outcome: ResolvedOutcome
    """As the seam's pages read it: `answered`, or `cancelled` for every other ending."""
    settled: Outcome
    """The exact outcome: `answered`, `dismissed`, `withdrawn` or `timed-out`."""


class QuestionResolvedFrame(Frame):
    """Pushed to every page when a request settles."""

    payload: QuestionResolved


class QuestionGroup(Frame):
    """The payload saying how many identical requests a card now stands for (`RequestGroup`):
    sent when the count changes, instead of a frame for each request."""

    type: Literal["question/group"] = "question/group"
    question_rpc_id: StrictStr
    """The card's request (the oldest of the group)."""
    count: Annotated[StrictInt, Field(ge=1)]
    """How many requests it stands for now; 1: itself alone."""


class QuestionGroupFrame(Frame):
    """Pushed to the pages that show a card when its group's count changes."""

    payload: QuestionGroup


class QuestionQuorum(Frame):
    """The payload saying that a person's approval was counted on a card that needs several
    (`Quorum`): every page showing it updates its count."""

    type: Literal["question/quorum"] = "question/quorum"
    question_rpc_id: StrictStr
    quorum: Quorum


class QuestionQuorumFrame(Frame):
    """Pushed to the pages that show a card when its quorum's count changes."""

    payload: QuestionQuorum


class Receipt(Frame):
    """What a client-response achieved: the payload of a `ReceiptFrame`, and (without `type`)
    the body of `POST /api/respond`."""

    type: Literal["client-response/receipt"] = "client-response/receipt"
    accepted: StrictBool
    reason: Literal["not-pending", "bad-response"] | None = None
    """Why it was refused: the request had settled or never existed, or the response broke the
    answer rules, named another session or was malformed, and the request stays pending."""
    message: Message | None = None
    """One line saying what was wrong, when refused; when accepted, where a quorum stands
    (`1 of 2 approved: alice`) if the answer was one approval of several needed."""


class ReceiptFrame(Frame):
    """The receipt of a client-response sent over the page's WebSocket."""

    rpc_id: StrictStr
    """The rpcId of the client-response this answers."""
    payload: Receipt


class Pong(Frame):
    """The answer to a `Ping`."""

    type: Literal["pong"] = "pong"


class PongFrame(Frame):
    """`{"payload": {"type": "pong"}}`."""

    payload: Pong = Pong()


class ErrorPayload(Frame):
    """A frame the host could not read at all (not JSON, an unknown type, too large)."""

    type: Literal["error"] = "error"
    code: StrictStr
    message: Message


class ErrorFrame(Frame):
    """Sent instead of a receipt when the frame carries no usable rpcId."""

    payload: ErrorPayload


# -- page -> host ---------------------------------------------------------------------------


class AnswerValue(Frame):
    """The answer a page gives, with the session it believes the request belongs to."""

    session_id: StrictStr | None = None
    """The request's session; when given it must match (a guard against answering the wrong
    request), and it may be left out."""
    answer: AskUserQuestionAnswer
    remember: StrictBool = False
    """Allow, and don't ask again: when this answer wins, the host makes the rule its request
    offered (`QuestionRequestedFrame.remember`). Only with an approving answer, to a request
    that offers one."""


class AnswerResult(Frame):
    """`{"ok": true, "value": ...}`: the human answered."""

    ok: Literal[True]
    value: AnswerValue


class ResponseError(Frame):
    """Why a page did not answer; code `cancelled` is a dismissal."""

    code: StrictStr
    message: StrictStr | None = None


class ErrorResult(Frame):
    """`{"ok": false, "error": ...}`: the human dismissed the request."""

    ok: Literal[False]
    error: ResponseError


class ClientResponse(Frame):
    """A page's (or a script's) answer to, or dismissal of, a pending request."""

    type: Literal["client-response"] = "client-response"
    rpc_id: StrictStr
    """The rpcId of the `QuestionRequestedFrame` it responds to."""
    result: Annotated[AnswerResult | ErrorResult, Field(discriminator="ok")]
    digest: StrictStr | None = None
    """The `digest` of the card shown (its `QuestionRequestedFrame`'s): a response whose digest
    is not the stored card's is refused (`bad-response`, "the card changed since it was
    shown"). Absent (an older client): the response is taken for the card as stored, and the
    audit record says no digest came back."""


class Ping(Frame):
    """Keeps a connection alive; answered with `PongFrame`."""

    type: Literal["ping"] = "ping"


PageFrame = Annotated[ClientResponse | Ping, Field(discriminator="type")]
"""Anything a page may send over `/ws`."""


# -- asker <-> host -------------------------------------------------------------------------


class Ask(Frame):
    """Submit a request, or re-attach to it: the same `rpc_id` always names the same request."""

    type: Literal["ask"] = "ask"
    rpc_id: StrictStr
    """Generated by the asker, stable across reconnections and host restarts."""
    session_id: StrictStr
    questions: list[AskUserQuestionItem]
    origin: Origin | None = None
    """Where the ask comes from; kept with the request and shown with it."""
    approval: Approval | None = None
    """What the request approves, when it is an approval card: a rule may settle it."""


class Withdraw(Frame):
    """The asker gave up on a request (abort, timeout, cancellation): take it off every page."""

    type: Literal["withdraw"] = "withdraw"
    rpc_id: StrictStr
    reason: WithdrawReason | None = None
    """Why the asker gave up; absent means `aborted`. `timed-out` ends the request as
    `timed-out`, the others as `withdrawn`."""
    note: _Note | None = None
    """Why, in the asker's words, kept with the settlement and shown in the history (`uq acp`
    says what the editor answered); no NUL character."""


AskerFrame = Annotated[Ask | Withdraw | Ping, Field(discriminator="type")]
"""Anything an asker may send over `/ws/ask`."""


class AskPending(Frame):
    """The request is stored and shown: nothing can lose it now."""

    type: Literal["ask/pending"] = "ask/pending"


class AskSettled(Frame):
    """The request settled; sent once per attachment, and again to every re-attachment."""

    type: Literal["ask/settled"] = "ask/settled"
    outcome: Outcome
    answer: AskUserQuestionAnswer | None = None
    """Present when the outcome is `answered`."""


class AskFailed(Frame):
    """The host refused the frame; `code` is an `ErrorCode` such as `TOO_MANY_QUESTIONS`."""

    type: Literal["ask/error"] = "ask/error"
    code: StrictStr
    message: Message
    retry_after: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """`RATE_LIMITED`: seconds after which the same ask would be taken."""


class AskerReply(Frame):
    """Anything the host sends an asker; `rpc_id` is absent only for a pong or an unreadable
    frame."""

    rpc_id: StrictStr | None = None
    payload: Annotated[AskPending | AskSettled | AskFailed | Pong, Field(discriminator="type")]
