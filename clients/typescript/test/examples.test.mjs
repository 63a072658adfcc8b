// The examples of docs/clients/typescript.md are the files in examples/, and they run: each asks
// a real host, is answered through its HTTP API, and prints what the page says it prints.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";

import { Host, PACKAGE_DIR } from "./helpers/host.mjs";

const EXAMPLES = join(PACKAGE_DIR, "examples");

/** docs/clients/typescript.md, in a folder above the package (the repository), if there is one. */
function guide() {
  for (let dir = PACKAGE_DIR; dirname(dir) !== dir; dir = dirname(dir)) {
    const page = join(dir, "docs", "clients", "typescript.md");
    if (existsSync(page)) return readFileSync(page, "utf8");
  }
  return undefined;
}

function run(file, env) {
  const child = spawn(process.execPath, [join(EXAMPLES, file)], { cwd: EXAMPLES, env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (text) => (stdout += text));
  child.stderr.on("data", (text) => (stderr += text));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
  return { child, exited };
}

describe("the guide's examples", () => {
  const host = new Host({ name: "examples" });
  before(() => host.start());
  after(() => host.dispose());

  test("are shown in the guide exactly as they are in examples/", (t) => {
    const page = guide();
    if (page === undefined) {
      t.skip("docs/clients/typescript.md is not above this copy of the package");
      return;
    }
    for (const file of ["plain-node.mjs", "harness.mjs"]) {
      const code = readFileSync(join(EXAMPLES, file), "utf8");
      assert.ok(page.includes("```js\n" + code + "```"), `docs/clients/typescript.md shows examples/${file} as it is`);
    }
  });

  for (const [file, session, answer, printed] of [
    ["plain-node.mjs", "release-bot", [{ id: "ship", selected: ["Ship (Recommended)"] }], '{"answers":[{"id":"ship","selected":["Ship (Recommended)"]}]}'],
    ["harness.mjs", "harness-demo", [{ id: "pkg", selected: ["pnpm (Recommended)"] }], '{"answers":[{"id":"pkg","selected":["pnpm (Recommended)"]}]}'],
  ]) {
    test(`examples/${file} asks the host and prints the answer`, { timeout: 30_000 }, async () => {
      const { child, exited } = run(file, { UQ_URL: host.askerUrl });
      try {
        const frame = await host.pendingOf(session);
        await host.answer(frame.rpcId, answer);
        const { code, stdout, stderr } = await exited;
        assert.equal(code, 0, stderr);
        assert.equal(stdout.trim(), printed);
      } finally {
        child.kill();
      }
    });
  }

  test("examples/plain-node.mjs says why it does not ship when the question is dismissed", { timeout: 30_000 }, async () => {
    const { child, exited } = run("plain-node.mjs", { UQ_URL: host.askerUrl });
    try {
      await host.dismiss((await host.pendingOf("release-bot")).rpcId);
      const { code, stdout } = await exited;
      assert.equal(code, 0);
      assert.equal(stdout.trim(), "not shipping: ASK_CANCELLED");
    } finally {
      child.kill();
    }
  });
});
