// A person answers in a real browser (Debian's chromium, driven by playwright-core): the
// harness's tool call gets exactly what was clicked on the host's page.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { chromium } from "playwright-core";
import * as uq from "user-questions-client/dsh";

import { askTool, harness } from "./harness.mjs";
import { Host, sessionName } from "./helpers/host.mjs";

const CHROMIUM = process.env.UQ_CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--no-first-run", "--disable-sync", "--disable-quic"];

describe("answering in the browser", () => {
  const host = new Host({ name: "browser" });
  let browser;
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Debian chromium is needed at ${CHROMIUM} (apt-get install chromium)`);
    await host.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
  });
  after(async () => {
    await browser?.close();
    await host.dispose();
  });

  test("the option a person clicks on the page is the tool call's answer", { timeout: 60_000 }, async () => {
    const ctx = await harness();
    const session = sessionName("browser");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const errors = [];
    page.on("pageerror", (error) => errors.push(`uncaught: ${error}`));
    page.on("console", (message) => message.type() === "error" && errors.push(`console: ${message.text()}`));
    await page.goto(host.pageUrl);
    const call = askTool(ctx, [
      {
        id: "db",
        header: "Storage",
        question: "Which database should the service use?",
        options: [
          { label: "PostgreSQL (Recommended)", description: "Battle-tested, rich SQL" },
          { label: "SQLite", description: "One file, zero operations" },
        ],
      },
    ]);
    const card = page.locator(".card", { hasText: session });
    await card.locator(".option", { hasText: "SQLite" }).click({ timeout: 15_000 });
    await card.getByRole("button", { name: "Submit" }).click();
    const result = await call;
    assert.equal(result.isError, false);
    assert.deepEqual(result.value, { answers: [{ id: "db", selected: ["SQLite"] }] });
    await card.waitFor({ state: "detached", timeout: 10_000 });
    assert.deepEqual(errors, [], "the page reported no errors");
    const [entry] = await host.history(session);
    assert.deepEqual([entry.outcome, entry.via], ["answered", "web"]);
    await page.close();
    await ctx.fiber.dispose();
  });
});
