// Drafts: what the user has picked and typed, kept until the request is settled.
//
// Keyed by the request's rpcId and the question id, held in memory and written through to
// sessionStorage, so a dropped connection, a host restart or a reload of the tab loses nothing:
// the host replays a pending request with the same rpcId and the card comes back as it was.
// Both ids come from outside, so they key Maps, never plain objects: an id such as "__proto__"
// or "constructor" is a draft like any other.

import { isObject } from "./dom.js";

const STORAGE_KEY = "uq.drafts.v1";

/** A fresh draft: nothing picked, no "Other" text, no note; a form's `value` and a changed
 * call's `edit` text appear once entered. */
function emptyDraft() {
  return { selected: [], custom: "", other: false, skipped: false, note: "" };
}

// sessionStorage is the user's to edit: a stored draft is used only when it has the right shape.
function isDraft(value) {
  return (
    isObject(value) &&
    Array.isArray(value.selected) &&
    value.selected.every((label) => typeof label === "string") &&
    typeof value.custom === "string" &&
    typeof value.other === "boolean" &&
    typeof value.skipped === "boolean" &&
    (value.note === undefined || typeof value.note === "string") &&
    (value.value === undefined || isObject(value.value)) &&
    (value.edit === undefined || typeof value.edit === "string") &&
    (value.editing === undefined || typeof value.editing === "boolean")
  );
}

/** A stored request: {page, drafts: Map of question id to draft}, or null when malformed. */
function requestOf(value) {
  if (!isObject(value) || !isObject(value.drafts)) return null;
  const drafts = new Map(Object.entries(value.drafts).filter(([, draft]) => isDraft(draft)));
  return { page: value.page, drafts };
}

export class DraftStore {
  #storage;
  /** Map of rpcId to {page, drafts}. */
  #requests;

  constructor(storage) {
    this.#storage = storage;
    this.#requests = this.#load();
  }

  /** The draft of one question, created on first use; mutate it, then call save(). */
  draft(rpcId, questionId) {
    const drafts = this.#request(rpcId).drafts;
    if (!drafts.has(questionId)) drafts.set(questionId, emptyDraft());
    return drafts.get(questionId);
  }

  /** Which question of the request the user was looking at. */
  page(rpcId) {
    const page = this.#requests.get(rpcId)?.page;
    return Number.isInteger(page) && page >= 0 ? page : 0;
  }

  setPage(rpcId, page) {
    this.#request(rpcId).page = page;
    this.save();
  }

  save() {
    const stored = Object.fromEntries(
      [...this.#requests].map(([rpcId, { page, drafts }]) => [
        rpcId,
        { page, drafts: Object.fromEntries(drafts) },
      ]),
    );
    try {
      this.#storage.setItem(STORAGE_KEY, JSON.stringify(stored));
    } catch {
      // Storage full or disabled: the in-memory drafts still survive a reconnect.
    }
  }

  /** Drop the drafts of a settled request. */
  forget(rpcId) {
    this.#requests.delete(rpcId);
    this.save();
  }

  /** Drop the drafts of every request not in `rpcIds` (those still pending). */
  retain(rpcIds) {
    const keep = new Set(rpcIds);
    for (const rpcId of [...this.#requests.keys()]) {
      if (!keep.has(rpcId)) this.#requests.delete(rpcId);
    }
    this.save();
  }

  #request(rpcId) {
    if (!this.#requests.has(rpcId)) this.#requests.set(rpcId, { page: 0, drafts: new Map() });
    return this.#requests.get(rpcId);
  }

  #load() {
    let data;
    try {
      data = JSON.parse(this.#storage.getItem(STORAGE_KEY) ?? "{}");
    } catch {
      return new Map();
    }
    if (!isObject(data)) return new Map();
    const requests = new Map();
    for (const [rpcId, value] of Object.entries(data)) {
      const request = requestOf(value);
      if (request !== null) requests.set(rpcId, request);
    }
    return requests;
  }
}
