"""The host: a durable inbox of questions that humans answer from a web page.

`create_app()` (`app`) builds the Starlette app that `uq serve` runs (`server`), both from one
`HostConfig` (`config`); `Hub` (`hub`) holds the pending requests over the store, first answer wins;
`HostProvider` (`in_process`) lets an agent in the host's own process ask through it. Nothing is
re-exported here, so importing one part never loads the web stack of another.

The rooms, lowest first (each imports only from its own level or a lower one;
`tests/test_layers.py` checks it, room by room):

    markdown/    question details rendered to safe HTML (markdown-it, raw HTML off)
    stores/      the records and their storage: SQLite (embedded) and PostgreSQL (several hosts)
    gate/        who may come in: the security middleware, tokens and people, trusted proxies,
                 the public address
    telemetry/   what an operator reads: the access log, the numbers /metrics renders
    web/         what a browser is served: the inbox and history pages, static/, history's JSON
    hub          the pending requests, fan-out to pages, first answer wins
                 (with `shown` and `_frame_text` below it)
    endpoints/   what the host speaks: the page and asker WebSockets, the HTTP API, decoding
    notify/      telling people: events, notifiers (apprise, webhook, command), answer links
    in_process   the provider of agents in the host's process
    config       `HostConfig`, everything a host is started with
    app, server  composition: the routes and middleware; the server that runs them
"""
