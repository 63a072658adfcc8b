// The dsh answerer (`askApproval` of `user-questions-client/dsh`) against a host that misbehaves
// one way per case: the repository's stand-in host (tests/standin.py), run from its .venv. Only the
// honest control is ever `allowed-once`; every other case ends `rejected` (the stand-in's person
// denied), `cancelled` (the request's own deadline) or `unavailable`, within the documented
// deadline, timed here: the whole handshake within `connectTimeoutMs`, a host of no use within
// `unreachableLimitMs` plus a pause and an attempt, the request's signal plus the withdrawal.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";

import { askApproval, RemoteProvider } from "user-questions-client/dsh";

import { findUq } from "./helpers/host.mjs";

const CONNECT_MS = 300;
const LIMIT_MS = 800;
const DECIDE_MS = 2_000; // outlasts the unreachable limit's failures, which end first
const MARGIN_MS = 700;
const AT_ONCE = 2 * CONNECT_MS + MARGIN_MS;
const UNREACHABLE = LIMIT_MS + 2_000 + 2 * CONNECT_MS + MARGIN_MS; // the limit, a pause, an attempt
const UNDECIDED = DECIDE_MS + CONNECT_MS + MARGIN_MS;

/** What each case ends with, and how long it may take. */
const EXPECTED = {
  allow: ["allowed-once", AT_ONCE],
  deny: ["rejected", AT_ONCE],
  pending: ["cancelled", UNDECIDED],
  "ws-other-rpc": ["unavailable", UNREACHABLE],
  "ws-no-rpc": ["unavailable", UNREACHABLE],
  "ws-ask-error-type": ["unavailable", AT_ONCE],
  "ws-other-question": ["unavailable", AT_ONCE],
  "ws-no-item-id": ["unavailable", AT_ONCE],
  "ws-two-items": ["unavailable", AT_ONCE],
  "ws-always-not-offered": ["unavailable", AT_ONCE],
  "ws-allow-and-text": ["unavailable", AT_ONCE],
  "ws-unreadable-answered": ["unavailable", AT_ONCE],
  "redirect-same": ["unavailable", AT_ONCE],
  "redirect-other": ["unavailable", AT_ONCE],
  "error-500-empty": ["unavailable", AT_ONCE],
  "error-503-body": ["unavailable", AT_ONCE],
  garbage: ["unavailable", AT_ONCE],
  drip: ["unavailable", AT_ONCE],
  silent: ["unavailable", AT_ONCE],
  "two-roles": ["unavailable", AT_ONCE],
  "unknown-role": ["unavailable", AT_ONCE],
  "silent-after": ["unavailable", UNREACHABLE],
  "store-unavailable": ["unavailable", UNREACHABLE],
  oversize: ["unavailable", UNREACHABLE],
  ...Object.fromEntries(
    [1000, 1001, 1006, 1009, 1011, 1013, 4000].map((code) => [`close-${code}`, ["unavailable", UNREACHABLE]]),
  ),
  "close-4401": ["unavailable", AT_ONCE],
  "close-4403": ["unavailable", AT_ONCE],
};

/** The stand-in host: `python -m tests.standin` from the repository's .venv, serving until its
 * stdin closes. */
class StandIn {
  async start() {
    const repository = dirname(dirname(dirname(findUq())));
    this.process = spawn(join(repository, ".venv", "bin", "python"), ["-m", "tests.standin"], {
      cwd: repository,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const [line] = await new Promise((done, fail) => {
      const reader = createInterface({ input: this.process.stdout });
      reader.once("line", (first) => done([first]));
      this.process.once("exit", (code) => fail(new Error(`the stand-in exited with ${code}`)));
    });
    const { http, https, ca } = JSON.parse(line);
    this.ports = { http, https };
    this.ca = readFileSync(ca);
    return this;
  }

  url(kase, scheme = "http") {
    return `${scheme}://127.0.0.1:${this.ports[scheme]}/${kase}/?token=standin-token`;
  }

  /** What a case saw: its handshakes' times, its requests, whether each carried a token. */
  seen(kase) {
    return new Promise((resolve, reject) => {
      const asked = httpRequest(`http://127.0.0.1:${this.ports.http}/_stats/${kase}`, (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      });
      asked.on("error", reject);
      asked.end();
    });
  }

  stop() {
    this.process.stdin.end();
  }
}

/** One approval through the dsh answerer, as the harness asks it: its outcome, its time, and the
 * handshakes the case saw meanwhile (its provider closed afterwards). */
async function decide(standIn, url, kase, options = {}) {
  const before = (await standIn.seen(kase)).handshakes.length;
  const provider = new RemoteProvider(url, {
    requireAsker: true,
    connectTimeoutMs: CONNECT_MS,
    unreachableLimitMs: LIMIT_MS,
    ...options,
  });
  const started = Date.now();
  const outcome = await askApproval(provider, {
    toolName: "Bash",
    reason: "run the tests",
    callId: "call-1",
    signal: AbortSignal.timeout(DECIDE_MS),
  });
  const took = Date.now() - started;
  const handshakes = (await standIn.seen(kase)).handshakes.length - before;
  await provider.close();
  return { outcome, took, handshakes };
}

describe("the dsh answerer against a misbehaving host", () => {
  const standIn = new StandIn();
  before(() => standIn.start());
  after(() => standIn.stop());

  for (const [kase, [expected, bound]] of Object.entries(EXPECTED)) {
    test(`${kase}: ${expected} within ${bound} ms`, { timeout: 30_000 }, async () => {
      const { outcome, took, handshakes } = await decide(standIn, standIn.url(kase), kase);
      assert.equal(outcome, expected);
      assert.ok(took < bound, `took ${took} ms, more than ${bound} ms`);
      // A pause after every failed or dropped connection: a handful, never a storm.
      assert.ok(handshakes <= 8, `${handshakes} handshakes`);
    });
  }

  for (const kase of ["redirect-same", "redirect-other"]) {
    test(`${kase} over https is refused, naming the Location, and nothing reaches it`, { timeout: 30_000 }, async () => {
      const provider = new RemoteProvider(standIn.url(kase, "https"), {
        requireAsker: true,
        connectTimeoutMs: CONNECT_MS,
        ca: standIn.ca,
      });
      await assert.rejects(provider.connect(), (error) => {
        assert.equal(error.code, "HOST_UNREACHABLE");
        assert.match(error.message, /redirected the asker connection \(HTTP 302\) to wss:\/\/.+\/redirect-target\/ws\/ask/);
        return true;
      });
      const { outcome } = await decide(standIn, standIn.url(kase, "https"), kase, { ca: standIn.ca });
      assert.equal(outcome, "unavailable");
      assert.deepEqual((await standIn.seen("redirect-target")).tokens, []);
      assert.deepEqual((await standIn.seen("_other")).tokens, []);
    });
  }
});
