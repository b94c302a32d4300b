"""The OpenAI Responses API (``POST /v3/responses``) as OVMS serves it: a request translated to
the equivalent chat/completions request (request.py, input_items.py), and the chat answer
turned back into a Response object (response.py) or its stream of events (events.py).
"""

from __future__ import annotations

from .errors import ResponsesRequestError
from .events import DONE, ResponseEventStream
from .request import ChatEquivalent, translate_request
from .response import ResponseBuilder

__all__ = [
    "DONE",
    "ChatEquivalent",
    "ResponseBuilder",
    "ResponseEventStream",
    "ResponsesRequestError",
    "translate_request",
]
