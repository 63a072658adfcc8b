"""A host as a team runs it: in Chromium over TLS, directly (`uq serve --tls-cert`) and behind a
real nginx running the site of docs/deploy.md.

nginx is Debian's package (`scripts/test.sh` installs it), started by the test on loopback with
its own configuration, pid, logs and temp files in a temp folder: the site is read from
docs/deploy.md, its names, ports and certificate paths replaced by the test's, so the site the
docs give is the site that is tested. Behind it runs a real `uq serve --public-url ...
--trust-proxy 127.0.0.1 --log-format json`, whose log the test reads for the client address it
recorded. Chromium trusts the test's authority (`tests/e2e/certificates.py`); the askers are
`RemoteProvider`s given the authority (`ca=`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import BlockingPortal
from playwright.sync_api import Browser, expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.certificates import Certificates, make_certificates
from tests.e2e.host_process import ROOT, free_port
from tests.e2e.web.conftest import CHROMIUM, CHROMIUM_ARGS, Asker, Host, answer_of, inboxes
from user_questions._host_link.tls import client_context

DEPLOY = ROOT / "docs" / "deploy.md"
STARTUP_SECONDS = 15.0
SHIP = {"id": "ship", "question": "Ship it?", "options": [{"label": "Ship"}, {"label": "Wait"}]}
SPOOFED = "203.0.113.77"
"""The address a client writes into X-Forwarded-For, hoping to be recorded as it."""


def documented_site() -> str:
    """The nginx site of docs/deploy.md: the nginx block under "Behind nginx"."""
    found = re.search(r"^## Behind nginx\n.*?^```nginx\n(.*?)^```", DEPLOY.read_text(), re.M | re.S)
    assert found, "docs/deploy.md has no nginx site under '## Behind nginx'"
    return found.group(1)


def site_on_loopback(
    site: str, *, http: int, https: int, upstream: int, certs: Certificates
) -> str:
    """`site` with the test's ports and certificate files in place of the documented ones;
    each documented value must be there exactly once, so the docs cannot drift from the test."""
    replacements = {
        "listen 80;": f"listen 127.0.0.1:{http};",
        "listen 443 ssl;": f"listen 127.0.0.1:{https} ssl;",
        "/etc/letsencrypt/live/uq.example.com/fullchain.pem": str(certs.chain),
        "/etc/letsencrypt/live/uq.example.com/privkey.pem": str(certs.key),
        "proxy_pass http://127.0.0.1:8765;": f"proxy_pass http://127.0.0.1:{upstream};",
    }
    for documented, ours in replacements.items():
        assert site.count(documented) == 1, f"docs/deploy.md's site should have {documented!r}"
        site = site.replace(documented, ours)
    return site


@dataclass
class Nginx:
    """Debian's nginx, run in the foreground from `folder` with its own configuration."""

    folder: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self, site: str, port: int) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(binary).exists():
            pytest.skip("nginx is not installed: apt-get install -y nginx (scripts/test.sh does)")
        (self.folder / "site.conf").write_text(site)
        # As root, workers would run as nobody, who cannot enter the test's private folders.
        user = "user root;" if os.geteuid() == 0 else ""
        temp = "\n".join(
            f"    {kind}_temp_path {self.folder / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (self.folder / "nginx.conf").write_text(
            f"{user}\nworker_processes 1;\npid {self.folder / 'nginx.pid'};\n"
            f"events {{ worker_connections 256; }}\n"
            f"http {{\n    access_log {self.folder / 'access.log'};\n{temp}\n"
            f"    include {self.folder / 'site.conf'};\n}}\n"
        )
        error_log = self.folder / "error.log"
        config = self.folder / "nginx.conf"
        self.process = subprocess.Popen(
            [
                binary,
                "-p",
                f"{self.folder}/",
                "-c",
                str(config),
                "-e",
                str(error_log),
                "-g",
                "daemon off;",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _accepts(port):
            log = error_log.read_text() if error_log.exists() else ""
            assert self.process.poll() is None, f"nginx did not start:\n{log}"
            assert time.monotonic() < deadline, f"nginx did not listen on {port}:\n{log}"
            time.sleep(0.05)  # nginx says nothing when it listens; poll the port under a deadline

    def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGQUIT)  # graceful: finish requests, then exit
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="module")
def tls_browser(browser: Browser, certs: Certificates) -> Iterator[Browser]:
    """Chromium that trusts the test's authority."""
    trusting = [*CHROMIUM_ARGS, f"--ignore-certificate-errors-spki-list={certs.spki}"]
    launched = browser.browser_type.launch(executable_path=CHROMIUM, args=trusting)
    yield launched
    launched.close()


@dataclass
class Proxied:
    """A host behind nginx: `public` is the host as people reach it (through nginx), `upstream`
    the `uq serve` process behind it, `log` its JSON log."""

    public: Host
    upstream: Host
    nginx: Nginx
    http_port: int
    log: Path

    def logged(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory, certs: Certificates) -> Iterator[Proxied]:
    folder = tmp_path_factory.mktemp("nginx")
    http, https, upstream_port = free_port(), free_port(), free_port()
    log = folder / "host.log"
    upstream = Host(
        folder / "uq.db",
        port=upstream_port,
        log=log,
        args=(
            "--public-url", f"https://127.0.0.1:{https}/",
            "--trust-proxy", "127.0.0.1",
            "--log-format", "json",
        ),
    )  # fmt: skip
    upstream.start()
    nginx = Nginx(folder)
    try:
        site = site_on_loopback(
            documented_site(), http=http, https=https, upstream=upstream_port, certs=certs
        )
        nginx.start(site, https)
        # The URL the host printed is the public one: every helper of `public` goes through nginx.
        public = Host(None, url=upstream.url, verify=client_context(certs.ca), ca=certs.ca)
        yield Proxied(public, upstream, nginx, http, log)
    finally:
        if nginx.process is not None:
            nginx.stop()
        upstream.stop()


def test_the_host_prints_its_public_url_and_knows_it_is_served_over_https(
    proxied: Proxied,
) -> None:
    public = proxied.public
    assert proxied.upstream.url.startswith(f"{public.base}/?token=")
    assert public.base.startswith("https://127.0.0.1:")
    page = httpx.get(public.url, verify=client_context(public.ca), timeout=10)
    assert page.headers["set-cookie"].endswith("; Secure")  # X-Forwarded-Proto: https


def test_the_page_through_nginx_answers_an_asker_through_nginx(
    proxied: Proxied, tls_browser: Browser, portal: BlockingPortal, session: str
) -> None:
    asker = Asker(portal, proxied.public)
    try:
        with inboxes(tls_browser, proxied.public.page_url) as open_inbox:
            inbox = open_inbox()  # its WebSocket is open: the upgrade went through nginx
            asked = asker.ask(session, [SHIP])
            card = inbox.card(session)
            card.locator(".option", has_text="Wait").click()
            card.get_by_role("button", name="Submit").click()
            assert answer_of(asked) == {"answers": [{"id": "ship", "selected": ["Wait"]}]}
            expect(card).to_have_count(0)
    finally:
        asker.withdraw_all()


def test_plain_http_is_sent_to_https(proxied: Proxied) -> None:
    moved = httpx.get(f"http://127.0.0.1:{proxied.http_port}/history?x=1", timeout=10)
    assert moved.status_code == 301
    assert moved.headers["location"] == "https://127.0.0.1/history?x=1"


def test_a_foreign_origin_is_refused_through_nginx(proxied: Proxied) -> None:
    public = proxied.public
    cookie = {"Cookie": f"uq_token={public.token}"}
    socket_url = public.base.replace("https", "wss", 1) + "/ws"
    tls = client_context(public.ca)
    foreign = {"Origin": "https://evil.example", **cookie}
    with pytest.raises(InvalidStatus) as refused:
        connect(socket_url, additional_headers=foreign, ssl=tls)
    assert refused.value.response.status_code == 403
    with connect(socket_url, additional_headers={"Origin": public.base, **cookie}, ssl=tls):
        pass  # the public origin is the host's own
    dismissal = {
        "type": "client-response",
        "rpcId": "nothing",
        "result": {"ok": False, "error": {"code": "cancelled", "message": "x"}},
    }
    posted = httpx.post(
        f"{public.base}/api/respond",
        json=dismissal,
        headers=foreign,
        verify=tls,
        timeout=10,
    )
    assert posted.status_code == 403
    assert posted.json()["error"]["code"] == "FORBIDDEN_ORIGIN"


def test_a_spoofed_forwarded_for_is_never_the_recorded_client(proxied: Proxied) -> None:
    public, upstream = proxied.public, proxied.upstream
    tls = client_context(public.ca)
    spoof = {"X-Forwarded-For": SPOOFED, **public.auth}

    def get(url: str, source: str, headers: dict[str, str]) -> None:
        transport = httpx.HTTPTransport(local_address=source, verify=tls)
        with httpx.Client(transport=transport, timeout=10) as client:
            assert client.get(url, headers=headers).status_code == 200

    # Through nginx, from 127.0.0.4: nginx's X-Forwarded-For names the client, and is believed.
    get(f"{public.base}/healthz", "127.0.0.4", {})
    # Through nginx, from 127.0.0.3, lying: nginx appends what it saw; the lie stays on the left.
    get(f"{public.base}/api/history", "127.0.0.3", spoof)
    # Straight to the host, from 127.0.0.2, lying: not a trusted proxy, so not believed at all.
    get(f"{upstream.base}/readyz", "127.0.0.2", spoof)
    paths = ("/healthz", "/api/history", "/readyz")
    deadline = time.monotonic() + 10
    while True:  # each request's line is written once its response has gone: it may lag
        recorded = {
            line["path"]: line["client"]
            for line in proxied.logged()
            if line.get("event") == "request"
        }
        if set(paths) <= set(recorded) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert {path: recorded.get(path) for path in paths} == {
        "/healthz": "127.0.0.4",
        "/api/history": "127.0.0.3",
        "/readyz": "127.0.0.2",
    }
    assert SPOOFED not in proxied.log.read_text()


# -- TLS without a proxy ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_host(tmp_path_factory: pytest.TempPathFactory, certs: Certificates) -> Iterator[Host]:
    running = Host(
        tmp_path_factory.mktemp("tls-host") / "uq.db",
        port=free_port(),
        args=("--tls-cert", str(certs.chain), "--tls-key", str(certs.key)),
        verify=client_context(certs.ca),
        ca=certs.ca,
    )
    running.start()
    yield running
    running.stop()


def test_chromium_answers_over_https_and_wss_straight_from_the_host(
    tls_host: Host, tls_browser: Browser, portal: BlockingPortal, session: str
) -> None:
    assert tls_host.page_url.startswith("https://127.0.0.1:")
    asker = Asker(portal, tls_host)
    try:
        with inboxes(tls_browser, tls_host.page_url) as open_inbox:
            inbox = open_inbox()
            asked = asker.ask(session, [SHIP])
            card = inbox.card(session)
            card.locator(".option", has_text="Ship").click()
            card.get_by_role("button", name="Submit").click()
            assert answer_of(asked) == {"answers": [{"id": "ship", "selected": ["Ship"]}]}
    finally:
        asker.withdraw_all()
