"""A webhook receiver for `uq serve --notify-webhook`, on the standard library alone.

    UQ_NOTIFY_SECRET=... python webhook_receiver.py 9000

Checks each delivery's signature, then prints one line per event, such as
`question/settled 3f2a... answered` (`-` instead of an outcome for a pending one), and answers
204; a delivery that is not signed with the secret gets 401.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def verify(secret: str, body: bytes, signature: str) -> bool:
    """Whether `signature` (the X-UQ-Signature header) signs `body` (the raw request body)."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        secret = os.environ["UQ_NOTIFY_SECRET"]
        if not verify(secret, body, self.headers.get("X-UQ-Signature", "")):
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)
        print(event["type"], event["rpcId"], event.get("outcome", "-"), flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep stdout for the events


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
