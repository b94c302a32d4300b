"""StatusError -> gRPC status: the code from the status table, the full OVMS message."""

from __future__ import annotations

from typing import NoReturn

import grpc

from ovmsx.status import StatusError

_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}

# The status message travels percent-encoded in the grpc-message trailer (gRPC over HTTP/2),
# where every byte outside printable ASCII takes three. Clients refuse trailers above 8 KiB
# (older grpc) or 16 KiB and report RESOURCE_EXHAUSTED instead of the status, so a message is
# cut to this many UTF-8 bytes: at most 6 KiB encoded. Client input is already quoted short
# (ovmsx.quoting); this catches any other long text, such as an OpenVINO error.
MAX_MESSAGE_BYTES = 2048


def grpc_code(error: StatusError) -> grpc.StatusCode:
    return _BY_NUMBER.get(error.grpc_code, grpc.StatusCode.UNKNOWN)


def status_message(error: StatusError) -> str:
    """The message a client receives: OVMS's rendering, cut to ``MAX_MESSAGE_BYTES``."""
    return bounded(error.message)


def bounded(message: str) -> str:
    encoded = message.encode("utf-8", "replace")
    if len(encoded) <= MAX_MESSAGE_BYTES:
        return message
    kept = encoded[: MAX_MESSAGE_BYTES - 64].decode("utf-8", "ignore")
    return f"{kept}... ({len(message)} characters)"


async def abort(context, error: StatusError) -> NoReturn:
    """End the call with ``error``. The error's traceback and chained exceptions are dropped
    first: they reference the frames that held the request, and the exception that ends the
    call carries this one as its context for as long as the transport keeps it."""
    error.__traceback__ = None
    error.__cause__ = None
    error.__context__ = None
    await context.abort(grpc_code(error), status_message(error))
    raise AssertionError("unreachable: the context's abort raises")
