"""A private name stays in its package, and a module re-exports only a private sibling's names.

An underscored module or name (`_checks`, `remote._parse`) is private to the package that holds
it, subpackages included: anything outside may not import it, so it can change without notice.
A public module's `__all__` holds what it defines, or names a private module of its package
defines (a facade: `bridges.mcp` over `bridges._mcp_server`); never names of a public sibling,
which has its own, so every public name has one home.
"""

from __future__ import annotations

import ast

from tests.test_layers import modules


def _holder(dotted: str) -> str | None:
    """The package a dotted name is private to, or `None` if it is public."""
    parts = dotted.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def _package(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def test_no_module_imports_a_private_name_of_another_package() -> None:
    reached = []
    for module, path in modules():
        package = _package(module, path.name == "__init__.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                holder = _holder(name) if name.startswith("user_questions") else None
                if holder is not None and not (package + ".").startswith(holder + "."):
                    reached.append(f"{module} -> {name}")
    assert reached == []


def test_a_public_module_re_exports_only_what_a_private_one_defines() -> None:
    borrowed = []
    for module, path in modules():
        if path.name == "__init__.py" or _holder(module) is not None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name: node.module
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names
        }
        exported = [
            element.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            )
            and isinstance(node.value, ast.List)
            for element in node.value.elts
            if isinstance(element, ast.Constant) and isinstance(element.value, str)
        ]
        borrowed += [
            f"{module}.{name} (from {imported[name]})"
            for name in exported
            if imported.get(name, "").startswith("user_questions")
            and _holder(imported[name]) is None
        ]
    assert borrowed == []
