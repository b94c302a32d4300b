"""The server as a process: bad configs stop it, bad models do not, signals drain it."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
import serving_models as sm
import tritonclient.grpc as grpcclient
from kserve_requests import assert_status, rpc_error
from serving_process import ServerProcess, free_port, run_to_exit, write_config
from tritonclient.utils import InferenceServerException

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
VERSION_MISSING = "Model with requested version is not found"
X = np.arange(10, dtype=np.float32).reshape(1, 10)


def _one_model(settings: str) -> str:
    """A config.json with one model ``m``; ``settings`` is pasted in after its base_path."""
    return '{"model_config_list": [{"config": {"name": "m", "base_path": "m"' + settings + "}}]}"


# id -> (config.json text, what the error must name)
BAD_CONFIGS = {
    "bad_json": (_one_model(","), "The file is not valid json"),
    "negative_nireq": (_one_model(', "nireq": -1'), "model_config_list[0].config.nireq"),
    "unknown_key": (_one_model(', "nireqs": 1'), "model_config_list[0].config.nireqs"),
    "zero_versions": (
        _one_model(', "model_version_policy": {"latest": {"num_versions": 0}}'),
        "model_config_list[0].config.model_version_policy",
    ),
    "no_model_list": ('{"models": []}', "model_config_list"),
}


@pytest.mark.parametrize(("text", "named"), BAD_CONFIGS.values(), ids=BAD_CONFIGS)
def test_an_invalid_config_stops_the_server(tmp_path: Path, text: str, named: str) -> None:
    config = tmp_path / "broken_config.json"
    config.write_text(text)
    code, out = run_to_exit(["--config_path", str(config), "--port", str(free_port())], tmp_path)
    assert code != 0, out
    assert str(config) in out
    assert named in out


def test_a_missing_config_file_stops_the_server(tmp_path: Path) -> None:
    config = tmp_path / "nowhere.json"
    code, out = run_to_exit(["--config_path", str(config), "--port", str(free_port())], tmp_path)
    assert code != 0
    assert str(config) in out


# -- models that cannot load ---------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server whose config holds one good model, four that cannot load, and ``half``,
    whose version 1 is corrupt and version 2 good (served with the "all" policy).

    The good one's base_path is relative: it resolves against the config file's folder, not
    the server's working directory.
    """
    repo = tmp_path_factory.mktemp("broken")
    sm.save(sm.add_constant([1, 10], 1), repo / "good")
    (repo / "no_versions" / "not_a_number").mkdir(parents=True)
    (repo / "no_model_file" / "1").mkdir(parents=True)
    for corrupt in (repo / "corrupt" / "1", repo / "half" / "1"):
        corrupt.mkdir(parents=True)
        (corrupt / "model.xml").write_text("<net><layers>this is not a model")
        (corrupt / "model.bin").write_bytes(b"\x00" * 16)
    sm.save(sm.add_constant([1, 10], 2), repo / "half", 2)
    names = ["good", "no_versions", "no_model_file", "corrupt", "missing_folder"]
    models = [{"name": n, "base_path": str(repo / n), "plugin_config": F32} for n in names]
    models[0]["base_path"] = "good"
    half = {"name": "half", "base_path": str(repo / "half"), "plugin_config": F32}
    models.append({**half, "model_version_policy": {"all": {}}})
    config = write_config(repo / "config.json", models)
    server = ServerProcess(["--config_path", str(config)], tmp_path_factory.mktemp("cwd"))
    try:
        server.wait_ready()
        yield server
    finally:
        code = server.stop(signal.SIGINT)  # SIGINT drains and stops like SIGTERM
    assert code == 0, server.log()


def test_the_server_is_ready_and_the_good_model_serves(broken_models: ServerProcess) -> None:
    with grpcclient.InferenceServerClient(broken_models.url) as client:
        assert client.is_server_ready()
        assert client.is_model_ready("good")
        tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
        result = client.infer("good", [tensor])
    np.testing.assert_array_equal(result.as_numpy("output"), X + 1)


@pytest.mark.parametrize("model", ["no_versions", "no_model_file", "corrupt", "missing_folder"])
def test_a_model_that_failed_to_load_is_not_served(
    broken_models: ServerProcess, model: str
) -> None:
    with grpcclient.InferenceServerClient(broken_models.url) as client:
        # OVMS keeps the name of a model that failed, with no version: "version not found".
        got = rpc_error(client.is_model_ready, model)
        assert_status(got, grpc.StatusCode.NOT_FOUND, VERSION_MISSING, contains=model)
        tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
        got = rpc_error(client.infer, model, [tensor])
        assert_status(got, grpc.StatusCode.NOT_FOUND, VERSION_MISSING, contains=model)
        got = rpc_error(client.get_model_metadata, model)
        assert_status(got, grpc.StatusCode.NOT_FOUND, VERSION_MISSING)


def test_a_version_that_failed_to_load_is_not_ready(broken_models: ServerProcess) -> None:
    with grpcclient.InferenceServerClient(broken_models.url) as client:
        try:
            ready, error = client.is_model_ready("corrupt", "1"), None
        except grpcclient.InferenceServerException as failed:
            ready, error = None, failed
    if error is None:
        assert ready is False
    else:
        # OVMS: a version whose first load failed is not in its map at all.
        assert error.status() == "StatusCode.NOT_FOUND"
        assert error.message().startswith(VERSION_MISSING)


def test_the_good_version_of_a_half_broken_model_serves(broken_models: ServerProcess) -> None:
    with grpcclient.InferenceServerClient(broken_models.url) as client:
        assert client.is_model_ready("half")
        assert list(client.get_model_metadata("half").versions) == ["2"]
        tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
        result = client.infer("half", [tensor])
        np.testing.assert_array_equal(result.as_numpy("output"), X + 2)
        assert result.get_response().model_version == "2"


def test_the_broken_version_of_a_half_broken_model_is_not_found(
    broken_models: ServerProcess,
) -> None:
    # OVMS adds a version to its map only once it loaded, so version 1 does not exist for
    # infer and metadata alike; it is not "not loaded yet" (UNAVAILABLE invites retries).
    with grpcclient.InferenceServerClient(broken_models.url) as client:
        tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
        got = rpc_error(client.infer, "half", [tensor], model_version="1")
        assert_status(got, grpc.StatusCode.NOT_FOUND, VERSION_MISSING)
        got = rpc_error(client.get_model_metadata, "half", "1")
        assert_status(got, grpc.StatusCode.NOT_FOUND, VERSION_MISSING)


def test_the_log_says_which_models_failed_and_why(broken_models: ServerProcess) -> None:
    log = broken_models.log()
    for model in ("no_versions", "no_model_file", "corrupt", "missing_folder", "half"):
        lines = [line for line in log.splitlines() if "][error][" in line and model in line]
        assert lines, f"no error logged for {model}:\n{log}"
    assert any("Not a single model version directory" in line for line in log.splitlines())


# -- single-model mode --------------------------------------------------------------------


def test_single_model_mode(tmp_path: Path) -> None:
    for version in sm.VERSIONS_ON_DISK:
        sm.save(sm.add_constant([1, 10], version), tmp_path / "model", version)
    model = ["--model_name", "solo", "--model_path", str(tmp_path / "model")]
    settings = ["--model_version_policy", '{"all": {}}', "--plugin_config", json.dumps(F32)]
    server = ServerProcess([*model, *settings], tmp_path)
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            metadata = client.get_model_metadata("solo")
            assert list(metadata.versions) == ["1", "2", "3"]
            tensor = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
            result = client.infer("solo", [tensor])
            np.testing.assert_array_equal(result.as_numpy("output"), X + 3)
            result = client.infer("solo", [tensor], model_version="1")
            np.testing.assert_array_equal(result.as_numpy("output"), X + 1)
    finally:
        code = server.stop()
    assert code == 0, server.log()


# -- flags ------------------------------------------------------------------------------
# (SIGTERM with requests in flight: tests/faults/test_sigterm_in_flight.py.)


def test_channel_arguments_override_the_servers_own(tmp_path: Path) -> None:
    """--grpc_channel_arguments wins over ovmsx's defaults for the same key (gRPC keeps the
    first of duplicate arguments, so the order in which they reach it matters)."""
    sm.save(sm.add_constant([1, -1], 1), tmp_path / "model")
    model = ["--model_name", "add", "--model_path", str(tmp_path / "model")]
    limit = ["--grpc_channel_arguments", "grpc.max_receive_message_length=4096"]
    server = ServerProcess([*model, *limit, "--plugin_config", json.dumps(F32)], tmp_path)
    try:
        server.wait_ready()
        with grpcclient.InferenceServerClient(server.url) as client:
            small = grpcclient.InferInput("input", [1, 10], "FP32").set_data_from_numpy(X)
            np.testing.assert_array_equal(client.infer("add", [small]).as_numpy("output"), X + 1)
            big = np.zeros((1, 2048), np.float32)  # 8 KiB of data
            tensor = grpcclient.InferInput("input", [1, 2048], "FP32").set_data_from_numpy(big)
            with pytest.raises(InferenceServerException) as refused:
                client.infer("add", [tensor])
            assert refused.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
            assert "4096" in refused.value.message()
    finally:
        code = server.stop()
    assert code == 0, server.log()
