"""An import-linter contract the built-in ones cannot state: no import cycle crosses from one
package into another, and none within a package is longer than ``max_length`` modules.

Every import counts, including those under ``TYPE_CHECKING`` and inside functions: a cycle of
type hints is still two modules that cannot be understood (or moved) one without the other.
"""

from __future__ import annotations

from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class ImportCyclesContract(Contract):
    type_name = "import_cycles"

    root = fields.StringField()
    max_length = fields.IntegerField(minimum=2, default=3)

    def check(self, graph, verbose: bool) -> ContractCheck:
        modules = sorted(
            m for m in graph.modules if m == self.root or m.startswith(self.root + ".")
        )
        edges = {
            m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d in modules)
            for m in modules
        }
        broken = []
        for component in _strongly_connected(modules, edges):
            if len(component) < 2:
                continue
            packages = {_package(graph, m) for m in component}
            longest, tangled = _longest_cycle(component, edges, self.max_length)
            if len(packages) > 1 or len(longest) > self.max_length or tangled:
                broken.append({"modules": sorted(component), "cycle": longest})
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for found in check.metadata["broken"]:
            output.print_error(
                f"A cycle of {len(found['cycle'])} modules (across {', '.join(found['modules'])}):"
            )
            output.new_line()
            output.print_error("    " + " -> ".join([*found["cycle"], found["cycle"][0]]))
            output.new_line()


def _package(graph, module: str) -> str:
    """The package a module belongs to; a package (its ``__init__``) belongs to itself."""
    return module if graph.find_children(module) else module.rpartition(".")[0]


def _strongly_connected(modules: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the import graph is deep enough to exhaust recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
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
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def _longest_cycle(
    component: list[str], edges: dict[str, list[str]], limit: int
) -> tuple[list[str], bool]:
    """A simple cycle of more than ``limit`` modules in the component if there is one (the
    search stops there), else its longest; and whether the search ran out of ``_BUDGET`` steps
    first (the number of simple paths grows exponentially with a tangle: one that large is
    broken anyway)."""
    members = set(component)
    longest: list[str] = []
    steps = 0

    def walk(start: str, node: str, path: list[str]) -> bool:
        """True once the search may stop."""
        nonlocal longest, steps
        for child in edges[node]:
            steps += 1
            if steps > _BUDGET:
                return True
            if child == start and len(path) > len(longest):
                longest = list(path)
                if len(longest) > limit:
                    return True
            elif (
                child in members
                and child > start
                and child not in path
                and walk(start, child, [*path, child])
            ):
                return True
        return False

    for start in sorted(members):
        if walk(start, start, [start]):
            break
    return longest, steps > _BUDGET


_BUDGET = 200_000
