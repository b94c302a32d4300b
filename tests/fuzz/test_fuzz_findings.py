"""What the fuzz targets found, each kept as a test of its own (the input as the fuzzer wrote
it, and what ovmsx must now answer)."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from targets_custom_node import build_node, custom_node_outputs

from ovmsx import _core
from ovmsx.status import StatusCode, StatusError

# FP32 [1], 4 bytes, named by the bytes C3 28 41: not UTF-8 (C3 needs a continuation byte).
NOT_UTF8_NAME = bytes([0, 1, 3, 0xC3, 0x28, 0x41, 1, 1, 1, 0x40])
# The same output with 7 bytes of data: refused for its size, and the message names it.
NOT_UTF8_NAME_WRONG_SIZE = bytes([0, 1, 3, 0xC3, 0x28, 0x41, 1, 1, 1, 0, 7, 0])


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_node(tmp_path_factory.mktemp("fuzz_node"))


def _execute(node: Path, description: bytes) -> list[_core.Tensor]:
    instance = _core.CustomNodeLibrary.load(str(node)).initialize({})
    try:
        return instance.execute([_core.Tensor("d", np.frombuffer(description, np.uint8))])
    finally:
        instance.close()


def test_an_output_name_that_is_not_utf8_is_refused(node: Path) -> None:
    # Found by the custom_node target: the output passed validation, and reading its name
    # in Python raised UnicodeDecodeError (an internal error in a pipeline).
    with pytest.raises(StatusError) as refused:
        _execute(node, NOT_UTF8_NAME)
    assert refused.value.code is StatusCode.NODE_LIBRARY_OUTPUT_MISSING_NAME
    assert refused.value.message == (
        "Custom node output is missing name - output: #0 (name not UTF-8)"
    )


def test_a_refusal_of_an_output_not_utf8_named_is_text(node: Path) -> None:
    with pytest.raises(StatusError) as refused:
        _execute(node, NOT_UTF8_NAME_WRONG_SIZE)
    assert refused.value.code is StatusCode.NODE_LIBRARY_INVALID_CONTENT_SIZE
    assert refused.value.details == (
        "Expected: 4 bytes; Actual: 7 bytes; output: #0 (name not UTF-8)"
    )


@pytest.mark.parametrize("description", [NOT_UTF8_NAME, NOT_UTF8_NAME_WRONG_SIZE])
def test_the_refused_outputs_all_go_back(description: bytes, tmp_path: Path) -> None:
    # The fuzz target itself checks that every pointer the node handed out came back.
    one_input = custom_node_outputs(tmp_path)
    with pytest.raises(StatusError):
        one_input(description)


def _chunk(kind: bytes, data: bytes, length: int | None = None) -> bytes:
    declared = len(data) if length is None else length
    return struct.pack(">I", declared) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# A 9x9 PNG whose second chunk declares 2 GiB and holds 3 bytes: 48 bytes in all.
PNG_HUGE_CHUNK = (
    b"\x89PNG\r\n\x1a\n"
    + _chunk(b"IHDR", struct.pack(">IIBBBBB", 9, 9, 8, 2, 0, 0, 0))
    + _chunk(b"tEXt", b"k\x00v", 0x7FF00000)
)

# The peak is this process's own (VmHWM): ru_maxrss keeps the parent's peak across exec, and a
# test worker that has served LLMs may have peaked far above what the decode costs.
_DECODE_AND_MEASURE = """
import re, sys
from targets_parsers import IMAGE_PORTS, _EncodedImages
from ovmsx.images import image_endpoint
from ovmsx.images.convert import image_tensor
from ovmsx.status import StatusError
try:
    image_tensor(image_endpoint(IMAGE_PORTS[0]), _EncodedImages([sys.stdin.buffer.read()], True))
except StatusError as error:
    print(error.code.name, error.details)
status = open("/proc/self/status").read()
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) // 1024)
"""


def test_a_png_declaring_a_huge_chunk_is_refused_without_allocating_it() -> None:
    # Found by the images target: OpenCV allocates a chunk's declared length before reading
    # it, so 48 bytes cost 2 GiB of memory before the image failed to parse.
    done = subprocess.run(
        [sys.executable, "-c", _DECODE_AND_MEASURE],
        input=PNG_HUGE_CHUNK,
        capture_output=True,
        cwd=Path(__file__).parent,
        check=True,
    )
    refusal, peak_mb = done.stdout.decode().splitlines()
    assert refusal == (
        "IMAGE_PARSING_FAILED image 0 is no JPEG or PNG that can be decoded; input name: image"
    )
    assert int(peak_mb) < 1024, f"decoding took {peak_mb} MiB"


# Found by the graph target: node_options written as a bare Any (`node_options: { }`, or with a
# type_url and value of its own) reached protobuf's lookup of an empty or unknown type, and the
# graph failed to load with KeyError("Couldn't find message ") instead of a message.
KNOWN = "mediapipe.PythonExecutorCalculatorOptions"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ("{ }", "node_options type_url '' names no options type ovmsx knows"),
        ('{ type_url: "type.googleapis.com/" }',
         "node_options type_url 'type.googleapis.com/' names no options type ovmsx knows"),
        ('{ type_url: "x/mediapipe.Nope" value: "abc" }',
         "node_options type_url 'x/mediapipe.Nope' names no options type ovmsx knows"),
        (f'{{ type_url: "x/{KNOWN}" value: "\\xff\\xff" }}',
         f"node_options value is not a serialized {KNOWN} message"),
    ],
)  # fmt: skip
def test_node_options_of_no_known_type_name_the_node_and_the_type(
    options: str, problem: str
) -> None:
    from ovmsx.graph.graph_config import GraphConfigError, parse_graph

    with pytest.raises(GraphConfigError) as refused:
        parse_graph(f'node {{ calculator: "X" node_options: {options} }}', "dir/graph.pbtxt")
    assert refused.value.code is StatusCode.MEDIAPIPE_GRAPH_CONFIG_FILE_INVALID
    message = str(refused.value)
    assert message.startswith(
        "Failed to read protobuf graph configuration file - dir/graph.pbtxt: X (node 1): " + problem
    ), message


def test_node_options_as_a_bare_any_of_a_known_type_are_read() -> None:
    from ovmsx.graph.graph_config import parse_graph

    text = (
        f'node {{ calculator: "X" node_options: {{ type_url: "x/{KNOWN}" value: "\\n\\x01a" }} }}'
    )
    (node,) = parse_graph(text, "graph.pbtxt").nodes
    assert node.options[KNOWN].handler_path == "a"
