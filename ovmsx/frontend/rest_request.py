"""A KServe v2 REST infer request (JSON, optionally followed by binary data) -> InferRequest.

The checks and their order are OVMS's (``KFSRestParser`` in src/rest_parser.cpp and
``handleBinaryInputs`` in src/http_rest_api_handler.cpp): the body, ``id``, ``parameters``,
``outputs``, then each input; then the binary tail is cut into the inputs that carry no JSON
data, in input order. Binary inputs stay views of the request body.

The binary-data extension: ``Inference-Header-Content-Length`` gives the size of the JSON part;
an input's ``parameters.binary_data_size`` gives the size of its binary data. Without it the
size follows from shape and datatype, except that a request's only input, if it is BYTES of
shape [1], takes the whole tail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ovmsx.datatypes import element_size
from ovmsx.frontend.rest_inputs import RestInput, json_values
from ovmsx.frontend.rest_json import parse_json
from ovmsx.quoting import quote
from ovmsx.servables.infer_request import InferRequest
from ovmsx.status import StatusCode, status_error

BINARY_DATA_SIZE = "binary_data_size"
BINARY_DATA_OUTPUT = "binary_data_output"
BINARY_DATA = "binary_data"
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class OutputFormat:
    """Which outputs the client wants as binary data: those it lists with ``binary_data``, and
    the rest when the request parameter ``binary_data_output`` is true (KServe's binary-data
    extension; OVMS applies that parameter to listed outputs only)."""

    default: bool = False
    listed: dict[str, bool] = field(default_factory=dict)

    def binary(self, name: str) -> bool:
        return self.listed.get(name, self.default)


def decode_request(
    servable: str, version: str, body: bytes, header_length: str | None
) -> tuple[InferRequest, OutputFormat]:
    """The request for servable ``servable`` (``version`` "" = its default) in ``body``;
    ``header_length`` is the ``Inference-Header-Content-Length`` header, if sent."""
    end = _json_end(header_length, len(body))
    view = memoryview(body)
    document = parse_json(view[:end])
    if not isinstance(document, dict):
        raise status_error(StatusCode.REST_BODY_IS_NOT_AN_OBJECT)
    request_id = document.get("id", "")
    if not isinstance(request_id, str):
        raise status_error(StatusCode.REST_COULD_NOT_PARSE_INPUT, "id must be a string")
    parameters = _parameters(document.get("parameters"), "request")
    default = _flag(parameters, BINARY_DATA_OUTPUT)
    outputs, binary_choices = _outputs(document.get("outputs"))
    specs = document.get("inputs")
    if specs is None or specs == []:
        raise status_error(StatusCode.REST_NO_INPUTS_FOUND)
    if not isinstance(specs, list):
        raise status_error(StatusCode.REST_COULD_NOT_PARSE_INPUT, "inputs must be an array")
    inputs = [_InputSpec.read(spec, len(specs) == 1) for spec in specs]
    tail = view[end:]
    offset = 0
    given = []
    for spec in inputs:
        raw = None
        size = spec.binary_size(len(inputs) == 1, len(tail))
        if size is not None:
            if offset + size > len(tail):
                raise status_error(
                    StatusCode.REST_BINARY_BUFFER_EXCEEDED,
                    f"input {quote(spec.name)} needs {size} bytes from byte {offset} of "
                    f"{len(tail)} binary bytes",
                )
            raw = tail[offset : offset + size]
            offset += size
        given.append(RestInput(spec.name, spec.datatype, spec.shape, raw, spec.values))
    _check_one_kind(given)
    request = InferRequest(
        servable_name=servable,
        version=version,
        inputs=given,
        id=request_id,
        requested_outputs=outputs,
        parameters=parameters,
    )
    return request, OutputFormat(default, binary_choices)


def _json_end(header: str | None, size: int) -> int:
    if header is None:
        return size
    try:
        length = int(header.strip())
    except ValueError:
        length = -1
    if length < 0:
        raise status_error(StatusCode.REST_INFERENCE_HEADER_CONTENT_LENGTH_INVALID, quote(header))
    if length > size:
        raise status_error(
            StatusCode.REST_INFERENCE_HEADER_CONTENT_LENGTH_EXCEEDED,
            f"header says {length} bytes, the body has {size}",
        )
    return length


def _parameters(node: object, where: str) -> dict[str, object]:
    """KServe parameters: strings, booleans and 64-bit integers (InferParameter's choices)."""
    if node is None:
        return {}
    if not isinstance(node, dict):
        raise status_error(
            StatusCode.REST_COULD_NOT_PARSE_PARAMETERS, f"{where} parameters must be an object"
        )
    for key, value in node.items():
        if isinstance(value, (str, bool)):
            continue
        if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
            continue
        raise status_error(
            StatusCode.REST_COULD_NOT_PARSE_PARAMETERS,
            f"{where} parameter {quote(key)} must be a string, a boolean or a 64-bit integer",
        )
    return node


def _flag(parameters: dict[str, object], key: str) -> bool:
    """A boolean parameter of the binary-data extension: true only when it is JSON ``true``.
    OVMS reads it as a protobuf InferParameter's bool_param, which is false for a string or a
    number, so ``"true"`` (a string) asks for nothing, and is no error."""
    return parameters.get(key) is True


def _check_one_kind(inputs: list[RestInput]) -> None:
    """OVMS moves binary inputs into ModelInferRequest.raw_input_contents, and then refuses a
    request whose other inputs keep their data in ``contents``: one kind for all inputs."""
    binary = [given.name for given in inputs if given.is_raw]
    if binary and len(binary) < len(inputs):
        with_json = next(given.name for given in inputs if not given.is_raw)
        raise status_error(
            StatusCode.INVALID_MESSAGE_STRUCTURE,
            f"input {quote(binary[0])} is binary data, input {quote(with_json)} is JSON data",
        )


def _outputs(node: object) -> tuple[list[str], dict[str, bool]]:
    """The requested outputs' names, and the ``binary_data`` choice of those that made one."""
    if node is None:
        return [], {}
    if not isinstance(node, list):
        raise status_error(StatusCode.REST_COULD_NOT_PARSE_OUTPUT, "outputs must be an array")
    names: list[str] = []
    choices: dict[str, bool] = {}
    for item in node:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str):
            raise status_error(
                StatusCode.REST_COULD_NOT_PARSE_OUTPUT, "each output must be an object with a name"
            )
        names.append(name)
        where = f"output {quote(name)}"
        listed = _parameters(item.get("parameters"), where)
        if BINARY_DATA in listed:
            choices[name] = _flag(listed, BINARY_DATA)
    return names, choices


@dataclass
class _InputSpec:
    name: str
    datatype: str
    shape: tuple[int, ...]
    parameters: dict[str, object]
    values: object  # JSON data converted (json_values), or None when it is binary

    @classmethod
    def read(cls, node: object, only_input: bool) -> _InputSpec:
        if not isinstance(node, dict):
            raise _bad_input("each input must be an object")
        name = node.get("name")
        if not isinstance(name, str):
            raise _bad_input("an input has no name")
        shape = node.get("shape")
        if not isinstance(shape, list) or not all(_is_dim(d) for d in shape):
            raise _bad_input(
                f"shape must be an array of non-negative integers; input name: {quote(name)}"
            )
        datatype = node.get("datatype")
        if not isinstance(datatype, str):
            raise _bad_input(f"datatype must be a string; input name: {quote(name)}")
        parameters = _parameters(node.get("parameters"), f"input {quote(name)}")
        data = node.get("data")
        values = None
        if data is not None:
            if not isinstance(data, list):
                raise _bad_input(f"data must be an array; input name: {quote(name)}")
            if data:  # as in OVMS, empty data counts as no data
                values = json_values(datatype, data, name)
        spec = cls(name, datatype, tuple(shape), parameters, values)
        if values is None and BINARY_DATA_SIZE not in parameters:
            sole_string = only_input and shape == [1]
            if datatype == "BYTES" and not sole_string:
                raise _bad_input(
                    f"BYTES input {quote(name)} has no data and no binary_data_size, and "
                    "its size cannot be told from its shape"
                )
        return spec

    def binary_size(self, only_input: bool, tail: int) -> int | None:
        """How many bytes of the binary tail this input takes; None when it has JSON data."""
        if BINARY_DATA_SIZE in self.parameters:
            if self.values is not None:
                raise status_error(
                    StatusCode.REST_CONTENTS_FIELD_NOT_EMPTY, f"input {quote(self.name)}"
                )
            size = self.parameters[BINARY_DATA_SIZE]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise status_error(
                    StatusCode.REST_BINARY_DATA_SIZE_PARAMETER_INVALID,
                    f"input {quote(self.name)}: {size!r}",
                )
            return size
        if self.values is not None:
            return None
        if only_input and self.datatype == "BYTES":
            return tail
        # A datatype KServe does not define has no size to tell: OVMS takes no bytes for it.
        return math.prod(self.shape) * (element_size(self.datatype) or 0)


def _is_dim(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _INT64[1]


def _bad_input(why: str) -> Exception:
    return status_error(StatusCode.REST_COULD_NOT_PARSE_INPUT, why)
