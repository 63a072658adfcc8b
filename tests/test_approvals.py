"""Approval cards: what a person sees of a tool call, and what each answer decides."""

from __future__ import annotations

from typing import Any

import pytest

from user_questions.approvals import (
    ALLOW,
    ALLOW_ALWAYS,
    DENY,
    MAX_SHOWN_CHARACTERS,
    ApprovalDecision,
    approval_decision,
    approval_question,
    denial_message,
    fenced,
)
from user_questions.types import AskUserQuestionAnswerItem


def labels(arguments: dict[str, Any], tool: str = "Bash", **kwargs: Any) -> list[str]:
    question = approval_question(tool, arguments, **kwargs)
    return [option.label for option in question.options or []]


def test_a_shell_command_is_shown_in_a_code_block_with_its_description() -> None:
    question = approval_question(
        "Bash", {"command": "rm -rf build", "description": "Clean the build"}, agent="Claude"
    )
    assert question.question == "Allow Claude to run Bash: rm -rf build?"
    assert question.header == "Bash"
    assert question.detail == "Clean the build\n\n```sh\nrm -rf build\n```"


def test_a_command_given_as_an_argument_list_is_quoted_as_a_shell_would_read_it() -> None:
    question = approval_question("shell", {"command": ["bash", "-lc", "echo 'hi there'"]})
    assert question.detail is not None
    assert "bash -lc 'echo '\"'\"'hi there'\"'\"''" in question.detail


def test_an_edit_is_shown_as_a_unified_diff() -> None:
    question = approval_question(
        "Edit", {"file_path": "src/app.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}
    )
    assert question.detail is not None
    assert "```diff\n--- a/src/app.py\n+++ b/src/app.py" in question.detail
    assert "-x = 1\n+x = 2" in question.detail


def test_several_edits_to_one_file_are_shown_together() -> None:
    edits = [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "d", "replace_all": True},
    ]
    detail = approval_question("MultiEdit", {"file_path": "f.txt", "edits": edits}).detail
    assert detail is not None
    assert "-a\n+b" in detail
    assert "-c\n+d\n# every occurrence is replaced" in detail


def test_a_url_is_shown_as_text_never_as_a_link() -> None:
    question = approval_question("WebFetch", {"url": "https://example.com/x", "prompt": "read"})
    assert question.detail is not None
    assert question.detail.startswith("Fetch ```\nhttps://example.com/x\n```")
    assert '"prompt": "read"' in question.detail


def test_an_mcp_tool_names_its_server_and_shows_its_arguments_as_json() -> None:
    question = approval_question("mcp__github__create_issue", {"title": "Bug"})
    assert question.header == "create_issue (github)"
    assert question.detail is not None
    assert "The MCP tool `create_issue` of server `github`" in question.detail
    assert '```json\n{\n  "title": "Bug"\n}\n```' in question.detail


def test_a_command_asking_to_leave_the_sandbox_says_so() -> None:
    detail = approval_question("Bash", {"command": "ls", "dangerouslyDisableSandbox": True}).detail
    assert detail == "```sh\nls\n```\n\n**It asks to run outside the sandbox.**"


def test_a_patch_is_shown_as_a_diff_and_its_files_are_named_in_the_question() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x = 1\n+x = 2\n"
        "*** Add File: notes.md\n+hello\n*** End Patch\n"
    )
    question = approval_question("apply_patch", {"command": patch}, agent="Codex")
    assert question.question == "Allow Codex to run apply_patch: src/app.py, notes.md?"
    assert question.detail == f"Apply this patch:\n\n```diff\n{patch}\n```"


def test_backticks_in_a_command_cannot_close_its_code_block() -> None:
    assert fenced("echo ```x```", "sh") == "````sh\necho ```x```\n````"


def test_huge_content_is_cut_saying_how_much_is_left_out() -> None:
    detail = approval_question("Write", {"file_path": "big", "content": "x" * 50_000}).detail
    assert detail is not None
    assert f"({50_000 - MAX_SHOWN_CHARACTERS} more characters not shown)" in detail
    assert len(detail) < MAX_SHOWN_CHARACTERS + 200


def test_dont_ask_again_is_offered_only_when_the_caller_can_remember_it() -> None:
    assert labels({"command": "ls"}) == [ALLOW, DENY]
    assert labels({"command": "ls"}, always="Adds Bash(ls:*)") == [ALLOW, ALLOW_ALWAYS, DENY]


@pytest.mark.parametrize(
    ("selected", "custom", "decision"),
    [
        ([ALLOW], None, ApprovalDecision(allowed=True)),
        ([ALLOW_ALWAYS], None, ApprovalDecision(allowed=True, always=True)),
        ([DENY], None, ApprovalDecision(allowed=False)),
        ([], "not on main", ApprovalDecision(allowed=False, feedback="not on main")),
        ([], None, ApprovalDecision(allowed=False)),
    ],
)
def test_only_an_explicit_allow_allows(
    selected: list[str], custom: str | None, decision: ApprovalDecision
) -> None:
    item = AskUserQuestionAnswerItem(id="approval", selected=selected, custom=custom)
    assert approval_decision(item) == decision


def test_the_denial_message_carries_the_persons_reason() -> None:
    said = ApprovalDecision(allowed=False, feedback="use the staging db")
    assert (
        denial_message(said, "Bash")
        == "The user denied this Bash call and said: use the staging db"
    )
    assert (
        denial_message(ApprovalDecision(allowed=False), "Bash") == "The user denied this Bash call."
    )
