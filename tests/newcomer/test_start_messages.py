"""What a first start prints: a ``--model_path`` that serves nothing stops the server with an
error exit, as OVMS's model manager does in single-model mode, and a start with both ports
prints no stray gRPC line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import serving_models as sm
import tritonclient.grpc as grpcclient
from serving_process import ServerProcess, free_port, run_to_exit, served, write_config

EX_FAILURE = 1
NOT_STARTED = "Couldn't start model manager: m did not load"


def test_a_model_path_that_does_not_exist_stops_the_server(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, output = run_to_exit(
        ["--model_name", "m", "--model_path", str(missing), "--port", str(free_port())], tmp_path
    )
    assert code == EX_FAILURE, output
    assert f"The provided base path is invalid or doesn't exists - {missing}" in output
    assert NOT_STARTED in output


def test_a_model_path_without_a_model_stops_the_server(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, output = run_to_exit(
        ["--model_name", "m", "--model_path", str(tmp_path / "empty"), "--port", str(free_port())],
        tmp_path,
    )
    assert code == EX_FAILURE, output
    assert NOT_STARTED in output


def test_a_model_path_that_loads_keeps_serving(tmp_path: Path) -> None:
    model = sm.save(sm.add_constant([1, 4], 1, "m"), tmp_path / "m")
    server = ServerProcess(["--model_name", "m", "--model_path", str(model)], tmp_path)
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            assert client.is_model_ready("m")
    finally:
        code = server.stop()
    assert code == 0, server.log()
    assert NOT_STARTED not in server.log()


def test_a_start_with_both_ports_prints_no_grpc_fork_line(tmp_path: Path) -> None:
    """``import openvino`` (by the REST /v3 app, once gRPC serves) sends OpenVINO's usage
    telemetry from a forked process; with gRPC's fork support on, gRPC then logged
    ``fork_posix.cc ... skipping fork() handlers`` at every start."""
    sm.save(sm.add_constant([1, 4], 1, "m"), tmp_path / "m")
    config = write_config(
        tmp_path / "config.json", [{"name": "m", "base_path": str(tmp_path / "m")}]
    )
    with served(config, tmp_path, rest=True) as server:
        pass
    # Read after the stop: the forking thread has ended by then.
    assert "fork_posix" not in server.log()
    assert "REST server listening" in server.log()


ROOT = Path(__file__).resolve().parents[2]
NO_POOLING = "neither the graph nor 1_Pooling/config.json sets pooling"


def _embeddings_log(folder: Path, workdir: Path) -> str:
    flags = ["--model_name", "e", "--model_path", str(folder), "--task", "embeddings"]
    server = ServerProcess([*flags, "--rest_port", str(free_port())], workdir)
    try:
        server.wait_ready()
    finally:
        code = server.stop()
    assert code == 0, server.log()
    return server.log()


def test_the_rag_examples_embeddings_folder_names_its_pooling(tmp_path: Path) -> None:
    """examples/rag's builder writes sentence-transformers' pooling files, so ``--task
    embeddings`` on its folder warns of nothing; without them the warning is true, and given."""
    builder = ROOT / "examples" / "rag" / "build_encoder_folders.py"
    subprocess.run([sys.executable, str(builder), str(tmp_path / "models")], check=True)
    embed = tmp_path / "models" / "embed"
    assert NO_POOLING not in _embeddings_log(embed, tmp_path)
    shutil.rmtree(embed / "1_Pooling")
    assert NO_POOLING in _embeddings_log(embed, tmp_path)
