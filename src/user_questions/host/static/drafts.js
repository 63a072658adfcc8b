// Drafts: what the user has picked and typed, kept until the request is settled.
//
// Keyed by the request's rpcId and the question id, held in memory and written through to
// sessionStorage, so a dropped connection, a host restart or a reload of the tab loses nothing:
// the host replays a pending request with the same rpcId and the card comes back as it was.

const STORAGE_KEY = "uq.drafts.v1";

/** A fresh draft: nothing picked, no "Other" text. */
function emptyDraft() {
  return { selected: [], custom: "", other: false, skipped: false };
}

// sessionStorage is the user's to edit: a stored draft is used only when it has the right shape.
function isDraft(value) {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray(value.selected) &&
    value.selected.every((label) => typeof label === "string") &&
    typeof value.custom === "string" &&
    typeof value.other === "boolean" &&
    typeof value.skipped === "boolean"
  );
}

export class DraftStore {
  #storage;
  #requests;

  constructor(storage) {
    this.#storage = storage;
    this.#requests = this.#load();
  }

  /** The draft of one question, created on first use; mutate it, then call save(). */
  draft(rpcId, questionId) {
    const request = this.#request(rpcId);
    if (!isDraft(request.drafts[questionId])) request.drafts[questionId] = emptyDraft();
    return request.drafts[questionId];
  }

  /** Which question of the request the user was looking at. */
  page(rpcId) {
    const page = this.#requests[rpcId]?.page;
    return Number.isInteger(page) && page >= 0 ? page : 0;
  }

  setPage(rpcId, page) {
    this.#request(rpcId).page = page;
    this.save();
  }

  save() {
    try {
      this.#storage.setItem(STORAGE_KEY, JSON.stringify(this.#requests));
    } catch {
      // Storage full or disabled: the in-memory drafts still survive a reconnect.
    }
  }

  /** Drop the drafts of a settled request. */
  forget(rpcId) {
    delete this.#requests[rpcId];
    this.save();
  }

  /** Drop the drafts of every request not in `rpcIds` (those still pending). */
  retain(rpcIds) {
    const keep = new Set(rpcIds);
    for (const rpcId of Object.keys(this.#requests)) {
      if (!keep.has(rpcId)) delete this.#requests[rpcId];
    }
    this.save();
  }

  #request(rpcId) {
    const request = this.#requests[rpcId];
    if (typeof request?.drafts !== "object" || request.drafts === null) {
      this.#requests[rpcId] = { page: 0, drafts: {} };
    }
    return this.#requests[rpcId];
  }

  #load() {
    try {
      const data = JSON.parse(this.#storage.getItem(STORAGE_KEY) ?? "{}");
      return data !== null && typeof data === "object" && !Array.isArray(data) ? data : {};
    } catch {
      return {};
    }
  }
}
