// The generic card: a request's questions one at a time, with a pager, options, "Other" and Skip;
// a form for a question that asks one (`schema`), a note beside any answer, and "Edit and allow"
// on an approval whose agent takes a changed call (`approval.editable`).

import { t } from "./i18n.js";
import { callEditor } from "./call-edit.js";
import { Card, uid } from "./card.js";
import { button, h, isObject } from "./dom.js";
import { FormView } from "./form-fields.js";
import { noteField, noteOf } from "./note-field.js";
import { answerFromDrafts, parseRecommendedLabel } from "./presentation.js";
import { answerFrame } from "./protocol.js";
import { quorumOf } from "./requests.js";

const UNANSWERED = t("Pick an option or type an answer first, or press Skip to leave it blank.");
/** The approval card's options (`user_questions.approvals`). */
const ALLOW = "Allow";
const ALLOW_ALWAYS = "Allow and don't ask again";
const REMEMBER_DESCRIPTION = t("Run it, and let the host allow the same call from now on.");

/**
 * The rule "Allow and don't ask again" makes, when the host offers one for this approval card
 * (the frame's `remember`): `{text, own}`, `own` when the card has that option itself (Claude
 * Code's suggestions, which still go back to it). Null for every other card.
 */
function rememberOffer(frame, questions) {
  const offer = frame.remember;
  if (!isObject(offer) || typeof offer.text !== "string" || questions.length !== 1) return null;
  const labels = (questions[0].options ?? []).map((option) => option.label);
  if (!labels.includes(ALLOW)) return null;
  return { text: offer.text, own: labels.includes(ALLOW_ALWAYS) };
}

/** The card's question with its "Allow and don't ask again" showing the rule it makes, added
 * after "Allow" when the card has none of its own. */
function withRemember(question, offer) {
  const options = [];
  for (const option of question.options) {
    if (option.label === ALLOW_ALWAYS) options.push({ ...option, rule: offer.text });
    else options.push(option);
    if (option.label === ALLOW && !offer.own) {
      options.push({ label: ALLOW_ALWAYS, description: REMEMBER_DESCRIPTION, rule: offer.text });
    }
  }
  return { ...question, options };
}

/** The card's question without its "Allow and don't ask again" (a quorum's card, shown to a
 * person who is not an admin). */
function withoutRemember(question) {
  const options = (question.options ?? []).filter((option) => option.label !== ALLOW_ALWAYS);
  return { ...question, options };
}

/**
 * The AnswerDraft (selected, custom, skipped) that the page's draft means. The page also keeps
 * `other` (the "Other" choice is ticked): custom text counts only while it is, so unticking
 * "Other" never loses what was typed.
 */
function answerDraft(question, draft) {
  if (draft.skipped) return { selected: [], custom: "", skipped: true };
  if ((question.options ?? []).length === 0) {
    return { selected: [], custom: draft.custom, skipped: false };
  }
  const custom = draft.other ? draft.custom : "";
  const single = question.multiSelect !== true;
  return { selected: single && draft.other ? [] : draft.selected, custom, skipped: false };
}

/** The frame's approval when the card may be allowed with changes: an editable approval on a
 * card with one question offering "Allow"; null otherwise. */
function editableApproval(frame, questions) {
  const approval = frame.approval;
  if (!isObject(approval) || approval.editable !== true || !isObject(approval.input)) return null;
  if (questions.length !== 1) return null;
  const labels = (questions[0].options ?? []).map((option) => option.label);
  return labels.includes(ALLOW) ? approval : null;
}

/** The digit that picks the option at `index`, shown beside it (1 to 9 only). */
function keyHint(index) {
  if (index >= 9) return null;
  return h("kbd", { class: "key", "aria-hidden": "true", text: String(index + 1) });
}

export class QuestionsCard extends Card {
  constructor(frame, env) {
    super(frame, env);
    // A rule that carries a quorum is an admin's to make: nobody else is offered one.
    const mayRemember = quorumOf(frame) === null || env.role === "admin";
    this.remember = mayRemember ? rememberOffer(frame, this.questions) : null;
    if (this.remember !== null) this.questions = [withRemember(this.questions[0], this.remember)];
    else if (!mayRemember) this.questions = [withoutRemember(this.questions[0])];
    this.page = Math.min(env.drafts.page(this.rpcId), this.questions.length - 1);
    this.pager = h("nav", { class: "pager", hidden: this.questions.length < 2 });
    this.meta.append(this.pager);
    this.backButton = button(t("Back"), "quiet", () => this.back());
    this.nextButton = button(t("Next"), "primary", () => this.next());
    this.skipButton = button(t("Skip"), "quiet", () => this.skip());
    this.dismissButton = button(t("Dismiss"), "quiet dismiss", () => this.dismiss(), {
      title: t("Dismiss the whole request (Esc)"),
    });
    this.actions.append(this.backButton, this.nextButton, this.skipButton, this.dismissButton);
    this.approval = editableApproval(frame, this.questions);
    this.edited = null;
    this.editButton = null;
    if (this.approval !== null) {
      this.editButton = button(t("Edit and allow"), "secondary", () => this.editOrAllow());
      this.cancelEditButton = button(t("Cancel edit"), "quiet", () => this.cancelEdit(), {
        hidden: true,
      });
      this.actions.insertBefore(this.editButton, this.skipButton);
      this.actions.insertBefore(this.cancelEditButton, this.skipButton);
    }
    this.render();
  }

  get question() {
    return this.questions[this.page];
  }

  get isLast() {
    return this.page === this.questions.length - 1;
  }

  render() {
    const question = this.question;
    const draft = this.draftOf(question);
    const options = question.options ?? [];
    const multi = question.multiSelect === true;
    const legend = h(
      "legend",
      { class: "question" },
      question.header ? h("span", { class: "chip", text: question.header }) : null,
      h("span", { class: "question-text", id: this.titleId, text: question.question }),
      multi ? h("span", { class: "hint", text: t("Choose any that apply.") }) : null,
    );
    const fieldset = h("fieldset", { class: "question-set" }, legend);
    if (question.detail != null) {
      const detail = this.detailOf(question, "detail");
      fieldset.setAttribute("aria-describedby", detail.id);
      fieldset.append(detail);
    }
    this.inputs = [];
    this.otherToggle = null;
    this.otherText = null;
    this.freeText = null;
    this.form = null;
    if (isObject(question.schema)) {
      this.form = new FormView(question.schema, draft, () => this.changed());
      fieldset.append(this.form.element);
    } else if (options.length > 0) {
      const name = uid("choice");
      const list = h("div", { class: "options" });
      options.forEach((option, index) => list.append(this.optionRow(option, index, name, multi)));
      list.append(this.otherRow(options.length, name, multi, draft));
      fieldset.append(list);
    } else {
      fieldset.append(this.freeTextField(draft));
    }
    if (this.approval !== null && draft.editing === true) {
      const editor = callEditor(this.approval, draft, (result) => {
        this.edited = result;
        this.updateButtons();
      });
      fieldset.append(editor.panel);
      editor.update();
    }
    fieldset.append(noteField(draft, () => this.changed()));
    this.body.replaceChildren(fieldset);
    this.sync();
    this.renderPager();
    this.updateButtons();
  }

  optionRow(option, index, name, multi) {
    const [display, recommended] = parseRecommendedLabel(option.label);
    const input = h("input", { type: multi ? "checkbox" : "radio", name, class: "choice" });
    input.addEventListener("change", () => this.choose(index, input.checked));
    this.inputs.push(input);
    return h(
      "label",
      { class: "option" },
      input,
      keyHint(index),
      h(
        "span",
        { class: "option-text" },
        h(
          "span",
          { class: "option-label" },
          display,
          recommended ? h("span", { class: "badge", text: t("Recommended") }) : null,
        ),
        option.description ? h("span", { class: "option-desc", text: option.description }) : null,
        option.rule
          ? h(
              "span",
              { class: "option-rule" },
              t("Makes the rule:") + " ",
              h("code", { class: "rule-text", text: option.rule }),
            )
          : null,
      ),
    );
  }

  otherRow(index, name, multi, draft) {
    const toggle = h("input", { type: multi ? "checkbox" : "radio", name, class: "choice" });
    toggle.addEventListener("change", () => this.chooseOther(toggle.checked));
    const text = h("input", {
      type: "text",
      class: "other-text",
      "aria-label": t("Other: your own answer"),
      placeholder: t("Type your own answer"),
      autocomplete: "off",
    });
    text.value = draft.custom;
    text.addEventListener("input", () => this.typeOther(text.value));
    this.otherToggle = toggle;
    this.otherText = text;
    return h(
      "div",
      { class: "option other" },
      h(
        "label",
        { class: "other-choice" },
        toggle,
        keyHint(index),
        h("span", { class: "option-label", text: t("Other") }),
      ),
      text,
    );
  }

  freeTextField(draft) {
    const id = uid("answer");
    const area = h("textarea", {
      id,
      class: "free-text",
      rows: 3,
      placeholder: t("Type your answer"),
      "aria-describedby": `${id}-hint`,
    });
    area.value = draft.custom;
    area.addEventListener("input", () => this.typeOther(area.value));
    this.freeText = area;
    return h(
      "div",
      { class: "free" },
      h("label", { for: id, class: "free-label", text: t("Your answer") }),
      area,
      h("span", { class: "hint", id: `${id}-hint`, text: t("Enter sends, Shift+Enter adds a line") }),
    );
  }

  choose(index, checked) {
    const question = this.question;
    const draft = this.draftOf(question);
    const label = question.options[index].label;
    draft.skipped = false;
    if (question.multiSelect === true) {
      draft.selected = draft.selected.filter((each) => each !== label);
      if (checked) draft.selected.push(label);
    } else {
      draft.selected = [label];
      draft.other = false;
    }
    this.changed();
  }

  chooseOther(checked) {
    const draft = this.draftOf(this.question);
    draft.skipped = false;
    draft.other = checked;
    if (checked && this.question.multiSelect !== true) draft.selected = [];
    this.changed();
    if (checked) this.otherText.focus();
  }

  typeOther(text) {
    const draft = this.draftOf(this.question);
    draft.custom = text;
    draft.skipped = false;
    if (this.otherToggle !== null && text.trim() !== "" && !draft.other) {
      draft.other = true;
      if (this.question.multiSelect !== true) draft.selected = [];
    }
    this.changed();
  }

  changed() {
    this.env.drafts.save();
    this.hideError();
    this.sync();
    this.renderPager();
  }

  /** Make the inputs show the draft. */
  sync() {
    const question = this.question;
    const draft = this.draftOf(question);
    const multi = question.multiSelect === true;
    (question.options ?? []).forEach((option, index) => {
      const input = this.inputs[index];
      const picked = draft.selected.includes(option.label) && (multi || !draft.other);
      input.checked = picked && !draft.skipped;
      input.closest(".option").classList.toggle("picked", input.checked);
    });
    if (this.otherToggle !== null) {
      this.otherToggle.checked = draft.other && !draft.skipped;
      this.otherToggle.closest(".option").classList.toggle("picked", this.otherToggle.checked);
      this.otherText.classList.toggle("unused", !this.otherToggle.checked);
    }
  }

  statusOf(question) {
    const draft = this.draftOf(question);
    if (draft.skipped) return "skipped";
    if (isObject(question.schema)) return "answered"; // the form as it stands, defaults and all
    const drafts = { [question.id]: answerDraft(question, draft) };
    const [item] = answerFromDrafts([question], drafts).answers;
    return item.selected.length > 0 || item.custom !== undefined ? "answered" : "unanswered";
  }

  renderPager() {
    if (this.questions.length < 2) return;
    const total = this.questions.length;
    this.pager.setAttribute("aria-label", t("Question {position} of {total}", { position: this.page + 1, total }));
    const dots = this.questions.map((question, index) => {
      const status = this.statusOf(question);
      const dot = h("button", {
        type: "button",
        class: `dot ${status}`,
        "aria-label": t("Question {position}, {status}", { position: index + 1, status }),
        "aria-current": index === this.page ? "step" : false,
        onclick: () => this.go(index),
      });
      return dot;
    });
    this.pager.replaceChildren(
      h("span", { class: "count", "aria-hidden": "true", text: `${this.page + 1}/${total}` }),
      ...dots,
    );
  }

  updateButtons() {
    const busy = this.sending !== null;
    this.backButton.hidden = this.page === 0;
    this.nextButton.textContent = this.isLast ? t("Submit") : t("Next");
    const editing = this.editButton !== null && this.draftOf(this.question).editing === true;
    this.nextButton.hidden = editing; // while editing, the answer is "Allow with changes"
    for (const button of [this.backButton, this.nextButton, this.skipButton, this.dismissButton]) {
      button.disabled = busy;
    }
    this.confirmButton.disabled = busy;
    if (this.editButton !== null) {
      const editing = this.draftOf(this.question).editing === true;
      this.editButton.textContent = editing ? t("Allow with changes") : t("Edit and allow");
      this.editButton.disabled = busy || (editing && this.edited?.input === undefined);
      this.cancelEditButton.hidden = !editing;
      this.cancelEditButton.disabled = busy;
    }
  }

  /** "Edit and allow" opens the editor; once the call is changed, "Allow with changes" sends it
   * (`selected: ["Allow"]`, `edited`: the whole new input). */
  editOrAllow() {
    const draft = this.draftOf(this.question);
    if (draft.editing !== true) {
      draft.editing = true;
      this.changed();
      this.render();
      this.body.querySelector(".edit-line, .edit-text")?.focus();
      return;
    }
    if (this.edited?.input === undefined) return;
    const item = { id: this.question.id, selected: [ALLOW], edited: this.edited.input };
    const note = noteOf(draft);
    if (note !== null) item.note = note;
    this.send(answerFrame(this.rpcId, this.sessionId, { answers: [item] }), "answer");
  }

  cancelEdit() {
    const draft = this.draftOf(this.question);
    draft.editing = false;
    delete draft.edit;
    this.edited = null;
    this.changed();
    this.render();
    this.editButton.focus();
  }

  /** A refused form value is shown beside the field the host named, as well as above. */
  receipt(payload) {
    super.receipt(payload);
    if (payload.accepted !== true && this.form !== null && typeof payload.message === "string") {
      this.form.showProblem(payload.message);
    }
  }

  go(page) {
    this.page = page;
    this.env.drafts.setPage(this.rpcId, page);
    this.hideError();
    this.render();
    this.focusFirst();
  }

  next() {
    if (this.isLast) this.submit();
    else this.go(this.page + 1);
  }

  back() {
    if (this.page > 0) this.go(this.page - 1);
  }

  /** Skip this question ({id, selected: []}) and go on; on the last question, submit. */
  skip() {
    this.draftOf(this.question).skipped = true;
    this.changed();
    this.next();
  }

  submit() {
    const drafts = Object.fromEntries(
      this.questions.map((each) => [each.id, answerDraft(each, this.draftOf(each))]),
    );
    const answer = answerFromDrafts(this.questions, drafts);
    this.questions.forEach((question, index) => {
      const draft = this.draftOf(question);
      if (draft.skipped) return;
      const sent = answer.answers[index];
      if (isObject(question.schema)) sent.value = this.formValue(question, draft);
      const note = noteOf(draft);
      if (note !== null) sent.note = note;
    });
    const [item] = answer.answers;
    const remember =
      this.remember !== null && item?.selected.length === 1 && item.selected[0] === ALLOW_ALWAYS;
    // Without an option of its own the card answers "Allow", and the host remembers.
    if (remember && !this.remember.own) item.selected = [ALLOW];
    this.send(answerFrame(this.rpcId, this.sessionId, answer, remember), "answer");
  }

  /** The value of a question's form: the shown one's, else what its draft holds. */
  formValue(question, draft) {
    if (question === this.question && this.form !== null) return this.form.value();
    return isObject(draft.value) ? { ...draft.value } : {};
  }

  /** Pick option `index` (digit keys); the one after the options is "Other". */
  pick(index) {
    const options = this.question.options ?? [];
    if (index < options.length) {
      const input = this.inputs[index];
      const checked = this.question.multiSelect === true ? !input.checked : true;
      this.choose(index, checked);
      input.focus();
      return true;
    }
    if (index === options.length && this.otherToggle !== null) {
      this.chooseOther(true);
      return true;
    }
    return false;
  }

  focusFirst() {
    const target =
      this.inputs.find((input) => input.checked) ??
      (this.otherToggle?.checked ? this.otherText : null) ??
      this.inputs[0] ??
      this.freeText;
    target?.focus();
  }

  handleKey(event) {
    if (super.handleKey(event)) return true;
    if (this.sending !== null || !this.confirmBar.hidden) return false;
    const target = event.target;
    if (event.key === "Enter") {
      if (target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement) return false;
      if (target instanceof HTMLTextAreaElement && event.shiftKey) return false;
      // Enter never skips: a question left blank is skipped with the Skip button only.
      if (this.statusOf(this.question) === "unanswered") this.showError(UNANSWERED);
      else this.next();
      return true;
    }
    const typing =
      target instanceof HTMLTextAreaElement ||
      (target instanceof HTMLInputElement && target.type === "text");
    if (typing || event.shiftKey || !/^[1-9]$/.test(event.key)) return false;
    return this.pick(Number(event.key) - 1);
  }
}
