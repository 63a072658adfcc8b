"""Errors with stable codes: what callers, tools and models branch on.

A message may quote what it was given, so it is made deliverable (`_reading.text.deliverable`): a
lone surrogate in it is written as its escape, and every message can be sent to a model, a socket or
a log as it is.

    Exception
     └── HarnessError(message, code, *, cause=None)   .code, .name, __cause__
          ├── UserQuestionError     asking a human failed: EMPTY_QUESTIONS, ASK_ABORTED, ...
          ├── ToolArgsError         a model's tool arguments break the tool's schema: INVALID_ARGS
          └── AbortError            an operation was aborted: ABORTED, ABORTED_BEFORE_DISPATCH

A code is an `ErrorCode`, a `StrEnum`, so it compares equal to the plain string. The tool runtime
hands `{"name", "code"}` of a `HarnessError` to the model, so both are part of the contract.
"""

from __future__ import annotations

import enum

from user_questions._reading.text import deliverable

__all__ = ["AbortError", "ErrorCode", "HarnessError", "ToolArgsError", "UserQuestionError"]


class ErrorCode(enum.StrEnum):
    """Every code the project raises; see the README's Errors table for when each is raised."""

    EMPTY_QUESTIONS = "EMPTY_QUESTIONS"
    BAD_INTENT = "BAD_INTENT"
    BAD_QUESTION = "BAD_QUESTION"
    BAD_REQUEST = "BAD_REQUEST"
    BAD_ANSWER = "BAD_ANSWER"
    NO_PROVIDER = "NO_PROVIDER"
    DUPLICATE_PROVIDER = "DUPLICATE_PROVIDER"
    ASK_ABORTED = "ASK_ABORTED"
    ASK_TIMED_OUT = "ASK_TIMED_OUT"
    ASK_CANCELLED = "ASK_CANCELLED"
    CALLER_NOT_LIVE = "CALLER_NOT_LIVE"
    DELEGATED_CALLER = "DELEGATED_CALLER"
    INVALID_ARGS = "INVALID_ARGS"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    DUPLICATE_TOOL = "DUPLICATE_TOOL"
    ABORTED = "ABORTED"
    ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
    DUPLICATE_SERVICE = "DUPLICATE_SERVICE"
    AGENT_ALREADY_LIVE = "AGENT_ALREADY_LIVE"
    OWNER_NOT_LIVE = "OWNER_NOT_LIVE"
    UNAUTHORIZED = "UNAUTHORIZED"
    FORBIDDEN_ORIGIN = "FORBIDDEN_ORIGIN"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    TOO_MANY_QUESTIONS = "TOO_MANY_QUESTIONS"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    TOO_MANY_PENDING = "TOO_MANY_PENDING"
    RATE_LIMITED = "RATE_LIMITED"
    HOST_UNREACHABLE = "HOST_UNREACHABLE"
    BAD_STORE = "BAD_STORE"
    STORE_LOCKED = "STORE_LOCKED"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    STORE_FULL = "STORE_FULL"
    STORE_BUSY = "STORE_BUSY"
    BAD_TOKEN = "BAD_TOKEN"
    PAGE_MISSING = "PAGE_MISSING"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    CANNOT_LISTEN = "CANNOT_LISTEN"
    ELICITATION_UNSUPPORTED = "ELICITATION_UNSUPPORTED"
    TOKEN_EXISTS = "TOKEN_EXISTS"
    BAD_NOTIFIER = "BAD_NOTIFIER"
    UNSUPPORTED_LANGUAGE = "UNSUPPORTED_LANGUAGE"


class HarnessError(Exception):
    """Base of every error with a stable code."""

    name: str = "HarnessError"
    """Reported to models with the code: the class name, unless a subclass sets its own."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    def __init__(self, message: str, code: str, *, cause: BaseException | None = None) -> None:
        message = deliverable(message)
        super().__init__(message)
        self.message = message
        self.code = ErrorCode(code) if code in ErrorCode.__members__ else code
        self.__cause__ = cause

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {str(self.code)!r})"

    def info(self) -> dict[str, str]:
        """The `{"name", "code"}` pair a tool failure reports to the model."""
        return {"name": self.name, "code": str(self.code)}


class UserQuestionError(HarnessError):
    """Raised when asking a human fails: a bad request or answer, no provider, an abort or a
    timeout, a dismissal (`ASK_CANCELLED`), or a caller that may not ask.

    A host's `RATE_LIMITED` refusal carries `retry_after`: the seconds after which the same ask
    would be taken."""

    name = "UserQuestionError"

    def __init__(
        self,
        message: str,
        code: str,
        *,
        cause: BaseException | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, code, cause=cause)
        self.retry_after = retry_after


class ToolArgsError(HarnessError):
    """Raised when a model's tool arguments do not match the tool's JSON Schema."""

    name = "ToolArgsError"

    def __init__(self, problem: str, *, cause: BaseException | None = None) -> None:
        super().__init__(f"invalid arguments: {problem}", ErrorCode.INVALID_ARGS, cause=cause)


class AbortError(HarnessError):
    """Raised when an operation is aborted through an `AbortSignal` without another reason."""

    name = "AbortError"
