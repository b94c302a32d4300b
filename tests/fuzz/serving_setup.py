"""A registry serving small OpenVINO models in this process, with the gRPC service and the REST
app on top of it, as the server builds them but without a network: the fuzz targets hand
request bytes straight to what the transports would call.

The models are the serving tests' (tests/serving/serving_models.py): a quick static model the
C++ core answers on its own (``add_one``), dynamic shapes, two inputs, every integer datatype
and strings, so that both the direct path and the general one see the inputs.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import serving_models as sm

from ovmsx.config import load_config
from ovmsx.frontend.kserve_service import KServeService
from ovmsx.frontend.rest_app import RestApp
from ovmsx.frontend.rest_context import RestContext
from ovmsx.servables.inference_dispatch import InferenceDispatcher
from ovmsx.servables.registry import ServableRegistry

# This CPU would otherwise infer in bf16 (as the serving tests, which share these models).
_F32 = {"INFERENCE_PRECISION_HINT": "f32"}

MODELS = ("add_one", "dynamic", "two_inputs", "typed", "strings")


@dataclass
class Serving:
    loop: asyncio.AbstractEventLoop
    registry: ServableRegistry
    service: KServeService
    rest: RestApp


def _write_models(folder: Path) -> Path:
    sm.save(sm.add_constant([1, 10], 1, "add_one"), folder / "add_one")
    sm.save(sm.add_constant([-1, -1], 1, "dynamic"), folder / "dynamic")
    sm.save(sm.two_inputs(), folder / "two_inputs")
    sm.save(sm.typed_model(), folder / "typed")
    sm.save(sm.strings(), folder / "strings")
    entries = [
        {"config": {"name": name, "base_path": str(folder / name), "plugin_config": _F32}}
        for name in MODELS
    ]
    config = folder / "config.json"
    config.write_text(json.dumps({"model_config_list": entries}))
    return config


def start_serving(workdir: Path) -> Serving:
    """The models of ``MODELS`` loaded from ``workdir`` (written there first), and an event
    loop, set as this thread's, to run what the requests defer."""
    config = _write_models(workdir / "models")
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    async def load() -> Serving:
        registry = ServableRegistry(InferenceDispatcher(asyncio.get_running_loop()))
        await registry.load(load_config(config).models)
        service = KServeService(registry)
        return Serving(loop, registry, service, RestApp(RestContext(registry, service)))

    serving = loop.run_until_complete(load())
    missing = [name for name in MODELS if not serving.registry.version(name, "").available]
    assert not missing, f"models did not load: {missing}"
    return serving
