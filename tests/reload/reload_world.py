"""A folder of servables for a reload test: models, graphs and the config naming them, each
rewritten while a server serves it.

Models are ``input`` [1,10] FP32 -> ``output`` = input + N, so an answer tells which model
folder (or version) served it. Graphs are one Python node adding ``ADD`` from its handler
script, so an answer tells which handler served it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import serving_models as sm
from serving_graphs import graph_text, python_node

X = np.arange(10, dtype=np.float32).reshape(1, 10)
F32 = {"INFERENCE_PRECISION_HINT": "f32"}

ADDER = """
    import numpy as np
    from pyovms import Tensor

    ADD = {add}

    class OvmsPythonModel:
        def initialize(self, kwargs):
            self.output = kwargs["output_names"][0]

        def execute(self, inputs):
            return [Tensor(self.output, np.array(inputs[0]) + ADD)]
"""

# Answers every request after ``DELAY`` seconds; ``finalize`` leaves a file, so a test sees when
# the graph was retired for good.
SLOW_ADDER = """
    import time
    from pathlib import Path
    import numpy as np
    from pyovms import Tensor

    class OvmsPythonModel:
        def initialize(self, kwargs):
            self.output = kwargs["output_names"][0]

        def execute(self, inputs):
            time.sleep({delay})
            return [Tensor(self.output, np.array(inputs[0]) + 1)]

        def finalize(self):
            Path({marker!r}).write_text("finalized")
"""


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "config.json"
        self.models: dict[str, dict] = {}
        self.pipelines: list[dict] = []
        self.graphs: list[dict] = []
        self.libraries: list[dict] = []

    # -- files ------------------------------------------------------------------------------

    def model_folder(self, name: str, adds: dict[int, float]) -> Path:
        """``root/models/name/<version>``, version v adding ``adds[v]``."""
        base = self.root / "models" / name
        for version, value in adds.items():
            sm.save(sm.add_constant([1, 10], value, name), base, version)
        return base

    def remove_version(self, name: str, version: int) -> None:
        shutil.rmtree(self.root / "models" / name / str(version))

    def graph_folder(self, name: str, add: int = 1, handler: str | None = None) -> Path:
        folder = self.root / "graphs" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "graph.pbtxt").write_text(
            graph_text(
                ["OVMS_PY_TENSOR:input"],
                ["OVMS_PY_TENSOR:output"],
                [python_node("node", "adder.py", ["INPUT:input"], ["OUTPUT:output"])],
            )
        )
        self.write_handler(name, handler or ADDER.format(add=add))
        return folder

    def write_handler(self, graph: str, text: str) -> None:
        (self.root / "graphs" / graph / "adder.py").write_text(textwrap.dedent(text))

    # -- the config -------------------------------------------------------------------------

    def add_model(self, name: str, adds: dict[int, float] | None = None, **settings) -> None:
        base = self.model_folder(name, adds or {1: 1.0})
        self.models[name] = {"name": name, "base_path": str(base), "plugin_config": F32, **settings}

    def add_graph(self, name: str, **settings) -> None:
        base = self.root / "graphs" / name
        self.graphs.append({"name": name, "base_path": str(base), **settings})

    def write(self) -> Path:
        document = {
            "model_config_list": [{"config": entry} for entry in self.models.values()],
            "pipeline_config_list": self.pipelines,
            "mediapipe_config_list": self.graphs,
            "custom_node_library_config_list": self.libraries,
        }
        self.config.write_text(json.dumps(document, indent=1))
        return self.config
