/**
 * `RemoteProvider`: ask the people of a user-questions host (`uq serve`) from Node.
 *
 * It speaks the host's asker protocol over one WebSocket (`/ws/ask`), shared by every ask of the
 * provider. Each ask has an rpcId generated here, so it survives anything that cuts the
 * connection: after a dropped connection or a host restart the provider reconnects with backoff
 * (0.05 s doubling to 2 s, jittered) and sends every unsettled `ask` again. The host's submit is
 * idempotent, so that re-attaches to the same stored request, and an answer given meanwhile
 * arrives at once, exactly once.
 *
 * It fails closed, in bounded time (docs/security.md, "Fail closed"): a connection attempt has
 * `connectTimeoutMs` for its whole handshake, however slowly the host answers, and a frame sent
 * must be answered within as long, or the connection is dropped as a silent one; every failed
 * attempt and every dropped connection is followed by the backoff's pause (a handshake that
 * succeeds does not reset it: only a connection that was useful and stayed open
 * `STEADY_AFTER_MS` does); the unreachable clock counts from the last useful exchange; a redirect
 * is never followed but refused, naming its `Location`; close code 4401 stops with
 * `UNAUTHORIZED`, 4403 with `FORBIDDEN`. Aborting an ask's signal sends `withdraw` (the request leaves
 * every page, recorded as `withdrawn`, or `timed-out` for `AbortSignal.timeout()`), waits up to
 * 5 s for the host to confirm it, and rejects with `ASK_ABORTED` (`ASK_TIMED_OUT`); a withdrawal
 * that could not be delivered is sent again on the next connection.
 *
 * The connection opens at the first ask and closes when the last ask ends, so a program that
 * has nothing left to ask can exit; `connect()` opens it at once and keeps it open until
 * `close()`.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, extname } from "node:path";
import { rootCertificates } from "node:tls";
import WebSocket from "ws";

import { checkAnswer, checkRequest, readQuestions } from "./checks.js";
import {
  abortError,
  CANCELLED_MESSAGE,
  ErrorCode,
  isTimeout,
  TIMED_OUT_MESSAGE,
  ABORTED_MESSAGE,
  UserQuestionError,
} from "./errors.js";
import type { AskFrame, AskerReply, Origin, Outcome, WithdrawReason } from "./frames.js";
import { MAX_FRAME_BYTES, MAX_ID_LENGTH, MAX_ORIGIN_CLIENT, MAX_ORIGIN_CWD, MAX_REPLY_BYTES } from "./limits.js";
import { characters, textProblem } from "./text.js";
import type { AskUserQuestionAnswer, AskUserQuestionItem } from "./wire.generated.js";

/** The asker endpoint, relative to the host's base URL. */
export const ASK_PATH = "ws/ask";
/** Milliseconds without a connection after which waiting asks fail with `HOST_UNREACHABLE`. */
export const UNREACHABLE_LIMIT_MS = 300_000;
/** Milliseconds one connection attempt (TCP, TLS and the WebSocket handshake) may take. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Milliseconds a withdrawn ask waits for the host to confirm its withdrawal (or the connect
 * timeout, when that is less: a confirmation is an answer like any other). */
export const WITHDRAW_TIMEOUT_MS = 5_000;
/** Milliseconds before the first reconnection attempt; doubled after each failure. */
export const BACKOFF_FIRST_MS = 50;
/** The longest pause between reconnection attempts. */
export const BACKOFF_MAX_MS = 2_000;
/** Milliseconds a useful connection must stay open for its end to start a new outage (the pause
 * back at `BACKOFF_FIRST_MS`, the unreachable clock from its end) rather than prolong the current
 * one. */
export const STEADY_AFTER_MS = 5_000;
/** The refusals of a host whose store cannot take the ask for now: asked again later. */
const WAIT_OUT: ReadonlySet<string> = new Set([
  ErrorCode.STORE_UNAVAILABLE,
  ErrorCode.STORE_FULL,
  ErrorCode.STORE_BUSY,
]);
/** The shortest wait before asking again after `RATE_LIMITED`, milliseconds. */
export const RATE_PAUSE_MIN_MS = 50;
/** The longest wait before asking again after `RATE_LIMITED`, milliseconds. */
export const RATE_PAUSE_MAX_MS = 60_000;
/** Milliseconds between keepalive pings on an open connection. */
export const PING_INTERVAL_MS = 20_000;
/** Milliseconds a ping may wait for its pong before the connection is replaced. */
export const PONG_TIMEOUT_MS = 10_000;

/** A request for a human answer: the seed's `AskUserQuestionRequest`, structurally. */
export interface AskUserQuestionRequest {
  /** The questions, shown as one card; each answer item echoes its question's id. */
  questions: AskUserQuestionItem[];
  /** The calling agent, when there is one: its id names the request's session unless the
   * provider was given a `session`. */
  agent?: { readonly id: string };
  /** Aborting it withdraws the question; `AbortSignal.timeout(ms)` bounds the wait. */
  signal?: AbortSignal;
}

/** A surface that asks a person and returns the answer: the seed's `UserQuestionProvider`. */
export interface UserQuestionProvider {
  ask(request: AskUserQuestionRequest): Promise<AskUserQuestionAnswer>;
}

/** Options of {@link RemoteProvider}. */
export interface RemoteProviderOptions {
  /** The host's token; else the URL's `?token=`, else `$UQ_TOKEN`. */
  token?: string;
  /** The request's `sessionId` on the host (1 to 256 characters): who asks. Default: the asking
   * agent's id, else `<program>@<hostname>`. */
  session?: string;
  /** Where the asks come from, shown with their questions. */
  origin?: Origin;
  /** The certificate authority of an `https://` host's certificate, trusted besides the system's
   * (and `$SSL_CERT_FILE`'s): a PEM file's path, or PEM text or bytes; or several. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Milliseconds without a useful exchange with any host (failed attempts, connections that
   * drop, go silent or cannot store the ask) before waiting asks fail with `HOST_UNREACHABLE`
   * (default 300,000); `null` waits for the host for ever. */
  unreachableLimitMs?: number | null;
  /** Milliseconds one connection attempt may take, its whole handshake, and a frame sent may wait
   * for the host's first answer (default 10,000). */
  connectTimeoutMs?: number;
  /** Refuse a token that can answer (`FORBIDDEN`, before anything is asked), and a host that
   * does not say a token's role: for a permission gate, which an agent holding the token must
   * never be able to approve. Default `false`: such a token is used, with one warning. */
  requireAsker?: boolean;
  /** Milliseconds between keepalive pings on an open connection (default 20,000). */
  pingIntervalMs?: number;
  /** Milliseconds a ping may wait for its pong before the connection is dropped and replaced,
   * as a connection that died without closing is (default 10,000). */
  pongTimeoutMs?: number;
}

type Reply =
  | { readonly kind: "settled"; readonly outcome: Outcome | string; readonly answer?: unknown }
  | { readonly kind: "failed"; readonly code: string; readonly message: string };

/** One request in flight: an ask, or the withdrawal of one. */
interface Call {
  readonly rpcId: string;
  /** The `ask` frame, sent on every new connection until the call completes. */
  readonly frame: string;
  /** Set once the request is being withdrawn: `withdraw` follows the `ask`. */
  withdrawal?: WithdrawReason;
  /** The connection the `ask` was last sent on. */
  askedOn: number;
  /** The connection the `withdraw` was last sent on. */
  withdrawnOn: number;
  /** Called with the first reply; absent for a withdrawal nobody waits for (it is owed). */
  settle?: ((reply: Reply) => void) | undefined;
  /** Rejects the ask waiting for this call, if one still does. */
  abandon?: ((error: UserQuestionError) => void) | undefined;
}

interface Host {
  /** The base URL, without its query (so never the token). */
  readonly url: string;
  readonly wsUrl: string;
  readonly token: string;
  readonly tls: boolean;
}

/** The handshake's header naming the token's role. */
const ROLE_HEADER = "x-uq-role";
/** The role of a token that can ask but never answer. */
const ASKER = "asker";
/** The roles a host gives tokens; anything else in the header says nothing. */
const ROLES: ReadonlySet<string> = new Set([ASKER, "person", "admin"]);
const ASKER_HINT =
  "give agents an asker's token, which can ask but never answer: the `export UQ_URL=...` " +
  "line `uq serve` prints, or one made with `uq token add NAME --role asker`";

class Refusal {
  constructor(
    readonly code: string,
    readonly message: string,
  ) {}
}

const CERTIFICATE_ERRORS = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

const SCHEMES: Record<string, string> = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" };

/**
 * A `UserQuestionProvider` that asks through a host, for agents in a Node process.
 *
 * @example
 *   const provider = new RemoteProvider(process.env.UQ_URL!, { session: "release-bot" });
 *   const answer = await provider.ask({ questions: [{ id: "ship", question: "Ship it?",
 *     options: [{ label: "Ship" }, { label: "Wait" }] }] });
 */
export class RemoteProvider implements UserQuestionProvider {
  /** Every host's base URL (without the token), in the order they are tried. */
  readonly urls: readonly string[];
  /** The session given in the options, if any. */
  readonly session: string | undefined;
  /** Where the asks say they come from. */
  readonly origin: Origin | undefined;
  /** The role the host gave the token on the last connection (`asker`, `person`, `admin`);
   * `undefined` before one, or from a host older than roles. */
  role: string | undefined;

  readonly #hosts: readonly Host[];
  readonly #ca: ReadonlyArray<string | Buffer> | undefined;
  readonly #limit: number | null;
  readonly #connectTimeout: number;
  readonly #pingInterval: number;
  readonly #pongTimeout: number;
  readonly #defaultSession: string;
  readonly #requireAsker: boolean;
  #warned = false;
  readonly #calls = new Map<string, Call>();
  #ws: WebSocket | null = null;
  #closed: Promise<void> = Promise.resolve();
  #generation = 0;
  #host = 0;
  #connectedHost = 0;
  #running = false;
  #held = false;
  /** The unreachable clock: since when the host has given nothing useful. */
  #downSince: number | null = null;
  /** The pause before the next attempt, once one is owed. */
  #backoff = BACKOFF_FIRST_MS;
  /** Whether an attempt failed or a connection dropped since the last pause. */
  #owePause = false;
  /** What went wrong last, for the message of `HOST_UNREACHABLE`. */
  #problem = "no connection yet";
  /** The connection this provider is closing on purpose: its end owes no pause. */
  #leaving: WebSocket | null = null;
  /** Whether the host has answered a call on the current connection. */
  #useful = false;
  /** Drops the current connection if the frame sent last is not answered in time. */
  #silence: NodeJS.Timeout | undefined;

  /**
   * @param url The host's URL as `uq serve` printed it (its `?token=` is used), or the URLs of
   *   several hosts on one database, tried in turn.
   * @throws {UserQuestionError} `BAD_REQUEST` for a URL that is not `http(s)://` or `ws(s)://`,
   *   no URL, a session or origin out of bounds, or a `ca` that cannot be read; `BAD_TOKEN` when
   *   no token is given anywhere.
   */
  constructor(url: string | readonly string[], options: RemoteProviderOptions = {}) {
    const given = typeof url === "string" ? [url] : [...url];
    if (given.length === 0) throw new UserQuestionError("RemoteProvider needs a host URL", ErrorCode.BAD_REQUEST);
    const parsed = given.map(parseHost);
    const token = options.token || parsed[0]!.token || process.env.UQ_TOKEN;
    if (!token) {
      throw new UserQuestionError(
        "RemoteProvider needs the host's token: pass { token }, use the URL `uq serve` printed " +
          "(with ?token=), or set UQ_TOKEN",
        ErrorCode.BAD_TOKEN,
      );
    }
    this.#hosts = parsed.map((host) => ({ ...host, token }));
    this.urls = this.#hosts.map((host) => host.url);
    if (options.session !== undefined) checkId("session", options.session);
    this.session = options.session;
    this.origin = options.origin === undefined ? undefined : readOrigin(options.origin);
    this.#ca = this.#hosts.some((host) => host.tls) ? trustedAuthorities(options.ca) : undefined;
    this.#limit =
      options.unreachableLimitMs === null
        ? null
        : positive("unreachableLimitMs", options.unreachableLimitMs, UNREACHABLE_LIMIT_MS);
    this.#connectTimeout = positive("connectTimeoutMs", options.connectTimeoutMs, CONNECT_TIMEOUT_MS);
    this.#pingInterval = positive("pingIntervalMs", options.pingIntervalMs, PING_INTERVAL_MS);
    this.#pongTimeout = positive("pongTimeoutMs", options.pongTimeoutMs, PONG_TIMEOUT_MS);
    this.#defaultSession = defaultSession();
    this.#requireAsker = options.requireAsker === true;
  }

  /** The host connected to last (at first, the first one). */
  get url(): string {
    return this.urls[this.#connectedHost]!;
  }

  /** Whether a connection to a host is open now. */
  get connected(): boolean {
    return this.#ws !== null && this.#ws.readyState === WebSocket.OPEN;
  }

  /**
   * Ask through the host under a new rpcId and wait for the answer.
   *
   * @returns the answer, checked against the questions: one item per question, in question order.
   * @throws {UserQuestionError} `ASK_CANCELLED` (a person dismissed it), `ASK_ABORTED` /
   *   `ASK_TIMED_OUT` (the signal aborted: the question was withdrawn), `UNAUTHORIZED` (the host
   *   refused the token), `HOST_UNREACHABLE`, `BAD_ANSWER`, a request check's code
   *   (`EMPTY_QUESTIONS`, `BAD_QUESTION`, `LIMIT_EXCEEDED`, ...), or the code of a request the
   *   host refused.
   */
  ask(request: AskUserQuestionRequest): Promise<AskUserQuestionAnswer> {
    return this.askWithId(randomUUID(), request);
  }

  /**
   * Ask under `rpcId`: a process that restarts may re-attach to its request, and get the answer
   * given while it was away, by asking again with the same rpcId and the same questions.
   */
  async askWithId(rpcId: string, request: AskUserQuestionRequest): Promise<AskUserQuestionAnswer> {
    if (typeof request !== "object" || request === null) {
      throw new UserQuestionError("invalid request: the request must be an object", ErrorCode.BAD_REQUEST);
    }
    const signal = request.signal;
    if (signal?.aborted) throw abortError(signal);
    const questions = readQuestions(request.questions);
    checkRequest(questions);
    checkId("rpcId", rpcId);
    const earlier = this.#calls.get(rpcId);
    if (earlier !== undefined && earlier.withdrawal === undefined) {
      throw new UserQuestionError(
        `rpcId ${JSON.stringify(rpcId)} is already being asked by this provider`,
        ErrorCode.BAD_REQUEST,
      );
    }
    const sessionId = this.session ?? request.agent?.id ?? this.#defaultSession;
    checkId("session", sessionId);
    const ask: AskFrame = { type: "ask", rpcId, sessionId, questions };
    if (this.origin !== undefined) ask.origin = this.origin;
    const frame = JSON.stringify(ask);
    const bytes = Buffer.byteLength(frame);
    if (bytes > MAX_FRAME_BYTES) {
      throw new UserQuestionError(
        `the request is ${bytes} bytes as JSON; a host takes at most ${MAX_FRAME_BYTES}: ` +
          "shorten the detail or split the questions",
        ErrorCode.REQUEST_TOO_LARGE,
      );
    }
    const call: Call = { rpcId, frame, askedOn: -1, withdrawnOn: -1 };
    this.#calls.set(rpcId, call); // an owed withdrawal of the same rpcId gives way
    return await new Promise<AskUserQuestionAnswer>((resolve, reject) => {
      let finished = false;
      const finish = (outcome: () => void): void => {
        if (finished) return;
        finished = true;
        signal?.removeEventListener("abort", onAbort);
        outcome();
        this.#leaveIfIdle();
      };
      call.settle = (reply) => {
        this.#forget(call);
        if (reply.kind === "failed" && reply.code === ErrorCode.HOST_UNREACHABLE) {
          this.#owe(call, "cancelled"); // if the host comes back, take the question down
        }
        finish(() => {
          try {
            resolve(answerOf(questions, reply));
          } catch (error) {
            reject(error);
          }
        });
      };
      const onAbort = (): void => {
        const error = abortError(signal);
        const reason: WithdrawReason = isTimeout(signal?.reason) ? "timed-out" : "aborted";
        this.#withdraw(call, reason, () => finish(() => reject(error)));
      };
      call.abandon = (error) => finish(() => reject(error));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#send(call);
      this.#run();
    });
  }

  /**
   * Open the connection now, trying each host once, rather than at the first ask: a caller
   * learns at once that no host answers or that the token is refused. With `keepOpen` (the
   * default) the connection stays open between asks until {@link close}; without it, it closes
   * when the asks that follow have ended.
   *
   * @throws {UserQuestionError} `HOST_UNREACHABLE` when no host answered within the connect
   *   timeout, `UNAUTHORIZED` (or the host's own code) when the host refused the connection.
   */
  async connect({ keepOpen = true }: { keepOpen?: boolean } = {}): Promise<void> {
    if (this.connected) {
      if (keepOpen) this.#held = true;
      return;
    }
    let problem: unknown;
    for (let tried = 0; tried < this.#hosts.length; tried += 1) {
      const outcome = await this.#attempt();
      if (outcome instanceof WebSocket) {
        if (this.#ws !== outcome) this.#adopt(outcome);
        if (keepOpen) this.#held = true;
        else setTimeout(() => this.#leaveIfIdle(), 0); // unless an ask follows at once
        return;
      }
      if (outcome instanceof Refusal) throw new UserQuestionError(outcome.message, outcome.code);
      problem = outcome;
    }
    throw new UserQuestionError(
      `the host at ${this.urls.join(" or ")} did not answer; is \`uq serve\` running? (${describe(problem)})`,
      ErrorCode.HOST_UNREACHABLE,
    );
  }

  /**
   * Withdraw every ask still waiting (each rejects with `ASK_ABORTED`, and its question leaves the
   * pages as `withdrawn`), deliver the withdrawals (waiting at most 5 s for the host to confirm
   * them), and close the connection. The provider may ask again afterwards.
   */
  async close(): Promise<void> {
    this.#held = false;
    const confirmations: Promise<void>[] = [];
    for (const call of [...this.#calls.values()]) {
      if (call.withdrawal !== undefined && call.settle !== undefined) {
        confirmations.push(this.#confirmation(call));
        continue;
      }
      confirmations.push(
        new Promise<void>((done) => {
          if (call.withdrawal !== undefined) {
            this.#withdraw(call, call.withdrawal, done); // an owed withdrawal: deliver it now
          } else {
            const abandon = call.abandon;
            this.#withdraw(call, "cancelled", () => {
              abandon?.(new UserQuestionError("the provider was closed before the user answered", ErrorCode.ASK_ABORTED));
              done();
            });
          }
        }),
      );
    }
    if (confirmations.length > 0) this.#run();
    await Promise.all(confirmations);
    const ws = this.#ws;
    if (ws !== null) {
      this.#leave(ws);
      await this.#closed;
    }
    this.#downSince = null;
    this.#owePause = false;
  }

  // -- asks and withdrawals -------------------------------------------------------------------

  /** Turn `call` into its withdrawal, sent now if connected and on every reconnection; `done`
   * runs once the host confirmed it, or after the withdrawal's window (it is then owed). */
  #withdraw(call: Call, reason: WithdrawReason, done: () => void): void {
    call.withdrawal = reason;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(() => {
      if (this.#calls.get(call.rpcId) === call) call.settle = undefined; // owed to the next connection
      finish();
    }, this.#withdrawWindow());
    call.settle = () => {
      this.#forget(call);
      finish();
    };
    this.#send(call);
    this.#run();
  }

  /** How long a withdrawal's confirmation is waited for: not past the connect timeout, and never
   * past `WITHDRAW_TIMEOUT_MS`. */
  #withdrawWindow(): number {
    return Math.min(WITHDRAW_TIMEOUT_MS, this.#connectTimeout);
  }

  /** Resolves once an in-flight withdrawal completes (or gives up waiting). */
  #confirmation(call: Call): Promise<void> {
    return new Promise((done) => {
      const settle = call.settle;
      const timer = setTimeout(done, this.#withdrawWindow());
      call.settle = (reply) => {
        clearTimeout(timer);
        settle?.(reply);
        done();
      };
    });
  }

  /** Keep a withdrawal of `call`'s request for the next connection, nobody waiting for it. */
  #owe(call: Call, reason: WithdrawReason): void {
    if (this.#calls.has(call.rpcId)) return;
    this.#calls.set(call.rpcId, {
      rpcId: call.rpcId,
      frame: call.frame,
      withdrawal: reason,
      askedOn: call.askedOn,
      withdrawnOn: -1,
    });
  }

  #forget(call: Call): void {
    if (this.#calls.get(call.rpcId) === call) this.#calls.delete(call.rpcId);
    if (this.#calls.size === 0) this.#downSince = null; // the clock runs only while asks wait
  }

  /** Whether anybody waits for a reply: then the provider stays connected. */
  #wanted(): boolean {
    for (const call of this.#calls.values()) if (call.settle !== undefined) return true;
    return false;
  }

  #leaveIfIdle(): void {
    if (this.#held || this.#wanted() || this.#ws === null) return;
    this.#leave(this.#ws);
  }

  /** Close `ws` on purpose: nothing failed, so its end owes no pause. */
  #leave(ws: WebSocket): void {
    this.#leaving = ws;
    ws.close(1000);
  }

  /** Send `call` on the open connection: its `ask` unless sent on it already, then its
   * `withdraw` (so a withdrawal never reaches a host before the request it withdraws). */
  #send(call: Call): void {
    const ws = this.#ws;
    if (ws === null || ws.readyState !== WebSocket.OPEN) return;
    if (call.settle === undefined && call.withdrawal === undefined) return;
    if (call.askedOn !== this.#generation) {
      call.askedOn = this.#generation;
      ws.send(call.frame);
      this.#expectAnswer(ws);
    }
    if (call.withdrawal !== undefined && call.withdrawnOn !== this.#generation) {
      call.withdrawnOn = this.#generation;
      ws.send(JSON.stringify({ type: "withdraw", rpcId: call.rpcId, reason: call.withdrawal }));
      this.#expectAnswer(ws);
    }
  }

  /** A frame went out on `ws`: unless one already waits, the host has `connectTimeoutMs` from
   * now to answer a call, or the connection is dropped as a silent one. */
  #expectAnswer(ws: WebSocket): void {
    if (this.#silence !== undefined) return;
    this.#silence = setTimeout(() => {
      this.#problem = `no answer within ${this.#connectTimeout / 1000} s`;
      ws.terminate();
    }, this.#connectTimeout);
  }

  /** The host answered a call on the current connection: it is useful, and owes nothing. */
  #answered(): void {
    this.#useful = true;
    clearTimeout(this.#silence);
    this.#silence = undefined;
  }

  /** Fail every waiting ask with `refusal`; withdrawals stay owed unless `withdrawals`. */
  #fail(refusal: Refusal, withdrawals: boolean): void {
    for (const call of [...this.#calls.values()]) {
      if (call.withdrawal !== undefined && !withdrawals) continue;
      const settle = call.settle;
      this.#forget(call);
      settle?.({ kind: "failed", code: refusal.code, message: refusal.message });
    }
    this.#downSince = null;
  }

  /** Seconds before the unreachable clock reaches the limit; `null` without a limit or while it
   * does not run. */
  #limitLeft(): number | null {
    if (this.#limit === null || this.#downSince === null) return null;
    return this.#downSince + this.#limit - Date.now();
  }

  // -- the connection -------------------------------------------------------------------------

  /** Keep a connection while anybody waits: connect with backoff, re-send, serve, reconnect. */
  #run(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#loop().finally(() => {
      this.#running = false;
      if (this.#wanted() && !this.connected) this.#run();
    });
  }

  async #loop(): Promise<void> {
    while (this.#wanted()) {
      if (this.#ws !== null) {
        await this.#closed;
        continue;
      }
      if (this.#owePause) {
        const left = this.#limitLeft();
        if (left !== null && left <= 0) {
          this.#fail(
            new Refusal(
              ErrorCode.HOST_UNREACHABLE,
              `the host at ${this.urls.join(" or ")} has been unreachable for ${this.#limit! / 1000} s; ` +
                `is \`uq serve\` running? (${this.#problem})`,
            ),
            false,
          );
          continue; // confirmations of withdrawals may still be waited for
        }
        const pause = this.#backoff * (0.5 + Math.random() / 2);
        await sleep(left === null ? pause : Math.min(pause, left));
        this.#backoff = Math.min(this.#backoff * 2, BACKOFF_MAX_MS);
        this.#owePause = false;
        continue;
      }
      const outcome = await this.#attempt();
      if (outcome instanceof WebSocket) {
        if (this.#ws !== outcome) this.#adopt(outcome);
        this.#leaveIfIdle(); // everybody stopped waiting while it connected
        continue;
      }
      if (outcome instanceof Refusal) {
        this.#fail(outcome, true); // retrying cannot help
        return;
      }
      this.#problem = describe(outcome);
      this.#downSince ??= Date.now();
      this.#owePause = true;
    }
  }

  /** One attempt on the current host, its whole handshake within the connect timeout: the open
   * socket; the host's refusal (a status under 500, a redirect, a certificate that cannot be
   * verified: retrying cannot help); or the problem (the next host, if any, is tried next). */
  #attempt(): Promise<WebSocket | Refusal | Error> {
    const host = this.#hosts[this.#host]!;
    return new Promise((resolve) => {
      let done = false;
      const finish = (outcome: WebSocket | Refusal | Error): void => {
        if (done) return;
        done = true;
        clearTimeout(whole);
        if (!(outcome instanceof WebSocket)) {
          ws.terminate();
          if (!(outcome instanceof Refusal)) this.#host = (this.#host + 1) % this.#hosts.length;
        }
        resolve(outcome);
      };
      const ws = new WebSocket(host.wsUrl, {
        headers: { Authorization: `Bearer ${host.token}` },
        handshakeTimeout: this.#connectTimeout,
        maxPayload: MAX_REPLY_BYTES,
        perMessageDeflate: false,
        ...(host.tls && this.#ca !== undefined ? { ca: [...this.#ca] } : {}),
      });
      // `handshakeTimeout` is an idle timeout, restarted by every byte: this bounds the whole.
      const whole = setTimeout(
        () => finish(new Error(`the host did not complete the handshake within ${this.#connectTimeout / 1000} s`)),
        this.#connectTimeout,
      );
      ws.on("error", (error: Error & { code?: string }) => {
        if (error.code !== undefined && CERTIFICATE_ERRORS.has(error.code)) {
          finish(
            new Refusal(
              ErrorCode.HOST_UNREACHABLE,
              `the certificate of ${host.url} cannot be verified (${error.code}: ${error.message}); ` +
                "if a private authority signed it, pass its certificate as { ca }",
            ),
          );
          return;
        }
        finish(error);
      });
      let role: string | undefined;
      ws.once("upgrade", (response) => {
        const said = response.headers[ROLE_HEADER];
        role = typeof said === "string" ? said : undefined;
      });
      ws.once("open", () => finish(this.#checkRole(host.url, role) ?? ws));
      ws.once("unexpected-response", (request, response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          request.destroy();
          const location = response.headers.location;
          finish(
            new Refusal(
              ErrorCode.HOST_UNREACHABLE,
              `${host.url} redirected the asker connection (HTTP ${status}) to ${location ?? "nowhere"}; ` +
                "an asker never follows a redirect: if that is the host, give its URL instead",
            ),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const refuse = (): void => {
          request.destroy();
          if (status >= 500) {
            finish(new Error(`HTTP ${status}`));
            return;
          }
          finish(refusalOf(host.url, status, Buffer.concat(chunks).toString("utf8")));
        };
        const cut = setTimeout(refuse, 2_000);
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= 65_536) chunks.push(chunk);
        });
        response.on("end", () => {
          clearTimeout(cut);
          refuse();
        });
        response.on("error", () => {
          clearTimeout(cut);
          refuse();
        });
      });
    });
  }

  /** Keep the role the host gave the token; refuse a token that can answer (or a host that does
   * not say) with `requireAsker`; otherwise warn of a token that can answer, once. */
  #checkRole(url: string, said: string | undefined): Refusal | undefined {
    // Said twice (Node joins the values with ", ") or in words no host uses, it says nothing.
    const role = said !== undefined && ROLES.has(said) ? said : undefined;
    this.role = role;
    if (role === ASKER) return undefined;
    if (this.#requireAsker) {
      return new Refusal(
        ErrorCode.FORBIDDEN,
        said !== undefined && role === undefined
          ? `${url} said the token's role unreadably (${ROLE_HEADER}: ${JSON.stringify(said)}), so it ` +
              `may answer; ${ASKER_HINT}`
          : role === undefined
            ? `${url} did not say what the token may do (a host older than roles, where every ` +
              `token answers); upgrade it, and ${ASKER_HINT}`
            : `the token for ${url} can answer questions (its role is ${role}), so an agent ` +
              `holding it could approve its own requests; ${ASKER_HINT}`,
      );
    }
    if (said !== undefined && !this.#warned) {
      this.#warned = true;
      process.emitWarning(
        `the token for ${url} can answer questions (its role is ${role ?? `said unreadably as ${JSON.stringify(said)}`}), ` +
          `so an agent holding it could answer its own; ${ASKER_HINT}`,
        { code: "UQ_ANSWERING_TOKEN" },
      );
    }
    return undefined;
  }

  /** Make `ws` the connection, send every call on it again, and serve it until it closes. */
  #adopt(ws: WebSocket): void {
    const previous = this.#ws;
    if (previous !== null && previous !== ws) this.#leave(previous);
    this.#ws = ws;
    this.#connectedHost = this.#host;
    this.#generation += 1;
    // A handshake is not yet a useful exchange: the pause and the unreachable clock stay.
    const openedAt = Date.now();
    this.#useful = false;
    clearTimeout(this.#silence);
    this.#silence = undefined;
    let pong: NodeJS.Timeout | undefined;
    const ping = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(JSON.stringify({ type: "ping" }));
      pong ??= setTimeout(() => ws.terminate(), this.#pongTimeout); // no pong: replace the socket
    }, this.#pingInterval);
    this.#closed = new Promise<void>((closed) => {
      ws.on("close", (code: number, reason: Buffer) => {
        clearInterval(ping);
        clearTimeout(pong);
        if (this.#ws === ws) {
          this.#ws = null;
          clearTimeout(this.#silence);
          this.#silence = undefined;
          if (this.#leaving === ws) {
            this.#leaving = null; // closed on purpose: nothing failed
          } else {
            const now = Date.now();
            if (this.#useful && now - openedAt >= STEADY_AFTER_MS) {
              this.#downSince = now;
              this.#backoff = BACKOFF_FIRST_MS;
            } else {
              this.#downSince ??= now;
            }
            this.#owePause = true;
            this.#problem = `the connection closed with code ${code}`;
          }
        }
        if (code === 4401 || code === 4403) {
          const text = reason.toString("utf8");
          this.#fail(
            code === 4401
              ? new Refusal(ErrorCode.UNAUTHORIZED, `the host at ${this.url} no longer accepts the token${text ? `: ${text}` : ""}`)
              : new Refusal(ErrorCode.FORBIDDEN, `the host at ${this.url} refused the connection${text ? `: ${text}` : ""}`),
            true,
          );
        }
        closed();
      });
    });
    ws.on("message", (data: WebSocket.RawData) => {
      const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
      const reply = parseReply(text);
      if (reply === undefined) return;
      if (reply.payload.type === "pong") {
        clearTimeout(pong);
        pong = undefined;
        return;
      }
      this.#dispatch(ws, reply);
    });
    for (const call of [...this.#calls.values()]) this.#send(call);
  }

  /** Hand a frame to the call it belongs to. */
  #dispatch(ws: WebSocket, reply: AskerReply): void {
    const call = reply.rpcId === undefined ? undefined : this.#calls.get(reply.rpcId);
    const payload = reply.payload;
    if (call === undefined) return; // nothing any call waits for: not an answer
    if (payload.type === "ask/error" && WAIT_OUT.has(String(payload.code))) {
      // An outage to wait out, not an outcome: leave this host, and ask again after the pause (the
      // next host if there are several: its own link to the database may be fine).
      this.#problem = `the host said ${String(payload.code)}: ${String(payload.message ?? "")}`;
      this.#host = (this.#host + 1) % this.#hosts.length;
      ws.close(1000);
      return;
    }
    if (payload.type === "pong") return;
    this.#answered();
    if (payload.type === "ask/error" && payload.code === ErrorCode.RATE_LIMITED && call.withdrawal === undefined) {
      // Its token asks faster than the host lets it: nothing was stored. Ask again after the
      // host's retryAfter, until another reply or the ask's own signal ends it (a withdrawal
      // meanwhile sends no ask: there is nothing to withdraw but a refusal).
      const again = setTimeout(() => {
        if (this.#calls.get(call.rpcId) !== call || call.withdrawal !== undefined) return;
        call.askedOn = -1;
        this.#send(call);
      }, ratePauseMs(payload.retryAfter));
      again.unref(); // the waiting ask's open connection keeps the process alive, not this timer
      return;
    }
    if (payload.type === "ask/error") {
      const settle = call.settle;
      this.#forget(call);
      settle?.({ kind: "failed", code: String(payload.code), message: String(payload.message ?? payload.code) });
      return;
    }
    if (payload.type === "ask/settled") {
      const settle = call.settle;
      this.#forget(call);
      settle?.({ kind: "settled", outcome: payload.outcome, answer: payload.answer });
    }
  }
}

/** What a settled or refused request gives its asker: the checked answer, or the error. */
function answerOf(questions: readonly AskUserQuestionItem[], reply: Reply): AskUserQuestionAnswer {
  if (reply.kind === "failed") throw new UserQuestionError(reply.message, reply.code);
  switch (reply.outcome) {
    case "answered":
      if (reply.answer === undefined) {
        throw new UserQuestionError("the host reported an answer without the answer itself", ErrorCode.BAD_ANSWER);
      }
      return checkAnswer(questions, reply.answer);
    case "dismissed":
      throw new UserQuestionError(CANCELLED_MESSAGE, ErrorCode.ASK_CANCELLED);
    case "timed-out":
      throw new UserQuestionError(TIMED_OUT_MESSAGE, ErrorCode.ASK_TIMED_OUT);
    case "withdrawn":
      throw new UserQuestionError(ABORTED_MESSAGE, ErrorCode.ASK_ABORTED);
    default:
      throw new UserQuestionError(
        `the host reported an outcome this client does not know: ${JSON.stringify(reply.outcome)}`,
        ErrorCode.BAD_ANSWER,
      );
  }
}

function parseReply(text: string): AskerReply | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { rpcId, payload } = value as { rpcId?: unknown; payload?: unknown };
  if (typeof payload !== "object" || payload === null || typeof (payload as { type?: unknown }).type !== "string") {
    return undefined; // a frame from a newer host: nothing any call waits for
  }
  return { ...(typeof rpcId === "string" ? { rpcId } : {}), payload: payload as AskerReply["payload"] };
}

function refusalOf(url: string, status: number, body: string): Refusal {
  let code: string | undefined;
  let message: string | undefined;
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof error?.code === "string") code = error.code;
    if (typeof error?.message === "string") message = error.message;
  } catch {
    // not the host's error body: the status says it
  }
  if (status === 401) {
    return new Refusal(
      code ?? ErrorCode.UNAUTHORIZED,
      `the host at ${url} refused the token (HTTP 401): ${message ?? "use the token that `uq serve` printed"}`,
    );
  }
  if (code !== undefined) {
    return new Refusal(code, `the host at ${url} refused the asker connection (HTTP ${status}): ${message ?? code}`);
  }
  if (status === 403) {
    return new Refusal(ErrorCode.FORBIDDEN, `the host at ${url} refused the asker connection (HTTP 403)`);
  }
  return new Refusal(
    ErrorCode.HOST_UNREACHABLE,
    `${url} refused the asker connection with HTTP ${status}; is it a user-questions host?`,
  );
}

function parseHost(url: string): Omit<Host, "token"> & { token: string } {
  let parts: URL;
  try {
    parts = new URL(url);
  } catch {
    parts = new URL("invalid:");
  }
  const scheme = SCHEMES[parts.protocol];
  if (typeof url !== "string" || scheme === undefined || !parts.host) {
    throw new UserQuestionError(
      `the host URL must start with http:// or https://, got ${JSON.stringify(url)}`,
      ErrorCode.BAD_REQUEST,
    );
  }
  const base = parts.pathname.endsWith("/") ? parts.pathname : `${parts.pathname}/`;
  return {
    url: `${parts.protocol}//${parts.host}${base}`,
    wsUrl: `${scheme}//${parts.host}${base}${ASK_PATH}`,
    token: parts.searchParams.get("token") ?? "",
    tls: scheme === "wss:",
  };
}

function checkId(what: "rpcId" | "session", value: unknown): void {
  if (typeof value !== "string") {
    throw new UserQuestionError(`the ${what} must be a string, got ${typeof value}`, ErrorCode.BAD_REQUEST);
  }
  const length = characters(value);
  if (length === 0 || length > MAX_ID_LENGTH) {
    throw new UserQuestionError(
      `the ${what} must be 1 to ${MAX_ID_LENGTH} characters long, got ${length}`,
      ErrorCode.BAD_REQUEST,
    );
  }
  const problem = textProblem(value);
  if (problem !== undefined) throw new UserQuestionError(`the ${what} ${problem}`, ErrorCode.BAD_REQUEST);
}

function readOrigin(origin: Origin): Origin {
  if (typeof origin !== "object" || origin === null) {
    throw new UserQuestionError("the origin must be an object: { client?, cwd? }", ErrorCode.BAD_REQUEST);
  }
  const read: Origin = {};
  for (const [name, limit] of [
    ["client", MAX_ORIGIN_CLIENT],
    ["cwd", MAX_ORIGIN_CWD],
  ] as const) {
    const value = origin[name];
    if (value === undefined || value === null) continue;
    const length = typeof value === "string" ? characters(value) : -1;
    const problem = typeof value === "string" ? textProblem(value) : undefined;
    if (length < 1 || length > limit || problem !== undefined) {
      throw new UserQuestionError(
        `the origin's ${name} must be a string of 1 to ${limit} characters without NUL or lone surrogate`,
        ErrorCode.BAD_REQUEST,
      );
    }
    read[name] = value;
  }
  return read;
}

/** The system's authorities, `$SSL_CERT_FILE`'s, and those given. */
function trustedAuthorities(ca: RemoteProviderOptions["ca"]): ReadonlyArray<string | Buffer> | undefined {
  const extra: Array<string | Buffer> = [];
  const given = ca === undefined ? [] : Array.isArray(ca) ? ca : [ca as string | Buffer];
  const sources = process.env.SSL_CERT_FILE ? [process.env.SSL_CERT_FILE, ...given] : given;
  for (const source of sources) {
    if (typeof source !== "string" || source.includes("-----BEGIN")) {
      extra.push(source);
      continue;
    }
    try {
      extra.push(readFileSync(source));
    } catch (error) {
      throw new UserQuestionError(
        `cannot read the certificate authority file ${source}: ${describe(error)}`,
        ErrorCode.BAD_REQUEST,
      );
    }
  }
  return extra.length === 0 ? undefined : [...rootCertificates, ...extra];
}

function defaultSession(): string {
  const script = process.argv[1];
  const program = script ? basename(script, extname(script)) : "";
  return `${program || "node"}@${hostname()}`;
}

function describe(problem: unknown): string {
  if (problem instanceof Error) {
    const code = (problem as { code?: unknown }).code;
    return typeof code === "string" && !problem.message.includes(code) ? `${code}: ${problem.message}` : problem.message;
  }
  return String(problem);
}

function positive(name: string, value: number | undefined, otherwise: number): number {
  if (value === undefined) return otherwise;
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
    throw new UserQuestionError(`${name} must be a positive number of milliseconds, got ${value}`, ErrorCode.BAD_REQUEST);
  }
  return value;
}

/** Milliseconds to wait after `RATE_LIMITED` before asking again: the host's `retryAfter` (in
 * seconds), at least `RATE_PAUSE_MIN_MS` and at most `RATE_PAUSE_MAX_MS`, stretched by up to a
 * tenth so that asks refused together do not come back together. */
function ratePauseMs(retryAfter: unknown): number {
  const given = typeof retryAfter === "number" && Number.isFinite(retryAfter) ? retryAfter * 1000 : 0;
  return Math.min(Math.max(given, RATE_PAUSE_MIN_MS), RATE_PAUSE_MAX_MS) * (1 + Math.random() / 10);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
