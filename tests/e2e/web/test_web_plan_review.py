"""The plan-review card: approve, decline, feedback, "Chat about it", and a hostile plan."""

from __future__ import annotations

from playwright.sync_api import Dialog, expect

from tests.e2e.web.conftest import Asker, OpenInbox, answer_of, error_of
from user_questions.tool_exit_plan_mode import plan_question, verdict
from user_questions.types import AskUserQuestionAnswer

PLAN = """# Add a cache

1. Put a `Cache` in front of the store.
2. Invalidate on write.
"""


def plan(text: str = PLAN) -> list[dict[str, object]]:
    """The question `exit_plan_mode` asks, as wire JSON."""
    return [plan_question(text).model_dump(mode="json")]


def test_plan_is_rendered_and_approve_selects_the_approve_label(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, plan())
    card = inbox.card(session)
    expect(card.locator(".chip")).to_have_text("Plan review")
    expect(card.locator(".plan h1")).to_have_text("Add a cache")
    expect(card.locator(".plan li")).to_have_count(2)
    expect(card.locator(".plan code")).to_have_text("Cache")
    expect(card.get_by_role("radio")).to_have_count(0)
    approve = card.get_by_role("button", name="Approve")
    expect(approve).to_have_class("primary")
    approve.click()
    answer = answer_of(asked)
    assert answer == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    assert verdict(AskUserQuestionAnswer.model_validate(answer)) == {"approved": True}


def test_decline_selects_the_decline_label(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, plan())
    inbox.card(session).get_by_role("button", name="Keep planning").click()
    assert answer_of(asked) == {"answers": [{"id": "plan-review", "selected": ["Keep planning"]}]}


def test_feedback_is_sent_with_the_decline_as_custom_text(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, plan())
    card = inbox.card(session)
    card.get_by_role("textbox", name="Feedback").fill("Cache reads only, not writes.")
    card.get_by_role("button", name="Keep planning, with feedback").click()
    answer = answer_of(asked)
    assert answer == {
        "answers": [
            {"id": "plan-review", "selected": [], "custom": "Cache reads only, not writes."}
        ]
    }
    assert verdict(AskUserQuestionAnswer.model_validate(answer)) == {
        "approved": False,
        "feedback": "Cache reads only, not writes.",
    }


def test_chat_about_it_dismisses_the_review(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, plan())
    inbox.card(session).get_by_role("button", name="Chat about it").click()
    assert error_of(asked).code == "ASK_CANCELLED"
    expect(inbox.card(session)).to_have_count(0)


def test_keys_never_approve_a_plan_by_themselves(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, plan())
    card = inbox.card(session)
    expect(card).to_be_visible()
    for key in ("Enter", "1", "2"):
        inbox.page.keyboard.press(key)
    card.get_by_role("textbox", name="Feedback").press("Enter")
    assert not asked.done()
    expect(card).to_be_visible()
    card.get_by_role("button", name="Approve").focus()
    inbox.page.keyboard.press("Enter")  # a focused button is pressed as usual
    assert answer_of(asked) == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}


HOSTILE = """# Plan

<script>window.__uqRan = "script"; alert("script")</script>

<img src=x onerror="window.__uqRan = 'img'; alert('img')">

[click me](javascript:window.__uqRan='link')

<a href="#" onclick="window.__uqRan='anchor'">anchor</a>
"""


def test_a_plan_with_script_and_img_onerror_runs_nothing(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    dialogs: list[str] = []

    def record(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    inbox.page.on("dialog", record)
    asked = asker.ask(session, plan(HOSTILE))
    card = inbox.card(session)
    shown = card.locator(".plan")
    expect(shown).to_contain_text('<script>window.__uqRan = "script"; alert("script")</script>')
    expect(shown).to_contain_text("<img src=x onerror=")
    expect(shown.locator("script, img, [onerror], [onclick], iframe")).to_have_count(0)
    expect(shown.locator('a[href^="javascript"]')).to_have_count(0)
    shown.get_by_text("click me").click()
    card.get_by_role("button", name="Approve").click()
    assert answer_of(asked) == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    assert inbox.page.evaluate("window.__uqRan") is None
    assert dialogs == []
