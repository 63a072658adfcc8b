"""What a host and its askers share: the host's URL, TLS, and how an ask through a host ends.

`url` reads a host's URL as `uq serve` prints it; `tls` sets up the host's certificate and its
clients' trust; `ask_endings` ends an ask the same way in `RemoteProvider` (a client in another
process) and in the host's in-process provider. It sits below both, so the host never imports a
client. `url` and `tls` are standard library only: `uq hook`'s quick path reads them.
"""
