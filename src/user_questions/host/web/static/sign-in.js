// Signing the page in: a browser without the host's token (a link from a notification opened
// on a phone, a cookie that expired, a host restarted with another token) is asked for it once.
//
// The form takes the token, or the whole link `uq serve` printed. It is sent in the body of
// POST /session, never in an address, and the host answers with the HttpOnly cookie the page
// uses from then on (the script never sees it again). See docs/web.md.

import { t } from "./i18n.js";

const REFUSED = t("This host does not accept that token.");
const UNREACHABLE = t("The host cannot be reached; try again once it is back.");

/** The token in what was pasted: a link's `?token=`, else the text itself. */
export function tokenOf(text) {
  const trimmed = text.trim();
  try {
    const url = new URL(trimmed);
    return url.searchParams.get("token") ?? "";
  } catch {
    return trimmed;
  }
}

export class SignIn {
  /**
   * @param form the sign-in form of the page
   * @param signedIn called once the host has accepted a token
   */
  constructor(form, signedIn) {
    this.form = form;
    this.input = form.querySelector("input");
    this.error = form.querySelector("[role=alert]");
    this.signedIn = signedIn;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
  }

  show() {
    if (!this.form.hidden) return;
    this.form.hidden = false;
    this.input.focus();
  }

  hide() {
    this.form.hidden = true;
    this.error.hidden = true;
    this.input.value = "";
  }

  async submit() {
    const token = tokenOf(this.input.value);
    if (token === "") return;
    let response;
    try {
      response = await fetch("session", {
        method: "POST",
        body: token,
        headers: { "content-type": "text/plain" },
        cache: "no-store",
      });
    } catch {
      this.fail(UNREACHABLE);
      return;
    }
    if (!response.ok) {
      this.fail(REFUSED);
      return;
    }
    this.hide();
    this.signedIn();
  }

  fail(text) {
    this.error.textContent = text;
    this.error.hidden = false;
    this.input.select();
  }
}
