"""Reading the host of a URL as a browser reads it: the WHATWG URL Standard's parser, for the
part a domain rule names.

What the standard's basic URL parser does up to the host, for a URL with no base: leading and
trailing C0 controls and spaces taken off, tabs and newlines taken out anywhere, the scheme;
for the special schemes, any run of `/` and `\\` before the authority, the authority ending at
`/`, `\\`, `?` or `#`, userinfo up to its last `@`, the port (digits, at most 65535; the
scheme's default port is no port); the host percent-decoded, made ASCII with UTS #46
(`idna`, non-transitional, without the STD3 rules), checked for the code points a domain may
not hold, and read as an IPv4 address when its last label is a number (`0x7f.1` is
127.0.0.1), or as an IPv6 address inside brackets. The host is given as the standard
serialises it, `URL.hostname`.

`idna` checks more than UTS #46 asks a browser to (IDNA 2008's contextual rules, label
lengths): a name it refuses is a host that cannot be read, never one read differently, and
no rule allows it. Only the schemes whose URLs have a host a domain rule can name are read:
`http`, `https`, `ws`, `wss`, `ftp`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_PORTS", "UrlError", "WebAddress", "read_host", "read_url"]

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
"""The schemes read, and the port each has when none is written."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN = _FORBIDDEN_HOST | frozenset(chr(c) for c in range(0x20)) | {"%", "\x7f"}
_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


class UrlError(ValueError):
    """A URL whose host cannot be read (a browser would refuse it, or read it another way than
    this reader can be sure of). Its message says why."""


@dataclass(frozen=True, slots=True)
class WebAddress:
    """What a browser makes of a URL's scheme, host and port."""

    scheme: str
    host: str
    """As `URL.hostname`: lowercase ASCII, an IPv4 address dotted, an IPv6 one in brackets."""
    port: int | None = None
    """Written and not the scheme's default; `None` otherwise."""


def read_url(text: str) -> WebAddress:
    """The scheme, host and port of the URL `text`, as a browser reads them.

    Raises:
        UrlError: for a URL without a scheme this reader knows, or whose host or port a
            browser would refuse.
    """
    # A URL is a string of scalar values: a lone surrogate is U+FFFD (which no host holds).
    url = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    url = url.strip("".join(chr(c) for c in range(0x21)))
    url = url.replace("\t", "").replace("\n", "").replace("\r", "")
    colon = url.find(":")
    if colon < 0 or _SCHEME.fullmatch(url[:colon]) is None:
        raise UrlError("it has no scheme (a URL such as https://example.com/)")
    scheme = url[:colon].lower()
    if scheme not in DEFAULT_PORTS:
        raise UrlError(f"a {scheme}: URL has no host a domain rule names")
    rest = url[colon + 1 :].lstrip("/\\")
    end = len(rest)
    for stop in "/\\?#":
        found = rest.find(stop)
        if 0 <= found < end:
            end = found
    authority = rest[:end]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    host_text, port_text = _host_and_port(authority)
    if not host_text:
        raise UrlError("it has no host")
    port = None
    if port_text:
        if not port_text.isascii() or not port_text.isdigit():
            raise UrlError(f"its port {port_text!r} is not a number")
        port = int(port_text)
        if port > 65535:
            raise UrlError(f"its port {port} is more than 65535")
        if port == DEFAULT_PORTS[scheme]:
            port = None
    return WebAddress(scheme, read_host(host_text), port)


def read_host(text: str) -> str:
    """A special URL's host as the standard's host parser reads it (`URL.hostname`).

    Raises:
        UrlError: when a browser would refuse it, or `idna` cannot make it ASCII.
    """
    if text.startswith("["):
        if not text.endswith("]"):
            raise UrlError("its IPv6 address has no closing bracket")
        return f"[{_ipv6_text(_ipv6(text[1:-1]))}]"
    try:
        domain = _percent_decoded(text).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UrlError("its host is not UTF-8 once percent-decoded") from error
    ascii_domain = _to_ascii(domain)
    for character in ascii_domain:
        if character in _FORBIDDEN_DOMAIN:
            raise UrlError(f"its host holds {character!r}, which a domain may not")
    if _ends_in_number(ascii_domain):
        return _ipv4_text(_ipv4(ascii_domain))
    return ascii_domain


def _host_and_port(authority: str) -> tuple[str, str]:
    inside = False
    for index, character in enumerate(authority):
        if character == "[":
            inside = True
        elif character == "]":
            inside = False
        elif character == ":" and not inside:
            return authority[:index], authority[index + 1 :]
    return authority, ""


def _percent_decoded(text: str) -> bytes:
    return _PERCENT.sub(lambda found: bytes([int(found[1], 16)]), text.encode("utf-8"))


def _to_ascii(domain: str) -> str:
    """UTS #46 ToASCII as the standard asks (non-transitional, no STD3 rules, no hyphen or
    length checks), for a name `idna` accepts."""
    lowered = domain.lower() if domain.isascii() else domain
    if domain.isascii() and not any(label.startswith("xn--") for label in lowered.split(".")):
        return lowered
    import idna  # only for international names

    try:
        return idna.encode(domain, uts46=True, std3_rules=False, transitional=False).decode()
    except (idna.IDNAError, UnicodeError, ValueError) as error:
        raise UrlError(f"its host {domain!r} cannot be made ASCII: {error}") from error


def _ends_in_number(domain: str) -> bool:
    labels = domain.split(".")
    if labels[-1] == "":
        if len(labels) == 1:
            return False
        labels.pop()
    last = labels[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return re.fullmatch(r"0[xX][0-9A-Fa-f]*", last) is not None


def _ipv4(domain: str) -> int:
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        raise UrlError("its IPv4 address has more than four parts")
    numbers = [_ipv4_number(part) for part in parts]
    if any(number > 255 for number in numbers[:-1]):
        raise UrlError("a part of its IPv4 address is more than 255")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise UrlError("its IPv4 address is out of range")
    address = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        address += number * 256 ** (3 - index)
    return address


def _ipv4_number(part: str) -> int:
    if not part:
        raise UrlError("its IPv4 address has an empty part")
    radix = 10
    if part[:2] in ("0x", "0X"):
        radix, part = 16, part[2:]
    elif len(part) > 1 and part.startswith("0"):
        radix, part = 8, part[1:]
    if not part:
        return 0
    digits = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[radix]
    if any(character not in digits for character in part):
        raise UrlError(f"{part!r} is not a number of its IPv4 address")
    return int(part, radix)


def _ipv4_text(address: int) -> str:
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))


def _ipv6(text: str) -> list[int]:
    """The standard's IPv6 parser: eight 16-bit pieces."""
    pieces = [0] * 8
    index, compress, pointer = 0, None, 0
    length = len(text)

    def at(position: int) -> str:
        return text[position] if position < length else ""

    if at(pointer) == ":":
        if at(pointer + 1) != ":":
            raise UrlError("its IPv6 address starts with a single colon")
        pointer += 2
        index += 1
        compress = index
    while at(pointer):
        if index == 8:
            raise UrlError("its IPv6 address has too many pieces")
        if at(pointer) == ":":
            if compress is not None:
                raise UrlError("its IPv6 address compresses twice")
            pointer += 1
            index += 1
            compress = index
            continue
        value = digits = 0
        while digits < 4 and at(pointer) and at(pointer) in "0123456789abcdefABCDEF":
            value = value * 16 + int(at(pointer), 16)
            pointer += 1
            digits += 1
        if at(pointer) == ".":
            if digits == 0:
                raise UrlError("its IPv6 address has an empty IPv4 part")
            pointer -= digits
            if index > 6:
                raise UrlError("its IPv6 address has no room for its IPv4 part")
            index = _ipv4_in_ipv6(text, pointer, pieces, index)
            pointer = length
            break
        if at(pointer) == ":":
            pointer += 1
            if not at(pointer):
                raise UrlError("its IPv6 address ends with a colon")
        elif at(pointer):
            raise UrlError(f"its IPv6 address holds {at(pointer)!r}")
        pieces[index] = value
        index += 1
    if compress is not None:
        swaps = index - compress
        index = 7
        while index != 0 and swaps > 0:
            pieces[index], pieces[compress + swaps - 1] = (
                pieces[compress + swaps - 1],
                pieces[index],
            )
            index -= 1
            swaps -= 1
    elif index != 8:
        raise UrlError("its IPv6 address has too few pieces")
    return pieces


def _ipv4_in_ipv6(text: str, pointer: int, pieces: list[int], index: int) -> int:
    seen = 0
    length = len(text)
    while pointer < length:
        piece: int | None = None
        if seen > 0:
            if text[pointer] == "." and seen < 4:
                pointer += 1
            else:
                raise UrlError("its IPv6 address has a bad IPv4 part")
        if pointer >= length or not text[pointer].isascii() or not text[pointer].isdigit():
            raise UrlError("its IPv6 address has a bad IPv4 part")
        while pointer < length and text[pointer].isascii() and text[pointer].isdigit():
            number = int(text[pointer])
            if piece is None:
                piece = number
            elif piece == 0:
                raise UrlError("its IPv6 address's IPv4 part has a leading zero")
            else:
                piece = piece * 10 + number
            if piece > 255:
                raise UrlError("its IPv6 address's IPv4 part is out of range")
            pointer += 1
        assert piece is not None
        pieces[index] = pieces[index] * 256 + piece
        seen += 1
        if seen in (2, 4):
            index += 1
    if seen != 4:
        raise UrlError("its IPv6 address's IPv4 part has too few numbers")
    return index


def _ipv6_text(pieces: list[int]) -> str:
    """The standard's IPv6 serialiser: the first longest run of two or more zero pieces
    compressed, lowercase hexadecimal."""
    start, longest = None, 1
    run_start, run = None, 0
    for index, piece in enumerate([*pieces, 1]):
        if piece == 0 and index < 8:
            run_start = index if run == 0 else run_start
            run += 1
            continue
        if run > longest:
            start, longest = run_start, run
        run = 0
    out = ""
    ignoring = False
    for index, piece in enumerate(pieces):
        if ignoring and piece == 0:
            continue
        ignoring = False
        if index == start:
            out += "::" if index == 0 else ":"
            ignoring = True
            continue
        out += f"{piece:x}"
        if index != 7:
            out += ":"
    return out
