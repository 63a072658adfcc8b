"""The URL reader reads a host as a browser does: the WHATWG URL test data's host cases, a table
of the forms a rule must not be fooled by, and a differential test against Node's `URL` (its
parser follows the standard): whenever the reader reads a host, Node reads the same one."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.host.rules.url_cases import HOST_CASES
from user_questions.host.rules.urls import UrlError, read_host, read_url

NODE = shutil.which("node")
STRICTER = {"ftp://%e2%98%83", "https://%e2%98%83"}
"""Cases a browser reads and this reader refuses: `idna` holds to IDNA 2008, which has no
symbols such as U+2603 in a name (a host not read is never allowed: the safe side)."""


def host(url: str) -> str | None:
    try:
        return read_url(url).host
    except UrlError:
        return None


@pytest.mark.parametrize(("url", "expected"), HOST_CASES)
def test_the_url_standards_host_cases(url: str, expected: str | None) -> None:
    if url in STRICTER:
        assert host(url) is None
    else:
        assert host(url) == expected


FORMS = [
    ("https://evil.io\\@example.com/", "evil.io"),
    ("https://example.com@evil.io/", "evil.io"),
    ("https://example.com:pass@evil.io/", "evil.io"),
    ("https://a@b@evil.io/", "evil.io"),
    ("https:\\\\evil.io\\x", "evil.io"),
    ("https:evil.io", "evil.io"),
    ("https:////evil.io", "evil.io"),
    ("HTTPS://EVIL.IO./", "evil.io."),
    ("https://%65vil.io/", "evil.io"),
    ("https://evil.io%2f@example.com/", "example.com"),
    ("https://example.com%2f@evil.io/", "evil.io"),
    ("https://evil.io%2fexample.com/", None),
    ("  https://evil.io  ", "evil.io"),
    ("https://ev\til\n.io/", "evil.io"),
    ("https://0x7f.1/", "127.0.0.1"),
    ("https://0177.0.0.1/", "127.0.0.1"),
    ("https://2130706433/", "127.0.0.1"),
    ("https://127.1/", "127.0.0.1"),
    ("https://[::1]:8443/", "[::1]"),
    ("https://[0:0:0:0:0:ffff:7f00:1]/", "[::ffff:7f00:1]"),
    ("https://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
    ("https://bücher.de/", "xn--bcher-kva.de"),
    ("https://ＥＸＡＭＰＬＥ。com/", "example.com"),
    ("https://example.com:443/", "example.com"),
    ("https://example.com:99999/", None),
    ("https://example.com:x/", None),
    ("https://256.0.0.1/", None),
    ("https://1.2.3.4.5/", None),
    ("https://exa mple.com/", None),
    ("https:///", None),
    ("https://user@/", None),
    ("example.com/docs", None),
    ("javascript:alert(1)", None),
    ("file:///etc/passwd", None),
    ("mailto:a@example.com", None),
]


@pytest.mark.parametrize(("url", "expected"), FORMS)
def test_the_forms_a_domain_rule_must_not_be_fooled_by(url: str, expected: str | None) -> None:
    assert host(url) == expected


def test_a_port_is_read_and_the_schemes_default_one_is_no_port() -> None:
    assert read_url("https://example.com:443/").port is None
    assert read_url("https://example.com:8443/").port == 8443
    assert read_url("ws://example.com:80").port is None
    with pytest.raises(UrlError, match="65535"):
        read_url("https://example.com:65536/")


def test_a_host_read_alone_is_made_ascii_and_ip_addresses_are_written_as_a_browser_does() -> None:
    assert read_host("EXAMPLE.com") == "example.com"
    assert read_host("0x7f.0.0.1") == "127.0.0.1"
    assert read_host("[1:0:0:0:0:0:0:2]") == "[1::2]"
    with pytest.raises(UrlError):
        read_host("example.com:80")
    with pytest.raises(UrlError):
        read_host("[::1%25eth0]")


# -- against Node ---------------------------------------------------------------------------------

_NODE_HOSTS = """
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const hosts = JSON.parse(input).map((text) => {
    try { return new URL(text).hostname; } catch { return null; }
  });
  process.stdout.write(JSON.stringify(hosts));
});
"""
_PIECES = [
    "http://", "https://", "HTTPS://", "ws:", "ftp:/", "https:\\\\", "https:", "\\", "/", "@",
    ":", "user:pass@", "evil.io", "example.com", "EXAMPLE.COM.", "xn--bcher-kva", "bücher.de",
    "%65xample.com", "0x7f.1", "127.0.0.1", "0177.0.0.1", "1.2.3.4.5", "256.0.0.1", "4294967295",
    "4294967296", "[::1]", "[::ffff:1.2.3.4]", "[1:2::3]", "[0:0:0:0:0:0:0:1]", "[::1%25eth0]",
    ":443", ":80", ":8080", ":99999", "?q", "#f", "/path", "\t", "\n", " ", "%2e", "%41", "%00",
    "%zz", "a..b", "。", "ＥＸＡＭＰＬＥ", "ß", "\u200d", "a-", "-a", "xn--a", "%C3%BC", "0x", "09",
]  # fmt: skip


def node_hosts(urls: list[str]) -> list[str | None]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", _NODE_HOSTS],
        input=json.dumps(urls),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    hosts: list[str | None] = json.loads(done.stdout)
    return hosts


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@settings(max_examples=20, derandomize=True, database=None, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(_PIECES), min_size=2, max_size=7).map("".join),
        min_size=200,
        max_size=200,
    )
)
def test_whenever_the_reader_reads_a_host_node_reads_the_same_one(urls: list[str]) -> None:
    for url, theirs in zip(urls, node_hosts(urls), strict=True):
        ours = host(url)
        assert ours is None or ours == theirs, f"{url!r}: read {ours!r}, Node reads {theirs!r}"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_reads_the_standards_host_cases_as_the_table_says() -> None:
    """The oracle agrees with the transcribed table (so the table was transcribed right)."""
    urls = [url for url, _ in HOST_CASES]
    assert node_hosts(urls) == [expected for _, expected in HOST_CASES]
