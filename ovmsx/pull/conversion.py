"""What to run when a repository is not an OpenVINO model.

OVMS converts such a repository itself, running ``optimum-cli export openvino`` (and then
``convert_tokenizer`` when the export left no detokenizer) into the model folder, with a
command that depends on the task (src/pull_module/optimum_export.cpp). ovmsx runs no
converter: it stops and prints the commands OVMS would have run, so that the user can run them
and start the same ``ovmsx`` command again; the folder then exists and is used as it is.
"""

from __future__ import annotations

import shlex
from pathlib import Path

DEFAULT_WEIGHT_FORMAT = "int8"
"""``--weight-format``'s default in OVMS."""
NPU_QUANTIZATION = "--sym --ratio 1.0 --group-size -1"
"""What OVMS adds for ``--target_device NPU`` when ``--extra_quantization_params`` is unset."""


def export_commands(
    source_model: str,
    task: str | None,
    folder: Path,
    weight_format: str | None = None,
    extra_quantization_params: str | None = None,
    target_device: str | None = None,
) -> list[str]:
    """The shell commands that convert ``source_model`` into ``folder``, as OVMS runs them."""
    model = shlex.quote(source_model)
    output = shlex.quote(str(folder))
    weights = f"--weight-format {shlex.quote(weight_format or DEFAULT_WEIGHT_FORMAT)}"
    if task == "embeddings":
        export = (
            "optimum-cli export openvino --task feature-extraction --library sentence_transformers"
            f" --model {model} --trust-remote-code {weights} {output}"
        )
    elif task == "rerank":
        export = (
            f"optimum-cli export openvino --model {model} --trust-remote-code {weights} "
            f"--task text-classification {output}"
        )
    elif task == "image_generation":
        export = f"optimum-cli export openvino --model {model} {weights} {output}"
    else:
        extra = extra_quantization_params
        if extra is None and (target_device or "").upper() == "NPU":
            extra = NPU_QUANTIZATION
        export = f"optimum-cli export openvino --model {model} --trust-remote-code {weights} "
        export += f"{extra} {output}" if extra else output
    tokenizer = f"convert_tokenizer {model} --with-detokenizer -o {output}"
    return [export, tokenizer]


def conversion_advice(
    source_model: str,
    task: str | None,
    folder: Path,
    *,
    reason: str,
    weight_format: str | None = None,
    extra_quantization_params: str | None = None,
    target_device: str | None = None,
) -> str:
    """The refusal: why, the commands to run, and what to do afterwards."""
    export, tokenizer = export_commands(
        source_model, task, folder, weight_format, extra_quantization_params, target_device
    )
    return (
        f"{reason}. OVMS converts such a model with optimum-cli; ovmsx does not run converters. "
        "Convert it yourself (optimum-cli and convert_tokenizer come with "
        '`pip install "optimum-intel[openvino]"`):\n'
        f"    {export}\n"
        f"and, if {folder / 'openvino_detokenizer.xml'} is not there afterwards:\n"
        f"    {tokenizer}\n"
        "then run this command again: it uses the converted folder as it is"
    )
