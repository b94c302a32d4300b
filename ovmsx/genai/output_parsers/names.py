"""Parser names: OVMS's own lists, which of them ovmsx implements, and the load-time check.

The unknown-name messages are worded as OVMS's ``--task text_generation`` CLI words them
(``src/graph_export/graph_cli_parser.cpp``); the lists keep OVMS's order
(``src/llm/io_processing/parser_config_validation.cpp``), which those messages print.
"""

from __future__ import annotations

TOOL_PARSERS: tuple[str, ...] = (
    "llama3", "hermes3", "phi4", "mistral", "gptoss", "qwen3coder", "devstral", "lfm2", "gemma4",
    "onyx", "minicpm5",
)  # fmt: skip
REASONING_PARSERS: tuple[str, ...] = ("qwen3", "gemma4", "gptoss", "onyx", "minicpm5", "lfm2")

IMPLEMENTED_TOOL_PARSERS: frozenset[str] = frozenset(
    {"hermes3", "llama3", "mistral", "phi4", "qwen3coder", "devstral"}
)
IMPLEMENTED_REASONING_PARSERS: frozenset[str] = frozenset({"qwen3"})

# OVMS accepts this value for either option and then runs no parser of that kind.
DISABLED = "none"


class ParserNameError(ValueError):
    """A parser name OVMS does not know, or one ovmsx does not implement yet."""


def active_name(name: str | None) -> str | None:
    """The parser to run for an option value: None when unset, empty or ``none``."""
    if not name or name == DISABLED:
        return None
    return name


def check_parser_names(tool: str | None, reasoning: str | None) -> None:
    """Raise ParserNameError unless both names can be served (None, "" and "none" always can)."""
    _check("tool_parser", "tool parsers", active_name(tool), TOOL_PARSERS, IMPLEMENTED_TOOL_PARSERS)
    _check(
        "reasoning_parser",
        "reasoning parsers",
        active_name(reasoning),
        REASONING_PARSERS,
        IMPLEMENTED_REASONING_PARSERS,
    )


def _check(
    option: str, plural: str, name: str | None, known: tuple[str, ...], implemented: frozenset[str]
) -> None:
    if name is None:
        return
    if name not in known:
        raise ParserNameError(
            f'Unsupported {option}: "{name}". Supported {plural} are: {", ".join(known)}'
        )
    if name not in implemented:
        done = ", ".join(n for n in known if n in implemented)
        raise ParserNameError(
            f'{option} "{name}" is an OVMS parser that ovmsx does not implement yet '
            f"(implemented: {done})"
        )
