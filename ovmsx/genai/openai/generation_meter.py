"""What one ``/v3`` request adds to ``/metrics``: OVMS's MediaPipe counters for the graph
(``api="V3"``, ``method`` ``Unary`` or ``Stream``) and ovmsx's generation series.

OVMS checks a request's fields inside the graph, so a request it can route is accepted and a
refusal after that counts as a graph error; every unary answer and every streamed chunk is a
response. Time to first token runs from the request's arrival to the engine step that produced
the first token; time per output token averages the rest of each request's tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ovmsx.metrics.graph_call import GraphCall
from ovmsx.metrics.series import LLMSeries


class GenerationMeter:
    __slots__ = ("_arrival", "_call", "_llm", "_release", "failed")

    def __init__(
        self, call: GraphCall | None, llm: LLMSeries | None, release: Callable[[], None]
    ) -> None:
        """``release``: called once when the request ends (it lets the graph retire)."""
        self._call = call
        self._llm = llm
        self._release: Callable[[], None] | None = release
        self._arrival = time.monotonic()
        self.failed = False
        """Set when a stream ended with an error after its first chunk."""

    def accepted(self) -> None:
        if self._call is not None:
            self._call.accepted()

    def responded(self) -> None:
        if self._call is not None:
            self._call.responded()

    def finished(self, result: dict, sequences: int) -> None:
        """A generation's result (engine_process's ``done``) came back."""
        llm = self._llm
        if llm is None:
            return
        generated = result["completion_tokens"]
        llm.prompt_tokens.add(result["prompt_tokens"])
        llm.generated_tokens.add(generated)
        first = result["first_token_at"]
        llm.time_to_first_token.observe(max(0.0, first - self._arrival) * 1e6)
        per_sequence = generated / max(1, sequences)
        if per_sequence > 1:
            seconds = (result["last_token_at"] - first) / (per_sequence - 1)
            llm.time_per_output_token.observe(seconds * 1e6)

    def end(self, ok: bool) -> None:
        """Once, when the request is over; later calls do nothing."""
        release, self._release = self._release, None
        if release is None:
            return
        release()
        if self._call is not None:
            self._call.end(ok)
