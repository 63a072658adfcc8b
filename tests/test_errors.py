"""Errors carry a message, a stable code that compares equal to a string, a name and a cause."""

from __future__ import annotations

from user_questions import AbortError, ErrorCode, HarnessError, ToolArgsError, UserQuestionError


def test_harness_error_has_message_code_name_and_cause() -> None:
    cause = ValueError("boom")
    error = HarnessError("something failed", "SOME_CODE", cause=cause)
    assert str(error) == "something failed"
    assert error.code == "SOME_CODE"
    assert error.name == "HarnessError"
    assert error.__cause__ is cause
    assert isinstance(error, Exception)


def test_user_question_error_is_a_harness_error_named_for_itself() -> None:
    error = UserQuestionError("no user-questions provider is registered", "NO_PROVIDER")
    assert isinstance(error, HarnessError)
    assert error.name == "UserQuestionError"
    assert error.code == ErrorCode.NO_PROVIDER == "NO_PROVIDER"
    assert error.info() == {"name": "UserQuestionError", "code": "NO_PROVIDER"}
    assert (
        repr(error)
        == "UserQuestionError('no user-questions provider is registered', 'NO_PROVIDER')"
    )


def test_tool_args_error_prefixes_its_message_and_code() -> None:
    error = ToolArgsError('missing required property "questions"')
    assert str(error) == 'invalid arguments: missing required property "questions"'
    assert error.info() == {"name": "ToolArgsError", "code": "INVALID_ARGS"}


def test_a_subclass_is_named_for_its_class_unless_it_says_otherwise() -> None:
    class QuotaError(HarnessError):
        pass

    class Renamed(UserQuestionError):
        name = "CustomName"

    assert QuotaError("over quota", "QUOTA").name == "QuotaError"
    assert Renamed("x", "X").info() == {"name": "CustomName", "code": "X"}


def test_abort_error_name() -> None:
    assert AbortError("stopped", "ABORTED").info() == {"name": "AbortError", "code": "ABORTED"}
