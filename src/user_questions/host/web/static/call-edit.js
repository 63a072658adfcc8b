// "Edit and allow": an approval whose agent takes a changed call (`approval.editable`) may be
// allowed with the call as the person changed it (the answer's `edited`, the whole new input).
//
// A shell command is edited as one line, a file write or edit as its text, any other call as its
// JSON arguments; the person sees a line diff against the original while typing, and the card
// sends nothing until the call differs and (for JSON) reads as an object.

import { t } from "./i18n.js";
import { uid } from "./card.js";
import { h, isObject } from "./dom.js";

const SHELL_TOOLS = new Set([
  "bash",
  "shell",
  "exec",
  "local_shell",
  "exec_command",
  "container.exec",
]);
/** The text field of a file write or edit, edited as text. */
const TEXT_FIELDS = ["content", "new_string"];

/** How a call is edited: {kind: "line" | "text" | "json", key, text} (key null for json). */
export function editShape(approval) {
  const input = approval.input;
  if (SHELL_TOOLS.has(String(approval.tool).toLowerCase()) && typeof input.command === "string") {
    return { kind: "line", key: "command", text: input.command };
  }
  for (const key of TEXT_FIELDS) {
    if (typeof input[key] === "string") return { kind: "text", key, text: input[key] };
  }
  return { kind: "json", key: null, text: JSON.stringify(input, null, 2) };
}

/** The call as edited from `text`: {input} or {problem} (JSON that is not an object). */
export function editedCall(approval, shape, text) {
  if (shape.kind !== "json") return { input: { ...approval.input, [shape.key]: text } };
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: t("Not JSON: {reason}", { reason: error.message }) };
  }
  if (!isObject(parsed)) return { problem: t("The arguments must be a JSON object.") };
  return { input: parsed };
}

/** Cells of the diff's table at most (4 M, 16 MB): past it the diff is the old text, then the
 * new, rather than a page that stalls on a long file. */
const MAX_DIFF_CELLS = 4_000_000;

/** A line diff of `before` and `after` (longest common subsequence): [[sign, line], ...]. */
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  const rows = a.length + 1;
  const columns = b.length + 1;
  if (rows * columns > MAX_DIFF_CELLS) {
    return [...a.map((line) => ["-", line]), ...b.map((line) => ["+", line])];
  }
  const common = new Uint32Array(rows * columns);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      common[i * columns + j] =
        a[i] === b[j]
          ? common[(i + 1) * columns + j + 1] + 1
          : Math.max(common[(i + 1) * columns + j], common[i * columns + j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push([" ", a[i]]);
      i += 1;
      j += 1;
    } else if (
      j < b.length &&
      (i === a.length || common[i * columns + j + 1] >= common[(i + 1) * columns + j])
    ) {
      lines.push(["+", b[j]]);
      j += 1;
    } else {
      lines.push(["-", a[i]]);
      i += 1;
    }
  }
  return lines;
}

/** The diff as a <pre>: removed lines marked `del`, added `ins`, each with its sign. */
export function diffView(lines) {
  const pre = h("pre", { class: "diff" });
  for (const [sign, line] of lines) {
    const tag = sign === "+" ? "ins" : sign === "-" ? "del" : "span";
    pre.append(h(tag, { class: "diff-line", text: `${sign} ${line}\n` }));
  }
  return pre;
}

/**
 * The editor of one call: the field, the live diff, and `onChange({input} | {problem} | null)`
 * (null while the call is unchanged). `draft.edit` keeps the text across reloads.
 */
export function callEditor(approval, draft, onChange) {
  const shape = editShape(approval);
  const id = uid("edit");
  const field =
    shape.kind === "line"
      ? h("input", { id, type: "text", class: "edit-line", autocomplete: "off", spellcheck: false })
      : h("textarea", { id, class: "edit-text", rows: 8, spellcheck: false });
  field.value = typeof draft.edit === "string" ? draft.edit : shape.text;
  const diffBox = h("div", { class: "diff-box", "aria-live": "polite" });
  const problem = h("p", { class: "field-error", id: `${id}-problem`, hidden: true });
  const what =
    shape.kind === "line"
      ? t("The command to run instead")
      : shape.kind === "text"
        ? shape.key === "content"
          ? t("The file’s content to write instead")
          : t("The new text to write instead")
        : t("The call’s arguments, as JSON");
  const update = () => {
    draft.edit = field.value;
    const changed = field.value !== shape.text;
    const result = changed ? editedCall(approval, shape, field.value) : null;
    problem.hidden = result?.problem === undefined;
    problem.textContent = result?.problem ?? "";
    field.setAttribute("aria-invalid", result?.problem !== undefined ? "true" : "false");
    diffBox.replaceChildren(
      changed
        ? h(
            "div",
            {},
            h("p", { class: "hint", text: t("Changes against the call as asked:") }),
            diffView(lineDiff(shape.text, field.value)),
          )
        : h("p", { class: "hint", text: t("Unchanged: edit the call to allow it with changes.") }),
    );
    onChange(result);
  };
  field.addEventListener("input", update);
  field.setAttribute("aria-describedby", `${id}-problem`);
  const panel = h(
    "div",
    { class: "call-edit", role: "group", "aria-label": t("Edit the call") },
    h("label", { for: id, class: "free-label", text: what }),
    field,
    problem,
    diffBox,
  );
  return { panel, field, update };
}
