/**
 * Reading wire JSON against the generated JSON Schema (`WIRE_SCHEMA`), with one-line errors that
 * name the property, worded as the Python side words them.
 *
 * Only the subset of JSON Schema the vocabulary uses is read: objects with `properties` and
 * `required`, arrays, strings, booleans, numbers, `const`, `$ref` into `$defs`, and a `oneOf`
 * tagged by a `discriminator`. What is read is copied, keeping only the properties the schema
 * names (unknown keys are dropped, as a receiver ignores them) and leaving out an optional
 * property that is `undefined` or `null` (an unset field is absent on the wire, never `null`).
 * A camelCase property may also be spelled in snake_case (`multi_select`), as the host accepts.
 *
 * @module
 */

import { WIRE_SCHEMA } from "./wire.generated.js";

interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string;
  readonly const?: unknown;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly items?: SchemaNode;
  readonly oneOf?: readonly SchemaNode[];
  readonly discriminator?: { readonly propertyName: string; readonly mapping?: Readonly<Record<string, string>> };
}

const DEFS = WIRE_SCHEMA.$defs as unknown as Readonly<Record<string, SchemaNode>>;

/** A value that does not fit its schema; `message` names the property. */
export class SchemaProblem extends Error {}

const EXPECTED: Record<string, string> = {
  string: "a string",
  boolean: "a boolean",
  array: "an array",
  object: "an object",
  integer: "an integer",
  number: "a number",
  null: "null",
};

/** The JSON name of a value's type, as the Python side names it. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "object";
  if (value === undefined) return "undefined";
  return typeof value;
}

function where(path: string): string {
  return path ? `property "${path}"` : "the document";
}

function resolveRef(node: SchemaNode): SchemaNode {
  let current = node;
  while (current.$ref !== undefined) {
    const name = current.$ref.replace(/^#\/\$defs\//, "");
    const found = DEFS[name];
    if (found === undefined) throw new Error(`the schema has no definition ${name}`);
    current = found;
  }
  return current;
}

function fits(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "null":
      return value === null;
    default:
      return false;
  }
}

/** `value` read as `node`: a checked copy, or a {@link SchemaProblem} naming the property. */
export function readValue(value: unknown, schema: SchemaNode, path: string): unknown {
  const node = resolveRef(schema);
  if (node.oneOf !== undefined) return readTagged(value, node, path);
  if (node.const !== undefined && value !== node.const) {
    throw new SchemaProblem(`${where(path)} must be ${JSON.stringify(node.const)}, got ${JSON.stringify(value) ?? jsonTypeName(value)}`);
  }
  if (node.type !== undefined && !fits(value, node.type)) {
    throw new SchemaProblem(`${where(path)} must be ${EXPECTED[node.type] ?? node.type}, got ${jsonTypeName(value)}`);
  }
  if (node.type === "array") {
    const items = node.items;
    return (value as unknown[]).map((item, index) =>
      items === undefined ? item : readValue(item, items, `${path}[${index}]`),
    );
  }
  if (node.type === "object" && node.properties !== undefined) {
    const source = value as Record<string, unknown>;
    const required = new Set(node.required ?? []);
    const copy: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(node.properties)) {
      const inner = path ? `${path}.${name}` : name;
      const given = Object.hasOwn(source, name) ? source[name] : aliasOf(source, name);
      if (given === undefined || (given === null && !required.has(name))) {
        if (required.has(name)) throw new SchemaProblem(`missing required property "${inner}"`);
        continue;
      }
      copy[name] = readValue(given, property, inner);
    }
    return copy;
  }
  return value;
}

/** The value of `name`'s snake_case spelling (`multi_select` for `multiSelect`), if given. */
function aliasOf(source: Record<string, unknown>, name: string): unknown {
  const snake = name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);
  return snake !== name && Object.hasOwn(source, snake) ? source[snake] : undefined;
}

function readTagged(value: unknown, node: SchemaNode, path: string): unknown {
  const tag = node.discriminator?.propertyName;
  if (tag === undefined || !fits(value, "object")) {
    if (!fits(value, "object")) {
      throw new SchemaProblem(`${where(path)} must be an object, got ${jsonTypeName(value)}`);
    }
    throw new Error("the schema holds a oneOf without a discriminator");
  }
  const given = (value as Record<string, unknown>)[tag];
  const inner = path ? `${path}.${tag}` : tag;
  if (given === undefined || given === null) throw new SchemaProblem(`missing required property "${inner}"`);
  const target = typeof given === "string" ? node.discriminator?.mapping?.[given] : undefined;
  if (target === undefined) {
    const kind = tag === "kind" ? "intent" : tag;
    throw new SchemaProblem(`property "${inner}" names an unknown ${kind} ${JSON.stringify(given) ?? jsonTypeName(given)}`);
  }
  return readValue(value, { $ref: target }, path);
}

/** A node naming one of the vocabulary's definitions (`AskUserQuestionItem`, ...). */
export function definition(name: keyof typeof WIRE_SCHEMA.$defs): SchemaNode {
  return { $ref: `#/$defs/${name}` };
}

/** The node of an object holding one array property of definitions: `{questions: [...]}`. */
export function listOf(property: string, name: keyof typeof WIRE_SCHEMA.$defs): SchemaNode {
  return {
    type: "object",
    required: [property],
    properties: { [property]: { type: "array", items: definition(name) } },
  };
}
