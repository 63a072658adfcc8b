/**
 * Approval cards: one tool call put to a person, who allows it once or denies it.
 *
 * The seed's approval seam hands an answerer the tool's name, the asker's reason and the call's
 * id (never its arguments); the card shows the three, and offers `Allow` and `Deny`. Only an
 * explicit `Allow` allows: a denial, typed "Other" text, a skip and a dismissal all reject, so the
 * card fails closed. A withdrawn card (the request's signal aborted) is `cancelled`; a host that
 * cannot be reached, or that refuses the client, is `unavailable`.
 *
 * @module
 */

import { ErrorCode, isUserQuestionError } from "./errors.js";
import type { AskUserQuestionAnswer, AskUserQuestionItem } from "./wire.generated.js";

/** The id of an approval card's one question. */
export const APPROVAL_ID = "approval";
/** The label that allows the call, once. */
export const ALLOW = "Allow";
/** The label that denies it. */
export const DENY = "Deny";

/** The seed's closed approval outcomes. */
export type ApprovalOutcome = "allowed-once" | "rejected" | "cancelled" | "unavailable";

/** What an approval request says about the call: the seed's `ApprovalRequest`, structurally. */
export interface ApprovalCall {
  /** The tool the question is about. */
  readonly toolName: string;
  /** Why the asker asks, when it said so. */
  readonly reason?: string;
  /** The exact tool call being decided, when the asker has one. */
  readonly callId?: string;
}

/** `text` safe inside a one-backtick code span on one line. */
function inline(text: string): string {
  return text.replaceAll("`", "'").split(/\s+/).filter(Boolean).join(" ");
}

function displayName(toolName: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(toolName);
  return mcp ? `${mcp[2]} (${mcp[1]})` : toolName;
}

/** The card asking a person to allow one call of `call.toolName`. */
export function approvalQuestion(call: ApprovalCall, { agent = "the agent" }: { agent?: string } = {}): AskUserQuestionItem {
  const name = displayName(call.toolName);
  const facts = [`- Tool: \`${inline(call.toolName)}\``];
  if (call.callId !== undefined) facts.push(`- Call id: \`${inline(String(call.callId))}\``);
  const detail = call.reason ? `${call.reason}\n\n${facts.join("\n")}` : facts.join("\n");
  return {
    id: APPROVAL_ID,
    header: [...name].slice(0, 32).join(""),
    question: `Allow ${agent} to run ${name}?`,
    detail,
    options: [
      { label: ALLOW, description: "Run this call once." },
      { label: DENY, description: "Do not run it. Type a reason instead to tell the agent why." },
    ],
  };
}

/** The outcome an answer to {@link approvalQuestion} gives: only a chosen `Allow` allows. */
export function approvalDecision(answer: AskUserQuestionAnswer): ApprovalOutcome {
  const item = answer.answers.find((one) => one.id === APPROVAL_ID);
  if (item !== undefined && item.custom === undefined && item.selected.length === 1 && item.selected[0] === ALLOW) {
    return "allowed-once";
  }
  return "rejected";
}

/** The outcome an ask that failed with `error` gives: a dismissal rejects, a withdrawal is
 * `cancelled`, anything else (an unreachable host, a refused token, a bad answer) `unavailable`. */
export function approvalFailure(error: unknown): ApprovalOutcome {
  if (!isUserQuestionError(error)) return "unavailable";
  switch (error.code) {
    case ErrorCode.ASK_CANCELLED:
      return "rejected";
    case ErrorCode.ASK_ABORTED:
    case ErrorCode.ASK_TIMED_OUT:
      return "cancelled";
    default:
      return "unavailable";
  }
}
