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

import { preview } from "./dom.js";

const STORAGE_KEY = "uq.notify";
const BURST_MS = 400;
const TAG = "user-questions";
const LISTED = 3;

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
    if (!available()) return;
    button.hidden = false;
    button.addEventListener("click", () => this.toggle());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.clear();
    });
    this.render();
  }

  get enabled() {
    return available() && Notification.permission === "granted" && stored() === "on";
  }

  async toggle() {
    if (this.enabled) {
      remember("off");
    } else {
      if (Notification.permission === "default") await Notification.requestPermission();
      if (Notification.permission === "granted") remember("on");
    }
    this.render();
  }

  render() {
    const blocked = Notification.permission === "denied";
    this.button.disabled = blocked;
    this.button.setAttribute("aria-pressed", String(this.enabled));
    this.button.textContent = blocked
      ? "Notifications blocked"
      : this.enabled
        ? "Notifications on"
        : "Notify me";
    this.button.title = blocked
      ? "This browser blocks notifications from this page: allow them in the site settings."
      : this.enabled
        ? "A desktop notification announces each question that arrives while this tab is " +
          "hidden. Click to turn them off."
        : "Show a desktop notification when a question arrives while this tab is hidden.";
  }

  /** New requests: announce them if the tab is hidden (bursts become one notification). */
  arrived(requests) {
    if (requests.length === 0 || document.visibilityState !== "hidden" || !this.enabled) return;
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
        ? `Question from ${preview(first.sessionId, 40)}`
        : `${requests.length} questions are waiting`;
    const lines = requests.slice(0, LISTED).map((request) => request.summary);
    if (requests.length > LISTED) lines.push(`and ${requests.length - LISTED} more`);
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
