"""The inbox page at scale: N pending requests in a real host, the page in Chromium.

Run: `.venv/bin/python benchmarks/page_scale.py [--pending N] [--store STORE] [--sessions S]
[--trace FILE]`. Fills a store with N pending requests (default 10,000) from S sessions (default 20)
through the store's own `submit`, as the host stores an ask; starts `uq serve` on it (a temporary
SQLite file unless `--store` names a store, such as `postgresql://...`), SIGKILLs it and starts it
again, and prints:

- restart replay: from the restart's beginning until a scripted page on `/ws` has received all N
  requests (as `benchmarks/host_roundtrip.py`'s page does);
- in Debian's Chromium (Playwright, `/usr/bin/chromium`): the first card visible after the page
  opens, the time until the count (tab title and header) is right, opening a request from the
  bottom of the list, an answer handled (the click on Submit until the card has gone: the
  receipt came back), and the tab's JS heap and DOM node count (CDP `Performance.getMetrics`);
- the top entries of the page's performance trace while it loads (CDP `Profiler`, self time per
  JavaScript function, and the main thread's trace events by name, inclusive).

Each figure is printed beside its target (docs/performance.md). The host, the page and this
script share the machine's cores, so run it on a quiet machine. A store named by `--store` keeps
its pending requests between runs: a later run only tops it up to N (the run answers ten).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from host_roundtrip import start_host
from machine import pace
from playwright.async_api import Browser, CDPSession, Page, async_playwright
from websockets.asyncio.client import connect

from user_questions import AskUserQuestionItem, AskUserQuestionOption
from user_questions.host.stores import NewQuestion, open_store

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
WAIT_SECONDS = 60.0
"""How long the page is given for each step before the figure is reported as not reached."""
FILL_CONCURRENCY = 32
ANSWERS = 5
"""Answers given in the page (and by the scripted page) for the answer figures."""

TARGETS = {
    "restart": 1.0,
    "first_card": 1.0,
    "count": 1.0,
    "answer": 0.100,
}

# Installed before the page's own scripts: notes (in the page's clock, from navigation start)
# when the first card appears and when the title shows the full count.
_WATCH = """
(() => {
  const marks = (window.__uqBench = {});
  const wanted = TITLE;
  const check = () => {
    const now = performance.now();
    if (marks.firstCard === undefined && document.querySelector(".card") !== null) {
      marks.firstCard = now;
    }
    if (marks.count === undefined && document.title === wanted) marks.count = now;
  };
  new MutationObserver(check).observe(document, {
    childList: true, subtree: true, characterData: true,
  });
})();
"""

# Answer the first card shown: pick its first option and press Submit; resolves with the
# milliseconds from the click until the card has left the page (the host's receipt came back).
_ANSWER = """
async () => {
  const card = document.querySelector(".card");
  if (card === null) return null;
  const radio = card.querySelector("input[type=radio]");
  radio.click();
  const submit = [...card.querySelectorAll("button")].find((b) => b.textContent === "Submit");
  const gone = new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      if (!card.isConnected) { watch.disconnect(); resolve(performance.now()); }
    });
    watch.observe(document, { childList: true, subtree: true });
  });
  const began = performance.now();
  submit.click();
  const late = new Promise((resolve) => setTimeout(() => resolve(null), WAIT_MS));
  const end = await Promise.race([gone, late]);
  return end === null ? null : end - began;
}
""".replace("WAIT_MS", str(int(WAIT_SECONDS * 1000)))

# Scroll the request list to its end and open the last request in it; resolves with the
# milliseconds until its card is shown, or null when the page has no list.
_OPEN_DEEP = """
async () => {
  const scroller = document.querySelector("#queue-scroll");
  if (scroller === null || scroller.closest("[hidden]") !== null) return null;
  scroller.scrollTop = scroller.scrollHeight;
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const rows = [...scroller.querySelectorAll("[data-rpc-id]")];
  const last = rows.reduce((a, b) => (Number(a.dataset.index) > Number(b.dataset.index) ? a : b));
  const rpcId = last.dataset.rpcId;
  const began = performance.now();
  last.click();
  const card = () => document.querySelector(`.card[data-rpc-id="${CSS.escape(rpcId)}"]`);
  while (card() === null) await new Promise((resolve) => requestAnimationFrame(resolve));
  return performance.now() - began;
}
"""


def question(index: int) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id="go",
        question=f"Ship build {index}?",
        header="Release",
        options=[
            AskUserQuestionOption(label="Ship (Recommended)", description="All checks passed."),
            AskUserQuestionOption(label="Wait", description="Hold until Monday."),
        ],
    )


async def fill(store_url: str, count: int, sessions: int) -> None:
    """Top the store up to `count` pending requests, oldest first, as the host stores an ask
    (a store left by an earlier run keeps its requests)."""
    start = datetime.now(UTC) - timedelta(hours=1)
    async with open_store(store_url) as store:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in range(len(await store.pending()), count):
            queue.put_nowait(index)

        async def worker() -> None:
            while not queue.empty():
                index = queue.get_nowait()
                await store.submit(
                    NewQuestion(
                        rpc_id=str(uuid.uuid4()),
                        session_id=f"agent-{index % sessions:02d}",
                        questions=[question(index)],
                        asked_at=start + timedelta(milliseconds=index),
                    )
                )

        await asyncio.gather(*(worker() for _ in range(FILL_CONCURRENCY)))


def socket_of(url: str) -> Any:
    """A scripted page's WebSocket to the host of `url` (as printed by `uq serve`)."""
    base, token = url.split("/?token=")
    return connect(
        base.replace("http", "ws", 1) + "/ws?replay=batch",
        additional_headers={"Origin": base, "Cookie": f"uq_token={token}"},
        max_size=None,
    )


async def receive_replay(page: Any, count: int) -> list[dict[str, Any]]:
    """The `count` pending requests a page is sent on connect (batched or one by one)."""
    requests: list[dict[str, Any]] = []
    while len(requests) < count:
        frame = json.loads(await page.recv())
        if frame["payload"]["type"] == "question/requested":  # a host without batched replay
            requests.append(frame)
        elif frame["payload"]["type"] == "question/replay":
            requests.extend(frame["payload"]["requests"])
    return requests


async def replayed(url: str, count: int) -> None:
    """Connect as a page and return once all `count` pending requests have arrived."""
    async with socket_of(url) as page:
        await receive_replay(page, count)


async def host_answer_seconds(url: str, count: int, answers: int = ANSWERS) -> float:
    """The median time from a scripted page's answer to its receipt: the host's share of an
    answer handled (its durable commit included)."""
    times = []
    async with socket_of(url) as page:
        requests = await receive_replay(page, count)
        for frame in requests[-answers:]:
            item = {"id": "go", "selected": ["Wait"]}
            response = {
                "type": "client-response",
                "rpcId": frame["rpcId"],
                "result": {"ok": True, "value": {"answer": {"answers": [item]}}},
            }
            began = time.perf_counter()
            await page.send(json.dumps(response))
            while json.loads(await page.recv())["payload"]["type"] != "client-response/receipt":
                pass
            times.append(time.perf_counter() - began)
    return sorted(times)[len(times) // 2]


def figure(label: str, seconds: float | None, target: float | None, unit: str = "s") -> str:
    if seconds is None:
        return f"{label}: not reached within {WAIT_SECONDS:.0f} s" + (
            f"  (target <= {target * 1000:.0f} ms)" if target is not None else ""
        )
    text = f"{label}: {seconds * 1000:.0f} ms"
    if target is not None:
        verdict = "met" if seconds <= target else "NOT met"
        text += f"  (target <= {target * 1000:.0f} ms, {seconds / target:.2f}x: {verdict})"
    return text


async def measure_page(browser: Browser, url: str, count: int, trace: str | None) -> None:
    context = await browser.new_context(viewport={"width": 1000, "height": 900})
    page = await context.new_page()
    title = f"({count}) user-questions"
    await page.add_init_script(_WATCH.replace("TITLE", json.dumps(title)))
    cdp = await context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    await cdp.send("Profiler.enable")
    await cdp.send("Profiler.setSamplingInterval", {"interval": 200})
    await cdp.send("Profiler.start")
    await browser.start_tracing(page=page, categories=["devtools.timeline", "v8.execute"])
    await page.goto(url)
    marks = await wait_marks(page, ("firstCard", "count"))
    profile = (await cdp.send("Profiler.stop"))["profile"]
    events = json.loads(await browser.stop_tracing())
    if trace:
        await asyncio.to_thread(Path(trace).write_text, json.dumps(events))
    print(figure("first card visible after the page opens", marks.get("firstCard"), 1.0))
    print(figure(f"count right ({title!r})", marks.get("count"), TARGETS["count"]))
    header = await page.evaluate("document.querySelector('#count')?.textContent ?? ''")
    print(f"  header says: {header!r}")
    await print_memory(page, cdp, "after load")
    deep = await page.evaluate(_OPEN_DEEP)
    if deep is not None:
        print(figure("open the last request of the list", deep / 1000, TARGETS["answer"]))
    times = []
    for _ in range(ANSWERS):
        answered = await run_with_timeout(page.evaluate(_ANSWER))
        if answered is None:
            break
        times.append(answered / 1000)
    label = f"answer handled (Submit click until the card is gone), median of {ANSWERS}"
    if len(times) == ANSWERS:
        label += f" (slowest {max(times) * 1000:.0f} ms)"
    median = sorted(times)[len(times) // 2] if len(times) == ANSWERS else None
    print(figure(label, median, TARGETS["answer"]))
    if median is not None:
        after = f"({count - ANSWERS}) user-questions"
        right = await page.evaluate(f"document.title === {json.dumps(after)}")
        print(f"  title after the answer: {'right' if right else 'WRONG'}")
    await print_memory(page, cdp, "after the answer")
    print("page profile, JavaScript self time (top 8):")
    for line in top_functions(profile, 8):
        print(f"  {line}")
    print("page trace, main thread events by name, inclusive (top 8):")
    for line in top_events(events, 8):
        print(f"  {line}")
    await context.close()


async def run_with_timeout(work: Any) -> Any:
    try:
        return await asyncio.wait_for(work, WAIT_SECONDS)
    except TimeoutError:
        return None


async def wait_marks(page: Page, names: tuple[str, ...]) -> dict[str, float]:
    """The page's marks (seconds from navigation start); absent when not reached in time.

    Polled from here: `wait_for_function` evaluates a string, which the page's CSP forbids."""
    deadline = time.monotonic() + WAIT_SECONDS
    marks: dict[str, float] = {}
    while time.monotonic() < deadline and not all(name in marks for name in names):
        await asyncio.sleep(0.1)  # polling the page under a deadline
        marks = await page.evaluate("window.__uqBench ?? {}")
    return {name: value / 1000 for name, value in marks.items()}


async def print_memory(page: Page, cdp: CDPSession, when: str) -> None:
    await cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
    elements = await page.evaluate("document.getElementsByTagName('*').length")
    cards = await page.evaluate("document.querySelectorAll('.card').length")
    print(
        f"tab {when}: JS heap {metrics['JSHeapUsedSize'] / 2**20:.1f} MB used, "
        f"{metrics['Nodes']:.0f} DOM nodes ({elements} elements, {cards} cards)"
    )


def top_functions(profile: dict[str, Any], limit: int) -> list[str]:
    """Self time per JavaScript function from a CDP sampling profile."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    deltas = profile.get("timeDeltas", [])
    self_ms: Counter[str] = Counter()
    for sample, delta in zip(profile.get("samples", []), deltas, strict=False):
        frame = nodes[sample]["callFrame"]
        where = Path(frame["url"]).name or "-"
        name = f"{frame['functionName'] or '(anonymous)'} {where}:{frame['lineNumber'] + 1}"
        if frame["functionName"] in ("(idle)", "(program)", "(garbage collector)"):
            name = frame["functionName"]
        self_ms[name] += delta / 1000
    busy = [(name, ms) for name, ms in self_ms.most_common() if name != "(idle)"]
    return [f"{ms:8.1f} ms  {name}" for name, ms in busy[:limit]]


def top_events(trace: dict[str, Any], limit: int) -> list[str]:
    """Total duration of the renderer main thread's complete events, by name."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    main_threads = {
        (event["pid"], event["tid"])
        for event in events
        if event.get("name") == "thread_name"
        and event.get("args", {}).get("name") == "CrRendererMain"
    }
    total: defaultdict[str, float] = defaultdict(float)
    for event in events:
        if event.get("ph") == "X" and (event.get("pid"), event.get("tid")) in main_threads:
            total[event["name"]] += event.get("dur", 0) / 1000
    ranked = sorted(total.items(), key=lambda item: -item[1])[:limit]
    return [f"{ms:8.1f} ms  {name}" for name, ms in ranked]


async def run(arguments: argparse.Namespace) -> None:
    count = arguments.pending
    print(pace("before"), flush=True)
    with tempfile.TemporaryDirectory(prefix="uq-page-") as folder:
        store = arguments.store or str(Path(folder) / "host.db")
        print(f"store: {arguments.store or 'SQLite (temporary file)'}; {count} pending requests")
        began = time.perf_counter()
        await fill(store, count, arguments.sessions)
        print(f"filled the store in {time.perf_counter() - began:.1f} s")
        host, url = start_host(store, wait=120)
        try:
            await replayed(url, count)
            host.send_signal(signal.SIGKILL)
            host.wait()
            began = time.perf_counter()
            host, url = start_host(store, wait=120)
            await replayed(url, count)
            seconds = time.perf_counter() - began
            print(
                figure(
                    f"restart after SIGKILL until a page has all {count}",
                    seconds,
                    TARGETS["restart"],
                )
            )
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS
                )
                await measure_page(browser, url, count, arguments.trace)
                await browser.close()
            host_share = await host_answer_seconds(url, count - ANSWERS)
            print(
                figure(
                    "the host's share of an answer (a scripted page's answer to its receipt, "
                    f"median of {ANSWERS})",
                    host_share,
                    None,
                )
            )
        finally:
            host.terminate()
            host.wait(timeout=60)
    print(pace("after"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--pending", type=int, default=10_000, help="pending requests (default 10,000)"
    )
    parser.add_argument("--sessions", type=int, default=20, help="sessions asking (default 20)")
    parser.add_argument("--store", help="the host's store (default: a temporary SQLite file)")
    parser.add_argument("--trace", help="also write the page's Chromium trace (JSON) to this file")
    arguments = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit("Debian chromium is not installed: apt-get install -y chromium")
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(run(arguments))


if __name__ == "__main__":
    main()
