// Presentation rules shared with the Python surfaces: a mirror of user_questions/presentation.py.
//
// The terminal, the bridges and this page must present and answer questions alike, so these
// three functions follow presentation.py line for line; tests/e2e/web/test_web_presentation.py
// runs both on the same inputs and compares the results.

// Python's whitespace (str.isspace, re's \s) differs from JavaScript's \s and trim(): spell it out.
const SPACE = [
  "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680",
  "\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000",
].join("");
const S = `[${SPACE}]*`;
const RECOMMENDED = new RegExp(
  `^([^]*?[^${SPACE}])${S}[(（]${S}(?:recommended|推荐|推奨|추천|권장)${S}[)）]${S}$`,
  "iu",
);
const EDGE_SPACE = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "gu");

/** Python's str.strip(). */
function strip(text) {
  return text.replace(EDGE_SPACE, "");
}

/**
 * Split a trailing "(Recommended)" marker off a label: [display, recommended].
 * Only the display loses the marker; the answer still carries the full label.
 */
export function parseRecommendedLabel(label) {
  const match = RECOMMENDED.exec(label);
  return match === null ? [label, false] : [match[1], true];
}

/**
 * The plan-review view of a batch ({id, question, plan, approve, decline?}), or null when the
 * batch must be shown as generic questions. Unknown intent kinds get the generic flow.
 */
export function planReviewOf(questions) {
  if (questions.length !== 1) return null;
  const question = questions[0];
  const intent = question.intent ?? null;
  const options = question.options ?? [];
  if (intent === null || intent.kind !== "plan-review" || question.detail == null) return null;
  if (question.multiSelect === true || options.length > 2) return null;
  const labels = options.map((option) => option.label);
  if (!labels.includes(intent.approve)) return null;
  const view = {
    id: question.id,
    question: question.question,
    plan: question.detail,
    approve: intent.approve,
  };
  const declines = labels.filter((label) => label !== intent.approve);
  if (declines.length > 0) view.decline = declines[0];
  return view;
}

/**
 * Build the batch answer from per-question drafts ({selected, custom, skipped}), one item per
 * question in question order. A skipped question (or one without a draft) is {id, selected: []};
 * custom text is trimmed and kept only when something remains, and on a single-select question
 * it replaces the choice. Labels are put in option order; unknown ones go last, so the host's
 * check reports a mistake instead of hiding it.
 */
export function answerFromDrafts(questions, drafts) {
  const answers = questions.map((question) => {
    const draft = Object.hasOwn(drafts, question.id) ? drafts[question.id] : undefined;
    if (draft == null || draft.skipped) return { id: question.id, selected: [] };
    const custom = strip(draft.custom ?? "") || null;
    const order = new Map((question.options ?? []).map((option, index) => [option.label, index]));
    const rank = (label) => order.get(label) ?? order.size;
    let selected = [...new Set(draft.selected ?? [])];
    selected = selected
      .map((label, index) => [rank(label), index, label])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .map((entry) => entry[2]);
    if (question.multiSelect !== true && custom !== null) selected = [];
    const item = { id: question.id, selected };
    if (custom !== null) item.custom = custom;
    return item;
  });
  return { answers };
}
