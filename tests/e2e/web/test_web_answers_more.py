"""Answers that say more than a label, in a real browser: a note beside a choice, an approval
allowed with changes after seeing its diff, a form refused beside its field and then sent with
its typed value. The agent gets exactly what the page sent."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.web.conftest import Asker, OpenInbox, answer_of
from user_questions.approvals import approval_of, approval_question

DATABASE = {
    "id": "db",
    "question": "Which database should the service use?",
    "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
}
DEPLOY = {
    "id": "deploy",
    "question": "How should it deploy?",
    "schema": {
        "type": "object",
        "properties": {
            "replicas": {
                "type": "integer",
                "title": "Replicas",
                "description": "How many copies run",
                "minimum": 1,
                "maximum": 10,
                "default": 2,
            },
            "regions": {
                "type": "array",
                "title": "Regions",
                "items": {"anyOf": [{"const": "eu", "title": "Europe"}, {"const": "us"}]},
            },
            "canary": {"type": "boolean", "title": "Canary first"},
        },
        "required": ["replicas"],
    },
}
CALL = {"command": "rm -rf build/", "description": "Clean the build"}


def test_a_note_goes_beside_the_choice(open_inbox: OpenInbox, asker: Asker, session: str) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    card.locator(".option", has_text="SQLite").click()
    note = card.get_by_role("textbox", name="Note (sent beside your answer)")
    expect(note).to_be_hidden()  # collapsed until wanted
    card.get_by_text("Add a note").click()
    note.fill("  only for the tests  ")
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [{"id": "db", "selected": ["SQLite"], "note": "only for the tests"}]
    }


def test_an_approval_is_allowed_with_changes_after_its_diff(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    card_question = approval_question("Bash", CALL, agent="Claude").model_dump(
        mode="json", exclude_none=True
    )
    approval = approval_of("Bash", CALL, agent="claude-code", editable=True)
    asked = asker.ask(session, [card_question], approval=approval)
    card = inbox.card(session)
    card.get_by_role("button", name="Edit and allow").click()
    allow = card.get_by_role("button", name="Allow with changes")
    expect(allow).to_be_disabled()  # nothing changed yet
    card.get_by_role("textbox", name="The command to run instead").fill("rm -rf build/tmp")
    expect(card.locator(".diff del")).to_have_text("- rm -rf build/")
    expect(card.locator(".diff ins")).to_have_text("+ rm -rf build/tmp")
    card.get_by_text("Add a note").click()
    card.get_by_role("textbox", name="Note (sent beside your answer)").fill("keep the cache")
    allow.click()
    assert answer_of(asked) == {
        "answers": [
            {
                "id": "approval",
                "selected": ["Allow"],
                "note": "keep the cache",
                "edited": {"command": "rm -rf build/tmp", "description": "Clean the build"},
            }
        ]
    }


def test_a_call_that_cannot_be_changed_offers_no_edit(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    card_question = approval_question("Bash", CALL, agent="Codex").model_dump(
        mode="json", exclude_none=True
    )
    asked = asker.ask(session, [card_question], approval=approval_of("Bash", CALL, agent="codex"))
    card = inbox.card(session)
    expect(card.get_by_role("radio", name="Allow Run this call once.")).to_be_visible()
    expect(card.get_by_role("button", name="Edit and allow")).to_have_count(0)
    card.get_by_role("radio", name="Deny").click()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "approval", "selected": ["Deny"]}]}


def test_a_form_is_refused_beside_its_field_then_sent_with_typed_values(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DEPLOY])
    card = inbox.card(session)
    replicas = card.get_by_role("spinbutton", name="Replicas (required)")
    expect(replicas).to_have_value("2")  # the default, filled in
    expect(replicas).to_have_accessible_description("How many copies run")
    replicas.fill("11")
    card.get_by_role("checkbox", name="Europe").check()
    card.get_by_role("button", name="Submit").click()
    expect(card.locator(".field-error").first).to_have_text("must be at most 10")
    expect(replicas).to_have_attribute("aria-invalid", "true")
    expect(replicas).to_have_accessible_description("How many copies run must be at most 10")
    assert not asked.done()  # refused: still pending
    replicas.fill("3")
    expect(replicas).not_to_have_attribute("aria-invalid", "true")
    card.get_by_role("checkbox", name="Canary first").check()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [
            {
                "id": "deploy",
                "selected": [],
                "value": {"replicas": 3, "regions": ["eu"], "canary": True},
            }
        ]
    }
