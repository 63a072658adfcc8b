"""Certificates for the TLS tests, made by trustme: a private authority and a server certificate
for 127.0.0.1 and localhost, written as the files a host (or nginx) and its clients are given.

Chromium is told to trust the authority with `--ignore-certificate-errors-spki-list`, the hash
of the authority's public key (`Certificates.spki`). Chromium honours it only for a certificate
the server presents, so the chain a server is given ends with the authority's own certificate,
as a full chain may (Python and nginx send the whole file). Debian's chromium has no other way
to trust an authority without an NSS database, which needs `certutil`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization


@dataclass(frozen=True)
class Certificates:
    ca: Path
    """The authority's certificate (PEM): what `--ca` and `SSL_CERT_FILE` are given."""
    chain: Path
    """The server's certificate, then the authority's: what `--tls-cert` is given."""
    key: Path
    """The server's private key: what `--tls-key` is given."""
    spki: str
    """The base64 SHA-256 of the authority's public key, for Chromium."""


def make_certificates(folder: Path) -> Certificates:
    """A new authority and a server certificate for 127.0.0.1, written in `folder`."""
    authority = trustme.CA()
    server = authority.issue_cert("127.0.0.1", "localhost")
    found = Certificates(folder / "ca.pem", folder / "chain.pem", folder / "key.pem", "")
    found.ca.write_bytes(authority.cert_pem.bytes())
    found.chain.write_bytes(
        b"".join(pem.bytes() for pem in server.cert_chain_pems) + authority.cert_pem.bytes()
    )
    found.key.write_bytes(server.private_key_pem.bytes())
    public = x509.load_pem_x509_certificate(authority.cert_pem.bytes()).public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    spki = base64.b64encode(hashlib.sha256(der).digest()).decode()
    return Certificates(found.ca, found.chain, found.key, spki)
