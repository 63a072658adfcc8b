"""TLS contexts: a host's certificate is checked before anything listens, and clients verify
hosts against the system's authorities and a private one, with certificates made by trustme."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from cryptography.hazmat.primitives import serialization

from user_questions._host_link.tls import client_context, server_context, untrusted, wants_tls
from user_questions.errors import ErrorCode, UserQuestionError


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A CA, a certificate for 127.0.0.1 and its key, and files that are none of those."""
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    named = {
        "ca": tmp_path / "ca.pem",
        "cert": tmp_path / "cert.pem",
        "key": tmp_path / "key.pem",
        "other key": tmp_path / "other-key.pem",
        "encrypted key": tmp_path / "encrypted-key.pem",
        "junk": tmp_path / "junk.pem",
    }
    ca.cert_pem.write_to_path(str(named["ca"]))
    named["cert"].write_bytes(b"".join(pem.bytes() for pem in leaf.cert_chain_pems))
    leaf.private_key_pem.write_to_path(str(named["key"]))
    trustme.CA().issue_cert("x.test").private_key_pem.write_to_path(str(named["other key"]))
    key = serialization.load_pem_private_key(leaf.private_key_pem.bytes(), None)
    named["encrypted key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        )
    )
    named["junk"].write_text("not a certificate\n")
    return named


@pytest.mark.parametrize(
    ("cert", "key", "message"),
    [
        ("junk", "key", "cannot use --tls-cert '{junk}': it holds no PEM certificate"),
        ("key", "key", "cannot use --tls-cert '{key}': it holds no PEM certificate"),
        ("cert", "cert", "cannot use --tls-key '{cert}': it holds no PEM private key"),
        ("missing", "key", "cannot use --tls-cert '{missing}': No such file or directory"),
        ("cert", "other key", "--tls-key '{other key}': the key does not belong to the cert"),
        ("cert", "encrypted key", "the key is encrypted; give a key without a passphrase"),
    ],
)
def test_a_certificate_or_key_that_cannot_serve_is_one_line_saying_which_and_why(
    files: dict[str, Path], cert: str, key: str, message: str
) -> None:
    paths = {name: str(path) for name, path in files.items()}
    paths["missing"] = str(files["ca"].parent / "missing.pem")
    with pytest.raises(UserQuestionError) as refused:
        server_context(paths[cert], paths[key])
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert message.format(**paths) in refused.value.message
    assert "\n" not in refused.value.message


def test_a_ca_file_that_cannot_be_read_is_bad_input(files: dict[str, Path]) -> None:
    for name, problem in (("junk", "no certificate"), ("missing", "No such file")):
        path = files["ca"].parent / f"{name}.pem"
        with pytest.raises(UserQuestionError) as refused:
            client_context(path)
        assert refused.value.code == ErrorCode.BAD_REQUEST
        assert refused.value.message.startswith(f"cannot use the CA file '{path}': ")
        assert problem in refused.value.message


@pytest.fixture
def tls_server(files: dict[str, Path]) -> Iterator[int]:
    """A TLS server on loopback with the certificate, accepting handshakes until the test ends."""
    context = server_context(files["cert"], files["key"])
    listener = socket.create_server(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(connection, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass  # a client that did not trust us

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield port
    listener.close()


def handshake(context: ssl.SSLContext, port: int, name: str = "127.0.0.1") -> None:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=name),
    ):
        pass


def test_a_client_trusts_a_private_ca_only_when_told_to(
    files: dict[str, Path], tls_server: int
) -> None:
    handshake(client_context(files["ca"]), tls_server)
    with pytest.raises(ssl.SSLCertVerificationError) as refused:
        handshake(client_context(), tls_server)
    message = untrusted("https://127.0.0.1/", refused.value)
    assert message is not None
    assert message.startswith("the certificate of https://127.0.0.1/ cannot be verified (")
    assert "--ca FILE" in message
    assert "SSL_CERT_FILE" in message


def test_the_name_is_verified_too(files: dict[str, Path], tls_server: int) -> None:
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(client_context(files["ca"]), tls_server, name="uq.example.com")


def test_ssl_cert_file_is_the_systems_trust_when_set(
    files: dict[str, Path], tls_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(files["ca"]))
    handshake(client_context(), tls_server)


def test_a_failure_that_is_not_a_certificate_is_not_called_one() -> None:
    assert untrusted("https://x/", ConnectionRefusedError("refused")) is None
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = ssl.SSLCertVerificationError(1, "certificate verify failed")
    assert untrusted("https://x/", wrapped) is not None


def test_only_https_and_wss_want_tls() -> None:
    assert wants_tls("https://uq.example.com/")
    assert wants_tls("WSS://h/ws")
    assert not wants_tls("http://127.0.0.1:8765/")
    assert not wants_tls("ws://h/ws")
