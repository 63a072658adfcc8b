"""Reading what comes from outside the process: text, JSON, a tool's JSON Schema, the wire models.

`text` says what a string from outside may hold; `json_reader` is the package's one bounded JSON
reader; `json_schema` checks a tool's arguments against the subset of JSON Schema that tools use;
`wire` reads the vocabulary into models with one-line errors. Every boundary (a socket, a file,
stdin, a model's tool call) reads through here, so bad input is refused alike everywhere.
"""
