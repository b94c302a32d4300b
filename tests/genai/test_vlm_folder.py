"""The tests' vision-language folder (examples/vlm/build_vlm_folder.py) as openvino-genai runs it
in this process, the ground truth ovmsx's VLM serving is held to: OVMS's prompt form (the chat
template applied to text carrying ``<ov_genai_image_N>`` tags) with u8 ``[1, H, W, 3]`` images
gives the same greedy text through VLMPipeline and ContinuousBatchingPipeline.add_request, and
the images (which, and in which order) change it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino_genai as genai
import pytest
from llm_graphs import write_vlm_folder

TOKENS = 8


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_vlm_folder(tmp_path_factory.mktemp("vlm") / "tiny_vlm")


@pytest.fixture(scope="module")
def pipeline(folder: Path):
    return genai.VLMPipeline(str(folder), "CPU")


def picture(seed: int) -> ov.Tensor:
    pixels = np.random.default_rng(seed).integers(0, 256, (1, 48, 64, 3), dtype=np.uint8)
    return ov.Tensor(pixels)


def prompt(pipeline, text: str) -> str:
    history = genai.ChatHistory()
    history.append({"role": "user", "content": text})
    return pipeline.get_tokenizer().apply_chat_template(history, add_generation_prompt=True)


def greedy() -> genai.GenerationConfig:
    config = genai.GenerationConfig()
    config.max_new_tokens = TOKENS
    config.apply_chat_template = False
    return config


def answer(pipeline, text: str, images: list[ov.Tensor]) -> str:
    return pipeline.generate(
        prompt(pipeline, text), images=images, generation_config=greedy()
    ).texts[0]


def test_the_folder_is_what_ovms_takes_for_a_vlm(folder: Path) -> None:
    assert (folder / "openvino_text_embeddings_model.xml").is_file()
    assert (folder / "openvino_vision_embeddings_model.bin").is_file()
    assert not (folder / "openvino_talker_model.xml").exists()  # not an omni model


def test_batching_gives_the_single_pipelines_text(folder: Path, pipeline) -> None:
    text = "<ov_genai_image_0>\nWhat is in the image?"
    expected = answer(pipeline, text, [picture(0)])
    assert expected.strip()
    scheduler = genai.SchedulerConfig()
    scheduler.cache_size = 1
    batching = genai.ContinuousBatchingPipeline(str(folder), scheduler, "CPU")
    handle = batching.add_request(0, prompt(pipeline, text), [picture(0)], greedy())
    ids: list[int] = []
    while batching.has_non_finished_requests():
        batching.step()
        if handle.can_read():
            for output in handle.read().values():
                ids.extend(output.generated_ids)
    assert pipeline.get_tokenizer().decode(ids) == expected


def test_the_picture_and_the_order_of_pictures_change_the_answer(pipeline) -> None:
    one = "<ov_genai_image_0>\nWhat is in the image?"
    assert answer(pipeline, one, [picture(0)]) != answer(pipeline, one, [picture(1)])
    two = "<ov_genai_image_0>\n<ov_genai_image_1>\nCompare them."
    forward = answer(pipeline, two, [picture(0), picture(1)])
    assert forward != answer(pipeline, two, [picture(1), picture(0)])
    assert forward == answer(pipeline, two, [picture(0), picture(1)])  # greedy: reproducible
