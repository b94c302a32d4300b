"""The tool-call and reasoning output parsers (``ovmsx.genai.output_parsers``), without a server.

Each sample is a realistic model output with the message OVMS's parser makes of it (or, where
OVMS's unary and streamed parses disagree, the one ovmsx chose, said in the sample's name). The
streamed parse must give the same content, reasoning and calls as the unary one for every split
of the text, so each sample is also fed in two pieces at every position, one character at a
time, and in random pieces.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field

import pytest

from ovmsx.genai.output_parsers import (
    REASONING_PARSERS,
    TOOL_PARSERS,
    OutputParser,
    ParsedMessage,
    ParserNameError,
    ToolCall,
    check_parser_names,
    detect_parsers,
    new_call_id,
    prompt_opens_reasoning,
    resolve_parsers,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "metric": {"type": "boolean"},
                "ratio": {"type": "number"},
                "filters": {"type": "object"},
                "tags": {"type": "array"},
                "note": {"type": ["null", "string"]},
                "anything": {"description": "no type given"},
            },
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
# The flat (Responses API) form of a tool.
GET_TIME = {"type": "function", "name": "get_time", "parameters": {"type": "object"}}
ADD = {
    "type": "function",
    "name": "add",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
}
TOOLS = [WEATHER, SEARCH, GET_TIME, ADD]


@dataclass
class Sample:
    id: str
    tool: str | None
    reasoning: str | None
    text: str
    content: str
    reasoning_content: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    tools: list[dict] | None = field(default_factory=lambda: TOOLS)
    opened: bool = False
    """The prompt already opened the reasoning."""
    cut: bool = False
    """The arguments stop where the model's did, so they are not JSON."""

    def parser(self) -> OutputParser:
        return OutputParser(
            self.tool, self.reasoning, self.tools, prompt_ends_in_reasoning=self.opened
        )


def S(*args, **kwargs) -> Sample:
    return Sample(*args, **kwargs)


HERMES3 = [
    S(
        "hermes3-one-call",
        "hermes3",
        None,
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
        "</tool_call>",
        "",
        calls=[("get_weather", '{"city":"Paris","days":3}')],
    ),
    S(
        "hermes3-text-before-two-calls-text-after-dropped",
        "hermes3",
        None,
        "Let me look that up.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n'
        '{"name": "search", "arguments": {"query": "Louvre hours"}}\n</tool_call>\nI will wait.',
        "Let me look that up.\n",
        calls=[("get_weather", '{"city":"Paris"}'), ("search", '{"query":"Louvre hours"}')],
    ),
    S(
        "hermes3-nested-json-and-unicode",
        "hermes3",
        None,
        r'<tool_call>{"name": "search", "arguments": {"query": "café ☕ \"quoted\" \\ path", '
        r'"filters": {"tags": ["a", "b c"], "min": -1.5e3, "exact": true, "lang": null}}}'
        r"</tool_call>",
        "",
        calls=[
            (
                "search",
                r'{"query":"café ☕ \"quoted\" \\ path","filters":{"tags":["a","b c"],'
                r'"min":-1.5e3,"exact":true,"lang":null}}',
            )
        ],
    ),
    S(
        "hermes3-raw-control-characters-in-strings-are-escaped",
        "hermes3",
        None,
        '<tool_call>{"name": "search", "arguments": {"query": "line1\nline2\ttab"}}</tool_call>',
        "",
        calls=[("search", r'{"query":"line1\nline2\ttab"}')],
    ),
    S(
        "hermes3-arguments-before-name",
        "hermes3",
        None,
        '<tool_call>{"arguments": {"city": "Oslo"}, "name": "get_weather"}</tool_call>',
        "",
        calls=[("get_weather", '{"city":"Oslo"}')],
    ),
    S(
        "hermes3-name-last-with-raw-newline",
        "hermes3",
        None,
        '<tool_call>{"arguments": {"code": "a\nb"}, "name": "run"}</tool_call>',
        "",
        calls=[("run", r'{"code":"a\nb"}')],
    ),
    S(
        "hermes3-name-last-with-escaped-quote-and-brace",
        "hermes3",
        None,
        r'<tool_call>{"arguments": {"q": "\"} b"}, "name": "search"} (done)</tool_call>',
        "",
        calls=[("search", r'{"q":"\"} b"}')],
    ),
    S(
        "hermes3-empty-arguments",
        "hermes3",
        None,
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        "",
        calls=[("get_time", "{}")],
    ),
    S(
        "hermes3-not-json-is-dropped",
        "hermes3",
        None,
        'Sure.<tool_call>get_weather(city="Paris")</tool_call>',
        "Sure.",
    ),
    S(
        "hermes3-no-name-is-dropped",
        "hermes3",
        None,
        '<tool_call>{"arguments": {"a": 1}}</tool_call>',
        "",
    ),
    S(
        "hermes3-string-arguments-are-dropped-as-in-ovms",
        "hermes3",
        None,
        r'<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}</tool_call>',
        "",
    ),
    S(
        "hermes3-bad-block-then-good-block",
        "hermes3",
        None,
        '<tool_call>{"name": 7}</tool_call>\n<tool_call>{"name": "search", "arguments": '
        '{"query": "x"}}</tool_call>',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S(
        "hermes3-no-call",
        "hermes3",
        None,
        "The weather is sunny. Use <b>tags</b>, a < b > c, and even <tool",
        "The weather is sunny. Use <b>tags</b>, a < b > c, and even <tool",
    ),
    S(
        "hermes3-missing-end-tag",
        "hermes3",
        None,
        '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S(
        # OVMS's stream ends the arguments before the call's last "}": when the call object
        # never closes, that is the arguments' own brace.
        "hermes3-unclosed-call-object-loses-the-brace-taken-for-its-end",
        "hermes3",
        None,
        '<tool_call>{"name": "search", "arguments": {"query": "x"}\n<tool_call>'
        '{"name": "get_time", "arguments": {}}</tool_call>',
        "",
        calls=[("search", '{"query":"x"'), ("get_time", "{}")],
        cut=True,
    ),
    S(
        "hermes3-unclosed-call-object-before-the-end-tag",
        "hermes3",
        None,
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "tags": ["a"]}'
        "</tool_call>",
        "",
        calls=[("get_weather", '{"city":"Paris","tags":["a"]')],
        cut=True,
    ),
    S(
        "hermes3-end-tag-inside-name",
        "hermes3",
        None,
        '<tool_call>{"name": "sea</tool_call>Later text',
        "",
    ),
    S(
        "hermes3-cut-off-arguments-stay-as-generated",
        "hermes3",
        None,
        '<tool_call>\n{"name": "search", "arguments": {"query": "Paris wea',
        "",
        calls=[("search", '{"query":"Paris wea')],
        cut=True,
    ),
    S(
        "hermes3-without-tools-nothing-is-parsed",
        "hermes3",
        None,
        '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>',
        '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>',
        tools=None,
    ),
    S(
        "hermes3-qwen3-reasoning-then-call",
        "hermes3",
        "qwen3",
        "<think>\nNeed the weather.\n</think>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "\n\n",
        "\nNeed the weather.\n",
        [("get_weather", '{"city":"Paris"}')],
    ),
    S(
        "hermes3-call-inside-reasoning-is-reasoning",
        "hermes3",
        "qwen3",
        '<think>maybe <tool_call>{"name": "x", "arguments": {}}</tool_call></think>Answer',
        "Answer",
        'maybe <tool_call>{"name": "x", "arguments": {}}</tool_call>',
    ),
]

LLAMA3 = [
    S(
        "llama3-python-tag",
        "llama3",
        None,
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
        "",
        calls=[("get_weather", '{"city":"Paris"}')],
    ),
    S(
        "llama3-bare-json-at-start",
        "llama3",
        None,
        '  {"name": "get_weather", "parameters": {"city": "Paris"}}',
        "",
        calls=[("get_weather", '{"city":"Paris"}')],
    ),
    S(
        "llama3-several-calls-separated-by-semicolons",
        "llama3",
        None,
        '{"name": "search", "parameters": {"query": "a; b"}}; '
        '{"name": "get_weather", "arguments": {"city": "Rome", "tags": ["x", {"y": [1]}]}}',
        "",
        calls=[
            ("search", '{"query":"a; b"}'),
            ("get_weather", '{"city":"Rome","tags":["x",{"y":[1]}]}'),
        ],
    ),
    S(
        "llama3-text-before-python-tag",
        "llama3",
        None,
        'Checking.<|python_tag|>{"name": "search", "parameters": {"query": "Zürich"}}',
        "Checking.",
        calls=[("search", '{"query":"Zürich"}')],
    ),
    S(
        "llama3-json-later-in-the-text-is-content",
        "llama3",
        None,
        'Use {"name": "x", "parameters": {}} as input.<|eot_id|>',
        'Use {"name": "x", "parameters": {}} as input.',
    ),
    S(
        "llama3-name-not-a-string-is-dropped",
        "llama3",
        None,
        '{"name": 42, "parameters": {}}',
        "",
    ),
    S(
        "llama3-code-after-python-tag-is-dropped",
        "llama3",
        None,
        'Here:<|python_tag|>print("hi")',
        "Here:",
    ),
    S(
        "llama3-junk-then-call",
        "llama3",
        None,
        '<|python_tag|>search("x"); {"name": "search", "parameters": {"query": "x"}}',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S(
        "llama3-end-of-message-tokens-are-not-content",
        "llama3",
        None,
        "First.<|eom_id|>Second.<|eot_id|>",
        "First.Second.",
    ),
    S(
        "llama3-bare-json-after-reasoning",
        "llama3",
        "qwen3",
        '<think>call it</think>\n{"name": "search", "parameters": {"query": "x"}}',
        "",
        "call it",
        [("search", '{"query":"x"}')],
    ),
    S(
        "llama3-unclosed-call-object-loses-the-brace-taken-for-its-end",
        "llama3",
        None,
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}<|eom_id|>',
        "",
        calls=[("get_weather", '{"city":"Paris"')],
        cut=True,
    ),
    S(
        "llama3-no-call",
        "llama3",
        None,
        "Paris is the capital of France.",
        "Paris is the capital of France.",
    ),
]

MISTRAL = [
    S(
        "mistral-two-calls",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "search", "arguments": {"query": "museums"}}]</s>',
        "",
        calls=[("get_weather", '{"city":"Paris"}'), ("search", '{"query":"museums"}')],
    ),
    S(
        "mistral-array-without-tag",
        "mistral",
        None,
        '[{"name": "search", "arguments": {"query": "x"}}]',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    # Only an output that starts with the tag can be calls; the tags are not content (OVMS
    # decodes it without special tokens, and its tokenizer writes a space after the tag).
    S(
        "mistral-tag-inside-content-is-no-call",
        "mistral",
        None,
        'Let me check.\n\n[TOOL_CALLS] [{"name": "search", "arguments": {"query": "東京"}}]</s>',
        'Let me check.\n\n [{"name": "search", "arguments": {"query": "東京"}}]',
    ),
    S(
        "mistral-second-tag-makes-it-all-content",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search", "arguments": {"query": "a"}}]</s> \n\nMore text.\n\n'
        '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}]</s>',
        '[{"name": "search", "arguments": {"query": "a"}}] \n\nMore text.\n\n'
        ' [{"name": "get_time", "arguments": {}}]',
    ),
    S(
        "mistral-two-tagged-arrays-are-content",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search", "arguments": {}}][TOOL_CALLS][{"name": "get_time", '
        '"arguments": {}}]',
        '[{"name": "search", "arguments": {}}][{"name": "get_time", "arguments": {}}]',
    ),
    S(
        "mistral-text-after-the-array-makes-it-content",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search", "arguments": {"query": "x"}}]</s> Done.',
        '[{"name": "search", "arguments": {"query": "x"}}] Done.',
    ),
    S(
        "mistral-cut-off-array-is-content",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search", "arguments": {"query": "x"</s>',
        '[{"name": "search", "arguments": {"query": "x"',
    ),
    S(
        "mistral-object-without-array-is-content",
        "mistral",
        None,
        '[TOOL_CALLS] {"name": "search", "arguments": {"query": "x"}}',
        ' {"name": "search", "arguments": {"query": "x"}}',
    ),
    S(
        "mistral-whitespace-before-the-tag-is-content",
        "mistral",
        None,
        ' [TOOL_CALLS][{"name": "search", "arguments": {}}]',
        ' [{"name": "search", "arguments": {}}]',
    ),
    S(
        "mistral-whitespace-around-the-array",
        "mistral",
        None,
        '[TOOL_CALLS]\n[{"name": "search", "arguments": {"query": "x"}}]\n</s>',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S(
        "mistral-end-of-turn-token-after-the-array",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search", "arguments": {"query": "x"}}]<|im_end|>',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S(
        "mistral-array-of-numbers-is-content",
        "mistral",
        None,
        "[1, 2, 3] are numbers.</s>",
        "[1, 2, 3] are numbers.",
    ),
    S(
        "mistral-invalid-element-dropped",
        "mistral",
        None,
        '[TOOL_CALLS][{"name": "search"}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]',
        "",
        calls=[("get_weather", '{"city":"Oslo"}')],
    ),
    S(
        "mistral-tag-without-array",
        "mistral",
        None,
        "Answer first.[TOOL_CALLS] sorry",
        "Answer first. sorry",
    ),
]

PHI4 = [
    S(
        "phi4-one-call",
        "phi4",
        None,
        'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        "",
        calls=[("get_weather", '{"city":"Paris"}')],
    ),
    S(
        "phi4-text-before-two-calls",
        "phi4",
        None,
        "I will call a tool.\n"
        'functools[{"name": "search", "arguments": {"query": "x"}}, '
        '{"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}]',
        "I will call a tool.\n",
        calls=[("search", '{"query":"x"}'), ("get_weather", '{"city":"Rome","days":2}')],
    ),
    # All that follows the first functools must be one array: two blocks give no call.
    S(
        "phi4-two-functools-blocks-give-no-call",
        "phi4",
        None,
        'functools[{"name": "search", "arguments": {"query": "a"}}]\n\nMore text.\n\n'
        'functools[{"name": "get_time", "arguments": {}}]',
        "",
    ),
    S(
        "phi4-text-then-two-blocks",
        "phi4",
        None,
        'Checking.\nfunctools[{"name": "search", "arguments": {}}]'
        'functools[{"name": "get_time", "arguments": {}}]',
        "Checking.\n",
    ),
    S(
        "phi4-text-after-the-array-gives-no-call",
        "phi4",
        None,
        'functools[{"name": "search", "arguments": {"query": "x"}}] Done.',
        "",
    ),
    S(
        "phi4-cut-off-array-gives-no-call",
        "phi4",
        None,
        'functools[{"name": "search", "arguments": {"query": "x"',
        "",
    ),
    S(
        "phi4-invalid-elements-dropped",
        "phi4",
        None,
        'functools[{"name": "search", "arguments": {"query": "x"}}, '
        '{"tool": "get_time", "arguments": {}}, {"name": "add", "options": {}}, 7]',
        "",
        calls=[("search", '{"query":"x"}')],
    ),
    S("phi4-malformed", "phi4", None, "Sure functools{oops", "Sure "),
    S(
        "phi4-no-call",
        "phi4",
        None,
        "Python has functool-like helpers.",
        "Python has functool-like helpers.",
    ),
]

QWEN3CODER = [
    S(
        "qwen3coder-values-typed-by-schema",
        "qwen3coder",
        None,
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n"
        "<parameter=ratio>\n0.5\n</parameter>\n"
        '<parameter=filters>\n{"wind": true, "max": 10}\n</parameter>\n'
        "<parameter=tags>\n['a', 'b']\n</parameter>\n<parameter=note>\nnull\n</parameter>\n"
        "<parameter=anything>\n[1, 2]\n</parameter>\n</function>\n</tool_call>",
        "",
        calls=[
            (
                "get_weather",
                '{"city":"São Paulo","days":3,"metric":true,"ratio":0.5,'
                '"filters":{"wind":true,"max":10},"tags":["a","b"],"note":"null","anything":[1,2]}',
            )
        ],
    ),
    S(
        "qwen3coder-function-without-tool-call-tag",
        "qwen3coder",
        None,
        '<function=search>\n<parameter=query>\nbest "pizza" \\ NYC\n</parameter>\n</function>',
        "",
        calls=[("search", r'{"query":"best \"pizza\" \\ NYC"}')],
    ),
    S(
        "qwen3coder-multiline-value-loses-one-newline-each-side",
        "qwen3coder",
        None,
        "<tool_call>\n<function=search>\n<parameter=query>\n\ndef f():\n    return 'x'\n\n"
        "</parameter>\n</function>\n</tool_call>",
        "",
        calls=[("search", '{"query":"\\ndef f():\\n    return \'x\'\\n"}')],
    ),
    S(
        "qwen3coder-text-around-two-calls-stays",
        "qwen3coder",
        None,
        "I will check both.\n<tool_call>\n<function=search>\n<parameter=query>\nx\n</parameter>\n"
        "</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n"
        "</parameter>\n</function>\n</tool_call>\nThanks.",
        "I will check both.\n\n\nThanks.",
        calls=[("search", '{"query":"x"}'), ("get_weather", '{"city":"Rome"}')],
    ),
    S(
        "qwen3coder-first-duplicate-wins-mismatched-and-undeclared-values-are-strings",
        "qwen3coder",
        None,
        "<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n"
        "<parameter=days>\n4\n</parameter>\n<parameter=extra>\n42\n</parameter>\n</function>",
        "",
        calls=[("get_weather", '{"days":"three","extra":"42"}')],
    ),
    S(
        "qwen3coder-function-not-in-tools",
        "qwen3coder",
        None,
        "<function=lookup>\n<parameter=id>\n7\n</parameter>\n</function>",
        "",
        calls=[("lookup", '{"id":"7"}')],
    ),
    S(
        "qwen3coder-cut-off-value-is-closed",
        "qwen3coder",
        None,
        "<tool_call>\n<function=search>\n<parameter=query>\nhalf a que",
        "",
        calls=[("search", '{"query":"half a que"}')],
    ),
    S(
        "qwen3coder-cut-off-number",
        "qwen3coder",
        None,
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n1",
        "",
        calls=[("get_weather", '{"days":1}')],
    ),
    S(
        "qwen3coder-flat-tool-schema",
        "qwen3coder",
        None,
        "<function=add>\n<parameter=a>\n2\n</parameter>\n</function>",
        "",
        calls=[("add", '{"a":2}')],
    ),
    S(
        "qwen3coder-no-parameters",
        "qwen3coder",
        None,
        "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
        "",
        calls=[("get_time", "{}")],
    ),
    S(
        "qwen3coder-with-qwen3-reasoning",
        "qwen3coder",
        "qwen3",
        "<think>plan</think>\n<tool_call>\n<function=search>\n<parameter=query>\nq\n"
        "</parameter>\n</function>\n</tool_call>",
        "\n",
        "plan",
        [("search", '{"query":"q"}')],
    ),
    S(
        "qwen3coder-reasoning-after-a-call-is-content",
        "qwen3coder",
        "qwen3",
        "<tool_call>\n<function=get_time>\n</function>\n</tool_call><think>late</think>",
        "<think>late</think>",
        calls=[("get_time", "{}")],
    ),
    S(
        "qwen3coder-tool-call-without-function-is-dropped",
        "qwen3coder",
        None,
        "<tool_call>\nno function here\n</tool_call>After",
        "After",
    ),
    S(
        "qwen3coder-no-call",
        "qwen3coder",
        None,
        "Use <b>bold</b> and a <function keyword.",
        "Use <b>bold</b> and a <function keyword.",
    ),
]

DEVSTRAL = [
    S(
        "devstral-one-call-arguments-as-generated",
        "devstral",
        None,
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>',
        "",
        calls=[("get_weather", '{"city": "Paris"}')],
    ),
    S(
        "devstral-text-then-two-calls-empty-arguments",
        "devstral",
        None,
        'Checking. [TOOL_CALLS]search[ARGS]{"query": "café"}[TOOL_CALLS]get_time[ARGS]</s>',
        "Checking. ",
        calls=[("search", '{"query": "café"}'), ("get_time", "{}")],
    ),
    S(
        "devstral-missing-args-tag-stays-content",
        "devstral",
        None,
        'Some content [TOOL_CALLS]example_tool{"arg1": "value1"}</s>',
        'Some content example_tool{"arg1": "value1"}',
    ),
    S(
        "devstral-no-name-stays-content",
        "devstral",
        None,
        "Text[TOOL_CALLS][ARGS]{}",
        "Text[ARGS]{}",
    ),
    S(
        "devstral-whitespace-around-the-name-is-trimmed",
        "devstral",
        None,
        'Before the call [TOOL_CALLS] get_weather [ARGS]{"city": "Paris"}',
        "Before the call ",
        calls=[("get_weather", '{"city": "Paris"}')],
    ),
    S(
        "devstral-newline-after-the-name-is-trimmed",
        "devstral",
        None,
        "[TOOL_CALLS]\tget_time\n[ARGS]</s>",
        "",
        calls=[("get_time", "{}")],
    ),
    S("devstral-no-call", "devstral", None, "Just text.</s>", "Just text."),
]

QWEN3 = [
    S(
        "qwen3-reasoning-then-answer",
        None,
        "qwen3",
        "<think>\nThe user greets me.\n</think>\n\nHello!",
        "\n\nHello!",
        "\nThe user greets me.\n",
    ),
    S("qwen3-no-reasoning", None, "qwen3", "Hello without thinking.", "Hello without thinking."),
    S(
        "qwen3-prompt-opened-reasoning",
        None,
        "qwen3",
        "Reasoning first.</think>The answer is 42.",
        "The answer is 42.",
        "Reasoning first.",
        opened=True,
    ),
    S(
        "qwen3-prompt-opened-reasoning-and-model-repeats-tag",
        None,
        "qwen3",
        "<think>Still thinking</think>Done",
        "Done",
        "Still thinking",
        opened=True,
    ),
    S(
        "qwen3-cut-off-reasoning",
        None,
        "qwen3",
        "<think>I was cut off mid-thou",
        "",
        "I was cut off mid-thou",
    ),
    S(
        "qwen3-text-before-think-is-content",
        None,
        "qwen3",
        "Preamble <think>r</think> after",
        "Preamble  after",
        "r",
    ),
    S(
        "qwen3-second-block-is-content",
        None,
        "qwen3",
        "<think>a</think>b<think>c</think>",
        "b<think>c</think>",
        "a",
    ),
    S("qwen3-partial-tag-at-end", None, "qwen3", "Math: 3 <thi", "Math: 3 <thi"),
    S("qwen3-empty-output", None, "qwen3", "", ""),
    S(
        "no-parsers",
        None,
        None,
        '<think>x</think><tool_call>{"name": "a", "arguments": {}}</tool_call>',
        '<think>x</think><tool_call>{"name": "a", "arguments": {}}</tool_call>',
    ),
]

SAMPLES = HERMES3 + LLAMA3 + MISTRAL + PHI4 + QWEN3CODER + DEVSTRAL + QWEN3
BY_ID = {sample.id: sample for sample in SAMPLES}


def summary(message: ParsedMessage) -> tuple:
    calls = [(call.name, call.arguments) for call in message.tool_calls]
    return message.content, message.reasoning_content, calls


def streamed(parser: OutputParser, pieces: list[str]) -> tuple[tuple, list[dict]]:
    """The content, reasoning and calls the deltas of a streamed parse add up to, and the
    deltas."""
    stream = parser.stream()
    deltas: list[dict] = []
    for piece in pieces:
        deltas += stream.feed(piece)
    deltas += stream.finish()
    content, reasoning = "", ""
    calls: list[list[str]] = []
    for delta in deltas:
        assert len(delta) == 1, delta
        if "content" in delta:
            content += delta["content"]
        elif "reasoning_content" in delta:
            reasoning += delta["reasoning_content"]
        else:
            (entry,) = delta["tool_calls"]
            if "id" in entry:
                assert entry["index"] == len(calls)
                assert entry["type"] == "function"
                assert entry["function"]["arguments"] == ""
                calls.append([entry["function"]["name"], ""])
            else:
                assert entry["index"] == len(calls) - 1
                assert set(entry["function"]) == {"arguments"}
                calls[-1][1] += entry["function"]["arguments"]
    assert stream.tool_calls_seen == bool(calls)
    return (content, reasoning or None, [tuple(call) for call in calls]), deltas


def random_pieces(text: str, rng: random.Random, longest: int) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(0, longest)  # empty pieces too: the server may feed ""
        pieces.append(text[at : at + size])
        at += size
    return pieces


# --- unary -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_unary_parse(sample: Sample) -> None:
    message = sample.parser().parse(sample.text)
    assert summary(message) == (sample.content, sample.reasoning_content, sample.calls)
    for call in message.tool_calls:
        assert len(call.id) == 9
        assert set(call.id) <= set(string.ascii_letters + string.digits)


@pytest.mark.parametrize(
    "sample",
    [s for s in SAMPLES if s.calls and not s.cut],
    ids=lambda s: s.id,
)
def test_arguments_are_json_objects(sample: Sample) -> None:
    for call in sample.parser().parse(sample.text).tool_calls:
        assert isinstance(json.loads(call.arguments), dict)


def test_arguments_keep_the_generated_values() -> None:
    sample = BY_ID["hermes3-nested-json-and-unicode"]
    (call,) = sample.parser().parse(sample.text).tool_calls
    body = sample.text.removeprefix("<tool_call>").removesuffix("</tool_call>")
    assert json.loads(call.arguments) == json.loads(body)["arguments"]


def test_call_ids_differ() -> None:
    sample = BY_ID["hermes3-text-before-two-calls-text-after-dropped"]
    ids = {call.id for _ in range(20) for call in sample.parser().parse(sample.text).tool_calls}
    assert len(ids) == 40
    assert len(new_call_id()) == 9


def test_message_shape_with_calls_and_reasoning() -> None:
    sample = BY_ID["hermes3-qwen3-reasoning-then-call"]
    message = sample.parser().parse(sample.text).message()
    (call,) = message["tool_calls"]
    assert list(message) == ["content", "reasoning_content", "role", "tool_calls"]
    assert message["content"] == "\n\n"
    assert message["reasoning_content"] == "\nNeed the weather.\n"
    assert message["role"] == "assistant"
    assert call == {
        "id": call["id"],
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }


def test_message_shape_without_calls_or_reasoning() -> None:
    message = OutputParser("hermes3", "qwen3", TOOLS).parse("").message()
    assert message == {"content": "", "role": "assistant", "tool_calls": []}
    built = ParsedMessage("hi", None, [ToolCall("abc", "f", "{}")]).message()
    assert built == {
        "content": "hi",
        "role": "assistant",
        "tool_calls": [
            {"id": "abc", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }


def test_empty_tools_list_turns_tool_parsing_off() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>'
    assert OutputParser("hermes3", None, []).parse(text).content == text
    assert not OutputParser("hermes3", None, []).parses_tool_calls
    assert OutputParser("hermes3", None, TOOLS).parses_tool_calls
    assert OutputParser(None, "qwen3").parses_reasoning
    assert not OutputParser(None, "none").parses_reasoning


# --- streaming -------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_stream_equals_unary_for_every_split(sample: Sample) -> None:
    parser = sample.parser()
    expected = summary(parser.parse(sample.text))
    text = sample.text
    assert streamed(parser, [text])[0] == expected
    assert streamed(parser, list(text))[0] == expected
    for at in range(1, len(text)):
        assert streamed(parser, [text[:at], text[at:]])[0] == expected, at
    rng = random.Random(sample.id)
    for _ in range(30):
        pieces = random_pieces(text, rng, longest=rng.choice((2, 5, 12)))
        assert streamed(parser, pieces)[0] == expected, pieces


def test_stream_deltas_in_order() -> None:
    sample = BY_ID["hermes3-qwen3-reasoning-then-call"]
    stream = sample.parser().stream()
    first = stream.feed("<think>\nNeed")
    assert first == [{"reasoning_content": "\nNeed"}]
    middle = stream.feed(' the weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", "argu')
    assert middle == [{"reasoning_content": " the weather.\n"}, {"content": "\n\n"}]
    assert not stream.tool_calls_seen
    header = stream.feed('ments": {"city": "Par')
    (entry,) = header[0]["tool_calls"]
    assert header == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": entry["id"],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Par'}}]},
    ]
    assert stream.tool_calls_seen
    # The second brace closes the call object, not its arguments.
    assert stream.feed('is"}}\n</tool_call>') == [
        {"tool_calls": [{"index": 0, "function": {"arguments": 'is"}'}}]}
    ]
    assert stream.finish() == []


def test_stream_holds_back_a_possible_tag() -> None:
    stream = OutputParser("hermes3", "qwen3", TOOLS).stream()
    assert stream.feed("Hi <tool") == [{"content": "Hi "}]
    assert stream.feed("box> and <thi") == [{"content": "<toolbox> and "}]
    assert stream.feed("s") == [{"content": "<this"}]
    assert stream.feed(" <tool_ca") == [{"content": " "}]
    assert stream.finish() == [{"content": "<tool_ca"}]
    assert not stream.tool_calls_seen


def test_stream_second_call_gets_the_next_index() -> None:
    sample = BY_ID["mistral-two-calls"]
    _, deltas = streamed(sample.parser(), list(sample.text))
    headers = [d["tool_calls"][0] for d in deltas if "id" in d["tool_calls"][0]]
    assert [(h["index"], h["function"]["name"]) for h in headers] == [
        (0, "get_weather"),
        (1, "search"),
    ]
    assert headers[0]["id"] != headers[1]["id"]


def test_string_values_stream_before_the_call_ends() -> None:
    stream = OutputParser("qwen3coder", None, TOOLS).stream()
    header, arguments = stream.feed("<tool_call>\n<function=search>\n<parameter=query>\nline one\n")
    assert header["tool_calls"][0]["function"] == {"name": "search", "arguments": ""}
    # The newline may still be the one before </parameter>: it waits for the next text.
    assert arguments["tool_calls"][0]["function"] == {"arguments": '{"query":"line one'}
    assert stream.feed("line two") == [
        {"tool_calls": [{"index": 0, "function": {"arguments": "\\nline two"}}]}
    ]


def test_stream_holds_the_arguments_brace_until_the_call_closes() -> None:
    # OVMS's streams end the arguments before the call's last "}", so the arguments' own brace
    # goes out only once the call object's brace has come.
    opening = '<tool_call>{"name": "search", "arguments": {"query": "x"}'
    closed = OutputParser("hermes3", None, TOOLS).stream()
    header, arguments = closed.feed(opening)
    assert header["tool_calls"][0]["function"] == {"name": "search", "arguments": ""}
    assert arguments["tool_calls"][0]["function"] == {"arguments": '{"query":"x"'}
    assert closed.feed("}") == [{"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}]
    unclosed = OutputParser("hermes3", None, TOOLS).stream()
    unclosed.feed(opening)
    assert unclosed.feed("</tool_call>") == []
    assert unclosed.finish() == []
    cut = OutputParser("llama3", None, TOOLS).stream()
    cut.feed('{"name": "search", "parameters": {"query": "x"}')
    assert cut.finish() == []


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("mistral", '[TOOL_CALLS][{"name": "search", "arguments": {"query": "x"}}]'),
        ("phi4", 'functools[{"name": "search", "arguments": {"query": "x"}}]'),
    ],
)
def test_stream_sends_json_array_calls_when_the_output_ends(tool: str, text: str) -> None:
    # Text after the array would make it no call at all, so nothing goes out before the end.
    stream = OutputParser(tool, None, TOOLS).stream()
    assert [d for piece in text for d in stream.feed(piece)] == []
    header, arguments = stream.finish()
    assert header["tool_calls"][0]["function"] == {"name": "search", "arguments": ""}
    assert arguments["tool_calls"][0]["function"] == {"arguments": '{"query":"x"}'}


def test_stream_content_with_a_mistral_tag_inside_is_not_held_back() -> None:
    stream = OutputParser("mistral", None, TOOLS).stream()
    assert stream.feed("Let me check. [TOOL_CALLS] [{") == [{"content": "Let me check.  [{"}]
    assert not stream.tool_calls_seen


def test_stream_devstral_name_in_pieces_with_spaces() -> None:
    stream = OutputParser("devstral", None, TOOLS).stream()
    deltas = [
        d for piece in ("Hi", "[TOOL_CALLS]", " get", "_", "weather") for d in stream.feed(piece)
    ]
    assert deltas == [{"content": "Hi"}]
    (header,) = stream.feed(" [ARGS]")
    assert header["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": ""}
    assert stream.feed('{"city": "Paris"}') == [
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}
    ]


def test_feed_after_finish_is_refused() -> None:
    stream = OutputParser(None, None).stream()
    stream.finish()
    with pytest.raises(RuntimeError):
        stream.feed("x")


# Fragments that, shuffled, make outputs half-right in every way: the splits must still agree.
FRAGMENTS = [
    "<tool_call>", "</tool_call>", "<think>", "</think>", "<|python_tag|>", "[TOOL_CALLS]",
    "[ARGS]", "</s>", "functools", "<function=", "</function>", "<parameter=", "</parameter>",
    '{"name": "f", "arguments": {', '{"name": "g", "parameters": {', '"a": [1, {"b": "}"}]',
    "{", "}", "[", "]", '"', "\\", ":", ",", ";", ">", "\n", " ", "x", "é", "<", "<tool",
]  # fmt: skip
CONFIGS = [
    ("hermes3", "qwen3"),
    ("llama3", None),
    ("mistral", None),
    ("phi4", None),
    ("qwen3coder", "qwen3"),
    ("devstral", None),
]


@pytest.mark.parametrize(("tool", "reasoning"), CONFIGS)
def test_stream_equals_unary_on_scrambled_output(tool: str, reasoning: str | None) -> None:
    rng = random.Random(f"{tool}-{reasoning}")
    for _ in range(150):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 25)))
        parser = OutputParser(tool, reasoning, TOOLS, prompt_ends_in_reasoning=rng.random() < 0.2)
        expected = summary(parser.parse(text))
        assert streamed(parser, list(text))[0] == expected, text
        for _ in range(3):
            pieces = random_pieces(text, rng, longest=7)
            assert streamed(parser, pieces)[0] == expected, pieces


# --- reasoning in the prompt -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "opened"),
    [
        ("<|im_start|>assistant\n<think>\n", True),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
        ("<|im_start|>assistant\n", False),
    ],
)
def test_prompt_opens_reasoning(prompt: str, opened: bool) -> None:
    assert prompt_opens_reasoning(prompt) is opened


# --- names -----------------------------------------------------------------------------------


def test_ovms_parser_names() -> None:
    assert TOOL_PARSERS == (
        "llama3", "hermes3", "phi4", "mistral", "gptoss", "qwen3coder", "devstral", "lfm2",
        "gemma4", "onyx", "minicpm5",
    )  # fmt: skip
    assert REASONING_PARSERS == ("qwen3", "gemma4", "gptoss", "onyx", "minicpm5", "lfm2")


@pytest.mark.parametrize("tool", [None, "", "none", "hermes3", "llama3", "mistral", "phi4",
                                  "qwen3coder", "devstral"])  # fmt: skip
def test_servable_tool_parsers(tool: str | None) -> None:
    check_parser_names(tool, None)
    OutputParser(tool, None, TOOLS)


@pytest.mark.parametrize("reasoning", [None, "", "none", "qwen3"])
def test_servable_reasoning_parsers(reasoning: str | None) -> None:
    check_parser_names(None, reasoning)
    OutputParser(None, reasoning)


def test_unknown_tool_parser() -> None:
    with pytest.raises(ParserNameError) as error:
        check_parser_names("hermes", None)
    assert str(error.value) == (
        'Unsupported tool_parser: "hermes". Supported tool parsers are: llama3, hermes3, phi4, '
        "mistral, gptoss, qwen3coder, devstral, lfm2, gemma4, onyx, minicpm5"
    )
    with pytest.raises(ParserNameError):
        OutputParser("Hermes3", None, TOOLS)


def test_unknown_reasoning_parser() -> None:
    with pytest.raises(ParserNameError) as error:
        check_parser_names("hermes3", "deepseek_r1")
    assert str(error.value) == (
        'Unsupported reasoning_parser: "deepseek_r1". Supported reasoning parsers are: qwen3, '
        "gemma4, gptoss, onyx, minicpm5, lfm2"
    )


@pytest.mark.parametrize("tool", ["gptoss", "lfm2", "gemma4", "onyx", "minicpm5"])
def test_unimplemented_tool_parser(tool: str) -> None:
    with pytest.raises(ParserNameError) as error:
        check_parser_names(tool, None)
    message = str(error.value)
    assert f'tool_parser "{tool}"' in message
    assert "ovmsx does not implement" in message
    assert "Unsupported" not in message


@pytest.mark.parametrize("reasoning", ["gemma4", "gptoss", "onyx", "minicpm5", "lfm2"])
def test_unimplemented_reasoning_parser(reasoning: str) -> None:
    with pytest.raises(ParserNameError) as error:
        OutputParser(None, reasoning)
    assert f'reasoning_parser "{reasoning}"' in str(error.value)
    assert "ovmsx does not implement" in str(error.value)


# --- detection -------------------------------------------------------------------------------

QWEN3_TEMPLATE = (
    "{%- if tools %}<tools>{{ tool | tojson }}</tools>{%- endif %}"
    "{{- '<tool_call>\\n' }}{{ tool_call | tojson }}{{- '\\n</tool_call>' }}"
    "{%- set content = message.content.split('</think>')[-1] %}"
)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("<|start|>assistant<|channel|>final<|message|>", ("gptoss", "gptoss")),
        ("<|channel|> beats <tool_call></tool_call> <think>", ("gptoss", "gptoss")),
        ("<|start|>{{ role }}<|message|>{{ content }}<|eom|> or <|eot|>", ("onyx", "onyx")),
        ("<|start|>{{ role }}<|message|>{{ content }}<|eot|>", (None, None)),
        ("{{ '<|tool_call>call:' + name }}", ("gemma4", "gemma4")),
        (
            "<tool_call>\n<function={{ n }}>\n<parameter={{ k }}>\n{{ v }}\n</parameter>"
            "</tool_call>",
            ("qwen3coder", None),
        ),
        (
            "<think>\n</think><tool_call><function=f><parameter=a>1</parameter></tool_call>",
            ("qwen3coder", "qwen3"),
        ),
        ("<parameter=a>1</parameter> and <function= and </think>", ("qwen3coder", "qwen3")),
        ('<tool_call><function name="f"><param name="a">1</param>', ("minicpm5", "minicpm5")),
        ("<|tool_call_start|>[f()]<|tool_call_end|>", ("lfm2", None)),
        ("{% if keep_past_thinking %}{{ message.thinking }}{% endif %}", ("lfm2", "lfm2")),
        ("<|assistant_tool_call|>", ("lfm2", None)),
        ("functools[{{ tool_calls | tojson }}]", ("phi4", None)),
        ("[TOOL_CALLS]{{ name }}[ARGS]{{ arguments }}", ("devstral", None)),
        ("{{ name }}[ARGS]{{ arguments }}", (None, None)),
        ("[TOOL_CALLS][{{ tool_calls | tojson }}]", ("mistral", None)),
        ("[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS]", ("mistral", None)),
        ("[AVAILABLE_TOOLS]{{ tools }}", (None, None)),
        ("<|python_tag|>{{ call }}<|eom_id|>", ("llama3", None)),
        ("<tool_call>{{ call }}</tool_call>", ("hermes3", None)),
        ("<tool_call>{{ call }}</tool_call><think>", ("hermes3", "qwen3")),
        (QWEN3_TEMPLATE, ("hermes3", "qwen3")),
        ("<tool_call>{{ call }}", (None, None)),
        ("{{ '<think>\\n' }}", (None, "qwen3")),
        ("{{ content.split('</think>')[-1] }}", (None, "qwen3")),
        ("{{ content }}</think>", (None, None)),
        ("{{ bos_token }}{{ content }}", (None, None)),
        ("", (None, None)),
        (None, (None, None)),
    ],
)
def test_detect_parsers(template: str | None, expected: tuple) -> None:
    assert detect_parsers(template) == expected


@pytest.mark.parametrize(
    ("tool", "reasoning", "expected"),
    [
        (None, None, ("hermes3", "qwen3")),
        ("", "", ("hermes3", "qwen3")),
        ("llama3", None, ("llama3", "qwen3")),
        (None, "none", ("hermes3", None)),
        ("none", None, (None, "qwen3")),
        ("none", "none", (None, None)),
        ("phi4", "qwen3", ("phi4", "qwen3")),
    ],
)
def test_options_override_detection(tool, reasoning, expected) -> None:
    assert resolve_parsers(tool, reasoning, QWEN3_TEMPLATE) == expected


def test_options_apply_without_a_template() -> None:
    assert resolve_parsers("mistral", None, None) == ("mistral", None)
    assert resolve_parsers(None, None, "") == (None, None)
