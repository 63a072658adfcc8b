// The generated wire types follow the Python package's JSON Schemas, and the package's entry
// points are what its package.json says.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { findSchemaDir, generate, OUTPUT, PACKAGE_DIR } from "../scripts/gen-wire.mjs";

test("src/wire.generated.ts is what scripts/gen-wire.mjs makes of schema/*.json (run `npm run gen` if not)", () => {
  const schemaDir = findSchemaDir();
  const expected = generate(schemaDir);
  const committed = readFileSync(OUTPUT, "utf8");
  assert.ok(
    committed === expected,
    `src/wire.generated.ts is stale against ${schemaDir}: run \`npm run gen\` in clients/typescript and commit it`,
  );
});

test("the generated schema constant is the schema file itself, so the client checks what the host checks", async () => {
  const { WIRE_SCHEMA } = await import("user-questions-client");
  const onDisk = JSON.parse(readFileSync(join(findSchemaDir(), "wire.json"), "utf8"));
  assert.deepEqual(WIRE_SCHEMA, onDisk);
});

test("package.json exports '.' and './dsh', each with its declarations built", async () => {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8"));
  assert.deepEqual(Object.keys(manifest.exports).filter((key) => key !== "./package.json"), [".", "./dsh"]);
  for (const entry of [".", "./dsh"]) {
    const { types, default: code } = manifest.exports[entry];
    assert.ok(readFileSync(join(PACKAGE_DIR, types), "utf8").length > 0, `${types} is built`);
    assert.ok(readFileSync(join(PACKAGE_DIR, code), "utf8").length > 0, `${code} is built`);
  }
  const root = await import("user-questions-client");
  assert.equal(typeof root.RemoteProvider, "function");
  const dsh = await import("user-questions-client/dsh");
  assert.equal(dsh.name, "user-questions-client");
  assert.deepEqual(dsh.inject, ["userQuestions"]);
  assert.equal(typeof dsh.apply, "function");
});

test("dist imports the seed's packages by name and bundles none of them", () => {
  const dsh = readFileSync(join(PACKAGE_DIR, "dist", "dsh.js"), "utf8");
  assert.match(dsh, /from "@deepseek-ai\/dsh-user-questions"/);
  assert.doesNotMatch(dsh, /class\s+\w*\s*extends\s+HarnessError/);
  const root = readFileSync(join(PACKAGE_DIR, "dist", "index.js"), "utf8") +
    readFileSync(join(PACKAGE_DIR, "dist", "remote.js"), "utf8");
  assert.doesNotMatch(root, /@deepseek-ai\//, "the root entry point runs without the harness installed");
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8"));
  assert.ok(manifest.peerDependencies["@deepseek-ai/dsh-user-questions"]);
  assert.equal(manifest.dependencies["@deepseek-ai/dsh-user-questions"], undefined);
});
