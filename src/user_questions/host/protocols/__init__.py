"""What the host speaks to its clients (docs/protocol.md is the contract).

`decoding` reads frames and bodies strictly; `connection` is what both WebSocket protocols share
(identity, keepalive, closing); `page` is the page protocol (`/ws`), `asker` the asker protocol
(`/ws/ask`), `protocols.http_api` the HTTP API (`/api/...`); `websocket` is the server side of the
socket (read-ahead). Nothing is re-exported: import each module by its path.
"""
