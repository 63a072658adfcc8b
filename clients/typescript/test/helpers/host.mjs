// A real `uq serve` for the tests: started from the repository's .venv on a free loopback port,
// with its store in a temp folder; restartable on the same port and store; stopped (and its folder
// removed) at the end.
//
// The host prints its page URL, with the admin token, on its first line: the tests answer with
// that token through POST /api/respond. A host that also prints `export UQ_URL=<url>` (an asker's
// token) has its askers use that URL; else they use the first one.

import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The `uq` command: $UQ_BIN, else `.venv/bin/uq` in the first folder above this package that has one. */
export function findUq() {
  if (process.env.UQ_BIN) {
    if (!existsSync(process.env.UQ_BIN)) throw new Error(`UQ_BIN is ${process.env.UQ_BIN}, which does not exist`);
    return process.env.UQ_BIN;
  }
  for (let dir = PACKAGE_DIR; ; dir = dirname(dir)) {
    const candidate = join(dir, ".venv", "bin", "uq");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new Error(
    "cannot find the repository's .venv/bin/uq above " +
      PACKAGE_DIR +
      ": create it (python3.11 -m venv .venv && .venv/bin/pip install -e '.[web]') or set UQ_BIN",
  );
}

const children = new Set();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** A child environment without the caller's UQ_* settings, so the host uses only its flags. */
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("UQ_")) delete env[key];
  return env;
}

export class Host {
  /** @param {{ name?: string, args?: string[], ca?: string | Buffer }} [options] `args` are more
   * flags for `uq serve` (TLS, say); `ca` is the authority its certificate is checked against. */
  constructor({ name = "host", args = [], ca } = {}) {
    this.args = args;
    this.ca = ca;
    this.dir = mkdtempSync(join(tmpdir(), `uq-ts-${name}-`));
    this.db = join(this.dir, "uq.db");
    this.port = 0;
    this.process = null;
    this.stderr = "";
  }

  /** Start `uq serve` (on the port it had, after a restart) and wait until it serves. */
  async start({ timeoutMs = 30_000 } = {}) {
    const args = ["serve", "--host", "127.0.0.1", "--port", String(this.port), "--store", this.db];
    if (this.token) args.push("--token", this.token);
    args.push(...this.args);
    const child = spawn(findUq(), args, { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    this.process = child;
    this.stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text) => {
      this.stderr = (this.stderr + text).slice(-20_000);
    });
    const lines = [];
    const exited = new Promise((done) => {
      child.once("exit", (code, signal) => done({ code, signal }));
      child.once("error", (error) => done({ error: error.message }));
    });
    child.once("exit", () => children.delete(child));
    const reader = createInterface({ input: child.stdout });
    reader.on("line", (line) => lines.push(line));
    const deadline = Date.now() + timeoutMs;
    while (lines.length === 0) {
      if (Date.now() > deadline) throw new Error(`uq serve printed nothing within ${timeoutMs} ms: ${this.stderr}`);
      const stopped = await Promise.race([exited, sleep(25).then(() => null)]);
      if (stopped) throw new Error(`uq serve exited (${JSON.stringify(stopped)}): ${this.stderr}`);
    }
    const page = new URL(lines[0].trim());
    this.port = Number(page.port);
    this.token = page.searchParams.get("token");
    this.base = `${page.protocol}//${page.host}/`;
    this.pageUrl = page.toString();
    // Serving: /healthz answers. By then the host has printed everything it prints at start-up.
    while (!(await this.#healthy())) {
      if (Date.now() > deadline) throw new Error(`uq serve did not serve within ${timeoutMs} ms: ${this.stderr}`);
      const stopped = await Promise.race([exited, sleep(50).then(() => null)]);
      if (stopped) throw new Error(`uq serve exited (${JSON.stringify(stopped)}): ${this.stderr}`);
    }
    const exported = lines.slice(1).map((line) => /^export UQ_URL=(.+)$/.exec(line.trim())).find(Boolean);
    this.askerUrl = exported ? exported[1].replace(/^(['"])(.*)\1$/, "$2") : this.pageUrl;
    /** The token askers present: the asker URL's. */
    this.askerToken = new URL(this.askerUrl).searchParams.get("token") ?? this.token;
    return this;
  }

  async #healthy() {
    try {
      return (await this.#request("healthz", { auth: false, timeoutMs: 2_000 })).status === 200;
    } catch {
      return false;
    }
  }

  /** One HTTP request to the host (over https with its authority, when it has one). */
  #request(path, { method = "GET", body, auth = true, timeoutMs = 10_000 } = {}) {
    const url = new URL(path, this.base);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers = {};
    if (auth) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return new Promise((resolve, reject) => {
      const outgoing = send(url, { method, headers, timeout: timeoutMs, ...(this.ca ? { ca: this.ca } : {}) }, (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      });
      outgoing.on("timeout", () => outgoing.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      outgoing.on("error", reject);
      outgoing.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** Stop the host: SIGTERM (or SIGKILL, a crash), waiting until it has exited. */
  async stop(signal = "SIGTERM") {
    const child = this.process;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once("exit", done));
    child.kill(signal);
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killer);
    this.process = null;
  }

  /** Stop the host and start it again on the same port, store and token. */
  async restart(signal = "SIGKILL") {
    await this.stop(signal);
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.start();
      } catch (error) {
        if (attempt >= 5) throw error; // the port may take a moment to be free again
        await sleep(200);
      }
    }
  }

  /** Stop the host and remove its folder. */
  async dispose() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A URL of the host with another token (a wrong one, say). */
  urlWithToken(token) {
    return `${this.base}?token=${encodeURIComponent(token)}`;
  }

  async api(path, { method = "GET", body } = {}) {
    const response = await this.#request(path, { method, body });
    const data = JSON.parse(response.text);
    if (response.status !== 200) throw new Error(`${method} ${path}: HTTP ${response.status} ${response.text}`);
    return data;
  }

  /** The pending requests (question/requested frames), oldest first. */
  async pending() {
    return (await this.api("api/pending")).pending;
  }

  /** The pending request of `session` (waiting for it to appear), as a question/requested frame. */
  async pendingOf(session, { timeoutMs = 10_000 } = {}) {
    return await waitFor(async () => (await this.pending()).find((one) => one.payload.sessionId === session), {
      timeoutMs,
      what: `a pending request of session ${session}`,
    });
  }

  /** Answer `rpcId` as a person would through the HTTP API: the receipt. */
  async answer(rpcId, answers) {
    return await this.api("api/respond", {
      method: "POST",
      body: { type: "client-response", rpcId, result: { ok: true, value: { answer: { answers } } } },
    });
  }

  /** Dismiss `rpcId`: the asker gets ASK_CANCELLED. */
  async dismiss(rpcId) {
    return await this.api("api/respond", {
      method: "POST",
      body: { type: "client-response", rpcId, result: { ok: false, error: { code: "cancelled" } } },
    });
  }

  /** The history entries of `session`, newest settled first. */
  async history(session) {
    return (await this.api(`api/history?session=${encodeURIComponent(session)}`)).items;
  }
}

export function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

/** Poll `probe` until it returns something truthy (that is returned), or fail after `timeoutMs`. */
export async function waitFor(probe, { timeoutMs = 10_000, intervalMs = 50, what = "the condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** A session name no other test uses, so a test finds its own card. */
export function sessionName(prefix) {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

/** The rejection of `promise` (failing if it fulfils), and how long it took to come. */
export async function rejectionOf(promise) {
  const started = Date.now();
  let value;
  try {
    value = await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}
