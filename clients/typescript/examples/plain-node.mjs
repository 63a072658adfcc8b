// Ask a person through the host from plain Node: no harness, only user-questions-client.
//   UQ_URL='http://127.0.0.1:8765/?token=…' node plain-node.mjs
import { RemoteProvider, UserQuestionError } from "user-questions-client";

const provider = new RemoteProvider(process.env.UQ_URL, { session: "release-bot" });
try {
  const answer = await provider.ask({
    questions: [
      {
        id: "ship",
        header: "Release",
        question: "Ship 2.4 today?",
        options: [{ label: "Ship (Recommended)", description: "All checks passed" }, { label: "Wait" }],
      },
    ],
    signal: AbortSignal.timeout(10 * 60_000), // withdrawn from the inbox after ten minutes
  });
  console.log(JSON.stringify(answer)); // {"answers":[{"id":"ship","selected":["Ship (Recommended)"]}]}
} catch (error) {
  if (!(error instanceof UserQuestionError)) throw error;
  console.log("not shipping:", error.code); // ASK_CANCELLED, ASK_TIMED_OUT, UNAUTHORIZED, ...
}
