// The rules page: the active rules the signed-in token may see, what each matches and decides,
// who made it, how often it decided, and a Revoke button on those it may change; the others
// (an admin's rules that also decide its askers' calls) are shown read-only (docs/rules.md).
// Everything from the host reaches the DOM as text through h(), never as HTML.

import { t, tn } from "./i18n.js";
import { WHEN, button, h, timeAgo } from "./dom.js";
import { listRules, revokeRule } from "./rules-api.js";


const DECISIONS = new Map([
  ["allow", t("allow")],
  ["deny", t("deny")],
]);
const byId = (id) => document.getElementById(id);
const view = {
  summary: byId("summary"),
  problem: byId("problem"),
  table: byId("table"),
  rows: byId("rows"),
  none: byId("none"),
};

load();

/** Whether `rule` still decides: neither revoked nor expired. */
function active(rule, now) {
  if (rule.revokedAt) return false;
  return !rule.expiresAt || new Date(rule.expiresAt).getTime() > now;
}

async function load() {
  let rules;
  try {
    rules = await listRules();
  } catch (error) {
    showProblem(error.message);
    return;
  }
  showProblem(null);
  const now = Date.now();
  const shown = rules.filter((rule) => active(rule, now));
  view.rows.replaceChildren(...shown.map(rowOf));
  view.table.hidden = shown.length === 0;
  view.none.hidden = shown.length > 0;
  view.summary.textContent =
    shown.length === 0 ? "" : tn("{count} active rule", "{count} active rules", shown.length);
}

function rowOf(rule) {
  return h(
    "tr",
    { "data-rule-id": String(rule.id) },
    h("td", {}, h("code", { class: "rule-text", text: String(rule.text) })),
    h("td", { class: `short decision ${rule.decision}`, text: decisionText(rule) }),
    h("td", { class: "short", text: rule.asker ?? "any" }),
    h("td", { class: "path", text: rule.cwd ?? "any" }),
    h("td", { class: "short made-by", text: rule.createdBy ?? t("unknown") }),
    h("td", { class: "short" }, timeOf(rule.createdAt)),
    h("td", { class: "short hits", text: String(rule.hits ?? 0) }),
    h("td", { class: "short" }, rule.lastUsedAt ? timeOf(rule.lastUsedAt) : "never"),
    h("td", { class: "short" }, rule.expiresAt ? timeOf(rule.expiresAt) : "never"),
    h("td", { class: "short" }, controlOf(rule)),
  );
}

/** Revoke for a rule the token may change; for another, why it is only shown. */
function controlOf(rule) {
  if (rule.mayChange === false) {
    return h("span", {
      class: "read-only",
      text: t("read-only"),
      title: t("It decides calls of askers routed to you; an admin made it and may change it."),
    });
  }
  const control = button(t("Revoke"), "secondary small", () => revoke(rule, control), {
    "aria-label": t("Revoke: {rule}", { rule: rule.text }),
  });
  return control;
}

async function revoke(rule, control) {
  control.disabled = true;
  try {
    await revokeRule(rule.id);
  } catch (error) {
    control.disabled = false;
    showProblem(error.message);
    return;
  }
  await load();
}

function timeOf(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("span", { text: String(iso) });
  const element = h("time", { datetime: iso, text: timeAgo(iso) || WHEN.format(date) });
  element.title = WHEN.format(date);
  return element;
}

/** What the rule decides: "allow", or with a quorum "allow, once 2 people approve". */
function decisionText(rule) {
  const decision = DECISIONS.get(rule.decision) ?? String(rule.decision);
  if (!Number.isInteger(rule.approvals) || rule.approvals < 2) return decision;
  return t("{decision}, once {count} people approve", { decision, count: rule.approvals });
}

function showProblem(text) {
  view.problem.hidden = text === null;
  view.problem.textContent = text ?? "";
}
