"""The ``--task`` flags of a pull, and which of them belong to which task.

The flags are serving's own (``ovmsx.config.cli_options``): a pull reads them with the same
parser code, into the same ``TextGenerationFlags`` and ``EncoderFlags``
(``ovmsx.genai.task_graph``) that build the graph in memory when serving. Unlike serving, a pull
may leave ``--task`` out and learn it from the downloaded ``config.json``, so the flags are
checked against the task once it is known. OVMS refuses a flag of another task than the one
asked for (``task: X - error parsing options - unmatched arguments : ...``), and so does ovmsx.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

from ovmsx.config.cli_options import _text_generation_flags
from ovmsx.config.errors import UsageError
from ovmsx.genai.task_graph import (
    EMBEDDINGS,
    ENCODER_FLAG_TASKS,
    POOLINGS,
    RERANK,
    TEXT_GENERATION,
    EncoderFlags,
    TaskError,
    TextGenerationFlags,
    check_encoder_flags,
)

_TEXT_GENERATION_NAMES = tuple(field.name for field in dataclasses.fields(TextGenerationFlags))
_ENCODER_NAMES = tuple(field.name for field in dataclasses.fields(EncoderFlags))


@dataclass(frozen=True)
class TaskFlags:
    """The task flags of one command line (``None``: none of that kind given)."""

    text_generation: TextGenerationFlags | None = None
    encoder: EncoderFlags | None = None
    text_generation_given: tuple[str, ...] = ()
    """Names of the ``text_generation`` flags on the command line."""
    encoder_given: tuple[str, ...] = ()
    """Names of the ``embeddings``/``rerank`` flags on the command line."""

    def check_for(self, task: str) -> None:
        """Refuse flags of another task than ``task`` (``UsageError``)."""
        foreign = self.encoder_given if task == TEXT_GENERATION else self.text_generation_given
        if task not in (TEXT_GENERATION, EMBEDDINGS, RERANK):
            foreign = self.text_generation_given + self.encoder_given
        if foreign:
            listed = "".join(f"--{name}, " for name in foreign)
            raise UsageError(
                f"task: {task} - error parsing options - unmatched arguments : {listed}"
            )
        if task in (EMBEDDINGS, RERANK) and self.encoder is not None:
            try:
                check_encoder_flags(task, self.encoder, list(self.encoder_given))
            except TaskError as error:
                raise UsageError(str(error)) from None

    def implied_task(self) -> str | None:
        """The task the given flags belong to, when they say (``None``: none given, or mixed)."""
        if self.text_generation_given:
            return None if self.encoder_given else TEXT_GENERATION
        owners = {ENCODER_FLAG_TASKS[name] for name in self.encoder_given} - {None}
        return owners.pop() if len(owners) == 1 else None


def task_flags(args: argparse.Namespace) -> TaskFlags:
    """The task flags in ``args`` (parsed by a parser holding ``cli_options.add_task_flags``),
    with the checks that need no task (``UsageError`` for a bad value)."""
    encoder_values = {
        name: getattr(args, name) for name in _ENCODER_NAMES if getattr(args, name) is not None
    }
    encoder = EncoderFlags(**encoder_values) if encoder_values else None
    if encoder is not None and encoder.pooling is not None and encoder.pooling not in POOLINGS:
        raise UsageError(f"--pooling {encoder.pooling}: choose one of {', '.join(POOLINGS)}")
    if encoder is not None and encoder.num_streams < 1:
        raise UsageError("--num_streams must be at least 1")
    return TaskFlags(
        text_generation=_text_generation_flags(args),
        encoder=encoder,
        text_generation_given=tuple(
            name for name in _TEXT_GENERATION_NAMES if getattr(args, name) is not None
        ),
        encoder_given=tuple(encoder_values),
    )
