// The inbox's service worker: keeps the page's shell so that the installed inbox opens without
// the host, then says the host is unreachable and retries (docs/web.md).
//
// It caches only the shell, the same files for everyone: the page, its modules, styles, icons
// and manifest, fetched without credentials when the worker installs, so no cached response
// holds a token, a cookie or a question (questions arrive over the WebSocket, which the worker
// never touches). Every shell request goes to the network first and falls back to the cache only
// when the host cannot be reached, so a page served by a running host is always today's.
// Anything else (the API, the history, answer links) is left to the browser.
//
// Web Push (docs/notify.md): a push shows the question as a notification, with a button per
// choice when one tap answers it and the platform has that many buttons; a tap answers through
// the host as the person who subscribed, with the subscription's secret (kept in IndexedDB by the
// page that registered it), without opening a page; a tap elsewhere opens the question. A
// content-free push (`--push-private`) makes the worker fetch the card first. A push saying the
// request settled closes its notification.

const CACHE = "uq-shell-v3";
const SHELL = [
  "./",
  "manifest.webmanifest",
  "static/app.css",
  "static/app.js",
  "static/call-edit.js",
  "static/card.js",
  "static/dom.js",
  "static/drafts.js",
  "static/form-fields.js",
  "static/i18n.js",
  "static/note-field.js",
  "static/notify.js",
  "static/plan-card.js",
  "static/presentation.js",
  "static/protocol.js",
  "static/questions-card.js",
  "static/queue.js",
  "static/requests.js",
  "static/sign-in.js",
  "static/icons/icon.svg",
  "static/icons/icon-192.png",
  "static/icons/icon-512.png",
  "static/icons/maskable-512.png",
];
const SCOPE = new URL("./", self.location.href);
const SHELL_PATHS = new Set(SHELL.map((path) => new URL(path, SCOPE).pathname));

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const requests = SHELL.map(
        (path) => new Request(new URL(path, SCOPE), { credentials: "omit", cache: "reload" }),
      );
      await cache.addAll(requests);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      const names = await caches.keys();
      await Promise.all(
        names.filter((name) => name.startsWith("uq-shell-") && name !== CACHE).map((name) => caches.delete(name)),
      );
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== SCOPE.origin) return;
  if (SHELL_PATHS.has(url.pathname)) {
    event.respondWith(networkFirst(request, url.pathname));
  } else if (request.mode === "navigate" && url.pathname.startsWith(`${SCOPE.pathname}q/`)) {
    event.respondWith(questionLink(request, url));
  }
});

/** The network's answer; the cached shell file when the host cannot be reached. */
async function networkFirst(request, path) {
  try {
    return await fetch(request);
  } catch (error) {
    const cached = await caches.match(path, { cacheName: CACHE });
    if (cached !== undefined) return cached;
    throw error;
  }
}

/** `/q/<rpcId>` sends the browser to the inbox; offline, the worker does it itself. */
async function questionLink(request, url) {
  try {
    return await fetch(request);
  } catch {
    const rpcId = url.pathname.slice(SCOPE.pathname.length + 2);
    return Response.redirect(new URL(`./?q=${rpcId}`, SCOPE).href, 303);
  }
}

// The words of its notifications, in the language the browser asked for when it fetched this
// worker: the host puts that language's catalog in MESSAGES as it serves the file (pages.py).
const MESSAGES = {};
const t = (id) => (typeof MESSAGES[id] === "string" && MESSAGES[id]) || id;
const TEXT = {
  waitingTitle: t("A question is waiting"),
  waitingBody: t("Open it to see the question."),
  notSent: t("Not answered: open the question to answer it there."),
};
const STORE = "uq-push";
const SECRET_KEY = "subscription";

self.addEventListener("push", (event) => {
  let message = null;
  try {
    message = event.data?.json() ?? null;
  } catch {
    message = null;
  }
  keepAlive(event, received(message));
});

self.addEventListener("notificationclick", (event) => {
  const data = event.notification.data ?? {};
  event.notification.close();
  const choice = /^option-(\d+)$/.exec(event.action ?? "");
  keepAlive(event, choice === null ? openQuestion(data.rpcId) : tap(data, Number(choice[1])));
});

self.addEventListener("pushsubscriptionchange", (event) => {
  keepAlive(event, resubscribe(event));
});

/** `event.waitUntil(work)` for an event the browser dispatched; a constructed one runs `work`
 * all the same. */
function keepAlive(event, work) {
  if (event.isTrusted) event.waitUntil(work);
  return work;
}

async function received(message) {
  if (message === null || typeof message.rpcId !== "string") {
    await self.registration.showNotification(TEXT.waitingTitle, { body: TEXT.waitingBody });
    return;
  }
  if (message.type === "question/settled") {
    const shown = await self.registration.getNotifications({ tag: message.tag });
    shown.forEach((notification) => notification.close());
    return;
  }
  const card = message.type === "question/waiting" ? await fetchCard(message) : message;
  await show(card);
}

/** The card a content-free push stands for, from the host; the push itself when it cannot. */
async function fetchCard(message) {
  const secret = await storedSecret();
  if (secret === null) return message;
  try {
    const response = await fetch(new URL(`api/push/worker/card/${encodeURIComponent(message.rpcId)}`, SCOPE), {
      headers: { authorization: `Push ${secret}` },
      credentials: "omit",
      cache: "no-store",
    });
    return response.ok ? await response.json() : message;
  } catch {
    return message;
  }
}

function show(card) {
  const choices = Array.isArray(card.choices) ? card.choices : [];
  const most = "maxActions" in Notification ? Notification.maxActions : 0;
  const actions =
    choices.length > 0 && choices.length <= most
      ? choices.map((choice) => ({ action: `option-${choice.option}`, title: choice.label }))
      : [];
  return self.registration.showNotification(card.title ?? TEXT.waitingTitle, {
    body: card.body ?? TEXT.waitingBody,
    tag: card.tag,
    renotify: true,
    requireInteraction: true,
    actions,
    data: { rpcId: card.rpcId, tag: card.tag },
  });
}

/** A button: answer as the subscription's person, through the host; open the page if not. */
async function tap(data, option) {
  const secret = await storedSecret();
  let answered = false;
  if (secret !== null) {
    try {
      const response = await fetch(new URL("api/push/worker/answer", SCOPE), {
        method: "POST",
        headers: { authorization: `Push ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ rpcId: data.rpcId, option }),
        credentials: "omit",
        cache: "no-store",
      });
      answered = response.ok;
    } catch {
      answered = false;
    }
  }
  if (!answered) {
    await self.registration.showNotification(TEXT.notSent, { tag: data.tag, data });
  }
}

async function openQuestion(rpcId) {
  const target = new URL(typeof rpcId === "string" ? `q/${encodeURIComponent(rpcId)}` : "./", SCOPE);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((client) => new URL(client.url).origin === SCOPE.origin);
  if (open !== undefined) {
    await open.focus();
    return open.navigate(target.href);
  }
  return self.clients.openWindow(target.href);
}

/** A browser whose subscription expired subscribes again and registers the new one (with the
 * page's cookie: the worker has no token of its own). */
async function resubscribe(event) {
  const options = event.oldSubscription?.options;
  if (options === undefined) return;
  const subscription = await self.registration.pushManager.subscribe(options);
  const response = await fetch(new URL("api/push/subscriptions", SCOPE), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(subscription.toJSON()),
    credentials: "same-origin",
  });
  if (response.ok) {
    const made = await response.json();
    await keepSecret(`${made.id}.${made.secret}`);
  }
}

/** The subscription's `<id>.<secret>`, as the page kept it; null when there is none. */
async function storedSecret() {
  const db = await openStore();
  try {
    return await request(db.transaction(STORE).objectStore(STORE).get(SECRET_KEY), null);
  } finally {
    db.close();
  }
}

async function keepSecret(value) {
  const db = await openStore();
  try {
    await request(db.transaction(STORE, "readwrite").objectStore(STORE).put(value, SECRET_KEY));
  } finally {
    db.close();
  }
}

function openStore() {
  return new Promise((resolve, reject) => {
    const opening = indexedDB.open(STORE, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => reject(opening.error);
  });
}

function request(pending, fallback) {
  return new Promise((resolve, reject) => {
    pending.onsuccess = () => resolve(pending.result ?? fallback);
    pending.onerror = () => reject(pending.error);
  });
}
