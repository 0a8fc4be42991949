"""The library's modules import each other without cycles.

A cycle, even one hidden in a function-level import, means two modules cannot be read
or tested apart. The graph is read from the source with `ast`, every import counted,
wherever it stands. Importing `pkg.sub` runs `pkg/__init__.py` first, so it counts as
importing `pkg` too, unless the importer lies inside `pkg` (then `pkg` is already loading).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "transformer_lib"
ROOT = Path(__file__).resolve().parents[1]


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name; a package is named by its `__init__`."""
    names = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(name: str, source: str, modules: set[str], is_package: bool = False) -> set[str]:
    """The package's modules that module `name` imports, anywhere in its `source`."""
    targets = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: drop one part per dot beyond the module's own package
                here = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join(here + ([base] if base else []))
            # `from pkg import sub` imports the submodule, `from pkg import name` the package.
            targets |= {
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            }
    # Each target with its enclosing packages, less those that enclose the importer.
    parts = [t.split(".") for t in targets]
    loaded = {".".join(p[:i]) for p in parts for i in range(1, len(p) + 1)}
    enclosing = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    return {t for t in loaded if t in modules and t not in enclosing}


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {
        name: imported(name, path.read_text(), set(modules), path.name == "__init__.py")
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each group of modules that reach each other (Tarjan's SCCs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = group[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & set(group)):
                if nxt == start:
                    return paths[node] + [start]
                if nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    raise AssertionError(f"no cycle through {start}")  # a group always holds one


def test_the_graph_reads_every_kind_of_import():
    modules = {"p", "p.a", "p.b", "p.q", "p.q.c", "p.q.d", "p.r", "p.r.e"}
    source = """
import p.a
from p.q import c
from . import d
from .d import something
def later():
    from p.r.e import f
"""
    # p.r.e runs p/r/__init__ first; p and p.q enclose the importer and are loading already.
    assert imported("p.q.b", source, modules) == {"p.a", "p.q.c", "p.q.d", "p.r", "p.r.e"}
    assert imported("p.q", "from . import c", modules, is_package=True) == {"p.q.c"}
    graph = import_graph()
    assert len(graph) > 40 and "transformer_lib._checks" in graph["transformer_lib.data.vocab"]


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_library_has_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)
