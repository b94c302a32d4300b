"""The official openai client against ovmsx's /v3 endpoints: chat and completions, unary and
streamed, on a model whose answer is fixed (so text, finish reasons and usage are exact) and on
a random one compared with openvino-genai's own answer in this process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai
import openvino_genai as genai
import pytest
from llm_graphs import SCRIPT
from openai_clients import client
from rest_process import RestProcess

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def token_count(folder: Path, text: str, special: bool) -> int:
    tokenizer = genai.Tokenizer(str(folder))
    return tokenizer.encode(text, add_special_tokens=special).input_ids.shape[1]


def templated(folder: Path, messages: list[dict]) -> str:
    return genai.Tokenizer(str(folder)).apply_chat_template(messages, add_generation_prompt=True)


def test_chat_answers_the_scripted_text_with_exact_usage(llm: RestProcess, llm_folders) -> None:
    answer = client(llm).chat.completions.create(model="scripted", messages=QUESTION)
    choice = answer.choices[0]
    assert choice.message.content == SCRIPT
    assert choice.message.role == "assistant"
    assert choice.finish_reason == "stop"
    assert answer.object == "chat.completion"
    assert answer.model == "scripted"
    assert answer.id
    folder = llm_folders["scripted"]
    prompt_tokens = token_count(folder, templated(folder, QUESTION), special=False)
    # The script's tokens and the end-of-sequence token that ends it.
    completion_tokens = token_count(folder, SCRIPT, special=False) + 1
    assert answer.usage.prompt_tokens == prompt_tokens
    assert answer.usage.completion_tokens == completion_tokens
    assert answer.usage.total_tokens == prompt_tokens + completion_tokens


def test_a_streamed_chat_sends_the_text_in_pieces_and_ends_with_usage(llm: RestProcess) -> None:
    stream = client(llm).chat.completions.create(
        model="scripted",
        messages=QUESTION,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(texts) == SCRIPT
    assert len(texts) > 3  # streamed as produced, not in one piece
    # "Ç" is two tokens: no chunk holds half a character.
    assert all("\ufffd" not in text for text in texts)
    assert chunks[0].choices[0].delta.role == "assistant"
    finishing = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishing[-1] == "stop"
    assert set(finishing[:-1]) == {None}
    assert chunks[-1].choices == []
    assert (
        chunks[-1].usage.completion_tokens
        == chunks[-1].usage.total_tokens - chunks[-1].usage.prompt_tokens
    )
    assert all(c.usage is None for c in chunks[:-1])


def test_completions_answer_the_scripted_text(llm: RestProcess, llm_folders) -> None:
    answer = client(llm).completions.create(model="scripted", prompt="Hello, how are you?")
    assert answer.choices[0].text == SCRIPT
    assert answer.choices[0].finish_reason == "stop"
    assert answer.object == "text_completion"
    folder = llm_folders["scripted"]
    assert answer.usage.prompt_tokens == token_count(folder, "Hello, how are you?", special=True)


def test_streamed_completions_send_the_scripted_text(llm: RestProcess) -> None:
    stream = client(llm).completions.create(model="scripted", prompt="Hello", stream=True)
    pieces = [chunk.choices[0].text for chunk in stream if chunk.choices]
    assert "".join(pieces) == SCRIPT


def test_a_stop_string_ends_the_answer_before_it(llm: RestProcess) -> None:
    answer = client(llm).chat.completions.create(
        model="scripted", messages=QUESTION, stop=["capital"]
    )
    # openvino-genai cuts the whole token holding the stop string (" capital"), as in OVMS.
    assert answer.choices[0].message.content == "Paris is the"
    assert answer.choices[0].finish_reason == "stop"


def test_a_streamed_answer_includes_the_stop_string(llm: RestProcess) -> None:
    stream = client(llm).chat.completions.create(
        model="scripted", messages=QUESTION, stop="capital", stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Paris is the capital"


def test_max_tokens_ends_the_answer_with_length(llm: RestProcess) -> None:
    answer = client(llm).chat.completions.create(model="scripted", messages=QUESTION, max_tokens=3)
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage.completion_tokens == 3
    assert SCRIPT.startswith(answer.choices[0].message.content)


@pytest.mark.parametrize("stream", [False, True])
def test_greedy_answers_equal_openvino_genai_in_process(
    llm: RestProcess, llm_folders, stream: bool
) -> None:
    folder = llm_folders["readable"]
    prompt = templated(folder, QUESTION)
    config = genai.GenerationConfig(max_new_tokens=24)
    config.apply_chat_template = False
    expected = str(genai.LLMPipeline(str(folder), "CPU").generate(prompt, config))
    chat = client(llm).chat.completions.create(
        model="readable", messages=QUESTION, temperature=0, max_tokens=24, stream=stream
    )
    if stream:
        text = "".join(c.choices[0].delta.content or "" for c in chat if c.choices)
    else:
        text = chat.choices[0].message.content
    assert text == expected
    assert len(expected) > 10


def test_the_async_client_streams_many_answers_at_once(llm: RestProcess) -> None:
    async def one(connection: openai.AsyncOpenAI, index: int) -> str:
        stream = await connection.chat.completions.create(
            model="scripted",
            messages=[{"role": "user", "content": f"question {index}"}],
            stream=True,
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def many() -> list[str]:
        connection = openai.AsyncOpenAI(base_url=f"http://{llm.url}/v3", api_key="unused")
        async with connection:
            return await asyncio.gather(*(one(connection, i) for i in range(32)))

    assert asyncio.run(many()) == [SCRIPT] * 32


def test_models_are_listed_and_retrieved(llm: RestProcess) -> None:
    listed = {model.id for model in client(llm).models.list()}
    assert {"add_one", "scripted", "readable"} <= listed
    assert client(llm).models.retrieve("scripted").id == "scripted"
