// RemoteProvider against a real host: answered, dismissed, withdrawn, timed out, refused, and a
// host restarted while its question waits.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";

import { RemoteProvider, UserQuestionError } from "user-questions-client";

import { Host, PACKAGE_DIR, rejectionOf, sessionName, sleep, waitFor } from "./helpers/host.mjs";
import { FreezingProxy } from "./helpers/proxy.mjs";

const TIMEOUT = { timeout: 30_000 };
const SHIP = {
  id: "ship",
  header: "Release",
  question: "Ship 2.4 today?",
  options: [{ label: "Ship (Recommended)", description: "All checks passed" }, { label: "Wait" }],
};

describe("RemoteProvider", () => {
  const host = new Host({ name: "remote" });
  before(() => host.start());
  after(() => host.dispose());

  test("an ask waits in the inbox under its session and origin, and returns the answer given there", TIMEOUT, async () => {
    const session = sessionName("release-bot");
    const provider = new RemoteProvider(host.askerUrl, { session, origin: { client: "ts-tests", cwd: "/srv/app" } });
    assert.equal(provider.url, host.base, "the URL is kept without its token");
    const asked = provider.ask({ questions: [SHIP] });
    const frame = await host.pendingOf(session);
    assert.deepEqual(frame.payload.questions, [SHIP]);
    assert.deepEqual(frame.origin, { client: "ts-tests", cwd: "/srv/app" });
    assert.deepEqual(await host.answer(frame.rpcId, [{ id: "ship", selected: ["Wait"] }]), { accepted: true });
    assert.deepEqual(await asked, { answers: [{ id: "ship", selected: ["Wait"] }] });
    const [entry] = await host.history(session);
    assert.equal(entry.outcome, "answered");
    assert.equal(entry.rpcId, frame.rpcId);
    await waitFor(() => !provider.connected, { what: "the connection to close once nothing is asked" });
  });

  test("without a session option, the asking agent's id is the session", TIMEOUT, async () => {
    const agent = { id: sessionName("agent") };
    const provider = new RemoteProvider(host.askerUrl);
    const asked = provider.ask({ questions: [SHIP], agent });
    const frame = await host.pendingOf(agent.id);
    await host.answer(frame.rpcId, [{ id: "ship", selected: [] }]);
    assert.deepEqual(await asked, { answers: [{ id: "ship", selected: [] }] }, "a skip is an answer");
  });

  test("several asks share one connection, each getting its own answer", TIMEOUT, async () => {
    const session = sessionName("many");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const asks = ["one", "two", "three"].map((id) => provider.ask({ questions: [{ id, question: `${id}?` }] }));
    const frames = await waitFor(async () => {
      const mine = (await host.pending()).filter((one) => one.payload.sessionId === session);
      return mine.length === 3 && mine;
    });
    for (const frame of [...frames].reverse()) {
      const id = frame.payload.questions[0].id;
      await host.answer(frame.rpcId, [{ id, selected: [], custom: `answer to ${id}` }]);
    }
    const answers = await Promise.all(asks);
    assert.deepEqual(
      answers.map((answer) => answer.answers[0]),
      ["one", "two", "three"].map((id) => ({ id, selected: [], custom: `answer to ${id}` })),
    );
  });

  test("a dismissal rejects with ASK_CANCELLED", TIMEOUT, async () => {
    const session = sessionName("dismissed");
    const provider = new RemoteProvider(host.askerUrl, { session });
    // Watched from the start: the host tells the asker at once, before its reply to the dismissal.
    const asked = rejectionOf(provider.ask({ questions: [SHIP] }));
    const frame = await host.pendingOf(session);
    await host.dismiss(frame.rpcId);
    const { error } = await asked;
    assert.ok(error instanceof UserQuestionError);
    assert.equal(error.name, "UserQuestionError");
    assert.equal(error.code, "ASK_CANCELLED");
    assert.equal(error.message, "the user cancelled ask_user_question");
    assert.equal((await host.history(session))[0].outcome, "dismissed");
  });

  test("aborting the signal withdraws the question: ASK_ABORTED, recorded as withdrawn", TIMEOUT, async () => {
    const session = sessionName("aborted");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const controller = new AbortController();
    const asked = provider.ask({ questions: [SHIP], signal: controller.signal });
    const frame = await host.pendingOf(session);
    controller.abort();
    const { error } = await rejectionOf(asked);
    assert.equal(error.code, "ASK_ABORTED");
    assert.equal(error.message, "ask_user_question was aborted before the user answered");
    // The rejection comes once the host recorded the withdrawal: it is settled already.
    const [entry] = await host.history(session);
    assert.deepEqual([entry.rpcId, entry.outcome, entry.via], [frame.rpcId, "withdrawn", "asker"]);
    assert.equal((await host.pending()).some((one) => one.rpcId === frame.rpcId), false);
    const late = await host.answer(frame.rpcId, [{ id: "ship", selected: ["Wait"] }]);
    assert.equal(late.accepted, false, "a late answer changes nothing");
  });

  test("a signal already aborted never reaches the host", TIMEOUT, async () => {
    const provider = new RemoteProvider("http://127.0.0.1:9/?token=t");
    const { error, ms } = await rejectionOf(provider.ask({ questions: [SHIP], signal: AbortSignal.abort() }));
    assert.equal(error.code, "ASK_ABORTED");
    assert.ok(ms < 100);
  });

  test("AbortSignal.timeout() ends the question as timed out: ASK_TIMED_OUT", TIMEOUT, async () => {
    const session = sessionName("timed-out");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const { error } = await rejectionOf(provider.ask({ questions: [SHIP], signal: AbortSignal.timeout(700) }));
    assert.equal(error.code, "ASK_TIMED_OUT");
    assert.equal(error.message, "ask_user_question timed out before the user answered");
    const [entry] = await host.history(session);
    assert.equal(entry.outcome, "timed-out");
  });

  test("a wrong token rejects with UNAUTHORIZED within 5 s", TIMEOUT, async () => {
    const provider = new RemoteProvider(host.urlWithToken("not-the-token"));
    const { error, ms } = await rejectionOf(provider.ask({ questions: [SHIP] }));
    assert.equal(error.name, "UserQuestionError");
    assert.equal(error.code, "UNAUTHORIZED");
    assert.match(error.message, /refused the token \(HTTP 401\)/);
    assert.ok(ms < 5_000, `rejected after ${ms} ms`);
    const { error: early } = await rejectionOf(provider.connect());
    assert.equal(early.code, "UNAUTHORIZED", "connect() says so at once too");
  });

  test("the token's role is read from the handshake: an answering one warns once, and requireAsker refuses it", TIMEOUT, async () => {
    const asker = new RemoteProvider(host.askerUrl);
    await asker.connect();
    assert.equal(asker.role, "asker");
    await asker.close();

    const warnings = [];
    const warned = (warning) => {
      if (warning.code === "UQ_ANSWERING_TOKEN") warnings.push(warning.message);
    };
    process.on("warning", warned);
    try {
      const admin = new RemoteProvider(host.pageUrl);
      await admin.connect();
      await admin.close();
      await admin.connect();
      await admin.close();
      await sleep(50); // warnings are emitted on the next tick
      assert.equal(admin.role, "admin");
      assert.equal(warnings.length, 1, "one warning per provider");
      assert.match(warnings[0], /can answer questions \(its role is admin\)/);
    } finally {
      process.off("warning", warned);
    }

    const session = sessionName("gate");
    const gate = new RemoteProvider(host.pageUrl, { requireAsker: true, session });
    const { error, ms } = await rejectionOf(gate.ask({ questions: [SHIP] }));
    assert.equal(error.code, "FORBIDDEN");
    assert.match(error.message, /could approve its own requests/);
    assert.ok(ms < 5_000, `refused after ${ms} ms`);
    const asked = (await host.pending()).filter((one) => one.payload.sessionId === session);
    assert.deepEqual(asked, [], "nothing was asked");
  });

  test("an rpcId reused for other questions is refused with the host's code; the same ask re-attaches", TIMEOUT, async () => {
    const session = sessionName("reuse");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const rpcId = `reuse-${session}`;
    const asked = provider.askWithId(rpcId, { questions: [SHIP] });
    await host.pendingOf(session);
    await host.answer(rpcId, [{ id: "ship", selected: ["Ship (Recommended)"] }]);
    const answer = await asked;
    // A process that restarted asks again with its rpcId: the answer given meanwhile, at once.
    const again = new RemoteProvider(host.askerUrl, { session });
    assert.deepEqual(await again.askWithId(rpcId, { questions: [SHIP] }), answer);
    const { error } = await rejectionOf(again.askWithId(rpcId, { questions: [{ ...SHIP, question: "Ship 2.5?" }] }));
    assert.equal(error.code, "BAD_REQUEST");
    assert.match(error.message, /already names another request/);
    assert.equal((await host.history(session)).length, 1, "one request, never a second one");
  });

  test("close() withdraws the questions still waiting and rejects their asks with ASK_ABORTED", TIMEOUT, async () => {
    const session = sessionName("closed");
    const provider = new RemoteProvider(host.askerUrl, { session });
    await provider.connect();
    assert.equal(provider.connected, true);
    const rejected = rejectionOf(provider.ask({ questions: [SHIP] }));
    await host.pendingOf(session);
    await provider.close();
    const { error } = await rejected;
    assert.equal(error.code, "ASK_ABORTED");
    assert.equal((await host.history(session))[0].outcome, "withdrawn");
    assert.equal(provider.connected, false);
  });

  test("bad options are refused with a clear code", () => {
    assert.throws(() => new RemoteProvider("ftp://host/"), { code: "BAD_REQUEST", message: /must start with http/ });
    assert.throws(() => new RemoteProvider([]), { code: "BAD_REQUEST" });
    const saved = process.env.UQ_TOKEN;
    delete process.env.UQ_TOKEN;
    try {
      assert.throws(() => new RemoteProvider("http://127.0.0.1:8765/"), { code: "BAD_TOKEN", message: /needs the host's token/ });
    } finally {
      if (saved !== undefined) process.env.UQ_TOKEN = saved;
    }
    assert.throws(() => new RemoteProvider(host.pageUrl, { session: "" }), { code: "BAD_REQUEST", message: /session/ });
    assert.throws(() => new RemoteProvider(host.pageUrl, { origin: { client: "" } }), { code: "BAD_REQUEST" });
    assert.throws(() => new RemoteProvider("https://127.0.0.1:1/?token=t", { ca: "/nonexistent/ca.pem" }), {
      code: "BAD_REQUEST",
      message: /cannot read the certificate authority file/,
    });
  });
});

describe("RemoteProvider across a host restart", () => {
  const host = new Host({ name: "restart" });
  before(() => host.start());
  after(() => host.dispose());

  test("a host killed and started again mid-question: the answer arrives, exactly once", { timeout: 60_000 }, async () => {
    const session = sessionName("restart");
    const provider = new RemoteProvider(host.askerUrl, { session });
    let settled = 0;
    const track = (promise) =>
      promise.then((value) => {
        settled += 1;
        return value;
      });
    const first = track(provider.ask({ questions: [{ id: "first", question: "Answered after the asker is back?" }] }));
    const second = track(provider.ask({ questions: [{ id: "second", question: "Answered before it is back?" }] }));
    const before = await waitFor(async () => {
      const mine = (await host.pending()).filter((one) => one.payload.sessionId === session);
      return mine.length === 2 && mine;
    });
    const rpcIdOf = (id) => before.find((one) => one.payload.questions[0].id === id).rpcId;

    await host.restart("SIGKILL"); // a crash: the questions are in the store, the socket is gone
    // Answer the second at once, while the asker may still be reconnecting.
    assert.deepEqual(await host.answer(rpcIdOf("second"), [{ id: "second", selected: [], custom: "while away" }]), {
      accepted: true,
    });
    assert.deepEqual(await second, { answers: [{ id: "second", selected: [], custom: "while away" }] });
    // The first is still pending, once: the asker re-attached, it did not ask a second time.
    await waitFor(() => provider.connected, { what: "the provider to reconnect" });
    const still = (await host.pending()).filter((one) => one.payload.sessionId === session);
    assert.deepEqual(
      still.map((one) => one.rpcId),
      [rpcIdOf("first")],
    );
    await host.answer(rpcIdOf("first"), [{ id: "first", selected: [], custom: "after" }]);
    assert.deepEqual(await first, { answers: [{ id: "first", selected: [], custom: "after" }] });
    await sleep(200);
    assert.equal(settled, 2, "each ask settled once");
    const history = await host.history(session);
    assert.deepEqual(history.map((entry) => entry.outcome).sort(), ["answered", "answered"]);
  });

  test("a question withdrawn while the host is down is withdrawn once it is back", { timeout: 60_000 }, async () => {
    const session = sessionName("owed");
    const provider = new RemoteProvider(host.askerUrl, { session });
    const controller = new AbortController();
    const asked = provider.ask({ questions: [SHIP], signal: controller.signal });
    const { rpcId } = await host.pendingOf(session);
    await host.stop("SIGKILL");
    controller.abort();
    const { error, ms } = await rejectionOf(asked);
    assert.equal(error.code, "ASK_ABORTED");
    assert.ok(ms <= 6_000, `gave up waiting for the confirmation after ${ms} ms`);
    await host.start();
    assert.equal((await host.pending()).some((one) => one.rpcId === rpcId), true, "still pending while nobody told the host");
    // The owed withdrawal goes with the provider's next connection.
    const next = provider.ask({ questions: [{ id: "next", question: "Next?" }] });
    await waitFor(async () => (await host.history(session)).some((entry) => entry.rpcId === rpcId), {
      what: "the owed withdrawal to be recorded",
    });
    assert.equal((await host.history(session)).find((entry) => entry.rpcId === rpcId).outcome, "withdrawn");
    const frame = await host.pendingOf(session);
    await host.answer(frame.rpcId, [{ id: "next", selected: [] }]);
    await next;
  });

  test("a connection that dies without closing is replaced: the answer given meanwhile arrives", { timeout: 60_000 }, async () => {
    const proxy = await new FreezingProxy(host.port).start();
    try {
      const session = sessionName("frozen");
      const provider = new RemoteProvider(proxy.url(host.askerToken), { session, pingIntervalMs: 300, pongTimeoutMs: 300 });
      const asked = provider.ask({ questions: [SHIP] });
      const { rpcId } = await host.pendingOf(session);
      assert.equal(proxy.freeze(), 1, "the provider's one connection is cut off");
      await host.answer(rpcId, [{ id: "ship", selected: ["Ship (Recommended)"] }]);
      // The answer's frame is lost in the frozen connection; the missing pong gives it away,
      // and the provider re-attaches on a new one.
      assert.deepEqual(await asked, { answers: [{ id: "ship", selected: ["Ship (Recommended)"] }] });
    } finally {
      await proxy.close();
    }
  });

  test("a host away longer than unreachableLimitMs fails the ask with HOST_UNREACHABLE; its question is withdrawn when it is back", { timeout: 60_000 }, async () => {
    const session = sessionName("unreachable");
    const provider = new RemoteProvider(host.askerUrl, { session, unreachableLimitMs: 1_000 });
    const asked = rejectionOf(provider.ask({ questions: [SHIP] }));
    const { rpcId } = await host.pendingOf(session);
    await host.stop("SIGKILL");
    const { error, ms } = await asked;
    assert.equal(error.code, "HOST_UNREACHABLE");
    assert.match(error.message, /has been unreachable for 1 s/);
    assert.ok(ms < 10_000, `gave up after ${ms} ms`);
    await host.start();
    const next = provider.ask({ questions: [{ id: "next", question: "Next?" }] });
    await waitFor(async () => (await host.history(session)).some((entry) => entry.rpcId === rpcId), {
      what: "the abandoned question to be withdrawn",
    });
    assert.equal((await host.history(session)).find((entry) => entry.rpcId === rpcId).outcome, "withdrawn");
    const frame = await host.pendingOf(session);
    await host.answer(frame.rpcId, [{ id: "next", selected: [] }]);
    await next;
  });

  test("a program whose host is down exits once it closed its provider: nothing is left running", { timeout: 60_000 }, async () => {
    await host.stop("SIGKILL");
    try {
      const program = `
        import { RemoteProvider } from "user-questions-client";
        const provider = new RemoteProvider(${JSON.stringify(host.askerUrl)}, { session: "leaving" });
        const asked = provider.ask({ questions: [{ id: "q", question: "Anyone?" }] }).catch((error) => error.code);
        setTimeout(async () => { await provider.close(); console.log(await asked); }, 500);
      `;
      const child = spawn(process.execPath, ["--input-type=module", "-e", program], { cwd: PACKAGE_DIR });
      let stdout = "";
      child.stdout.on("data", (text) => (stdout += text));
      const started = Date.now();
      const code = await new Promise((resolve) => child.once("exit", resolve));
      assert.equal(code, 0);
      assert.equal(stdout.trim(), "ASK_ABORTED");
      assert.ok(Date.now() - started < 10_000, `exited after ${Date.now() - started} ms`);
    } finally {
      await host.start();
    }
  });
});

describe("RemoteProvider and a host whose store cannot take the ask for now", () => {
  for (const code of ["STORE_FULL", "STORE_BUSY", "STORE_UNAVAILABLE"]) {
    test(`${code} is waited out: the ask is sent again and answered`, TIMEOUT, async () => {
      const { WebSocketServer } = await import("ws");
      const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
      await new Promise((resolve) => server.once("listening", resolve));
      let asks = 0;
      server.on("connection", (ws) => {
        ws.on("message", (data) => {
          const frame = JSON.parse(String(data));
          if (frame.type !== "ask") return;
          asks += 1;
          if (asks === 1) {
            const payload = { type: "ask/error", code, message: "the host's store cannot take it now" };
            ws.send(JSON.stringify({ rpcId: frame.rpcId, payload }));
            return;
          }
          const answer = { answers: [{ id: "ship", selected: ["Wait"] }] };
          ws.send(JSON.stringify({ rpcId: frame.rpcId, payload: { type: "ask/pending" } }));
          ws.send(JSON.stringify({ rpcId: frame.rpcId, payload: { type: "ask/settled", outcome: "answered", answer } }));
        });
      });
      try {
        const provider = new RemoteProvider(`http://127.0.0.1:${server.address().port}/?token=test-token`);
        assert.deepEqual(await provider.ask({ questions: [SHIP] }), { answers: [{ id: "ship", selected: ["Wait"] }] });
        assert.equal(asks, 2, "refused once, asked again once");
        await provider.close();
      } finally {
        for (const client of server.clients) client.terminate();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }
});

describe("RemoteProvider and a token beyond its rate", () => {
  test("RATE_LIMITED is waited out for its retryAfter, on the same connection, and the ask is answered", TIMEOUT, async () => {
    const { WebSocketServer } = await import("ws");
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.once("listening", resolve));
    const asked = [];
    let connections = 0;
    server.on("connection", (ws) => {
      connections += 1;
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type !== "ask") return;
        asked.push(Date.now());
        if (asked.length === 1) {
          const payload = { type: "ask/error", code: "RATE_LIMITED", message: "too fast", retryAfter: 0.3 };
          ws.send(JSON.stringify({ rpcId: frame.rpcId, payload }));
          return;
        }
        const answer = { answers: [{ id: "ship", selected: ["Wait"] }] };
        ws.send(JSON.stringify({ rpcId: frame.rpcId, payload: { type: "ask/settled", outcome: "answered", answer } }));
      });
    });
    try {
      const provider = new RemoteProvider(`http://127.0.0.1:${server.address().port}/?token=test-token`);
      assert.deepEqual(await provider.ask({ questions: [SHIP] }), { answers: [{ id: "ship", selected: ["Wait"] }] });
      assert.equal(asked.length, 2, "refused once, asked again once");
      assert.ok(asked[1] - asked[0] >= 300, `asked again after ${asked[1] - asked[0]} ms, not its retryAfter`);
      assert.equal(connections, 1, "a rate is no outage: the connection stays");
      await provider.close();
    } finally {
      for (const client of server.clients) client.terminate();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("an ask waiting out its rate ends with its signal, never with an answer", TIMEOUT, async () => {
    const { WebSocketServer } = await import("ws");
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.once("listening", resolve));
    const kinds = [];
    server.on("connection", (ws) => {
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data));
        kinds.push(frame.type);
        const payload =
          frame.type === "ask"
            ? { type: "ask/error", code: "RATE_LIMITED", message: "too fast", retryAfter: 30 }
            : { type: "ask/error", code: "NOT_FOUND", message: "never stored" };
        ws.send(JSON.stringify({ rpcId: frame.rpcId, payload }));
      });
    });
    try {
      const provider = new RemoteProvider(`http://127.0.0.1:${server.address().port}/?token=test-token`);
      const { error } = await rejectionOf(provider.ask({ questions: [SHIP], signal: AbortSignal.timeout(300) }));
      assert.ok(error instanceof UserQuestionError);
      assert.equal(error.code, "ASK_TIMED_OUT");
      assert.deepEqual(kinds.filter((kind) => kind === "ask"), ["ask"], "not asked again before its retryAfter");
      await provider.close();
    } finally {
      for (const client of server.clients) client.terminate();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
