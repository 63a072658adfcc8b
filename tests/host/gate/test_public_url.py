"""`--public-url`: the address people reach a host at through a proxy or a tunnel."""

from __future__ import annotations

import pytest

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.public_url import PublicUrl, public_url


@pytest.mark.parametrize(
    ("given", "base", "origin"),
    [
        ("https://uq.example.com", "https://uq.example.com/", "https://uq.example.com"),
        ("https://UQ.Example.com:443/", "https://uq.example.com/", "https://uq.example.com"),
        ("http://box.lan:8080/uq", "http://box.lan:8080/uq/", "http://box.lan:8080"),
        ("https://[::1]:9443/a/", "https://[::1]:9443/a/", "https://[::1]:9443"),
    ],
)
def test_a_public_url_is_read_as_a_browser_names_its_origin(
    given: str, base: str, origin: str
) -> None:
    assert public_url(given) == PublicUrl(base=base, origin=origin)


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("uq.example.com", "it must start with http:// or https://"),
        ("ftp://uq.example.com/", "it must start with http:// or https://"),
        ("https://uq.example.com/?token=x", "it must not carry a query"),
        ("https://uq.example.com/#inbox", "it must not carry a query or a fragment"),
        ("https://ada:pw@uq.example.com/", "it must not carry credentials"),
        ("https://uq.example.com:99999/", "Port out of range"),
    ],
)
def test_a_public_url_that_cannot_be_used_is_refused_saying_why(given: str, problem: str) -> None:
    with pytest.raises(UserQuestionError) as refused:
        public_url(given)
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert refused.value.message.startswith(f"--public-url {given!r} cannot be used: ")
    assert problem in refused.value.message


def test_links_are_made_under_the_public_base() -> None:
    address = public_url("https://uq.example.com/team/")
    assert address.link("", "s3cret-token") == "https://uq.example.com/team/?token=s3cret-token"
    assert address.link("/history") == "https://uq.example.com/team/history"
    assert address.question_link("a b/c") == "https://uq.example.com/team/q/a%20b%2Fc"
