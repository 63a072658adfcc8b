// The seed's harness asks through the host: the model's ask_user_question call waits in the inbox.
//   UQ_URL='http://127.0.0.1:8765/?token=…' node harness.mjs
import { Context } from "@deepseek-ai/cordis";
import { CallId } from "@deepseek-ai/dsh-llm";
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt";
import * as askUser from "@deepseek-ai/dsh-tool-ask-user";
import { ToolRuntime } from "@deepseek-ai/dsh-tools";
import { UserQuestionService } from "@deepseek-ai/dsh-user-questions";
import * as uq from "user-questions-client/dsh";

const ctx = new Context();
for (const plugin of [SystemPrompt, ToolRuntime, UserQuestionService, askUser]) await ctx.plugin(plugin);
await ctx.plugin(uq, { url: process.env.UQ_URL, session: "harness-demo" }); // the provider is registered

// What the model's tool call turns into:
const result = await ctx.tools.execute({
  callId: CallId("call-1"),
  name: "ask_user_question",
  arguments: {
    questions: [{ id: "pkg", question: "Which package manager?", options: [{ label: "pnpm (Recommended)" }, { label: "npm" }] }],
  },
  signal: new AbortController().signal,
});
console.log(result.content[0].text); // {"answers":[{"id":"pkg","selected":["pnpm (Recommended)"]}]}
await ctx.fiber.dispose(); // withdraws whatever still waits, closes the connection
