"""Read, adjust and compile one model version (OVMS load order: layout, shape/batch, compile).

Runs off the event loop (``asyncio.to_thread``): OpenVINO's read and compile release the GIL.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ovmsx import _core
from ovmsx.call_timer import WARM_UP_CALLS
from ovmsx.config.model_config import ModelConfig
from ovmsx.config.shape_spec import AUTO, Dim
from ovmsx.servables import compile_defaults
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.model_files import model_file
from ovmsx.servables.port_layout import batch_index
from ovmsx.servables.request_validation import InputValidator
from ovmsx.status import StatusCode, status_error

if TYPE_CHECKING:
    from ovmsx.metrics.inference_meter import InferenceMeter

log = logging.getLogger("ovmsx.models")

_ANY = (0, -1)  # OpenVINO's fully dynamic dimension as (min, max)
MAX_NIREQ = 100_000  # OVMS refuses more infer requests per model than this
# A model whose blocking inferences average less than this runs without a hand-off to
# OpenVINO's thread: on the thread that has the request (gRPC's polling thread, the event loop
# for graphs running there, a graph worker). A hand-off costs ~100 µs of wake-ups
# (bench/bench_dispatch.py) and, on gRPC's polling thread, the whole Python path around it;
# blocking that thread for up to this long costs less. Measured with perf_analyzer at
# concurrency 4 on identity [1,3,224,224] (~60 µs alone, several hundred under load):
# 550 infer/s with 200 µs here, 670 with 1 ms.
QUICK_INFERENCE_S = 1e-3
# Below this, a quick model infers with the GIL held: giving it away and taking it back, when
# another thread wants it, costs more than the inference (add_one [1,10] infers in ~8 µs).
# Longer inferences release it, so the event loop and the polling thread go on meanwhile.
TINY_INFERENCE_S = 100e-6
# A model not yet measured blocking is tried blocking (a "probe") when its submitted inferences,
# hand-off included, take less than this: a probe then blocks its thread no longer than that.
# Generous, because on a loaded machine waking OpenVINO's thread alone can take a millisecond.
PROBE_ROUND_TRIP_S = 5e-3
# A model measured too slow to run blocking is probed again once every this many submitted
# inferences, so that one that was slow only under load can become quick again.
REPROBE_EVERY = 256


@dataclass(frozen=True)
class CompiledVersion:
    """A compiled model and its pool of infer requests."""

    path: Path
    compiled: _core.CompiledModel
    pool: _core.InferencePool
    inputs: list[_core.PortInfo]
    outputs: list[_core.PortInfo]
    validator: InputValidator
    output_names: frozenset[str]
    by_name_order: tuple[int, ...]  # output indices in name order, OVMS's response order
    direct: _core.DirectInfer  # plain ModelInfer requests answered whole in C++
    model_info: dict[str, object] | None = None
    """The model's rt_info["model_info"] (nested dicts of strings), which REST metadata shows;
    None when the model has none."""
    meter: InferenceMeter | None = field(default=None, compare=False)
    """Times this version's inferences when metrics are on (``attach_meter``)."""

    def attach_meter(self, meter: InferenceMeter) -> None:
        """Set once the version is loaded and its metrics exist: the one field set after
        construction (the version is compiled before anything knows its metrics)."""
        object.__setattr__(self, "meter", meter)

    def infer_here(
        self, tensors: Sequence[_core.Tensor], release_gil: bool = True
    ) -> list[_core.Tensor]:
        """Blocking inference on this thread (``InferencePool.infer``), timed when metered."""
        meter = self.meter
        if meter is None:
            return self.pool.infer(tensors, release_gil)
        return meter.infer_here(self.pool, tensors, release_gil)

    def infer_submitted(
        self, tensors: Sequence[_core.Tensor], dispatcher: InferenceDispatcher
    ) -> Awaitable[list[_core.Tensor]]:
        """Inference on OpenVINO's threads, awaited on the loop, timed when metered."""
        meter = self.meter
        if meter is None:
            return dispatcher.infer(self.pool, tensors)
        return meter.infer_submitted(self.pool, tensors, dispatcher)

    def answer(self, message: bytes) -> bytes | None:
        """A serialized ModelInferRequest answered whole in C++ on this thread
        (``DirectInfer.answer``; None: declined, nothing ran), timed when metered."""
        meter = self.meter
        if meter is None:
            return self.direct.answer(message)
        return meter.answer(self.direct, self.pool, message)

    def respond(self, message: bytes, dispatcher: InferenceDispatcher) -> Awaitable[bytes | None]:
        """The same, inferred on OpenVINO's thread and awaited on the loop, timed when
        metered."""
        meter = self.meter
        if meter is None:
            return dispatcher.respond(self.direct, message)
        return meter.respond(self.direct, self.pool, message, dispatcher)

    @property
    def quick(self) -> bool:
        """Measured to infer faster than a hand-off to another thread costs."""
        pool = self.pool
        return pool.inferences >= WARM_UP_CALLS and pool.inference_time < QUICK_INFERENCE_S

    @property
    def tiny(self) -> bool:
        """Measured to infer faster than handing the GIL away and back costs."""
        return self.quick and self.pool.inference_time < TINY_INFERENCE_S

    def runs_here(self) -> bool:
        """Whether the next inference should block the thread that has the request: the
        model is quick, or worth a probe to find out while one of its infer requests is idle.
        (A quick model whose infer requests are all busy waits for one behind a single quick
        inference: still less than a hand-off.)"""
        pool = self.pool
        if self.quick:
            return True
        if pool.active >= pool.size:
            return False
        if pool.round_trips < WARM_UP_CALLS or pool.round_trip_time >= PROBE_ROUND_TRIP_S:
            return False
        # A probe adds to the count, so the requests after it are submitted again.
        every = pool.inferences + pool.round_trips
        return pool.inferences < WARM_UP_CALLS or every % REPROBE_EVERY == 0

    def infer_blocking(self, tensors: list[_core.Tensor]) -> list[_core.Tensor]:
        """Inference for a graph worker, blocking it: the GIL is kept for a tiny model,
        released otherwise."""
        return self.infer_here(tensors, not self.tiny)

    async def infer_from_loop(
        self, tensors: list[_core.Tensor], dispatcher: InferenceDispatcher
    ) -> list[_core.Tensor]:
        """Inference for a graph running on the event loop. A quick model runs right here
        (``runs_here``) when no other request is being answered: alone, the hand-off to
        OpenVINO's thread and back costs ~10x its inference; with other requests waiting, the
        loop is the scarce resource and the inference is better spent on OpenVINO's thread.
        Anything else is awaited like a request of its own, so the loop never waits for a
        slow model."""
        if dispatcher.requests <= 1 and self.runs_here():
            return self.infer_here(tensors, not self.tiny)
        return await self.infer_submitted(tensors, dispatcher)


def _bounds(dim: Dim) -> tuple[int, int]:
    return _ANY if dim.is_dynamic else (dim.min, dim.max)


def _target_shapes(config: ModelConfig, inputs: list[_core.PortInfo]) -> dict[str, list]:
    """The reshape the config asks for: ``{input: [(min, max), ...]}``; inputs left as they are
    are absent."""
    anonymous = config.shape is not None and not isinstance(config.shape, dict)
    if anonymous and config.shape != AUTO and len(inputs) > 1:
        raise status_error(StatusCode.ANONYMOUS_FIXED_SHAPE_NOT_ALLOWED, f"model {config.name}")
    known = {port.name for port in inputs}
    if isinstance(config.shape, dict):
        for name in config.shape:
            if name not in known:
                raise status_error(StatusCode.CONFIG_SHAPE_IS_NOT_IN_NETWORK, f"input name: {name}")
    targets: dict[str, list] = {}
    for port in inputs:
        current = list(port.dims)
        if config.batch_size is not None:
            # OVMS: a batch_size makes the shape setting ignored.
            index = batch_index(port)
            if index is None or port.rank_dynamic:
                continue
            if config.batch_size == AUTO:
                current[index] = _ANY
                _served_dynamic(config.name, port.name, "batch_size")
            else:
                current[index] = _bounds(config.batch_size)
            targets[port.name] = current
            continue
        setting = config.shape_for(port.name)
        if setting is None:
            continue
        if setting == AUTO:
            if not port.rank_dynamic:
                targets[port.name] = [_ANY] * len(current)
                _served_dynamic(config.name, port.name, "shape")
            continue
        targets[port.name] = [_bounds(dim) for dim in setting]
    return targets


def _served_dynamic(model: str, name: str, setting: str) -> None:
    """Says how ovmsx honours the deprecated "auto": OVMS reloads the model whenever a
    request's batch or shape differs; ovmsx makes those dimensions dynamic once."""
    log.warning(
        '%s "auto" of model %s input %s is served with dynamic dimensions: requests of any %s '
        "are taken without reloading the model",
        setting,
        model,
        name,
        "batch size" if setting == "batch_size" else "shape",
    )


def _layouts(config: ModelConfig, inputs: list[_core.PortInfo]) -> dict[str, tuple[str, str]]:
    known = {port.name for port in inputs}
    if isinstance(config.layout, dict):
        for name in config.layout:
            if name not in known:
                raise status_error(
                    StatusCode.CONFIG_LAYOUT_IS_NOT_IN_NETWORK, f"input name: {name}"
                )
    layouts = {}
    for port in inputs:
        spec = config.layout_for(port.name)
        if spec is not None:
            layouts[port.name] = (spec.tensor, spec.model)
    return layouts


def compile_version(
    config: ModelConfig,
    number: int,
    folder: Path,
    completions: _core.CompletionQueue,
    cache_dir: Path | None,
) -> CompiledVersion:
    """Load version ``number`` from its folder as the config says; raises ``StatusError``
    naming what failed."""
    if config.nireq > MAX_NIREQ:
        raise status_error(StatusCode.INVALID_NIREQ, f"nireq {config.nireq} > {MAX_NIREQ}")
    path = model_file(folder)
    source = _core.ModelSource.read(str(path))
    steps = config.preprocessing.step_arguments() if config.preprocessing else {}
    source.prepare_inputs(_layouts(config, source.inputs), **steps)
    source.reshape(_target_shapes(config, source.inputs))
    properties = config.plugin_config_strings()
    for key, value in compile_defaults.defaults_for(config.target_device).items():
        properties.setdefault(key, value)  # the model's own plugin_config wins
    if cache_dir is not None and config.allow_cache:
        properties.setdefault("CACHE_DIR", str(cache_dir))
    model_info = source.model_info  # read before compiling, from the model as adjusted
    compiled = source.compile(config.target_device, properties)
    pool = _core.InferencePool(compiled, config.nireq, completions)
    inputs, outputs = compiled.inputs, compiled.outputs
    names = frozenset(port.name for port in outputs)
    order = tuple(sorted(range(len(outputs)), key=lambda i: outputs[i].name))
    validator = InputValidator(inputs)
    direct = _core.DirectInfer(pool, inputs, outputs, str(number))
    return CompiledVersion(
        path, compiled, pool, inputs, outputs, validator, names, order, direct, model_info
    )
