"""Chat templates as OVMS renders them: chat_template.jinja wins, jinja2's sandbox with
Hugging Face's helpers (raise_exception, tojson, loop controls, {% generation %}), tools and
chat_template_kwargs reach the template, and a template that fails is a 400 with its reason."""

from __future__ import annotations

import json
import re
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
# Written as Qwen3-style templates are: tool-call arguments iterated as a mapping, the
# reasoning read as ``thinking``, content tested as text, and a field OpenAI does not define.
ADAPTED = (
    "{% for m in messages %}{{ m.role }}"
    "{% if m.recipient %}>{{ m.recipient }}{% endif %}:"
    "{% if m.thinking %}<think>{{ m.thinking }}</think>{% endif %}"
    "{% if m.content is string %}{{ m.content }}{% else %}NOT-TEXT{% endif %}"
    "{% if m.tool_calls is defined %}[{% for c in m.tool_calls %}{{ c.function.name }}("
    "{% for k, v in c.function.arguments|items %}{{ k }}={{ v }};{% endfor %})"
    "{% endfor %}]{% endif %}\n{% endfor %}"
)
QUESTION = [{"role": "user", "content": "hi"}]
JSON = {"Content-Type": "application/json"}
TOOLS = [
    {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "time", "parameters": {"type": "object"}}},
]


@pytest.fixture(scope="module")
def templated(llm_folders, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("templates")
    templates = {"custom": CUSTOM, "failing": FAILING, "unsafe": UNSAFE, "adapted": ADAPTED}
    for name, template in templates.items():
        shutil.copytree(llm_folders["scripted"], root / name)
        (root / name / "chat_template.jinja").write_text(template)
    _without_template(llm_folders["scripted"], root / "untemplated")
    names = [*templates, "untemplated"]
    entries = [{"config": {"name": n, "base_path": str(root / n)}} for n in names]
    config = root / "config.json"
    config.write_text(json.dumps({"model_config_list": entries}))
    with rest_served(["--config_path", str(config)], root) as server:
        yield server, root


def _without_template(source, folder) -> None:
    """A copy of ``source`` with no chat template anywhere: no chat_template.jinja, none in
    tokenizer_config.json, none in the tokenizer models' runtime info."""
    shutil.copytree(source, folder)
    (folder / "chat_template.jinja").unlink()
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    for name in ("openvino_tokenizer.xml", "openvino_detokenizer.xml"):
        xml = folder / name
        xml.write_text(re.sub(r'<chat_template value="[^"]*"\s*/>', "", xml.read_text()))


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


def test_messages_are_adapted_to_the_template_before_rendering(templated) -> None:
    """As OVMS's chat-template adapter: string arguments become a mapping for a template that
    iterates them, reasoning_content is given as thinking, an assistant's null content is "",
    an empty tool_calls list is dropped, and extra fields are kept."""
    server, root = templated
    call = {"id": "a1", "type": "function"}
    call["function"] = {"name": "weather", "arguments": '{"city": "Paris"}'}
    messages = [
        {"role": "user", "content": "hi", "recipient": "bot"},
        {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": "hm"},
        {"role": "tool", "content": "sunny", "tool_call_id": "a1"},
        {"role": "assistant", "content": "done", "tool_calls": []},
    ]
    reply = chat(server, "adapted", messages=messages)
    assert reply.status == 200, reply.body
    # (trim_blocks drops each newline that follows a block tag.)
    expected = "user>bot:hiassistant:<think>hm</think>[weather(city=Paris;)]tool:sunny"
    expected += "assistant:done"
    assert reply.json()["usage"]["prompt_tokens"] == prompt_tokens(root / "adapted", expected)


def test_a_model_without_a_template_says_so_in_ovms_words(templated) -> None:
    server, _ = templated
    reply = chat(server, "untemplated")
    assert reply.status == 400
    assert reply.error.endswith(
        "Failed to apply chat template. The model either does not have chat template or has "
        "an invalid one."
    )
    completion = {"model": "untemplated", "prompt": "hi", "max_tokens": 3}
    answer = server.request("POST", "/v3/completions", json.dumps(completion), JSON)
    assert answer.status == 200  # completions need no template
