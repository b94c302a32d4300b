"""Encoded images (JPEG, PNG) as input data, as OVMS takes them.

A BYTES request input sent to a 4-D image input of a model (5-D for a pipeline input split by
an entry demultiplexer) holds one encoded image per element. ovmsx decodes them with OpenCV,
as OVMS does (colour order BGR, values as decoded), fits them to the endpoint (resize,
channels, precision) and hands the model one ``[N,H,W,C]`` tensor.

- ``endpoint``: whether an input takes encoded images, and the rules of its shape and layout;
- ``request_checks``: the request-side checks, in OVMS's order, before anything is decoded;
- ``decode``: decoding a batch, in parallel with the GIL released;
- ``fit``: target size, resize, channel and resolution checks, the precision cast;
- ``convert``: the whole path from a request input to the tensor.

Only ``endpoint`` is imported here: OpenCV (~20 MB, ~50 ms to import) loads with ``convert``,
on the first request that carries images, so servers that never see one do not pay for it.
"""

from __future__ import annotations

from ovmsx.images.endpoint import ImageEndpoint, image_endpoint, takes_strings

__all__ = ["ImageEndpoint", "image_endpoint", "takes_strings"]
