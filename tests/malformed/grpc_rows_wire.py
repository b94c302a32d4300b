"""Malformed gRPC on the wire: protobuf no library would write, parameters of types ovmsx
does not take, garbage on the small RPCs, oversized metadata, and errors inside streams.
"""

from __future__ import annotations

import re

from good_requests import X
from grpc_requests import (
    EXHAUSTED,
    INVALID,
    NOT_A_REQUEST,
    NOT_FOUND,
    RANDOM,
    UNKNOWN,
    GrpcRow,
    good_bytes,
    infer_request,
    with_parameter,
)
from ovms_messages import (
    BATCH,
    MISSING_INPUT,
    NAME_MISSING,
    NO_OF_DIMS,
    NO_OF_INPUTS,
    UNEXPECTED,
    VERSION_INVALID,
    VERSION_MISSING,
)
from protobuf_wire import (
    END_GROUP,
    FIXED32,
    FIXED64,
    LEN,
    length_delimited,
    tag,
    varint,
    varint_field,
)

WIRE_ROWS: list[GrpcRow] = [
    # -- garbage protobuf -----------------------------------------------------------------
    GrpcRow(
        "protobuf-random-bytes",
        "add_one",
        RANDOM,
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 6: unsupported wire type",
    ),
    GrpcRow(
        "protobuf-all-ff",
        "add_one",
        b"\xff" * 64,
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 10: varint longer than 10 bytes",
    ),
    GrpcRow(
        "protobuf-truncated-varint",
        "add_one",
        tag(2, LEN) + b"\x80\x80",
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 3: truncated varint",
    ),
    GrpcRow(
        "protobuf-varint-11-bytes",
        "add_one",
        tag(2, LEN) + b"\xff" * 10 + b"\x01",
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 11: varint longer than 10 bytes",
    ),
    GrpcRow(
        "protobuf-length-past-the-end",
        "add_one",
        tag(1, LEN) + varint(2**31) + b"add_one",
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 6: field runs past the end of the message",
    ),
    GrpcRow(
        "protobuf-field-number-0",
        "add_one",
        b"\x02\x00" + good_bytes("add_one"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 0: field number 0",
    ),
    GrpcRow(
        "protobuf-wrong-wire-type-name",
        "add_one",
        varint_field(1, 7) + good_bytes("add_one")[9:],
        NOT_FOUND,
        f"{NAME_MISSING} - name: ",
    ),
    GrpcRow(
        "protobuf-wrong-wire-type-inputs",
        "add_one",
        length_delimited(1, b"add_one") + tag(5, FIXED64) + bytes(8),
        INVALID,
        f"{NO_OF_INPUTS} - Expected: 1; Actual: 0",
    ),
    GrpcRow(
        "protobuf-end-group",
        "add_one",
        tag(3, END_GROUP),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 1: unsupported wire type",
    ),
    GrpcRow(
        "protobuf-unclosed-group",
        "add_one",
        tag(9, 3) + good_bytes("add_one"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 1: unsupported wire type",
    ),
    GrpcRow(
        "protobuf-nested-garbage-input",
        "add_one",
        length_delimited(1, b"add_one") + length_delimited(5, b"\xff" * 9),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 20: truncated varint",
    ),
    GrpcRow(
        "protobuf-nested-garbage-contents",
        "add_one",
        length_delimited(1, b"add_one") + length_delimited(5, length_delimited(5, b"\x0d\x00")),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 14: field runs past the end of the message",
    ),
    GrpcRow(
        "protobuf-nested-garbage-parameter",
        "echo",
        with_parameter("echo", "k", b"\xff\xff"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 73: truncated varint",
    ),
    GrpcRow(
        "protobuf-truncated-request",
        "add_one",
        good_bytes("add_one")[:-7],
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 30: field runs past the end of the message",
    ),
    GrpcRow(
        "protobuf-name-not-utf8",
        "add_one",
        length_delimited(1, b"\xff\xfe"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 2: ModelInferRequest.model_name is not valid "
        "UTF-8",
    ),
    GrpcRow(
        "protobuf-datatype-not-utf8",
        "add_one",
        infer_request(datatype="FP32").replace(b"FP32", b"\xff\xfe\xfd\xfc"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 20: InferInputTensor.datatype is not valid "
        "UTF-8",
    ),
    GrpcRow(
        "protobuf-packed-shape-truncated",
        "add_one",
        length_delimited(1, b"add_one")
        + length_delimited(5, length_delimited(1, b"input") + length_delimited(3, b"\x01\x8a")),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 22: truncated varint",
    ),
    GrpcRow(
        "protobuf-parameter-key-field-0",
        "add_one",
        good_bytes("add_one") + length_delimited(4, b"\x00\x01"),
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 72: field number 0",
    ),
    GrpcRow(
        "protobuf-fixed32-shape",
        "add_one",
        length_delimited(1, b"add_one")
        + length_delimited(
            5,
            length_delimited(1, b"input")
            + length_delimited(2, b"FP32")
            + tag(3, FIXED32)
            + bytes(4),
        )
        + length_delimited(7, X.tobytes()),
        INVALID,
        f"{NO_OF_DIMS} - Expected: (1,10); Actual: (); input name: input",
    ),
    # -- wrong parameters -----------------------------------------------------------------
    GrpcRow(
        "parameter-double-graph",
        "echo",
        with_parameter("echo", "p", tag(4, FIXED64) + bytes(8)),
        UNKNOWN,
        "Functionality not implemented - Handling parameters of other types than: bool, string, "
        "int64 is not supported",
    ),
    GrpcRow(
        "parameter-uint64-graph",
        "echo",
        with_parameter("echo", "p", varint_field(5, 7)),
        UNKNOWN,
        "Functionality not implemented - Handling parameters of other types than: bool, string, "
        "int64 is not supported",
    ),
    GrpcRow(
        "parameter-empty-graph",
        "echo",
        with_parameter("echo", "p", b""),
        UNKNOWN,
        "Functionality not implemented - Handling parameters of other types than: bool, string, "
        "int64 is not supported",
    ),
    GrpcRow(
        "timestamp-as-string",
        "echo",
        with_parameter("echo", "OVMS_MP_TIMESTAMP", length_delimited(3, b"now")),
        UNKNOWN,
        "Malformed packet timestamp - Invalid timestamp format in request parameter "
        "OVMS_MP_TIMESTAMP. Should be int64",
    ),
    GrpcRow(
        "timestamp-as-bool",
        "echo",
        with_parameter("echo", "OVMS_MP_TIMESTAMP", varint_field(1, 1)),
        UNKNOWN,
        "Malformed packet timestamp - Invalid timestamp format in request parameter "
        "OVMS_MP_TIMESTAMP. Should be int64",
    ),
    # -- other RPCs -----------------------------------------------------------------------
    GrpcRow(
        "metadata-garbage",
        "add_one",
        b"\xff" * 16,
        INVALID,
        "request is not a valid ModelMetadataRequest: malformed message at byte 10: "
        "varint longer than 10 bytes",
        method="ModelMetadata",
    ),
    GrpcRow(
        "ready-garbage",
        "add_one",
        b"\xff" * 16,
        INVALID,
        "request is not a valid ModelReadyRequest: malformed message at byte 10: "
        "varint longer than 10 bytes",
        method="ModelReady",
    ),
    GrpcRow(
        "ready-name-not-utf8",
        "add_one",
        length_delimited(1, b"\xff\xfe"),
        INVALID,
        "request is not a valid ModelReadyRequest: malformed message at byte 2: "
        "ModelReadyRequest.name is not valid UTF-8",
        method="ModelReady",
    ),
    GrpcRow(
        "metadata-version-above-int64",
        "add_one",
        length_delimited(1, b"add_one") + length_delimited(2, b"9" * 20),
        INVALID,
        f"{VERSION_INVALID} - version: '99999999999999999999'",
        method="ModelMetadata",
    ),
    GrpcRow(
        "ready-unknown-model",
        "add_one",
        length_delimited(1, b"nope"),
        NOT_FOUND,
        f"{NAME_MISSING} - name: nope",
        method="ModelReady",
    ),
    # -- oversized headers ----------------------------------------------------------------
    GrpcRow(
        "metadata-above-the-limit",
        "add_one",
        good_bytes("add_one"),
        EXHAUSTED,
        re.compile(
            r"received metadata size exceeds hard limit \(value length 20000 vs\. (?P<limit>\d+)\)"
        ),
        metadata=(("x-big", "v" * 20_000),),
    ),
    GrpcRow(
        "metadata-many-entries",
        "add_one",
        good_bytes("add_one"),
        EXHAUSTED,
        re.compile(
            r"received metadata size exceeds hard limit \((?P<size>\d+) vs\. (?P<limit>\d+)\);"
            r"(?P<headers> .*)"
        ),
        metadata=tuple((f"x-{i}", "v" * 100) for i in range(200)),
    ),
    # -- streams --------------------------------------------------------------------------
    GrpcRow(
        "stream-model-shape",
        "add_one",
        [infer_request(shape=[2, 5], request_id="s-1"), good_bytes("add_one")],
        None,
        f"{BATCH} - Expected: 1; Actual: 2; input name: input",
        request_id="s-1",
    ),
    GrpcRow(
        "stream-model-unknown-input",
        "add_one",
        [good_bytes("add_one"), infer_request(name="x", request_id="s-2"), good_bytes("add_one")],
        None,
        f"{MISSING_INPUT} - Required input: input",
        request_id="s-2",
    ),
    GrpcRow(
        "stream-garbage-mid-stream",
        "add_one",
        [good_bytes("add_one"), b"\xff" * 8, good_bytes("add_one")],
        None,
        f"{NOT_A_REQUEST}: malformed message at byte 8: truncated varint",
    ),
    GrpcRow(
        "stream-model-version-unknown",
        "add_one",
        [
            good_bytes("add_one"),
            infer_request(version="7", request_id="s-3"),
            good_bytes("add_one"),
        ],
        None,
        f"{VERSION_MISSING} - model add_one version 7",
        request_id="s-3",
    ),
    GrpcRow(
        "stream-graph-input-unknown",
        "echo",
        [good_bytes("echo"), infer_request("echo", "x", request_id="s-4"), good_bytes("echo")],
        None,
        f"{UNEXPECTED} - x is unexpected; partial deserialization of subsequent requests",
        request_id="s-4",
    ),
    GrpcRow(
        "stream-opened-on-unknown-model",
        "add_one",
        [infer_request("no_such_model")],
        NOT_FOUND,
        f"{NAME_MISSING} - no_such_model",
    ),
    GrpcRow(
        "stream-opened-with-garbage",
        "add_one",
        [b"\xff" * 8],
        INVALID,
        f"{NOT_A_REQUEST}: malformed message at byte 8: truncated varint",
    ),
]
