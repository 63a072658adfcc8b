"""In-process cost of `ask()` and of `tools.execute("ask_user_question")`.

Run: `.venv/bin/python benchmarks/ask_overhead.py [--asks N]`. Prints p50 / p99 in microseconds
for each case, measured side by side in one run (these machines are noisy), and the ratios
between cases. The provider is trivial (it returns a prepared answer), so the figures are the
seam's own overhead: request checks, the abort race, answer checks, events, tool validation.
Target: p50 under 25 us for one question.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Awaitable, Callable

import anyio

from user_questions import (
    AbortController,
    AgentRegistry,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ToolRegistry,
    UserQuestionService,
    tool_ask_user,
)


class Prepared:
    """Answers every request with the answer prepared for its batch size."""

    def __init__(self, answers: dict[int, AskUserQuestionAnswer]) -> None:
        self.answers = answers

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        return self.answers[len(request.questions)]


def batch(size: int) -> list[AskUserQuestionItem]:
    return [
        AskUserQuestionItem(
            id=f"q{i}",
            question=f"Question {i}?",
            options=[AskUserQuestionOption(label=label) for label in ("yes", "no", "later")],
        )
        for i in range(size)
    ]


def answer_for(size: int) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id=f"q{i}", selected=["yes"]) for i in range(size)]
    )


def runs(asks: int) -> int:
    """How many times `measure(run, asks)` runs `run`: its warm-up, then the `asks` timed."""
    return asks + min(2000, asks // 10)


async def measure(run: Callable[[], Awaitable[object]], asks: int) -> list[float]:
    """`asks` runs of `run`, each timed in microseconds, after a warm-up of a tenth as many
    (at most 2,000)."""
    for _ in range(runs(asks) - asks):
        await run()
    samples = []
    gc.disable()
    try:
        for _ in range(asks):
            start = time.perf_counter_ns()
            await run()
            samples.append((time.perf_counter_ns() - start) / 1000)
    finally:
        gc.enable()
    return samples


def p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1]


async def main(asks: int) -> None:
    ctx = Context()
    ctx.plugin(AgentRegistry)
    ctx.plugin(UserQuestionService)
    ctx.plugin(ToolRegistry)
    ctx.plugin(tool_ask_user)
    ctx.user_questions.register_provider(Prepared({1: answer_for(1), 10: answer_for(10)}))
    one, ten = AskUserQuestionRequest(batch(1)), AskUserQuestionRequest(batch(10))
    signal = AbortController().signal
    one_signal = AskUserQuestionRequest(batch(1), signal=signal)
    tool_args = {
        "questions": [
            {
                "id": "q0",
                "question": "Question 0?",
                "options": [{"label": "yes"}, {"label": "no"}, {"label": "later"}],
            }
        ]
    }

    async def tool_call() -> None:
        result = await ctx.tools.execute("ask_user_question", tool_args)
        assert not result.is_error, result.text

    cases: dict[str, Callable[[], Awaitable[object]]] = {
        "ask, 1 question": lambda: ctx.user_questions.ask(one),
        "ask, 1 question, with a signal": lambda: ctx.user_questions.ask(one_signal),
        "ask, 10 questions": lambda: ctx.user_questions.ask(ten),
        "tools.execute ask_user_question, 1 question": tool_call,
    }
    results = {name: await measure(run, asks) for name, run in cases.items()}
    base = p(results["ask, 1 question"], 50)
    print(f"{'case':<46} {'p50 us':>8} {'p99 us':>8} {'p50 ratio':>10}")
    for name, samples in results.items():
        p50, p99 = p(samples, 50), p(samples, 99)
        print(f"{name:<46} {p50:>8.2f} {p99:>8.2f} {p50 / base:>9.2f}x")
    print(f"({asks} asks per case; target: p50 under 25 us for one question)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=20_000, help="asks per case (default 20000)")
    anyio.run(main, parser.parse_args().asks)
