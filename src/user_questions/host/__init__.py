"""The host: a durable inbox of questions that humans answer from a web page.

`create_app()` (`app`) builds the Starlette app that `uq serve` runs (`server`), both from one
`HostConfig` (`config`); `Hub` (`hub`) is the inbox: the pending requests over the store, first
answer wins; `HostProvider` (`in_process`) lets an agent in the host's own process ask through it.
Nothing is re-exported here, so importing one part never loads the web stack of another.

The rooms, lowest first (each imports only from its own level or a lower one;
`tests/test_layers.py` checks it, room by room, and that this map names each at its level):

    0 markdown/, _reloader,     question details rendered to safe HTML (markdown-it, raw HTML
      _hand_over                off); a copy of what the store holds, reloaded when it changes;
                                a WebSocket the app hands back to the server once accepted
    1 stores/                   the records and their storage: SQLite (embedded) and
                                PostgreSQL (several hosts); retention; the collector's pause
    2 gate/, rules/, audit/,    who may come in: the security middleware, tokens and roles,
      shown, _frame_text        trusted proxies, the public address; the rules that settle
                                approvals; the audit log's key, checkpoints and checks;
                                first-shown times; the frames sent most, as text
    3 telemetry/, web/          what an operator reads: the access log, the numbers /metrics
                                renders; what a browser is served: the pages, static/, history
    4 hub/                      the inbox: the pending requests over the store, fan-out to
                                pages, first answer wins (`Hub`); their timetable on a clock
    5 endpoints/, notify/,      the routes a client reaches (the page and asker WebSockets,
      chat/, a2a/, in_process   the HTTP API, decoding); telling people (notifiers, answer
                                links); answering in Telegram and Slack; the inbox as an A2A
                                agent; the provider of agents in the host's process
    6 config                    `HostConfig`, everything a host is started with
    7 app                       composition: the routes and middleware
    8 server                    the server that runs them (uvicorn, TLS, the log format)
"""
