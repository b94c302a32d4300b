"""Check that a parsed graph can run: every stream connected once, no cycle without a back edge.

``validate_graph`` finds every problem MediaPipe (or OVMS) would refuse the graph for at load
time and raises one ``GraphConfigError`` listing them all, each naming the node and the
stream. What a single calculator requires of its own streams (e.g. PythonExecutorCalculator's
LOOPBACK on both sides) is that calculator's contract, checked where it is built.
``topological_order`` gives the order the scheduler can run the nodes in.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

from ovmsx.graph.graph_config import GraphConfig, GraphConfigError, NodeConfig, StreamRef

_Item = TypeVar("_Item")
_Key = TypeVar("_Key")


def validate_graph(graph: GraphConfig, known_calculators: Collection[str], source: str) -> None:
    """Raise ``GraphConfigError`` (``source`` names the file) listing what is wrong, if anything."""
    problems = [
        *_graph_stream_problems(graph),
        *_node_problems(graph, known_calculators),
        *_connection_problems(graph),
    ]
    cycle = _find_cycle(graph)
    if cycle is not None:
        problems.append(_cycle_problem(graph, cycle))
    if problems:
        raise GraphConfigError(*problems, source=source)


def topological_order(graph: GraphConfig, source: str = "") -> tuple[int, ...]:
    """Node indices so that every producer comes before its consumers; ties in file order.

    Inputs listed as back edges do not order anything. A cycle without a back edge raises
    ``GraphConfigError``.
    """
    order, _ = _kahn(graph)
    if len(order) < len(graph.nodes):
        cycle = _find_cycle(graph)
        assert cycle is not None  # Kahn stops early only on a cycle
        raise GraphConfigError(_cycle_problem(graph, cycle), source=source)
    return tuple(order)


def _where(node: NodeConfig) -> str:
    return f'node "{node.name}"' if node.name else node.label


def _graph_stream_problems(graph: GraphConfig) -> list[str]:
    problems = []
    if not graph.input_streams:
        problems.append("the graph has no input_stream: a request would have nothing to carry")
    if not graph.output_streams:
        problems.append("the graph has no output_stream: a response would have nothing to carry")
    for streams, what in (
        (graph.input_streams, "graph input_stream"),
        (graph.output_streams, "graph output_stream"),
    ):
        # OVMS maps KServe tensors to these streams by name, so a name can appear only once.
        for name, refs in _group(streams, lambda ref: ref.name):
            listed = " and ".join(f'"{ref}"' for ref in refs)
            problems.append(f'{what}s {listed} have the same name "{name}"')
    problems += _tag_index_problems(graph.input_streams, "graph input_stream")
    problems += _tag_index_problems(graph.output_streams, "graph output_stream")
    problems += _tag_index_problems(graph.input_side_packets, "graph input_side_packet")
    return problems


def _tag_index_problems(streams: Iterable[StreamRef], what: str) -> list[str]:
    """MediaPipe's rules for one list: each TAG:INDEX once, each tag's indexes 0..N-1."""
    streams = tuple(streams)
    problems = []
    for tag_index, refs in _group(streams, lambda ref: ref.tag_index):
        listed = " and ".join(f'"{ref}"' for ref in refs)
        problems.append(f"{what}s {listed} share the tag_index {tag_index}")
    indexes: dict[str, set[int]] = defaultdict(set)
    for ref in streams:
        indexes[ref.tag].add(ref.index)
    for tag, used in indexes.items():
        if used != set(range(len(used))):
            numbers = ", ".join(str(index) for index in sorted(used))
            problems.append(
                f'{what} tag "{tag}" has indexes {numbers}: they must run from 0 without gaps'
            )
    return problems


def _node_problems(graph: GraphConfig, known_calculators: Collection[str]) -> list[str]:
    problems = []
    for name, nodes in _group(graph.nodes, lambda node: node.name):
        if name:
            problems.append(f'{len(nodes)} nodes have the name "{name}": node names must differ')
    for node in graph.nodes:
        where = _where(node)
        if not node.calculator:
            problems.append(f"{where} has no calculator")
        elif node.calculator not in known_calculators:
            known = ", ".join(sorted(known_calculators)) or "none"
            problems.append(f'{where}: unknown calculator "{node.calculator}" (known: {known})')
        problems += _tag_index_problems(node.inputs, f"{where}: input_stream")
        problems += _tag_index_problems(node.outputs, f"{where}: output_stream")
        problems += _tag_index_problems(node.input_side_packets, f"{where}: input_side_packet")
        problems += _tag_index_problems(node.output_side_packets, f"{where}: output_side_packet")
        problems += _handler_problems(node)
    return problems


def _handler_problems(node: NodeConfig) -> list[str]:
    where = _where(node)
    inputs = {ref.tag_index for ref in node.inputs}
    problems = [
        f"{where}: input_stream_info names tag_index {tag_index}, which is no input_stream "
        "of the node"
        for tag_index in sorted(node.back_edges - inputs)
    ]
    seen: set[str] = set()
    for sync_set in node.sync_sets:
        for tag_index in sorted(sync_set):
            if tag_index not in inputs:
                problems.append(
                    f"{where}: sync_set names tag_index {tag_index}, which is no input_stream "
                    "of the node"
                )
            elif tag_index in seen:
                problems.append(f"{where}: tag_index {tag_index} is in more than one sync_set")
            seen.add(tag_index)
    return problems


def _producers(graph: GraphConfig) -> dict[str, list[str]]:
    """Stream name -> what produces it ("graph input_stream", 'node "x"'), in file order."""
    producers: dict[str, list[str]] = defaultdict(list)
    # Repeated graph input names are reported once, by _graph_stream_problems.
    for name in dict.fromkeys(ref.name for ref in graph.input_streams):
        producers[name].append("graph input_stream")
    for node in graph.nodes:
        for ref in node.outputs:
            producers[ref.name].append(_where(node))
    return producers


def _connection_problems(graph: GraphConfig) -> list[str]:
    producers = _producers(graph)
    problems = [
        f'stream "{name}" is produced more than once (duplicate output): by {" and ".join(by)}'
        for name, by in producers.items()
        if len(by) > 1
    ]
    for node in graph.nodes:
        for ref in node.inputs:
            if ref.name not in producers:
                problems.append(
                    f'{_where(node)}: input_stream "{ref}" is not produced by any node or graph '
                    "input_stream (unconnected stream)"
                )
    # OVMS loads a graph whose output stream no node produces (COMPAT §19): a request waiting
    # on it fails at run time instead, so that is not a load-time problem here either.
    side_producers: dict[str, list[str]] = defaultdict(list)
    for node in graph.nodes:
        for ref in node.output_side_packets:
            side_producers[ref.name].append(_where(node))
    problems += [
        f'side packet "{name}" is produced more than once: by {" and ".join(by)}'
        for name, by in side_producers.items()
        if len(by) > 1
    ]
    return problems


def _edges(graph: GraphConfig) -> list[set[int]]:
    """successors[i]: the nodes reading a stream or side packet node i produces, back edges
    left out. (A side packet is made in its producer's Open, so its readers open after it.)"""
    made_by: dict[str, list[int]] = defaultdict(list)
    side_made_by: dict[str, list[int]] = defaultdict(list)
    for index, node in enumerate(graph.nodes):
        for ref in node.outputs:
            made_by[ref.name].append(index)
        for ref in node.output_side_packets:
            side_made_by[ref.name].append(index)
    successors: list[set[int]] = [set() for _ in graph.nodes]
    for index, node in enumerate(graph.nodes):
        for ref in node.inputs:
            if ref.tag_index not in node.back_edges:
                for producer in made_by.get(ref.name, ()):
                    successors[producer].add(index)
        for ref in node.input_side_packets:
            for producer in side_made_by.get(ref.name, ()):
                if producer != index:
                    successors[producer].add(index)
    return successors


def _kahn(graph: GraphConfig) -> tuple[list[int], list[int]]:
    """(order, remaining in-degrees): nodes with in-degree left are on or after a cycle."""
    successors = _edges(graph)
    indegree = [0] * len(graph.nodes)
    for targets in successors:
        for target in targets:
            indegree[target] += 1
    ready = [index for index, count in enumerate(indegree) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for target in successors[index]:
            indegree[target] -= 1
            if indegree[target] == 0:
                heapq.heappush(ready, target)
    return order, indegree


def _find_cycle(graph: GraphConfig) -> list[int] | None:
    """The node indices of one cycle without a back edge, in stream direction, or None."""
    order, indegree = _kahn(graph)
    if len(order) == len(graph.nodes):
        return None
    successors = _edges(graph)
    stuck = {index for index, count in enumerate(indegree) if count > 0}
    predecessors = {
        index: sorted(source for source in stuck if index in successors[source]) for index in stuck
    }
    # Every node Kahn could not free has a predecessor it could not free either: walking back
    # along them must revisit a node, and the walk from there on is a cycle.
    walk = [min(stuck)]
    while True:
        previous = predecessors[walk[-1]][0]
        if previous in walk:
            cycle = walk[walk.index(previous) :][::-1]
            first = cycle.index(min(cycle))  # start the report at the earliest node
            return cycle[first:] + cycle[:first]
        walk.append(previous)


def _cycle_problem(graph: GraphConfig, cycle: list[int]) -> str:
    path = " -> ".join(_where(graph.nodes[index]) for index in [*cycle, cycle[0]])
    return (
        f"cycle without a back edge: {path} (mark the input that closes it with "
        "input_stream_info { tag_index: ... back_edge: true })"
    )


def _group(items: Iterable[_Item], key: Callable[[_Item], _Key]) -> list[tuple[_Key, list[_Item]]]:
    """(key, items) for each key shared by more than one item, in order of first appearance."""
    groups: dict[_Key, list[_Item]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return [(value, members) for value, members in groups.items() if len(members) > 1]
