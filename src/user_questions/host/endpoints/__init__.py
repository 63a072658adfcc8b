"""The host's endpoints: each route a client reaches, and what it speaks there (docs/protocol.md
is the contract).

`decoding` reads frames and bodies strictly; `connection` is what both WebSocket protocols share
(identity, keepalive, closing); `page` is the page protocol (`/ws`), `asker` the asker protocol
(`/ws/ask`), `http_api` the HTTP API (`/api/...`), `tokens_api` and `rules_api` the admin's;
`websocket` is the server side of the socket (read-ahead), `upgrade` the HTTP side that hands it
the upgrade request parsed once. Nothing is re-exported: import each module by its path.
"""
