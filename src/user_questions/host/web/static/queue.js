// The list of the requests waiting beyond the cards, and its filter by session.
//
// One compact row per request (its session, header, first question and age), oldest first, in a
// scrolling box that builds only the rows in view (and a few around them): 10,000 or 100,000
// requests cost the page the same few dozen elements. A row is a button that opens the request's
// card (app.js). The filter lists the sessions with requests waiting, with their counts.

import { formatNumber, t, tn } from "./i18n.js";
import { h, timeAgo } from "./dom.js";

/** Rows built beyond each edge of the box, so that scrolling shows no gap. */
const OVERSCAN = 8;
/** A row's height in rem: `.queue-row`'s height in app.css. */
const ROW_REM = 2.75;
/** Rows the box shows at most: `.queue-scroll`'s max-height in app.css is 22rem. */
const BOX_ROWS = 8;
/** Sessions offered by the filter at most (those with the most requests waiting). */
const MAX_SESSIONS = 200;
const ALL = "";

export class QueueView {
  #view;
  #open;
  /** The requests listed, oldest first: {length, at(index)}. */
  #items = [];
  /** The rows built, by rpcId: {element, time, request}. */
  #rows = new Map();
  #frame = 0;
  /** The box's scroll position, as its last scroll event said: reading it afresh while the
   * page is being changed would force a layout. */
  #top = 0;
  /** A row's height in px, from the root font size: looked up once (and after a resize), as
   * the lookup makes the browser bring its styles up to date. */
  #height = 0;
  #sessionsKey = null;

  /**
   * @param view {section, heading, scroller, rows, filter} elements of index.html
   * @param open called with a request's rpcId when its row is clicked
   * @param filter called with a session (or null for all) when the filter changes
   */
  constructor(view, { open, filter }) {
    this.#view = view;
    this.#open = open;
    view.scroller.addEventListener(
      "scroll",
      () => {
        this.#top = view.scroller.scrollTop;
        this.#schedule();
      },
      { passive: true },
    );
    window.addEventListener("resize", () => {
      this.#height = 0;
      this.#schedule();
    });
    view.filter.addEventListener("change", () => {
      view.scroller.scrollTop = 0;
      this.#top = 0;
      filter(view.filter.value === ALL ? null : view.filter.value);
    });
  }

  /**
   * Show `items` (the requests waiting beyond the cards, oldest first: an array, or anything
   * with `length` and `at(index)`). `total` is every
   * pending request, `sessions` their [session, count] pairs, `filter` the session shown.
   */
  update(items, { visible, total, sessions, filter }) {
    this.#view.section.hidden = !visible;
    if (!visible) {
      this.#items = [];
      this.#renderRows();
      return;
    }
    this.#items = items;
    this.#view.heading.textContent =
      filter === null
        ? tn("{count} more request waiting", "{count} more requests waiting", items.length)
        : tn(
            "{count} more request waiting from {session}",
            "{count} more requests waiting from {session}",
            items.length,
            { session: filter },
          );
    this.#updateFilter(sessions, total, filter);
    this.#renderRows();
  }

  /** Build the row of request `rpcId` again at the next update (what it shows changed). */
  forget(rpcId) {
    this.#rows.get(rpcId)?.element.remove();
    this.#rows.delete(rpcId);
  }

  /** Refresh the ages shown. */
  refreshTime(now = Date.now()) {
    for (const { time, request } of this.#rows.values()) time.textContent = ageOf(request, now);
  }

  #schedule() {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#renderRows();
    });
  }

  #rowHeight() {
    if (this.#height === 0) {
      const root = parseFloat(getComputedStyle(document.documentElement).fontSize);
      this.#height = ROW_REM * (root || 16);
    }
    return this.#height;
  }

  #renderRows() {
    const { rows } = this.#view;
    const items = this.#items;
    const height = this.#rowHeight();
    rows.style.height = `${items.length * height}px`;
    const inView = BOX_ROWS + 1;
    const top = Math.floor(this.#top / height);
    const first = Math.max(0, Math.min(top, items.length - inView) - OVERSCAN);
    const last = Math.min(items.length, first + inView + 2 * OVERSCAN);
    const built = new Map();
    const now = Date.now();
    for (let index = first; index < last; index += 1) {
      const request = items.at(index);
      const row = this.#rows.get(request.rpcId) ?? this.#row(request, now);
      row.element.style.transform = `translateY(${index * height}px)`;
      row.element.setAttribute("aria-posinset", String(index + 1));
      row.element.setAttribute("aria-setsize", String(items.length));
      row.button.dataset.index = String(index);
      if (!row.element.isConnected) rows.append(row.element);
      built.set(request.rpcId, row);
    }
    for (const [rpcId, row] of this.#rows) {
      if (!built.has(rpcId)) row.element.remove();
    }
    this.#rows = built;
  }

  #row(request, now) {
    const time = h("time", { class: "asked", datetime: request.askedAt || false });
    time.textContent = ageOf(request, now);
    const button = h(
      "button",
      {
        type: "button",
        class: "queue-row",
        "data-rpc-id": request.rpcId,
        onclick: () => this.#open(request.rpcId),
      },
      h("span", { class: "session", text: request.sessionId }),
      request.header ? h("span", { class: "chip", text: request.header }) : null,
      h("span", { class: "line", text: request.line }),
      request.more > 0 ? h("span", { class: "more", text: `+${request.more}` }) : null,
      request.count > 1 ? h("span", { class: "times", text: `×${formatNumber(request.count)}` }) : null,
      time,
    );
    return { element: h("li", { class: "queue-item" }, button), button, time, request };
  }

  #updateFilter(sessions, total, filter) {
    let offered = sessions;
    if (offered.length > MAX_SESSIONS) {
      const busiest = new Set(
        [...sessions]
          .sort((a, b) => b[1] - a[1])
          .slice(0, MAX_SESSIONS)
          .map(([session]) => session),
      );
      offered = sessions.filter(([session]) => busiest.has(session) || session === filter);
    }
    if (filter !== null && !offered.some(([session]) => session === filter)) {
      offered = [...offered, [filter, 0]];
    }
    const key = JSON.stringify([total, filter, offered]);
    if (key === this.#sessionsKey) return;
    this.#sessionsKey = key;
    const select = this.#view.filter;
    select.replaceChildren(
      h("option", { value: ALL, text: t("All sessions ({count})", { count: total }) }),
      ...offered.map(([session, count]) =>
        h("option", { value: session, text: `${session} (${count})` }),
      ),
    );
    select.value = filter ?? ALL;
  }
}

function ageOf(request, now) {
  return request.askedAt ? timeAgo(request.askedAt, now) : "";
}
