"""Which REST endpoint a request's method and path name, by OVMS's rules.

OVMS (src/http_rest_api_handler.cpp) takes GET and POST only (anything else: 406 "Unsupported
method"), refuses paths escaping with ".." (``escapes``), and matches whole paths against its
routes; a path that exists for the other method is 406 too, any other path 400 "Invalid request
URL". Model names in paths are percent-decoded; query strings are ignored.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from urllib.parse import unquote

from ovmsx.status import StatusCode, status_error

GET = "GET"
POST = "POST"
OPENAPI_PATH = "/v2/openapi.json"

_MODELS = "/v2/models/"
_MAX_VERSION = 2**63 - 1
# OVMS's own patterns for these: one optional leading character before the route.
_METRICS = re.compile(r".?/metrics")
_CONFIG = re.compile(r".?/v1/config")
_CONFIG_RELOAD = re.compile(r".?/v1/config/reload")


class Endpoint(enum.Enum):
    SERVER_METADATA = enum.auto()
    SERVER_LIVE = enum.auto()
    SERVER_READY = enum.auto()
    MODEL_METADATA = enum.auto()
    MODEL_READY = enum.auto()
    MODEL_INFER = enum.auto()
    METRICS = enum.auto()
    CONFIG_STATUS = enum.auto()
    CONFIG_RELOAD = enum.auto()
    OPENAPI = enum.auto()


_FIXED: dict[str, tuple[Endpoint, str]] = {
    "/v2": (Endpoint.SERVER_METADATA, GET),
    "/v2/health/live": (Endpoint.SERVER_LIVE, GET),
    "/v2/health/ready": (Endpoint.SERVER_READY, GET),
    OPENAPI_PATH: (Endpoint.OPENAPI, GET),
}
_MODEL_ACTIONS = {
    "": (Endpoint.MODEL_METADATA, GET),
    "ready": (Endpoint.MODEL_READY, GET),
    "infer": (Endpoint.MODEL_INFER, POST),
}


@dataclass(frozen=True, slots=True)
class Route:
    endpoint: Endpoint
    name: str = ""
    """The servable a model endpoint names, percent-decoded."""
    version: str = ""
    """Its version as the path gives it, without leading zeros; "" = the default one."""


def is_metrics_path(path: str) -> bool:
    return _METRICS.fullmatch(path.partition("?")[0]) is not None


def route(method: str, path: str) -> Route:
    """The endpoint of ``method`` on ``path`` (the raw path, percent-encoded), or OVMS's error."""
    if method not in (GET, POST):
        raise status_error(StatusCode.REST_UNSUPPORTED_METHOD, method)
    path = path.partition("?")[0]
    if escapes(path):
        raise status_error(StatusCode.PATH_INVALID, "a path escaping with .. is forbidden")
    found = _match(path)
    if found is None:
        raise status_error(StatusCode.REST_INVALID_URL)
    matched, allowed = found
    if method != allowed:
        raise status_error(StatusCode.REST_UNSUPPORTED_METHOD, f"{method} {path}")
    return matched


def escapes(path: str) -> bool:
    """OVMS's rule for a path that climbs out with "..": it begins with "../", contains
    "/../", or its first "/.." ends it. A name that merely begins with ".." (``/v2/models/..a``)
    is a name like any other, and an unknown one is 404."""
    first = path.find("/..")
    return path.startswith("../") or "/../" in path or (first >= 0 and first == len(path) - 3)


def _match(path: str) -> tuple[Route, str] | None:
    fixed = _FIXED.get(path)
    if fixed is not None:
        return Route(fixed[0]), fixed[1]
    if path.startswith(_MODELS):
        return _model_route(path[len(_MODELS) :])
    if _METRICS.fullmatch(path):
        return Route(Endpoint.METRICS), GET
    if _CONFIG.fullmatch(path):
        return Route(Endpoint.CONFIG_STATUS), GET
    if _CONFIG_RELOAD.fullmatch(path):
        return Route(Endpoint.CONFIG_RELOAD), POST
    return None


def _model_route(rest: str) -> tuple[Route, str] | None:
    """``{name}[/versions/{n}][/ready|/infer|/]``."""
    name, _, rest = rest.partition("/")
    if not name:
        return None
    version = ""
    head, _, after = rest.partition("/")
    if head == "versions":
        digits, _, rest = after.partition("/")
        if not digits.isascii() or not digits.isdigit():
            return None
        version = _version(digits)
    action = _MODEL_ACTIONS.get(rest)
    if action is None:
        return None
    endpoint, method = action
    return Route(endpoint, unquote(name), version), method


def _version(digits: str) -> str:
    number = int(digits)
    if number > _MAX_VERSION:  # OVMS: a version it cannot even hold is not found
        raise status_error(StatusCode.MODEL_VERSION_MISSING, f"version {digits}")
    return str(number)
