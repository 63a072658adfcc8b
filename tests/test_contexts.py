"""Nothing in the package enters or leaves a context by hand: task groups, stores and hubs are
entered with `async with` or on an `AsyncExitStack`, so that a failure halfway through starting
unwinds what had started, in order."""

from __future__ import annotations

import ast

from tests.test_layers import modules


def test_no_module_calls_aenter_or_aexit_itself() -> None:
    by_hand = [
        f"{module}:{node.lineno}"
        for module, path in modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("__aenter__", "__aexit__", "__enter__", "__exit__")
    ]
    assert by_hand == []
