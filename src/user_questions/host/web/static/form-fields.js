// A question's form (`schema`, the flat object MCP elicitation defines): one labelled control per
// field, defaults filled in, and the host's refusal shown beside the field it names.
//
// The page does not check the value itself: the host's one checker (user_questions._reading.forms)
// does, and its refusal names the field (`value.replicas: must be at most 10`), which is shown
// next to that field and marks it invalid for screen readers. Numbers are sent as numbers,
// booleans as booleans, several choices as an array: nothing is flattened to text.

import { t } from "./i18n.js";
import { uid } from "./card.js";
import { h, isObject } from "./dom.js";

const INPUT_TYPES = new Map([
  ["email", "email"],
  ["uri", "url"],
  ["date", "date"],
]);

/** The choices of a field: [{value, title}], from enum (+ enumNames), oneOf or items. */
function choicesOf(field) {
  const from = field.type === "array" && isObject(field.items) ? field.items : field;
  if (Array.isArray(from.enum)) {
    const names = Array.isArray(from.enumNames) ? from.enumNames : [];
    return from.enum.map((value, index) => ({ value, title: names[index] ?? value }));
  }
  const titled = field.type === "array" ? from.anyOf : from.oneOf;
  if (!Array.isArray(titled)) return null;
  return titled.map((entry) => ({ value: entry.const, title: entry.title || entry.const }));
}

/** What kind of control a field gets. */
function kindOf(field) {
  if (field.type === "array") return "choices";
  if (field.type === "string" && choicesOf(field) !== null) return "choice";
  return field.type;
}

/** The form's fields, in order: [{key, field, kind, required}]. */
export function formFields(schema) {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const properties = isObject(schema.properties) ? schema.properties : {};
  return Object.entries(properties).map(([key, field]) => ({
    key,
    field,
    kind: kindOf(field),
    required: required.has(key),
  }));
}

/** A control's value as the form holds it: the draft's, else the field's default. */
function initial(draft, key, field) {
  if (isObject(draft.value) && Object.hasOwn(draft.value, key)) return draft.value[key];
  return field.default;
}

export class FormView {
  /** `draft.value` holds what was entered (sent as the answer's value); `changed()` after each
   * change. */
  constructor(schema, draft, changed) {
    this.draft = draft;
    this.changed = changed;
    this.fields = formFields(schema);
    this.rows = new Map();
    if (!isObject(draft.value)) draft.value = {};
    this.element = h("div", { class: "form-fields" });
    for (const entry of this.fields) {
      let value = initial(draft, entry.key, entry.field);
      // A required yes-or-no is answered by its box as it stands: unticked is "no".
      if (value === undefined && entry.kind === "boolean" && entry.required) value = false;
      if (value !== undefined) draft.value[entry.key] = value;
      this.element.append(this.row(entry, value));
    }
  }

  row({ key, field, kind, required }, value) {
    const id = uid("field");
    const errorId = `${id}-error`;
    const hintId = `${id}-hint`;
    const label = field.title || key;
    const described = field.description ? `${hintId} ${errorId}` : errorId;
    const error = h("p", { class: "field-error", id: errorId, hidden: true });
    const hint = field.description
      ? h("span", { class: "hint", id: hintId, text: field.description })
      : null;
    const set = (next) => {
      if (next === undefined) delete this.draft.value[key];
      else this.draft.value[key] = next;
      this.clear(key);
      this.changed();
    };
    let control;
    let wrapper;
    if (kind === "boolean") {
      control = h("input", { id, type: "checkbox", "aria-describedby": described });
      control.checked = value === true;
      control.addEventListener("change", () => set(control.checked));
      wrapper = h(
        "div",
        { class: "form-field boolean" },
        h("label", { for: id, class: "form-label" }, control, ` ${label}`),
        hint,
        error,
      );
    } else if (kind === "choices") {
      const chosen = new Set(Array.isArray(value) ? value : []);
      const boxes = choicesOf(field).map((choice) => {
        const box = h("input", { type: "checkbox", value: choice.value });
        box.checked = chosen.has(choice.value);
        box.addEventListener("change", () => {
          const picked = [...wrapper.querySelectorAll("input[type=checkbox]")]
            .filter((each) => each.checked)
            .map((each) => each.value);
          set(picked);
        });
        return h("label", { class: "form-choice" }, box, ` ${choice.title}`);
      });
      control = boxes[0]?.querySelector("input") ?? null;
      wrapper = h(
        "fieldset",
        { class: "form-field choices", "aria-describedby": described },
        h("legend", { class: "form-label", text: required ? `${label} (required)` : label }),
        hint,
        ...boxes,
        error,
      );
    } else {
      if (kind === "choice") {
        control = h("select", { id, "aria-describedby": described });
        control.append(h("option", { value: "", text: required ? t("Choose one") : t("(none)") }));
        for (const choice of choicesOf(field)) {
          control.append(h("option", { value: choice.value, text: choice.title }));
        }
        control.value = typeof value === "string" ? value : "";
        control.addEventListener("change", () => set(control.value || undefined));
      } else {
        const numeric = kind === "number" || kind === "integer";
        control = h("input", {
          id,
          type: numeric ? "number" : (INPUT_TYPES.get(field.format) ?? "text"),
          "aria-describedby": described,
          "aria-required": required ? "true" : false,
          min: numeric ? field.minimum : undefined,
          max: numeric ? field.maximum : undefined,
          step: kind === "integer" ? "1" : numeric ? "any" : undefined,
          autocomplete: "off",
        });
        if (field.format === "date-time") control.placeholder = "2025-06-03T14:12:00Z";
        control.value = value === undefined || value === null ? "" : String(value);
        control.addEventListener("input", () => {
          const text = control.value;
          if (text === "") set(undefined);
          else if (numeric) set(Number.isNaN(Number(text)) ? text : Number(text));
          else set(text);
        });
      }
      wrapper = h(
        "div",
        { class: "form-field" },
        h("label", { for: id, class: "form-label", text: required ? `${label} (required)` : label }),
        control,
        hint,
        error,
      );
    }
    this.rows.set(key, { control, error, wrapper });
    return wrapper;
  }

  /** The value to send: what the draft holds for the form's own fields. */
  value() {
    const value = {};
    for (const { key } of this.fields) {
      if (Object.hasOwn(this.draft.value, key)) value[key] = this.draft.value[key];
    }
    return value;
  }

  /** Show a refusal (`... value.replicas: must be at most 10`) beside its field; false when it
   * names none of them. */
  showProblem(message) {
    let best = null;
    for (const key of this.rows.keys()) {
      const at = message.indexOf(`value.${key}`);
      const after = message[at + 6 + key.length];
      if (at >= 0 && (after === ":" || after === "[") && (best === null || key.length > best.length)) {
        best = key;
      }
    }
    if (best === null) return false;
    const { control, error, wrapper } = this.rows.get(best);
    const said = message.slice(message.indexOf(`value.${best}`) + 6 + best.length);
    error.textContent = said.replace(/^:\s*/, "");
    error.hidden = false;
    wrapper.classList.add("invalid");
    control?.setAttribute("aria-invalid", "true");
    control?.focus();
    return true;
  }

  clear(key) {
    const row = this.rows.get(key);
    if (row === undefined) return;
    row.error.hidden = true;
    row.error.textContent = "";
    row.wrapper.classList.remove("invalid");
    row.control?.removeAttribute("aria-invalid");
  }

  focusFirst() {
    this.rows.values().next().value?.control?.focus();
  }
}
