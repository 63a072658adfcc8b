// The seed's own harness asks, and asks permission, through a real host: the plugin of
// `user-questions-client/dsh` in a Cordis Context with the seed's services and tools.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { defineTool } from "@deepseek-ai/dsh-tools";
import { UserQuestionError as SeedUserQuestionError } from "@deepseek-ai/dsh-user-questions";
import * as uq from "user-questions-client/dsh";

import { agentInTurn, ApprovalService, askTool, CallId, harness } from "./harness.mjs";
import { Host, rejectionOf, sessionName, waitFor } from "./helpers/host.mjs";

const TIMEOUT = { timeout: 30_000 };
const PKG = {
  id: "pkg",
  header: "Setup",
  question: "Which package manager?",
  options: [{ label: "pnpm (Recommended)", description: "Fast, strict" }, { label: "npm" }, { label: "yarn" }],
};

describe("the plugin in the seed's harness", () => {
  const host = new Host({ name: "dsh" });
  before(() => host.start());
  after(() => host.dispose());

  test("once ctx.plugin() settles the provider is registered; disposing the fiber withdraws and unregisters it", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("fiber");
    const fiber = ctx.plugin(uq, { url: host.askerUrl, session });
    await fiber;
    assert.throws(() => ctx.userQuestions.registerProvider({ ask: async () => ({ answers: [] }) }), {
      code: "DUPLICATE_PROVIDER",
    });
    const asked = ctx.userQuestions.ask({ questions: [PKG] });
    const first = await host.pendingOf(session);
    await host.answer(first.rpcId, [{ id: "pkg", selected: ["npm"] }]);
    assert.deepEqual(await asked, { answers: [{ id: "pkg", selected: ["npm"] }] });

    const waiting = rejectionOf(ctx.userQuestions.ask({ questions: [PKG] }));
    const second = await host.pendingOf(session);
    await fiber.dispose();
    const { error } = await waiting;
    assert.ok(error instanceof SeedUserQuestionError, "the seed's own class");
    assert.equal(error.code, "ASK_ABORTED");
    const entry = (await host.history(session)).find((one) => one.rpcId === second.rpcId);
    assert.equal(entry.outcome, "withdrawn", "the unloaded plugin took its question down");
    const { error: none } = await rejectionOf(ctx.userQuestions.ask({ questions: [PKG] }));
    assert.equal(none.code, "NO_PROVIDER");
    await ctx.fiber.dispose();
  });

  test("apply() has registered the provider when it returns, before any connection", TIMEOUT, async () => {
    const ctx = await harness();
    const fiber = ctx.plugin({ name: "probe", inject: ["userQuestions"], apply: (inner) => {
      assert.equal(uq.apply(inner, { url: "http://127.0.0.1:9/?token=t" }), undefined, "apply is synchronous");
      assert.throws(() => inner.userQuestions.registerProvider({ ask: async () => ({ answers: [] }) }), {
        code: "DUPLICATE_PROVIDER",
      });
    } });
    await fiber; // rejects if an assertion inside apply failed
    await ctx.fiber.dispose();
  });

  test("ask_user_question executed through ctx.tools is answered at the host's HTTP API", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("tool");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const call = askTool(ctx, [
      PKG,
      { id: "extras", question: "Which extras?", multi_select: true, options: [{ label: "web" }, { label: "mcp" }] },
    ]);
    const frame = await host.pendingOf(session);
    assert.deepEqual(frame.payload.questions[1], {
      id: "extras",
      question: "Which extras?",
      options: [{ label: "web" }, { label: "mcp" }],
      multiSelect: true,
    });
    await host.answer(frame.rpcId, [
      { id: "extras", selected: ["mcp", "web"] },
      { id: "pkg", selected: ["pnpm (Recommended)"] },
    ]);
    const result = await call;
    assert.equal(result.isError, false);
    const answer = {
      answers: [
        { id: "pkg", selected: ["pnpm (Recommended)"] },
        { id: "extras", selected: ["web", "mcp"] },
      ],
    };
    assert.deepEqual(result.value, answer);
    assert.deepEqual(JSON.parse(result.content[0].text), answer, "the model reads the answer as compact JSON");
    await ctx.fiber.dispose();
  });

  test("a note reaches the model in the tool's text, the result's value staying the seed's", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("tool-note");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const call = askTool(ctx, [
      PKG,
      { id: "extras", question: "Which extras?", multi_select: true, options: [{ label: "web" }, { label: "mcp" }] },
    ]);
    const frame = await host.pendingOf(session);
    await host.answer(frame.rpcId, [
      { id: "pkg", selected: ["npm"], note: "pin the version" },
      { id: "extras", selected: [], custom: "none for now" },
    ]);
    const result = await call;
    assert.equal(result.isError, false);
    const seeds = { answers: [{ id: "pkg", selected: ["npm"] }, { id: "extras", selected: [], custom: "none for now" }] };
    assert.deepEqual(result.value, seeds, "a client reading selected and custom sees what it always did");
    assert.deepEqual(JSON.parse(result.content[0].text), {
      answers: [
        { id: "pkg", selected: ["npm"], note: "pin the version" },
        { id: "extras", selected: [], custom: "none for now" },
      ],
    });
    await ctx.fiber.dispose();
  });

  test("the provider gives harness code a note and a form's typed value as the host kept them", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("more");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const form = {
      id: "deploy",
      question: "How should it deploy?",
      schema: {
        type: "object",
        properties: {
          replicas: { type: "integer", minimum: 1, maximum: 10 },
          canary: { type: "boolean" },
          regions: { type: "array", items: { anyOf: [{ const: "eu", title: "Europe" }, { const: "us" }] } },
        },
        required: ["replicas"],
      },
    };
    const asked = ctx.userQuestions.ask({ questions: [PKG, form] });
    const frame = await host.pendingOf(session);
    assert.deepEqual(frame.payload.questions[1].schema, form.schema, "the form reaches the host as asked");
    await host.answer(frame.rpcId, [
      { id: "pkg", selected: ["npm"], note: "pin the version" },
      { id: "deploy", selected: [], value: { replicas: 3, canary: true, regions: ["eu"] } },
    ]);
    assert.deepEqual(await asked, {
      answers: [
        { id: "pkg", selected: ["npm"], note: "pin the version" },
        { id: "deploy", selected: [], value: { replicas: 3, canary: true, regions: ["eu"] } },
      ],
    });
    await ctx.fiber.dispose();
  });

  test("a dismissal reaches the model as { name: UserQuestionError, code: ASK_CANCELLED }", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("dismissed");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const call = askTool(ctx, [PKG]);
    await host.dismiss((await host.pendingOf(session)).rpcId);
    const result = await call;
    assert.equal(result.isError, true);
    assert.deepEqual(result.error.info, { name: "UserQuestionError", code: "ASK_CANCELLED" });
    assert.equal(result.content[0].text, "Error: the user cancelled ask_user_question");
    await ctx.fiber.dispose();
  });

  test("a wrong token reaches the model as UNAUTHORIZED within 5 s", TIMEOUT, async () => {
    const ctx = await harness();
    await ctx.plugin(uq, { url: host.urlWithToken("wrong-token") });
    const started = Date.now();
    const result = await askTool(ctx, [PKG]);
    assert.ok(Date.now() - started < 5_000);
    assert.deepEqual(result.error.info, { name: "UserQuestionError", code: "UNAUTHORIZED" });
    await ctx.fiber.dispose();
  });

  test("aborting the tool call withdraws the card from the inbox", TIMEOUT, async () => {
    const ctx = await harness();
    const session = sessionName("abort");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    const controller = new AbortController();
    const call = askTool(ctx, [PKG], { signal: controller.signal });
    const frame = await host.pendingOf(session);
    controller.abort();
    const result = await call;
    assert.equal(result.isError, true);
    assert.deepEqual(result.error.info, { name: "UserQuestionError", code: "ASK_ABORTED" });
    assert.equal((await host.pending()).some((one) => one.rpcId === frame.rpcId), false);
    assert.equal((await host.history(session))[0].outcome, "withdrawn");
    await ctx.fiber.dispose();
  });

  test("a config without url fails the plugin with BAD_REQUEST", TIMEOUT, async () => {
    const ctx = await harness();
    const { error } = await rejectionOf(Promise.resolve(ctx.plugin(uq, {})));
    assert.ok(error instanceof SeedUserQuestionError);
    assert.equal(error.code, "BAD_REQUEST");
    await ctx.fiber.dispose();
  });
});

describe("the harness across a host restart", () => {
  const host = new Host({ name: "dsh-restart" });
  before(() => host.start());
  after(() => host.dispose());

  test("the host restarted while the tool call waits: the answer reaches the model once", { timeout: 60_000 }, async () => {
    const ctx = await harness();
    const session = sessionName("restart");
    await ctx.plugin(uq, { url: host.askerUrl, session });
    let results = 0;
    const call = askTool(ctx, [PKG]).then((result) => {
      results += 1;
      return result;
    });
    const { rpcId } = await host.pendingOf(session);
    await host.restart("SIGKILL");
    const again = await host.pendingOf(session);
    assert.equal(again.rpcId, rpcId, "the same request, shown again");
    await host.answer(rpcId, [{ id: "pkg", selected: ["yarn"] }]);
    const result = await call;
    assert.deepEqual(result.value, { answers: [{ id: "pkg", selected: ["yarn"] }] });
    assert.equal(results, 1);
    assert.equal((await host.history(session)).length, 1);
    await ctx.fiber.dispose();
  });
});

describe("approvals through the inbox", () => {
  const host = new Host({ name: "approval" });
  before(() => host.start());
  after(() => host.dispose());

  /** A harness with a `deploy` tool that needs a person's approval, and the plugin loaded
   * before the approval service (its answerer appears with the service). */
  async function deployment(config) {
    const ctx = await harness();
    await ctx.plugin(uq, config);
    await ctx.plugin(ApprovalService);
    const runs = [];
    ctx.tools.register(
      defineTool({
        name: "deploy",
        description: "Deploy the service.",
        parameters: { env: { type: "string", required: true } },
        output: { schema: { type: "string" }, render: (_args, value) => [{ type: "text", text: value }] },
        async execute(args) {
          runs.push(args.env);
          return `deployed to ${args.env}`;
        },
      }),
    );
    ctx.on("tools/pre-execute", async (exec, next) =>
      exec.name === "deploy" ? { kind: "ask", reason: "Production deploys need a person's approval." } : next(),
    );
    return { ctx, runs };
  }

  const deploy = (ctx, agent, callId, signal = new AbortController().signal) =>
    ctx.tools.execute({ callId: CallId(callId), name: "deploy", arguments: { env: "prod" }, agent, signal });

  test("an approval answered Allow runs the tool; one answered Deny does not", TIMEOUT, async () => {
    const agent = agentInTurn(sessionName("deployer"));
    const { ctx, runs } = await deployment({ url: host.askerUrl });

    const allowed = deploy(ctx, agent, "call-allow");
    const card = await host.pendingOf(agent.id);
    const [question] = card.payload.questions;
    assert.equal(question.header, "deploy");
    assert.equal(question.question, "Allow the agent to run deploy?");
    assert.match(question.detail, /Production deploys need a person's approval\./);
    assert.match(question.detail, /Tool: `deploy`/);
    assert.match(question.detail, /Call id: `call-allow`/);
    assert.deepEqual(
      question.options.map((option) => option.label),
      ["Allow", "Deny"],
    );
    await host.answer(card.rpcId, [{ id: "approval", selected: ["Allow"] }]);
    const ran = await allowed;
    assert.equal(ran.isError, false);
    assert.equal(ran.value, "deployed to prod");
    assert.deepEqual(runs, ["prod"]);

    const denied = deploy(ctx, agent, "call-deny");
    const second = await waitFor(async () =>
      (await host.pending()).find((one) => one.payload.questions[0].detail.includes("call-deny")),
    );
    await host.answer(second.rpcId, [{ id: "approval", selected: ["Deny"] }]);
    const refused = await denied;
    assert.equal(refused.isError, true);
    assert.equal(refused.content[0].text, 'Error: the user rejected tool "deploy"');
    assert.deepEqual(runs, ["prod"], "the denied call never ran");

    const decided = agent.session.events.filter((event) => event.type === "approval/decided");
    assert.deepEqual(
      decided.map((event) => event.data.outcome),
      ["allowed-once", "rejected"],
    );
    await ctx.fiber.dispose();
  });

  test("typed text, a skip and a dismissal reject: only an explicit Allow allows", TIMEOUT, async () => {
    const agent = agentInTurn(sessionName("strict"));
    const { ctx } = await deployment({ url: host.askerUrl });
    const replies = [
      (rpcId) => host.answer(rpcId, [{ id: "approval", selected: [], custom: "not on a Friday" }]),
      (rpcId) => host.answer(rpcId, [{ id: "approval", selected: [] }]),
      (rpcId) => host.dismiss(rpcId),
    ];
    for (const reply of replies) {
      const decision = ctx.approval.request({ agent, toolName: "deploy", reason: "why not" });
      await reply((await host.pendingOf(agent.id)).rpcId);
      assert.equal(await decision, "rejected");
    }
    await ctx.fiber.dispose();
  });

  test("an approval whose request is aborted is cancelled, and its card withdrawn", TIMEOUT, async () => {
    const agent = agentInTurn(sessionName("withdrawn"));
    const { ctx, runs } = await deployment({ url: host.askerUrl });
    const controller = new AbortController();
    const call = deploy(ctx, agent, "call-abort", controller.signal);
    const card = await host.pendingOf(agent.id);
    controller.abort();
    const result = await call;
    assert.equal(result.isError, true);
    assert.deepEqual(runs, []);
    const decided = agent.session.events.find((event) => event.type === "approval/decided");
    assert.equal(decided.data.outcome, "cancelled");
    const entry = await waitFor(async () => (await host.history(agent.id)).find((one) => one.rpcId === card.rpcId));
    assert.equal(entry.outcome, "withdrawn");
    await ctx.fiber.dispose();
  });

  test("an unreachable host, or a refused token, is unavailable at once: the tool does not run", TIMEOUT, async () => {
    for (const url of ["http://127.0.0.1:9/?token=t", host.urlWithToken("wrong")]) {
      const agent = agentInTurn(sessionName("nobody"));
      const { ctx, runs } = await deployment({ url });
      const started = Date.now();
      const result = await deploy(ctx, agent, "call-down");
      assert.ok(Date.now() - started < 5_000, `${url}: decided in ${Date.now() - started} ms`);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /no approval channel is available/);
      assert.deepEqual(runs, []);
      await ctx.fiber.dispose();
    }
  });
});
