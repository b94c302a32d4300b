"""What a REST handler answers, whatever HTTP library sends it, and the error answer.

An answer is a JSON (or text) body, optionally followed by binary tensor data (the KServe
binary extension). The binary chunks stay views of the output tensors: the HTTP server writes
them to the socket one after the other, so a large output is never copied into one buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from ovmsx.status import StatusCode, StatusError

JSON = "application/json"
# OVMS labels its readiness answers with the charset.
JSON_UTF8 = "application/json; charset=utf-8"

# Where OVMS's HTTP map (src/http_server.cpp) differs from the status table's HTTP column.
_REST_HTTP = {
    StatusCode.PATH_INVALID: 400,  # over HTTP, a path escaping with ".." is the client's fault
    StatusCode.PIPELINE_DEFINITION_NOT_LOADED_YET: 404,
}


@dataclass(slots=True)
class RestResponse:
    status: int
    body: bytes
    tail: Sequence[memoryview] = ()
    """Binary tensor data sent after ``body``, in order."""
    content_type: str = JSON
    header_length: int | None = None
    """``Inference-Header-Content-Length``: set when ``tail`` holds binary outputs."""

    @property
    def length(self) -> int:
        return len(self.body) + sum(chunk.nbytes for chunk in self.tail)


EMPTY_OK = RestResponse(200, b"")


def json_response(document: object, status: int = 200) -> RestResponse:
    return RestResponse(status, orjson.dumps(document))


def http_status(error: StatusError) -> int:
    return _REST_HTTP.get(error.code, error.http_status)


def error_response(error: StatusError) -> RestResponse:
    """OVMS's error body: ``{"error": "<message>"}``, with the HTTP code of the status."""
    return RestResponse(http_status(error), orjson.dumps({"error": error.message}))
