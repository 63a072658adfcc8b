/**
 * `user-questions-client/dsh`: the Cordis plugin that makes the DeepSeek harness ask, and ask
 * permission, through a user-questions host.
 *
 *     import * as uq from "user-questions-client/dsh";
 *     await ctx.plugin(uq, { url: process.env.UQ_URL });
 *
 * `apply()` registers a {@link RemoteProvider} on `ctx.userQuestions` before it returns (it opens
 * no connection: the first ask does), so once `ctx.plugin()` has settled every `ask()` and every
 * `ask_user_question` tool call goes to the host's inbox. While `ctx.approval` exists, the plugin
 * also answers `approval/request`: it puts an approval card (the tool's name, the asker's reason,
 * the call's id) in the inbox and returns `allowed-once` for `Allow`, `rejected` for anything else
 * a person does, `cancelled` when the request was withdrawn (its signal aborted), and
 * `unavailable` when the host cannot be reached or refuses the client: it fails closed.
 *
 * The seed's `ask_user_question` result has `selected` and `custom` only: the plugin puts the
 * host's whole answer (with a note, a form's value, a changed call) into the text the model reads,
 * leaving the result's value as the seed made it (`dsh-answers.ts`).
 *
 * Everything it registers belongs to the plugin's fiber: disposing the fiber withdraws the
 * questions still waiting, closes the connection, and unregisters the provider and the answerer.
 * Its errors are the seed's own `UserQuestionError` (same name, code and message as the root
 * entry point's), so `ctx.tools.execute()` hands `{ name, code }` to the model.
 *
 * @module
 */

import type { Context } from "@deepseek-ai/cordis";
import type { ApprovalOutcome, ApprovalRequest } from "@deepseek-ai/dsh-user-approval";
import {
  UserQuestionError as SeedUserQuestionError,
  type AskUserQuestionRequest as SeedRequest,
  type UserQuestionProvider as SeedProvider,
} from "@deepseek-ai/dsh-user-questions";

import { approvalDecision, approvalFailure, approvalQuestion } from "./approval.js";
import { carryWholeAnswers, recordAnswer } from "./dsh-answers.js";
import { ErrorCode, isUserQuestionError } from "./errors.js";
import type { Origin } from "./frames.js";
import { RemoteProvider as BaseRemoteProvider, type RemoteProviderOptions } from "./remote.js";
import type { AskUserQuestionAnswer } from "./wire.generated.js";

/** The plugin's name, as Cordis shows it. */
export const name = "user-questions-client";
/** The plugin runs while `ctx.userQuestions` exists; `ctx.approval` is used when present. */
export const inject = ["userQuestions"];

/** The plugin's configuration. */
export interface Config {
  /** The host's URL as `uq serve` printed it (its `?token=` is used), or several hosts' URLs. */
  url: string | string[];
  /** The host's token, when the URL has none (else `$UQ_TOKEN`). */
  token?: string;
  /** The requests' `sessionId` on the host; default: the asking agent's id, else
   * `<program>@<hostname>`. */
  session?: string;
  /** Where the asks come from, shown with their questions. */
  origin?: Origin;
  /** The certificate authority of an `https://` host: a PEM file's path, or PEM text. */
  ca?: RemoteProviderOptions["ca"];
  /** Refuse a token that can answer, as a permission gate should (`RemoteProviderOptions`):
   * approvals then end `unavailable` rather than ask with a token the agent could answer with. */
  requireAsker?: boolean;
}

/** `error` as the seed's own `UserQuestionError`, with the same message and code. */
export function toSeedError(error: unknown): unknown {
  if (error instanceof SeedUserQuestionError || !isUserQuestionError(error)) return error;
  const cause = (error as { cause?: unknown }).cause;
  const converted = new SeedUserQuestionError(error.message, error.code, cause === undefined ? undefined : { cause });
  if (error.stack !== undefined) converted.stack = error.stack;
  return converted;
}

/**
 * The root entry point's `RemoteProvider`, throwing the seed's own `UserQuestionError`: the
 * provider the plugin registers, for harness code that wants one of its own.
 */
export class RemoteProvider extends BaseRemoteProvider implements SeedProvider {
  constructor(url: string | readonly string[], options?: RemoteProviderOptions) {
    try {
      super(url, options);
    } catch (error) {
      throw toSeedError(error);
    }
  }

  override async askWithId(rpcId: string, request: SeedRequest): Promise<AskUserQuestionAnswer> {
    let answer: AskUserQuestionAnswer;
    try {
      answer = await super.askWithId(rpcId, request);
    } catch (error) {
      throw toSeedError(error);
    }
    recordAnswer(answer);
    return answer;
  }

  override async connect(options?: { keepOpen?: boolean }): Promise<void> {
    try {
      await super.connect(options);
    } catch (error) {
      throw toSeedError(error);
    }
  }
}

/**
 * Decide one approval request through the inbox: the card, then the outcome (never throws).
 *
 * The host is tried at once (each host once, within the connect timeout), so a host that is down
 * gives `unavailable` without waiting for it.
 */
export async function askApproval(provider: BaseRemoteProvider, request: ApprovalRequest): Promise<ApprovalOutcome> {
  if (request.signal?.aborted) return "cancelled";
  try {
    await provider.connect({ keepOpen: false });
    const answer = await provider.ask({
      questions: [approvalQuestion(request)],
      agent: request.agent,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    return approvalDecision(answer);
  } catch (error) {
    return approvalFailure(error);
  }
}

/** Register the provider (and, while `ctx.approval` exists, the approval answerer). */
export function apply(ctx: Context, config: Config): void {
  if (typeof config !== "object" || config === null || config.url === undefined) {
    throw new SeedUserQuestionError(
      "the user-questions-client plugin needs { url }: the URL `uq serve` printed",
      ErrorCode.BAD_REQUEST,
    );
  }
  const options: RemoteProviderOptions = {};
  if (config.token !== undefined) options.token = config.token;
  if (config.session !== undefined) options.session = config.session;
  if (config.origin !== undefined) options.origin = config.origin;
  if (config.ca !== undefined) options.ca = config.ca;
  if (config.requireAsker !== undefined) options.requireAsker = config.requireAsker;
  const provider = new RemoteProvider(config.url, options);
  ctx.userQuestions.registerProvider(provider);
  ctx.effect(() => () => provider.close(), "user-questions-client: close the connection");
  carryWholeAnswers(ctx);
  ctx.inject(["approval"], (scope) => {
    scope.on("approval/request", (request) => askApproval(provider, request));
  });
}
