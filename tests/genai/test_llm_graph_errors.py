"""LLM graphs that cannot be served: each is refused at load with OVMS's code and a message
naming what is wrong (an option ovmsx cannot honour is named, never dropped), and the rest of
the config keeps serving."""

from __future__ import annotations

import json

import pytest
from llm_graphs import SCRIPT, graph_text, write_vlm_folder
from rest_process import RestProcess, rest_served


def _without_options() -> str:
    text = graph_text()
    return text[: text.index("  node_options")] + text[text.index("  input_stream_handler") :]


NOT_YET = "ovmsx does not serve"
VLM_FOLDER = "@vlm"
# graph name -> (its graph text, what its load error says)
BROKEN = {
    "no_options": (_without_options(), "LLM node is missing its node_options"),
    "no_name": (graph_text(node=""), "LLM node is missing its name"),
    "missing_folder": (graph_text(models_path="./nowhere"), "LLM node models_path does not exist"),
    "draft_missing": (
        graph_text(draft_models_path="./d"),
        "does not exist - node LLMExecutor: draft_models_path",
    ),
    "eagle3": (
        graph_text(draft_models_path="./", draft_eagle3_mode=True),
        f"draft_eagle3_mode: {NOT_YET} EAGLE3",
    ),
    "draft_alone": (
        graph_text(draft_max_num_seqs=4),
        "draft_max_num_seqs set without draft_models",
    ),
    "unknown_parser": (graph_text(tool_parser="nope"), 'Unsupported tool_parser: "nope"'),
    "unimplemented_parser": (
        graph_text(reasoning_parser="gptoss"),
        'reasoning_parser "gptoss" is an OVMS parser that ovmsx does not implement yet',
    ),
    "tool_guided": (
        graph_text(enable_tool_guided_generation=True),
        "ovmsx guides hermes3 tool calls only, and this servable's tool parser is none",
    ),
    "minja": (graph_text(chat_template_mode="MINJA"), "MINJA"),
    "vlm_type_on_text": (
        graph_text(pipeline_type="VLM_CB"),
        "Models directory content indicates non-VLM pipeline, but pipeline type is set to VLM "
        "type.",
    ),
    # VLM_FOLDER stands for the tests' vision-language folder (examples/vlm).
    "text_type_on_vlm": (
        graph_text(models_path=VLM_FOLDER, pipeline_type="LM_CB"),
        "Models directory content indicates VLM pipeline, but pipeline type is set to non-VLM "
        "type.",
    ),
    "vlm_draft": (
        graph_text(models_path=VLM_FOLDER, draft_models_path=VLM_FOLDER),
        "a draft model (draft_models_path) is not served with a vision-language model",
    ),
    "vlm_auto": (
        graph_text(models_path=VLM_FOLDER),
        "pipeline_type VLM_CB: ",
    ),
    "vlm_auto_npu": (
        graph_text(models_path=VLM_FOLDER, device="NPU"),
        "pipeline_type VLM: ",
    ),
    "bad_plugin_config": (graph_text(plugin_config="{not json"), "plugin_config"),
}


@pytest.fixture(scope="module")
def broken(llm_folders, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("broken_llms")
    scripted = llm_folders["scripted"]
    vlm = write_vlm_folder(root / "tiny_vlm")
    graphs = []
    for name, (text, _) in BROKEN.items():
        folder = root / name
        folder.mkdir()
        # models_path "./" means the scripted model's folder: point it there.
        text = text.replace('models_path: "./"', f'models_path: "{scripted}"')
        (folder / "graph.pbtxt").write_text(text.replace(VLM_FOLDER, str(vlm)))
        graphs.append({"name": name, "base_path": str(folder)})
    graphs.append({"name": "good", "base_path": str(scripted)})
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": [], "mediapipe_config_list": graphs}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_llm_graph_is_refused_with_its_reason(broken: RestProcess, name: str) -> None:
    assert broken.request("GET", f"/v2/models/{name}/ready").status != 200
    reply = broken.request(
        "POST",
        "/v3/chat/completions",
        json.dumps({"model": name, "messages": [{"role": "user", "content": "hi"}]}),
        {"Content-Type": "application/json"},
    )
    assert reply.status == 500
    assert reply.error.startswith(f"Mediapipe is not loaded yet - {name}: ")
    assert BROKEN[name][1] in reply.error


def test_the_rest_of_the_config_serves(broken: RestProcess) -> None:
    reply = broken.request(
        "POST",
        "/v3/chat/completions",
        json.dumps({"model": "good", "messages": [{"role": "user", "content": "hi"}]}),
        {"Content-Type": "application/json"},
    )
    assert reply.status == 200
    assert reply.json()["choices"][0]["message"]["content"] == SCRIPT
