"""Browser fixtures: Debian chromium through Playwright, a real `uq serve` host, remote askers.

The host runs as a subprocess (`uq serve`, through `tests/e2e/host_process.py`) on a SQLite store
in a temp folder, one per test module, on a port chosen here so that a test can restart it in
place. The askers run in this process, each in its own kernel whose provider is a
`RemoteProvider`, on an anyio event loop in a background thread (a blocking portal): the sync
Playwright API drives the page from the main thread while the agents wait, and every test asserts
the answer the agent got.

One chromium serves the whole session; each page gets its own browser context (cookies and
sessionStorage of its own, like a separate browser).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect, sync_playwright

from tests.e2e.host_process import HostProcess, free_port
from user_questions import (
    AbortSignal,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    Context,
    UserQuestionError,
    UserQuestionService,
)
from user_questions.frames import Approval, Origin
from user_questions.providers.remote import RemoteProvider

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
RESULTS = Path(__file__).resolve().parents[3] / "test-results" / "web"
"""Where screenshots go (git-ignored), so a reviewer can look at the page after a run."""
ANSWER_SECONDS = 15.0
DESKTOP = {"width": 1000, "height": 900}
NETWORK_ERRORS = ("console: WebSocket connection to", "console: Failed to load resource")
PAGE_SOCKET = re.compile(r"/ws(\?[^/]*)?$")
"""The page's WebSocket (`/ws`, with the query asking for the batched replay), for
`page.route_web_socket`."""

expect.set_options(timeout=10_000)

Questions = Sequence[Mapping[str, Any]]


@dataclass
class Host(HostProcess):
    """`uq serve` on a fixed port and store, which a test may crash and start again."""

    @property
    def page_url(self) -> str:
        """The link `uq serve` printed: the page, with the token."""
        return self.url

    def restart(self, *args: str) -> None:
        """Crash the host (SIGKILL) and start it again on the same port and store, with `args`
        (such as `--token`) if given."""
        self.kill()
        self.args = args or self.args
        self.start()

    def rpc_id_of(self, session: str) -> str:
        """The rpcId of the one pending request of `session`."""
        ids = [
            str(frame["rpcId"])
            for frame in self.pending()
            if frame["payload"]["sessionId"] == session
        ]
        assert len(ids) == 1, f"expected one pending request for {session}, found {ids}"
        return ids[0]


async def _ask(
    host: Host,
    session: str,
    questions: Questions,
    origin: Origin | None,
    seconds: float | None,
    approval: Approval | None = None,
) -> AskUserQuestionAnswer:
    ctx = Context()
    ctx.plugin(UserQuestionService)
    items = [AskUserQuestionItem.model_validate(question) for question in questions]
    signal = None if seconds is None else AbortSignal.timeout(seconds)
    async with RemoteProvider(
        host.base, token=host.token, session=session, origin=origin, ca=host.ca
    ) as provider:
        ctx.user_questions.register_provider(provider)
        answer: AskUserQuestionAnswer = await ctx.user_questions.ask(
            AskUserQuestionRequest(questions=items, signal=signal, approval=approval)
        )
    return answer


@dataclass
class Asker:
    """Agents in this process that ask through the host and wait, as real ones would."""

    portal: BlockingPortal
    host: Host
    asks: list[Future[AskUserQuestionAnswer]] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)

    def ask(
        self,
        session: str,
        questions: Questions,
        *,
        origin: Origin | None = None,
        timeout: float | None = None,
        approval: Approval | None = None,
    ) -> Future[AskUserQuestionAnswer]:
        """Ask in the background (from `origin`, giving up after `timeout` seconds if given;
        an approval card with the call it approves, `approval`)."""
        future = self.portal.start_task_soon(
            _ask, self.host, session, questions, origin, timeout, approval
        )
        self.asks.append(future)
        self.sessions.add(session)
        return future

    def withdraw_all(self) -> None:
        """Give up every ask still waiting, and wait until no page can show them any more."""
        for future in self.asks:
            future.cancel()
        deadline = time.monotonic() + ANSWER_SECONDS
        while any(frame["payload"]["sessionId"] in self.sessions for frame in self.host.pending()):
            assert time.monotonic() < deadline, "withdrawn questions are still pending"
            time.sleep(0.05)  # polling the host under a deadline


def answer_of(future: Future[AskUserQuestionAnswer]) -> dict[str, Any]:
    """The answer the agent received, as wire JSON."""
    answer = future.result(timeout=ANSWER_SECONDS)
    data: dict[str, Any] = answer.model_dump(mode="json")
    return data


def error_of(future: Future[AskUserQuestionAnswer]) -> UserQuestionError:
    """The error the agent's ask failed with."""
    error = future.exception(timeout=ANSWER_SECONDS)
    assert isinstance(error, UserQuestionError), f"expected a UserQuestionError, got {error!r}"
    return error


@dataclass
class Inbox:
    """One browser (its own context) showing the host's page."""

    page: Page
    errors: list[str]
    """Uncaught exceptions and console errors (CSP violations included): a clean page has none."""

    def card(self, text: str) -> Locator:
        """The card whose text contains `text`, such as its session."""
        return self.page.locator(".card", has_text=text)

    def forget_network_errors(self) -> None:
        """Drop the browser's own logs of refused or failed connections, for the tests that cut
        the page off from its host on purpose; any other error still fails the test."""
        self.errors[:] = [error for error in self.errors if not error.startswith(NETWORK_ERRORS)]

    def expect_connected(self) -> None:
        expect(self.page.locator("body")).to_have_attribute("data-connection", "open")


# Package scope, not session: the sync Playwright API keeps an event loop running on the main
# thread while it is open, which would break every anyio test collected after these.
@pytest.fixture(scope="package")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as running:
        yield running
        # A failed test's unfinished task (an ask nobody answered) is cancelled, not waited
        # for: waiting would hang the run until its timeout, hiding which test failed.
        running.call(running.stop, True)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed: apt-get install -y chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    running = Host(tmp_path_factory.mktemp("host") / "uq.db", port=free_port())
    running.start()
    yield running
    running.stop()


@pytest.fixture
def asker(portal: BlockingPortal, host: Host) -> Iterator[Asker]:
    agents = Asker(portal, host)
    yield agents
    agents.withdraw_all()


@pytest.fixture
def session(request: pytest.FixtureRequest) -> str:
    """A session name no other test uses, so a test finds its own card."""
    return f"{request.node.name.removeprefix('test_')[:32]}-{secrets.token_hex(3)}"


OpenInbox = Callable[..., Inbox]


@pytest.fixture
def open_inbox(browser: Browser, host: Host) -> Iterator[OpenInbox]:
    """Open the page in a new browser context (`before(page)` runs first, to install routes);
    other keyword arguments go to `new_context`."""
    with inboxes(browser, host.page_url) as open_page:
        yield open_page


@contextlib.contextmanager
def inboxes(browser: Browser, url: str) -> Iterator[OpenInbox]:
    """Opens the page at `url` in new contexts of `browser`, as `open_inbox` does; closes them
    at the end, and fails if any page reported an error."""
    contexts: list[tuple[BrowserContext, Inbox]] = []

    def open_page(before: Callable[[Page], None] | None = None, **options: Any) -> Inbox:
        options.setdefault("viewport", DESKTOP)
        context = browser.new_context(**options)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        page.on("console", lambda message: _console(errors, message.type, message.text))
        if before is not None:
            before(page)
        page.goto(url)
        inbox = Inbox(page, errors)
        inbox.expect_connected()
        contexts.append((context, inbox))
        return inbox

    yield open_page
    for context, inbox in contexts:
        context.close()
        assert inbox.errors == [], f"the page reported errors: {inbox.errors}"


def _console(errors: list[str], kind: str, text: str) -> None:
    if kind == "error":
        errors.append(f"console: {text}")
