"""The pieces under the embeddings and rerank servables, alone: how a folder's special tokens
and pooling are read, and how the batch worker answers, fails and drops requests."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path

import pytest

from ovmsx.genai.encoders.batch_worker import BatchWorker
from ovmsx.genai.model_folder import pooling_from_folder, special_tokens

VOCAB = {"[PAD]": 0, "<s>": 5, "</s>": 6, "[SEP]": 7}


def encode(text: str) -> list[int]:
    return [VOCAB[text]] if text in VOCAB else [1, 2]


def write(folder: Path, name: str, document: dict) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def test_token_ids_come_from_config_json_first(tmp_path: Path) -> None:
    write(tmp_path, "config.json", {"bos_token_id": 3, "eos_token_id": 4, "pad_token_id": 9})
    write(tmp_path, "tokenizer_config.json", {"bos_token": "<s>", "eos_token": "</s>"})
    tokens = special_tokens(tmp_path, encode)
    assert (tokens.bos, tokens.eos, tokens.pad) == (3, 4, 9)
    assert tokens.sep == 4  # no sep: the end-of-sequence token


def test_missing_or_zero_ids_are_read_from_the_token_strings(tmp_path: Path) -> None:
    write(tmp_path, "config.json", {"bos_token_id": 0})
    write(
        tmp_path,
        "tokenizer_config.json",
        {"bos_token": "<s>", "eos_token": {"content": "</s>"}, "sep_token": "[SEP]"},
    )
    tokens = special_tokens(tmp_path, encode)
    assert (tokens.bos, tokens.eos, tokens.sep, tokens.pad) == (5, 6, 7, None)


def test_a_token_string_of_several_tokens_gives_no_id(tmp_path: Path) -> None:
    write(tmp_path, "tokenizer_config.json", {"eos_token": "two pieces"})
    assert special_tokens(tmp_path, encode).eos is None


@pytest.mark.parametrize(
    ("flags", "pooling"),
    [
        ({"pooling_mode_mean_tokens": True}, "MEAN"),
        ({"pooling_mode_lasttoken": True}, "LAST"),
        ({"pooling_mode_cls_token": True}, "CLS"),
    ],
)
def test_pooling_is_read_from_1_pooling(tmp_path: Path, flags: dict, pooling: str) -> None:
    write(tmp_path, "1_Pooling/config.json", flags)
    assert pooling_from_folder(tmp_path, "n") == pooling


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"pooling_mode_max_tokens": True},
        {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True},
    ],
)
def test_no_or_an_unsupported_pooling_falls_back_to_cls_with_a_warning(
    tmp_path: Path, flags: dict, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, "1_Pooling/config.json", flags)
    with caplog.at_level(logging.WARNING):
        assert pooling_from_folder(tmp_path, "node") == "CLS"
    assert any("node node" in record.getMessage() for record in caplog.records)


def test_the_worker_batches_what_waits_and_fails_every_job_of_a_failed_batch() -> None:
    started, release = threading.Event(), threading.Event()
    batches: list[list[int]] = []

    def run(jobs) -> None:
        if not batches:  # hold the first batch so the next ones queue up behind it
            started.set()
            release.wait(5)
        batches.append([job.work for job in jobs])
        for job in jobs:
            if job.work < 0:
                raise ValueError("negative")
            job.answer(job.work * 10)

    async def scenario():
        first = asyncio.ensure_future(worker.submit(1))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        waiting = [asyncio.ensure_future(worker.submit(n)) for n in (2, 3)]
        failing = [asyncio.ensure_future(worker.submit(n)) for n in (-1, 4)]
        await asyncio.sleep(0.05)
        release.set()
        return await asyncio.gather(first, *waiting, *failing, return_exceptions=True)

    worker = BatchWorker("test", run, lambda work: 1, 100)
    try:
        results = asyncio.run(scenario())
    finally:
        worker.close()
    assert results[:3] == [10, 20, 30]
    assert all(isinstance(result, ValueError) for result in results[3:])
    assert batches == [[1], [2, 3, -1, 4]]  # everything that waited went in one batch


def test_a_job_whose_client_left_is_not_run() -> None:
    release = threading.Event()
    seen: list[int] = []

    def run(jobs) -> None:
        release.wait(5)
        for job in jobs:
            seen.append(job.work)
            job.answer(job.work)

    async def scenario():
        first = asyncio.ensure_future(worker.submit(1))
        await asyncio.sleep(0.05)  # the worker holds job 1
        gone = asyncio.ensure_future(worker.submit(2))
        kept = asyncio.ensure_future(worker.submit(3))
        await asyncio.sleep(0.05)
        gone.cancel()
        release.set()
        return await first, await kept

    worker = BatchWorker("test", run, lambda work: 1, 100)
    try:
        assert asyncio.run(scenario()) == (1, 3)
    finally:
        worker.close()
    assert seen == [1, 3]


def test_a_batch_holds_at_most_max_rows_and_what_is_left_waits_in_order() -> None:
    """Jobs of 3, 2, 2, 4 and 9 rows behind a held one, at most 5 rows a batch: a job that does
    not fit starts the next batch, and a job bigger than the cap goes alone."""
    started, release = threading.Event(), threading.Event()
    batches: list[list[int]] = []

    def run(jobs) -> None:
        if not batches:
            started.set()
            release.wait(5)
        batches.append([job.work for job in jobs])
        for job in jobs:
            job.answer(job.work)

    async def scenario():
        first = asyncio.ensure_future(worker.submit(1))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        rest = [asyncio.ensure_future(worker.submit(n)) for n in (3, 2, 2, 4, 9, 1)]
        await asyncio.sleep(0.05)
        release.set()
        return await asyncio.gather(first, *rest)

    worker = BatchWorker("test", run, lambda work: work, 5)
    try:
        assert asyncio.run(scenario()) == [1, 3, 2, 2, 4, 9, 1]
    finally:
        worker.close()
    assert batches == [[1], [3, 2], [2], [4], [9], [1]]
