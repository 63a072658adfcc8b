// The client's check of a form's value answers every case of test/form-cases.json exactly as the
// Python package's does (tests/test_forms.py reads the same file): the same problem, word for
// word, or none.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { formFields, schemaProblem, valueProblem } from "user-questions-client";

const CASES = JSON.parse(readFileSync(new URL("./form-cases.json", import.meta.url), "utf8"));
const form = (schema) => (typeof schema === "string" ? CASES.forms[schema] : schema);

test("every value case gets the Python checker's problem", () => {
  assert.ok(CASES.values.length > 30);
  for (const { schema, value, problem } of CASES.values) {
    assert.equal(valueProblem(form(schema), value) ?? null, problem, JSON.stringify(value));
  }
});

test("every schema case gets the Python checker's problem", () => {
  for (const { schema, problem } of CASES.schemas) {
    assert.equal(schemaProblem(form(schema)) ?? null, problem, JSON.stringify(schema));
  }
});

test("a form's fields are read in order, with titles, bounds and defaults", () => {
  const fields = formFields(CASES.forms.deploy);
  assert.deepEqual(
    fields.map((field) => field.key),
    Object.keys(CASES.forms.deploy.properties),
  );
  const [replicas, , env, tier] = fields;
  assert.deepEqual(
    { kind: replicas.kind, minimum: replicas.minimum, maximum: replicas.maximum, default: replicas.default },
    { kind: "integer", minimum: 1, maximum: 10, default: 2 },
  );
  assert.deepEqual(env.choices, [
    { value: "prod", title: "Production" },
    { value: "dev", title: "Development" },
  ]);
  assert.deepEqual(tier.choices[0], { value: "gold", title: "Gold" });
});
