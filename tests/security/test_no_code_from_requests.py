"""No request makes ovmsx load code: a request naming a shared library or a Python file, as a
model name, a version, a parameter or a config to reload, is answered with the code OVMS uses
for that name (NOT_FOUND for an unknown servable) and opens nothing. Both bait files would
leave a marker file if they were ever loaded: the library from its constructor, the script
on import. Handler scripts and custom-node libraries come only from the config."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest
import tritonclient.grpc as grpcclient
from quota_clients import uint8_input
from rest_process import RestProcess
from tritonclient.utils import InferenceServerException

LIBRARY_SOURCE = """
#include <stdio.h>
__attribute__((constructor)) static void loaded(void) {
    FILE *marker = fopen(MARKER, "w");
    if (marker) fclose(marker);
}
int initialize(void **state, const void *params, int count) { return 0; }
"""


@pytest.fixture(scope="module")
def bait(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A library and a script that each write a marker file when loaded."""
    root = tmp_path_factory.mktemp("bait")
    source = root / "bait.c"
    source.write_text(LIBRARY_SOURCE)
    library = root / "libbait.so"
    marker = root / "library_loaded"
    subprocess.run(
        ["cc", "-shared", "-fPIC", f'-DMARKER="{marker}"', "-o", str(library), str(source)],
        check=True,
    )
    script = root / "bait.py"
    script_marker = root / "script_loaded"
    script.write_text(
        textwrap.dedent(f"""
            open({str(script_marker)!r}, "w").close()

            class OvmsPythonModel:
                def execute(self, inputs):
                    return inputs
        """)
    )
    return {"library": library, "script": script, "markers": [marker, script_marker]}


@pytest.fixture
def untouched(bait: dict[str, Path], guarded: RestProcess):
    """After the test: no marker exists, and the server has not mapped the library."""
    yield
    for marker in bait["markers"]:
        assert not marker.exists(), f"{marker.name}: a request made the server load code"
    mapped = {m.path for m in psutil.Process(guarded.process.pid).memory_maps()}
    assert str(bait["library"]) not in mapped
    assert guarded.request("GET", "/v2/health/ready").status == 200


def _names(bait: dict[str, Path]) -> list[str]:
    library, script = str(bait["library"]), str(bait["script"])
    return [library, script, "../" * 8 + library.lstrip("/"), "libbait.so", "bait.py"]


def _grpc(guarded: RestProcess) -> grpcclient.InferenceServerClient:
    return grpcclient.InferenceServerClient(f"127.0.0.1:{guarded.port}")


def test_grpc_requests_naming_code_find_nothing(
    bait: dict[str, Path], guarded: RestProcess, untouched
) -> None:
    with _grpc(guarded) as client:
        for name in _names(bait):
            for call, arguments in (
                (client.infer, (name, [uint8_input(4)])),
                (client.get_model_metadata, (name,)),
                (client.is_model_ready, (name,)),
            ):
                with pytest.raises(InferenceServerException) as refused:
                    call(*arguments)
                assert refused.value.status() == "StatusCode.NOT_FOUND", (name, refused.value)


def test_a_version_naming_code_is_not_a_version(
    bait: dict[str, Path], guarded: RestProcess, untouched
) -> None:
    with _grpc(guarded) as client:
        for version in (str(bait["library"]), "libbait.so"):
            with pytest.raises(InferenceServerException) as refused:
                client.infer("copy", [uint8_input(4)], model_version=version)
            # OVMS's MODEL_VERSION_INVALID_FORMAT
            assert refused.value.status() == "StatusCode.INVALID_ARGUMENT", refused.value
            assert refused.value.message().startswith("invalid model version format in request")


def test_parameters_naming_code_are_not_acted_on(
    bait: dict[str, Path], guarded: RestProcess, gate_folder: Path, untouched
) -> None:
    parameters = {
        "handler_path": str(bait["script"]),
        "library": str(bait["library"]),
        "base_path": str(bait["library"].parent),
        "graph_path": str(bait["script"]),
    }
    (gate_folder / "open").touch()
    try:
        with _grpc(guarded) as client:
            for servable in ("copy", "gate"):
                result = client.infer(servable, [uint8_input(4)], parameters=parameters)
                assert result.as_numpy("output") is not None
    finally:
        (gate_folder / "open").unlink()
        (gate_folder / "entered").unlink()


def test_rest_requests_naming_code_find_nothing(
    bait: dict[str, Path], guarded: RestProcess, untouched
) -> None:
    body = json.dumps(
        {"inputs": [{"name": "input", "shape": [1], "datatype": "UINT8", "data": [1]}]}
    )
    for name in _names(bait):
        path = f"/v2/models/{quote(name, safe='')}"
        for method, route, data in (
            ("POST", "/infer", body),
            ("GET", "", None),
            ("GET", "/ready", None),
        ):
            reply = guarded.request(method, path + route, data)
            # The name is percent-encoded whole, so its "../" are "..%2F" in the path, which
            # does not climb by OVMS's rule (no "/../" in it): the decoded name is looked up
            # like any other and names nothing. (Paths that climb are 400: test_rest_endpoints.)
            assert reply.status == 404, (name, route, reply)


def test_a_config_reload_takes_no_path_from_the_request(
    bait: dict[str, Path], guarded: RestProcess, untouched, tmp_path: Path
) -> None:
    evil = tmp_path / "config.json"
    evil.write_text(
        json.dumps(
            {
                "model_config_list": [],
                "custom_node_library_config_list": [
                    {"name": "bait", "base_path": str(bait["library"])}
                ],
            }
        )
    )
    reply = guarded.request("POST", "/v1/config/reload", json.dumps({"config_path": str(evil)}))
    assert reply.status in (200, 201), reply
    served = guarded.request("GET", "/v1/config").json()
    assert set(served) == {"copy", "gate"}, served
    with _grpc(guarded) as client:
        assert client.infer("copy", [uint8_input(3)]).as_numpy("output").tolist() == [7, 7, 7]
