"""A request's generation settings, as OVMS derives them (COMPAT_GENAI §4.1).

Each request starts from the servable's base settings (``generation_config.json``, else
openvino-genai's defaults); the fields the request sets go on top, then OVMS's fix-ups:

- ``best_of`` becomes ``num_beams`` (so best_of > 1 is beam search), one beam group, no n-gram
  ban, and the model's context length as ``max_length`` when config.json gives one;
- ``do_sample`` is ``temperature > 0`` with one beam, whatever the base says: since the default
  temperature is 1.0, a request samples unless it asks for ``temperature: 0``;
- sampling with no ``top_k`` from the request or the base uses ``top_k = 40``;
- without a ``seed`` each request draws a random non-zero one (the base's is ignored).
"""

from __future__ import annotations

import random

# openvino-genai's "unset" for size_t limits.
UNSET = 2**64 - 1
SAMPLING_TOP_K = 40


def request_config(base: dict, request: dict, max_length: int | None) -> dict:
    """The ``GenerationConfig`` keyword arguments for a request: ``base`` from the servable,
    ``request`` the fields the request set (openvino-genai names; ``best_of`` and ``seed`` as
    the API names them)."""
    fields = dict(base)
    request = dict(request)
    best_of = request.pop("best_of", None)
    seed = request.pop("seed", None)
    fields.update(request)
    fields["num_beams"] = best_of or 1
    fields["num_beam_groups"] = 1
    fields["no_repeat_ngram_size"] = UNSET
    fields["apply_chat_template"] = False
    if max_length is not None:
        fields["max_length"] = max_length
    sampling = fields["temperature"] > 0 and fields["num_beams"] == 1
    fields["do_sample"] = sampling
    if sampling and "top_k" not in request and base.get("top_k", UNSET) == UNSET:
        fields["top_k"] = SAMPLING_TOP_K
    fields["rng_seed"] = seed if seed is not None else random.randint(1, 2**32 - 1)
    if not fields.get("stop_strings"):
        fields.pop("stop_strings", None)
    else:
        fields["stop_strings"] = set(fields["stop_strings"])
    return fields
