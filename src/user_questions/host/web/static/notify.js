// Desktop notifications: a question that arrives while this tab is hidden shows a system
// notification, so an agent waiting on you is noticed from another window.
//
// The "Notify me" button in the header turns them on (asking the browser's permission, which
// browsers grant only from a click) and off again; the choice is kept in localStorage. A
// notification is shown only while the tab is hidden, once per burst of arrivals (a
// reconnection replays every pending request at once); clicking it focuses the tab and the
// request's card. It closes by itself when the tab is looked at or nothing waits any more.
// Browsers offer notifications only to secure pages (https, or http on localhost); elsewhere the
// button stays hidden. Everything shown is text: a notification renders no HTML.
//
// Where the browser has Web Push and the host sends it, turning notifications on also subscribes
// this browser (`PushManager`, with the host's public key) and registers the subscription for the
// signed-in person; the secret the host gives back is kept in IndexedDB for the service worker,
// which then shows every question even with no tab open, and answers from its buttons (sw.js).
// The tab's own notifications stop meanwhile: the pushes say the same. Turning them off
// unsubscribes and removes the registration.

import { t, tn } from "./i18n.js";
import { preview } from "./dom.js";

const STORAGE_KEY = "uq.notify";
const BURST_MS = 400;
const TAG = "user-questions";
const LISTED = 3;
const PUSH_STORE = "uq-push";
const PUSH_KEY = "subscription";
const TEXT = {
  blocked: t("Notifications blocked"),
  on: t("Notifications on"),
  off: t("Notify me"),
  blockedTitle: t("This browser blocks notifications from this page: allow them in the site settings."),
  onTitle:
    t("A notification announces each question that arrives while this tab is hidden. Click to turn them off."),
  pushTitle:
    t("This browser shows each question as a notification, even with no tab open, and can answer from it. Click to turn them off."),
  offTitle: t("Show a desktop notification when a question arrives while this tab is hidden."),
};

/** The choice, when localStorage is unavailable: it lasts until the page is reloaded. */
let remembered = null;

export class DesktopNotifier {
  /**
   * @param button the header's toggle
   * @param focus called with a request when its notification is clicked
   * @param waiting tells whether a request is still pending
   */
  constructor(button, { focus, waiting }) {
    this.button = button;
    this.focus = focus;
    this.waiting = waiting;
    this.burst = [];
    this.burstTimer = 0;
    this.shown = null;
    /** Whether this browser gets the questions by Web Push. */
    this.pushing = false;
    if (!available()) return;
    button.hidden = false;
    button.addEventListener("click", () => this.toggle());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.clear();
    });
    this.render();
    if (this.enabled) this.syncPush();
  }

  get enabled() {
    return available() && Notification.permission === "granted" && stored() === "on";
  }

  async toggle() {
    if (this.enabled) {
      remember("off");
      await this.stopPush();
    } else {
      if (Notification.permission === "default") await Notification.requestPermission();
      if (Notification.permission === "granted") {
        remember("on");
        await this.syncPush();
      }
    }
    this.render();
  }

  /** Subscribe this browser to the host's pushes (again, if the host forgot it). */
  async syncPush() {
    if (!pushAvailable()) return;
    try {
      const keyResponse = await fetch("api/push/key", { cache: "no-store" });
      if (!keyResponse.ok) return;
      const { publicKey } = await keyResponse.json();
      const registration = await navigator.serviceWorker.register("sw.js").then(() => navigator.serviceWorker.ready);
      let subscription = await registration.pushManager.getSubscription();
      if (subscription === null) {
        subscription = await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: decodeKey(publicKey),
        });
      }
      const response = await fetch("api/push/subscriptions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(subscription.toJSON()),
      });
      if (!response.ok) throw new Error(`the host refused the subscription (${response.status})`);
      const made = await response.json();
      await keepPushSecret(`${made.id}.${made.secret}`);
      this.pushing = true;
    } catch (error) {
      console.warn("user-questions: no Web Push, so notifications only while this tab is open", error);
      this.pushing = false;
    }
    this.render();
  }

  async stopPush() {
    if (!this.pushing) return;
    this.pushing = false;
    try {
      const kept = await keepPushSecret(null);
      if (kept !== null) {
        await fetch(`api/push/subscriptions/${encodeURIComponent(kept.split(".")[0])}`, { method: "DELETE" });
      }
      const registration = await navigator.serviceWorker.ready;
      await (await registration.pushManager.getSubscription())?.unsubscribe();
    } catch (error) {
      console.warn("user-questions: could not unsubscribe from Web Push", error);
    }
  }

  render() {
    const blocked = Notification.permission === "denied";
    this.button.disabled = blocked;
    this.button.setAttribute("aria-pressed", String(this.enabled));
    this.button.textContent = blocked ? TEXT.blocked : this.enabled ? TEXT.on : TEXT.off;
    this.button.title = blocked
      ? TEXT.blockedTitle
      : this.enabled
        ? this.pushing
          ? TEXT.pushTitle
          : TEXT.onTitle
        : TEXT.offTitle;
  }

  /** New requests: announce them if the tab is hidden (bursts become one notification). */
  arrived(requests) {
    const hidden = document.visibilityState === "hidden";
    if (requests.length === 0 || !hidden || !this.enabled || this.pushing) return;
    this.burst.push(...requests);
    clearTimeout(this.burstTimer);
    this.burstTimer = setTimeout(() => this.show(), BURST_MS);
  }

  show() {
    const requests = this.burst.filter((request) => this.waiting(request));
    this.burst = [];
    if (requests.length === 0 || document.visibilityState !== "hidden") return;
    const [first] = requests;
    const title =
      requests.length === 1
        ? t("Question from {session}", { session: preview(first.sessionId, 40) })
        : tn("{count} question is waiting", "{count} questions are waiting", requests.length);
    const lines = requests.slice(0, LISTED).map((request) => request.summary);
    if (requests.length > LISTED) lines.push(tn("and {count} more", "and {count} more", requests.length - LISTED));
    this.clear();
    try {
      this.shown = new Notification(title, { body: lines.join("\n"), tag: TAG });
    } catch (error) {
      console.warn("user-questions: no desktop notification", error);
      return;
    }
    this.shown.addEventListener("click", () => {
      window.focus();
      if (this.waiting(first)) this.focus(first);
      this.clear();
    });
  }

  /** Close the notification on screen, if any. */
  clear() {
    this.shown?.close();
    this.shown = null;
  }
}

function pushAvailable() {
  return "serviceWorker" in navigator && "PushManager" in window;
}

/** The host's public key (URL-safe base64) as `applicationServerKey` takes it. */
function decodeKey(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

/** Keep the subscription's `<id>.<secret>` for the service worker (null: forget it); returns
 * what was kept before. */
function keepPushSecret(value) {
  return new Promise((resolve, reject) => {
    const opening = indexedDB.open(PUSH_STORE, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(PUSH_STORE);
    opening.onerror = () => reject(opening.error);
    opening.onsuccess = () => {
      const db = opening.result;
      const store = db.transaction(PUSH_STORE, "readwrite").objectStore(PUSH_STORE);
      const before = store.get(PUSH_KEY);
      before.onsuccess = () => {
        const done = value === null ? store.delete(PUSH_KEY) : store.put(value, PUSH_KEY);
        done.onsuccess = () => {
          db.close();
          resolve(before.result ?? null);
        };
        done.onerror = () => reject(done.error);
      };
      before.onerror = () => reject(before.error);
    };
  });
}

function available() {
  return "Notification" in window && window.isSecureContext;
}

function stored() {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return remembered;
  }
}

function remember(value) {
  remembered = value;
  try {
    window.localStorage.setItem(STORAGE_KEY, value);
  } catch {
    // Storage is off: `remembered` keeps the choice for this page.
  }
}
