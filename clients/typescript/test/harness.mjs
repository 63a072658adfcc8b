// The seed's own harness, as a deployment composes it: a Cordis Context with the system prompt,
// the tool runtime, the user-questions service and the `ask_user_question` tool (and, when asked
// for, the approval service), and this package's plugin pointed at a host.

import { Context } from "@deepseek-ai/cordis";
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt";
import * as askUser from "@deepseek-ai/dsh-tool-ask-user";
import { ToolRuntime } from "@deepseek-ai/dsh-tools";
import { ApprovalService } from "@deepseek-ai/dsh-user-approval";
import { Session, SessionId } from "@deepseek-ai/dsh-session";
import { CallId } from "@deepseek-ai/dsh-llm";
import { UserQuestionService } from "@deepseek-ai/dsh-user-questions";

export { ApprovalService, CallId };

/** A Context with the seed's services and tools (the plugin is loaded by the test). */
export async function harness({ approval = false } = {}) {
  const ctx = new Context();
  await ctx.plugin(SystemPrompt);
  await ctx.plugin(ToolRuntime);
  await ctx.plugin(UserQuestionService);
  await ctx.plugin(askUser);
  if (approval) await ctx.plugin(ApprovalService);
  return ctx;
}

/** An agent in an open turn: what the approval service needs to audit a request to its session. */
export function agentInTurn(id) {
  const session = Session.create(SessionId(id));
  session.append("turn/start", { turn: 1 });
  return { id: session.id, session };
}

/** Run the model's `ask_user_question` call through the tool runtime. */
export function askTool(ctx, questions, { callId = "call-1", signal = new AbortController().signal, agent } = {}) {
  return ctx.tools.execute({
    callId: CallId(callId),
    name: "ask_user_question",
    arguments: { questions },
    signal,
    ...(agent === undefined ? {} : { agent }),
  });
}
