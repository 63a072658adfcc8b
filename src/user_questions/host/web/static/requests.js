// The pending requests this page knows: oldest first, counted by session, filtered by session.
//
// The page holds every pending request here as plain data (no DOM): at 10,000 requests or more
// only the few shown as cards, and the rows of the list in view, have elements (app.js,
// queue.js). Ids from outside key Maps, never plain objects.

import { isObject, preview, summaryOf } from "./dom.js";
import { tn } from "./i18n.js";

const optional = (value, type) => value === undefined || value === null || typeof value === type;

function isQuestion(question) {
  return (
    isObject(question) &&
    typeof question.id === "string" &&
    typeof question.question === "string" &&
    optional(question.header, "string") &&
    optional(question.detail, "string") &&
    optional(question.multiSelect, "boolean") &&
    (question.intent == null || isObject(question.intent)) &&
    (question.options == null ||
      (Array.isArray(question.options) &&
        question.options.every(
          (option) =>
            isObject(option) &&
            typeof option.label === "string" &&
            optional(option.description, "string"),
        )))
  );
}

/** A `question/requested` frame a card can show: every field a card reads has its type. */
export function isRequest(frame) {
  const payload = isObject(frame) ? frame.payload : null;
  return (
    isObject(payload) &&
    typeof frame.rpcId === "string" &&
    typeof payload.sessionId === "string" &&
    Array.isArray(payload.questions) &&
    payload.questions.length > 0 &&
    payload.questions.every(isQuestion)
  );
}

/** How many identical requests of its asker a `question/requested` frame's card stands for
 * (its `group`; one answer settles them all): 1 when it stands for itself alone. */
export function groupCount(frame) {
  const count = isObject(frame.group) ? frame.group.count : 1;
  return Number.isInteger(count) && count > 1 ? count : 1;
}

/** Where the quorum of a `question/requested` frame's card stands (`{ needed, approvedBy }`),
 * or null when one approval settles it. */
export function quorumOf(frame) {
  const quorum = frame.quorum;
  if (!isObject(quorum) || !Number.isInteger(quorum.needed) || !Array.isArray(quorum.approvedBy)) {
    return null;
  }
  const approvedBy = quorum.approvedBy.filter((name) => typeof name === "string");
  return { needed: quorum.needed, approvedBy };
}

/** "asked 3,000 times" in the page's language, or "" for a card that stands for itself alone. */
export function askedTimes(count) {
  return count > 1 ? tn("asked {count} time", "asked {count} times", count) : "";
}

/** What the page keeps of one pending request: its frame; what the list shows of it is
 * worked out when a row or a notice needs it, so 100,000 requests hold no copies of their text. */
class PendingRequest {
  constructor(frame) {
    this.rpcId = frame.rpcId;
    this.sessionId = frame.payload.sessionId;
    this.askedAt = typeof frame.askedAt === "string" ? frame.askedAt : "";
    this.frame = frame;
    /** How many identical requests its card stands for (`question/group` keeps it current). */
    this.count = groupCount(frame);
    /** The connection (its generation) that last said it is pending. */
    this.seenOn = 0;
  }

  get questions() {
    return this.frame.payload.questions;
  }

  /** The first question's header, shortened for a row; "" when it has none. */
  get header() {
    const header = this.questions[0].header;
    return typeof header === "string" ? preview(header, 40) : "";
  }

  /** The first question, on one line. */
  get line() {
    return preview(this.questions[0].question, 160);
  }

  /** How many questions follow the first. */
  get more() {
    return this.questions.length - 1;
  }

  get summary() {
    return summaryOf(this.questions);
  }
}

export class PendingRequests {
  #byId = new Map();
  /** Oldest first (by askedAt, then arrival). */
  #order = [];
  /** Pending requests by session. */
  #sessions = new Map();
  /** The session shown, or null for every session. */
  #filter = null;
  /** The requests of the filtered session, oldest first; null until asked for again. */
  #shown = null;

  get size() {
    return this.#byId.size;
  }

  get filter() {
    return this.#filter;
  }

  set filter(session) {
    this.#filter = session;
    this.#shown = null;
  }

  get(rpcId) {
    return this.#byId.get(rpcId);
  }

  has(rpcId) {
    return this.#byId.has(rpcId);
  }

  keys() {
    return this.#byId.keys();
  }

  values() {
    return this.#byId.values();
  }

  /** Whether the filter lets `request` through. */
  matches(request) {
    return this.#filter === null || request.sessionId === this.#filter;
  }

  /** Add the request of a valid `question/requested` frame (isRequest), in its place by age. */
  add(frame) {
    const request = new PendingRequest(frame);
    this.#byId.set(request.rpcId, request);
    const order = this.#order;
    let index = order.length;
    if (index > 0 && order[index - 1].askedAt > request.askedAt) {
      let low = 0;
      while (low < index) {
        const middle = (low + index) >> 1;
        if (order[middle].askedAt > request.askedAt) index = middle;
        else low = middle + 1;
      }
    }
    order.splice(index, 0, request);
    this.#sessions.set(request.sessionId, (this.#sessions.get(request.sessionId) ?? 0) + 1);
    this.#shown = null;
    return request;
  }

  /** Remove a request; returns it, or undefined when it was not here. */
  remove(rpcId) {
    const request = this.#byId.get(rpcId);
    if (request === undefined) return undefined;
    this.#byId.delete(rpcId);
    this.#order.splice(this.#order.indexOf(request), 1);
    this.#forgetSession(request.sessionId);
    this.#shown = null;
    return request;
  }

  /** Remove every request `keep` says no to, at once; returns the removed ones. */
  removeUnless(keep) {
    const removed = this.#order.filter((request) => !keep(request));
    if (removed.length === 0) return removed;
    this.#order = this.#order.filter(keep);
    for (const request of removed) {
      this.#byId.delete(request.rpcId);
      this.#forgetSession(request.sessionId);
    }
    this.#shown = null;
    return removed;
  }

  /** The requests the filter lets through, oldest first (do not change the array). */
  shown() {
    if (this.#shown === null) {
      this.#shown =
        this.#filter === null ? this.#order : this.#order.filter((r) => this.matches(r));
    }
    return this.#shown;
  }

  /** [session, pending count] pairs, by session name. */
  sessions() {
    return [...this.#sessions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  #forgetSession(session) {
    const count = this.#sessions.get(session) - 1;
    if (count > 0) this.#sessions.set(session, count);
    else this.#sessions.delete(session);
  }
}
