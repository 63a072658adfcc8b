// DOM helpers: building elements from model text safely, and the one door for server HTML.
//
// Everything a model wrote reaches the page as text nodes through h(). The only HTML inserted is
// the host's rendering of a question's markdown detail (the frame's "rendered" map, made by
// markdown-it with raw HTML disabled), and even that passes through trustedFragment(), which
// drops anything active: the CSP already forbids inline script, this is a second lock.

import { language, t, tn } from "./i18n.js";

/**
 * Create an element. `props` keys: "class", "text" (textContent), "on<event>" (listener), and
 * any attribute (true sets it empty; false, null and undefined leave it out). Children may be
 * nodes or strings; strings become text nodes, never markup.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "text") element.textContent = value;
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

const ACTIVE = [
  "script, style, link, meta, base, template",
  "iframe, frame, object, embed, svg, math",
  "form, input, button, textarea, select",
].join(", ");
const SAFE_URL = /^(?:https?:|mailto:|#)/i;
const SAFE_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);/i;

/**
 * The host's rendered markdown as an inert fragment. Parsing in a <template> runs nothing and
 * loads nothing; active elements, event handler and style attributes, and links other than
 * http(s)/mailto/# are removed. Images other than inline data images become their alt text,
 * since the page never loads anything from another origin.
 */
export function trustedFragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const content = template.content;
  for (const element of content.querySelectorAll(ACTIVE)) element.remove();
  for (const element of content.querySelectorAll("*")) {
    for (const { name, value } of [...element.attributes]) {
      const lower = name.toLowerCase();
      const link = lower === "href" || lower === "xlink:href";
      const unsafeLink = link && !SAFE_URL.test(value.trim());
      if (lower.startsWith("on") || lower === "style" || lower === "srcset" || unsafeLink) {
        element.removeAttribute(name);
      }
    }
    if (element.localName === "img" && !SAFE_IMAGE.test(element.getAttribute("src") ?? "")) {
      const alt = element.getAttribute("alt");
      element.replaceWith(alt ? `[image: ${alt}]` : "[image]");
    } else if (element.localName === "a" && element.hasAttribute("href")) {
      element.setAttribute("target", "_blank");
      element.setAttribute("rel", "noopener noreferrer");
    }
  }
  return content;
}

/** A `<button type="button">` that runs `onclick`; `props` as for h(). */
export function button(text, className, onclick, props = {}) {
  return h("button", { type: "button", class: className, text, onclick, ...props });
}

const RELATIVE = new Intl.RelativeTimeFormat(language(), { numeric: "auto" });
const STEPS = [
  [60, "second"],
  [60, "minute"],
  [24, "hour"],
  [Infinity, "day"],
];

/** What a page says when the host stops accepting its token (a 401). */
export const TOKEN_REFUSED =
  t("The host no longer accepts this page's token: open the link printed by uq serve.");

/** An instant as the pages write it in full: "Dec 3, 2026, 11:20 AM". */
export const WHEN = new Intl.DateTimeFormat(language(), {
  dateStyle: "medium",
  timeStyle: "short",
});

/** "now", "3 minutes ago", "yesterday" (in the page's language): how long ago an ISO 8601 instant was. */
export function timeAgo(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  let amount = Math.round((then - now) / 1000);
  if (Math.abs(amount) < 10) return RELATIVE.format(0, "second");
  for (const [size, unit] of STEPS) {
    if (Math.abs(amount) < size) return RELATIVE.format(amount, unit);
    amount = Math.round(amount / size);
  }
  return "";
}

/** A JSON object: not null, not an array. */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A one-line preview of model text, for notices and announcements. */
export function preview(text, limit = 80) {
  const line = String(text).replace(/\s+/g, " ").trim();
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/** A one-line description of a request for notices: its first question, and how many follow. */
export function summaryOf(questions) {
  const first = `“${preview(questions[0]?.question ?? "")}”`;
  const more = questions.length - 1;
  return more > 0 ? tn("{first} and {count} more", "{first} and {count} more", more, { first }) : first;
}

/** Where the asker says a request comes from, on one line: `client · folder`; "" for none. */
export function originText(origin) {
  if (origin === null || typeof origin !== "object") return "";
  return [origin.client, origin.cwd].filter((part) => typeof part === "string" && part).join(" · ");
}
