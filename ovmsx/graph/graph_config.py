"""Read a MediaPipe ``graph.pbtxt`` into plain, typed values.

``parse_graph(text, source)`` reads the protobuf text format of ``CalculatorGraphConfig`` and
returns a ``GraphConfig``: streams already split into tag, index and name, each node's back
edges, input stream handler and options resolved. It checks only what reading needs (syntax,
stream and tag_index spelling, options); ``graph_validation.validate_graph`` checks how the
nodes connect. Every failure is a ``GraphConfigError`` naming the file and, where protobuf
reports one, the line and column.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.message import DecodeError, Message

from ovmsx.graph import mediapipe_graph_pb2 as pb
from ovmsx.status import StatusCode, StatusError

DEFAULT_INPUT_STREAM_HANDLER = "DefaultInputStreamHandler"
"""The handler MediaPipe installs when neither the node nor the graph names one."""

# MediaPipe's spelling rules (mediapipe/framework/tool/validate_name.cc).
_TAG = re.compile(r"[A-Z_][A-Z0-9_]*")
_NAME = re.compile(r"[a-z_][a-z0-9_]*")
log = logging.getLogger("ovmsx.graph")

_INDEX = re.compile(r"0|[1-9][0-9]*")
_STREAM_FORMS = "NAME, TAG:NAME or TAG:INDEX:NAME"
_SYNC_SET_OPTIONS = pb.SyncSetInputStreamHandlerOptions.DESCRIPTOR.full_name

# The graph pool directive OVMS finds with a regex on the raw text (COMPAT.md §4.7).
_QUEUE_DIRECTIVE = re.compile(
    r"^[ \t]*#[ \t]*OVMS_GRAPH_QUEUE_MAX_SIZE[ \t]*:[ \t]*(\S+)[ \t]*\r?$", re.MULTILINE
)
# text_format puts "LINE:COLUMN : " in front of its messages; we say it in words instead.
_POSITION_PREFIX = re.compile(r"^\d+(:\d+)? : ")


class GraphConfigError(StatusError):
    """A graph file that cannot be read or served (``MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID``).

    ``str(error)`` is the OVMS message, then the file and every problem:
    ``Failed to read protobuf graph configuration file - graph.pbtxt: line 3 column 5: ...``.
    """

    def __init__(
        self,
        *problems: str,
        source: str = "",
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.problems = problems
        """What is wrong, one sentence each, without the file name."""
        self.source = source
        """The graph file, as the caller named it ("" when not known)."""
        self.line = line
        """1-based line of a syntax problem, when protobuf reports one."""
        self.column = column
        """1-based column of a syntax problem, when protobuf reports one."""
        details = "; ".join(problems)
        super().__init__(
            StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID,
            f"{source}: {details}" if source else details,
        )


@dataclass(frozen=True)
class StreamRef:
    """One stream or side packet as a node or the graph lists it: ``TAG:INDEX:name``."""

    tag: str
    """``""`` when untagged."""
    index: int
    """The written index, else 0. Untagged entries of one list are numbered in order (0, 1, …)
    as MediaPipe does, so two untagged inputs of a node are ``:0`` and ``:1``."""
    name: str
    """The stream's name: what connects producers and consumers, and the KServe tensor name
    for graph inputs and outputs."""

    @property
    def tag_index(self) -> str:
        """``"TAG:INDEX"``, the key ``input_stream_info`` and sync sets use (``":0"`` untagged)."""
        return f"{self.tag}:{self.index}"

    def __str__(self) -> str:
        if not self.tag:
            return self.name
        return (
            f"{self.tag}:{self.name}" if self.index == 0 else f"{self.tag}:{self.index}:{self.name}"
        )


@dataclass(frozen=True)
class NodeConfig:
    """One ``node { ... }`` of the graph."""

    name: str
    """``""`` when the node has no name."""
    calculator: str
    """The calculator type, e.g. ``"PythonExecutorCalculator"``."""
    inputs: tuple[StreamRef, ...]
    """``input_stream`` entries, in file order."""
    outputs: tuple[StreamRef, ...]
    """``output_stream`` entries, in file order."""
    input_side_packets: tuple[StreamRef, ...]
    """``input_side_packet`` entries (then the deprecated ``external_input`` ones)."""
    output_side_packets: tuple[StreamRef, ...]
    """``output_side_packet`` entries."""
    back_edges: frozenset[str]
    """``tag_index`` of the inputs marked ``back_edge: true`` in ``input_stream_info``,
    normalised to ``"TAG:INDEX"`` (``"LOOPBACK"`` is ``"LOOPBACK:0"``)."""
    input_stream_handler: str
    """The node's handler, else the graph's, else ``"DefaultInputStreamHandler"``."""
    sync_sets: tuple[frozenset[str], ...]
    """The handler's ``SyncSetInputStreamHandlerOptions`` sets in file order, each a set of
    normalised ``"TAG:INDEX"`` strings; empty without such options."""
    options: Mapping[str, Message]
    """Options message by full type name (``"mediapipe.PythonExecutorCalculatorOptions"``),
    from ``node_options`` and ``options``; on a clash ``options`` wins, as in MediaPipe.
    The messages are classes of ``ovmsx.graph.mediapipe_graph_pb2``."""
    label: str
    """How errors name the node: its name, else ``"<calculator> (node <position>)"``."""


@dataclass(frozen=True)
class GraphConfig:
    """A whole ``graph.pbtxt``: the graph's own streams and its nodes."""

    input_streams: tuple[StreamRef, ...]
    """Graph ``input_stream``s: the request inputs; the tag selects the packet type."""
    output_streams: tuple[StreamRef, ...]
    """Graph ``output_stream``s: the response outputs."""
    input_side_packets: tuple[StreamRef, ...]
    """Graph-level ``input_side_packet``s."""
    nodes: tuple[NodeConfig, ...]
    """The nodes in file order; their positions are the indices ``topological_order`` uses."""
    queue_size_directive: str | None
    """The value of a ``# OVMS_GRAPH_QUEUE_MAX_SIZE: X`` comment line, as written (kept, not
    acted on)."""


def parse_stream(text: str) -> StreamRef:
    """Split ``"NAME"``, ``"TAG:NAME"`` or ``"TAG:INDEX:NAME"`` following MediaPipe's rules.

    Tags match ``[A-Z_][A-Z0-9_]*``, names ``[a-z_][a-z0-9_]*``, indexes are decimal without
    leading zeros. Anything else raises ``GraphConfigError`` quoting the string.
    """
    parts = text.split(":")
    problem = None
    if len(parts) > 3:
        problem = "too many ':'"
    elif len(parts) > 1 and not _TAG.fullmatch(parts[0]):
        problem = f"tag {parts[0]!r} does not match {_TAG.pattern}"
    elif len(parts) == 3 and not _INDEX.fullmatch(parts[1]):
        problem = f"index {parts[1]!r} is not a number like 0, 1, 2"
    elif not _NAME.fullmatch(parts[-1]):
        problem = f"name {parts[-1]!r} does not match {_NAME.pattern}"
    if problem is not None:
        raise GraphConfigError(f'"{text}" is not {_STREAM_FORMS}: {problem}')
    tag = parts[0] if len(parts) > 1 else ""
    index = int(parts[1]) if len(parts) == 3 else 0
    return StreamRef(tag, index, parts[-1])


def parse_tag_index(text: str) -> str:
    """Normalise an ``input_stream_info``/sync set ``tag_index`` to ``"TAG:INDEX"``.

    As in MediaPipe: ``"TAG"`` is index 0, ``""`` and ``":0"`` are the first untagged stream,
    ``":3"`` the fourth. Raises ``GraphConfigError`` for anything else.
    """
    tag, sep, index = text.partition(":")
    if (tag and not _TAG.fullmatch(tag)) or (sep and not _INDEX.fullmatch(index)):
        raise GraphConfigError(f'tag_index "{text}" is not TAG, TAG:INDEX or :INDEX')
    return f"{tag}:{int(index) if sep else 0}"


def parse_graph(text: str, source: str) -> GraphConfig:
    """Read the text of a ``graph.pbtxt``; ``source`` names the file in errors.

    Unknown ``[mediapipe.X.ext]`` extensions (options of calculators or handlers ovmsx does not
    know) are skipped. An unknown ``node_options`` type cannot be skipped by protobuf's reader
    and fails the whole file, as does anything else that is not valid text format.
    """
    try:
        config = _parse_text(text, source)
        nodes = tuple(_node(node, position, config) for position, node in enumerate(config.node, 1))
        return GraphConfig(
            input_streams=_stream_list(config.input_stream, "graph input_stream"),
            output_streams=_stream_list(config.output_stream, "graph output_stream"),
            input_side_packets=_stream_list(config.input_side_packet, "graph input_side_packet"),
            nodes=nodes,
            queue_size_directive=_queue_size_directive(text),
        )
    except GraphConfigError as bad:
        if bad.source:
            raise
        raise GraphConfigError(*bad.problems, source=source) from None
    except (DecodeError, LookupError, ValueError, TypeError, RecursionError) as bad:
        # protobuf's reader failing without a ParseError: every check above names the problem
        # itself, so this is a case none foresaw. The user still gets the file and the reason.
        log.debug("reading %s failed", source, exc_info=True)
        raise GraphConfigError(
            f"protobuf could not read it ({type(bad).__name__}: {bad})", source=source
        ) from None


# Why a second schema: text_format packs each node_options Any by serializing it, and
# serializing refuses a message missing a required field (handler_path, servable_name) with
# an error that names neither the node nor the line. Reading against a copy of the schema in
# which every field is optional always succeeds; _node then moves the options into the real
# classes and names the node and the missing field itself.
def _lenient_pool() -> descriptor_pool.DescriptorPool:
    schema = descriptor_pb2.FileDescriptorProto.FromString(pb.DESCRIPTOR.serialized_pb)
    pending = list(schema.message_type)
    while pending:
        message_type = pending.pop()
        pending.extend(message_type.nested_type)
        for field in message_type.field:
            if field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED:
                field.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(schema)
    return pool


_LENIENT_POOL = _lenient_pool()
_LenientGraphConfig = message_factory.GetMessageClass(
    _LENIENT_POOL.FindMessageTypeByName("mediapipe.CalculatorGraphConfig")
)


def _parse_text(text: str, source: str) -> Message:
    config = _LenientGraphConfig()
    try:
        text_format.Parse(text, config, allow_unknown_extension=True, descriptor_pool=_LENIENT_POOL)
    except text_format.ParseError as bad:
        line, column = bad.GetLine(), bad.GetColumn()
        problem = _POSITION_PREFIX.sub("", str(bad))
        unknown = re.fullmatch(r"Type (\S+) not found in descriptor pool", problem)
        if unknown:
            # protobuf gives no position for this one; find the Any that names the type.
            line, column = _position_of_any(text, unknown.group(1))
            problem = (
                f"options type {unknown.group(1)} is unknown to ovmsx (the options of a "
                "calculator it does not serve?), and protobuf cannot skip an unknown Any type, "
                f"so the file cannot be read; known types: {', '.join(_known_options())}"
            )
        if line is not None:
            problem = f"line {line} column {column}: {problem}"
        raise GraphConfigError(problem, source=source, line=line, column=column) from None
    return config


def _position_of_any(text: str, type_name: str) -> tuple[int | None, int | None]:
    url = re.compile(r"\[\s*[\w.]+\s*/\s*" + re.escape(type_name) + r"\s*\]")
    found = url.search(text)
    if found is None:
        return None, None
    before = text[: found.start()]
    return before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1


def _known_options() -> list[str]:
    return sorted(
        extension.message_type.full_name
        for message_type in pb.DESCRIPTOR.message_types_by_name.values()
        for extension in message_type.extensions
        if extension.containing_type.full_name == "mediapipe.CalculatorOptions"
    )


def _queue_size_directive(text: str) -> str | None:
    found = _QUEUE_DIRECTIVE.search(text)
    return found.group(1) if found else None


def _stream_list(values: Iterable[str], what: str) -> tuple[StreamRef, ...]:
    refs = []
    untagged = 0
    for text in values:
        try:
            ref = parse_stream(text)
        except GraphConfigError as bad:
            raise GraphConfigError(f"{what} {bad.problems[0]}") from None
        if not ref.tag:
            # MediaPipe numbers the untagged entries of a list in order.
            ref = StreamRef("", untagged, ref.name)
            untagged += 1
        refs.append(ref)
    return tuple(refs)


def _node(node: Message, position: int, config: Message) -> NodeConfig:
    label = node.name or f"{node.calculator or '<no calculator>'} (node {position})"
    where = f'node "{node.name}"' if node.name else label
    try:
        handler = _handler_config(node, config)
        back_edges = frozenset(
            parse_tag_index(info.tag_index) for info in node.input_stream_info if info.back_edge
        )
        sync_sets = _sync_sets(handler)
        inputs = _stream_list(node.input_stream, "input_stream")
        outputs = _stream_list(node.output_stream, "output_stream")
        side_inputs = _stream_list(
            [*node.input_side_packet, *node.external_input], "input_side_packet"
        )
        side_outputs = _stream_list(node.output_side_packet, "output_side_packet")
        options = _node_options(node)
        handler_name = (
            handler.input_stream_handler if handler is not None else DEFAULT_INPUT_STREAM_HANDLER
        )
    except GraphConfigError as bad:
        raise GraphConfigError(*(f"{where}: {problem}" for problem in bad.problems)) from None
    return NodeConfig(
        name=node.name,
        calculator=node.calculator,
        inputs=inputs,
        outputs=outputs,
        input_side_packets=side_inputs,
        output_side_packets=side_outputs,
        back_edges=back_edges,
        input_stream_handler=handler_name,
        sync_sets=sync_sets,
        options=MappingProxyType(options),
        label=label,
    )


def _handler_config(node: Message, config: Message) -> Message | None:
    # A node without its own handler uses the graph's (calculator.proto says so).
    if node.HasField("input_stream_handler"):
        return node.input_stream_handler
    if config.HasField("input_stream_handler"):
        return config.input_stream_handler
    return None


def _sync_sets(handler: Message | None) -> tuple[frozenset[str], ...]:
    if handler is None:
        return ()
    options = _extensions(handler.options).get(_SYNC_SET_OPTIONS)
    if options is None:
        return ()
    return tuple(
        frozenset(parse_tag_index(tag_index) for tag_index in sync_set.tag_index)
        for sync_set in options.sync_set
    )


def _node_options(node: Message) -> dict[str, Message]:
    found: dict[str, Message] = {}
    for packed in node.node_options:
        name = packed.TypeName()
        if name in found:
            # calculator.proto: "Each node_options message must have a different message type".
            raise GraphConfigError(f"node_options holds {name} twice")
        try:
            found[name] = _real_message(name, packed.value)
        except KeyError:
            # Written as `node_options: { type_url: ... value: ... }` (or left empty) rather
            # than `[type.googleapis.com/TYPE] { ... }`, which protobuf checks as it reads.
            raise GraphConfigError(
                f"node_options type_url {packed.type_url!r} names no options type ovmsx knows "
                f"(known types: {', '.join(_known_options())})"
            ) from None
        except DecodeError:
            raise GraphConfigError(
                f"node_options value is not a serialized {name} message"
            ) from None
    # The proto2 form wins over node_options, as MediaPipe documents.
    found.update(_extensions(node.options))
    for name, message in found.items():
        missing = message.FindInitializationErrors()
        if missing:
            raise GraphConfigError(f"{name} is missing required field {', '.join(missing)}")
    return found


def _extensions(options: Message) -> dict[str, Message]:
    """The extensions set on a (lenient) options message, as real messages by type name."""
    found = {}
    for field, value in options.ListFields():
        if field.is_extension and field.message_type is not None:
            name = field.message_type.full_name
            found[name] = _real_message(name, value.SerializePartialToString())
    return found


def _real_message(full_name: str, serialized: bytes) -> Message:
    """``serialized`` as the message type ``full_name``: KeyError for a type the generated
    module does not hold, DecodeError for bytes that do not parse."""
    # Every type the lenient pool knows is also in the generated module's pool.
    message_class = message_factory.GetMessageClass(
        pb.DESCRIPTOR.pool.FindMessageTypeByName(full_name)
    )
    message = message_class()
    message.MergeFromString(serialized)
    return message
