/**
 * `user-questions-client`: ask a person through a user-questions host (`uq serve`) from Node.
 *
 * `RemoteProvider` is a `UserQuestionProvider` (the seed's interface, structurally) over the
 * host's asker protocol; it needs no harness. The `user-questions-client/dsh` entry point is the
 * Cordis plugin for the seed's harness.
 *
 * @module
 */

export {
  ASK_PATH,
  BACKOFF_FIRST_MS,
  BACKOFF_MAX_MS,
  CONNECT_TIMEOUT_MS,
  PING_INTERVAL_MS,
  PONG_TIMEOUT_MS,
  RemoteProvider,
  STEADY_AFTER_MS,
  UNREACHABLE_LIMIT_MS,
  WITHDRAW_TIMEOUT_MS,
} from "./remote.js";
export type { AskUserQuestionRequest, RemoteProviderOptions, UserQuestionProvider } from "./remote.js";
export { ErrorCode, UserQuestionError, isUserQuestionError } from "./errors.js";
export type { ErrorCodeName } from "./errors.js";
export { checkAnswer, checkRequest, readQuestions } from "./checks.js";
export { FORMATS, fieldProblem, formFields, schemaProblem, valueProblem } from "./forms.js";
export type { Choice, FieldKind, FormField } from "./forms.js";
export { ALLOW, APPROVAL_ID, DENY, approvalDecision, approvalFailure, approvalQuestion } from "./approval.js";
export type { ApprovalCall, ApprovalOutcome } from "./approval.js";
export type {
  AskError,
  AskFrame,
  AskPending,
  AskSettled,
  AskerReply,
  Origin,
  Outcome,
  PingFrame,
  Pong,
  WithdrawFrame,
  WithdrawReason,
} from "./frames.js";
export * from "./limits.js";
export type {
  AskUserQuestionAnswer,
  AskUserQuestionAnswerItem,
  AskUserQuestionArgs,
  AskUserQuestionItem,
  AskUserQuestionOption,
  ExitPlanModeArgs,
  FormChoice,
  FormFieldSchema,
  FormItemsSchema,
  FormSchema,
  PlanReviewIntent,
} from "./wire.generated.js";
export { ASK_USER_QUESTION_ARGS_SCHEMA, EXIT_PLAN_MODE_ARGS_SCHEMA, WIRE_SCHEMA } from "./wire.generated.js";
