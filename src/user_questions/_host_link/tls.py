"""TLS contexts: the one place the host's certificate and its clients' trust are set up.

Built on the standard library's `ssl`. A host serves https and wss with `server_context(cert, key)`
(`uq serve --tls-cert --tls-key`); every client of a host (`RemoteProvider`, `connect()`, `uq
pending`, `uq answer`, `uq history`, `uq mcp`, `uq hook`, `uq acp`) verifies the host's certificate
with `client_context(ca)`: the system's certificate authorities, which OpenSSL reads from
`SSL_CERT_FILE` and `SSL_CERT_DIR` when they are set, and `ca`, a private authority's certificate
(`--ca FILE`, `ca=`), trusted in addition to them. Certificates are always verified, host names
included: there is no switch to turn that off.
"""

from __future__ import annotations

import os
import ssl

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["client_context", "server_context", "untrusted", "wants_tls"]


def wants_tls(url: str) -> bool:
    """Whether `url` is reached over TLS (`https://` or `wss://`)."""
    return url.lower().startswith(("https://", "wss://"))


def client_context(ca: str | os.PathLike[str] | None = None) -> ssl.SSLContext:
    """A context that verifies a host's certificate and name against the system's authorities
    (or `SSL_CERT_FILE` / `SSL_CERT_DIR`) and, when given, the authority in the PEM file `ca`.

    Raises:
        UserQuestionError: `BAD_REQUEST` when `ca` cannot be read as PEM certificates.
    """
    context = ssl.create_default_context()
    if ca is not None:
        try:
            context.load_verify_locations(cafile=os.fspath(ca))
        except (OSError, ssl.SSLError, ValueError) as error:
            raise UserQuestionError(
                f"cannot use the CA file {os.fspath(ca)!r}: {_reason(error)}",
                ErrorCode.BAD_REQUEST,
            ) from None
    return context


def untrusted(url: str, error: BaseException) -> str | None:
    """What to tell the user when `error` (or an exception it was raised from) is a host
    certificate that could not be verified; `None` for any other failure."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ssl.SSLCertVerificationError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    reason = getattr(cause, "verify_message", None) or cause.strerror or "certificate verify failed"
    return (
        f"the certificate of {url} cannot be verified ({reason}); trust the "
        "authority that signed it with --ca FILE (ca= in Python) or SSL_CERT_FILE"
    )


def server_context(cert: str | os.PathLike[str], key: str | os.PathLike[str]) -> ssl.SSLContext:
    """A host's context: the certificate chain in the PEM file `cert` (the server's certificate
    first, then its intermediates) and its private key in the PEM file `key`; TLS 1.2 or later,
    HTTP/1.1.

    Raises:
        UserQuestionError: `BAD_REQUEST`, naming the file and what is wrong with it.
    """
    _check_pem(cert, "--tls-cert", "CERTIFICATE", "certificate")
    _check_pem(key, "--tls-key", "PRIVATE KEY", "private key")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(os.fspath(cert), os.fspath(key), password=_no_password)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise UserQuestionError(
            f"cannot serve TLS with --tls-cert {os.fspath(cert)!r} and --tls-key "
            f"{os.fspath(key)!r}: {_reason(error)}",
            ErrorCode.BAD_REQUEST,
        ) from None
    return context


def _no_password() -> bytes:
    """Stands in for OpenSSL's prompt, which would wait on the terminal of a service."""
    raise ValueError("the key is encrypted; give a key without a passphrase")


def _check_pem(path: str | os.PathLike[str], flag: str, label: str, noun: str) -> None:
    """Refuse a file that cannot be read or holds no PEM block of the kind wanted, saying so."""
    try:
        with open(path, "rb") as file:
            text = file.read(1024 * 1024)
    except OSError as error:
        problem = error.strerror or str(error)
    else:
        if f"{label}-----".encode() in text:
            return
        problem = f"it holds no PEM {noun} (-----BEGIN ...{label}-----)"
    raise UserQuestionError(
        f"cannot use {flag} {os.fspath(path)!r}: {problem}", ErrorCode.BAD_REQUEST
    )


def _reason(error: Exception) -> str:
    """What OpenSSL or the file system said, on one line."""
    if isinstance(error, ssl.SSLError) and error.reason == "KEY_VALUES_MISMATCH":
        return "the key does not belong to the certificate"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error).splitlines()[0] if str(error) else type(error).__name__
