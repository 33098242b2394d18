"""The package's modules import each other without a circle (module-level and lazy imports alike;
``from . import name`` of a package attribute counts as an import of ``__init__``)."""

import ast
import pathlib

import multigather

PACKAGE = pathlib.Path(multigather.__file__).parent


# Python modules and the extension modules (_multigather, _torch_fast), which import nothing back.
MODULES = {p.name.split(".", 1)[0] for p in PACKAGE.iterdir() if p.suffix in (".py", ".so", ".pyd")}


def imports_of(path: pathlib.Path) -> set[str]:
    modules = MODULES
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name if a.name in modules else "__init__" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("multigather."):
            found.add(node.module.split(".")[1])
    return {m for m in found if m in modules and m != path.stem}


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                cycle = visit(d)
                if cycle:
                    return cycle
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(edges):
        if m not in state:
            cycle = visit(m)
            if cycle:
                return cycle
    return []


def test_no_import_circle():
    edges = {p.stem: imports_of(p) for p in PACKAGE.glob("*.py")}
    assert edges["torch"] and edges["torch_ops"]  # the graph is read (not empty by mistake)
    assert find_cycle(edges) == [], " -> ".join(find_cycle(edges))


def test_the_checker_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
