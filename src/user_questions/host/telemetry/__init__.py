"""What an operator reads about a running host: `logs` (the access log, one line a request or
socket, secrets masked) and `metrics` (the counters and gauges `/metrics` renders). Nothing is
re-exported."""
