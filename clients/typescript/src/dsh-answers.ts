/**
 * What the seed's `ask_user_question` tool leaves out of its result, put back into the text the
 * model reads.
 *
 * The seed's tool result is `{ answers: [{ id, selected, custom? }] }` (its output schema allows
 * nothing else), so a note, a form's value or a changed call would never reach the model. The
 * plugin keeps the host's whole answer for each `ask_user_question` call (the call's dispatch
 * runs in an async context the provider records its answers into) and, once the call has run,
 * replaces the result's model-facing text with that answer as compact JSON: the seed's keys, in
 * its order, plus `note`, `value` and `edited` where the person gave them. The result's value is
 * left exactly as the seed made it, so code that reads only `selected` and `custom` works as
 * before; a call whose answer has nothing more keeps the seed's text.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

import type { AskUserQuestionAnswer, AskUserQuestionAnswerItem } from "./wire.generated.js";

/** The seed's tool for the model. */
export const ASK_TOOL = "ask_user_question";
/** The answer keys the seed's result has no room for. */
const MORE = ["note", "value", "edited"] as const;

/** The answers the host gave while one `ask_user_question` call ran. */
interface CallAnswers {
  readonly answers: AskUserQuestionAnswer[];
}

const running = new AsyncLocalStorage<CallAnswers>();

/** Record `answer` for the `ask_user_question` call being dispatched, if any. */
export function recordAnswer(answer: AskUserQuestionAnswer): void {
  running.getStore()?.answers.push(answer);
}

/** A tool call as the tool runtime's events give it (the fields used here). */
interface ToolCallSeen {
  readonly name: string;
}
/** A tool result as the tool runtime's `tools/post-execute` gives it (the fields used here). */
interface ToolResultSeen {
  readonly isError: boolean;
  readonly value?: unknown;
}
/** A `tools/post-execute` decision (the fields used here). */
interface PostDecision {
  readonly kind: string;
  readonly content?: unknown;
  readonly value?: unknown;
}
/** The two waterfalls of `@deepseek-ai/dsh-tools` the plugin listens to. */
interface ToolEvents {
  on(
    name: "tools/execute",
    listener: (exec: ToolCallSeen, next: () => Promise<unknown>) => Promise<unknown>,
  ): unknown;
  on(
    name: "tools/post-execute",
    listener: (exec: ToolCallSeen, result: ToolResultSeen, next: () => Promise<PostDecision>) => Promise<PostDecision>,
  ): unknown;
}

/**
 * Listen on `ctx`'s tool runtime events (for as long as the plugin's fiber lives) so that every
 * `ask_user_question` result's text carries the whole answer.
 */
export function carryWholeAnswers(ctx: unknown): void {
  const events = ctx as ToolEvents;
  const seen = new WeakMap<ToolCallSeen, CallAnswers>();
  events.on("tools/execute", (exec, next) => {
    if (exec.name !== ASK_TOOL) return next();
    const answers: CallAnswers = { answers: [] };
    seen.set(exec, answers);
    return running.run(answers, next);
  });
  events.on("tools/post-execute", async (exec, result, next) => {
    const decision = await next();
    const answers = seen.get(exec);
    seen.delete(exec);
    if (answers === undefined || result.isError || decision.kind !== "accept") return decision;
    if (decision.content !== undefined || decision.value !== undefined) return decision;
    const text = wholeAnswerText(result.value, answers.answers.at(-1));
    return text === undefined ? decision : { ...decision, content: [{ type: "text", text }] };
  });
}

/**
 * The seed's result `value` with what the host's `answer` has beyond it, as compact JSON;
 * `undefined` when it has nothing more (or the value is not the seed's shape).
 */
export function wholeAnswerText(value: unknown, answer: AskUserQuestionAnswer | undefined): string | undefined {
  const items = (value as { answers?: unknown } | null)?.answers;
  if (answer === undefined || !Array.isArray(items)) return undefined;
  const byId = new Map(answer.answers.map((item) => [item.id, item]));
  let more = false;
  const answers = items.map((item: Record<string, unknown>) => {
    const given: AskUserQuestionAnswerItem | undefined = byId.get(item["id"] as string);
    const extra: Record<string, unknown> = {};
    for (const key of MORE) {
      if (given?.[key] !== undefined) extra[key] = given[key];
    }
    more ||= Object.keys(extra).length > 0;
    return { ...item, ...extra };
  });
  return more ? JSON.stringify({ answers }) : undefined;
}
