// The inbox's service worker: keeps the page's shell so that the installed inbox opens without
// the host, then says the host is unreachable and retries (docs/web.md).
//
// It caches only the shell, the same files for everyone: the page, its modules, styles, icons
// and manifest, fetched without credentials when the worker installs, so no cached response
// holds a token, a cookie or a question (questions arrive over the WebSocket, which the worker
// never touches). Every shell request goes to the network first and falls back to the cache only
// when the host cannot be reached, so a page served by a running host is always today's.
// Anything else (the API, the history, answer links) is left to the browser.

const CACHE = "uq-shell-v2";
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
