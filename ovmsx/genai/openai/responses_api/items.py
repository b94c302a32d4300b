"""The pieces a Response is made of, in OVMS's shapes and key order: output items (``message``,
``reasoning``, ``function_call``), the ``output_text`` part and the usage object.

Item ids are OVMS's: ``msg-<i>`` and ``rs-<i>`` (``i`` counts choices, so ``-0`` for one
answer); a function call item's ``id`` is its ``call_id``, the tool call's id. A reasoning item
carries no ``status`` (OVMS leaves it out, as OpenAI's reference does for summaries).
"""

from __future__ import annotations

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
INCOMPLETE = "incomplete"
FAILED = "failed"


def text_part(text: str) -> dict:
    return {"type": "output_text", "text": text, "annotations": []}


def summary_part(text: str) -> dict:
    return {"type": "summary_text", "text": text}


def message_item(item_id: str, text: str, status: str) -> dict:
    """An assistant message; while in progress its content is still empty, as OVMS sends it."""
    content = [] if status == IN_PROGRESS else [text_part(text)]
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def reasoning_item(item_id: str, text: str | None) -> dict:
    """A reasoning item; ``text`` None while it is being streamed (an empty summary)."""
    summary = [] if text is None else [summary_part(text)]
    return {"id": item_id, "type": "reasoning", "summary": summary}


def function_call_item(call_id: str, name: str, arguments: str, status: str) -> dict:
    return {
        "id": call_id,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    }


def usage_object(usage: dict) -> dict:
    """OVMS's usage (input, output and total tokens) from a chat usage's ``prompt_tokens`` and
    ``completion_tokens``. The ``*_details`` objects are not OVMS's: the openai client's types
    require them, and ovmsx counts neither cached, cache-written nor reasoning tokens, so they
    are all 0."""
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }
