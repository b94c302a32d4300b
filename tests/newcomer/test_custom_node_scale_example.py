"""examples/custom_node_scale as its README runs it: the node compiled with the README's
command, its config served, its client answered."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from serving_examples import EXAMPLES, run_client
from serving_process import served

import ovmsx.custom_nodes


def test_the_scale_example_builds_serves_and_answers(tmp_path: Path) -> None:
    folder = tmp_path / "custom_node_scale"
    shutil.copytree(EXAMPLES / "custom_node_scale", folder)
    include = ovmsx.custom_nodes.include_dir()
    command = ["cc", "-shared", "-fPIC", "-O2", "-Wall", f"-I{include}", "scale.c"]
    subprocess.run([*command, "-o", "libscale.so"], cwd=folder, check=True, timeout=120)
    with served(folder / "config.json", tmp_path) as server:
        output = run_client(folder, server.url, server.log())
    assert output == ("values: [1.0, 2.0, 3.0, 4.0, 5.0]\nscaled: [3.0, 6.0, 9.0, 12.0, 15.0]\n")
