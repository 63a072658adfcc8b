// The inbox page: connects to the host, keeps every pending request, and routes keys.
//
// See docs/web.md for what the page does and its keyboard keys, and docs/protocol.md for the
// frames. The page asks for the batched replay (`/ws?replay=paced`): on every (re)connection the
// host sends the pending requests in `question/replay` batches, the first of which says how many
// there are, so the count is right at once; once the last batch is in, the requests not replayed
// were settled while the page was away. Only a few requests get a full card (the oldest of the
// session shown, and the one opened from the list); the others wait in the list (queue.js),
// which builds only the rows in view. `?q=<rpcId>` (where a notification's link leads) opens the
// page on that request's card. Without the token the page asks for it (sign-in.js); installed,
// a service worker (sw.js) keeps its shell.

import { t, tn } from "./i18n.js";
import { TOKEN_REFUSED, h, isObject, preview } from "./dom.js";
import { DraftStore } from "./drafts.js";
import { DesktopNotifier } from "./notify.js";
import { PlanCard } from "./plan-card.js";
import { planReviewOf } from "./presentation.js";
import { ReconnectingSocket, socketUrl } from "./protocol.js";
import { QuestionsCard } from "./questions-card.js";
import { QueueView } from "./queue.js";
import { PendingRequests, groupCount, isRequest, quorumOf } from "./requests.js";
import { SignIn } from "./sign-in.js";

const TITLE = "user-questions";
const NOTICE_MS = 12000;
const ANNOUNCE_AFTER_MS = 250;
const CLOCK_MS = 30000;
const SERVICE_WORKER_AFTER_MS = 2000;
/** Full cards shown at once (the oldest requests of the session shown), besides one opened from
 * the list and those waiting for their receipt; every other request waits in the list. */
const CARDS_SHOWN = 5;

const NOTICES = {
  sent: (card) => t("Answer sent: {summary}", card),
  dismissed: (card) => t("Dismissed: {summary}", card),
  elsewhere: (card) => t("Answered elsewhere: {summary}", card),
  "dismissed-elsewhere": (card) => t("Dismissed elsewhere: {summary}", card),
  withdrawn: (card) => t("Withdrawn by its agent: {summary}", card),
  "timed-out": (card) => t("Timed out, the agent stopped waiting: {summary}", card),
  gone: (card) => t("No longer pending: {summary}", card),
};
const NOT_WAITING = t("The question you followed a link to is no longer waiting.");
const SIGN_IN = t("This host needs its token.");

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

/** Every pending request the page knows, by rpcId and oldest first. */
const requests = new PendingRequests();
/** The cards shown, by rpcId. */
const cards = new Map();
const drafts = new DraftStore(sessionStore());
/** Counts connections; a request replayed on the current one is still pending. */
let generation = 0;
/** The current connection's replay: {total, received, left (its requests gone since), done};
 * null until its first batch. */
let replay = null;
/** The request opened from the list (or by a link): its card is shown first. */
let opened = null;
let renderFrame = 0;
let announceQueue = [];
let announceTimer = 0;
let countdownTimer = 0;
/** The host refused this page's token: say so until a connection opens again. */
let refused = false;
/** Whether the service worker was registered (once the first replay is in, or after 2 s). */
let registeredWorker = false;
/** Whether a connection has opened since the page loaded. */
let everOpened = false;
/** The request a link asked to open (`?q=<rpcId>`), until its card is shown. */
let wanted = new URL(window.location.href).searchParams.get("q");

const notifier = new DesktopNotifier(byId("notify"), {
  focus: (request) => openRequest(request.rpcId),
  waiting: (request) => requests.has(request.rpcId),
});
const queue = new QueueView(
  {
    section: byId("queue"),
    heading: byId("queue-heading"),
    scroller: byId("queue-scroll"),
    rows: byId("queue-rows"),
    filter: byId("session-filter"),
  },
  { open: openRequest, filter: setFilter },
);
const connection = new ReconnectingSocket(socketUrl(window.location), { onFrame, onStatus });
const signIn = new SignIn(byId("sign-in"), () => connection.retryNow());
const env = {
  drafts,
  /** The token's role (`GET /api/me`), once known: only an admin is offered a quorum's rule. */
  role: null,
  send: (frame) => connection.send(frame),
  closed: (card, why) => closeCard(card, why),
};

removeFromAddressBar("token");
// The worker fetches the whole shell when it installs: not while the first requests load.
setTimeout(registerServiceWorker, SERVICE_WORKER_AFTER_MS);
view.retry.addEventListener("click", () => connection.retryNow());
// Background tabs have their timers throttled: retry at once when the tab is looked at again.
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) connection.retryNow();
});
document.addEventListener("keydown", onKey);
setInterval(() => {
  cards.forEach((card) => card.refreshTime());
  queue.refreshTime();
}, CLOCK_MS);
connection.start();
render();

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
  if (!("serviceWorker" in navigator) || registeredWorker) return;
  registeredWorker = true;
  navigator.serviceWorker.register("sw.js").catch((error) => {
    console.warn("user-questions: no service worker, so no offline start", error);
  });
}

/** Show a request's card first (the list's rows and links open requests), and focus it. */
function openRequest(rpcId) {
  const request = requests.get(rpcId);
  if (request === undefined) return;
  if (!requests.matches(request)) setFilter(null);
  opened = rpcId;
  render();
  const card = cards.get(rpcId);
  card.element.scrollIntoView({ block: "nearest" });
  card.focusCard();
}

/** Scroll to, focus and mark the card a link asked for. */
function reveal(rpcId) {
  wanted = null;
  removeFromAddressBar("q");
  openRequest(rpcId);
  const card = cards.get(rpcId);
  card.element.classList.add("wanted");
  card.element.scrollIntoView({ block: "center" });
}

function setFilter(session) {
  requests.filter = session;
  if (opened !== null && !requests.matches(requests.get(opened))) opened = null;
  render();
}

function onFrame(frame) {
  const payload = frame.payload;
  if (payload.type === "question/replay") onReplay(payload);
  else if (payload.type === "question/requested") {
    const request = addRequest(frame);
    if (request !== null) arrived([request]);
  } else if (payload.type === "question/resolved") {
    settled(payload.questionRpcId, payload.settled);
  } else if (payload.type === "question/group") {
    if (Number.isInteger(payload.count)) counted(payload.questionRpcId, payload.count);
  } else if (payload.type === "question/quorum") {
    tallied(payload.questionRpcId, payload.quorum);
  } else if (payload.type === "client-response/receipt") cards.get(frame.rpcId)?.receipt(payload);
}

/** One batch of the replay of the pending requests on a new connection. */
function onReplay(payload) {
  if (!Array.isArray(payload.requests) || !Number.isInteger(payload.pending)) {
    console.warn("user-questions: ignored a malformed question/replay frame", payload);
    return;
  }
  if (replay === null) replay = { total: payload.pending, received: 0, left: 0, done: false };
  const fresh = [];
  for (const frame of payload.requests) {
    const request = addRequest(frame);
    if (request !== null) fresh.push(request);
  }
  replay.received += payload.requests.length;
  arrived(fresh);
  if (!replay.done && replay.received >= replay.total) replayed();
}

/** Note a request the host says is pending; returns it when it is new to this page. */
function addRequest(frame) {
  const known = isObject(frame) ? requests.get(frame.rpcId) : undefined;
  if (known !== undefined) {
    known.seenOn = generation;
    if (isRequest(frame)) {
      counted(known.rpcId, groupCount(frame));
      tallied(known.rpcId, frame.quorum);
    }
    return null;
  }
  if (!isRequest(frame)) {
    console.warn("user-questions: ignored a malformed question/requested frame", frame);
    return null;
  }
  const request = requests.add(frame);
  request.seenOn = generation;
  if (request.rpcId === wanted) opened = request.rpcId;
  return request;
}

/** Announce new requests and show them (in the next frame: a replay brings many at once). */
function arrived(fresh) {
  if (fresh.length === 0) return;
  announce(fresh);
  notifier.arrived(fresh);
  if (wanted !== null && requests.has(wanted)) {
    render();
    reveal(wanted);
  } else {
    scheduleRender();
  }
}

/** The replay is complete: drop the requests settled while the page was away, and their drafts. */
function replayed() {
  replay.done = true;
  setTimeout(registerServiceWorker, 0);
  const current = generation;
  const gone = requests.removeUnless((request) => request.seenOn === current);
  for (const request of gone) {
    const card = cards.get(request.rpcId);
    if (card !== undefined) closeCard(card, "gone");
  }
  if (opened !== null && !requests.has(opened)) opened = null;
  drafts.retain(requests.keys());
  if (wanted !== null && !requests.has(wanted)) {
    wanted = null;
    removeFromAddressBar("q");
    notice(NOT_WAITING);
  }
  scheduleRender();
}

/** A card stands for `count` identical requests of its asker now (`question/group`). */
function counted(rpcId, count) {
  const request = requests.get(rpcId);
  if (request === undefined || request.count === count) return;
  request.count = count;
  cards.get(rpcId)?.setCount(count);
  queue.forget(rpcId);
  scheduleRender();
}

/** Who approved a card that needs several approvals changed (`question/quorum`): the card and
 * the frame it is made from again show the count. */
function tallied(rpcId, quorum) {
  const request = requests.get(rpcId);
  if (request === undefined) return;
  request.frame = { ...request.frame, quorum };
  cards.get(rpcId)?.setQuorum(quorumOf(request.frame));
}

/** A request was settled (`question/resolved`): its card says how, or it leaves the list. */
function settled(rpcId, how) {
  const card = cards.get(rpcId);
  if (card !== undefined) {
    card.resolved(how);
    return;
  }
  if (forget(rpcId) === undefined) return;
  drafts.forget(rpcId);
  if (opened === rpcId) opened = null;
  scheduleRender();
}

/** A plan review gets its own card; every other batch, the generic one. */
function createCard(request) {
  const view = planReviewOf(request.frame.payload.questions);
  return view === null
    ? new QuestionsCard(request.frame, env)
    : new PlanCard(request.frame, env, view);
}

function closeCard(card, why) {
  if (cards.get(card.rpcId) !== card) return;
  const order = [...view.cards.children];
  const index = order.indexOf(card.element);
  const hadFocus = card.element.contains(document.activeElement);
  card.stop();
  cards.delete(card.rpcId);
  card.element.remove();
  forget(card.rpcId);
  if (opened === card.rpcId) opened = null;
  drafts.forget(card.rpcId);
  notice(NOTICES[why](card));
  render();
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

function scheduleRender() {
  if (renderFrame === 0) renderFrame = requestAnimationFrame(render);
}

/** Bring the page up to the requests: the count, the cards, the list. */
function render() {
  cancelAnimationFrame(renderFrame);
  renderFrame = 0;
  const shown = requests.shown();
  const wantedCards = [];
  const first = opened === null ? undefined : requests.get(opened);
  if (first !== undefined) wantedCards.push(first);
  for (const request of shown) {
    if (wantedCards.length >= CARDS_SHOWN + (first === undefined ? 0 : 1)) break;
    if (request !== first) wantedCards.push(request);
  }
  const keep = new Set(wantedCards.map((request) => request.rpcId));
  for (const [rpcId, card] of cards) {
    if (keep.has(rpcId)) continue;
    if (card.sending !== null) keep.add(rpcId);
    else {
      card.stop();
      card.element.remove();
      cards.delete(rpcId);
    }
  }
  let cursor = view.cards.firstElementChild;
  for (const request of wantedCards) {
    let card = cards.get(request.rpcId);
    if (card === undefined) {
      card = createCard(request);
      cards.set(request.rpcId, card);
    }
    if (card.element === cursor) cursor = cursor.nextElementSibling;
    else view.cards.insertBefore(card.element, cursor);
  }
  queue.update(without(shown, cardPositions(shown)), {
    visible: requests.size > CARDS_SHOWN || requests.filter !== null,
    total: requests.size,
    sessions: requests.sessions(),
    filter: requests.filter,
  });
  updateCount();
}

/** Where the requests shown as cards are in `shown`, ascending: mostly its first few, found at
 * once; one opened from deep in the list costs a scan, never a copy of the list. */
function cardPositions(shown) {
  const positions = [];
  for (const rpcId of cards.keys()) {
    const request = requests.get(rpcId);
    if (request === undefined || !requests.matches(request)) continue;
    const position = shown.indexOf(request);
    if (position >= 0) positions.push(position);
  }
  return positions.sort((a, b) => a - b);
}

/** `list` without the entries at `skipped` (ascending positions), as {length, at(index)}. */
function without(list, skipped) {
  return {
    length: list.length - skipped.length,
    at(index) {
      let position = index;
      for (const each of skipped) {
        if (each > position) break;
        position += 1;
      }
      return list[position];
    },
  };
}

/** Drop a request from the page; one of a replay still arriving leaves its total too (an answer
 * given meanwhile: the host paces the replay, so the receipt does not wait for its end). */
function forget(rpcId) {
  const request = requests.remove(rpcId);
  if (request !== undefined && replay !== null && !replay.done && request.seenOn === generation) {
    replay.left += 1;
  }
  return request;
}

function updateCount() {
  const count = replay !== null && !replay.done ? replay.total - replay.left : requests.size;
  document.title = count > 0 ? `(${count}) ${TITLE}` : TITLE;
  if (count === 0) notifier.clear();
  view.empty.hidden = count > 0;
  view.count.hidden = count === 0;
  view.count.textContent = tn("{count} request waiting", "{count} requests waiting", count);
}

/** Tell screen readers about new requests, once per burst (a replay brings many at once). */
function announce(fresh) {
  announceQueue.push(...fresh);
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    const still = announceQueue.filter((each) => requests.has(each.rpcId));
    announceQueue = [];
    if (still.length === 1) {
      const [only] = still;
      const from = preview(only.sessionId, 40);
      view.announcer.textContent = t("New question from {from}: {summary}", { from, summary: only.summary });
    } else if (still.length > 1) {
      view.announcer.textContent = tn("{count} new request", "{count} new requests", still.length);
    }
  }, ANNOUNCE_AFTER_MS);
}

function notice(text) {
  const item = h("li", { class: "notice" }, h("span", { text }));
  const close = h("button", {
    type: "button",
    class: "quiet close",
    "aria-label": t("Close notice"),
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
    setStatus(t("Connecting…"));
  } else if (status.state === "open") {
    generation += 1;
    replay = null;
    setStatus(t("Connected"));
    learnRole();
  } else {
    cards.forEach((card) => card.connectionLost());
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000));
      setStatus(
        everOpened
          ? t("Connection lost. Reconnecting in {seconds} s…", { seconds })
          : t("Cannot reach the host. Retrying in {seconds} s…", { seconds }),
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

/** Ask the host who this page's token is; when its role changes, the quorums' cards are made
 * again (what they offer depends on it). */
async function learnRole() {
  let role = null;
  try {
    const response = await fetch("api/me", { cache: "no-store" });
    if (response.ok) role = (await response.json()).role ?? null;
  } catch {
    return;
  }
  if (role === env.role) return;
  env.role = role;
  for (const [rpcId, card] of cards) {
    if (card.sending !== null || quorumOf(requests.get(rpcId)?.frame ?? {}) === null) continue;
    card.stop();
    card.element.remove();
    cards.delete(rpcId);
  }
  scheduleRender();
}

/** A socket that never opens may mean the host was restarted with another token: say so. */
async function checkToken() {
  try {
    const response = await fetch("api/history?limit=1", { cache: "no-store" });
    if (response.status !== 401 || connection.isOpen) return;
  } catch {
    return;
  }
  refused = true;
  clearInterval(countdownTimer);
  view.retry.hidden = true;
  document.body.dataset.connection = "unauthorized";
  setStatus(everOpened ? TOKEN_REFUSED : SIGN_IN);
  signIn.show();
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
