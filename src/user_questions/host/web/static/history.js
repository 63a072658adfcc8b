// The history page: settled questions, newest first, with their answers and who gave them.
//
// See docs/people-and-history.md. The filters live in the address bar, so a view survives a
// reload and can be bookmarked (the token the link carried is dropped from it: the cookie
// carries it). They go to GET /api/history; "Load more" follows the page's `next` cursor, which
// stays valid while new questions settle. Everything a model or a person wrote reaches the DOM
// as text through h(); a question's detail is the host's rendered markdown, through
// trustedFragment(). Ids and names from the host key Maps, never plain objects.

import { t, tn } from "./i18n.js";
import {
  TOKEN_REFUSED,
  WHEN,
  button,
  h,
  isObject,
  originText,
  timeAgo,
  trustedFragment,
} from "./dom.js";
import { diffView, editShape, lineDiff } from "./call-edit.js";
import { makeRule } from "./rules-api.js";

const PAGE_SIZE = 50;
const FILTERS = ["q", "session", "by", "outcome"];
const OUTCOMES = new Map([
  ["answered", t("Answered")],
  ["dismissed", t("Dismissed")],
  ["withdrawn", t("Withdrawn")],
  ["timed-out", t("Timed out")],
]);
const SURFACES = new Map([
  ["web", t("in the web page")],
  ["terminal", t("in a terminal")],
  ["editor", t("in an editor")],
  ["link", t("through an answer link")],
  ["api", t("through the API")],
  ["asker", t("by its asker")],
  ["host", t("by the host")],
  ["rule", t("without asking anyone")],
]);

const byId = (id) => document.getElementById(id);
const view = {
  form: byId("filters"),
  clear: byId("clear"),
  summary: byId("summary"),
  problem: byId("problem"),
  entries: byId("entries"),
  none: byId("none"),
  more: byId("more"),
};

/** The cursor of the next page, or null on the last one. */
let next = null;
/** Counts searches; a response to an older one is ignored. */
let generation = 0;
let loading = false;

readFilters(new URLSearchParams(window.location.search));
writeAddress();
view.form.addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
view.clear.addEventListener("click", () => {
  view.form.reset();
  search();
});
view.more.addEventListener("click", () => load(false));
load(true);

function readFilters(params) {
  for (const name of FILTERS) view.form.elements[name].value = params.get(name) ?? "";
}

function filters() {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const value = view.form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

/** The address bar shows the filters only (never the token the link came with). */
function writeAddress() {
  const query = filters().toString();
  const url = `${window.location.pathname}${query ? `?${query}` : ""}${window.location.hash}`;
  window.history.replaceState(window.history.state, "", url);
}

function search() {
  writeAddress();
  load(true);
}

/** Filter by a value shown in an entry, such as its session. */
function filterBy(name, value) {
  view.form.elements[name].value = value;
  search();
}

async function load(fresh) {
  if (fresh) {
    generation += 1;
    next = null;
  } else if (loading || next === null) {
    return;
  }
  const mine = generation;
  const params = filters();
  params.set("limit", String(PAGE_SIZE));
  if (!fresh) params.set("before", next);
  loading = true;
  view.more.disabled = true;
  document.body.setAttribute("aria-busy", "true");
  let body;
  try {
    const response = await fetch(`api/history?${params}`, { cache: "no-store" });
    body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(response.status === 401 ? TOKEN_REFUSED : problemOf(body));
  } catch (error) {
    if (mine === generation) showProblem(error.message || t("The host could not be reached."));
    return;
  } finally {
    if (mine === generation) {
      loading = false;
      view.more.disabled = false;
      document.body.removeAttribute("aria-busy");
    }
  }
  if (mine !== generation) return;
  showProblem(null);
  if (fresh) view.entries.replaceChildren();
  const items = Array.isArray(body.items) ? body.items : [];
  view.entries.append(...items.map(entryElement));
  next = typeof body.next === "string" ? body.next : null;
  update();
}

function problemOf(body) {
  const message = body?.error?.message;
  return typeof message === "string" ? message : t("The host could not read the history.");
}

function showProblem(text) {
  view.problem.hidden = text === null;
  view.problem.textContent = text ?? "";
}

function update() {
  const count = view.entries.children.length;
  const filtered = filters().toString() !== "";
  view.none.hidden = count > 0;
  view.none.textContent = filtered
    ? t("No settled questions match these filters.")
    : t("No settled questions yet: answered, dismissed and withdrawn questions appear here.");
  view.more.hidden = next === null;
  const summary = filtered
    ? tn("{count} settled question matching, newest first", "{count} settled questions matching, newest first", count)
    : tn("{count} settled question, newest first", "{count} settled questions, newest first", count);
  view.summary.textContent = count === 0 ? "" : summary;
}

/** One settled request: how it ended, by whom, then each question and its answer. */
function entryElement(entry) {
  const answers = new Map();
  const items = Array.isArray(entry.answer?.answers) ? entry.answer.answers : [];
  for (const item of items) answers.set(item?.id, item);
  const rendered = new Map(isObject(entry.rendered) ? Object.entries(entry.rendered) : []);
  const questions = Array.isArray(entry.questions) ? entry.questions : [];
  return h(
    "li",
    { class: "card entry", "data-rpc-id": entry.rpcId, "data-outcome": entry.outcome },
    metaElement(entry),
    typeof entry.note === "string" ? h("p", { class: "entry-note", text: entry.note }) : null,
    ...questions.map((question) =>
      questionElement(question, rendered.get(question?.id), entry.answer ? answers : null, entry),
    ),
    h("p", { class: "entry-times", text: timesOf(entry) }),
    isObject(entry.remember) && typeof entry.remember.text === "string"
      ? ruleMaker(entry.remember)
      : null,
  );
}

/**
 * "Make a rule" for an answered approval: shows the rule the host would keep (the entry's
 * `remember`, the call decided as it was), and makes it only once confirmed.
 */
function ruleMaker(proposal) {
  const box = h("div", { class: "rule-maker" });
  const problem = h("p", { class: "card-error", role: "alert", hidden: true });
  const start = button(t("Make a rule"), "secondary small", () => {
    box.replaceChildren(
      h(
        "p",
        { class: "rule-proposal" },
        t("The host will decide this call by itself from now on:") + " ",
        h("code", { class: "rule-text", text: proposal.text }),
      ),
      problem,
      h("div", { class: "rule-actions" }, make, button(t("Cancel"), "quiet small", cancel)),
    );
    make.focus();
  });
  const make = button(t("Make this rule"), "primary small", async () => {
    make.disabled = true;
    problem.hidden = true;
    try {
      const made = await makeRule(proposal);
      const text = t("Rule {id} made: {text}", made);
      box.replaceChildren(h("p", { class: "made", role: "status", text }));
    } catch (error) {
      make.disabled = false;
      problem.textContent = error.message;
      problem.hidden = false;
    }
  });
  const cancel = () => {
    box.replaceChildren(start);
    start.focus();
  };
  box.append(start);
  return box;
}

function metaElement(entry) {
  const outcome = OUTCOMES.get(entry.outcome) ?? String(entry.outcome);
  const how = [];
  if (entry.by && entry.outcome !== "withdrawn" && entry.outcome !== "timed-out") {
    how.push(t("by {name}", { name: entry.by }));
  }
  if (entry.via) how.push(SURFACES.get(entry.via) ?? t("via {surface}", { surface: entry.via }));
  if (entry.channel) how.push(`(${entry.channel})`);
  const origin = originText(entry.origin);
  return h(
    "header",
    { class: "card-meta" },
    h("span", { class: `outcome ${entry.outcome}`, text: outcome }),
    how.length ? h("span", { class: "who", text: how.join(" ") }) : null,
    timeElement(entry.settledAt),
    h("button", {
      type: "button",
      class: "quiet small session",
      title: t("Show only this session"),
      text: entry.sessionId,
      onclick: () => filterBy("session", entry.sessionId),
    }),
    origin ? h("span", { class: "origin", title: t("asked from {origin}", { origin }), text: origin }) : null,
  );
}

function timeElement(iso) {
  const element = h("time", { datetime: iso, text: timeAgo(iso) || iso });
  const date = new Date(iso);
  if (!Number.isNaN(date.getTime())) element.title = WHEN.format(date);
  return element;
}

function questionElement(question, html, answers, entry) {
  const parts = [];
  if (question.header) parts.push(h("span", { class: "chip", text: question.header }));
  parts.push(h("p", { class: "question-text", text: question.question }));
  if (typeof html === "string" && html) {
    parts.push(
      h(
        "details",
        { class: "entry-detail" },
        h("summary", { text: t("Details") }),
        h("div", { class: "markdown" }, trustedFragment(html)),
      ),
    );
  }
  if (answers !== null) parts.push(...answerElements(answers.get(question.id), entry));
  return h("section", { class: "entry-question" }, ...parts);
}

/** An answer: the choice or typed text, a form's value field by field, a call as it was changed
 * (a diff against the call as asked, "changed by alice"), and the note beside it. */
function answerElements(item, entry) {
  const chosen = Array.isArray(item?.selected) ? item.selected.map(String) : [];
  const custom = typeof item?.custom === "string" ? item.custom : null;
  const value = isObject(item?.value) ? item.value : null;
  const parts = [];
  if (chosen.length === 0 && custom === null && value === null) {
    parts.push(h("p", { class: "entry-answer skipped", text: t("Skipped") }));
  } else if (chosen.length > 0 || custom !== null) {
    parts.push(
      h(
        "p",
        { class: "entry-answer" },
        h("span", { class: "visually-hidden", text: t("Answer:") + " " }),
        chosen.length ? h("span", { class: "chosen", text: chosen.join(", ") }) : null,
        custom !== null ? h("q", { class: "custom", text: custom }) : null,
      ),
    );
  }
  if (value !== null) {
    parts.push(
      h(
        "dl",
        { class: "entry-value" },
        ...Object.entries(value).flatMap(([key, field]) => [
          h("dt", { text: key }),
          h("dd", { text: JSON.stringify(field) }),
        ]),
      ),
    );
  }
  if (isObject(item?.edited) && isObject(entry.approval) && isObject(entry.approval.input)) {
    const before = editShape(entry.approval);
    const after = editShape({ ...entry.approval, input: item.edited });
    const text = before.kind === after.kind && before.key === after.key ? after.text : null;
    parts.push(
      h(
        "div",
        { class: "entry-edited" },
        h("p", { class: "hint", text: entry.by ? t("changed by {name}", { name: entry.by }) : t("changed by a person") }),
        diffView(
          lineDiff(
            text === null ? JSON.stringify(entry.approval.input, null, 2) : before.text,
            text ?? JSON.stringify(item.edited, null, 2),
          ),
        ),
      ),
    );
  }
  if (typeof item?.note === "string") {
    parts.push(h("p", { class: "entry-answer-note" }, h("b", { text: t("Note:") + " " }), item.note));
  }
  return parts;
}

function timesOf(entry) {
  const at = (iso) => {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? String(iso) : WHEN.format(date);
  };
  const times = [
    entry.askedBy
      ? t("Asked {when} with {name}’s token", { when: at(entry.askedAt), name: entry.askedBy })
      : t("Asked {when}", { when: at(entry.askedAt) }),
  ];
  if (entry.shownAt) times.push(t("first shown {when}", { when: at(entry.shownAt) }));
  times.push(t("settled {when}", { when: at(entry.settledAt) }));
  return times.join(" · ");
}
