"""examples/pipelines: prepare it, serve its config, run its client."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from serving_pipelines import fp32_input
from serving_process import ServerProcess

import ovmsx.custom_nodes
from ovmsx import _core

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pipelines"


def test_pipeline_example_client_gets_the_right_answers(tmp_path) -> None:
    folder = tmp_path / "pipelines"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("config.json", "models"))
    subprocess.run([sys.executable, str(folder / "prepare.py")], check=True, cwd=tmp_path)
    server = ServerProcess(["--config_path", str(folder / "config.json")], tmp_path)
    try:
        server.wait_ready()
        done = subprocess.run(
            [sys.executable, str(folder / "client.py"), "--url", server.url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "ok: both pipelines answered as expected" in done.stdout
        _same_as_the_steps_by_hand(server.url, json.loads((folder / "config.json").read_text()))
    finally:
        assert server.stop() == 0, server.log()


def _same_as_the_steps_by_hand(url: str, config: dict) -> None:
    """image_to_numbers on a random image equals: the image_transformation node called
    directly, the flatten model over gRPC, then add_one's +1."""
    image = np.random.default_rng(5).uniform(0, 255, (1, 7, 9, 3)).astype(np.float32)
    pipeline = config["pipeline_config_list"][0]
    params = pipeline["nodes"][0]["params"]
    library = _core.CustomNodeLibrary.load(str(ovmsx.custom_nodes.built_in("image_transformation")))
    node = library.initialize(params)
    (small,) = node.execute([_core.Tensor("image", image)])
    small = np.array(small)
    node.close()
    with grpcclient.InferenceServerClient(url) as client:
        row = client.infer("flatten", [fp32_input("image", small)]).as_numpy("row")
        answer = client.infer("image_to_numbers", [fp32_input("image", image)]).as_numpy("numbers")
    np.testing.assert_allclose(answer, row + 1, rtol=1e-5, atol=1e-4)
