"""Malformed gRPC requests around the tensors: overflowing versions and timestamps, names
nobody serves, and BYTES buffers whose length prefixes lie.
"""

from __future__ import annotations

from good_requests import X, add_input, pack_strings
from grpc_requests import (
    INVALID,
    NOT_FOUND,
    UNKNOWN,
    GrpcRow,
    changed,
    infer_request,
    strings_request,
    typed_strings,
    with_parameter,
)
from ovms_messages import (
    INPUT_FORMAT,
    MISSING_INPUT,
    NAME_MISSING,
    NO_OF_INPUTS,
    STRUCTURE,
    UNEXPECTED,
    VALUE_COUNT,
    VERSION_INVALID,
    VERSION_MISSING,
)
from protobuf_wire import varint_field
from tritonclient.grpc import service_pb2 as pb

REQUEST_ROWS: list[GrpcRow] = [
    # -- overflows ------------------------------------------------------------------------
    GrpcRow(
        "version-above-int64",
        "add_one",
        infer_request(version="99999999999999999999"),
        INVALID,
        f"{VERSION_INVALID} - version: '99999999999999999999'",
    ),
    GrpcRow(
        "version-2^63",
        "add_one",
        infer_request(version=str(2**63)),
        INVALID,
        f"{VERSION_INVALID} - version: '9223372036854775808'",
    ),
    GrpcRow(
        "version-int64-max",
        "add_one",
        infer_request(version=str(2**63 - 1)),
        NOT_FOUND,
        f"{VERSION_MISSING} - model add_one version 9223372036854775807",
    ),
    GrpcRow(
        "version-negative",
        "add_one",
        infer_request(version="-1"),
        NOT_FOUND,
        f"{VERSION_MISSING} - model add_one version -1",
    ),
    GrpcRow(
        "version-not-a-number",
        "add_one",
        infer_request(version="abc"),
        INVALID,
        f"{VERSION_INVALID} - version: 'abc'",
    ),
    GrpcRow(
        "version-leading-zero",
        "add_one",
        infer_request(version="01"),
        INVALID,
        f"{VERSION_INVALID} - version: '01'",
    ),
    GrpcRow(
        "pipeline-version-above-int64",
        "add_two",
        infer_request("add_two", version="1" * 30),
        INVALID,
        f"{VERSION_INVALID} - version: '111111111111111111111111111111'",
    ),
    GrpcRow(
        "graph-version-above-int64",
        "echo",
        infer_request("echo", "in", version="9" * 25),
        INVALID,
        f"{VERSION_INVALID} - version: '9999999999999999999999999'",
    ),
    GrpcRow(
        "timestamp-2^63-on-the-wire",
        "echo",
        with_parameter("echo", "OVMS_MP_TIMESTAMP", varint_field(2, 2**63)),
        UNKNOWN,
        "Malformed packet timestamp - -9223372036854775808 is outside [-9223372036854775805, "
        "9223372036854775804]",
    ),
    GrpcRow(
        "timestamp-int64-max",
        "echo",
        with_parameter("echo", "OVMS_MP_TIMESTAMP", varint_field(2, 2**63 - 1)),
        UNKNOWN,
        "Malformed packet timestamp - 9223372036854775807 is outside [-9223372036854775805, "
        "9223372036854775804]",
    ),
    # -- unknown names --------------------------------------------------------------------
    GrpcRow(
        "model-unknown",
        "add_one",
        infer_request("no_such_model"),
        NOT_FOUND,
        f"{NAME_MISSING} - name: no_such_model",
    ),
    GrpcRow(
        "model-empty-name", "add_one", infer_request(""), NOT_FOUND, f"{NAME_MISSING} - name: "
    ),
    GrpcRow(
        "version-unknown",
        "add_one",
        infer_request(version="3"),
        NOT_FOUND,
        f"{VERSION_MISSING} - model add_one version 3",
    ),
    GrpcRow(
        "input-unknown",
        "add_one",
        infer_request(name="inputs"),
        INVALID,
        f"{MISSING_INPUT} - Required input: input",
    ),
    GrpcRow(
        "input-extra",
        "add_one",
        changed("add_one", lambda m: add_input(m, "extra", X)),
        INVALID,
        f"{NO_OF_INPUTS} - Expected: 1; Actual: 2",
    ),
    GrpcRow(
        "no-inputs",
        "add_one",
        pb.ModelInferRequest(model_name="add_one").SerializeToString(),
        INVALID,
        f"{NO_OF_INPUTS} - Expected: 1; Actual: 0",
    ),
    GrpcRow(
        "output-unknown",
        "add_one",
        changed("add_one", lambda m: m.outputs.add(name="nope")),
        INVALID,
        "Missing output with specific name - Required output: nope",
    ),
    GrpcRow(
        "pipeline-input-unknown",
        "add_two",
        infer_request("add_two", name="x"),
        INVALID,
        f"{MISSING_INPUT} - Required input: input",
    ),
    GrpcRow(
        "pipeline-output-unknown",
        "add_two",
        changed("add_two", lambda m: m.outputs.add(name="nope")),
        INVALID,
        "Missing output with specific name - Required output: nope",
    ),
    GrpcRow(
        "graph-input-unknown",
        "echo",
        infer_request("echo", "x"),
        INVALID,
        f"{UNEXPECTED} - x is unexpected",
    ),
    GrpcRow(
        "pipeline-version-unknown",
        "add_two",
        infer_request("add_two", version="2"),
        NOT_FOUND,
        f"{VERSION_MISSING} - add_two: pipelines have version 1",
    ),
    GrpcRow(
        "graph-version-unknown",
        "echo",
        infer_request("echo", "in", version="2"),
        NOT_FOUND,
        f"{VERSION_MISSING} - echo: graphs have version 1",
    ),
    # -- broken BYTES ---------------------------------------------------------------------
    GrpcRow(
        "bytes-length-past-the-end",
        "strings",
        strings_request([1], b"\x05\x00\x00\x00ab"),
        INVALID,
        f"{INPUT_FORMAT} - BYTES element 0 at byte offset 0: declares 5 bytes but only 2 follow",
    ),
    GrpcRow(
        "bytes-truncated-prefix",
        "strings",
        strings_request([2], pack_strings([b"a"]) + b"\x01\x00"),
        INVALID,
        f"{INPUT_FORMAT} - BYTES element 1 at byte offset 5: length prefix truncated, 2 of 4 "
        "bytes present",
    ),
    GrpcRow(
        "bytes-length-2^32-1",
        "strings",
        strings_request([1], b"\xff\xff\xff\xff" + b"abc"),
        INVALID,
        f"{INPUT_FORMAT} - BYTES element 0 at byte offset 0: declares 4294967295 bytes but only 3 "
        "follow",
    ),
    GrpcRow(
        "bytes-count-above-shape",
        "strings",
        strings_request([1], pack_strings([b"a", b"b"])),
        INVALID,
        f"{VALUE_COUNT} - BYTES buffer of 10 bytes holds 2 elements; the shape needs 1",
    ),
    GrpcRow(
        "bytes-count-below-shape",
        "strings",
        strings_request([3], pack_strings([b"a"])),
        INVALID,
        f"{VALUE_COUNT} - BYTES buffer of 5 bytes holds 1 elements; the shape needs 3",
    ),
    GrpcRow(
        "bytes-typed-count-wrong",
        "strings",
        changed("strings", typed_strings),
        INVALID,
        f"{VALUE_COUNT} - Expected: 3 values; Actual: 2 values; input name: text",
    ),
    GrpcRow(
        "bytes-raw-and-typed",
        "strings",
        changed("strings", lambda m: m.inputs[0].contents.bytes_contents.append(b"a")),
        INVALID,
        f"{STRUCTURE} - Detected buffer in InferInputTensor contents for input: text",
    ),
    GrpcRow(
        "graph-bytes-typed-count-wrong",
        "echo",
        infer_request("echo", "in", "BYTES", [3], typed=[b"a"], contents_field="bytes_contents"),
        INVALID,
        f"{VALUE_COUNT} - Expected: 3 values; Actual: 1 values; input name: in",
    ),
]
