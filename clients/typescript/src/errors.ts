/**
 * Errors with stable codes: what callers, tools and models branch on.
 *
 * Every failure of this package is a `UserQuestionError` whose `name` is `"UserQuestionError"`
 * and whose `code` is one of the strings below, or a code the host sent (a refusal keeps the
 * host's own code, so a newer host's codes reach the caller unchanged). The `dsh` entry point
 * turns each into the seed's own `UserQuestionError` class, with the same name, code and message.
 *
 * @module
 */

/** The codes this package raises itself; a host may send others, which are kept as they are. */
export const ErrorCode = {
  /** The request holds no questions. */
  EMPTY_QUESTIONS: "EMPTY_QUESTIONS",
  /** An intent's approve label names none of its options, or the intent has no detail. */
  BAD_INTENT: "BAD_INTENT",
  /** A repeated question id or option label, or a text holding a NUL or a lone surrogate. */
  BAD_QUESTION: "BAD_QUESTION",
  /** A malformed request or option (wrong types, a URL that is not http(s)), or a host refusal. */
  BAD_REQUEST: "BAD_REQUEST",
  /** The answer breaks the rules of the vocabulary for its questions. */
  BAD_ANSWER: "BAD_ANSWER",
  /** The request's signal aborted: the question was withdrawn. */
  ASK_ABORTED: "ASK_ABORTED",
  /** The request's signal timed out: the question was withdrawn as timed out. */
  ASK_TIMED_OUT: "ASK_TIMED_OUT",
  /** A person dismissed the questions. */
  ASK_CANCELLED: "ASK_CANCELLED",
  /** More than 32 questions in one request. */
  TOO_MANY_QUESTIONS: "TOO_MANY_QUESTIONS",
  /** A question with more than 64 options, or a text over its limit. */
  LIMIT_EXCEEDED: "LIMIT_EXCEEDED",
  /** The request's frame would be over 1 MiB. */
  REQUEST_TOO_LARGE: "REQUEST_TOO_LARGE",
  /** No token was given: not in the URL, not as an option, not in `$UQ_TOKEN`. */
  BAD_TOKEN: "BAD_TOKEN",
  /** The host refused the token (HTTP 401, or the token was revoked while connected). */
  UNAUTHORIZED: "UNAUTHORIZED",
  /** The host refused the connection as not allowed (HTTP 403 without a code of its own). */
  FORBIDDEN: "FORBIDDEN",
  /** The host could not be reached for too long, or its certificate cannot be verified. */
  HOST_UNREACHABLE: "HOST_UNREACHABLE",
  /** The host's store is down (the client retries these by itself). */
  STORE_UNAVAILABLE: "STORE_UNAVAILABLE",
  /** The host's disk is full (the client retries these by itself). */
  STORE_FULL: "STORE_FULL",
  /** The host's disk is behind (the client retries these by itself). */
  STORE_BUSY: "STORE_BUSY",
  /** The asker's token already has as many pending requests as its cap (the message names it). */
  TOO_MANY_PENDING: "TOO_MANY_PENDING",
  /** The asker's token asks faster than its rate (the client waits these out by itself). */
  RATE_LIMITED: "RATE_LIMITED",
} as const;

/** A code of {@link ErrorCode}, or any other code a host sends. */
export type ErrorCodeName = (typeof ErrorCode)[keyof typeof ErrorCode] | (string & {});

/** A failure with a stable, machine-readable `code`; branch on the code, never on the message. */
export class UserQuestionError extends Error {
  /** The stable code, such as `ASK_CANCELLED` or `UNAUTHORIZED`. */
  readonly code: ErrorCodeName;

  constructor(message: string, code: ErrorCodeName, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = "UserQuestionError";
  }
}

/** Whether `error` is an error with a string `code` named `UserQuestionError` (of any copy of
 * this package, or the seed's own class). */
export function isUserQuestionError(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    error.name === "UserQuestionError" &&
    typeof (error as { code?: unknown }).code === "string"
  );
}

export const ABORTED_MESSAGE = "ask_user_question was aborted before the user answered";
export const TIMED_OUT_MESSAGE = "ask_user_question timed out before the user answered";
export const CANCELLED_MESSAGE = "the user cancelled ask_user_question";

/** Whether an abort reason is a timeout (`AbortSignal.timeout()` aborts with a `TimeoutError`). */
export function isTimeout(reason: unknown): boolean {
  return (reason as { name?: unknown } | null | undefined)?.name === "TimeoutError";
}

/** `ASK_TIMED_OUT` when `signal` timed out, `ASK_ABORTED` for any other abort. */
export function abortError(signal: AbortSignal | undefined, cause?: unknown): UserQuestionError {
  const options = cause === undefined ? undefined : { cause };
  if (signal !== undefined && isTimeout(signal.reason)) {
    return new UserQuestionError(TIMED_OUT_MESSAGE, ErrorCode.ASK_TIMED_OUT, options);
  }
  return new UserQuestionError(ABORTED_MESSAGE, ErrorCode.ASK_ABORTED, options);
}
