"""The status table against COMPAT.md §7.3, and the exception that carries a code."""

from __future__ import annotations

import pytest

from ovmsx import _core, bytes_codec
from ovmsx.status import (
    InvalidArgumentError,
    NotFoundError,
    StatusCode,
    StatusError,
    render,
    status_error,
    status_info,
)

NOT_FOUND, INVALID_ARGUMENT, UNAVAILABLE, UNKNOWN, FAILED_PRECONDITION, ABORTED, INTERNAL = (
    5, 3, 14, 2, 9, 10, 13,
)  # fmt: skip

# (code, exact OVMS message, gRPC code, HTTP status) as COMPAT.md §7.3 lists them.
OVMS_TABLE = [
    ("MODEL_NAME_MISSING", "Model with requested name is not found", NOT_FOUND, 404),
    ("MODEL_VERSION_MISSING", "Model with requested version is not found", NOT_FOUND, 404),
    ("MODEL_MISSING", "Model with requested name and/or version is not found", NOT_FOUND, 404),
    (
        "PIPELINE_DEFINITION_NAME_MISSING",
        "Pipeline with requested name is not found",
        NOT_FOUND,
        404,
    ),
    (
        "MEDIAPIPE_DEFINITION_NAME_MISSING",
        "Mediapipe graph definition with requested name is not found",
        NOT_FOUND,
        404,
    ),
    (
        "MODEL_VERSION_NOT_LOADED_YET",
        "Model with requested version is not loaded yet",
        UNAVAILABLE,
        404,
    ),
    ("MODEL_VERSION_NOT_LOADED_ANYMORE", "Model with requested version is retired", NOT_FOUND, 404),
    ("MEDIAPIPE_DEFINITION_NOT_LOADED_YET", "Mediapipe is not loaded yet", UNAVAILABLE, 500),
    (
        "MODEL_VERSION_INVALID_FORMAT",
        "invalid model version format in request",
        INVALID_ARGUMENT,
        500,
    ),
    ("INVALID_NO_OF_INPUTS", "Invalid number of inputs", INVALID_ARGUMENT, 400),
    ("INVALID_MISSING_INPUT", "Missing input with specific name", INVALID_ARGUMENT, 400),
    ("INVALID_UNEXPECTED_INPUT", "Unexpected input", INVALID_ARGUMENT, 400),
    ("INVALID_NO_OF_SHAPE_DIMENSIONS", "Invalid number of shape dimensions", INVALID_ARGUMENT, 400),
    ("INVALID_SHAPE", "Invalid input shape", INVALID_ARGUMENT, 400),
    ("INVALID_BATCH_SIZE", "Invalid input batch size", INVALID_ARGUMENT, 400),
    ("INVALID_PRECISION", "Invalid input precision", INVALID_ARGUMENT, 400),
    (
        "INVALID_VALUE_COUNT",
        "Invalid number of values in tensor proto container",
        INVALID_ARGUMENT,
        400,
    ),
    ("INVALID_CONTENT_SIZE", "Invalid content size of tensor proto", INVALID_ARGUMENT, 400),
    (
        "INVALID_MESSAGE_STRUCTURE",
        "Passing buffers both in ModelInferRequest::InferInputTensor::contents and in "
        "ModelInferRequest::raw_input_contents is not allowed",
        INVALID_ARGUMENT,
        400,
    ),
    (
        "INVALID_INPUT_FORMAT",
        "Inputs inside buffer does not match expected format.",
        INVALID_ARGUMENT,
        400,
    ),
    ("MEDIAPIPE_EXECUTION_ERROR", "Mediapipe execution failed. MP status", INVALID_ARGUMENT, 400),
    ("MEDIAPIPE_PRECONDITION_FAILED", "Mediapipe graph precondition failed", UNKNOWN, 412),
    (
        "MEDIAPIPE_GRAPH_INITIALIZATION_ERROR",
        "Failed to initialize mediapipe graph",
        FAILED_PRECONDITION,
        500,
    ),
    (
        "MEDIAPIPE_GRAPH_ADD_PACKET_INPUT_STREAM",
        "Failed to add packet to mediapipe graph input stream",
        FAILED_PRECONDITION,
        412,
    ),
    ("MEDIAPIPE_INVALID_TIMESTAMP", "Malformed packet timestamp", UNKNOWN, 500),
    (
        "PIPELINE_DEMULTIPLEXER_NO_RESULTS",
        "Pipeline execution aborted due to no content from custom node",
        ABORTED,
        204,
    ),
    ("NODE_LIBRARY_EXECUTION_FAILED", "Custom node failed during execution", UNKNOWN, 500),
    (
        "NODE_LIBRARY_INVALID_CONTENT_SIZE",
        "Custom node output has invalid content size",
        UNKNOWN,
        500,
    ),
    ("NOT_IMPLEMENTED", "Functionality not implemented", UNKNOWN, 500),
    ("INTERNAL_ERROR", "Internal server error", INTERNAL, 500),
    ("UNKNOWN_ERROR", "Unknown error", UNKNOWN, 500),
    ("JSON_INVALID", "The file is not valid json", FAILED_PRECONDITION, 412),
]

# The other messages COMPAT.md §7.3 quotes, without protocol codes.
OVMS_MESSAGES = {
    "NODE_LIBRARY_OUTPUTS_CORRUPTED": "Custom node library has returned corrupted outputs handle",
    "NODE_LIBRARY_OUTPUTS_CORRUPTED_COUNT": "Custom node library has produced corrupted number of outputs",
    "NODE_LIBRARY_INVALID_PRECISION": "Custom node has produced tensor with unspecified precision",
    "NODE_LIBRARY_MISSING_OUTPUT": "Custom node output is missing",
    "NODE_LIBRARY_OUTPUT_MISSING_NAME": "Custom node output is missing name",
    "NODE_LIBRARY_METADATA_FAILED": "Custom node failed on metadata call",
    "NODE_LIBRARY_MISSING": "Custom node library not found",
    "PYTHON_NODE_FILE_DOES_NOT_EXIST": "The Python Node file path does not exist",
    "PYTHON_NODE_MISSING_OPTIONS": "The Python Node is missing options definition",
    "PYTHON_NODE_MISSING_NAME": "The Python Node is missing name definition",
    "PYTHON_NODE_NAME_ALREADY_EXISTS": "The Python Node name is already present in nodes list",
}


@pytest.mark.parametrize(("name", "message", "grpc", "http"), OVMS_TABLE)
def test_table_matches_ovms(name: str, message: str, grpc: int, http: int) -> None:
    info = status_info(StatusCode[name])
    assert (info.message, info.grpc_code, info.http_status) == (message, grpc, http)


@pytest.mark.parametrize(("name", "message"), OVMS_MESSAGES.items())
def test_other_messages_match_ovms(name: str, message: str) -> None:
    assert status_info(StatusCode[name]).message == message


def test_rendering_appends_details_like_ovms() -> None:
    code = StatusCode.INVALID_SHAPE
    assert render(code) == "Invalid input shape"
    details = "Expected: (1,10); Actual: (1,9); input name: x"
    assert render(code, details) == f"Invalid input shape - {details}"


def test_rendering_refuses_codes_outside_the_table() -> None:
    with pytest.raises(ValueError, match="no StatusCode has the value 9999"):
        _core.render_status(9999)
    with pytest.raises(ValueError, match="no StatusCode has the value -1"):
        _core.render_status(-1)


def test_error_carries_code_and_protocol_codes() -> None:
    error = status_error(StatusCode.NODE_LIBRARY_EXECUTION_FAILED, "node add_one returned 3")
    # OVMS would send gRPC clients "Unknown error" here; ovmsx keeps the details.
    assert str(error) == "Custom node failed during execution - node add_one returned 3"
    assert error.message == str(error)
    assert error.code is StatusCode.NODE_LIBRARY_EXECUTION_FAILED
    assert (error.grpc_code, error.http_status) == (UNKNOWN, 500)
    assert type(error) is StatusError


def test_error_classes_follow_grpc_code() -> None:
    assert isinstance(status_error(StatusCode.INVALID_SHAPE), InvalidArgumentError)
    assert isinstance(status_error(StatusCode.INVALID_SHAPE), ValueError)
    assert isinstance(status_error(StatusCode.MODEL_NAME_MISSING), NotFoundError)
    assert isinstance(status_error(StatusCode.MODEL_NAME_MISSING), LookupError)


def test_cpp_errors_arrive_as_status_errors() -> None:
    with pytest.raises(StatusError) as error:
        bytes_codec.unpack(b"\x01\x00")
    assert error.value.code is StatusCode.INVALID_INPUT_FORMAT
    assert (
        error.value.details
        == "BYTES element 0 at byte offset 0: length prefix truncated, 2 of 4 bytes present"
    )
