// The plan-review card (presentation.planReviewOf): the plan, Approve, decline, "Chat about it".

import { t } from "./i18n.js";
import { Card, uid } from "./card.js";
import { button, h } from "./dom.js";
import { noteField, noteOf } from "./note-field.js";
import { answerFromDrafts, parseRecommendedLabel } from "./presentation.js";
import { answerFrame } from "./protocol.js";

/**
 * A plan review: the plan, Approve as the primary action, the decline option, and "Chat about
 * it", which dismisses (the agent hears the user wants to talk, not decide). Feedback typed in
 * the box goes with the decline as custom text; a note ("Add a note") goes with either. Enter and the digit keys do nothing here, so a
 * stray key never approves a plan: Tab to a button instead.
 */
export class PlanCard extends Card {
  constructor(frame, env, view) {
    super(frame, env);
    this.view = view;
    const question = this.questions[0];
    this.element.classList.add("plan-card");
    const draft = this.draftOf(question);
    const feedbackId = uid("feedback");
    this.feedback = h("textarea", {
      id: feedbackId,
      class: "feedback",
      rows: 2,
      placeholder: t("What should change?"),
    });
    this.feedback.value = draft.custom;
    this.feedback.addEventListener("input", () => {
      draft.custom = this.feedback.value;
      this.env.drafts.save();
      this.hideError();
      this.updateButtons();
    });
    this.approveButton = h("button", {
      type: "button",
      class: "primary",
      text: parseRecommendedLabel(view.approve)[0],
      onclick: () => this.answer([view.approve]),
    });
    this.declineButton = button("", "secondary", () => this.decline());
    this.chatButton = h("button", {
      type: "button",
      class: "quiet",
      text: t("Chat about it"),
      title: t("Dismiss the review and talk it over with the agent"),
      onclick: () => this.dismiss(),
    });
    this.body.append(
      h("span", { class: "chip", text: question.header || "Plan review" }),
      h("h2", { class: "question-text", id: this.titleId, text: view.question }),
      this.detailOf(question, "plan"),
      h(
        "div",
        { class: "free" },
        h("label", { for: feedbackId, class: "free-label", text: t("Feedback (optional)") }),
        this.feedback,
        h("span", {
          class: "hint",
          text: view.decline
            ? t("Sent with “{label}”.", { label: parseRecommendedLabel(view.decline)[0] })
            : t("Sent instead of approving."),
        }),
      ),
      noteField(draft, () => this.env.drafts.save()),
    );
    this.actions.append(this.approveButton, this.declineButton, this.chatButton);
    this.updateButtons();
  }

  get feedbackText() {
    return this.feedback.value.trim();
  }

  answer(selected) {
    const question = this.questions[0];
    const custom = selected.length === 0 ? this.feedback.value : "";
    const draft = { selected, custom, skipped: false };
    const answer = answerFromDrafts([question], { [question.id]: draft });
    const note = noteOf(this.draftOf(question));
    if (note !== null) answer.answers[0].note = note;
    this.send(answerFrame(this.rpcId, this.sessionId, answer), "answer");
  }

  /** Decline: the decline option, or the feedback as custom text when some was typed. */
  decline() {
    if (this.feedbackText !== "") this.answer([]);
    else if (this.view.decline !== undefined) this.answer([this.view.decline]);
  }

  updateButtons() {
    const busy = this.sending !== null;
    const label = this.view.decline;
    const decline = label === undefined ? null : parseRecommendedLabel(label)[0];
    const withFeedback = this.feedbackText !== "";
    if (decline === null) this.declineButton.textContent = t("Send feedback");
    else this.declineButton.textContent = withFeedback ? t("{label}, with feedback", { label: decline }) : decline;
    this.declineButton.disabled = busy || (decline === null && !withFeedback);
    this.approveButton.disabled = busy;
    this.chatButton.disabled = busy;
    this.confirmButton.disabled = busy;
  }

  focusFirst() {
    this.approveButton.focus();
  }
}
