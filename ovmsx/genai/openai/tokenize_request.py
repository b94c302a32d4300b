"""``POST /v3/tokenize``: a tokenize request's fields, checked as OVMS checks them
(COMPAT_GENAI §3.5), and its answer.

``{"model": ..., "text": "..." | ["...", ...]}`` with ``max_length`` (> 0; it also truncates),
``pad_to_max_length``, ``add_special_tokens`` (true) and ``padding_side`` (``left``/``right``).
The answer is ``{"tokens": [...]}``, nested when more than one text is sent; padding is left out
unless ``pad_to_max_length`` asks for it.

Beyond OVMS, ``max_length`` is bounded before it reaches openvino-genai's tokenizer, which takes
it as a 32-bit length (2^31 crashes it, 2^32 wraps to nothing) and pads to it in memory (10^9
padded tokens took 21 GB): at most 2^31 - 1, and with padding at most ``MAX_PADDED_TOKENS`` in
all the texts' rows; padding without ``max_length`` pads to the model's context length.
"""

from __future__ import annotations

from dataclasses import dataclass

from ovmsx.genai.openai.openai_request import RequestError

MAX_LENGTH = 2**31 - 1
# ids and mask of this many tokens are 16 MB in the tokenizer, a few MB of JSON.
MAX_PADDED_TOKENS = 1 << 20


@dataclass
class TokenizeRequest:
    texts: list[str]
    nested: bool
    max_length: int | None = None
    pad_to_max_length: bool = False
    add_special_tokens: bool = True
    padding_side: str | None = None


def parse_tokenize(body: dict, model_max_length: int | None = None) -> TokenizeRequest:
    """The request's fields; ``model_max_length`` (the model's context, when known) is what
    ``pad_to_max_length`` pads to without a ``max_length`` (openvino-genai would pad to the
    tokenizer's ``model_max_length``, often 10^30)."""
    if "text" not in body:
        raise RequestError("text field is required")
    text = body["text"]
    if isinstance(text, str):
        texts, nested = [text], False
    elif isinstance(text, list):
        if not text:
            raise RequestError("text array should not be empty")
        if all(isinstance(item, str) for item in text):
            texts, nested = list(text), len(text) > 1
        elif all(isinstance(item, (int, list)) and not isinstance(item, bool) for item in text):
            raise RequestError("Input should be string or array of strings")
        elif any(isinstance(item, str) for item in text) and any(
            isinstance(item, int) for item in text
        ):
            raise RequestError("text must be homogeneous")
        else:
            raise RequestError("every element in text array should be either string or int")
    else:
        raise RequestError("text should be string, array of strings or array of integers")
    request = TokenizeRequest(texts, nested)
    if "max_length" in body:
        value = body["max_length"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RequestError("max_length should be unsigned integer")
        if value == 0:
            raise RequestError("max_length should be greater than 0")
        if value > MAX_LENGTH:
            raise RequestError(f"max_length value can't be greater than {MAX_LENGTH}")
        request.max_length = value
    for name in ("pad_to_max_length", "add_special_tokens"):
        if name in body:
            if not isinstance(body[name], bool):
                raise RequestError(f"{name} should be boolean")
            setattr(request, name, body[name])
    if "padding_side" in body:
        side = body["padding_side"]
        if not isinstance(side, str):
            raise RequestError("padding_side should be string, either left or right")
        if side not in ("left", "right"):
            raise RequestError("padding_side should be either left or right")
        request.padding_side = side
    if request.pad_to_max_length and request.max_length is None:
        if model_max_length is None:
            raise RequestError("pad_to_max_length needs max_length: the model's length is unknown")
        request.max_length = model_max_length
    if request.pad_to_max_length:
        padded = request.max_length * len(texts)
        if padded > MAX_PADDED_TOKENS:
            raise RequestError(
                f"max_length with pad_to_max_length asks for {padded} tokens "
                f"({len(texts)} texts of {request.max_length}); at most {MAX_PADDED_TOKENS} "
                "are served"
            )
    return request


def tokenize_rows(tokenizer, request: TokenizeRequest) -> list[list[int]]:
    """Each text's ids from an openvino-genai ``Tokenizer``, padding left out unless asked
    for; shared by the LLM engines and the encoder graphs, which tokenize with their own
    tokenizer as OVMS does. openvino-genai's RuntimeError passes up."""
    options = {
        "add_special_tokens": request.add_special_tokens,
        "pad_to_max_length": request.pad_to_max_length,
    }
    if request.max_length is not None:
        options["max_length"] = request.max_length
        options["truncation"] = True
    if request.padding_side is not None:
        options["padding_side"] = request.padding_side
    encoded = tokenizer.encode(request.texts, **options)
    ids = encoded.input_ids.data
    if request.pad_to_max_length:
        return ids.tolist()
    # Masked in numpy: in an engine this runs between steps, and a batch may hold 10^6 ids.
    keep = encoded.attention_mask.data.astype(bool)
    return [row[mask].tolist() for row, mask in zip(ids, keep, strict=True)]


def tokens_answer(request: TokenizeRequest, rows: list[list[int]]) -> dict:
    return {"tokens": rows if request.nested else rows[0]}
