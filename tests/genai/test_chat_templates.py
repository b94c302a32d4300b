"""Chat templates as OVMS renders them: chat_template.jinja wins, jinja2's sandbox with
Hugging Face's helpers (raise_exception, tojson, loop controls, {% generation %}), tools and
chat_template_kwargs reach the template, and a template that fails is a 400 with its reason."""

from __future__ import annotations

import json
import shutil

import openvino_genai as genai
import pytest
from llm_graphs import SCRIPT
from rest_process import RestProcess, rest_served

# Renders tools by name, uses the helpers HF templates rely on, and a kwarg of the request.
CUSTOM = (
    "{% if tools %}TOOLS:{% for tool in tools %}{{ tool.function.name }};{% endfor %}\n{% endif %}"
    "{% for message in messages %}{% if loop.index0 > 5 %}{% break %}{% endif %}"
    "{{ message.role | upper }}: {% generation %}{{ message.content }}{% endgeneration %}\n"
    "{% endfor %}{{ {'mood': mood} | tojson }}\n"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
FAILING = "{{ raise_exception('this template refuses ' + messages[0].role) }}"
UNSAFE = "{{ messages.__class__.__mro__ }}"
QUESTION = [{"role": "user", "content": "hi"}]
TOOLS = [
    {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "time", "parameters": {"type": "object"}}},
]


@pytest.fixture(scope="module")
def templated(llm_folders, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("templates")
    templates = {"custom": CUSTOM, "failing": FAILING, "unsafe": UNSAFE}
    for name, template in templates.items():
        shutil.copytree(llm_folders["scripted"], root / name)
        (root / name / "chat_template.jinja").write_text(template)
    entries = [{"config": {"name": n, "base_path": str(root / n)}} for n in templates]
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": entries}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server, root


def chat(server: RestProcess, model: str, **fields):
    body = {"model": model, "messages": QUESTION, **fields}
    return server.request(
        "POST", "/v3/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )


def prompt_tokens(folder, text: str) -> int:
    return genai.Tokenizer(str(folder)).encode(text, add_special_tokens=False).input_ids.shape[1]


def test_the_folders_chat_template_renders_the_prompt(templated) -> None:
    server, root = templated
    reply = chat(server, "custom", chat_template_kwargs={"mood": "calm"})
    assert reply.status == 200, reply.body
    assert reply.json()["choices"][0]["message"]["content"] == SCRIPT
    # trim_blocks drops the newline after a block tag; one after an expression stays.
    expected = 'USER: hi{"mood": "calm"}\nASSISTANT:'
    assert reply.json()["usage"]["prompt_tokens"] == prompt_tokens(root / "custom", expected)


def test_tools_reach_the_template_and_tool_choice_none_removes_them(templated) -> None:
    server, root = templated
    with_tools = chat(server, "custom", tools=TOOLS, chat_template_kwargs={"mood": "x"})
    expected = 'TOOLS:weather;time;USER: hi{"mood": "x"}\nASSISTANT:'
    assert with_tools.json()["usage"]["prompt_tokens"] == prompt_tokens(root / "custom", expected)
    named = chat(
        server,
        "custom",
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "time"}},
        chat_template_kwargs={"mood": "x"},
    )
    expected = 'TOOLS:time;USER: hi{"mood": "x"}\nASSISTANT:'
    assert named.json()["usage"]["prompt_tokens"] == prompt_tokens(root / "custom", expected)
    none = chat(
        server, "custom", tools=TOOLS, tool_choice="none", chat_template_kwargs={"mood": "x"}
    )
    expected = 'USER: hi{"mood": "x"}\nASSISTANT:'
    assert none.json()["usage"]["prompt_tokens"] == prompt_tokens(root / "custom", expected)


def test_a_template_that_fails_is_a_400_with_its_reason(templated) -> None:
    server, _ = templated
    reply = chat(server, "failing")
    assert reply.status == 400
    assert reply.error.endswith("this template refuses user")
    # Completions need no template.
    completion = server.request(
        "POST",
        "/v3/completions",
        json.dumps({"model": "failing", "prompt": "hi"}),
        {"Content-Type": "application/json"},
    )
    assert completion.json()["choices"][0]["text"] == SCRIPT


def test_the_sandbox_refuses_unsafe_templates(templated) -> None:
    server, _ = templated
    reply = chat(server, "unsafe")
    assert reply.status == 400
    assert "access to attribute '__class__'" in reply.error
