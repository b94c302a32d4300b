"""One random-weight BERT encoder in the forms its servers read: a Hugging Face folder
(safetensors, and model.onnx exported from them, for a PyTorch- or ONNX-based server) and an
OpenVINO folder converted from the same weights (for ovmsx and openvino-genai), with the same
WordPiece tokenizer. ``--task embeddings`` writes a sentence-embedding model (token states,
CLS pooling); ``--task rerank`` a cross-encoder (``BertForSequenceClassification`` with one
logit per query-document pair).

Runs in a Python with torch, transformers and openvino (the peer server's venv):

    /venv-peer/bin/python bench/encoder_peer_model.py OUT --hidden 384 --layers 6 --heads 12

writes OUT/hf and OUT/openvino. bench/bench_embeddings.py --peer-python runs it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "rag"))

from build_encoder_folders import build_tokenizer  # noqa: E402


def write_peer_model(
    out: Path, hidden: int, layers: int, heads: int, vocab: int, task: str = "embeddings"
) -> None:
    import openvino as ov
    import torch
    from openvino_tokenizers import convert_tokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    tokenizer = build_tokenizer(vocab)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=1,  # a cross-encoder's one logit per pair (unused by BertModel)
    )
    if task == "rerank":
        model = BertForSequenceClassification(config).eval()
        output = "logits"
    else:
        model = BertModel(config, add_pooling_layer=False).eval()
        output = "last_hidden_state"
    hf, openvino = out / "hf", out / "openvino"
    model.save_pretrained(hf)
    tokenizer.save_pretrained(hf)
    if task == "embeddings":
        _sentence_transformers_layout(hf, hidden)
    example = tokenizer(["a short example"], return_tensors="pt")
    inputs = {name: example[name] for name in ("input_ids", "attention_mask", "token_type_ids")}
    # ONNX Runtime's copy for the peer (infinity's optimum engine reads model.onnx).
    dynamic = {name: {0: "batch", 1: "tokens"} for name in inputs}
    dynamic[output] = {0: "batch"} if task == "rerank" else {0: "batch", 1: "tokens"}
    torch.onnx.export(
        model,
        (inputs,),
        str(hf / "model.onnx"),
        input_names=list(inputs),
        output_names=[output],
        dynamic_axes=dynamic,
        dynamo=False,
    )
    converted = ov.convert_model(model, example_input=inputs)
    for port, name in zip(converted.inputs, inputs, strict=True):
        port.get_tensor().set_names({name})
    converted.outputs[0].get_tensor().set_names({output})
    openvino.mkdir(parents=True, exist_ok=True)
    ov.save_model(converted, openvino / "openvino_model.xml")
    tokenizer.save_pretrained(openvino)
    ov_tokenizer, ov_detokenizer = convert_tokenizer(tokenizer, with_detokenizer=True)
    ov.save_model(ov_tokenizer, openvino / "openvino_tokenizer.xml")
    ov.save_model(ov_detokenizer, openvino / "openvino_detokenizer.xml")
    (openvino / "config.json").write_text((hf / "config.json").read_text())
    if task == "embeddings":
        (openvino / "1_Pooling").mkdir(exist_ok=True)
        (openvino / "1_Pooling" / "config.json").write_text(
            (hf / "1_Pooling" / "config.json").read_text()
        )


def _sentence_transformers_layout(hf: Path, hidden: int) -> None:
    """sentence-transformers' files, so that servers pool by CLS as ovmsx is told to."""
    (hf / "1_Pooling").mkdir(exist_ok=True)
    (hf / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": hidden, "pooling_mode_cls_token": True})
    )
    (hf / "modules.json").write_text(
        json.dumps(
            [
                {
                    "idx": 0,
                    "name": "0",
                    "path": "",
                    "type": "sentence_transformers.models.Transformer",
                },
                {
                    "idx": 1,
                    "name": "1",
                    "path": "1_Pooling",
                    "type": "sentence_transformers.models.Pooling",
                },
                {
                    "idx": 2,
                    "name": "2",
                    "path": "2_Normalize",
                    "type": "sentence_transformers.models.Normalize",
                },
            ]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--vocab", type=int, default=30000)
    parser.add_argument("--task", choices=("embeddings", "rerank"), default="embeddings")
    args = parser.parse_args()
    write_peer_model(args.out, args.hidden, args.layers, args.heads, args.vocab, args.task)
    print(f"wrote {args.out / 'hf'} and {args.out / 'openvino'}")


if __name__ == "__main__":
    main()
