"""Every public module's surface is pinned: adding, removing or renaming a public name is a
visible decision here, as the package root's is in `test_public_surface.py`.

The packages that group modules (`bridges`, `integrations`, `host` and its rooms) re-export
nothing: each module is imported by its path, so importing one never loads another's extra.
"""

from __future__ import annotations

import importlib
import types

import pytest

PINNED: dict[str, list[str]] = {
    "user_questions.providers": ["ScriptedAnswer", "ScriptedProvider"],
    "user_questions.providers.remote": [
        "ASK_PATH",
        "BACKOFF_FIRST",
        "BACKOFF_MAX",
        "CONNECT_TIMEOUT",
        "RemoteProvider",
        "STEADY_AFTER",
        "UNREACHABLE_LIMIT",
        "parse_host_url",
    ],
    "user_questions.providers.terminal": ["INSTALL_HINT", "TerminalProvider", "ask_with"],
    "user_questions.providers.scripted": ["ScriptedAnswer", "ScriptedProvider"],
    "user_questions.bridges.acp": [
        "AcpClientHandlers",
        "AcpPrompt",
        "AcpProvider",
        "EditorAnswer",
        "Filled",
        "FormOutcome",
        "MAX_ATTEMPTS",
        "MAX_FIELDS",
        "MAX_RENDERED",
        "acp_client_handlers",
        "answer_from_elicitation",
        "fill_form",
        "prompt_of_request",
        "questions_to_elicitation",
    ],
    "user_questions.bridges.mcp": [
        "ElicitationProvider",
        "MAX_ATTEMPTS",
        "MAX_FIELDS",
        "PROGRESS_INTERVAL",
        "QuestionForm",
        "create_server",
        "elicitation_handler",
    ],
    "user_questions.bridges.claude": [
        "ANSWER_SEPARATOR",
        "ASK_TOOL",
        "DISMISSED",
        "PLAN_TOOL",
        "Permission",
        "PermissionAllow",
        "PermissionDeny",
        "answers_to_claude",
        "can_use_tool",
        "decide",
        "describe_permission_updates",
        "question_id",
        "questions_from_claude",
    ],
    "user_questions.bridges.claude_code": ["ANSWERED_HERE", "PLAN_DISMISSED", "hook_ask"],
    "user_questions.bridges.codex": ["AGENT", "DISMISSED", "hook_ask"],
    "user_questions.bridges.claude_permission": [
        "DESCRIPTION",
        "Options",
        "PARAMETERS",
        "TOOL_NAME",
        "apply",
        "inject",
        "name",
    ],
    "user_questions.bridges.hook": ["HookAsk", "HookOutput", "approval_ask", "permission_decision"],
    "user_questions.integrations.langgraph": [
        "ACCEPT",
        "ASK_INTERRUPT",
        "Follower",
        "IGNORE",
        "MAX_GENERATIONS",
        "answer_from_resume",
        "ask_user",
        "following",
        "forward_interrupts",
        "rpc_id_of",
    ],
    "user_questions.integrations.pydantic_ai": ["approve_deferred", "ask_user_toolset"],
    "user_questions.integrations.openai_agents": ["ask_user_tool", "resolve_interruptions"],
    "user_questions.host.stores": [
        "ChangeListener",
        "ChatMessage",
        "ChatPairing",
        "ChatStore",
        "Decision",
        "Escalation",
        "FAULT_CODES",
        "HistoryPage",
        "HistoryQuery",
        "HistoryStore",
        "NewQuestion",
        "PushStore",
        "PushSubscription",
        "QUESTIONS",
        "QuestionStore",
        "Role",
        "Rule",
        "RuleRecord",
        "RuleStore",
        "RulesListener",
        "SettingStore",
        "Settlement",
        "Store",
        "StoreStats",
        "StoredQuestion",
        "TokenRecord",
        "TokenStore",
        "TokensListener",
        "default_store_path",
        "open_store",
        "pending_record",
        "settled_record",
    ],
    "user_questions.host.config": ["DEFAULT_HOST", "DEFAULT_PORT", "HostConfig", "metrics_address"],
    "user_questions.host.app": ["create_app", "create_metrics_app"],
    "user_questions.host.server": [
        "GRACEFUL_SHUTDOWN",
        "bind",
        "bound_address",
        "host_url",
        "is_loopback",
        "run",
        "serve",
    ],
    "user_questions.host.hub": [
        "EventListener",
        "HostTask",
        "Hub",
        "MAX_CLIENT_BACKLOG",
        "MAX_PENDING",
        "PageSubscription",
        "RENDER_WORKERS",
        "RoutedListener",
        "Sees",
        "Watcher",
    ],
    "user_questions.host.in_process": ["HostProvider"],
    "user_questions.frames": [
        "AnswerResult",
        "AnswerValue",
        "Approval",
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
        "MAX_FRAME_BYTES",
        "MAX_ID_LENGTH",
        "MAX_MESSAGE_LENGTH",
        "MAX_NOTE_LENGTH",
        "MAX_ORIGIN_CLIENT",
        "MAX_ORIGIN_CWD",
        "Origin",
        "PageFrame",
        "Ping",
        "Pong",
        "PongFrame",
        "QuestionReplay",
        "QuestionReplayFrame",
        "QuestionRequested",
        "QuestionRequestedFrame",
        "QuestionResolved",
        "QuestionResolvedFrame",
        "ROLE_HEADER",
        "Receipt",
        "ReceiptFrame",
        "ResponseError",
        "RuleProposal",
        "Withdraw",
        "WithdrawReason",
        "brief",
        "iso",
    ],
    "user_questions.outcomes": [
        "CLAIMABLE_SURFACES",
        "Outcome",
        "RequestState",
        "ResolvedOutcome",
        "Surface",
        "claimed_surface",
        "resolved_outcome",
    ],
    "user_questions.types": [
        "AskUserQuestionAnswer",
        "AskUserQuestionAnswerItem",
        "AskUserQuestionIntent",
        "AskUserQuestionItem",
        "AskUserQuestionOption",
        "PlanReviewIntent",
        "WireModel",
    ],
    "user_questions.approvals": [
        "ALLOW",
        "ALLOW_ALWAYS",
        "APPROVAL_ID",
        "ApprovalDecision",
        "DECISION_TIMEOUT",
        "DENY",
        "MAX_SHOWN_CHARACTERS",
        "approval_decision",
        "approval_of",
        "approval_question",
        "decision_for",
        "denial_message",
        "fenced",
    ],
    "user_questions.presentation": [
        "AnswerDraft",
        "PlanReview",
        "answer_from_drafts",
        "parse_recommended_label",
        "plan_review_of",
    ],
    "user_questions.context": ["Context"],
    "user_questions.kernel": ["Context", "Disposer", "Fiber", "Service"],
    "user_questions.cli": ["app", "main"],
}

GROUPING_PACKAGES = [
    "user_questions.bridges",
    "user_questions.integrations",
    "user_questions.host",
    "user_questions.host.chat",
    "user_questions.host.gate",
    "user_questions.host.notify",
    "user_questions.host.protocols",
    "user_questions.host.telemetry",
    "user_questions.host.web",
]


@pytest.mark.parametrize("module", sorted(PINNED))
def test_the_public_names_of_each_public_module_are_pinned(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == PINNED[module]
    for name in imported.__all__:
        assert hasattr(imported, name), f"{module}.{name} is in __all__ but not defined"


@pytest.mark.parametrize("package", GROUPING_PACKAGES)
def test_a_package_that_groups_modules_re_exports_nothing(package: str) -> None:
    imported = importlib.import_module(package)
    # Its submodules appear as attributes once imported; nothing else may.
    names = [
        name
        for name, value in vars(imported).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    ]
    assert not hasattr(imported, "__all__")
    assert names == []
