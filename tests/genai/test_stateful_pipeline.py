"""``pipeline_type: LM``: openvino-genai's stateful LLMPipeline, one request at a time, queued;
streamed, stopped when its client leaves, and equal to continuous batching's answers."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from llm_graphs import SCRIPT, graph_text
from rest_process import RestProcess, rest_served
from serving_process import wait_until
from test_engine_lifetime import open_stream
from test_llm_metrics import metrics, sample

QUESTION = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def stateful(llm_folders, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("stateful")
    for name in ("scripted", "readable"):
        shutil.copytree(llm_folders[name], root / name)
        (root / name / "graph.pbtxt").write_text(graph_text(pipeline_type="LM"))
    config = root / "config.json"
    entries = [
        {"config": {"name": n, "base_path": str(root / n)}} for n in ("scripted", "readable")
    ]
    config.write_text(json.dumps({"model_config_list": entries}))
    with rest_served(["--config_path", str(config), "--metrics_enable"], root) as server:
        yield server


def client(server: RestProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"http://{server.url}/v3", api_key="x", max_retries=0)


def test_the_stateful_pipeline_answers_unary_and_streamed(stateful: RestProcess) -> None:
    answer = client(stateful).chat.completions.create(model="scripted", messages=QUESTION)
    assert answer.choices[0].message.content == SCRIPT
    assert answer.choices[0].finish_reason == "stop"
    stream = client(stateful).chat.completions.create(
        model="scripted", messages=QUESTION, stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == SCRIPT
    assert "Initializing Language Model Legacy servable" in stateful.log()


def test_requests_queue_and_all_get_their_answer(stateful: RestProcess) -> None:
    def ask(index: int) -> str:
        messages = [{"role": "user", "content": f"question {index}"}]
        answer = client(stateful).chat.completions.create(model="scripted", messages=messages)
        return answer.choices[0].message.content

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(ask, range(6))) == [SCRIPT] * 6


def test_max_tokens_gives_length_and_greedy_equals_continuous_batching(
    stateful: RestProcess, llm: RestProcess
) -> None:
    def greedy(server: RestProcess) -> tuple[str, str]:
        answer = client(server).chat.completions.create(
            model="readable", messages=QUESTION, temperature=0, max_tokens=10
        )
        return answer.choices[0].message.content, answer.choices[0].finish_reason

    assert greedy(stateful) == greedy(llm)
    assert greedy(stateful)[1] == "length"


def test_unsupported_fields_are_refused(stateful: RestProcess) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client(stateful).chat.completions.create(model="scripted", messages=QUESTION, logprobs=True)
    # OVMS's error body: {"error": "<message>"}.
    assert "not supported by the stateful" in refused.value.response.json()["error"]


def test_a_client_that_leaves_stops_the_stateful_generation(stateful: RestProcess) -> None:
    def running() -> float:
        return sample(metrics(stateful), "ovmsx_llm_requests_running", name="readable")

    connection = open_stream(stateful, "readable")
    response = connection.getresponse()
    assert response.readline().startswith(b"data: ")
    wait_until(lambda: running() == 1, "the generation is reported", log=stateful.log)
    connection.close()
    wait_until(lambda: running() == 0, "the generation stopped", log=stateful.log)
    answer = client(stateful).chat.completions.create(model="scripted", messages=QUESTION)
    assert answer.choices[0].message.content == SCRIPT


@pytest.mark.parametrize(
    "options",
    [
        "cache_eviction_config { start_size: 32 recent_size: 128 max_cache_size: 672 }",
        "cache_eviction_config { start_size: 32 recent_size: 128 max_cache_size: 672 "
        "aggregation_mode: SUM kv_crush_config { budget: 8 anchor_point_mode: MEAN } }",
        "sparse_attention_config { mode: TRISHAPE num_last_dense_tokens_in_prefill: 8 }",
    ],
)
def test_cache_eviction_and_sparse_attention_reach_the_scheduler(
    llm_folders, tmp_path: Path, options: str
) -> None:
    folder = tmp_path / "model"
    shutil.copytree(llm_folders["scripted"], folder)
    text = graph_text().replace("      cache_size: 1", f"      cache_size: 1\n      {options}")
    (folder / "graph.pbtxt").write_text(text)
    with rest_served(["--model_name", "m", "--model_path", str(folder)], tmp_path) as server:
        answer = client(server).chat.completions.create(model="m", messages=QUESTION)
        assert answer.choices[0].message.content == SCRIPT


@pytest.mark.parametrize(
    "options",
    [
        # A draft model (another folder with the same tokenizer): speculative decoding.
        {"draft_models_path": "../readable", "draft_max_num_seqs": 8},
        {"plugin_config": '{"prompt_lookup": true}'},
    ],
)
def test_assisted_decoding_gives_the_main_models_greedy_answer(
    llm_folders, tmp_path: Path, options: dict
) -> None:
    shutil.copytree(llm_folders["scripted"], tmp_path / "model")
    shutil.copytree(llm_folders["readable"], tmp_path / "readable")
    (tmp_path / "model" / "graph.pbtxt").write_text(graph_text(**options))
    args = ["--model_name", "m", "--model_path", str(tmp_path / "model")]
    with rest_served(args, tmp_path) as server:
        for fields in ({}, {"num_assistant_tokens": 3}):
            answer = client(server).chat.completions.create(
                model="m", messages=QUESTION, temperature=0, extra_body=fields
            )
            assert answer.choices[0].message.content == SCRIPT


def test_the_stateful_stream_has_no_opening_chunk(stateful: RestProcess) -> None:
    """OVMS's stateful pipeline streams text from its first chunk on; continuous batching
    opens with a role-only chunk."""
    connection = open_stream(stateful, "scripted", max_tokens=8)
    first = connection.getresponse().readline()
    connection.close()
    delta = json.loads(first.removeprefix(b"data: "))["choices"][0]["delta"]
    assert delta.get("content"), delta
