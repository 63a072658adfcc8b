"""A private name stays in its package, and a module re-exports only a private sibling's names.

An underscored module or name (`_checks`, `remote._parse`) is private to the package that holds
it, subpackages included: anything outside may not import it, so it can change without notice.
A public module's `__all__` holds what it defines, or names a private module of its package
defines (a facade: `bridges.mcp` over `bridges._mcp_server`); never names of a public sibling,
which has its own, so every public name has one home.
"""

from __future__ import annotations

import ast

from tests.test_layers import modules, parsed


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
        for node in ast.walk(parsed(path)):
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
        tree = parsed(path)
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


def _private_attributes_defined(node: ast.AST) -> set[str]:
    """The underscored attributes the classes in `node` define: methods, fields, and what their
    methods assign to an attribute."""
    defined = set()
    for found in ast.walk(node):
        if isinstance(found, ast.ClassDef):
            for child in ast.walk(found):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    defined.add(child.name)
                elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
                    defined.add(child.target.id)
                elif isinstance(child, ast.Assign):
                    defined |= {t.id for t in child.targets if isinstance(t, ast.Name)}
                elif isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store):
                    defined.add(child.attr)
    return {name for name in defined if name.startswith("_") and not name.startswith("__")}


def _private_reads(node: ast.AST, own: set[str]) -> list[ast.Attribute]:
    """Reads in `node` of an underscored attribute not in `own`, on anything but `self`, `cls`
    or `super()`."""
    reads = []
    for found in ast.walk(node):
        if not isinstance(found, ast.Attribute) or found.attr in own:
            continue
        if not found.attr.startswith("_") or found.attr.startswith("__"):
            continue
        value = found.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "super":
            continue
        reads.append(found)
    return reads


def _foreign_private_reads(tree: ast.Module) -> list[str]:
    """Where a class reads another class's underscored attributes (one it does not define
    itself), or a function outside every class reads one no class of its module defines."""
    reached = []
    for node in tree.body:
        own = _private_attributes_defined(node if isinstance(node, ast.ClassDef) else tree)
        reached += _private_reads(node, own)
    return [f"{read.lineno} {ast.unparse(read)}" for read in reached]


def test_no_module_of_the_host_reads_the_private_fields_of_another_modules_class() -> None:
    """A class's underscored fields and methods are its own (and its module's): the hub sends a
    frame to a page through the page's methods, never by reaching into it."""
    reached = [
        f"{module}:{read}"
        for module, path in modules()
        if module.startswith("user_questions.host")
        for read in _foreign_private_reads(parsed(path))
    ]
    assert reached == []


def test_a_read_of_another_classs_private_field_is_caught() -> None:
    source = (
        "class Page:\n    _sees = None\n    def wants(self, other):\n        return other._sees\n"
        "class Hub:\n    def send(self, page):\n        super()._start\n        page._sees\n"
        "def send(page, hub):\n    page._sees\n    hub._pages\n"
    )
    assert _foreign_private_reads(ast.parse(source)) == ["8 page._sees", "11 hub._pages"]
