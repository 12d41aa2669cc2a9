"""Figures of the import graph, to see whether the tree shows the architecture.

    python scripts/import_graph.py [PACKAGE ...]

For each package: its modules; its rooms (top-level entries: a module or a subpackage); the floors
(the longest chain of imports between rooms); the arrows between rooms; circles (groups of modules,
and of rooms, that import each other, imports inside functions included); and imports that climb back
up (from a module into its own package's ``__init__``, or into a room that imports it back).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import grimp

ROOTS = ("agentbank", "interviewer", "evaluation", "app")


def strongly_connected(nodes: Iterable[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """Tarjan's components, iteratively (the graph has a few hundred nodes)."""
    adjacency: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        adjacency[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in adjacency:
        if start in index:
            continue
        work = [(start, iter(adjacency[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(adjacency[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def floors(nodes: list[str], edges: set[tuple[str, str]]) -> int:
    """The longest chain of imports, each circle counted as one node."""
    components = strongly_connected(nodes, edges)
    component_of = {n: i for i, c in enumerate(components) for n in c}
    below: dict[int, set[int]] = {}
    for a, b in edges:
        if component_of[a] != component_of[b]:
            below.setdefault(component_of[a], set()).add(component_of[b])
    height: dict[int, int] = {}
    # Tarjan emits components in reverse topological order: everything below comes first.
    for i in range(len(components)):
        height[i] = 1 + max((height[j] for j in below.get(i, ())), default=0)
    return max(height.values(), default=0)


def figures(graph: grimp.ImportGraph, package: str) -> dict[str, int]:
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {(m, t) for m in modules for t in graph.find_modules_directly_imported_by(m) if t in modules and t != m}

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])

    rooms = sorted({room(m) for m in modules if m != package})
    room_edges = {(room(a), room(b)) for a, b in edges if package not in (a, b) and room(a) != room(b)}
    room_circles = [c for c in strongly_connected(rooms, room_edges) if len(c) > 1]
    in_circle = {r: i for i, c in enumerate(room_circles) for r in c}
    climbing = [
        (a, b)
        for a, b in edges
        if a.startswith(b + ".")
        or (room(a) in in_circle and in_circle.get(room(a)) == in_circle.get(room(b)) and room(a) != room(b))
    ]
    return {
        "modules": len(modules),
        "rooms": len(rooms),
        "floors": floors(rooms, room_edges),
        "arrows": len(room_edges),
        "module arrows": len(edges),
        "module circles": sum(1 for c in strongly_connected(modules, edges) if len(c) > 1),
        "room circles": len(room_circles),
        "climbing imports": len(climbing),
    }


def main(packages: list[str]) -> None:
    graph = grimp.build_graph(*ROOTS, cache_dir=None)
    for package in packages or ["agentbank"]:
        print(package + ": " + ", ".join(f"{k} {v}" for k, v in figures(graph, package).items()))


if __name__ == "__main__":
    main(sys.argv[1:])
