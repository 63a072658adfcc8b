// "Add a note": a remark beside any answer (the answer item's `note`), collapsed until wanted.
//
// The note goes beside the choice, never instead of it; the host refuses one over 4,000
// characters (MAX_ANSWER_NOTE_LENGTH), and the box stops there too. It lives in the draft, so a
// reload or a reconnect keeps it.

import { t } from "./i18n.js";
import { uid } from "./card.js";
import { h } from "./dom.js";

export const MAX_NOTE_LENGTH = 4000;

/** The collapsed note box for `draft` (its `note`); `changed()` runs after every keystroke. */
export function noteField(draft, changed) {
  const id = uid("note");
  const area = h("textarea", {
    id,
    class: "note-text",
    rows: 2,
    maxlength: MAX_NOTE_LENGTH,
    placeholder: t("Anything the agent should know beside your answer"),
  });
  area.value = draft.note ?? "";
  area.addEventListener("input", () => {
    draft.note = area.value;
    changed();
  });
  const box = h(
    "details",
    { class: "note", open: (draft.note ?? "").trim() !== "" },
    h("summary", { text: t("Add a note") }),
    h("label", { for: id, class: "free-label", text: t("Note (sent beside your answer)") }),
    area,
  );
  box.addEventListener("toggle", () => {
    if (box.open) area.focus();
  });
  return box;
}

/** The draft's note as sent: trimmed, absent when blank. */
export function noteOf(draft) {
  const note = (draft.note ?? "").trim();
  return note === "" ? null : note;
}
