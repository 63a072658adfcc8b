// The inbox page: connects to the host, keeps one card per pending request, and routes keys.
//
// See docs/web.md for what the page does and its keyboard keys, and docs/protocol.md for the
// frames. On every (re)connection the host replays each pending request; the page then asks
// GET /api/pending once to drop the cards that were settled while it was away. `?q=<rpcId>`
// (where a notification's link leads) opens the page on that request's card. Without the token
// the page asks for it (sign-in.js); installed, a service worker (sw.js) keeps its shell.

import { h, isObject, preview } from "./dom.js";
import { DraftStore } from "./drafts.js";
import { DesktopNotifier } from "./notify.js";
import { PlanCard } from "./plan-card.js";
import { planReviewOf } from "./presentation.js";
import { Connection, socketUrl } from "./protocol.js";
import { QuestionsCard } from "./questions-card.js";
import { SignIn } from "./sign-in.js";

const TITLE = "user-questions";
const NOTICE_MS = 12000;
const ANNOUNCE_AFTER_MS = 250;
const CLOCK_MS = 30000;

const NOTICES = {
  sent: (card) => `Answer sent: ${card.summary}`,
  dismissed: (card) => `Dismissed: ${card.summary}`,
  elsewhere: (card) => `Answered elsewhere: ${card.summary}`,
  "dismissed-elsewhere": (card) => `Dismissed elsewhere: ${card.summary}`,
  withdrawn: (card) => `Withdrawn by its agent: ${card.summary}`,
  "timed-out": (card) => `Timed out, the agent stopped waiting: ${card.summary}`,
  gone: (card) => `No longer pending: ${card.summary}`,
};
const NOT_WAITING = "The question you followed a link to is no longer waiting.";
const REFUSED = "The host no longer accepts this page's token: open the link printed by uq serve.";
const SIGN_IN = "This host needs its token.";

const byId = (id) => document.getElementById(id);
const view = {
  cards: byId("cards"),
  empty: byId("empty"),
  emptyHeading: byId("empty-heading"),
  count: byId("count"),
  status: byId("status"),
  statusText: byId("status-text"),
  retry: byId("retry"),
  notices: byId("notices"),
  announcer: byId("announcer"),
};
const main = byId("questions");

/** Cards by rpcId, in the order they are shown. */
const cards = new Map();
const drafts = new DraftStore(sessionStore());
/** Counts connections; a card replayed on the current one is still pending. */
let generation = 0;
let announceQueue = [];
let announceTimer = 0;
let countdownTimer = 0;
/** The host refused this page's token: say so until a connection opens again. */
let refused = false;
/** Whether a connection has opened since the page loaded. */
let everOpened = false;
/** The request a link asked to open (`?q=<rpcId>`), until its card is shown. */
let wanted = new URL(window.location.href).searchParams.get("q");

const notifier = new DesktopNotifier(byId("notify"), {
  focus: (card) => card.focusCard(),
  waiting: (card) => cards.get(card.rpcId) === card,
});
const connection = new Connection(socketUrl(window.location), { onFrame, onStatus });
const signIn = new SignIn(byId("sign-in"), () => connection.retryNow());
const env = {
  drafts,
  send: (frame) => connection.send(frame),
  closed: (card, why) => closeCard(card, why),
};

removeFromAddressBar("token");
registerServiceWorker();
view.retry.addEventListener("click", () => connection.retryNow());
// Background tabs have their timers throttled: retry at once when the tab is looked at again.
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) connection.retryNow();
});
document.addEventListener("keydown", onKey);
setInterval(() => cards.forEach((card) => card.refreshTime()), CLOCK_MS);
connection.start();
update();

function sessionStore() {
  try {
    return window.sessionStorage;
  } catch {
    const memory = new Map();
    return {
      getItem: (key) => memory.get(key) ?? null,
      setItem: (key, value) => memory.set(key, value),
    };
  }
}

/** Drop a parameter from the address: the token, which came in the link and is carried by the
 * HttpOnly cookie from now on, or `q` once its card is shown. */
function removeFromAddressBar(name) {
  const url = new URL(window.location.href);
  if (!url.searchParams.has(name)) return;
  url.searchParams.delete(name);
  window.history.replaceState(window.history.state, "", `${url.pathname}${url.search}${url.hash}`);
}

/** The worker that lets the installed inbox open without its host (sw.js beside the page). */
function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("sw.js").catch((error) => {
    console.warn("user-questions: no service worker, so no offline start", error);
  });
}

/** Scroll to, focus and mark the card a link asked for. */
function reveal(card) {
  wanted = null;
  removeFromAddressBar("q");
  card.element.classList.add("wanted");
  card.element.scrollIntoView({ block: "center" });
  card.focusCard();
}

function onFrame(frame) {
  const payload = frame.payload;
  if (payload.type === "question/requested") addCard(frame);
  else if (payload.type === "question/resolved") {
    cards.get(payload.questionRpcId)?.resolved(payload.settled);
  }
  else if (payload.type === "client-response/receipt") cards.get(frame.rpcId)?.receipt(payload);
}

/** A `question/requested` frame a card can show: every field a card reads has its type. */
function isRequest(frame) {
  const payload = frame.payload;
  return (
    typeof frame.rpcId === "string" &&
    typeof payload.sessionId === "string" &&
    Array.isArray(payload.questions) &&
    payload.questions.length > 0 &&
    payload.questions.every(isQuestion)
  );
}

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

function addCard(frame) {
  const known = cards.get(frame.rpcId);
  if (known !== undefined) {
    known.seenOn = generation;
    return;
  }
  if (!isRequest(frame)) {
    console.warn("user-questions: ignored a malformed question/requested frame", frame);
    return;
  }
  const card = createCard(frame);
  card.seenOn = generation;
  cards.set(card.rpcId, card);
  const later = [...view.cards.children].find(
    (element) => cards.get(element.dataset.rpcId).askedAt > card.askedAt,
  );
  view.cards.insertBefore(card.element, later ?? null);
  announce(card);
  notifier.arrived(card);
  update();
  if (card.rpcId === wanted) reveal(card);
}

/** A plan review gets its own card; every other batch, the generic one. */
function createCard(frame) {
  const view = planReviewOf(frame.payload.questions);
  return view === null ? new QuestionsCard(frame, env) : new PlanCard(frame, env, view);
}

function closeCard(card, why) {
  if (cards.get(card.rpcId) !== card) return;
  const order = [...view.cards.children];
  const index = order.indexOf(card.element);
  const hadFocus = card.element.contains(document.activeElement);
  card.stop();
  cards.delete(card.rpcId);
  card.element.remove();
  drafts.forget(card.rpcId);
  notice(NOTICES[why](card));
  update();
  if (hadFocus) focusAfter(index);
}

/** Keep the keyboard in the inbox: the next card, or the empty state. */
function focusAfter(index) {
  const remaining = [...view.cards.children];
  const element = remaining[Math.min(index, remaining.length - 1)];
  const card = element === undefined ? undefined : cards.get(element.dataset.rpcId);
  if (card !== undefined) card.focusCard();
  else view.emptyHeading.focus();
}

function update() {
  const count = cards.size;
  document.title = count > 0 ? `(${count}) ${TITLE}` : TITLE;
  if (count === 0) notifier.clear();
  view.empty.hidden = count > 0;
  view.count.hidden = count === 0;
  view.count.textContent = count === 1 ? "1 request waiting" : `${count} requests waiting`;
}

/** Tell screen readers about new requests, once per burst (a replay brings many at once). */
function announce(card) {
  announceQueue.push(card);
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    const fresh = announceQueue.filter((each) => cards.has(each.rpcId));
    announceQueue = [];
    if (fresh.length === 1) {
      const [only] = fresh;
      const from = preview(only.sessionId, 40);
      view.announcer.textContent = `New question from ${from}: ${only.summary}`;
    } else if (fresh.length > 1) {
      view.announcer.textContent = `${fresh.length} new requests`;
    }
  }, ANNOUNCE_AFTER_MS);
}

function notice(text) {
  const item = h("li", { class: "notice" }, h("span", { text }));
  const close = h("button", {
    type: "button",
    class: "quiet close",
    "aria-label": "Close notice",
    text: "×",
    onclick: () => item.remove(),
  });
  item.append(close);
  view.notices.append(item);
  setTimeout(() => item.remove(), NOTICE_MS);
}

function onStatus(status) {
  clearInterval(countdownTimer);
  if (status.state === "open") {
    refused = false;
    everOpened = true;
    signIn.hide();
  }
  if (refused) return;
  document.body.dataset.connection = status.state;
  view.retry.hidden = status.state !== "waiting";
  if (status.state === "connecting") {
    setStatus("Connecting…");
  } else if (status.state === "open") {
    generation += 1;
    setStatus("Connected");
    reconcile(generation);
  } else {
    cards.forEach((card) => card.connectionLost());
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000));
      setStatus(
        everOpened
          ? `Connection lost. Reconnecting in ${seconds} s…`
          : `Cannot reach the host. Retrying in ${seconds} s…`,
      );
    };
    tick();
    countdownTimer = setInterval(tick, 1000);
    if (!status.opened) checkToken();
  }
}

function setStatus(text) {
  view.statusText.textContent = text;
}

/** A socket that never opens may mean the host was restarted with another token: say so. */
async function checkToken() {
  try {
    const response = await fetch("api/pending", { cache: "no-store" });
    if (response.status !== 401 || connection.isOpen) return;
  } catch {
    return;
  }
  refused = true;
  clearInterval(countdownTimer);
  view.retry.hidden = true;
  document.body.dataset.connection = "unauthorized";
  setStatus(everOpened ? REFUSED : SIGN_IN);
  signIn.show();
}

/** Drop the cards settled while the page was disconnected, and their drafts. */
async function reconcile(current) {
  let pending;
  try {
    const response = await fetch("api/pending", { cache: "no-store" });
    if (!response.ok) return;
    ({ pending } = await response.json());
  } catch {
    return;
  }
  if (current !== generation || !Array.isArray(pending)) return;
  const live = new Set(pending.map((frame) => frame?.rpcId));
  for (const card of [...cards.values()]) {
    if (card.seenOn !== current && !live.has(card.rpcId)) closeCard(card, "gone");
  }
  drafts.retain([...live, ...cards.keys()]);
  if (wanted !== null && !cards.has(wanted) && !live.has(wanted)) {
    wanted = null;
    removeFromAddressBar("q");
    notice(NOT_WAITING);
  }
}

/** The card keys act on: the one holding the focus, or the first when nothing is focused. */
function activeCard(target) {
  const element = target instanceof Element ? target.closest(".card") : null;
  if (element !== null) return cards.get(element.dataset.rpcId);
  const idle = target === document.body || target === document.documentElement || target === main;
  const first = view.cards.firstElementChild;
  return idle && first !== null ? cards.get(first.dataset.rpcId) : undefined;
}

function onKey(event) {
  const modified = event.altKey || event.ctrlKey || event.metaKey;
  if (event.defaultPrevented || event.isComposing || modified) return;
  if (activeCard(event.target)?.handleKey(event)) event.preventDefault();
}
