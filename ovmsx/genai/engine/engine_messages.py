"""What the server and an LLM engine process tell each other (pickled: see wire.py). They live
in a module of their own because the engine runs as ``__main__``, and pickle names a class by its
module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineRequest:
    id: int
    prompt: str
    add_special_tokens: bool
    config: dict
    """GenerationConfig fields set by the request (generation_config.py made them)."""
    stream: bool = False
    logprobs: bool = False
    max_tokens: int | None = None
    """The request's max tokens, for the length check against the model's context."""
    skip_special_tokens: bool = True
    echo: bool = False
    """completions' ``echo``: with ``logprobs`` the prompt's tokens are scored too."""
    grammar_checked: bool = False
    """The server's grammar checker compiled its structured output (grammar_checker.py): the
    engine need not probe it again."""


@dataclass
class EngineInfo:
    """What the server learns once the engine is up."""

    pid: int
    max_model_length: int | None
    chat_template: str
    bos_token: str
    eos_token: str
    load_seconds: float
