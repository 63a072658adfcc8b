/**
 * The frames of the asker protocol (`/ws/ask`), as the host's protocol document describes them.
 *
 * The questions and the answer inside them are the generated wire vocabulary; the frames
 * themselves are written here.
 *
 * @module
 */

import type { AskUserQuestionAnswer, AskUserQuestionItem } from "./wire.generated.js";

/** Where an ask comes from, as its asker describes itself; shown with the question. */
export interface Origin {
  /** The asking program, such as `"deepseek-harness"` (1 to 128 characters). */
  client?: string;
  /** The folder it works in (1 to 4,096 characters). */
  cwd?: string;
}

/** How a request ended, the same word on every surface of the host. */
export type Outcome = "answered" | "dismissed" | "withdrawn" | "timed-out";

/** Why an asker withdrew: `timed-out` is recorded as `timed-out`, the other two as `withdrawn`. */
export type WithdrawReason = "aborted" | "timed-out" | "cancelled";

/** Asker to host: submit a request, or re-attach to it (the same rpcId is the same request). */
export interface AskFrame {
  type: "ask";
  rpcId: string;
  sessionId: string;
  questions: AskUserQuestionItem[];
  origin?: Origin;
}

/** Asker to host: give a request up. */
export interface WithdrawFrame {
  type: "withdraw";
  rpcId: string;
  reason?: WithdrawReason;
}

/** Asker to host: a keepalive, answered with `pong`. */
export interface PingFrame {
  type: "ping";
}

/** Host to asker: the request is stored and shown; nothing can lose it now. */
export interface AskPending {
  type: "ask/pending";
}

/** Host to asker: the request settled (`answer` present when it was answered). */
export interface AskSettled {
  type: "ask/settled";
  outcome: Outcome;
  answer?: AskUserQuestionAnswer;
}

/** Host to asker: a frame was refused, with a stable code. */
export interface AskError {
  type: "ask/error";
  code: string;
  message: string;
  /** `RATE_LIMITED`: seconds after which the same ask would be taken. */
  retryAfter?: number;
}

/** Host to asker: the reply to a `ping`. */
export interface Pong {
  type: "pong";
}

/** Every frame from the host: `rpcId` is absent only on a `pong` and on an error about a frame
 * that named no usable rpcId. */
export interface AskerReply {
  rpcId?: string;
  payload: AskPending | AskSettled | AskError | Pong;
}
