"""The gate: who may come in, and from where.

`security` (the middleware every request and socket passes first: the token, the origin, the size
limits, the identity it leaves for the routes), `tokens` (named tokens and the start-up token),
`durations` (a token's deadline, escalation steps and reminder period as `uq` writes them),
`fair_share` (what one asker token may hold of a host: its pending cap and rate),
`roles` (what each role may do), `proxy` (which reverse proxies' forwarding headers are believed)
and `public_url` (the address people reach the host at). Nothing is re-exported: import each module
by its path.
"""
