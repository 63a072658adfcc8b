// The rules over HTTP (docs/protocol.md, `/api/rules`), for the rules and history pages: list,
// make and revoke, each a promise of the host's JSON or an Error saying what went wrong.

import { t } from "./i18n.js";
import { TOKEN_REFUSED } from "./dom.js";

/** The fields of a proposed rule that `POST /api/rules` takes (its `text` is the host's words). */
const RULE_FIELDS = ["tool", "decision", "command", "path", "domain", "asker", "cwd"];

async function call(method, path, body) {
  const options = { method, cache: "no-store" };
  if (body !== undefined) {
    options.headers = { "content-type": "application/json" };
    options.body = JSON.stringify(body);
  }
  let response;
  let json;
  try {
    response = await fetch(path, options);
    json = await response.json().catch(() => ({}));
  } catch {
    throw new Error(t("The host could not be reached."));
  }
  if (response.status === 401) throw new Error(TOKEN_REFUSED);
  if (!response.ok) {
    const message = json?.error?.message;
    throw new Error(typeof message === "string" ? message : t("The host answered {status}.", { status: response.status }));
  }
  return json;
}

/** Every rule the host keeps, revoked and expired ones included. */
export async function listRules() {
  const body = await call("GET", "api/rules");
  return Array.isArray(body.rules) ? body.rules : [];
}

/** Make the rule `proposal` describes (a `RuleProposal`); the rule as the host keeps it. */
export function makeRule(proposal) {
  const body = {};
  for (const name of RULE_FIELDS) {
    if (typeof proposal[name] === "string") body[name] = proposal[name];
  }
  return call("POST", "api/rules", body);
}

/** Revoke rule `id`; every host stops applying it at once. */
export function revokeRule(id) {
  return call("DELETE", `api/rules/${encodeURIComponent(String(id))}`);
}
