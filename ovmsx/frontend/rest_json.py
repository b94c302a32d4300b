"""A REST request's JSON text -> Python objects, refused as OVMS refuses it.

OVMS refuses a request nested more than ``MAX_DEPTH`` levels deep (arrays and objects) before
it reads anything in it, and words a malformed text as RapidJSON does:
``The file is not valid json - Error: <message> Offset: <n>``. ovmsx parses with orjson, the
fastest parser measured (bench/bench_rest.py); an accepted text is then scanned for its depth
(in C++, a few bytes a nanosecond), and a refused one is read again by rest_json_errors.py to
find RapidJSON's error and offset.
"""

from __future__ import annotations

import orjson

from ovmsx import _core
from ovmsx.frontend.rest_json_errors import BAD_ENCODING, find_fault
from ovmsx.status import StatusCode, StatusError, status_error

MAX_DEPTH = 100


def parse_json(text: memoryview | bytes) -> object:
    """The JSON document in ``text``; OVMS's JSON_INVALID or JSON_NESTING_DEPTH_EXCEEDED when
    it cannot be taken."""
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise _refusal(bytes(text), error) from None
    deep_at = _core.json_depth_exceeded_at(text, MAX_DEPTH)
    if deep_at >= 0:
        raise _too_deep(deep_at)
    return document


def _refusal(text: bytes, error: orjson.JSONDecodeError) -> StatusError:
    fault = find_fault(text, MAX_DEPTH)
    if fault is not None:
        if fault.message is None:
            return _too_deep(fault.offset)
        return _invalid(fault.message, fault.offset)
    # Text RapidJSON takes but orjson does not. Bytes that are not UTF-8 are the common case:
    # RapidJSON (without kParseValidateEncodingFlag) passes them on, orjson cannot; they are
    # named with the words RapidJSON uses when it does validate.
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as bad:
        return _invalid(BAD_ENCODING, bad.start)
    return _invalid(error.msg, error.pos)


def _invalid(message: str, offset: int) -> StatusError:
    return status_error(StatusCode.JSON_INVALID, f"Error: {message} Offset: {offset}")


def _too_deep(offset: int) -> StatusError:
    return status_error(
        StatusCode.JSON_NESTING_DEPTH_EXCEEDED,
        f"more than {MAX_DEPTH} levels of arrays and objects; the first one too deep opens at "
        f"offset {offset}",
    )
