// The WebSocket to the host (docs/web.md, docs/protocol.md): frames in, client-responses out.
//
// The connection reconnects by itself with a growing, jittered delay, and pings the host so a
// connection that died silently (a sleeping laptop, a dropped Wi-Fi) is noticed and replaced.

import { isObject } from "./dom.js";

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
const MAX_BACKOFF_MS = 10000;
const PING_EVERY_MS = 20000;
const PONG_WITHIN_MS = 10000;

/** The client-response that answers a request; `remember` asks the host to make the rule the
 * request offered (its `remember`) if this answer wins. */
export function answerFrame(rpcId, sessionId, answer, remember = false) {
  const value = remember ? { sessionId, answer, remember: true } : { sessionId, answer };
  return { type: "client-response", rpcId, result: { ok: true, value } };
}

/** The client-response that dismisses a request: the asker gets ASK_CANCELLED. */
export function dismissFrame(rpcId) {
  return {
    type: "client-response",
    rpcId,
    result: { ok: false, error: { code: "cancelled", message: "dismissed in the browser" } },
  };
}

/** The page's WebSocket URL: /ws beside the page, on the page's own origin, asking for the
 * pending requests in `question/replay` batches, paced by the page (it pings once it has read
 * each): a long replay then never holds an answer's receipt behind megabytes in flight. */
export function socketUrl(location) {
  const url = new URL("ws", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "?replay=paced";
  url.hash = "";
  return url.href;
}

function backoff(attempt) {
  const base = BACKOFF_MS[attempt] ?? MAX_BACKOFF_MS;
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * A self-healing WebSocket. `onFrame(frame)` gets every parsed frame whose payload is an object,
 * except pongs (anything else is dropped: it cannot be a frame of the protocol);
 * `onStatus({state, retryAt?, opened?})` reports "connecting", "open" and "waiting" (a retry is
 * scheduled at `retryAt`; `opened` says whether the socket that closed had ever opened).
 */
export class ReconnectingSocket {
  #url;
  #onFrame;
  #onStatus;
  #socket = null;
  #attempt = 0;
  #retryTimer = 0;
  #pingTimer = 0;
  #pongTimer = 0;

  constructor(url, { onFrame, onStatus }) {
    this.#url = url;
    this.#onFrame = onFrame;
    this.#onStatus = onStatus;
  }

  start() {
    window.addEventListener("online", () => this.retryNow());
    this.#open();
  }

  get isOpen() {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /** Send a frame; false when the socket is not open (the caller keeps its draft). */
  send(frame) {
    if (!this.isOpen) return false;
    this.#socket.send(JSON.stringify(frame));
    return true;
  }

  /** Skip the rest of the backoff delay. */
  retryNow() {
    if (this.#socket !== null) return;
    clearTimeout(this.#retryTimer);
    this.#open();
  }

  #open() {
    this.#onStatus({ state: "connecting" });
    const socket = new WebSocket(this.#url);
    let opened = false;
    this.#socket = socket;
    socket.addEventListener("open", () => {
      opened = true;
      this.#attempt = 0;
      this.#pingTimer = setInterval(() => this.#ping(socket), PING_EVERY_MS);
      this.#onStatus({ state: "open" });
    });
    socket.addEventListener("message", (event) => this.#receive(event.data));
    socket.addEventListener("close", () => this.#lost(socket, opened));
  }

  #receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (!isObject(frame) || !isObject(frame.payload)) return;
    if (frame.payload.type === "pong") {
      clearTimeout(this.#pongTimer);
      return;
    }
    this.#onFrame(frame);
    // Read: the host may send the next batch of a paced replay.
    if (frame.payload.type === "question/replay") this.send({ type: "ping" });
  }

  #ping(socket) {
    if (!this.send({ type: "ping" })) return;
    clearTimeout(this.#pongTimer);
    // No pong: the connection is dead even if the browser has not noticed; replace it now.
    this.#pongTimer = setTimeout(() => {
      socket.close();
      this.#lost(socket, true);
    }, PONG_WITHIN_MS);
  }

  #lost(socket, opened) {
    if (this.#socket !== socket) return;
    this.#socket = null;
    clearInterval(this.#pingTimer);
    clearTimeout(this.#pongTimer);
    const delay = backoff(this.#attempt);
    this.#attempt += 1;
    this.#retryTimer = setTimeout(() => this.#open(), delay);
    this.#onStatus({ state: "waiting", retryAt: Date.now() + delay, opened });
  }
}
