"""Errors as values with a code.

The table itself lives in C++ (``csrc/core/status.h``), followed here by the few codes only
the REST frontend reports; this module turns it into the ``StatusCode`` enum and the
``StatusError`` exception that every layer raises and every frontend renders. The rendered
message is OVMS's: ``"<message> - <details>"``.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from ovmsx import _core


class StatusInfo(NamedTuple):
    message: str
    """The OVMS base message, e.g. ``"Invalid input shape"``."""
    grpc_code: int
    """Numeric ``grpc.StatusCode`` value a gRPC client receives."""
    http_status: int
    """HTTP status a REST client receives."""


GRPC_UNKNOWN = 2
GRPC_INVALID_ARGUMENT = 3
GRPC_NOT_FOUND = 5

# Failures only the REST frontend reports, with OVMS's messages (src/status.cpp) and HTTP codes
# (src/http_server.cpp; codes missing from OVMS's HTTP map get its fallback, 500). They follow
# the C++ table rather than being part of it, since no C++ code raises them; their gRPC code is
# OVMS's fallback, which no gRPC client ever sees.
_REST_ROWS = (
    ("REST_INVALID_URL", "Invalid request URL", 400),
    ("REST_UNSUPPORTED_METHOD", "Unsupported method", 406),
    ("REST_BODY_IS_NOT_AN_OBJECT", "Request body should be JSON object", 400),
    ("REST_NO_INPUTS_FOUND", "Invalid JSON structure, missing inputs", 400),
    (
        "REST_COULD_NOT_PARSE_INPUT",
        "Could not parse input content. Not valid ndarray detected",
        400,
    ),
    ("REST_COULD_NOT_PARSE_OUTPUT", "Could not parse output content.", 400),
    ("REST_COULD_NOT_PARSE_PARAMETERS", "Could not parse request parameters", 400),
    (
        "REST_UNSUPPORTED_PRECISION",
        "Could not parse input content. Unsupported data precision detected",
        400,
    ),
    (
        "REST_BINARY_DATA_SIZE_PARAMETER_INVALID",
        "binary_data_size parameter is invalid and cannot be parsed",
        400,
    ),
    (
        "REST_BINARY_BUFFER_EXCEEDED",
        "Received buffer size is smaller than binary_data_size parameter indicates",
        400,
    ),
    (
        "REST_INFERENCE_HEADER_CONTENT_LENGTH_INVALID",
        "Inference-Header-Content-Length header is invalid and couldn't be parsed",
        500,
    ),
    # OVMS has this code; its message is ovmsx's.
    (
        "REST_INFERENCE_HEADER_CONTENT_LENGTH_EXCEEDED",
        "Inference-Header-Content-Length header exceeds the size of the request body",
        500,
    ),
    (
        "REST_CONTENTS_FIELD_NOT_EMPTY",
        "Request contains values both in binary data and in content value",
        500,
    ),
    ("REST_PROTO_TO_STRING_ERROR", "Response parsing to JSON error", 500),
    # A request nested deeper than OVMS takes: OVMS answers it 500, with this text.
    ("JSON_NESTING_DEPTH_EXCEEDED", "JSON nesting depth exceeds the allowed limit", 500),
    ("SERVER_NOT_READY", "Server is not ready", 503),
    # Generative AI (ovmsx/genai). OVMS has these codes; the LLM node messages are ovmsx's.
    ("LLM_NODE_MISSING_OPTIONS", "LLM node is missing its node_options", 500),
    ("LLM_NODE_MISSING_NAME", "LLM node is missing its name", 500),
    ("LLM_NODE_NAME_ALREADY_EXISTS", "LLM node name is used by another LLM node", 500),
    ("LLM_NODE_DIRECTORY_DOES_NOT_EXIST", "LLM node models_path does not exist", 500),
    (
        "LLM_NODE_PATH_DOES_NOT_EXIST_AND_NOT_GGUFFILE",
        "LLM node models_path is neither a directory nor a .gguf file",
        500,
    ),
    (
        "LLM_NODE_RESOURCE_STATE_INITIALIZATION_FAILED",
        "LLM node resource state initialization failed",
        500,
    ),
    # OVMS's HTTP map lacks it, so its answer is 500 (COMPAT_GENAI §3.6).
    ("UNAUTHORIZED", "Unauthorized request due to invalid or missing api-key", 500),
)

# Failures of encoded-image inputs (ovmsx/images), with OVMS's messages (src/status.cpp) and
# codes. OVMS's gRPC and HTTP maps miss some of them, which therefore get its fallbacks
# (UNKNOWN, 500); no C++ code raises them, so they follow the C++ table like the REST codes.
_IMAGE_ROWS = (
    ("IMAGE_PARSING_FAILED", "Image parsing failed", GRPC_UNKNOWN, 500),
    ("BYTES_CONTENTS_EMPTY", "Bytes contents is empty", GRPC_INVALID_ARGUMENT, 500),
    (
        "UNSUPPORTED_LAYOUT",
        "Received binary image input but resource not configured to accept NHWC layout",
        GRPC_INVALID_ARGUMENT,
        400,
    ),
    (
        "BINARY_IMAGES_RESOLUTION_MISMATCH",
        "Binary input images for this endpoint are required to have the same resolution",
        GRPC_INVALID_ARGUMENT,
        400,
    ),
    (
        "INVALID_NO_OF_CHANNELS",
        "Invalid number of channels in binary input",
        GRPC_INVALID_ARGUMENT,
        400,
    ),
)

# Failures of cloud model repositories (OVMS's texts, src/status.cpp), met while loading a
# model. OVMS's gRPC and HTTP maps have none of them, so a client would see its fallbacks
# (UNKNOWN, 500); they are reported in model status and the log.
_STORAGE_ROWS = [
    ("S3_BUCKET_NOT_FOUND", "S3 Bucket not found"),
    ("GCS_BUCKET_NOT_FOUND", "GCS Bucket not found"),
    ("AS_CONTAINER_NOT_FOUND", "AS Container not found"),
    ("AS_INVALID_PATH", "AS Invalid path"),
]
# The failures every store shares, with the store's prefix on code and text.
_STORAGE_ROWS += [
    (f"{store}_{name}", f"{store} {text}")
    for store in ("S3", "GCS", "AS")
    for name, text in (
        ("METADATA_FAIL", "metadata failure"),
        ("FAILED_LIST_OBJECTS", "Failed to list objects"),
        ("INVALID_ACCESS", "Invalid access rights"),
        ("FILE_NOT_FOUND", "File or directory not found"),
        ("FILE_INVALID", "File path is invalid"),
        ("FAILED_GET_OBJECT", "Failed to get object from path"),
    )
]
# OVMS has this code (a local copy of a cloud model could not be made); its message is ovmsx's.
_STORAGE_ROWS.append(("FILESYSTEM_ERROR", "Error during filesystem operation"))

_CORE_ROWS = _core.status_table()
# The C++ values run from 0 without gaps (an X-macro enum); the REST and image codes come
# after them.
_FIRST_REST_VALUE = len(_CORE_ROWS)
_PYTHON_ROWS = [(name, message, GRPC_UNKNOWN, http) for name, message, http in _REST_ROWS]
_PYTHON_ROWS += _IMAGE_ROWS
_PYTHON_ROWS += [(name, message, GRPC_UNKNOWN, 500) for name, message in _STORAGE_ROWS]
_ROWS = [
    *_CORE_ROWS,
    *(
        (name, _FIRST_REST_VALUE + index, message, grpc, http)
        for index, (name, message, grpc, http) in enumerate(_PYTHON_ROWS)
    ),
]

StatusCode = enum.IntEnum("StatusCode", [(name, value) for name, value, *_ in _ROWS])
StatusCode.__doc__ = "Every failure ovmsx can report: the C++ enum's values, then the REST codes."

_INFO: dict[StatusCode, StatusInfo] = {
    StatusCode(value): StatusInfo(message, grpc, http) for _, value, message, grpc, http in _ROWS
}


def status_info(code: StatusCode) -> StatusInfo:
    """The message and protocol codes of a status."""
    return _INFO[code]


def render(code: StatusCode, details: str = "") -> str:
    """The client-facing text: the OVMS message, then ``" - " + details`` if there are any."""
    code = StatusCode(code)
    if code < _FIRST_REST_VALUE:
        return _core.render_status(code, details)
    message = _INFO[code].message
    return f"{message} - {details}" if details else message


class StatusError(Exception):
    """A failure with its ``StatusCode``; ``str(err)`` is the full client-facing message."""

    def __init__(self, code: StatusCode | int, details: str = "") -> None:
        self.code = StatusCode(code)
        self.details = details
        super().__init__(render(self.code, details))

    @property
    def message(self) -> str:
        return str(self)

    @property
    def grpc_code(self) -> int:
        return _INFO[self.code].grpc_code

    @property
    def http_status(self) -> int:
        return _INFO[self.code].http_status


class InvalidArgumentError(StatusError, ValueError):
    """A status that blames the caller's input (gRPC INVALID_ARGUMENT): also a ``ValueError``."""


class NotFoundError(StatusError, LookupError):
    """A status naming something that does not exist (gRPC NOT_FOUND): also a ``LookupError``."""


def status_error(code: StatusCode | int, details: str = "") -> StatusError:
    """The exception for a status, of the subclass its gRPC code calls for."""
    grpc_code = _INFO[StatusCode(code)].grpc_code
    if grpc_code == GRPC_INVALID_ARGUMENT:
        return InvalidArgumentError(code, details)
    if grpc_code == GRPC_NOT_FOUND:
        return NotFoundError(code, details)
    return StatusError(code, details)
