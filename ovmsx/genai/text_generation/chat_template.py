"""Chat templates, rendered as OVMS renders them in its default (JINJA) mode (COMPAT_GENAI §8).

The template is ``chat_template.jinja`` in the model folder when it is there and not empty,
otherwise the tokenizer's own (from ``tokenizer_config.json`` or the tokenizer model, which the
engine reports). Requests with tools use the tool template when the folder has one
(``additional_chat_templates/tool_use.jinja``, or a ``tool_use`` entry of a template list in
``tokenizer_config.json``).

Rendering is jinja2's immutable sandbox with ``trim_blocks`` and ``lstrip_blocks``, the loop
controls, ``{% generation %}`` blocks (rendered as their content), the globals
``raise_exception`` and ``strftime_now``, and the filters ``from_json`` and ``tojson`` (JSON
without HTML escaping), the environment Hugging Face chat templates are written for. Templates
may include files from the model folder.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ovmsx.genai.text_generation.template_adapter import TemplateAdapter

TOOL_TEMPLATE_FILE = Path("additional_chat_templates") / "tool_use.jinja"


class TemplateError(Exception):
    """The template could not be rendered for this request (HTTP 400, the reason)."""


class _Generation(Extension):
    """``{% generation %}...{% endgeneration %}`` marks the assistant's part for training
    tools; when serving it renders its content unchanged."""

    tags = frozenset({"generation"})

    def parse(self, parser):
        line = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=line)


def _raise_exception(message: str):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class ChatTemplate:
    """A model folder's chat templates, compiled once."""

    def __init__(self, folder: Path, tokenizer_template: str, bos: str, eos: str) -> None:
        self.bos = bos
        self.eos = eos
        environment = ImmutableSandboxedEnvironment(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[_Generation, "jinja2.ext.loopcontrols"],
            loader=jinja2.FileSystemLoader(str(folder)),
        )
        environment.globals["raise_exception"] = _raise_exception
        environment.globals["strftime_now"] = _strftime_now
        environment.filters["from_json"] = json.loads
        environment.filters["tojson"] = _tojson
        self._environment = environment
        source, tool_source = _sources(folder, tokenizer_template)
        self.source = source
        self._template = environment.from_string(source) if source else None
        self._tool_template = environment.from_string(tool_source) if tool_source else None
        self._adapter = TemplateAdapter(source or "")
        self._tool_adapter = TemplateAdapter(tool_source or "")

    @property
    def available(self) -> bool:
        return self._template is not None

    def render(
        self,
        messages: list[dict],
        tools: list | None,
        add_generation_prompt: bool,
        kwargs: dict,
    ) -> str:
        template, adapter = self._template, self._adapter
        if tools and self._tool_template is not None:
            template, adapter = self._tool_template, self._tool_adapter
        if template is None:
            raise TemplateError(
                "Failed to apply chat template. The model either does not have chat template "
                "or has an invalid one."
            )
        arguments = {}
        if tools:
            arguments["tools"] = tools
        try:
            return template.render(
                messages=adapter.adapt(messages),
                bos_token=self.bos,
                eos_token=self.eos,
                add_generation_prompt=add_generation_prompt,
                **arguments,
                **kwargs,
            )
        except TypeError as error:  # kwargs naming messages, bos_token, ...
            raise TemplateError(str(error)) from None
        except jinja2.exceptions.TemplateError as error:
            raise TemplateError(str(error)) from None
        except Exception as error:
            raise TemplateError(f"{type(error).__name__}: {error}") from None


def _sources(folder: Path, tokenizer_template: str) -> tuple[str, str]:
    """(template, tool template) text; "" where there is none."""
    source = ""
    tool_source = ""
    config = _tokenizer_config(folder)
    listed = config.get("chat_template")
    if isinstance(listed, str):
        source = listed
    elif isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, dict) and isinstance(entry.get("template"), str):
                if entry.get("name") == "default":
                    source = entry["template"]
                elif entry.get("name") == "tool_use":
                    tool_source = entry["template"]
    if tokenizer_template:
        source = tokenizer_template
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        text = jinja_file.read_text(encoding="utf-8")
        if text.strip():
            source = text
    tool_file = folder / TOOL_TEMPLATE_FILE
    if tool_file.is_file():
        tool_source = tool_file.read_text(encoding="utf-8")
    return source, tool_source


def _tokenizer_config(folder: Path) -> dict:
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}
