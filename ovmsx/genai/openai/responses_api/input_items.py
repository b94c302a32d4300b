"""A Responses request's ``input`` as chat messages, checked as OVMS checks it.

- A string is one user message (it may not be empty).
- A list holds items: messages (``role`` and ``content``, a string or parts; the ``developer``
  role becomes ``system``), ``function_call`` items (a previous assistant turn's tool calls)
  and ``function_call_output`` items (a tool's answer, a ``tool`` message with its
  ``tool_call_id``). An item with no ``type`` is a message.
- A ``function_call`` needs a non-empty ``call_id`` (its ``id`` stands in when ``call_id`` is
  not a string), a non-empty ``name`` and string ``arguments``. A ``function_call_output``
  needs no ``call_id``, as in OVMS's newer parser: without one (or with an empty one) its tool
  message simply has no ``tool_call_id``.

Consecutive ``function_call`` items become one assistant message carrying all of their
``tool_calls`` (``content`` null, as OVMS writes it); an assistant message item right after them
takes them over. Content parts become the chat API's: ``input_text`` and ``output_text`` a text
part (several text parts are joined by the chat parser, where OVMS's first Responses parser
kept the last one), ``input_image`` an ``image_url`` part, ``input_audio`` an ``input_audio``
part; the chat parser then decides what the servable takes (a text-only LLM refuses images and
audio with its usual message).

``reasoning`` items, which the openai client sends back when a previous response's output is
reused as input, become the next assistant turn's ``reasoning_content`` (or an assistant turn
of their own when no assistant turn follows), as OVMS's newer parser does.
"""

from __future__ import annotations

from .errors import ResponsesRequestError

ASSISTANT = "assistant"


def input_messages(body: dict) -> list[dict]:
    if "input" not in body:
        raise ResponsesRequestError("input missing in request")
    value = body["input"]
    if isinstance(value, str):
        if not value:
            raise ResponsesRequestError("input cannot be empty")
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        raise ResponsesRequestError("input is not a string or array")
    if not value:
        raise ResponsesRequestError("Messages array cannot be empty")
    conversation = _Conversation()
    for item in value:
        conversation.add(item)
    return conversation.finish()


class _Conversation:
    def __init__(self) -> None:
        self.messages: list[dict] = []
        self.pending_calls: list[dict] = []
        self.pending_reasoning: list[str] = []

    def add(self, item: object) -> None:
        if not isinstance(item, dict):
            raise ResponsesRequestError("input array items must be objects")
        kind = item.get("type")
        if kind == "function_call_output":
            self._call_output(item)
        elif kind == "function_call":
            self.pending_calls.append(_tool_call(item))
        elif kind == "reasoning":
            text = _reasoning_text(item)
            if text:
                self.pending_reasoning.append(text)
        else:
            self._message(item)

    def finish(self) -> list[dict]:
        self._flush()
        return self.messages

    def _call_output(self, item: dict) -> None:
        output = item.get("output")
        if not isinstance(output, str):
            raise ResponsesRequestError("function_call_output requires a valid output field")
        self._flush()
        message = {"role": "tool", "content": output}
        call_id = item.get("call_id")
        if isinstance(call_id, str) and call_id:
            message["tool_call_id"] = call_id
        self.messages.append(message)

    def _message(self, item: dict) -> None:
        role = item.get("role")
        if not isinstance(role, str):
            raise ResponsesRequestError("input item role is missing or invalid")
        if role == "developer":
            role = "system"
        if role != ASSISTANT:
            self._flush()
        if "content" not in item:
            raise ResponsesRequestError("input item is missing required content field")
        content = item["content"]
        if isinstance(content, list):
            content = _parts(content)
        elif not isinstance(content, str):
            raise ResponsesRequestError("input item content must be a string or array")
        message: dict = {"role": role, "content": content}
        if role == ASSISTANT:
            self._take_reasoning(message)
            if self.pending_calls:
                message["tool_calls"] = self.pending_calls
                self.pending_calls = []
        self.messages.append(message)

    def _flush(self) -> None:
        """Pending calls (or reasoning alone) as an assistant turn of their own."""
        if not self.pending_calls and not self.pending_reasoning:
            return
        message: dict = {"role": ASSISTANT, "content": None if self.pending_calls else ""}
        self._take_reasoning(message)
        if self.pending_calls:
            message["tool_calls"] = self.pending_calls
            self.pending_calls = []
        self.messages.append(message)

    def _take_reasoning(self, message: dict) -> None:
        if self.pending_reasoning:
            message["reasoning_content"] = "\n".join(self.pending_reasoning)
            self.pending_reasoning = []


def _tool_call(item: dict) -> dict:
    """The item as a chat ``tool_calls`` entry. An empty call id or name is refused as a missing
    one: the call could not be matched to its output, nor its name to a tool."""
    call_id = _text(item, "call_id")
    if call_id is None:
        call_id = _text(item, "id")  # the item's own id, when there is no call_id
    if not call_id:
        raise ResponsesRequestError("function_call item is missing required call_id (or id) field")
    name = _text(item, "name")
    if not name:
        raise ResponsesRequestError("function_call item is missing required name field")
    arguments = _text(item, "arguments")
    if arguments is None:
        raise ResponsesRequestError("function_call item is missing required arguments field")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _text(item: dict, key: str) -> str | None:
    value = item.get(key)
    return value if isinstance(value, str) else None


def _reasoning_text(item: dict) -> str:
    """The item's text: its ``content`` texts if it has any, else its summary's."""
    for key in ("content", "summary"):
        parts = item.get(key)
        if not isinstance(parts, list):
            continue
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            return "\n".join(texts)
    return ""


def _parts(parts: list) -> list[dict]:
    if not parts:
        raise ResponsesRequestError("input item content array must not be empty")
    return [_part(part) for part in parts]


def _part(part: object) -> dict:
    if not isinstance(part, dict):
        raise ResponsesRequestError("input content items must be objects")
    kind = part.get("type")
    if not isinstance(kind, str):
        raise ResponsesRequestError("input content item type is missing or invalid")
    if kind in ("input_text", "output_text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise ResponsesRequestError(f"{kind} requires a valid text field")
        return {"type": "text", "text": text}
    if kind == "input_image":
        return {"type": "image_url", "image_url": {"url": _image_url(part)}}
    if kind == "input_audio":
        audio = part.get("input_audio")
        if not isinstance(audio, dict):
            raise ResponsesRequestError("input_audio requires input_audio object field")
        if not isinstance(audio.get("data"), str):
            raise ResponsesRequestError("input_audio.data is missing or invalid")
        audio_format = audio.get("format")
        return {
            "type": "input_audio",
            "input_audio": {
                "data": audio["data"],
                "format": audio_format if isinstance(audio_format, str) else "wav",
            },
        }
    raise ResponsesRequestError(f"unsupported input content item type: {kind}")


def _image_url(part: dict) -> str:
    if "image_url" not in part:
        raise ResponsesRequestError("input_image requires image_url field")
    image = part["image_url"]
    if isinstance(image, str):
        return image
    if isinstance(image, dict):
        url = image.get("url")
        if not isinstance(url, str):
            raise ResponsesRequestError("input_image.image_url.url is missing or invalid")
        return url
    raise ResponsesRequestError("input_image.image_url must be a string or object")
