"""Every REST endpoint but infer, and OVMS's routing errors, over plain HTTP."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from openapi_spec_validator import validate
from rest_process import RestProcess

from ovmsx import __version__

JSON = "application/json"


def test_server_metadata(rest: RestProcess) -> None:
    reply = rest.request("GET", "/v2")
    assert reply.status == 200
    assert reply.headers["content-type"] == JSON
    assert reply.json() == {"name": "OpenVINO Model Server", "version": __version__}


def test_health(rest: RestProcess) -> None:
    live = rest.request("GET", "/v2/health/live")
    ready = rest.request("GET", "/v2/health/ready")
    assert (live.status, live.json()) == (200, {"live": True})
    assert (ready.status, ready.json()) == (200, {"ready": True})
    assert ready.headers["content-type"] == "application/json; charset=utf-8"  # as OVMS labels it


def test_model_metadata(rest: RestProcess) -> None:
    for path in ("/v2/models/add_one", "/v2/models/add_one/", "/v2/models/add_one/versions/1"):
        reply = rest.request("GET", path)
        assert reply.status == 200, path
        assert reply.json() == {
            "name": "add_one",
            "versions": ["1"],
            "platform": "OpenVINO",
            "inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 10]}],
            "outputs": [{"name": "output", "datatype": "FP32", "shape": [1, 10]}],
        }


def test_metadata_of_a_dynamic_model_a_pipeline_and_a_graph(rest: RestProcess) -> None:
    identity = rest.request("GET", "/v2/models/identity").json()
    assert identity["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, -1]}]
    pipeline = rest.request("GET", "/v2/models/add_two").json()
    assert (pipeline["name"], pipeline["versions"]) == ("add_two", ["1"])
    assert pipeline["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [1, 10]}]
    assert pipeline["outputs"] == [{"name": "output", "datatype": "FP32", "shape": [1, 10]}]
    graph = rest.request("GET", "/v2/models/echo/versions/1").json()
    assert graph["inputs"] == [{"name": "in", "datatype": "INVALID", "shape": []}]
    assert graph["outputs"] == [{"name": "out", "datatype": "INVALID", "shape": []}]


def test_versions(rest: RestProcess) -> None:
    assert rest.request("GET", "/v2/models/versioned").json()["versions"] == ["1", "2"]
    # Leading zeros name the same version, as OVMS reads the number.
    assert rest.request("GET", "/v2/models/versioned/versions/001").status == 200
    too_large = rest.request("GET", f"/v2/models/versioned/versions/{2**64}")
    assert too_large.status == 404
    assert too_large.error.startswith("Model with requested version is not found")


def test_metadata_errors(rest: RestProcess) -> None:
    missing = rest.request("GET", "/v2/models/nothing")
    assert missing.status == 404
    assert missing.headers["content-type"] == JSON
    assert missing.error.startswith("Model with requested name is not found")
    version = rest.request("GET", "/v2/models/add_one/versions/7")
    assert version.status == 404
    assert version.error.startswith("Model with requested version is not found")
    pipeline_version = rest.request("GET", "/v2/models/add_two/versions/2")
    assert pipeline_version.status == 404


def test_percent_encoded_names_are_decoded(rest: RestProcess) -> None:
    assert rest.request("GET", "/v2/models/add%5Fone").json()["name"] == "add_one"


@pytest.mark.parametrize(
    "path",
    [
        "/v2/models/add_one/ready",
        "/v2/models/add_one/versions/1/ready",
        "/v2/models/versioned/versions/2/ready",
        "/v2/models/add_two/ready",
        "/v2/models/echo/ready",
    ],
)
def test_model_ready(rest: RestProcess, path: str) -> None:
    reply = rest.request("GET", path)
    assert (reply.status, reply.body) == (200, b"")


def test_model_ready_errors(rest: RestProcess) -> None:
    missing = rest.request("GET", "/v2/models/nothing/ready")
    assert missing.status == 404
    assert missing.error.startswith("Model with requested name is not found")
    version = rest.request("GET", "/v2/models/add_one/versions/3/ready")
    assert version.status == 404
    assert version.error.startswith("Model with requested version is not found")


@pytest.mark.parametrize(
    "path", ["/", "/v1", "/v2/", "/v2/models", "/v2/models/", "/v2/models/add_one/nope",
             "/v2/models/add_one/versions/x", "/v2/models/add_one/versions/1/predict",
             "/v2/health"],
)  # fmt: skip
def test_unknown_urls(rest: RestProcess, path: str) -> None:
    for method in ("GET", "POST"):
        reply = rest.request(method, path, body=b"{}" if method == "POST" else None)
        assert (reply.status, reply.error) == (400, "Invalid request URL"), (method, path)
        assert reply.headers["content-type"] == JSON


@pytest.mark.parametrize(
    "path", ["/v2/models/../../etc/passwd", "/v2/models/add_one/..", "/v2/models/a/../infer"]
)
def test_a_path_escaping_with_dots_is_refused(rest: RestProcess, path: str) -> None:
    """OVMS's rule: a path beginning with "../", holding "/../", or whose first "/.." ends it."""
    reply = rest.request("GET", path)
    assert reply.status == 400
    assert reply.error == (
        "The provided base path is invalid or doesn't exists - a path escaping with .. is forbidden"
    )


@pytest.mark.parametrize(
    ("path", "name"),
    [("/v2/models/..iO!.0?E*/versions/1", "..iO!.0"), ("/v2/models/..x/versions/1", "..x")],
)
def test_a_name_merely_beginning_with_dots_is_a_name(
    rest: RestProcess, path: str, name: str
) -> None:
    """No "../" nor "/../" in it: an unknown model, as any other (the query is ignored)."""
    reply = rest.request("GET", path)
    assert reply.status == 404, reply.body
    assert reply.error.startswith("Model with requested name is not found"), reply.error
    assert name in reply.error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v2"),
        ("DELETE", "/v2/models/add_one"),
        ("HEAD", "/v2/health/live"),
        ("PATCH", "/v2/models/add_one/infer"),
        ("POST", "/v2"),
        ("POST", "/v2/health/live"),
        ("POST", "/v2/health/ready"),
        ("POST", "/v2/models/add_one"),
        ("POST", "/v2/models/add_one/versions/1/ready"),
        ("GET", "/v2/models/add_one/infer"),
        ("GET", "/v2/models/add_one/versions/1/infer"),
        ("GET", "/v1/config/reload"),
        ("POST", "/v1/config"),
        ("POST", "/metrics"),
    ],
)
def test_wrong_methods_are_406(rest: RestProcess, method: str, path: str) -> None:
    reply = rest.request(method, path, body=b"{}" if method in ("POST", "PUT", "PATCH") else None)
    assert reply.status == 406
    if method != "HEAD":  # a HEAD answer has no body
        assert reply.error.startswith("Unsupported method")


def test_metrics_are_an_unknown_url_when_disabled(rest: RestProcess) -> None:
    # OVMS: 400 "Invalid request URL", and /metrics is text even when it fails.
    reply = rest.request("GET", "/metrics")
    assert reply.status == 400
    assert reply.error.startswith("Invalid request URL - metrics are off")
    assert reply.headers["content-type"].startswith("text/plain")


def test_openapi_document(rest: RestProcess) -> None:
    reply = rest.request("GET", "/v2/openapi.json")
    assert reply.status == 200
    document = reply.json()
    validate(document)  # a valid OpenAPI 3 document
    shipped = resources.files("ovmsx.frontend").joinpath("openapi.json").read_text()
    assert document == json.loads(shipped)


def test_every_documented_path_is_served(rest: RestProcess) -> None:
    """No path of the OpenAPI document is an unknown URL to the server."""
    document = rest.request("GET", "/v2/openapi.json").json()
    for template, operations in document["paths"].items():
        if template == "/metrics":  # an unknown URL by design while metrics are off (above)
            continue
        path = template.replace("{name}", "add_one").replace("{version}", "1")
        for method in ("get", "post"):
            if method not in operations:
                continue
            reply = rest.request(method.upper(), path, body=b"{}" if method == "post" else None)
            assert reply.status != 406, (method, path)
            if reply.status == 400:
                assert reply.error != "Invalid request URL", (method, path)
