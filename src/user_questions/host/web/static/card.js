// The part every card shares: one pending request, its meta line, receipts and dismissal.
//
// A card owns its DOM and its drafts and talks to the rest of the page through `env`:
//   env.drafts             the DraftStore (drafts survive reconnects and reloads)
//   env.send(frame)        send a client-response; false when the socket is down
//   env.closed(card, why)  the request is settled: "sent", "dismissed" (here), "elsewhere"
//                          (another answer won), "dismissed-elsewhere", "withdrawn" (the
//                          asker gave up), "timed-out" (the asker's timeout ran out), "gone"
//                          (settled while this page was away)
// Model text only ever reaches the DOM as text; a question's detail is the host's rendered
// markdown, passed through trustedFragment(). Ids from outside key Maps, never plain objects.

import { language, t } from "./i18n.js";
import { button, h, isObject, originText, summaryOf, timeAgo, trustedFragment } from "./dom.js";
import { dismissFrame } from "./protocol.js";
import { askedTimes, groupCount } from "./requests.js";

/** How long a card waits for its own receipt after the host said the request is settled. */
const RECEIPT_GRACE_MS = 5000;
/** Why a card closes, by the exact outcome of a `question/resolved` frame (its `settled`). */
const CLOSED_BY = new Map([
  ["answered", "elsewhere"],
  ["dismissed", "dismissed-elsewhere"],
  ["withdrawn", "withdrawn"],
  ["timed-out", "timed-out"],
]);
const NOT_CONNECTED =
  t("Not connected, so nothing was sent. Your answer is kept: send it again once the page has reconnected.");

let lastId = 0;

/** A page-unique element id. */
export function uid(prefix) {
  lastId += 1;
  return `${prefix}-${lastId}`;
}

export class Card {
  constructor(frame, env) {
    this.rpcId = frame.rpcId;
    this.sessionId = frame.payload.sessionId;
    this.questions = frame.payload.questions;
    /** The host's HTML of each detail, by question id (a Map: the ids come from outside). */
    this.rendered = new Map(isObject(frame.rendered) ? Object.entries(frame.rendered) : []);
    this.askedAt = typeof frame.askedAt === "string" ? frame.askedAt : "";
    this.origin = originText(frame.origin);
    /** The digest of the card as the host stored it: sent back with the answer, so that an
     * answer to a card that changed since it was shown is refused (docs/audit.md). */
    this.digest = typeof frame.digest === "string" ? frame.digest : null;
    this.env = env;
    /** "answer" or "dismiss" while a client-response waits for its receipt. */
    this.sending = null;
    this.graceTimer = 0;
    this.titleId = uid("card-title");
    this.time = h("time", { class: "asked", datetime: this.askedAt || false });
    if (this.askedAt) this.time.title = new Date(this.askedAt).toLocaleString(language());
    this.refreshTime();
    this.errorBox = h("p", { class: "card-error", role: "alert", hidden: true });
    /** Where a quorum stands once this person's approval was counted ("1 of 2 approved: alice"). */
    this.statusBox = h("p", { class: "card-status", role: "status", hidden: true });
    this.confirmButton = button(t("Dismiss"), "danger", () => this.dismiss());
    this.confirmBar = h(
      "div",
      { class: "confirm", role: "group", "aria-label": t("Confirm dismissal"), hidden: true },
      h("p", { text: t("Dismiss this request? The agent is told that you cancelled it.") }),
      h(
        "div",
        { class: "confirm-actions" },
        this.confirmButton,
        button(t("Keep"), "quiet", () => this.closeConfirm()),
      ),
    );
    this.times = h("span", {
      class: "times",
      title: t("identical requests of this asker: one answer settles them all"),
    });
    this.setCount(groupCount(frame));
    this.meta = h(
      "header",
      { class: "card-meta" },
      h("span", { class: "session", title: t("session"), text: this.sessionId }),
      this.time,
      this.times,
      this.origin
        ? h("span", { class: "origin", title: t("asked from {origin}", { origin: this.origin }), text: this.origin })
        : null,
    );
    this.body = h("div", { class: "card-body" });
    this.actions = h("div", { class: "card-actions" });
    this.element = h(
      "article",
      { class: "card", "data-rpc-id": this.rpcId, "aria-labelledby": this.titleId, tabindex: "-1" },
      this.meta,
      this.body,
      this.errorBox,
      this.statusBox,
      this.confirmBar,
      this.actions,
    );
  }

  /** A one-line description for notices: the first question, and how many follow. */
  get summary() {
    return summaryOf(this.questions);
  }

  draftOf(question) {
    return this.env.drafts.draft(this.rpcId, question.id);
  }

  /** The card stands for `count` identical requests of its asker (`question/group`). */
  setCount(count) {
    this.times.textContent = askedTimes(count);
    this.times.hidden = count < 2;
  }

  refreshTime(now = Date.now()) {
    const ago = this.askedAt ? timeAgo(this.askedAt, now) : "";
    this.time.textContent = ago ? t("asked {when}", { when: ago }) : "";
  }

  /** The markdown detail of a question, as the host rendered it. */
  detailOf(question, className) {
    const box = h("div", { class: `${className} markdown`, id: uid("detail") });
    const html = this.rendered.get(question.id);
    if (typeof html === "string") box.append(trustedFragment(html));
    else box.append(h("p", { class: "plain", text: question.detail }));
    return box;
  }

  send(frame, kind) {
    if (this.sending !== null) return;
    this.hideError();
    if (!this.env.send(this.digest === null ? frame : { ...frame, digest: this.digest })) {
      this.showError(NOT_CONNECTED);
      return;
    }
    this.sending = kind;
    this.element.setAttribute("aria-busy", "true");
    this.updateButtons();
  }

  dismiss() {
    this.confirmBar.hidden = true;
    this.send(dismissFrame(this.rpcId), "dismiss");
  }

  /** The host's receipt for this card's client-response. */
  receipt(payload) {
    const kind = this.sending;
    this.idle();
    if (payload.accepted === true && typeof payload.message === "string") {
      // One approval of several needed: counted, and the request stays pending.
      this.statusBox.textContent = payload.message;
      this.statusBox.hidden = false;
    } else if (payload.accepted === true) {
      this.env.closed(this, kind === "dismiss" ? "dismissed" : "sent");
    } else if (payload.reason === "not-pending") this.env.closed(this, "elsewhere");
    else this.showError(payload.message || t("The host did not accept this answer."));
  }

  /**
   * The request was settled (`question/resolved`, `settled` its exact outcome). When this card's
   * own response is on its way, its receipt tells whether this page or another one won; wait a
   * little for it.
   */
  resolved(settled) {
    const why = CLOSED_BY.get(settled) ?? "gone";
    if (this.sending === null) {
      this.env.closed(this, why);
      return;
    }
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => this.env.closed(this, "gone"), RECEIPT_GRACE_MS);
  }

  /** The socket dropped: a response in flight may or may not have arrived; the replay tells. */
  connectionLost() {
    if (this.sending !== null) this.idle();
  }

  idle() {
    this.sending = null;
    clearTimeout(this.graceTimer);
    this.element.removeAttribute("aria-busy");
    this.updateButtons();
  }

  stop() {
    clearTimeout(this.graceTimer);
  }

  showError(message) {
    this.errorBox.textContent = message;
    this.errorBox.hidden = false;
  }

  hideError() {
    this.errorBox.hidden = true;
    this.errorBox.textContent = "";
  }

  /** Focus the card itself, not a control in it, so a key meant for the last card does nothing
   * here by accident. */
  focusCard() {
    this.element.focus();
  }

  openConfirm() {
    this.returnFocus = document.activeElement;
    this.confirmBar.hidden = false;
    this.confirmButton.focus();
  }

  closeConfirm() {
    this.confirmBar.hidden = true;
    if (this.returnFocus instanceof HTMLElement && this.element.contains(this.returnFocus)) {
      this.returnFocus.focus();
    } else {
      this.focusFirst();
    }
  }

  /** Keys for the whole card; true when the key was used. Esc asks, Esc again dismisses. */
  handleKey(event) {
    if (event.key !== "Escape" || this.sending !== null) return false;
    if (this.confirmBar.hidden) this.openConfirm();
    else this.dismiss();
    return true;
  }
}
