#!/usr/bin/env node
// Generates src/wire.generated.ts from the Python package's JSON Schemas (schema/*.json), so the
// TypeScript types of the wire vocabulary and of the two tools' arguments cannot drift from what
// the host checks. No network, no dependency: the schemas use a small subset of JSON Schema
// (objects, maps, arrays, strings, numbers, booleans, `const`, `enum`, `$ref` and a tagged `oneOf`),
// translated here.
//
//   node scripts/gen-wire.mjs            write src/wire.generated.ts
//   node scripts/gen-wire.mjs --check    exit 1 when the committed file is stale
//   node scripts/gen-wire.mjs --schema DIR   read the schemas from DIR
//
// Without --schema, the folder is $UQ_SCHEMA_DIR, else the first `schema/` holding wire.json in
// this package's folder or above it (the repository's, or one copied beside the package).

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const OUTPUT = join(PACKAGE_DIR, "src", "wire.generated.ts");

/** The schemas, in the order their types are written, with the name of a file's root type. */
const FILES = [
  { file: "wire.json", root: null },
  { file: "ask_user_question.json", root: "AskUserQuestionArgs" },
  { file: "exit_plan_mode.json", root: "ExitPlanModeArgs" },
];

/** The folder holding the schemas: `explicit`, $UQ_SCHEMA_DIR, or a `schema/` above the package. */
export function findSchemaDir(explicit) {
  const given = explicit ?? process.env.UQ_SCHEMA_DIR;
  if (given) return resolve(given);
  for (let dir = PACKAGE_DIR; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "schema", "wire.json"))) return join(dir, "schema");
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    "cannot find the JSON Schemas (schema/wire.json) in this package's folder or above it; " +
      "pass --schema DIR or set UQ_SCHEMA_DIR",
  );
}

function comment(text, indent) {
  if (!text) return "";
  const lines = text.replaceAll("*/", "*\\/").split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? " " + line : ""}`).join("\n")}\n${indent} */\n`;
}

function refName(ref) {
  const match = /^#\/\$defs\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref);
  if (!match) throw new Error(`unsupported $ref ${JSON.stringify(ref)}`);
  return match[1];
}

function propertyKey(name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The TypeScript type of a schema node, written at `indent`. */
function typeOf(node, indent) {
  if (node.$ref) return refName(node.$ref);
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((value) => JSON.stringify(value)).join(" | ");
  if (node.oneOf) return node.oneOf.map((branch) => typeOf(branch, indent)).join(" | ");
  switch (node.type) {
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "integer":
    case "number":
      return "number";
    case "null":
      return "null";
    case "array": {
      const item = node.items ? typeOf(node.items, indent) : "unknown";
      return /^[A-Za-z0-9_]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case "object":
      return objectType(node, indent);
    case undefined:
      if (Object.keys(node).every((key) => key === "description")) return "unknown";
      throw new Error(`unsupported schema node ${JSON.stringify(node).slice(0, 200)}`);
    default:
      throw new Error(`unsupported schema node ${JSON.stringify(node).slice(0, 200)}`);
  }
}

function objectType(node, indent) {
  const inner = indent + "  ";
  const required = new Set(node.required ?? []);
  let body = "";
  for (const [name, property] of Object.entries(node.properties ?? {})) {
    body += comment(property.description, inner);
    const optional = required.has(name) ? "" : "?";
    body += `${inner}${propertyKey(name)}${optional}: ${typeOf(property, inner)};\n`;
  }
  if (node.additionalProperties === true) {
    body += `${inner}/** Other keys are allowed, and passed on as they are. */\n`;
    body += `${inner}[key: string]: unknown;\n`;
  } else if (typeof node.additionalProperties === "object") {
    body += `${inner}[key: string]: ${typeOf(node.additionalProperties, inner)};\n`;
  }
  return body ? `{\n${body}${indent}}` : "Record<string, never>";
}

function declaration(name, node) {
  const text = comment(node.description ?? node.title, "");
  const type = typeOf(node, "");
  if (node.type === "object" && !node.$ref && !node.oneOf && type.startsWith("{")) {
    return `${text}export interface ${name} ${type}\n`;
  }
  return `${text}export type ${name} = ${type};\n`;
}

/** A section's heading line, 100 characters wide. */
function rule(title) {
  return `// -- ${title} ${"-".repeat(Math.max(3, 100 - 7 - title.length))}`;
}

/** The generated module, from the schemas in `schemaDir`. */
export function generate(schemaDir) {
  const parts = [
    "// Generated by scripts/gen-wire.mjs from the JSON Schemas in the repository's schema/ folder.",
    "// Do not edit: run `npm run gen` after the schemas change (a test fails while this file is stale).",
    "",
  ];
  const schemas = {};
  for (const { file, root } of FILES) {
    const schema = JSON.parse(readFileSync(join(schemaDir, file), "utf8"));
    schemas[file] = schema;
    parts.push(rule(file), "");
    for (const [name, node] of Object.entries(schema.$defs ?? {})) {
      parts.push(declaration(name, node));
    }
    if (root) parts.push(declaration(root, { description: schema.description, ...schema }));
  }
  parts.push(
    rule("the schemas themselves"),
    "",
    "/** schema/wire.json, which the client checks the host's answers and its callers' questions against. */",
    `export const WIRE_SCHEMA = ${JSON.stringify(schemas["wire.json"], null, 2)} as const;`,
    "",
    "/** schema/ask_user_question.json: the arguments of the model-facing `ask_user_question` tool. */",
    `export const ASK_USER_QUESTION_ARGS_SCHEMA = ${JSON.stringify(schemas["ask_user_question.json"], null, 2)} as const;`,
    "",
    "/** schema/exit_plan_mode.json: the arguments of the model-facing `exit_plan_mode` tool. */",
    `export const EXIT_PLAN_MODE_ARGS_SCHEMA = ${JSON.stringify(schemas["exit_plan_mode.json"], null, 2)} as const;`,
    "",
  );
  return parts.join("\n");
}

function main(argv) {
  const check = argv.includes("--check");
  const at = argv.indexOf("--schema");
  const schemaDir = findSchemaDir(at >= 0 ? argv[at + 1] : undefined);
  const text = generate(schemaDir);
  const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, "utf8") : "";
  const shown = relative(process.cwd(), OUTPUT) || OUTPUT;
  if (check) {
    if (current !== text) {
      process.stderr.write(`${shown} is stale: run \`npm run gen\` (schemas: ${schemaDir})\n`);
      return 1;
    }
    process.stdout.write(`${shown} is up to date with ${schemaDir}\n`);
    return 0;
  }
  if (current !== text) writeFileSync(OUTPUT, text);
  process.stdout.write(`${current === text ? "unchanged" : "wrote"} ${shown}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
