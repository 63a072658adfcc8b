/**
 * A question's form (`schema`) and the check of the value that answers it: the port of the Python
 * package's `_reading.forms` module, with the same messages (`value.replicas: must be at most 10`), so a
 * form is refused alike in both languages. The cases in `test/form-cases.json` are checked
 * against both.
 *
 * A form is the flat object schema MCP elicitation defines for its `requestedSchema`: texts
 * (`minLength`, `maxLength`, `format`), numbers and whole numbers (`minimum`, `maximum`), yes or
 * no, one choice (`enum` with `enumNames`, or `oneOf` of `const` and `title`), several choices
 * (`type: "array"`, `items.enum` or `items.anyOf`, `minItems`, `maxItems`), each with `title`,
 * `description` and `default`; `required` names the fields a value must hold.
 *
 * @module
 */

import {
  MAX_CUSTOM_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_FORM_FIELDS,
  MAX_LABEL_LENGTH,
  MAX_OPTIONS_PER_QUESTION,
  MAX_QUESTION_ID_LENGTH,
} from "./limits.js";
import { jsonTypeName } from "./schema.js";
import { characters, quoted, textProblem } from "./text.js";

/** What a field takes: a text, a number, a whole number, yes or no, one choice, several. */
export type FieldKind = "string" | "number" | "integer" | "boolean" | "choice" | "choices";

/** One entry of a choice field: the value it sends, and its title. */
export interface Choice {
  readonly value: string;
  readonly title: string;
}

/** One field of a form, read from its schema. */
export interface FormField {
  readonly key: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly title?: string;
  readonly description?: string;
  readonly hasDefault: boolean;
  readonly default?: unknown;
  readonly choices: readonly Choice[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly format?: string;
}

/** The formats a text field may ask for. */
export const FORMATS = ["email", "uri", "date", "date-time"] as const;

const TOP_KEYS = new Set(["type", "properties", "required", "title", "description", "$schema", "additionalProperties"]);
const COMMON_KEYS = ["type", "title", "description", "default"];
const KEYS: Record<string, Set<string>> = {
  string: new Set([...COMMON_KEYS, "minLength", "maxLength", "format", "enum", "enumNames", "oneOf"]),
  number: new Set([...COMMON_KEYS, "minimum", "maximum"]),
  integer: new Set([...COMMON_KEYS, "minimum", "maximum"]),
  boolean: new Set(COMMON_KEYS),
  array: new Set([...COMMON_KEYS, "items", "minItems", "maxItems"]),
};
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/u;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/u;
const DATE = /^\d{4}-\d{2}-\d{2}$/u;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/u;
const SHOWN_CHOICES = 10;
const FORMAT_PROBLEMS: Record<string, string> = {
  email: "must be an email address",
  uri: "must be a URI, such as https://example.com/",
  date: "must be a date, as 2025-06-03",
  "date-time": "must be a date and time, as 2025-06-03T14:12:00Z",
};

class Problem extends Error {
  constructor(
    readonly where: string,
    problem: string,
  ) {
    super(problem);
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === "number";
}

function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value);
}

/** A number as the messages write it: `10`, never `10.0`. */
export function numberText(value: number): string {
  return String(value);
}

/** What makes `schema` not a form (`schema.properties.replicas.type: must be one of ...`). */
export function schemaProblem(schema: unknown): string | undefined {
  try {
    readSchema(schema);
  } catch (error) {
    if (error instanceof Problem) return `${error.where ? `schema.${error.where}` : "schema"}: ${error.message}`;
    throw error;
  }
  return undefined;
}

/** The fields of a form, in order (`schema` is a form: {@link schemaProblem} found nothing). */
export function formFields(schema: unknown): FormField[] {
  return readSchema(schema);
}

/** Every text of a form, for the request's limits: its place under `schema`, the text, its limit. */
export function* schemaTexts(schema: JsonObject): Generator<[string, string, number]> {
  for (const [name, limit] of [["title", MAX_LABEL_LENGTH], ["description", MAX_DESCRIPTION_LENGTH]] as const) {
    if (typeof schema[name] === "string") yield [`schema.${name}`, schema[name] as string, limit];
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, field] of Object.entries(properties)) {
    const place = `schema.properties.${key}`;
    yield [place, key, MAX_QUESTION_ID_LENGTH];
    if (!isObject(field)) continue;
    for (const [name, limit] of [["title", MAX_LABEL_LENGTH], ["description", MAX_DESCRIPTION_LENGTH]] as const) {
      if (typeof field[name] === "string") yield [`${place}.${name}`, field[name] as string, limit];
    }
    for (const [where, entries] of choiceLists(field)) {
      for (const [index, entry] of entries.entries()) {
        if (typeof entry === "string") yield [`${place}.${where}[${index}]`, entry, MAX_LABEL_LENGTH];
        if (!isObject(entry)) continue;
        for (const name of ["const", "title"]) {
          const text = entry[name];
          if (typeof text === "string") yield [`${place}.${where}[${index}].${name}`, text, MAX_LABEL_LENGTH];
        }
      }
    }
  }
}


function* choiceLists(field: JsonObject): Generator<[string, unknown[]]> {
  for (const name of ["enum", "enumNames", "oneOf"]) {
    if (Array.isArray(field[name])) yield [name, field[name] as unknown[]];
  }
  const items = field.items;
  if (isObject(items)) {
    for (const name of ["enum", "anyOf"]) {
      if (Array.isArray(items[name])) yield [`items.${name}`, items[name] as unknown[]];
    }
  }
}

/** What is wrong with the value that answers the form `schema`, naming the field
 * (`value.replicas: must be at most 10`); `undefined` when it fits. */
export function valueProblem(schema: unknown, value: unknown): string | undefined {
  if (!isObject(value)) return `value: must be an object, got ${jsonTypeName(value)}`;
  const fields = formFields(schema);
  for (const field of fields) {
    if (!Object.hasOwn(value, field.key)) {
      if (field.required) return `value.${field.key}: is required`;
      continue;
    }
    const problem = fieldProblem(field, value[field.key]);
    if (problem !== undefined) return at(`value.${field.key}`, problem);
  }
  const known = new Set(fields.map((field) => field.key));
  for (const key of Object.keys(value)) {
    if (!known.has(key)) return `value.${key}: is not a field of this form`;
  }
  return undefined;
}

function at(place: string, problem: string): string {
  return problem.startsWith("[") ? `${place}${problem}` : `${place}: ${problem}`;
}

// -- reading a schema --------------------------------------------------------------------------

function readSchema(schema: unknown): FormField[] {
  if (!isObject(schema)) throw new Problem("", `must be an object, got ${jsonTypeName(schema)}`);
  for (const key of Object.keys(schema)) {
    if (!TOP_KEYS.has(key)) throw new Problem("", `${quoted(key)} is not a keyword a form may use`);
  }
  if (schema.type !== "object") throw new Problem("type", 'must be "object"');
  if ((schema.additionalProperties ?? false) !== false) {
    throw new Problem("additionalProperties", "must be false: a form's value holds its fields only");
  }
  if (!Object.hasOwn(schema, "properties")) throw new Problem("properties", "is missing");
  const properties = schema.properties;
  if (!isObject(properties)) throw new Problem("properties", `must be an object, got ${jsonTypeName(properties)}`);
  const count = Object.keys(properties).length;
  if (count === 0) throw new Problem("properties", "must hold at least one field");
  if (count > MAX_FORM_FIELDS) throw new Problem("properties", `holds ${count} fields; at most ${MAX_FORM_FIELDS}`);
  const required = schema.required ?? [];
  if (!Array.isArray(required)) throw new Problem("required", `must be an array, got ${jsonTypeName(required)}`);
  required.forEach((name: unknown, index) => {
    if (typeof name !== "string" || !Object.hasOwn(properties, name)) {
      const shown = typeof name === "string" ? quoted(name) : jsonTypeName(name);
      throw new Problem(`required[${index}]`, `${shown} is not a field of the form`);
    }
    if (required.slice(0, index).includes(name)) {
      throw new Problem(`required[${index}]`, `${quoted(name)} is named more than once`);
    }
  });
  return Object.entries(properties).map(([key, field]) => readField(key, field, required.includes(key)));
}

function readField(key: string, schema: unknown, required: boolean): FormField {
  const where = `properties.${key}`;
  if (key === "") throw new Problem("properties", "a field's name is empty");
  if (!isObject(schema)) throw new Problem(where, `must be an object, got ${jsonTypeName(schema)}`);
  const kind = schema.type;
  if (typeof kind !== "string" || KEYS[kind] === undefined) {
    throw new Problem(`${where}.type`, `must be one of ${Object.keys(KEYS).map(quoted).join(", ")}`);
  }
  for (const name of Object.keys(schema)) {
    if (!KEYS[kind]!.has(name)) throw new Problem(where, `${quoted(name)} is not a keyword of a ${kind} field`);
  }
  const read: Record<string, unknown> = { key, required, hasDefault: false, choices: [] };
  for (const name of ["title", "description"]) {
    const value = schema[name];
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new Problem(`${where}.${name}`, `must be a string, got ${jsonTypeName(value)}`);
    }
    if (value) read[name] = value;
  }
  if (kind === "string") Object.assign(read, readString(schema, where));
  else if (kind === "number" || kind === "integer") {
    const [minimum, maximum] = bounds(schema, where, "minimum", "maximum", true);
    Object.assign(read, { kind, minimum, maximum });
  } else if (kind === "boolean") read.kind = "boolean";
  else Object.assign(read, readArray(schema, where));
  for (const name of Object.keys(read)) if (read[name] === undefined) delete read[name];
  const field = read as unknown as FormField;
  if (!Object.hasOwn(schema, "default")) return field;
  const problem = fieldProblem(field, schema.default);
  if (problem !== undefined) {
    const text = at(`${where}.default`, problem);
    const split = text.indexOf(": ");
    throw new Problem(text.slice(0, split), text.slice(split + 2));
  }
  return { ...field, hasDefault: true, default: schema.default };
}

function readString(schema: JsonObject, where: string): Record<string, unknown> {
  const choices = readChoices(schema, where, "oneOf");
  if (choices.length > 0) {
    for (const name of ["minLength", "maxLength", "format"]) {
      if (Object.hasOwn(schema, name)) throw new Problem(where, `${quoted(name)} does not go with a choice`);
    }
    return { kind: "choice", choices };
  }
  const [minLength, maxLength] = bounds(schema, where, "minLength", "maxLength", false);
  const read: Record<string, unknown> = { kind: "string", minLength, maxLength };
  if (Object.hasOwn(schema, "format")) {
    if (!(FORMATS as readonly unknown[]).includes(schema.format)) {
      throw new Problem(`${where}.format`, `must be one of ${FORMATS.map(quoted).join(", ")}`);
    }
    read.format = schema.format;
  }
  return read;
}

function readArray(schema: JsonObject, where: string): Record<string, unknown> {
  if (!Object.hasOwn(schema, "items")) throw new Problem(`${where}.items`, "is missing");
  const items = schema.items;
  if (!isObject(items)) throw new Problem(`${where}.items`, `must be an object, got ${jsonTypeName(items)}`);
  for (const name of Object.keys(items)) {
    if (!["type", "enum", "anyOf"].includes(name)) {
      throw new Problem(`${where}.items`, `${quoted(name)} is not a keyword of a choice`);
    }
  }
  if (Object.hasOwn(items, "type") && items.type !== "string") throw new Problem(`${where}.items.type`, 'must be "string"');
  const choices = readChoices(items, `${where}.items`, "anyOf");
  if (choices.length === 0) throw new Problem(`${where}.items`, 'must offer its choices as "enum" or "anyOf"');
  const [minItems, maxItems] = bounds(schema, where, "minItems", "maxItems", false);
  return { kind: "choices", choices, minItems, maxItems };
}

function readChoices(schema: JsonObject, where: string, entries: string): Choice[] {
  const enumValues = schema.enum;
  const titled = schema[entries];
  if (enumValues !== undefined && titled !== undefined) {
    throw new Problem(where, `"enum" and ${quoted(entries)} do not go together`);
  }
  if (enumValues === undefined && titled === undefined) {
    if (Object.hasOwn(schema, "enumNames")) throw new Problem(where, '"enumNames" goes with "enum"');
    return [];
  }
  const given = enumValues !== undefined ? enumValues : titled;
  const name = enumValues !== undefined ? "enum" : entries;
  if (!Array.isArray(given) || given.length === 0) {
    throw new Problem(`${where}.${name}`, "must be an array holding at least one choice");
  }
  if (given.length > MAX_OPTIONS_PER_QUESTION) {
    throw new Problem(`${where}.${name}`, `holds ${given.length} choices; at most ${MAX_OPTIONS_PER_QUESTION}`);
  }
  let choices: Choice[];
  if (enumValues !== undefined) {
    choices = (given as unknown[]).map((value, index) => {
      if (typeof value !== "string" || value === "") {
        throw new Problem(`${where}.enum[${index}]`, `must be a string, got ${jsonTypeName(value)}`);
      }
      return { value, title: value };
    });
    const names = schema.enumNames;
    if (names !== undefined) {
      if (!Array.isArray(names) || names.length !== choices.length) {
        throw new Problem(`${where}.enumNames`, "must hold one title for each value of enum");
      }
      names.forEach((title: unknown, index) => {
        if (typeof title !== "string" || title === "") {
          throw new Problem(`${where}.enumNames[${index}]`, "must be a non-empty string");
        }
      });
      choices = choices.map((choice, index) => ({ value: choice.value, title: names[index] as string }));
    }
  } else {
    choices = (given as unknown[]).map((entry, index) => titledChoice(entry, `${where}.${name}[${index}]`));
  }
  const seen = new Set<string>();
  choices.forEach((choice, index) => {
    if (seen.has(choice.value)) throw new Problem(`${where}.${name}[${index}]`, `${quoted(choice.value)} is offered twice`);
    seen.add(choice.value);
  });
  return choices;
}

function titledChoice(entry: unknown, where: string): Choice {
  if (!isObject(entry)) throw new Problem(where, `must be an object, got ${jsonTypeName(entry)}`);
  for (const name of Object.keys(entry)) {
    if (name !== "const" && name !== "title") throw new Problem(where, `${quoted(name)} is not a keyword of a choice`);
  }
  if (!Object.hasOwn(entry, "const")) throw new Problem(`${where}.const`, "is missing");
  const value = entry.const;
  const title = entry.title;
  if (typeof value !== "string" || value === "") {
    throw new Problem(`${where}.const`, `must be a string, got ${jsonTypeName(value)}`);
  }
  if (title !== undefined && title !== null && (typeof title !== "string" || title === "")) {
    throw new Problem(`${where}.title`, `must be a string, got ${jsonTypeName(title)}`);
  }
  return { value, title: (title as string | undefined) || value };
}

function bounds(
  schema: JsonObject,
  where: string,
  low: string,
  high: string,
  number: boolean,
): [number | undefined, number | undefined] {
  const found: [number | undefined, number | undefined] = [undefined, undefined];
  [low, high].forEach((name, slot) => {
    if (!Object.hasOwn(schema, name)) return;
    const bound = schema[name];
    if (number && !isNumber(bound)) throw new Problem(`${where}.${name}`, `must be a number, got ${jsonTypeName(bound)}`);
    if (!number && (!isInteger(bound) || (bound as number) < 0)) {
      throw new Problem(`${where}.${name}`, "must be a whole number of at least 0");
    }
    found[slot] = bound as number;
  });
  if (found[0] !== undefined && found[1] !== undefined && found[0] > found[1]) {
    throw new Problem(`${where}.${high}`, `must be at least ${low} (${numberText(found[0])})`);
  }
  return found;
}

// -- checking a value ----------------------------------------------------------------------------

/** What is wrong with `value` for `field` (`must be at most 10`), `undefined` if nothing. */
export function fieldProblem(field: FormField, value: unknown): string | undefined {
  switch (field.kind) {
    case "string":
      return stringProblem(field, value);
    case "number":
    case "integer":
      return numberProblem(field, value);
    case "boolean":
      return typeof value === "boolean" ? undefined : `must be true or false, got ${jsonTypeName(value)}`;
    case "choice":
      if (typeof value !== "string") return `must be a string, got ${jsonTypeName(value)}`;
      return field.choices.some((choice) => choice.value === value) ? undefined : `${quoted(value)} is not one of ${offered(field)}`;
    default:
      return choicesProblem(field, value);
  }
}

function stringProblem(field: FormField, value: unknown): string | undefined {
  if (typeof value !== "string") return `must be a string, got ${jsonTypeName(value)}`;
  const length = characters(value);
  if (field.minLength !== undefined && length < field.minLength) {
    return `must be at least ${field.minLength} characters long`;
  }
  const limit = field.maxLength === undefined ? MAX_CUSTOM_LENGTH : Math.min(field.maxLength, MAX_CUSTOM_LENGTH);
  if (length > limit) return `must be at most ${limit} characters long`;
  const problem = textProblem(value);
  if (problem !== undefined) return problem;
  if (field.format !== undefined && value !== "" && !fitsFormat(field.format, value)) return FORMAT_PROBLEMS[field.format];
  return undefined;
}

function fitsFormat(format: string, text: string): boolean {
  if (format === "email") return EMAIL.test(text);
  if (format === "uri") return URI.test(text);
  if (format === "date") return DATE.test(text) && realDate(text);
  const found = DATE_TIME.exec(text);
  if (found === null || !realDate(found[1]!)) return false;
  return Number(found[2]) < 24 && Number(found[3]) < 60 && Number(found[4]) < 61;
}

function realDate(text: string): boolean {
  const [year, month, day] = text.split("-").map(Number) as [number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function numberProblem(field: FormField, value: unknown): string | undefined {
  if (field.kind === "integer" && !isInteger(value)) return `must be a whole number, got ${jsonTypeName(value)}`;
  if (!isNumber(value)) return `must be a number, got ${jsonTypeName(value)}`;
  if (!Number.isFinite(value)) return "must be a finite number";
  if (field.minimum !== undefined && value < field.minimum) return `must be at least ${numberText(field.minimum)}`;
  if (field.maximum !== undefined && value > field.maximum) return `must be at most ${numberText(field.maximum)}`;
  return undefined;
}

function choicesProblem(field: FormField, value: unknown): string | undefined {
  if (!Array.isArray(value)) return `must be an array, got ${jsonTypeName(value)}`;
  const values = new Set(field.choices.map((choice) => choice.value));
  const seen = new Set<string>();
  for (const [index, item] of value.entries()) {
    if (typeof item !== "string") return `[${index}]: must be a string, got ${jsonTypeName(item)}`;
    if (!values.has(item)) return `[${index}]: ${quoted(item)} is not one of ${offered(field)}`;
    if (seen.has(item)) return `[${index}]: ${quoted(item)} is chosen more than once`;
    seen.add(item);
  }
  if (field.minItems !== undefined && value.length < field.minItems) {
    return `must hold at least ${field.minItems} ${plural(field.minItems, "choice")}`;
  }
  if (field.maxItems !== undefined && value.length > field.maxItems) {
    return `must hold at most ${field.maxItems} ${plural(field.maxItems, "choice")}`;
  }
  return undefined;
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

function offered(field: FormField): string {
  const values = field.choices.slice(0, SHOWN_CHOICES).map((choice) => quoted(choice.value));
  const more = field.choices.length - SHOWN_CHOICES;
  return values.join(", ") + (more > 0 ? ` (and ${more} more)` : "");
}
