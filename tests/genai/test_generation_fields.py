"""Request fields that change what is generated: beam search and several answers, logprobs,
echo, seeds, sampling settings, chat template arguments."""

from __future__ import annotations

import json

import openai
from llm_graphs import SCRIPT
from rest_process import RestProcess

QUESTION = [{"role": "user", "content": "Tell me a story about a robot."}]


def client(server: RestProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"http://{server.url}/v3", api_key="unused", max_retries=0)


def test_best_of_and_n_give_several_answers(llm: RestProcess) -> None:
    answer = client(llm).chat.completions.create(
        model="readable", messages=QUESTION, max_tokens=8, n=3, extra_body={"best_of": 3}
    )
    assert [choice.index for choice in answer.choices] == [0, 1, 2]
    texts = [choice.message.content for choice in answer.choices]
    assert all(texts)
    assert len(set(texts)) == 3  # beam search keeps distinct beams
    assert answer.usage.completion_tokens == 3 * 8


def test_chat_logprobs_come_per_token(llm: RestProcess) -> None:
    answer = client(llm).chat.completions.create(model="scripted", messages=QUESTION, logprobs=True)
    entries = answer.choices[0].logprobs.content
    assert len(entries) == answer.usage.completion_tokens
    assert "".join(entry.token for entry in entries).startswith("Paris")
    for entry in entries:
        assert entry.logprob is None or entry.logprob <= 0
        assert bytes(entry.bytes) == entry.token.encode()


def test_completions_logprobs_and_echo(llm: RestProcess) -> None:
    prompt = "Hello"
    answer = client(llm).completions.create(model="scripted", prompt=prompt, logprobs=1, echo=True)
    choice = answer.choices[0]
    assert choice.text == prompt + SCRIPT
    # With echo the prompt's tokens are scored too, as OpenAI's legacy completions do: the
    # first has no log probability, and the offsets count from the echoed prompt's start.
    tokens = choice.logprobs.tokens
    scored = answer.usage.prompt_tokens + answer.usage.completion_tokens
    assert len(tokens) == len(choice.logprobs.token_logprobs) == scored
    assert "".join(tokens).startswith(prompt + "Pa")
    offsets = choice.logprobs.text_offset
    assert offsets[0] == 0
    assert offsets == sorted(offsets)
    assert choice.logprobs.token_logprobs[0] is None
    assert all(value is None or value <= 0 for value in choice.logprobs.token_logprobs)


def test_completions_echo_of_nothing_scores_the_prompt(llm: RestProcess) -> None:
    """``max_tokens: 0`` with echo and logprobs: the prompt alone, with its tokens' scores."""
    prompt = "Hello there"
    answer = client(llm).completions.create(
        model="readable", prompt=prompt, logprobs=1, echo=True, max_tokens=0
    )
    choice = answer.choices[0]
    assert choice.text == prompt
    assert answer.usage.completion_tokens == 0
    values = choice.logprobs.token_logprobs
    assert len(values) == len(choice.logprobs.tokens) == answer.usage.prompt_tokens > 1
    assert values[0] is None
    assert all(value < 0 for value in values[1:])


def test_a_seed_repeats_a_sampled_answer(llm: RestProcess) -> None:
    def sampled(seed: int) -> str:
        answer = client(llm).chat.completions.create(
            model="readable", messages=QUESTION, max_tokens=16, temperature=1.5, seed=seed
        )
        return answer.choices[0].message.content

    first = sampled(7)
    assert sampled(7) == first
    assert any(sampled(seed) != first for seed in (8, 9, 10))


def test_sampling_is_the_default_and_temperature_zero_is_greedy(llm: RestProcess) -> None:
    greedy = {
        client(llm)
        .chat.completions.create(model="readable", messages=QUESTION, max_tokens=12, temperature=0)
        .choices[0]
        .message.content
        for _ in range(3)
    }
    assert len(greedy) == 1
    sampled = {
        client(llm)
        .chat.completions.create(model="readable", messages=QUESTION, max_tokens=12)
        .choices[0]
        .message.content
        for _ in range(4)
    }
    assert len(sampled) > 1  # OVMS samples by default (temperature 1.0, top_k 40)


def test_ignore_eos_runs_to_max_tokens(llm: RestProcess) -> None:
    answer = client(llm).chat.completions.create(
        model="scripted", messages=QUESTION, max_tokens=20, extra_body={"ignore_eos": True}
    )
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage.completion_tokens == 20
    assert answer.choices[0].message.content.startswith(SCRIPT)


def test_chat_template_kwargs_reach_the_template(llm: RestProcess) -> None:
    # Without the generation prompt the prompt is shorter by "<|im_start|>assistant\n".
    with_prompt = client(llm).chat.completions.create(model="scripted", messages=QUESTION)
    without = client(llm).chat.completions.create(
        model="scripted",
        messages=QUESTION,
        extra_body={"chat_template_kwargs": {"add_generation_prompt": False}},
    )
    assert without.usage.prompt_tokens < with_prompt.usage.prompt_tokens
    clash = llm.request(
        "POST",
        "/v3/chat/completions",
        json.dumps(
            {"model": "scripted", "messages": QUESTION, "chat_template_kwargs": {"messages": 1}}
        ),
        {"Content-Type": "application/json"},
    )
    assert clash.status == 400
    assert "multiple values for keyword argument 'messages'" in clash.error


def test_a_prompt_longer_than_the_context_is_refused_before_the_engine(llm: RestProcess) -> None:
    long_prompt = "The quick brown fox jumps over the lazy dog. " * 600  # > 4096 tokens
    reply = llm.request(
        "POST",
        "/v3/completions",
        json.dumps({"model": "scripted", "prompt": long_prompt}),
        {"Content-Type": "application/json"},
    )
    assert reply.status == 400
    assert "exceeds model max length: 4096" in reply.error
    # The engine still serves.
    assert client(llm).completions.create(model="scripted", prompt="hi").choices[0].text == SCRIPT


def test_usage_adds_up(llm: RestProcess) -> None:
    answer = client(llm).completions.create(model="readable", prompt="Once", max_tokens=5)
    usage = answer.usage
    assert usage.completion_tokens == 5
    assert usage.total_tokens == usage.prompt_tokens + 5


def test_skip_special_tokens_false_keeps_the_end_of_sequence_token(llm: RestProcess) -> None:
    for stream in (False, True):
        answer = client(llm).chat.completions.create(
            model="scripted",
            messages=QUESTION,
            stream=stream,
            extra_body={"skip_special_tokens": False},
        )
        if stream:
            text = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
        else:
            text = answer.choices[0].message.content
        assert text == SCRIPT + "<|im_end|>"


def test_echo_with_no_new_tokens_answers_the_prompt(llm: RestProcess, llm_folders) -> None:
    import openvino_genai as genai

    prompt = "Hello, how are you?"
    answer = client(llm).completions.create(
        model="scripted", prompt=prompt, echo=True, max_tokens=0
    )
    assert answer.choices[0].text == prompt
    assert answer.usage.completion_tokens == 0
    tokenizer = genai.Tokenizer(str(llm_folders["scripted"]))
    assert answer.usage.prompt_tokens == tokenizer.encode(prompt).input_ids.shape[1]
    stream = client(llm).completions.create(
        model="scripted", prompt=prompt, echo=True, max_tokens=0, stream=True
    )
    chunks = [chunk.choices[0] for chunk in stream if chunk.choices]
    assert "".join(choice.text for choice in chunks) == prompt
    assert chunks[-1].finish_reason == "length"
