"""The host: a durable inbox of questions that humans answer from a web page.

Level 8, a module per job. `create_app()` (in `user_questions.host.app`) builds the Starlette app
that `uq serve` runs (`server`); `Hub` (`hub`) holds the pending requests and hands out the
in-process provider (`provider.HostProvider`); `open_store()` (`stores`) opens the store behind
them. The two WebSocket protocols are `page_connection` and `asker_connection`, the HTTP API
`http_api`, the pages `pages`; docs/protocol.md describes what they speak. Nothing is re-exported
here, so importing one part never loads the web stack of another.

The modules, lowest first (a module imports only lower ones; `tests/test_layers.py` checks it):

    stores, markdown, security, decoding,    the records and their storage; rendering; the gate;
    public_url, proxy, logs                  the public address, trusted proxies, the access log
    records, events, history, people,        retention; events; history; tokens; the in-process
    provider, metrics, answer_links          provider; the numbers /metrics renders; answer links
    hub, notify_message
    connection, http_api, notify, pages, answer_pages
    page_connection, asker_connection, notify_webhook, notify_command, notify_apprise
    app
    server
"""
