"""The checks of an encoded-image input that need no decoding, in OVMS's order.

OVMS's request validator makes the first ones (request shape, framing of raw data, batch), for
every input of the request, before any input is converted; the conversion then makes its own
(layout, rank, empty elements). The first failure is the answer, and nothing is decoded or
allocated before all of them passed: the elements stay views of the request.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from ovmsx import _core
from ovmsx.images.endpoint import ImageEndpoint, is_any
from ovmsx.status import StatusCode, StatusError, status_error


class EncodedInput(Protocol):
    """A BYTES request input as the image path reads it."""

    name: str
    shape: tuple[int, ...]

    def packed_bytes(self) -> tuple[object, int | None]:
        """The data in the KServe BYTES layout (a 4-byte little-endian length before each
        element), and the element count when the request gave the elements one by one
        (``bytes_contents``, JSON ``data``); None when they came as one raw buffer."""
        ...


def _dim_text(bounds: tuple[int, int]) -> str:
    low, high = bounds
    if low == high:
        return str(low)
    return "-1" if is_any(bounds) else f"[{low}~{high}]"


def _fits(bounds: tuple[int, int], value: int) -> bool:
    low, high = bounds
    return low <= value and (high == -1 or value <= high)


class Images(NamedTuple):
    """An input's images as views of the request, once the request validator's checks passed."""

    views: list[memoryview]
    one_by_one: bool  # they came element by element (bytes_contents, JSON), not as raw data


def validated_images(endpoint: ImageEndpoint, given: EncodedInput) -> Images:
    """The checks OVMS's request validator makes of an image input: request shape, framing
    of raw data, batch. ``StatusError`` with OVMS's code for the first one failing."""
    name, shape = endpoint.name, given.shape
    if len(shape) != 1:
        raise status_error(
            StatusCode.INVALID_NO_OF_SHAPE_DIMENSIONS,
            f"Expected number of input shape dimensions: 1; Actual: {len(shape)}; "
            f"input name: {name}",
        )
    buffer, count = given.packed_bytes()
    views = _elements(buffer, count, shape[0], name)
    _check_batch(endpoint, views)
    assert not isinstance(views, str)  # _check_batch refused it
    return Images(views, count is not None)


def check_conversion(endpoint: ImageEndpoint, images: Images) -> None:
    """The checks OVMS's conversion makes before decoding: layout, rank, empty elements."""
    name = endpoint.name
    if not endpoint.accepts_layout:
        raise status_error(
            StatusCode.UNSUPPORTED_LAYOUT,
            f"layout {endpoint.layout} does not agree with NHWC; input name: {name}",
        )
    if endpoint.rank != (5 if endpoint.demultiplexed else 4):
        raise status_error(
            StatusCode.INVALID_SHAPE,
            f"Expected: a 4-D image input; Actual: {endpoint.rank}-D; input name: {name}",
        )
    if images.one_by_one:  # an empty element is the client's mistake
        for index, image in enumerate(images.views):
            if not len(image):
                raise status_error(
                    StatusCode.BYTES_CONTENTS_EMPTY, f"image {index}; input name: {name}"
                )


def _elements(
    buffer: object, count: int | None, announced: int, name: str
) -> list[memoryview] | str:
    """A view of each element when there are as many as the shape announces; otherwise what
    the data holds, said in words. The elements are counted before any view is made, so a
    request announcing few images and sending millions costs nothing."""
    if count is not None and count != announced:
        return f"{count} elements were sent; the shape needs {announced}"
    try:
        return _core.bytes_unpack_views(buffer, announced)  # type: ignore[arg-type]
    except StatusError as error:
        if error.code is StatusCode.INVALID_VALUE_COUNT:  # framed well, counted otherwise
            return error.details
        details = f"{error.details}; input name: {name}"  # INVALID_INPUT_FORMAT: where it breaks
    raise status_error(StatusCode.INVALID_INPUT_FORMAT, details)


def _check_batch(endpoint: ImageEndpoint, images: list[memoryview] | str) -> None:
    name = endpoint.name
    if endpoint.batch is None:
        raise status_error(
            StatusCode.INVALID_BATCH_SIZE, f"Batch not present in input name: {name}"
        )
    if isinstance(images, str):
        raise status_error(StatusCode.INVALID_BATCH_SIZE, f"{images}; input name: {name}")
    batch = endpoint.dims[endpoint.batch]
    if not images or not _fits(batch, len(images)):
        raise status_error(
            StatusCode.INVALID_BATCH_SIZE,
            f"Expected: {_dim_text(batch)}; Actual: {len(images)}; input name: {name}",
        )
