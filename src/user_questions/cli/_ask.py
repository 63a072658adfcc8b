"""`uq ask`: ask a person a question from a shell script, and print the answer.

The request is built from the arguments (or read as JSON with `--request`) and asked through a real
`UserQuestionService` with a `TerminalProvider` behind it, so a bad request is refused by the
service's own checks before anything is shown. The questions are drawn on stderr (stdout carries
only the answer); a request read from stdin (`--request -`, or a `-` file) leaves stdin empty, so
the person answers on the controlling terminal, `/dev/tty`.

Exit statuses: 0 answered, 1 failed otherwise, 2 bad input, 3 dismissed (`ASK_CANCELLED`), 4 timed
out (`ASK_TIMED_OUT`), 130 interrupted (Ctrl-C), 128+N stopped by signal N (SIGTERM, SIGHUP).
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, TextIO

import anyio
from cyclopts import Parameter

from user_questions._reading.wire import parse_questions
from user_questions.abort import AbortSignal
from user_questions.cli._stopping import STOP_SIGNALS, StoppedError, until_stopped
from user_questions.context import Context
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.providers.terminal import TerminalProvider
from user_questions.service import AskUserQuestionRequest, UserQuestionService
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    PlanReviewIntent,
)

__all__ = ["EXIT_STATUS", "MAX_INPUT_BYTES", "ask"]

MAX_INPUT_BYTES = 1 << 20
"""The largest request, detail or plan read (1 MiB); a larger one is refused as bad input."""

DEFAULT_ID = "1"

EXIT_ANSWERED, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_STATUS: dict[str, int] = {
    ErrorCode.ASK_CANCELLED: 3,
    ErrorCode.ASK_TIMED_OUT: 4,
    ErrorCode.BAD_REQUEST: EXIT_BAD_INPUT,
    ErrorCode.EMPTY_QUESTIONS: EXIT_BAD_INPUT,
    ErrorCode.BAD_INTENT: EXIT_BAD_INPUT,
    ErrorCode.BAD_QUESTION: EXIT_BAD_INPUT,
    ErrorCode.TOO_MANY_QUESTIONS: EXIT_BAD_INPUT,
    ErrorCode.LIMIT_EXCEEDED: EXIT_BAD_INPUT,
}
"""The exit status for each error code a caller can act on; any other error exits 1."""

Flag = Parameter(negative="")
"""No `--no-...` / `--empty-...` twin."""
Source = Parameter(allow_leading_hyphen=True)
"""A file name, or "-" for stdin."""


class _BadInputError(Exception):
    """Arguments or files that cannot make a request; the message is one line for stderr."""


def ask(
    question: str | None = None,
    /,
    *,
    option: Annotated[list[str] | None, Parameter(name=["--option", "-o"], negative="")] = None,
    option_description: Annotated[list[str] | None, Flag] = None,
    multi: Annotated[bool, Flag] = False,
    header: str | None = None,
    detail: str | None = None,
    detail_file: Annotated[str | None, Source] = None,
    plan_file: Annotated[str | None, Source] = None,
    approve: str | None = None,
    id: str = DEFAULT_ID,
    request: Annotated[str | None, Source] = None,
    timeout: float | None = None,
    json: Annotated[bool, Flag] = False,
) -> int:
    """Ask a person a question at this terminal and print the answer on stdout.

    Without --json, prints each chosen label, then any typed answer, one per line (a batch
    prefixes each line with the question id and a tab); a skipped question prints nothing.
    Exit status: 0 answered, 2 bad input, 3 dismissed, 4 timed out, 130 interrupted.

    Parameters
    ----------
    question
        The question to ask.
    option
        An option to offer; repeat for each. Without options the question takes free text.
    option_description
        A description for the option in the same position; repeat in order ("" for none).
    multi
        Let the person choose several options.
    header
        A short heading shown above the question.
    detail
        Markdown shown with the question.
    detail_file
        Read the detail from a file ("-" for stdin).
    plan_file
        Read a plan to review from a file ("-" for stdin); needs --approve.
    approve
        The option that approves the plan (a plan-review question); it is offered first.
    id
        The question id echoed in the JSON answer.
    request
        Read the whole request, {"questions": [...]} in the wire vocabulary, from a file ("-" for
        stdin) instead of the arguments above.
    timeout
        Give up after this many seconds (exit status 4). There is no timeout by default.
    json
        Print the answer as JSON: {"answers": [{"id", "selected", "custom"?}]}.
    """
    try:
        stdin = _Stdin()
        if request is not None:
            _refuse_mixing(
                {
                    "a question": question is not None,
                    "--option": bool(option),
                    "--option-description": bool(option_description),
                    "--multi": multi,
                    "--header": header is not None,
                    "--detail": detail is not None,
                    "--detail-file": detail_file is not None,
                    "--plan-file": plan_file is not None,
                    "--approve": approve is not None,
                    "--id": id != DEFAULT_ID,
                }
            )
            questions = parse_questions(stdin.read("--request", request))
        else:
            text = _detail(stdin, detail, detail_file, plan_file, approve)
            questions = [
                _question(
                    question,
                    option or [],
                    option_description or [],
                    id=id,
                    multi=multi,
                    header=header,
                    detail=text,
                    approve=approve,
                )
            ]
        _check_timeout(timeout)
        with _answer_terminal(stdin.used) as (answers_in, prompts_out):
            provider = TerminalProvider(input=answers_in, output=prompts_out)
            answer = anyio.run(_ask, questions, provider, timeout)
    except _BadInputError as error:
        return _fail(str(error), EXIT_BAD_INPUT)
    except UserQuestionError as error:
        return _fail(error.message, EXIT_STATUS.get(error.code, EXIT_FAILED))
    except StoppedError as stop:
        if stop.signum == signal.SIGINT:
            return _fail("interrupted", EXIT_INTERRUPTED)
        return _fail(f"stopped by {stop.name}", 128 + stop.signum)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except ModuleNotFoundError as error:  # the terminal extra, with the line that installs it
        return _fail(str(error), EXIT_FAILED)
    sys.stdout.write(answer.model_dump_json() + "\n" if json else _plain(answer))
    sys.stdout.flush()
    return EXIT_ANSWERED


def _fail(message: str, status: int) -> int:
    print(f"uq ask: {message}", file=sys.stderr)
    return status


def _plain(answer: AskUserQuestionAnswer) -> str:
    """Each chosen label, then the typed answer, one per line; `id<TAB>` before each in a batch."""
    batch = len(answer.answers) > 1
    lines = []
    for item in answer.answers:
        values = [*item.selected, *([] if item.custom is None else [item.custom])]
        lines += [f"{item.id}\t{value}" if batch else value for value in values]
    return "".join(f"{line}\n" for line in lines)


class _Stdin:
    """Reads an argument's content from stdin ("-") or a file, and remembers which read stdin.

    At most one argument can be "-": `--request` stands alone, and the detail comes from one
    source.
    """

    used: str | None = None

    def read(self, flag: str, source: str) -> bytes:
        if source != "-":
            return _read_file(flag, Path(source))
        self.used = flag
        if sys.stdin is None:
            raise _BadInputError(f"{flag} - reads stdin, and stdin is closed")
        return _bounded(flag, "stdin", sys.stdin.buffer.read(MAX_INPUT_BYTES + 1))


def _read_file(flag: str, path: Path) -> bytes:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise _BadInputError(f"cannot read {flag} {path}: {error.strerror or error}") from None
    return _bounded(flag, str(path), data)


def _bounded(flag: str, where: str, data: bytes) -> bytes:
    if len(data) > MAX_INPUT_BYTES:
        raise _BadInputError(f"{flag} {where} is larger than {MAX_INPUT_BYTES // 1024} KiB")
    return data


def _text(flag: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _BadInputError(f"{flag} is not UTF-8 text") from None


def _refuse_mixing(given: dict[str, bool]) -> None:
    mixed = [name for name, present in given.items() if present]
    if mixed:
        raise _BadInputError(
            f"--request holds the whole request; do not give {', '.join(mixed)} as well"
        )


def _detail(
    stdin: _Stdin,
    detail: str | None,
    detail_file: str | None,
    plan_file: str | None,
    approve: str | None,
) -> str | None:
    given = [
        flag
        for flag, value in (
            ("--detail", detail),
            ("--detail-file", detail_file),
            ("--plan-file", plan_file),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise _BadInputError(f"give one of {' and '.join(given)}, not both")
    if plan_file is not None and approve is None:
        raise _BadInputError("--plan-file needs --approve LABEL: the option that approves it")
    if detail_file is not None:
        return _text("--detail-file", stdin.read("--detail-file", detail_file))
    if plan_file is not None:
        return _text("--plan-file", stdin.read("--plan-file", plan_file))
    return detail


def _question(
    question: str | None,
    options: list[str],
    descriptions: list[str],
    *,
    id: str,
    multi: bool,
    header: str | None,
    detail: str | None,
    approve: str | None,
) -> AskUserQuestionItem:
    if question is None:
        raise _BadInputError('give a question ("uq ask QUESTION -o ...") or --request FILE|-')
    if len(descriptions) > len(options):
        raise _BadInputError(
            f"--option-description is given {len(descriptions)} times for {len(options)} option(s)"
        )
    described = [*descriptions, *[""] * (len(options) - len(descriptions))]
    return AskUserQuestionItem(
        id=id,
        question=question,
        header=header,
        detail=detail,
        options=[
            AskUserQuestionOption(label=label, description=text or None)
            for label, text in zip(options, described, strict=True)
        ]
        or None,
        multi_select=multi or None,
        intent=None if approve is None else PlanReviewIntent(approve=approve),
    )


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and not (math.isfinite(timeout) and timeout >= 0):
        raise _BadInputError(f"--timeout must be a number of seconds, 0 or more; got {timeout}")


@contextlib.contextmanager
def _answer_terminal(stdin_used: str | None) -> Iterator[tuple[TextIO, TextIO]]:
    """Where answers are read and questions drawn: stdin and stderr, or the controlling
    terminal when stdin carried the request."""
    if stdin_used is None:
        yield sys.stdin, sys.stderr
        return
    try:
        tty_in = open("/dev/tty", encoding="utf-8")  # noqa: SIM115 - closed by the stack below
        tty_out = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115
    except OSError:
        raise _BadInputError(
            f"{stdin_used} - reads stdin, so the answers must come from the terminal, and "
            "there is none (no /dev/tty); give it a file instead"
        ) from None
    with tty_in, tty_out:
        yield tty_in, tty_out


async def _ask(
    questions: list[AskUserQuestionItem], provider: TerminalProvider, seconds: float | None
) -> AskUserQuestionAnswer:
    """Ask through a real service; SIGINT, SIGTERM or SIGHUP withdraws the prompt and stops.

    SIGINT is received here too rather than left to the event loop's own handler, whose
    cancellation of the main task a cancel scope in progress could absorb (the command then
    hung on a pipe that stays open)."""
    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(provider)
    deadline = None if seconds is None else AbortSignal.timeout(seconds)
    request = AskUserQuestionRequest(questions, signal=deadline)
    return await until_stopped(
        lambda: ctx.user_questions.ask(request), (*STOP_SIGNALS, signal.SIGINT)
    )
