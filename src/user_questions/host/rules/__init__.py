"""Rules: decisions people made once, applied by the host before anyone is disturbed again.

A rule decides approval requests only (a request that carries an `approval`, made by
`user_questions.approvals`); plain questions never match one. A rule allows exactly what it
names, read as the program that will consume the call reads it, and a call it cannot read so
is never allowed by any rule: a person is asked. One module per job:

- `shell`: a shell command read with bash's grammar (plain, or not and why; everything it may
  run, for deny rules);
- `patches`: a patch read with Codex's `apply_patch` grammar;
- `urls`: a URL's host read as a browser reads it (the WHATWG URL Standard);
- `paths`: a file path read as the agent's tool reads it, and path globs;
- `calls`: a tool call read once for every rule: its kind, its folder, what rules match of it;
- `making`: what a rule may hold, making and revoking rules, and their texts;
- `matching`: which rule decides a call, or why none can (`explain`);
- `offers`: the answer a rule gives a card, and the rule a card offers to make;
- `cache`: `Rules`, the host's copy of the rules, current for every decision;
- `inbox`: `InboxRules`, the rules as the inbox applies them to its requests (settling, offering,
  remembering).

Deny beats allow: when both match, the lowest-numbered deny decides. A revoked or expired rule
never matches. docs/rules.md says all of it for people.
"""

from user_questions.host.rules.cache import RELOAD_RETRY, Rules
from user_questions.host.rules.calls import SHELL_TOOLS, Kind, read_call, tool_kind
from user_questions.host.rules.inbox import RULE_PREFIX, InboxRules, Refusal
from user_questions.host.rules.making import (
    ANY_TOOL,
    add_rule,
    check_rule,
    new_rule,
    revoke_rule,
    rule_fields,
    rule_json,
    rule_text,
)
from user_questions.host.rules.matching import Match, Verdict, explain, match
from user_questions.host.rules.offers import (
    answered_decision,
    offered_rule,
    proposed_rule,
    rule_answer,
)

__all__ = [
    "ANY_TOOL",
    "RELOAD_RETRY",
    "RULE_PREFIX",
    "SHELL_TOOLS",
    "InboxRules",
    "Kind",
    "Match",
    "Refusal",
    "Rules",
    "Verdict",
    "add_rule",
    "answered_decision",
    "check_rule",
    "explain",
    "match",
    "new_rule",
    "offered_rule",
    "proposed_rule",
    "read_call",
    "revoke_rule",
    "rule_answer",
    "rule_fields",
    "rule_json",
    "rule_text",
    "tool_kind",
]
