"""Fuzz targets for what ovmsx reads without a model: the KServe BYTES layout, encoded images,
graph.pbtxt and config.json.

Seeds are made here or taken from the project's examples, so that mutations start from inputs
that reach deep into each parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from fuzz_contract import Finding

from ovmsx import _core, bytes_codec
from ovmsx.config.config_source import servables_of
from ovmsx.config.server_config import parse_config
from ovmsx.graph.calculator_registry import known_names
from ovmsx.graph.graph_config import parse_graph
from ovmsx.graph.graph_validation import topological_order, validate_graph
from ovmsx.images import image_endpoint
from ovmsx.images.convert import image_tensor
from ovmsx.pipeline.ports import PortSpec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# -- BYTES -----------------------------------------------------------------------------------


def bytes_unpacking(data: bytes) -> None:
    """First byte: the element count the shape announces (255: none); the rest is a buffer,
    read as KServe BYTES, as padded rows, and as a ModelInferRequest holding bytes_contents."""
    if not data:
        return
    count = None if data[0] == 255 else data[0]
    buffer = data[1:]
    try:
        split = _core.split_bytes_contents(buffer)
    except ValueError as error:  # the core's wire reader refuses a malformed message
        if not str(error).strip():
            raise Finding("split_bytes_contents failed without a message") from error
    else:
        for _, elements, packed in split[1]:
            if len(bytes_codec.unpack(packed)) != elements:
                raise Finding("bytes_contents packed into another number of elements")
    width = count or 1
    rows = len(buffer) // width
    padded = np.frombuffer(buffer[: rows * width], np.uint8).reshape(rows, width)
    if len(bytes_codec.from_padded(padded)) != rows:
        raise Finding("padded rows read back as another number of strings")
    elements = bytes_codec.unpack(buffer, count)  # the refusals are StatusErrors
    views = bytes_codec.unpack_views(buffer, count)
    if [bytes(v) for v in views] != elements:
        raise Finding("unpack_views and unpack disagree")
    if bytes_codec.pack(elements) != buffer:
        raise Finding("a buffer that unpacks does not pack back to itself")


def bytes_seeds() -> list[bytes]:
    packed = bytes_codec.pack([b"ab", b"", b"\x00\xff", b"x" * 40])
    request = bytes.fromhex("0a03616263")  # model_name "abc"
    with_strings = _bytes_contents_request([b"hello", b"", b"w"])
    return [b"\xff" + packed, b"\x04" + packed, b"\x03" + packed, b"\x00", b"\x02" + request,
            b"\xff" + with_strings, b"\x01" + bytes_codec.pack([b"z"])]  # fmt: skip


def _bytes_contents_request(strings: list[bytes]) -> bytes:
    from ovmsx.frontend import grpc_predict_v2_pb2 as pb

    message = pb.ModelInferRequest(model_name="m")
    tensor = message.inputs.add(name="t", datatype="BYTES", shape=[len(strings)])
    tensor.contents.bytes_contents.extend(strings)
    return message.SerializeToString()


# -- encoded images --------------------------------------------------------------------------

_ANY = (0, -1)
_NHWC = "[N,H,W,C]"


def _port(dims: list, datatype: str, layout: str = _NHWC) -> PortSpec:
    bounds = tuple(d if isinstance(d, tuple) else (d, d) for d in dims)
    return PortSpec("image", datatype, bounds, False, layout)


# The image inputs a model may have: fixed and resizable, any size, ranges, no layout (no
# resizing), a batch of two.
IMAGE_PORTS = (
    _port([1, 16, 16, 3], "UINT8"),
    _port([1, 16, 16, 3], "FP32"),
    _port([(1, 4), _ANY, _ANY, 3], "UINT8"),
    _port([1, (8, 32), (8, 32), (1, 4)], "FP16"),
    _port([1, 8, 8, 1], "UINT16", ""),
    _port([2, 16, 16, 3], "INT8"),
    _port([_ANY, 16, 16, _ANY], "INT32"),
)


class _EncodedImages:
    """A BYTES input as the frontends hand it to the image path."""

    def __init__(self, images: list[bytes], one_by_one: bool) -> None:
        self.name = "image"
        self.shape = (len(images),)
        self._packed = bytes_codec.pack(images)
        self._count = len(images) if one_by_one else None

    def packed_bytes(self) -> tuple[memoryview, int | None]:
        return memoryview(self._packed), self._count


def image_decoding(data: bytes) -> None:
    """First byte: the endpoint; second: bit 0 one element at a time (else raw data), bit 1
    cut the rest into that many images (else the rest, repeated), bits 2-3 images - 1."""
    if len(data) < 2:
        return
    endpoint = image_endpoint(IMAGE_PORTS[data[0] % len(IMAGE_PORTS)])
    assert endpoint is not None
    count = 1 + (data[1] >> 2) % 4
    rest = data[2:]
    if data[1] & 2:
        step = -(-len(rest) // count) or 1
        images = [rest[i * step : (i + 1) * step] for i in range(count)]
    else:
        images = [rest] * count
    tensor = image_tensor(endpoint, _EncodedImages(images, bool(data[1] & 1)))
    if tensor.shape[0] != count or tensor.datatype != endpoint.datatype:
        raise Finding(f"{count} images became {tensor.shape} {tensor.datatype}")


def image_seeds() -> list[bytes]:
    rng = np.random.default_rng(0)
    colour = rng.integers(0, 255, (12, 20, 3), np.uint8)
    gray16 = rng.integers(0, 65535, (8, 8), np.uint16)
    alpha = rng.integers(0, 255, (9, 9, 4), np.uint8)
    files = [
        cv2.imencode(".jpg", colour)[1].tobytes(),
        cv2.imencode(".png", colour)[1].tobytes(),
        cv2.imencode(".png", gray16)[1].tobytes(),
        cv2.imencode(".png", alpha)[1].tobytes(),
        cv2.imencode(".bmp", colour[:4, :4])[1].tobytes(),
    ]
    return [bytes([port, mode]) + image for port in range(len(IMAGE_PORTS))
            for mode, image in zip((0, 1, 5, 2), files[:4], strict=True)] + [
        b"\x00\x00" + files[4], b"\x02\x07" + files[0][:200]]  # fmt: skip


# -- graph.pbtxt -----------------------------------------------------------------------------


def graph_parsing(data: bytes) -> None:
    """The text as ovmsx reads a graph file: parsed, then validated (nodes, streams, tags,
    handlers, cycles), then put in order. Non-UTF-8 is refused before parsing."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the loader refuses it with FILE_INVALID before any parsing
    source = "fuzz/graph.pbtxt"
    config = parse_graph(text, source)
    validate_graph(config, frozenset(known_names()), source)
    order = topological_order(config, source)
    if sorted(order) != list(range(len(config.nodes))):
        raise Finding(f"the node order {order} is not one of {len(config.nodes)} nodes")


def graph_seeds() -> list[bytes]:
    files = sorted(EXAMPLES.glob("*/**/graph.pbtxt"))
    inline = b"""input_stream: "in"
output_stream: "out"
node { calculator: "PythonExecutorCalculator" input_stream: "A:in" output_stream: "B:mid"
  node_options: { [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: {
    handler_path: "h.py" } } }
node { calculator: "PythonExecutorCalculator" input_stream: "B:mid" output_stream: "C:out"
  input_stream_handler { input_stream_handler: "SyncSetInputStreamHandler"
    options { [mediapipe.SyncSetInputStreamHandlerOptions.ext] { sync_set { tag_index: "B" } } } }
  node_options: { [type.googleapis.com/mediapipe.PythonExecutorCalculatorOptions]: {
    handler_path: "h.py" } } }
"""
    return [path.read_bytes() for path in files] + [inline]


# -- config.json -----------------------------------------------------------------------------


def config_parsing(data: bytes) -> None:
    """The text as ovmsx reads a config file: validated into typed objects, then into what
    it serves (graph subconfigs, which name files, are only read when they exist)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # refused with its own message before parsing (config_source._read_once)
    config = parse_config(text, "/nonexistent/fuzz/config.json")
    servables_of(config)


def config_seeds() -> list[bytes]:
    files = sorted(EXAMPLES.glob("**/config.json"))
    full = {
        "model_config_list": [
            {"config": {"name": "m", "base_path": "models/m", "shape": "(1,3,-1:8,8)",
                        "layout": "NHWC:NCHW", "batch_size": "auto", "nireq": 2,
                        "model_version_policy": {"specific": {"versions": [1, 2]}},
                        "plugin_config": {"NUM_STREAMS": 2}}},
            {"config": {"name": "n", "base_path": "/tmp/n", "shape": {"a": "auto"}}},
        ],
        "custom_node_library_config_list": [{"name": "lib", "base_path": "/tmp/lib.so"}],
        "pipeline_config_list": [
            {"name": "p", "inputs": ["in"],
             "nodes": [{"name": "node", "library_name": "lib", "type": "custom",
                        "params": {"k": "v"}, "inputs": [{"x": {"node_name": "request",
                                                                "data_item": "in"}}],
                        "outputs": [{"data_item": "y", "alias": "y"}]}],
             "outputs": [{"out": {"node_name": "node", "data_item": "y"}}]}],
        "mediapipe_config_list": [{"name": "g", "graph_path": "g.pbtxt"}],
        "monitoring": {"metrics": {"enable": True, "metrics_list": ["ovms_requests_success"]}},
    }  # fmt: skip
    return [path.read_bytes() for path in files] + [json.dumps(full).encode()]
