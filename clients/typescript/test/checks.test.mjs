// The client checks requests and answers as the host does: the same code and the same message for
// the same mistake. The host's own replies are the reference, so the two languages cannot drift.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";

import { checkAnswer, checkRequest, readQuestions, RemoteProvider, UserQuestionError } from "user-questions-client";

import { Host, rejectionOf, sessionName } from "./helpers/host.mjs";

const TIMEOUT = { timeout: 30_000 };
const long = (n) => "x".repeat(n);

/** Requests the host refuses, each with the mistake in it. */
const BAD_REQUESTS = {
  "no questions": [],
  "a repeated id": [
    { id: "a", question: "A?" },
    { id: "a", question: "Again?" },
  ],
  "a repeated label": [{ id: "a", question: "A?", options: [{ label: "x" }, { label: "x" }] }],
  "an approve label that is no option": [
    { id: "p", question: "Go?", detail: "plan", options: [{ label: "Yes" }], intent: { kind: "plan-review", approve: "Go" } },
  ],
  "an intent without its detail": [
    { id: "p", question: "Go?", options: [{ label: "Yes" }], intent: { kind: "plan-review", approve: "Yes" } },
  ],
  "an unknown intent": [{ id: "p", question: "Go?", intent: { kind: "vote", approve: "Yes" } }],
  "33 questions": Array.from({ length: 33 }, (_, i) => ({ id: `q${i}`, question: "?" })),
  "65 options": [{ id: "a", question: "A?", options: Array.from({ length: 65 }, (_, i) => ({ label: `o${i}` })) }],
  "a header over 1,000 characters": [{ id: "a", question: "A?", header: long(1001) }],
  "a detail over 100,000 characters": [{ id: "a", question: "A?", detail: long(100_001) }],
  "a label over 1,000 characters (astral characters counted once)": [
    { id: "a", question: "A?", options: [{ label: "😀".repeat(1001) }] },
  ],
  "an id over 256 characters": [{ id: long(257), question: "A?" }],
  "a NUL in a question": [{ id: "a", question: "A\u0000?" }],
  "an id that is a number": [{ id: 7, question: "A?" }],
  "a missing question": [{ id: "a" }],
  "an option without a label": [{ id: "a", question: "A?", options: [{ description: "d" }] }],
  "a form with options": [
    { id: "f", question: "F?", options: [{ label: "x" }], schema: { type: "object", properties: { n: { type: "integer" } } } },
  ],
  "a form that is not flat": [
    { id: "f", question: "F?", schema: { type: "object", properties: { n: { type: "object" } } } },
  ],
  "a form with 65 fields": [
    {
      id: "f",
      question: "F?",
      schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}`, { type: "boolean" }])) },
    },
  ],
  "a form field titled over 1,000 characters": [
    { id: "f", question: "F?", schema: { type: "object", properties: { n: { type: "integer", title: long(1001) } } } },
  ],
  "a form's default out of its range": [
    { id: "f", question: "F?", schema: { type: "object", properties: { n: { type: "integer", maximum: 3, default: 4 } } } },
  ],
};

function localError(questions) {
  try {
    checkRequest(readQuestions(questions));
  } catch (error) {
    return { code: error.code, message: error.message };
  }
  return null;
}

describe("request checks", () => {
  const host = new Host({ name: "checks" });
  before(() => host.start());
  after(() => host.dispose());

  test("each bad request is refused with the host's own code and message", TIMEOUT, async () => {
    const ws = new WebSocket(`${host.base.replace(/^http/, "ws")}ws/ask`, {
      headers: { Authorization: `Bearer ${host.askerToken}` },
    });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const replies = new Map();
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      replies.set(frame.rpcId, frame.payload);
    });
    const names = Object.keys(BAD_REQUESTS);
    names.forEach((name, index) => {
      ws.send(JSON.stringify({ type: "ask", rpcId: `bad-${index}`, sessionId: "checks", questions: BAD_REQUESTS[name] }));
    });
    const deadline = Date.now() + 10_000;
    while (replies.size < names.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    names.forEach((name, index) => {
      const hosts = replies.get(`bad-${index}`);
      assert.equal(hosts?.type, "ask/error", `the host refuses ${name}`);
      assert.deepEqual(localError(BAD_REQUESTS[name]), { code: hosts.code, message: hosts.message }, name);
    });
  });

  test("a bad request is refused at once, before any connection is tried", TIMEOUT, async () => {
    const nowhere = new RemoteProvider("http://127.0.0.1:9/?token=t"); // nothing listens there
    for (const [name, questions] of Object.entries(BAD_REQUESTS)) {
      const { error, ms } = await rejectionOf(nowhere.ask({ questions }));
      assert.ok(error instanceof UserQuestionError, name);
      assert.equal(error.name, "UserQuestionError");
      assert.deepEqual({ code: error.code, message: error.message }, localError(questions), name);
      assert.ok(ms < 500, `${name}: refused in ${ms} ms`);
    }
    assert.equal(nowhere.connected, false);
  });

  test("a lone surrogate is refused as the in-process service refuses it (BAD_QUESTION), naming the property", () => {
    assert.deepEqual(localError([{ id: "a", question: "A?", options: [{ label: "x\uD83D" }] }]), {
      code: "BAD_QUESTION",
      message: 'property "questions[0].options[0].label" holds a lone surrogate (U+D83D), which is not text',
    });
  });

  test("a request too large for one frame is REQUEST_TOO_LARGE, not sent", TIMEOUT, async () => {
    const nowhere = new RemoteProvider("http://127.0.0.1:9/?token=t");
    const questions = Array.from({ length: 12 }, (_, i) => ({ id: `q${i}`, question: "?", detail: long(99_000) }));
    const { error } = await rejectionOf(nowhere.ask({ questions }));
    assert.equal(error.code, "REQUEST_TOO_LARGE");
    assert.match(error.message, /a host takes at most 1048576/);
  });

  test("snake_case spellings are read as the host reads them, and unknown keys are left out", () => {
    const [question] = readQuestions([
      { id: "a", question: "A?", multi_select: true, options: [{ label: "x", extra: 1 }], header: null, color: "red" },
    ]);
    assert.deepEqual(question, { id: "a", question: "A?", options: [{ label: "x" }], multiSelect: true });
  });
});

describe("answer checks", () => {
  const host = new Host({ name: "answers" });
  before(() => host.start());
  after(() => host.dispose());

  const QUESTIONS = [
    { id: "pick", question: "Which one?", options: [{ label: "A" }, { label: "B" }] },
    { id: "many", question: "Which ones?", multiSelect: true, options: [{ label: "X" }, { label: "Y" }, { label: "Z" }] },
    { id: "free", question: "Anything else?" },
    {
      id: "form",
      question: "How many?",
      schema: {
        type: "object",
        properties: {
          replicas: { type: "integer", minimum: 1, maximum: 10 },
          env: { type: "string", oneOf: [{ const: "prod", title: "Production" }, { const: "dev", title: "Dev" }] },
        },
        required: ["replicas"],
      },
    },
  ];
  const ok = [
    { id: "pick", selected: ["A"] },
    { id: "many", selected: [] },
    { id: "free", selected: [] },
    { id: "form", selected: [] },
  ];
  const with_ = (id, item) => ok.map((one) => (one.id === id ? { id, ...item } : one));
  /** Answers the host refuses, each with the mistake in it. */
  const BAD_ANSWERS = {
    "a label that is no option": with_("pick", { selected: ["C"] }),
    "two labels on a single-select question": with_("pick", { selected: ["A", "B"] }),
    "a label and text on a single-select question": with_("pick", { selected: ["A"], custom: "mine" }),
    "a label selected twice": with_("many", { selected: ["X", "X"] }),
    "blank custom text": with_("free", { selected: [], custom: "   " }),
    "a label on a question without options": with_("free", { selected: ["A"] }),
    "custom text over 100,000 characters": with_("free", { selected: [], custom: long(100_001) }),
    "a NUL in custom text": with_("free", { selected: [], custom: "a\u0000b" }),
    "a missing question": ok.slice(0, 2),
    "a question answered twice": [...ok, ok[0]],
    "an unknown question": [...ok, { id: "nope", selected: [] }],
    "a label that is not a string": with_("pick", { selected: [1] }),
    "an item without selected": with_("pick", {}).map((one) => (one.id === "pick" ? { id: "pick" } : one)),
    "a blank note": with_("pick", { selected: ["A"], note: " " }),
    "a note over 4,000 characters": with_("pick", { selected: ["A"], note: long(4001) }),
    "a NUL in a note": with_("free", { selected: [], note: "a\u0000b" }),
    "a value out of its range": with_("form", { selected: [], value: { replicas: 11 } }),
    "a value without a required field": with_("form", { selected: [], value: { env: "dev" } }),
    "a value naming no field": with_("form", { selected: [], value: { replicas: 2, color: "red" } }),
    "a value choosing what is not offered": with_("form", { selected: [], value: { replicas: 2, env: "staging" } }),
    "a value that is a string": with_("form", { selected: [], value: "2" }),
    "a value on a question without a form": with_("free", { selected: [], value: { a: 1 } }),
    "custom text on a form": with_("form", { selected: [], custom: "two" }),
    "an edited call on a plain question": with_("pick", { selected: ["A"], edited: { command: "ls" } }),
  };

  test("each bad answer is refused with the host's message, and a good one is put in order as the host puts it", TIMEOUT, async () => {
    const session = sessionName("answers");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const asked = provider.ask({ questions: QUESTIONS });
    const { rpcId } = await host.pendingOf(session);
    for (const [name, answers] of Object.entries(BAD_ANSWERS)) {
      const receipt = await host.answer(rpcId, answers);
      assert.equal(receipt.reason, "bad-response", `the host refuses ${name}`);
      assert.throws(
        () => checkAnswer(QUESTIONS, { answers }),
        (error) => error.code === "BAD_ANSWER" && error.message === receipt.message,
        `${name}: the client says ${JSON.stringify(receipt.message)} too`,
      );
    }
    const shuffled = [
      { id: "free", selected: [], custom: "  keep my spaces " },
      { id: "form", selected: [], value: { env: "dev", replicas: 3 }, note: "scale down at night" },
      { id: "many", selected: ["Z", "X"], custom: "and W" },
      { id: "pick", selected: ["B"], note: "and pin the version" },
    ];
    assert.deepEqual(await host.answer(rpcId, shuffled), { accepted: true });
    const answer = await asked;
    assert.deepEqual(answer, checkAnswer(QUESTIONS, { answers: shuffled }));
    assert.deepEqual(answer.answers, [
      { id: "pick", selected: ["B"], note: "and pin the version" },
      { id: "many", selected: ["X", "Z"], custom: "and W" },
      { id: "free", selected: [], custom: "  keep my spaces " },
      { id: "form", selected: [], note: "scale down at night", value: { env: "dev", replicas: 3 } },
    ]);
    assert.equal(typeof answer.answers[3].value.replicas, "number", "an integer stays a number");
    const [entry] = await host.history(session);
    assert.deepEqual(entry.answer, answer, "the host stored the same answer the client returned");
  });

  test("a malformed answer document is BAD_ANSWER naming the property", () => {
    assert.throws(() => checkAnswer(QUESTIONS, { answers: {} }), {
      code: "BAD_ANSWER",
      message: 'invalid answer: property "answers" must be an array, got object',
    });
    assert.throws(() => checkAnswer(QUESTIONS, []), {
      code: "BAD_ANSWER",
      message: "invalid answer: the document must be an object, got array",
    });
  });
});
