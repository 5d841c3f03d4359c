"""No import cycles in the package: neither between modules nor between core's sub-packages.

The layers contract in pyproject.toml (lint-imports) orders core's sub-packages; this test
also catches cycles between modules of one sub-package (collect/run <-> collect/process was
one) and in cli, which the layers contract does not see. Imports inside functions and under
TYPE_CHECKING count: they are cycles for a reader too. The only exceptions are the contract's
own `ignore_imports` (each says who removes it), read from pyproject.toml so there is one list.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# grimp walks the package's folder; the package is assembled from several folders, so it reads
# the symlink mirror that mypy and lint-imports use (in a child: this process has imported
# fallback_doctor from the editable install already).
_GRAPH_SCRIPT = """
import json, grimp
graph = grimp.build_graph("fallback_doctor")
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))
"""


def _ignored_edges() -> set[tuple[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    edges: set[tuple[str, str]] = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        for line in contract.get("ignore_imports", []):
            importer, imported = (part.strip() for part in line.split("->"))
            edges.add((importer, imported))
    return edges


@functools.cache
def _graph() -> dict[str, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools" / "typecheck")}
    result = subprocess.run(
        [sys.executable, "-c", _GRAPH_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    )
    graph: dict[str, list[str]] = json.loads(result.stdout)
    assert "fallback_doctor.core.readers.collect.run" in graph  # the whole package was read
    ignored = _ignored_edges()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, imports in graph.items():
        edges[module].update(imported for imported in imports if (module, imported) not in ignored)
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of nodes that reach each other (Tarjan), only those of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    nodes = set(edges) | {b for targets in edges.values() for b in targets}

    def visit(start: str) -> None:
        # Iterative, so a deep import chain cannot hit the recursion limit.
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return groups


def _collapse(edges: dict[str, set[str]], depth: int) -> dict[str, set[str]]:
    """The same graph between packages: fallback_doctor.core.readers.collect.run ->
    fallback_doctor.core.readers.collect."""
    collapsed: dict[str, set[str]] = defaultdict(set)
    for importer, targets in edges.items():
        a = ".".join(importer.split(".")[:depth])
        for imported in targets:
            b = ".".join(imported.split(".")[:depth])
            if a != b and a.startswith("fallback_doctor.core.") and b.startswith("fallback_doctor.core."):
                collapsed[a].add(b)
    return collapsed


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert strongly_connected(edges) == [["a", "b", "c"]]


def test_no_module_imports_itself_back() -> None:
    assert strongly_connected(_graph()) == []


def test_no_cycle_between_core_sub_packages() -> None:
    assert strongly_connected(_collapse(_graph(), depth=3)) == []
