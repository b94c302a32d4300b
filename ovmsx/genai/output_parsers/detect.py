"""Which parsers a chat template calls for, by the markers its source contains.

The rules and their order are OVMS's (``src/llm/io_processing/chat_template/analyzer.cpp``):
the first family whose markers are present decides both parsers.
"""

from __future__ import annotations

from .names import DISABLED, active_name

_THINK_FOR_QWEN3CODER = ("<think>", "</think>")
# Qwen templates that strip earlier turns' reasoning mention </think> only in this call.
_THINK_FOR_HERMES3 = ("<think>", "content.split('</think>')")
_ONYX = ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>")
_LFM2 = ("<|assistant_tool_call|>", "<|tool_call_start|>", "keep_past_thinking")


def detect_parsers(template_source: str | None) -> tuple[str | None, str | None]:
    """(tool parser, reasoning parser) OVMS picks for this template; None where it picks none."""
    src = template_source or ""
    if not src:
        return None, None
    if "<|channel|>" in src:
        return "gptoss", "gptoss"
    if all(marker in src for marker in _ONYX):
        return "onyx", "onyx"
    if "<|tool_call>call:" in src:
        return "gemma4", "gemma4"
    if "<parameter=" in src and "</parameter>" in src and "<function=" in src:
        return "qwen3coder", _qwen3_if(src, _THINK_FOR_QWEN3CODER)
    if '<param name="' in src:
        return "minicpm5", "minicpm5"
    if any(marker in src for marker in _LFM2):
        return "lfm2", "lfm2" if "message.thinking" in src else None
    if "functools" in src:
        return "phi4", None
    if "[TOOL_CALLS]" in src and "[ARGS]" in src:
        return "devstral", None
    if "[TOOL_CALLS]" in src or ("[AVAILABLE_TOOLS]" in src and "[/AVAILABLE_TOOLS]" in src):
        return "mistral", None
    if "<|python_tag|>" in src:
        return "llama3", None
    if "<tool_call>" in src and "</tool_call>" in src:
        return "hermes3", _qwen3_if(src, _THINK_FOR_HERMES3)
    return None, _qwen3_if(src, _THINK_FOR_HERMES3)


def resolve_parsers(
    tool_option: str | None, reasoning_option: str | None, template_source: str | None
) -> tuple[str | None, str | None]:
    """The parsers to run: each option, when set, overrides detection for its own kind only;
    ``none`` turns that kind off."""
    detected_tool, detected_reasoning = detect_parsers(template_source)
    return _pick(tool_option, detected_tool), _pick(reasoning_option, detected_reasoning)


def _pick(option: str | None, detected: str | None) -> str | None:
    if option == DISABLED:
        return None
    return active_name(option) or detected


def _qwen3_if(src: str, markers: tuple[str, ...]) -> str | None:
    return "qwen3" if any(marker in src for marker in markers) else None
