"""The installable inbox in Chromium: a valid web app manifest with its icons, a service worker
that controls the whole host, and a page that still opens when the host is down (it says the
host is unreachable, retries, and connects once the host is back)."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.host_process import free_port
from tests.e2e.web.conftest import Host
from user_questions.host.gate.security import CONTENT_SECURITY_POLICY
from user_questions.host.web.pages import STATIC_DIR


@pytest.fixture
def own_host(tmp_path: Path) -> Iterator[Host]:
    """A host this test alone uses, since it stops it."""
    running = Host(tmp_path / "uq.db", port=free_port())
    running.start()
    yield running
    if running.process is not None and running.process.poll() is None:
        running.stop()


def test_the_manifest_is_valid_and_its_icons_are_served_without_a_token(host: Host) -> None:
    response = httpx.get(f"{host.base}/manifest.webmanifest", timeout=10)  # no token
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/manifest+json"
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    manifest: dict[str, Any] = response.json()
    assert manifest["name"] == "user-questions"
    assert manifest["display"] == "standalone"
    assert manifest["start_url"] == manifest["scope"] == "./"
    for colour in (manifest["theme_color"], manifest["background_color"]):
        assert re.fullmatch(r"#[0-9a-f]{6}", colour)
    purposes = {icon["purpose"] for icon in manifest["icons"]}
    assert purposes == {"any", "maskable"}
    sizes = set()
    for icon in manifest["icons"]:
        served = httpx.get(f"{host.base}/{icon['src']}", timeout=10)
        assert served.status_code == 200, icon
        assert served.headers["content-type"] == icon["type"]
        if icon["type"] == "image/png":
            assert served.content[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", served.content[16:24])
            assert icon["sizes"] == f"{width}x{height}"
            sizes.add(width)
    assert {192, 512} <= sizes  # what browsers need to offer the install


def test_the_service_worker_caches_every_module_the_page_loads() -> None:
    worker = (STATIC_DIR / "sw.js").read_text(encoding="utf-8")
    shell = set(re.findall(r'^  "([^"]+)",$', worker, re.M))
    modules = {"static/app.js"}
    for path in STATIC_DIR.glob("*.js"):
        imports = re.findall(r'from "\./([^"]+)"', path.read_text(encoding="utf-8"))
        if path.name not in ("history.js", "rules.js"):  # pages outside the inbox's shell
            modules |= {f"static/{name}" for name in imports}
    index = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'(?:href|src)="(static/[^"]+)"', index))
    manifest = json.loads((STATIC_DIR / "manifest.webmanifest").read_text(encoding="utf-8"))
    icons = {icon["src"] for icon in manifest["icons"]}
    assert modules | linked | icons | {"./", "manifest.webmanifest"} <= shell


def test_the_service_worker_controls_the_host_and_the_page_opens_without_it(
    browser: Browser, own_host: Host
) -> None:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(own_host.page_url)
    expect(page.locator("body")).to_have_attribute("data-connection", "open")
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == f"{own_host.base}/"
    page.reload()  # from now on the worker serves the page
    expect(page.locator("body")).to_have_attribute("data-connection", "open")
    assert page.evaluate("navigator.serviceWorker.controller !== null")

    own_host.kill()
    page.goto(f"{own_host.base}/")  # an installed app starting while its host is down
    expect(page.get_by_role("heading", name="Waiting for questions")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        re.compile(r"^Cannot reach the host\. Retrying in \d+ s…$")
    )
    assert _cached_responses_hold_no_token(page, own_host.token)

    own_host.start()  # back on the same port and store: the page connects by itself
    # "Retry now" saves waiting for the retry timer; dispatched rather than clicked, since the
    # timer may have reconnected the page (and hidden the button) already, which it ignores.
    page.locator("#retry").dispatch_event("click")
    expect(page.locator("body")).to_have_attribute("data-connection", "open")
    expect(page.get_by_role("status")).to_have_text("Connected")
    assert errors == []
    context.close()


def _cached_responses_hold_no_token(page: Page, token: str) -> bool:
    """Whether nothing the worker cached carries the token or a cookie."""
    found: list[dict[str, Any]] = page.evaluate(
        """async () => {
          const out = [];
          for (const name of await caches.keys()) {
            const cache = await caches.open(name);
            for (const request of await cache.keys()) {
              const response = await cache.match(request);
              out.push({
                url: request.url,
                cookie: response.headers.get("set-cookie"),
                body: await response.text(),
              });
            }
          }
          return out;
        }"""
    )
    assert len(found) >= 10, found
    return all(
        token not in item["url"] and token not in item["body"] and item["cookie"] is None
        for item in found
    )
