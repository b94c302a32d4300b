"""Build a small vision-language model folder, laid out as `optimum-cli export openvino` writes a
LLaVA one, from nothing but packages on the package index (no model hub, no torch): random
weights, so the text is nonsense, but openvino-genai's VLMPipeline and ContinuousBatchingPipeline
run it, and the picture changes what it says.

    python examples/vlm/build_vlm_folder.py models/tiny_vlm      # a few seconds, ~1.7 MB

The folder holds:
  openvino_language_model.xml/.bin          the decoder of examples/llm, fed by inputs_embeds
  openvino_text_embeddings_model.xml/.bin   input (token ids) -> inputs_embeds
  openvino_vision_embeddings_model.xml/.bin pixel_values [B,3,S,S] -> last_hidden_state [B,N,H]:
                                            one patch convolution, (S/patch)^2 tokens per image
  openvino_tokenizer.xml/.bin, openvino_detokenizer.xml/.bin (with an <image> token)
  config.json (model_type llava), preprocessor_config.json (CLIP resize, crop, normalise),
  tokenizer.json, tokenizer_config.json, chat_template.jinja, generation_config.json

OVMS (and ovmsx) take a folder for a vision-language model when it holds both
openvino_text_embeddings_model.xml and openvino_vision_embeddings_model.bin.

Needs: openvino, openvino-tokenizers, tokenizers, transformers (no torch).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as ops

# The text half is examples/llm's builder, fed by embeddings.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from build_llm_folder import (
    CHAT_TEMPLATE,
    EOS,
    MAX_POSITIONS,
    PAD,
    SPECIAL_TOKENS,
    build_model,
    build_tokenizer,
    named,
    readable_bias,
)

IMAGE = "<image>"
# Image features swing the logits far more than text does: unreadable tokens need a stronger
# push down than examples/llm's -30 for the answer to stay readable.
PENALTY = -1000.0
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def _result(node, name: str) -> ov.Output:
    result = named(ops.result(node), name)
    result.input_value(0).get_tensor().set_names({name})
    return result


def text_embeddings_model(table: np.ndarray) -> ov.Model:
    ids = named(ops.parameter([-1, -1], ov.Type.i64), "input")
    embeds = _result(ops.gather(ops.constant(table), ids, 0), "inputs_embeds")
    return ov.Model([embeds], [ids], "text_embeddings")


def vision_embeddings_model(hidden: int, patch: int) -> ov.Model:
    rng = np.random.default_rng(2)

    def weight(*shape):
        return ops.constant((rng.standard_normal(shape) * 0.2).astype(np.float32))

    pixels = named(ops.parameter([-1, 3, -1, -1], ov.Type.f32), "pixel_values")
    x = ops.convolution(
        pixels, weight(hidden, 3, patch, patch), [patch, patch], [0, 0], [0, 0], [1, 1]
    )
    x = ops.transpose(ops.reshape(x, ops.constant([0, hidden, -1]), special_zero=True), [0, 2, 1])
    x = ops.matmul(
        ops.relu(ops.matmul(x, weight(hidden, hidden), False, False)),
        weight(hidden, hidden),
        False,
        False,
    )
    return ov.Model([_result(x, "last_hidden_state")], [pixels], "vision_embeddings")


def write_vlm_folder(
    out: Path,
    *,
    image_size: int = 32,
    patch: int = 8,
    vocab: int = 512,
    hidden: int = 64,
    heads: int = 4,
    layers: int = 2,
) -> Path:
    """Write the folder (see the module's docstring) and return ``out``."""
    from openvino_tokenizers import convert_tokenizer

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocab, extra_special=(IMAGE,))
    tokenizer.save_pretrained(out)
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    ov_tokenizer, ov_detokenizer = convert_tokenizer(tokenizer, with_detokenizer=True)
    ov.save_model(ov_tokenizer, out / "openvino_tokenizer.xml")
    ov.save_model(ov_detokenizer, out / "openvino_detokenizer.xml")

    size = len(tokenizer)
    table = (np.random.default_rng(1).standard_normal((size, hidden)) * 0.2).astype(np.float32)
    bias = readable_bias(tokenizer, PENALTY, len(SPECIAL_TOKENS) + 1)
    language = build_model(size, hidden, heads, layers, bias, None, inputs_embeds=True)
    for model, name in (
        (language, "openvino_language_model.xml"),
        (text_embeddings_model(table), "openvino_text_embeddings_model.xml"),
        (vision_embeddings_model(hidden, patch), "openvino_vision_embeddings_model.xml"),
    ):
        ov.save_model(model, out / name, compress_to_fp16=False)

    eos, pad, image = (tokenizer.convert_tokens_to_ids(t) for t in (EOS, PAD, IMAGE))
    config = {
        "architectures": ["LlavaForConditionalGeneration"],
        "model_type": "llava",
        "image_token_index": image,
        "image_seq_length": (image_size // patch) ** 2,
        "vision_feature_select_strategy": "full",
        "vision_config": {
            "model_type": "clip_vision_model",
            "image_size": image_size,
            "patch_size": patch,
            "hidden_size": hidden,
        },
        "text_config": {
            "model_type": "llama",
            "vocab_size": size,
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_hidden_layers": layers,
            "max_position_embeddings": MAX_POSITIONS,
        },
        "eos_token_id": eos,
        "pad_token_id": pad,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2))
    preprocessing = {
        "image_processor_type": "CLIPImageProcessor",
        "size": {"shortest_edge": image_size},
        "crop_size": {"height": image_size, "width": image_size},
        "do_resize": True,
        "do_center_crop": True,
        "do_normalize": True,
        "image_mean": CLIP_MEAN,
        "image_std": CLIP_STD,
    }
    (out / "preprocessor_config.json").write_text(json.dumps(preprocessing, indent=2))
    generation = {"eos_token_id": eos, "pad_token_id": pad}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--patch", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    out = write_vlm_folder(
        args.out,
        image_size=args.image_size,
        patch=args.patch,
        hidden=args.hidden,
        layers=args.layers,
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
