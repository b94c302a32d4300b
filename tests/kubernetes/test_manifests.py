"""The KServe manifests of examples/kubernetes: KServe's schemas accept them, ovmsx's own CLI
parser accepts their container arguments, and their ports, probes and users agree."""

from __future__ import annotations

import copy
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import pytest
from kserve_schemas import load_yaml, problems

from ovmsx.config.cli_options import ServerOptions, parse_options

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kubernetes"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
MODEL_NAME = "resnet"  # what KServe puts for {{.Name}}: the InferenceService's name


def manifests() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{index}", manifest)
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for index, manifest in enumerate(load_yaml(path))
    ]


def runtimes() -> list[dict[str, Any]]:
    return [m for _, m in manifests() if m["kind"] in RUNTIME_KINDS]


def inference_services() -> list[dict[str, Any]]:
    return [m for _, m in manifests() if m["kind"] == "InferenceService"]


def options_of(container: dict[str, Any]) -> ServerOptions:
    args = [arg.replace("{{.Name}}", MODEL_NAME) for arg in container["args"]]
    return parse_options(args)


def test_there_is_a_runtime_of_each_kind_and_inference_services() -> None:
    assert sorted(m["kind"] for m in runtimes()) == sorted(RUNTIME_KINDS)
    assert len(inference_services()) >= 2


@pytest.mark.parametrize(("where", "manifest"), manifests(), ids=[w for w, _ in manifests()])
def test_kserve_schema_accepts_the_manifest(where: str, manifest: dict[str, Any]) -> None:
    assert problems(manifest) == []


def test_the_schema_check_catches_a_misspelt_field_and_a_missing_one() -> None:
    runtime = copy.deepcopy(runtimes()[0])
    container = runtime["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    assert any("readinesProbe" in problem for problem in problems(runtime))
    del runtime["spec"]["containers"]
    assert any("'containers' is a required property" in p for p in problems(runtime))
    service = copy.deepcopy(inference_services()[0])
    service["spec"]["predictor"]["model"]["storageURI"] = "pvc://misspelt"
    service["spec"]["predictor"]["minReplicas"] = "two"
    assert len(problems(service)) == 2


@pytest.mark.parametrize("runtime", runtimes(), ids=lambda m: m["kind"])
def test_ovmsx_parses_the_runtime_arguments(runtime: dict[str, Any]) -> None:
    (container,) = runtime["spec"]["containers"]
    options = options_of(container)
    assert options.model_name == MODEL_NAME
    assert options.model_path == "/mnt/models"  # where KServe's storage initializer puts it
    assert (options.port, options.rest_port) == (9000, 8000)
    assert options.metrics_enable
    assert options.file_system_poll_wait_seconds == 0  # KServe's model files do not change
    assert options.single_model_config() is not None


@pytest.mark.parametrize("runtime", runtimes(), ids=lambda m: m["kind"])
def test_ports_probes_and_scraping_agree_with_the_arguments(runtime: dict[str, Any]) -> None:
    spec = runtime["spec"]
    (container,) = spec["containers"]
    options = options_of(container)
    (http,) = container["ports"]
    assert (http["name"], http["containerPort"]) == ("http1", options.rest_port)
    live = container["livenessProbe"]["httpGet"]
    assert (live["path"], live["port"]) == ("/v2/health/live", options.rest_port)
    assert container["readinessProbe"]["grpc"]["port"] == options.port
    annotations = spec["annotations"]
    assert annotations["prometheus.kserve.io/port"] == str(options.rest_port)
    assert annotations["prometheus.kserve.io/path"] == "/metrics"
    assert set(spec["protocolVersions"]) == {"v2", "grpc-v2"}


@pytest.mark.parametrize("runtime", runtimes(), ids=lambda m: m["kind"])
def test_the_runtime_runs_the_image_of_this_version_as_its_user(runtime: dict[str, Any]) -> None:
    (container,) = runtime["spec"]["containers"]
    assert container["image"] == f"ovmsx:{package_version('ovmsx')}"
    security = container["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] == containerfile_user()


@pytest.mark.parametrize("service", inference_services(), ids=lambda m: m["metadata"]["name"])
def test_inference_services_use_the_runtime_as_it_is_declared(service: dict[str, Any]) -> None:
    model = service["spec"]["predictor"]["model"]
    (runtime,) = [r for r in runtimes() if r["kind"] == "ClusterServingRuntime"]
    assert model["runtime"] == runtime["metadata"]["name"]
    formats = {f["name"] for f in runtime["spec"]["supportedModelFormats"]}
    assert model["modelFormat"]["name"] in formats
    assert model["protocolVersion"] in runtime["spec"]["protocolVersions"]
    options = options_of(runtime["spec"]["containers"][0])
    for port in model.get("ports", []):
        # Naming a port routes to it instead of the runtime's: gRPC goes to --port.
        assert (port["name"], port["containerPort"]) == ("h2c", options.port)
        assert model["protocolVersion"] == "grpc-v2"


# -- the Containerfile ----------------------------------------------------------------------


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Containerfile, continuation lines joined."""
    text = (EXAMPLES / "Containerfile").read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def containerfile_user() -> int:
    users = [rest for word, rest in final_stage() if word == "USER"]
    assert users, "the image must name its user"
    return int(users[-1])  # numeric: Kubernetes can check runAsNonRoot only for a number


def test_the_image_runs_as_a_user_that_is_not_root() -> None:
    assert containerfile_user() != 0


def test_the_image_runs_ovmsx() -> None:
    (entrypoint,) = [rest for word, rest in final_stage() if word == "ENTRYPOINT"]
    assert entrypoint == '["ovmsx"]'
    exposed = [rest for word, rest in final_stage() if word == "EXPOSE"]
    assert exposed == ["9000 8000"]


def test_the_image_installs_ovmsx_with_pip_on_a_slim_python() -> None:
    bases = [rest.split()[0] for word, rest in instructions() if word == "FROM"]
    assert bases
    assert all(base.startswith("python:") and base.endswith("-slim") for base in bases)
    assert any("pip install" in rest for word, rest in final_stage() if word == "RUN")


def test_the_image_copies_files_that_exist() -> None:
    """Sources are relative to the repository root, the build context."""
    root = EXAMPLES.parents[1]
    copied = [rest.split() for word, rest in instructions() if word == "COPY"]
    sources = [src for *srcs, _ in copied if not srcs[0].startswith("--") for src in srcs]
    assert "pyproject.toml" in sources
    for source in sources:
        assert (root / source).exists(), source


# -- an LLM through the same runtime -----------------------------------------------------------


def test_the_runtime_serves_an_llm_folder_through_a_graph_it_builds(tmp_path: Path) -> None:
    """KServe copies an LLM folder into --model_path: the runtime's own arguments serve it as a
    text-generation graph (its task read from config.json), with no flag added."""
    import json

    from ovmsx.config.config_source import task_graph_config

    (service,) = [s for s in inference_services() if s["metadata"]["name"] == "llm"]
    (runtime,) = [r for r in runtimes() if r["kind"] == "ClusterServingRuntime"]
    folder = tmp_path / "mnt" / "models"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    args = [
        arg.replace("{{.Name}}", service["metadata"]["name"]).replace("/mnt/models", str(folder))
        for arg in runtime["spec"]["containers"][0]["args"]
    ]
    graph = task_graph_config(parse_options(args))
    assert graph is not None
    assert graph.name == "llm"
    assert 'calculator: "HttpLLMCalculator"' in (graph.graph_text or "")
    assert f'models_path: "{folder}"' in (graph.graph_text or "")
