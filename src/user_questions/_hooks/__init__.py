"""The agent CLIs' hook path: what `uq hook` reads from Claude Code or Codex and what it answers.

Standard library only (with `_reading.json_reader`, `_reading.text` and `errors`, which are too;
`tests/test_hooks_room.py` says so): a CLI runs its hook on every tool call, so `uq hook` decides
from these modules alone, before pydantic builds a single model, whether a person is to be asked.
`events` reads a hook event and who sent it; `approval_card` is an approval's text in plain data;
`permission_call` is a permission prompt, its card and the hook's output for a decision;
`settlement` is the one reading of a host's settlement that every permission gate shares.
"""
